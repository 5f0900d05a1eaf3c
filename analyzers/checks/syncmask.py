"""Warp primitives and their masks: every lane a ``_sync`` primitive's mask names (``__shfl_sync``,
``__ballot_sync``, ``__any_sync``, ``__syncwarp``...) that has not exited must reach it, and a
shuffle must read a lane that executes it (PTX ``shfl.sync``: the primitive waits for "all
non-exited threads corresponding to membermask"; the value read from a lane that does not take part
is undefined). compute-sanitizer's synccheck reported none of them on an H100 or an H200
(bench/repro_fixtures.py); a lane of the mask waiting at a barrier hangs the warp, which is seen.
Three ways to break it:

- a lane of the mask took another way at a branch before it and is still running (a warp reduction
  under ``if (i < n)`` with the full mask, followed by code the other lanes run: they wait, or
  reach a different primitive);
- a shuffle reads a lane that took another way and left the kernel (lanes past the row's end that
  returned, read by a ``__shfl_down_sync`` of the whole warp);
- a shuffle reads a lane that does not exist (a block of 48 threads has a second warp of 16 lanes;
  the full mask names 32, which is allowed, but lane 3 reading lane 19 reads nothing).

Lanes of the mask that exited (``if (row >= num_rows) return;`` before a reduction among the lanes
of one row) and lanes that do not exist are allowed. A mask that varies between threads
(``__activemask()``, a ballot's result) names the lanes that are there by construction and is not
judged.
"""
from __future__ import annotations

from dataclasses import dataclass

import z3

from ..engine.solver import SolverUnknown
from ..engine.threads import (diverging, exited, lane_of, shuffle_source, small_model, thread_text, waits_at_barrier,
                              warp_of)
from ..findings import (HANG_WORDS, STATIC_ONLY_ABSENT_LANE, STATIC_ONLY_EXITED_SOURCE, STATIC_ONLY_PAIRED_PRIMITIVES,
                        Fix)
from ..limits import WARP_SIZE
from .base import Check, depends_on_summary, make_finding, span_key, value_of
from .divergence import both_sides, report_divergence, seen_sides


@dataclass
class Reached:
    ev: object  # events.WarpSync
    pc: tuple
    st: object
    warp_epoch: object  # the path's warp epoch there
    before: frozenset  # the warp primitives the path reached before it


