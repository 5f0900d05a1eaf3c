"""Classifying recorded numbers: constant across runs (fixed by the model) or a function of the
varied user dims. A varying number is fitted exactly, with integer coefficients, to the fewest
terms among 1, each dim, and products of two dims (num_tokens = batch * seq_len)."""
from __future__ import annotations

import itertools
from fractions import Fraction


def monomials(dims: list[str]) -> list[tuple]:
    out = [()]
    out += [(d,) for d in dims]
    out += list(itertools.combinations(dims, 2))
    return out


def fit(points: list[dict], values: list[int], dims: list[str]) -> dict | None:
    """{monomial: integer coefficient} with the fewest terms that reproduces every value exactly,
    or None. ``points``: the user-dim values of each run."""
    basis = [m for m in monomials(dims) if all(_varies(points, d) for d in m)]
    for k in range(0, len(basis) + 1):
        for terms in itertools.combinations(basis, k):
            coeffs = _solve(points, values, terms)
            if coeffs is not None:
                return {t: c for t, c in zip(terms, coeffs) if c != 0}
    return None


def _varies(points, d) -> bool:
    return len({p[d] for p in points}) > 1


def _value(point: dict, term: tuple) -> int:
    v = 1
    for d in term:
        v *= point[d]
    return v


def _solve(points, values, terms):
    """Exact least squares in rationals; accepted only if integral and exact at every point."""
    n = len(terms)
    if n == 0:
        return [] if all(v == 0 for v in values) else None
    rows = [[Fraction(_value(p, t)) for t in terms] for p in points]
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(n)] for i in range(n)]
    atb = [sum(r[i] * v for r, v in zip(rows, values)) for i in range(n)]
    x = _gauss(ata, atb)
    if x is None or any(c.denominator != 1 for c in x):
        return None
    if any(sum(c * r for c, r in zip(x, row)) != v for row, v in zip(rows, values)):
        return None
    return [int(c) for c in x]


def _gauss(a, b):
    n = len(a)
    m = [row[:] + [rhs] for row, rhs in zip(a, b)]
    for col in range(n):
        piv = next((r for r in range(col, n) if m[r][col] != 0), None)
        if piv is None:
            return None  # the terms are not independent over these points
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]
