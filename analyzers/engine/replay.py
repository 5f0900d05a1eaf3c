"""Replays: a finding a loop summary could not settle, run again with its inputs fixed.

A summarised loop havocs what its body changes, so a finding that needs a havocked value may be
the summary's imprecision, and is inconclusive (``imprecise-loop``). When the loop is host code
(a launcher halving ``block.x`` while the grid is small) or its bounds come from the inputs, fixing
the inputs of the finding's model (sizes, scalars, dtypes, device answers) makes every such loop
run concretely: the replay unrolls it. A finding the replay reports holds for those inputs: a
real bug, with them as its witness. A replay that finds nothing settles nothing: the first run's
verdict stands.
"""
from __future__ import annotations

import z3

from ..findings import verdict_of

# Symbols that stand for an input of the op: fixing them is choosing one call. (A value the
# engine knows nothing of, such as an unknown function's result, is not: fixing it could pick one
# no run produces.)
INPUT_KINDS = ("user", "host", "stated", "dtype", "field")
MAX_REPLAYS = 2  # runs with fixed inputs per instance, the accesses' inputs first


def pins_from(model, symbols) -> tuple:
    """(z3 name, bits or 0 for a boolean, value) of each input symbol in ``model``."""
    from .context import _vars
    out: dict[str, tuple] = {}
    for _, sym in symbols:
        for const in ([sym.term] if z3.is_const(sym.term) else _vars(sym.term)):
            name = str(const)
            if name in out:
                continue
            v = model.eval(const, model_completion=True)
            if z3.is_bv_value(v):
                out[name] = (name, const.size(), v.as_long())
            elif z3.is_true(v) or z3.is_false(v):
                out[name] = (name, 0, int(z3.is_true(v)))
    return tuple(sorted(out.values()))


def pin_terms(pins: tuple) -> list:
    """The replay's fixed inputs as (constant, value) pairs for z3.substitute."""
    return [(z3.Bool(name), z3.BoolVal(bool(value))) if bits == 0 else
            (z3.BitVec(name, bits), z3.BitVecVal(value, bits)) for name, bits, value in pins]


def decide(term: z3.BoolRef, pins: list) -> z3.BoolRef:
    """A condition with the replay's inputs in place: true or false when they decide it (a loop
    then unrolls, a branch does not fork), else the condition itself."""
    if not pins or z3.is_true(term) or z3.is_false(term):
        return term
    fixed = z3.simplify(z3.substitute(term, *pins))
    return fixed if z3.is_true(fixed) or z3.is_false(fixed) else term


def pinned_inputs(pins: list, lia) -> list:
    """The fixed inputs as facts of the path, one per input (a conjunction of them all would tie
    every input into one group of constraints, and the solver could no longer ask a question apart
    from the facts it shares no variable with: solver._split), each with its integer twin where
    the input has one: the integer tier, which proves most accesses in bounds, otherwise knows
    nothing of the pins and asks its questions as hard as the first run did."""
    facts = []
    for c, v in pins:
        twin = lia.pinned(str(c), c.size(), v.as_long()) if z3.is_bv(c) else None
        facts.append(lia.register(c == v, twin))
    return facts


def imprecise_places(result) -> set:
    """Where a run left a finding to a loop summary (file, line). A replay that leaves all of the
    first run's places imprecise settled none of its loops by fixing the inputs: they depend on
    values no input fixes (what the kernel loads), and a replay with other inputs is not run."""
    return {(i.span.file, i.span.line) for i in result.inconclusive
            if i.reason == "imprecise-loop" and i.span is not None}


def settle(result, replayed, replay_symbols: dict, pins: tuple) -> None:
    """Fold a replay into the first run's result: its findings are real when every fixed name
    still named an input in the replay (the same symbols in the same order). The imprecise-loop
    reasons at the places it reports go; the rest of the first run stands."""
    if not replayed.findings:
        return
    for name, _, _ in pins:
        sym = replay_symbols.get(name)
        if sym is None or sym.kind not in INPUT_KINDS:
            return
    keys = {f.key() for f in result.findings}
    result.findings += [f for f in replayed.findings if f.key() not in keys]
    places = {(f.location.file, f.location.line) for f in replayed.findings}
    result.inconclusive = [i for i in result.inconclusive
                           if not (i.reason == "imprecise-loop" and i.span is not None
                                   and (i.span.file, i.span.line) in places)]
    result.seconds += replayed.seconds
    result.work += replayed.work
    result.queries += replayed.queries
    result.verdict = verdict_of(result.findings, result.inconclusive)
