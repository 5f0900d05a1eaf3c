"""Contract findings: zero-config findings that need a call no caller makes (README.md,
"Contract findings").

Without a binding, every size is a symbol within default ranges, and a launcher that does not check
what its callers guarantee (an output as long as the input, a group size that is not 0) admits
calls that break it. A finding whose every witness breaks such a guarantee is a ``contract``
finding: real for that call, but a call the op's callers never make unless they break the contract
too. Four guarantees are asked about, and nothing else:

- **sizes**: an out-of-bounds access of a caller's tensor whose failing dimensions the op never
  relates to anything (no check, no branch, no index reads them) is in bounds once those
  dimensions are as large as zero-config allows: the tensor was smaller than the op assumes.
- **zero**: an integer argument at 0, or an integer field of a struct taken by value (``g.nodes``),
  that nothing on the path decides on (``if (n == 0)`` makes 0 a case the op handles, and a
  finding there stays a bug).
- **state**: an access to a caller's object (a struct argument, by value or by reference) at an
  offset that only the integer fields of struct arguments decide, none of which the path bounds
  below its default range: the object's own state indexing its own tables (llama.cpp's context
  reads its stream at ``streams[device][0]``; its callers made ``device`` a device). A branch that
  bounds nothing (``device == current_device``) leaves it so; an op that bounds the field
  (``device <= 16``), or an offset mixed with a size, a thread or an argument, keeps a bug.
- **strides**: a misaligned access whose every witness needs an element of a shape member of a
  struct the op reads through a pointer (a ``ggml_tensor``'s ``nb[]``, its byte strides) that is no
  multiple of 16, where nothing on the path reads that element: its producer keeps a tensor's strides
  multiples of its element size, and an op that checks them owns what it checks. An element of
  ``ne[]`` the path never reads is taken alike (the two are not told apart); one the op reads (a
  loop over ``ne[0]`` columns) keeps its finding a bug.

A finding is a contract finding when it cannot happen with the guarantees kept (the solver says
so; an undecided query leaves it a bug). The strides guarantee is asked of misaligned accesses
alone.
"""
from __future__ import annotations

import z3

from . import ints
from .solver import SolverUnknown
from .terms import constants


# A tensor "as large as needed": an access past this offset is no access a program makes (4 EiB).
UNBOUNDED = 1 << 62


def ask_later(ctx, finding, pc, cond, sized=None, cond_i=None, model=None) -> None:
    """Queue a zero-config finding's question until the instance has run (``settle``): its queries
    add terms to the integer tier, which must not change how the rest of the instance is decided."""
    if ctx.zero_config and (ctx.contract_dims or ctx.state_fields or ctx.shape_fields):
        ctx.contract_questions.append((finding, tuple(pc), cond, sized, cond_i, model))


def settle(ctx) -> None:
    """Answer the queued questions of the findings the instance kept."""
    from .context import BudgetExceeded
    kept = {id(f) for f in ctx.findings.values()}
    try:
        for finding, pc, cond, sized, cond_i, model in ctx.contract_questions:
            if id(finding) in kept:
                finding.contract = reason(ctx, pc, cond, sized, cond_i, model) or \
                    (_strides(ctx, pc, cond, cond_i) if finding.check == "misaligned" else "")
    except BudgetExceeded:
        pass  # the findings not yet answered stay bugs
    ctx.contract_questions.clear()


def reason(ctx, pc, cond: z3.BoolRef, sized=None, cond_i=None, model=None) -> str:
    """Why a zero-config finding breaks its caller's contract ('' for a bug). ``pc``: the path;
    ``cond``: the failure (``cond_i``: in the integers, where the check has it); ``sized``:
    (region, offset term) of an out-of-bounds access; ``model``: the finding's witness, which
    answers at once when it keeps both guarantees."""
    if not ctx.zero_config or not (ctx.contract_dims or ctx.state_fields):
        return ""
    pc = [t for t in pc if t.get_id() not in ctx.continued]  # reported accesses taken as in bounds
    if sized is not None:
        state = _object_state(ctx, pc, *sized)
        if state:
            return state
    grown: list[str] = []
    larger, larger_i = cond, cond_i
    if sized is not None:
        region, offset = sized
        if region.name in ctx.caller_tensors and region.note != "allocated":
            mentioned = _names(ctx, offset) | _read_on_path(ctx, pc)
            dims = {n for n in _names(ctx, region.size) if n in ctx.contract_dims and n not in ctx.scalar_dims}
            grown = sorted(dims - mentioned)
            if grown:
                # The dimensions no check, branch or index reads grow without bound, and the tensor
                # with them (its default ranges are zero-config's, not the op's): an access that
                # fails only past the end holds in a tensor as large as it needs.
                larger = z3.substitute(cond, (region.size, z3.BitVecVal(UNBOUNDED, region.size.size())))
                larger_i = None if cond_i is None or region.size_iv is None else \
                    z3.substitute(cond_i, (region.size_iv, z3.IntVal(UNBOUNDED)))
    nonzero_of = {n: _nonzero(ctx, ctx.contract_dims[n]) for n in sorted(ctx.scalar_dims)}
    if not grown and not nonzero_of:
        return ""
    if model is not None and z3.is_true(model.eval(z3.And(larger, *nonzero_of.values()), model_completion=True)):
        return ""  # the witness itself keeps both guarantees: a bug
    zeros = [n for n, fact in nonzero_of.items() if ctx.feasible(pc, fact)]
    nonzero = [nonzero_of[n] for n in zeros]
    if not grown and not zeros:
        return ""
    if not _excluded(ctx, pc + nonzero, larger, larger_i):
        return ""
    # Which guarantee every witness breaks: one alone (asked again only when there are both), or
    # each of them (both true), or only one of the two for each witness.
    size_alone = bool(grown) and (not zeros or _excluded(ctx, pc, larger, larger_i))
    zero_alone = bool(zeros) and (not grown or _excluded(ctx, pc + nonzero, cond, cond_i))
    size_text = (f"it needs `{sized[0].name}` smaller than the op's accesses assume in {', '.join(grown)}, which "
                 "the op never checks (a larger tensor holds the access)") if grown else ""
    zero_text = f"it needs {' or '.join(f'`{n}`' for n in zeros)} at 0, which the op never rules out" if zeros else ""
    if size_alone and zero_alone:
        return f"{size_text}; and {zero_text}"
    if size_alone or zero_alone:
        return size_text if size_alone else zero_text
    return f"{size_text}, or {zero_text}"