class SyncMaskCheck(Check):
    id = "sync-mask"

    def __init__(self):
        self.reached: list[Reached] = []

    def on_warp_sync(self, ctx, st, ev) -> None:
        if ctx.threads is not None:
            self.reached.append(Reached(ev, st.pc, st, st.epoch[1], st.warp_ops))

    def on_kernel_end(self, ctx, threads) -> None:
        reached, self.reached = self.reached, []
        sides = seen_sides(threads, reached)
        asked: dict = {}  # (place, question) -> decisions (and path conditions) already asked about there
        for r in reached:
            place = span_key(r.ev.span)
            key = ("sync-mask", place, ctx.kernel)
            if key in ctx.reported or threads.varying(r.ev.mask.bv):
                continue
            # The same place on the same path (an unrolled loop's iterations) names the same lanes:
            # its mask is asked about once; the lane it reads, once per distinct operand (a
            # butterfly's offsets 16, 8, ... read different lanes).
            seen = asked.setdefault((place, "path"), set())
            operand = r.ev.source[0].get_id() if r.ev.source is not None else None
            first = id(r.pc) not in seen
            if not first and (operand is None or (id(r.pc), operand) in seen):
                continue
            seen.update({id(r.pc), (id(r.pc), operand)})
            skip = both_sides(sides[place])
            try:
                if self._missing_source(ctx, threads, r, key):
                    continue
                if first and self._diverged_lane(ctx, threads, r, key, skip, asked.setdefault((place, "mask"), set())):
                    continue
                self._diverged_source(ctx, threads, r, key, skip, asked.setdefault((place, "source", operand), set()))
            except SolverUnknown as exc:
                ctx.mark(key)
                ctx.stuck("solver-unknown", f"whether every lane of the mask of `{r.ev.span.text}` reaches it could "
                          f"not be decided ({exc.reason})", r.ev.span)

    @staticmethod
    def _source_lane(r: Reached, lane):
        """The lane a shuffle at ``lane`` reads (``lane`` where it reads its own value); None for a
        primitive that reads no lane, or a shuffle whose source is not known."""
        if r.ev.source is None:
            return None
        d, width = r.ev.source
        return shuffle_source(r.ev.name, lane, d, width)

    def _missing_source(self, ctx, threads, r: Reached, key) -> bool:
        """A shuffle reading a lane past the block's last thread (a lane that does not exist)."""
        lane = lane_of(threads)
        src = self._source_lane(r, lane)
        if src is None:
            return False
        b = threads.thread.block.fields
        count = b["x"].bv * b["y"].bv * b["z"].bv
        cond = z3.And(src != lane, z3.UGE(threads.linear_tid() - lane + src, count))
        ctx.tick()
        model = ctx.solver.model(list(r.pc) + [cond])
        if model is None:
            return False
        ctx.mark(key)
        model = small_model(ctx, threads, list(r.pc) + [cond], model)
        if depends_on_summary(ctx, cond, model) is not None:
            ctx.stuck("imprecise-loop", f"whether the lane `{r.ev.span.text}` reads exists depends on a loop value "
                      "the summary cannot bound", r.ev.span)
            return True
        n, missing = value_of(model, count, False), value_of(model, src, False)
        msg = (f"`{r.ev.span.text}`: {thread_text(threads, model)} reads lane {missing} of its warp, which does not "
               f"exist: the block has {n} threads, not a multiple of {WARP_SIZE}. The value a shuffle returns from a "
               f"lane that does not take part is undefined (static-only: {STATIC_ONLY_ABSENT_LANE})")
        fix = Fix(r.ev.span, None, "launch a multiple of 32 threads per block, or let the lanes past the end take "
                  "part with a neutral value (0 for a sum) instead of leaving them out")
        ctx.report(make_finding(ctx, r.st, "sync-mask", msg, r.ev.span, model, cond, expression=r.ev.span,
                                trace=list(r.ev.stack), fix=fix, static_only=STATIC_ONLY_ABSENT_LANE))
        return True

    def _diverged_lane(self, ctx, threads, r: Reached, key, skip, asked: set) -> bool:
        """A lane of the mask that took another way before the primitive and has not exited."""
        mask = r.ev.mask.bv

        def peer(rename):
            return [warp_of(threads) == warp_of(threads, rename),
                    z3.Extract(0, 0, z3.LShR(mask, lane_of(threads, rename))) == 1,
                    z3.Not(exited(threads, rename, r.ev.span, r.before, r.warp_epoch))]

        found = diverging(ctx, threads, r.pc, peer, skip, asked)
        if found is None:
            return False
        ctx.mark(key)
        waits = waits_at_barrier(threads, found.rename, r.ev.span, r.before, r.warp_epoch)
        hangs = z3.is_true(found.model.eval(waits, model_completion=True))
        if hangs:
            rule = ("That lane goes on to a barrier this one has not passed, and waits there while this primitive "
                    f"waits for it: the warp hangs and {HANG_WORDS} (an H200 hangs on this pattern)")
        else:
            rule = ("A `_sync` primitive must be executed by every lane of its mask that has not exited; that lane "
                    f"runs on without reaching it (undefined behaviour; static-only: {STATIC_ONLY_PAIRED_PRIMITIVES})")
        report_divergence(
            ctx, threads, found, "sync-mask", r.ev, "", ", a lane of the same warp its mask names, which has not "
            "exited", rule,
            "call it where every lane of the mask arrives (before the branch), or pass the mask of the lanes that "
            "take the branch (`__ballot_sync(0xffffffff, cond)` before it)",
            static_only=None if hangs else STATIC_ONLY_PAIRED_PRIMITIVES, hangs=hangs)
        return True

    def _diverged_source(self, ctx, threads, r: Reached, key, skip, asked: set) -> bool:
        """A shuffle reading a lane that took another way before it (and exited: a lane still
        running is the mask's finding)."""
        lane = lane_of(threads)
        src = self._source_lane(r, lane)
        if src is None:
            return False

        def peer(rename):
            return [warp_of(threads) == warp_of(threads, rename), src != lane, lane_of(threads, rename) == src]

        found = diverging(ctx, threads, r.pc, peer, skip, asked)
        if found is None:
            return False
        ctx.mark(key)
        report_divergence(
            ctx, threads, found, "sync-mask", r.ev, "", ", the lane it reads",
            "The value a shuffle returns from a lane that does not execute it (here one that left the kernel) is "
            f"undefined (static-only: {STATIC_ONLY_EXITED_SOURCE})",
            "let every lane the shuffles read reach them (skip the work, not the shuffle: give the lanes past the "
            "end a neutral value such as 0 for a sum), or shuffle only within groups of lanes that leave together",
            static_only=STATIC_ONLY_EXITED_SOURCE)
        return True
