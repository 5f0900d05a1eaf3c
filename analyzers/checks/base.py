"""The interface of a check, and what every check needs to turn a model into a finding."""
from __future__ import annotations

import z3

from ..engine import contract
from ..engine.context import Context, _vars
from ..findings import STATIC_ONLY, STATIC_ONLY_UNINITIALIZED, Finding
from ..kir import nodes as N


class Check:
    id = ""

    def on_access(self, ctx: Context, st, ev) -> None:
        pass

    def on_sink(self, ctx: Context, st, sink) -> None:
        pass

    def on_launch(self, ctx: Context, st, ev) -> None:
        pass

    def on_barrier(self, ctx: Context, st, ev) -> None:
        pass

    def on_warp_sync(self, ctx: Context, st, ev) -> None:
        pass

    def on_kernel_end(self, ctx: Context, threads) -> None:
        """The launch's kernel has run on every path (``threads``: engine/threads.py)."""


def havocked(ctx: Context, cond: z3.ExprRef) -> str | None:
    """The name of a havocked loop value the condition depends on, if any."""
    return next((sym.name for sym in ctx.symbols_behind(cond) if sym.kind == "havoc"), None)


def depends_on_summary(ctx: Context, cond: z3.ExprRef, model=None, rank: int = 0) -> str | None:
    """The name of a havocked loop value the condition depends on, if any: a finding that needs one
    may be a false alarm of the loop summary, so it is reported as inconclusive instead, and the
    inputs of ``model`` are kept for a run with them fixed (engine/replay.py; lower ``rank``s first:
    an access before a launch's shape)."""
    name = havocked(ctx, cond)
    if name is not None:
        ctx.note_replay(model, rank)
    return name


def span_key(span: N.Span) -> tuple:
    return (span.file, span.line, span.col, span.end_line, span.end_col)


def make_finding(ctx: Context, st, check: str, message: str, location: N.Span, model, cond, sized=None,
                 cond_i=None, static_only: str | None = None, **kw) -> Finding:
    """``sized``: (region, offset term) of an out-of-bounds access, ``cond_i``: the failure in the
    integers, for the contract question (engine/contract.py), asked once the instance has run."""
    sources = ctx.loads_in(cond)
    sources += [o for o in ctx.guard_sources(st.pc, cond, model) if o not in sources]
    # Why a sanitizer can stay silent: the reason the caller gives (its message says it), else an
    # uninitialized value the finding rests on, else the check's.
    clause, uninitialized = _uninitialized(ctx, cond, model, explained=static_only is not None)
    message += clause
    if static_only is None:
        static_only = STATIC_ONLY_UNINITIALIZED if uninitialized else STATIC_ONLY.get(check, "")
    finding = Finding(check=check, message=message, location=location, op=ctx.op, kernel=ctx.kernel,
                      witness=ctx.witness(model, cond, st.thread), value_sources=sources,
                      load_elements=ctx.load_elements(model, cond), static_only=static_only, **kw)
    contract.ask_later(ctx, finding, st.pc, cond, sized, cond_i, model)
    return finding


def _uninitialized(ctx: Context, cond, model, explained: bool) -> tuple[str, bool]:
    """The clause a finding that rests on an uninitialized local gets, and whether it does: the
    root cause is the read of bytes no path wrote, and the value shown is one the hardware need
    not hold. ``explained``: the message already says why a sanitizer can stay silent."""
    names: dict[str, int] = {}
    for sym in ctx.symbols_behind(cond):
        if sym.kind == "uninit" and sym.origin[1] not in names:
            names[sym.origin[1]] = value_of(model, sym.term, sym.signed)
    if not names:
        return "", False
    said = ", ".join(f"`{name}` (here {value})" for name, value in names.items())
    clause = f"; it rests on {said}, read where this path never wrote it: an uninitialized value"
    if not explained:
        clause += f" (static-only: {STATIC_ONLY_UNINITIALIZED})"
    return clause, not explained


def value_of(model, term, signed: bool = True) -> int:
    v = model.eval(term, model_completion=True)
    return v.as_signed_long() if signed else v.as_long()
