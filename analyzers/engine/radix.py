"""Two threads' offsets split by a common radix: when do two global accesses of a launch overlap.

A global offset is mostly a size times an index plus a rest smaller than that size: ``row *
hidden + col`` with ``col < hidden``, a grid-stride loop's ``tid + k * stride`` with ``tid <
stride``, ``(seq * heads + head) * dim + lane * 4``. Two such offsets overlap only where their
indices are equal and their rests overlap: if one index is smaller, its whole row lies below the
other's. As a question for two threads this is nonlinear (``col * tokens`` against ``col' *
tokens``) and z3 gives up on it; split, it is linear (``col == col'`` and ``row`` against
``row'``), and what the split needs (``0 <= rest`` and ``rest + size <= radix``) is a question
about one thread's path, asked of each access once.

The lemma, for integers ``Q``, ``Q'``, ``R``, ``R'``, a radix ``M`` and access sizes ``s``,
``s'``: with ``0 <= R``, ``R + s <= M``, ``0 <= R'`` and ``R' + s' <= M``, the byte ranges ``[Q*M +
R, +s)`` and ``[Q'*M + R', +s')`` overlap exactly when ``Q == Q'`` and ``[R, +s)`` and ``[R', +s')``
overlap. The radix is a uniform symbol (one both threads share: a size, a grid dimension) times the
largest constant that divides every coefficient of its index.

Offsets are read as polynomials over atoms (variables, quotients, remainders): the integer tier's
product variables are expanded into their factors, and a variable the path defines by an equality
(a loop's ``i == tid + k * stride``) into its definition.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import z3

from .terms import name as const_name

Poly = dict  # monomial (sorted tuple of atom ids) -> coefficient

MAX_MONOMIALS = 64  # a polynomial past this is not split (the pair falls back to the plain query)
MAX_SUBSTITUTIONS = 4  # rounds of replacing path-defined variables by their definitions
MAX_REMAINDERS = 4  # dividends read as quotient and remainder in one polynomial (_remainders)


@dataclass
class Access:
    """Accesses for the split, at offsets a constant apart: their common polynomial (no constant
    term) and each one's path (bit-vector conditions, for the single-thread bound questions),
    constant shift and size. The pair question speaks of their hull."""

    poly: Poly
    members: tuple  # ((path, shift, size), ...)

    def hull(self) -> tuple[Poly, int]:
        """(the hull's start, its size)."""
        lo = min(s for _, s, _ in self.members)
        hi = max(s + n for _, s, n in self.members)
        return add(self.poly, {(): lo}), hi - lo


class Polynomials:
    """Reads integer terms as polynomials over shared atoms and builds terms back."""

    def __init__(self, lia):
        self.lia = lia
        self.atoms: dict[int, z3.ArithRef] = {}
        self._read: dict[int, tuple] = {}  # term id -> (term, its polynomial)

    def atom(self, t: z3.ArithRef) -> Poly:
        self.atoms.setdefault(t.get_id(), t)
        return {(t.get_id(),): 1}

    def of(self, t: z3.ArithRef, defined: dict | None = None) -> Poly | None:
        """``t`` as a polynomial, None when it grows past MAX_MONOMIALS. ``defined``: variable name
        -> the term the path equates it with."""
        if defined:
            p = self._of(t, defined, 0)
            return None if p is None else self._remainders(p)
        # Without definitions a term reads the same for every access it is asked for.
        hit = self._read.get(t.get_id())
        if hit is None or not hit[0].eq(t):
            p = self._of(t, defined, 0)
            hit = self._read[t.get_id()] = (t, None if p is None else self._remainders(p))
        return None if hit[1] is None else dict(hit[1])

    def _remainders(self, p: Poly) -> Poly:
        """``p`` with each dividend ``c * X`` that it holds beside ``X / Y`` read as ``c * (Y * (X /
        Y) + R)``, ``R`` the remainder ``X - Y * (X / Y)`` as an atom: a paged cache's
        ``block * block_stride + offset`` with ``block == slot / block_size`` and ``offset == slot %
        block_size`` expands to ``slot`` and ``slot / block_size`` terms that no radix splits; so
        read, the quotient is an index and the remainder a rest below ``block_size``. A remainder
        divided again (``offset / 8``, ``offset % 8``) splits the same way, in its turn."""
        done: set = set()
        for _ in range(MAX_REMAINDERS):
            # Until nothing changes: a quotient's dividend may be a remainder another rewrite makes
            # (whichever order the atoms come in).
            for aid in sorted({a for mono in p for a in mono} - done):
                rewritten = self._remainder(p, aid)
                if rewritten is not None:
                    p = rewritten
                    done.add(aid)
                    break
            else:
                return p
        return p

    def _remainder(self, p: Poly, aid: int) -> Poly | None:
        """``p`` with ``c * X`` read as ``c * (Y * q + (X - Y * q))`` for the quotient atom ``q ==
        X / Y``, or None where ``p`` holds no multiple of ``X``."""
        division = self._division(self.atoms[aid])
        if division is None:
            return None
        x, y, product = division
        px = {(x.get_id(),): 1} if x.get_id() in self.atoms else self._of(x, None, 0)
        py = self._of(y, None, 0)
        if not px or not py or any(aid in m for m in px):
            return None
        first, c0 = next(iter(px.items()))
        c, left = divmod(p.get(first, 0), c0)
        if left or not c or any(p.get(m) != c * v for m, v in px.items()):
            return None
        whole = add(_mul(py, {(aid,): 1}), self.atom(x - product))
        return add(add(p, _scale(px, -c)), _scale(whole, c))

    def _division(self, t: z3.ArithRef) -> tuple | None:
        """(dividend, divisor, quotient * divisor) of a quotient atom: the integer tier's quotient
        by a symbol, or a division by a positive constant (C's truncating ``x / 8`` reads
        ``If(x >= 0, x / 8, -((-x) / 8))``)."""
        division = self.lia.division(const_name(t)) if z3.is_const(t) else None
        if division is not None:
            return division
        by_constant = _by_constant(t)
        if by_constant is None:
            return None
        x, k = by_constant
        return x, z3.IntVal(k), k * t

    def _of(self, t: z3.ArithRef, defined: dict | None, depth: int) -> Poly | None:
        if z3.is_int_value(t):
            return {(): t.as_long()} if t.as_long() else {}
        if z3.is_add(t):
            out: Poly = {}
            for c in t.children():
                p = self._of(c, defined, depth)
                if p is None:
                    return None
                out = add(out, p)
            return out
        if z3.is_sub(t):
            out = self._of(t.arg(0), defined, depth)
            for c in t.children()[1:]:
                p = self._of(c, defined, depth)
                if out is None or p is None:
                    return None
                out = add(out, _scale(p, -1))
            return out
        if z3.is_app_of(t, z3.Z3_OP_UMINUS):
            p = self._of(t.arg(0), defined, depth)
            return None if p is None else _scale(p, -1)
        if z3.is_mul(t):
            out = {(): 1}
            for c in t.children():
                p = self._of(c, defined, depth)
                if p is None:
                    return None
                out = _mul(out, p)
                if len(out) > MAX_MONOMIALS:
                    return None
            return out
        by_constant = _by_constant(t)
        if by_constant is not None:
            # An exact division (`(row * 112 + 2 * col) / 2`): the dividend's polynomial divided.
            x, k = by_constant
            p = self._of(x, defined, depth)
            if p is not None and all(c % k == 0 for c in p.values()):
                return {m: c // k for m, c in p.items()}
        if z3.is_const(t) and t.sort() == z3.IntSort():
            name = const_name(t)
            factors = self.lia.factors(name)
            if factors is not None:
                # A product variable of the integer tier: the product of its factors.
                return self._of(factors[0] * factors[1], defined, depth)
            if defined and name in defined and depth < MAX_SUBSTITUTIONS:
                return self._of(defined[name], defined, depth + 1)
        return self.atom(t)

    def term(self, p: Poly) -> z3.ArithRef:
        parts = []
        for mono, c in sorted(p.items()):
            factors = [self.atoms[a] for a in mono]
            t = math.prod(factors[1:], start=factors[0]) if factors else None
            parts.append(z3.IntVal(c) if t is None else t if c == 1 else c * t)
        if not parts:
            return z3.IntVal(0)
        return z3.Sum(parts) if len(parts) > 1 else parts[0]


def _by_constant(t: z3.ArithRef) -> tuple | None:
    """(x, k) where ``t`` is ``x`` divided by the positive constant ``k`` as the integers write
    C's division: z3's ``x / k`` (a dividend known non-negative), or the truncating ``If(x >= 0, x
    / k, -((-x) / k))``."""
    q = t
    if z3.is_app_of(t, z3.Z3_OP_ITE):
        cond, q = t.arg(0), t.arg(1)
        if not (z3.is_app_of(cond, z3.Z3_OP_GE) and z3.is_int_value(cond.arg(1)) and cond.arg(1).as_long() == 0
                and z3.is_app_of(q, z3.Z3_OP_IDIV) and cond.arg(0).eq(q.arg(0))):
            return None
    if z3.is_app_of(q, z3.Z3_OP_IDIV) and z3.is_int_value(q.arg(1)) and q.arg(1).as_long() > 0:
        return q.arg(0), q.arg(1).as_long()
    return None


def base_of(t: z3.ArithRef) -> z3.ArithRef | None:
    """The variable a chain of divisions and remainders by constants starts from (``row`` of
    ``row / 128``, ``row % 32``, ``(row / 32) % 4``), or None."""
    seen = False
    while True:
        by_constant = _by_constant(t)
        if by_constant is not None:
            t, seen = by_constant[0], True
        elif z3.is_app_of(t, z3.Z3_OP_MOD) and z3.is_int_value(t.arg(1)) and t.arg(1).as_long() > 0:
            t, seen = t.arg(0), True
        else:
            break
    return t if seen and z3.is_const(t) and not z3.is_int_value(t) else None


def add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for m, c in b.items():
        s = out.get(m, 0) + c
        if s:
            out[m] = s
        else:
            out.pop(m, None)
    return out


def _scale(a: Poly, k: int) -> Poly:
    return {m: c * k for m, c in a.items()} if k else {}


def _mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            out = add(out, {tuple(sorted(ma + mb)): ca * cb})
    return out


def definitions(lia, pc) -> dict:
    """Variables the path defines by an equality with a term (``i == tid + k * stride``, a loop's
    counter), from the path's nonlinear integer translation: name -> term."""
    out: dict = {}
    todo = [lia.translate(c, True) for c in pc]
    while todo:
        t = todo.pop()
        if z3.is_and(t):
            todo.extend(t.children())
        elif z3.is_eq(t) and t.arg(0).sort() == z3.IntSort():
            for v, e in ((t.arg(0), t.arg(1)), (t.arg(1), t.arg(0))):
                if z3.is_const(v) and not z3.is_int_value(v) and const_name(v) not in out \
                        and lia.factors(const_name(v)) is None and not z3.is_int_value(e):
                    out[const_name(v)] = e
                    break
    return out


def split(polys: Polynomials, a: Access, b: Access, uniform, bounded) -> list | None:
    """Overlap obligations equivalent to "``a`` and ``b`` overlap" (of two threads): a list of
    (a's start, a's size, b's start, b's size) polynomials and sizes, every pair of which must
    overlap, or None when no radix splits them. ``uniform(atom)``: whether both threads share the
    atom's value; ``bounded(members, rest, radix)``: whether ``0 <= rest + shift`` and ``rest +
    shift + size <= radix`` hold on the path of each (path, shift, size) member (a proof; False when
    not proved): the lemma then holds for each pair of members, and their overlap implies the
    hulls'."""
    done: list = []
    todo = [(a, b)]
    split_any = False
    while todo:
        x, y = todo.pop()
        parts = _split_once(polys, x, y, uniform, bounded)
        if parts is None:
            done.append((*x.hull(), *y.hull()))
            continue
        split_any = True
        todo.extend(parts)
    return done if split_any else None


def _split_once(polys, x: Access, y: Access, uniform, bounded):
    """((index of x, index of y), (rest of x, rest of y)) as Access pairs, split at the first radix
    whose rests are proved in range, or None."""
    # A radix: the shared factors of a monomial, all of them (``hidden * tokens``) or one.
    candidates: list[tuple] = []
    for p in (x.poly, y.poly):
        for mono in p:
            shared = tuple(a for a in mono if uniform(polys.atoms[a]))
            for cand in (shared, *((a,) for a in dict.fromkeys(shared))):
                if cand and cand not in candidates:
                    candidates.append(cand)
    for cand in candidates:
        qx, rx = _by(x.poly, cand)
        qy, ry = _by(y.poly, cand)
        c = math.gcd(*qx.values(), *qy.values())
        if not c:
            continue
        base = {cand: c}
        # A symbolic radix leaves every shift in the rest; each member's index is the hull's.
        parts = ((qx, units(x.members), rx, x.members), (qy, units(y.members), ry, y.members))
        found = _try(parts, base, c, bounded)
        if found:
            return found
    # A constant radix: a row of a size the binding fixes (``row * 4864 + col``), the largest first.
    # A member's shift splits too: its whole rows join the index, the rest stays in the rest.
    # The members' common step counts too (an unrolled loop's `dst[i * 8]` beside a rest `2 * r`, r < 8).
    radices = {abs(v) for p in (x.poly, y.poly) for m, v in p.items() if abs(v) > 1}
    radices |= {g for g in (math.gcd(*(s for _, s, _ in a.members)) for a in (x, y)) if g > 1}
    radices |= {g for g in (_run_step(a.members) for a in (x, y)) if g > 1}
    for c in sorted(radices, reverse=True):
        qx, rx = _multiples(x.poly, c)
        qy, ry = _multiples(y.poly, c)
        if not (qx or qy or any(abs(s) >= c for a in (x, y) for _, s, _ in a.members)):
            continue
        parts = tuple((q, tuple((pc, s // c, 1) for pc, s, _ in a.members), r,
                       tuple((pc, s % c, n) for pc, s, n in a.members)) for q, r, a in ((qx, rx, x), (qy, ry, y)))
        found = _try(parts, {(): c}, c, bounded)
        if found:
            return found
    return None


def _run_step(members: tuple) -> int:
    """The distance between runs of adjacent members, where they lie at rows a constant apart (an
    unrolled vector in each of several unrolled rows: shifts ``256 * h + 2 * j``): the greatest
    common divisor of the runs' starts' distances, 0 for one run."""
    starts: list = []
    end = None
    for s, e in sorted({(s, s + n) for _, s, n in members}):
        if end is None or s > end:
            starts.append(s)
            end = e
        else:
            end = max(end, e)
    return math.gcd(*(s - starts[0] for s in starts[1:])) if len(starts) > 1 else 0


def _try(parts, base: Poly, c: int, bounded):
    """The split of both accesses at ``base`` if each one's rests are proved in range."""
    if not all(bounded(members, rest, base) for _, _, rest, members in parts):
        return None
    (qx, ux, rx, mx), (qy, uy, ry, my) = parts
    return ((Access({m: v // c for m, v in qx.items()}, ux), Access({m: v // c for m, v in qy.items()}, uy)),
            (Access(rx, mx), Access(ry, my)))


def _multiples(p: Poly, c: int) -> tuple[Poly, Poly]:
    """(c * Q, R) with p == c * Q + R: Q the monomials whose coefficient c divides."""
    q = {m: v for m, v in p.items() if v % c == 0}
    return q, {m: v for m, v in p.items() if m not in q}


def units(members: tuple) -> tuple:
    return tuple(dict.fromkeys((pc, 0, 1) for pc, _, _ in members))


def _by(p: Poly, factor: tuple) -> tuple[Poly, Poly]:
    """(Q, R) with p == factor * Q + R, R's monomials those that ``factor`` (a monomial) does not
    divide."""
    q: Poly = {}
    r: Poly = {}
    for mono, c in p.items():
        rest = list(mono)
        try:
            for a in factor:
                rest.remove(a)
        except ValueError:
            r[mono] = c
            continue
        q[tuple(rest)] = c
    return q, r