def _object_state(ctx, pc, region, offset) -> str:
    """The **state** guarantee: the offset into the caller's object ``region`` is decided by
    integer fields of struct arguments alone, and the path bounds none of them below its default
    range (in the integers: each can still be its range's top)."""
    if region.kind != "param" or not ctx.state_fields:
        return ""
    field_of = _symbols(ctx, ctx.state_fields)
    names = _names(ctx, offset)
    if not names or not names <= field_of.keys():
        return ""
    for n in sorted(names):
        v = ctx.state_fields[field_of[n]]
        if not ctx.feasible(pc, ctx.lia.register(v.bv == v.hi, ints.I(v) == v.hi)):
            return ""  # the op bounds it below its default range: what it assumed is its own to get right
    fields = " and ".join(f"`{f}`" for f in sorted({field_of[n] for n in names}))
    return (f"it needs {fields} to index past the {region.size_lo} bytes of `{region.name}`: the object's own state, "
            "which its callers keep in range and the op never checks")


# A byte stride kept by its producer is a multiple of its element's size; 16 covers every access.
STRIDE_ALIGNMENT = 16


def _strides(ctx, pc, cond, cond_i=None) -> str:
    """The **strides** guarantee of a misaligned access: impossible once each shape-member element
    of a pointed struct it depends on, and nothing on the path reads, is a multiple of 16."""
    if not ctx.shape_fields:
        return ""
    pc = [t for t in pc if t.get_id() not in ctx.continued]
    field_of = _symbols(ctx, ctx.shape_fields)
    # An element the op reads on the path is its own: what it checks there is its to get right.
    used = (_names(ctx, cond) & field_of.keys()) - _read_on_path(ctx, pc)
    if not used:
        return ""
    aligned = []
    for n in sorted(used):
        v = ctx.shape_fields[field_of[n]]
        aligned.append(ctx.lia.register(v.bv & (STRIDE_ALIGNMENT - 1) == 0, ints.I(v) % STRIDE_ALIGNMENT == 0))
    if not _excluded(ctx, pc + aligned, cond, cond_i):
        return ""
    names = " and ".join(f"`{field_of[n]}`" for n in sorted(used))
    return (f"it needs {names} to be no multiple of the access's alignment: a stride its producer keeps a multiple "
            "of the element's size, which the op never checks")


def _symbols(ctx, fields: dict) -> dict:
    """Each symbol of the values in ``fields`` (path -> value), mapped to its path."""
    return {n: path for path, v in fields.items() for n in _names(ctx, v.bv)}


def _read_on_path(ctx, pc) -> set:
    """The symbols the path's own conditions read (not the set-up's ranges)."""
    out: set = set()
    for t in pc:
        if t.get_id() not in ctx.setup_ids:
            out |= _names(ctx, t)
    return out


def _names(ctx, term) -> set:
    key = term.get_id()
    got = ctx.term_names.get(key)
    if got is None:
        got = ctx.term_names[key] = {str(c) for c in constants(term)}
    return got


def _nonzero(ctx, v):
    """``v != 0`` in both tiers (the integers read a registered fact, not an opaque atom)."""
    iv = ints.I(v)
    return ctx.lia.register(v.bv != 0, iv >= 1 if v.lo >= 0 else z3.Or(iv < 0, iv > 0))


def _excluded(ctx, constraints: list, cond, cond_i=None) -> bool:
    """The failure is impossible under the constraints, and the constraints themselves possible (as
    far as the integers tell: the path with the finding's witness is). Integers first (they admit
    every behaviour of the bit-vectors, so a refutation there holds); an undecided answer is a no."""
    if ctx.lia.unsat(constraints):
        return False  # a path that breaks the guarantee anyway: nothing to say
    if ctx.lia.unsat(constraints, cond_i if cond_i is not None else ctx.lia.translate(cond)):
        return True
    try:
        return ctx.solver.model(list(constraints) + [cond], 0.5) is None
    except SolverUnknown:
        return False
