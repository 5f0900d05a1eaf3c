"""Barrier divergence: a block barrier (``__syncthreads()``, a block group's ``sync()``, a cub block
collective) reached by some threads of a block and not by others; a grid-wide barrier (a cooperative
launch's ``grid.sync()``) reached by some threads of the grid and not by others (a hang). The CUDA
programming guide makes the first undefined: the block hangs, or the barrier releases early and the
shared-memory order it was meant to give is lost.

The engine remembers every branch a kernel takes on a symbolic condition with its barrier epoch
(engine/threads.py). For each barrier reached, a decision on the way that a second thread of the
same block can take the other way, at the same epoch, is the finding: the two threads and the
condition are its witness. A condition every thread sees alike (kernel arguments, ``blockIdx``, a
shared value read after a barrier) is uniform and costs no query; a branch whose other side reaches
the same barrier too is not divergent. Threads that leave the kernel early (``if (i >= n) return;``
before a barrier) are the common case: compute-sanitizer's synccheck does not see it on sm_70 and
later, where exited threads no longer count at the barrier, so the message says the finding is
static-only.
"""
from __future__ import annotations

from dataclasses import dataclass

import z3

from ..engine.solver import SolverUnknown
from ..engine.threads import diverging, second_thread_witness, small_model, thread_text
from ..findings import HANG_WORDS, STATIC_ONLY, Finding, Fix
from .base import Check, depends_on_summary, span_key


@dataclass
class Reached:
    ev: object  # events.Barrier
    pc: tuple
    epoch: object = None  # the block epoch there (engine/threads.py)


def seen_sides(threads, reached: list) -> dict:
    """Per place: the branch sides (pair, side) some path took to reach it."""
    out: dict = {}
    for r in reached:
        sides = out.setdefault(span_key(r.ev.span), set())
        for t in r.pc:
            d = threads.decisions.get(t.get_id())
            if d is not None:
                sides.add((d.pair, d.side))
    return out


def both_sides(sides: set) -> frozenset:
    """The branch sides whose other side reaches the same place too: not a divergence there."""
    return frozenset((p, s) for p, s in sides if (p, not s) in sides)


def equal_barrier_count(threads, reached: list, pair: int) -> int | None:
    """How many barriers each side of branch ``pair`` passes, when both sides pass the same number
    at the same constant epochs (the MoE alignment idiom: the fill threads pass three bare
    ``__syncthreads()`` and leave, the others pass three of their own); None otherwise, or when a
    count depends on the path (a barrier in a loop)."""
    epochs: dict = {True: set(), False: set()}
    for r in reached:
        for t in r.pc:
            d = threads.decisions.get(t.get_id())
            if d is None or d.pair != pair:
                continue
            e = z3.simplify(r.epoch) if r.epoch is not None else None
            if e is None or not z3.is_bv_value(e):
                return None
            epochs[d.side].add(e.as_long())
    return len(epochs[True]) if epochs[True] and epochs[True] == epochs[False] else None


def report_divergence(ctx, threads, found, check: str, ev, prefix: str, whom: str, rule: str, fix: str,
                      static_only: str | None = None, hangs: bool = False):
    """Report that ``ev`` (a barrier, a warp primitive) is reached by one thread and not by the
    second one of ``found`` (threads.Divergence); None, with the reason recorded, when the
    divergence rests on a loop value the summary cannot bound. ``static_only``: why a sanitizer
    can stay silent, when not the check's; ``hangs``: the rule says the kernel never returns."""
    summary = depends_on_summary(ctx, found.cond, found.model)
    if summary is not None:
        ctx.stuck("imprecise-loop", f"whether `{ev.span.text}` is reached by every thread it waits for depends on "
                  f"{summary}, which the loop summary cannot bound", ev.span)
        return None
    sources = ctx.loads_in(found.cond)
    why = ctx.value_dependence(sources)
    if why is not None:
        ctx.stuck("needs-values", f"a possible {check} at `{ev.span.text}` {why}", ev.span)
        return None
    # A small witness only for a finding that stands (minimising costs a few queries).
    found.model = small_model(ctx, threads, found.constraints, found.model)
    d = found.decision
    t1 = thread_text(threads, found.model)
    t2 = thread_text(threads, found.model, found.rename)
    msg = (f"{prefix}`{ev.span.text}` is reached by {t1} but not by {t2}{whom}: `{d.span.text}` (line "
           f"{d.span.line}) differs between them. {rule}")
    finding = Finding(check=check, message=msg, location=ev.span, op=ctx.op, kernel=ctx.kernel,
                      witness=second_thread_witness(ctx, threads, found.rename, found.model, found.cond),
                      expression=ev.span, access=d.span, trace=list(ev.stack), fix=Fix(ev.span, None, fix),
                      related=[d.span], value_sources=sources,
                      static_only=STATIC_ONLY.get(check, "") if static_only is None else static_only, hangs=hangs)
    ctx.report(finding)
    return finding


class BarrierDivergenceCheck(Check):
    id = "barrier-divergence"

    def __init__(self):
        self.reached: list[Reached] = []

    def on_barrier(self, ctx, st, ev) -> None:
        if ev.scope in ("block", "grid") and ctx.threads is not None:
            self.reached.append(Reached(ev, st.pc, st.epoch[0] if st.epoch is not None else None))

    def on_kernel_end(self, ctx, threads) -> None:
        reached, self.reached = self.reached, []
        sides = seen_sides(threads, reached)
        by_decision: dict = {}  # one report per divergent branch: its other barriers are related places
        asked: dict = {}  # place -> decisions already asked about there
        for r in reached:
            key = ("barrier-divergence", span_key(r.ev.span), ctx.kernel)
            if key in ctx.reported:
                continue
            grid = r.ev.scope == "grid"
            try:
                found = diverging(ctx, threads, r.pc, lambda rename: [], both_sides(sides[span_key(r.ev.span)]),
                                  asked.setdefault(span_key(r.ev.span), set()), same_block=not grid)
            except SolverUnknown as exc:
                ctx.mark(key)
                ctx.stuck("solver-unknown", f"whether every thread of the block reaches `{r.ev.span.text}` could not "
                          f"be decided ({exc.reason})", r.ev.span)
                continue
            if found is None:
                continue
            ctx.mark(key)
            d = found.decision
            first = by_decision.get(d.pair)
            if first is not None:
                if r.ev.span not in first.related and r.ev.span != first.location:
                    first.related.append(r.ev.span)
                continue
            rule = f"Every thread of a block must reach each barrier (static-only: {STATIC_ONLY['barrier-divergence']})"
            count = None if grid else equal_barrier_count(threads, reached, d.pair)
            if grid:
                rule = ("Every thread of the grid must reach a grid-wide barrier (a cooperative launch's `sync()`): "
                        f"the threads that reach it wait for the others forever: {HANG_WORDS}")
            elif count is not None:
                rule = (f"Both sides of the branch pass {count} barrier{'s' if count != 1 else ''}, one for one: on "
                        "sm_70 and later, where threads of a block may wait at different `__syncthreads()` calls, the "
                        "block does not hang and each pair of barriers orders the two sides as one barrier would; "
                        "the CUDA programming guide still leaves barriers in divergent code undefined (and sm_6x "
                        "and earlier may hang)")
            finding = report_divergence(
                ctx, threads, found, "barrier-divergence", r.ev, "barrier divergence: ",
                " of the grid" if grid else " of the same block", rule,
                "move the barrier out of the branch, so that every thread reaches it (let the threads that have no "
                "work skip the work, not the barrier)", hangs=grid)
            if finding is None:
                continue
            by_decision[d.pair] = finding
