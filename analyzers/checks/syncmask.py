"""Warp primitives and their masks: every lane a ``_sync`` primitive's mask names (``__shfl_sync``,
``__ballot_sync``, ``__any_sync``, ``__syncwarp``...) must reach it (the CUDA programming guide makes
anything else undefined). compute-sanitizer's synccheck sees it only while the missing lanes are
still running; on an H100 it reported neither a lane that does not exist nor lanes that returned
before the shuffle (bench/confirm_threads.py), so those findings are static-only. Two ways to break it: a lane the mask names does not exist (a block of 48 threads has a
second warp of 16 lanes, and the full mask names 32), or a lane of the mask took another way at a
branch before it (a warp reduction under ``if (i < n)`` with the full mask).

A mask that varies between threads (``__activemask()``, a ballot's result) names the lanes that are
there by construction and is not judged.
"""
from __future__ import annotations

from dataclasses import dataclass

import z3

from ..engine.solver import SolverUnknown
from ..engine.threads import diverging, lane_of, small_model, thread_text, warp_of
from ..findings import Fix
from ..limits import WARP_SIZE
from .base import Check, depends_on_summary, make_finding, span_key, value_of
from .divergence import both_sides, report_divergence, seen_sides


@dataclass
class Reached:
    ev: object  # events.WarpSync
    pc: tuple
    st: object


class SyncMaskCheck(Check):
    id = "sync-mask"

    def __init__(self):
        self.reached: list[Reached] = []

    def on_warp_sync(self, ctx, st, ev) -> None:
        if ctx.threads is not None:
            self.reached.append(Reached(ev, st.pc, st))

    def on_kernel_end(self, ctx, threads) -> None:
        reached, self.reached = self.reached, []
        sides = seen_sides(threads, reached)
        asked: dict = {}  # place -> decisions (and path conditions) already asked about there
        for r in reached:
            key = ("sync-mask", span_key(r.ev.span), ctx.kernel)
            if key in ctx.reported or threads.varying(r.ev.mask.bv):
                continue
            seen = asked.setdefault(span_key(r.ev.span), set())
            if id(r.pc) in seen:
                continue  # the same place on the same path (an unrolled loop's iterations)
            seen.add(id(r.pc))
            try:
                if self._missing_lane(ctx, threads, r, key):
                    continue
                self._diverged_lane(ctx, threads, r, key, both_sides(sides[span_key(r.ev.span)]), seen)
            except SolverUnknown as exc:
                ctx.mark(key)
                ctx.stuck("solver-unknown", f"whether every lane of the mask of `{r.ev.span.text}` reaches it could "
                          f"not be decided ({exc.reason})", r.ev.span)

    def _missing_lane(self, ctx, threads, r: Reached, key) -> bool:
        """A lane the mask names past the block's last thread."""
        mask = r.ev.mask.bv
        b = threads.thread.block.fields
        count = b["x"].bv * b["y"].bv * b["z"].bv
        lane = z3.BitVec(ctx.fresh_name("lane"), 32)
        base = threads.linear_tid() - lane_of(threads)
        cond = z3.And(z3.ULT(lane, WARP_SIZE), z3.Extract(0, 0, z3.LShR(mask, lane)) == 1, z3.UGE(base + lane, count))
        ctx.tick()
        model = ctx.solver.model(list(r.pc) + [cond])
        if model is None:
            return False
        ctx.mark(key)
        model = small_model(ctx, threads, list(r.pc) + [cond], model)
        if depends_on_summary(ctx, cond, model) is not None:
            ctx.stuck("imprecise-loop", f"whether the lanes of the mask of `{r.ev.span.text}` exist depends on a "
                      "loop value the summary cannot bound", r.ev.span)
            return True
        n, missing = value_of(model, count, False), value_of(model, lane, False)
        msg = (f"`{r.ev.span.text}`: its mask names lane {missing} of the warp of {thread_text(threads, model)}, which "
               f"does not exist: the block has {n} threads, not a multiple of {WARP_SIZE}. A `_sync` primitive waits "
               "for every lane of its mask (undefined behaviour; static-only: compute-sanitizer synccheck does not "
               "report lanes that do not exist on sm_70 and later)")
        fix = Fix(r.ev.span, None, "launch a multiple of 32 threads per block, or pass the mask of the lanes that "
                  "exist (`__ballot_sync(0xffffffff, true)` taken where every lane is present, or `__activemask()`)")
        ctx.report(make_finding(ctx, r.st, "sync-mask", msg, r.ev.span, model, cond, expression=r.ev.span,
                                trace=list(r.ev.stack), fix=fix))
        return True

    def _diverged_lane(self, ctx, threads, r: Reached, key, skip, asked: set) -> None:
        mask = r.ev.mask.bv

        def peer(rename):
            return [warp_of(threads) == warp_of(threads, rename),
                    z3.Extract(0, 0, z3.LShR(mask, lane_of(threads, rename))) == 1]

        found = diverging(ctx, threads, r.pc, peer, skip, asked)
        if found is None:
            return
        ctx.mark(key)
        report_divergence(
            ctx, threads, found, "sync-mask", r.ev, "", ", a lane of the same warp its mask names",
            "A `_sync` primitive waits for every lane of its mask (undefined behaviour; compute-sanitizer synccheck "
            "reports it only while the missing lanes are still running: lanes that have left the kernel pass unseen "
            "on sm_70 and later)",
            "call it where every lane of the mask arrives (before the branch), or pass the mask of the lanes that "
            "take the branch (`__ballot_sync(0xffffffff, cond)` before it)")
