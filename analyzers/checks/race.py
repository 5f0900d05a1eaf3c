"""Data races on shared memory: two threads of one block, in one barrier interval, access
overlapping bytes of a ``__shared__`` object, at least one of them writing, not both atomically.

The engine runs one symbolic thread; this check keeps its shared-memory accesses with their path
condition and barrier epoch (engine/threads.py), and when the kernel has run asks, for each pair of
accesses (an access with itself included: two threads at the same statement), whether a second
thread of the same block, renamed apart, reaches the other access in the same interval at an
overlapping byte. Threads of one warp are ordered also by ``__syncwarp``. Two writes of the same
value (every thread storing one constant) are not reported (a benign race, as GPUVerify does).

A race that rests on a havocked loop value is the summary's imprecision (``imprecise-loop``); one
that rests on a value the engine does not compute (another lane's, shared memory contents) is
``needs-values``; a pair the solver cannot decide is ``solver-unknown``: never a finding.
"""
from __future__ import annotations

from dataclasses import dataclass

import z3

from ..engine.solver import SolverUnknown
from ..engine.threads import SecondThread, second_thread_witness, small_model, thread_text, warp_of
from ..findings import Finding, Fix
from .base import Check, depends_on_summary, span_key

SHARED = ("shared", "dynamic_shared")
MAX_LOGGED = 96  # accesses of one launch kept for pairing (each kept once per statement and path shape)


@dataclass
class Logged:
    ev: object  # events.Access
    pc: tuple
    epoch: tuple


class RaceCheck(Check):
    id = "race"

    def __init__(self):
        self.logged: list[Logged] = []
        self.dropped = 0

    def on_access(self, ctx, st, ev) -> None:
        if st.epoch is None or ctx.threads is None or ev.region.kind not in SHARED:
            return
        if len(self.logged) >= MAX_LOGGED:
            self.dropped += 1
            return
        self.logged.append(Logged(ev, st.pc, st.epoch))

    def on_kernel_end(self, ctx, threads) -> None:
        logged, self.logged = self.logged, []
        dropped, self.dropped = self.dropped, 0
        if dropped:
            ctx.stuck("path-explosion", f"{dropped} shared-memory accesses past the first {MAX_LOGGED} of the "
                      "kernel were not checked for races", None)
        reported: set = set()
        for i, a in enumerate(logged):
            for b in logged[i:]:
                if not (a.ev.write or b.ev.write) or (a.ev.atomic and b.ev.atomic) or a.ev.region is not b.ev.region:
                    continue
                key = ("race", ctx.kernel, *sorted((span_key(a.ev.span), span_key(b.ev.span))))
                if key in reported or key in ctx.reported:
                    continue
                if self._pair(ctx, threads, a, b, key):
                    reported.add(key)

    def _pair(self, ctx, threads, a: Logged, b: Logged, key) -> bool:
        rename = SecondThread(ctx, threads, same_block=True)
        ea, eb = a.ev, b.ev
        off_b = rename(eb.off.bv)
        overlap = z3.And(ea.off.bv < off_b + eb.size, off_b < ea.off.bv + ea.size)
        same_warp = warp_of(threads) == warp_of(threads, rename)
        interval = z3.If(same_warp, a.epoch[1] == rename(b.epoch[1]), a.epoch[0] == rename(b.epoch[0]))
        parts = [overlap, interval, threads.other_thread(rename)]
        for ev, side in ((ea, None), (eb, rename)):
            if ev.guard is not None:
                parts.append(ev.guard if side is None else side(ev.guard))
        va, vb = getattr(ea.value, "bv", None), getattr(eb.value, "bv", None)
        if ea.write and eb.write and va is not None and vb is not None and va.size() == vb.size():
            parts.append(va != rename(vb))  # the same value written by both: benign
        cond = z3.And(*parts)
        ctx.tick()
        constraints = list(a.pc) + [rename(t) for t in b.pc] + [cond]
        try:
            model = ctx.solver.model(constraints)
        except SolverUnknown as exc:
            ctx.stuck("solver-unknown", f"whether `{ea.span.text}` and `{eb.span.text}` race could not be decided "
                      f"({exc.reason})", eb.span)
            return True
        if model is None:
            return False
        ctx.mark(key)
        summary = depends_on_summary(ctx, cond, model)
        if summary is not None:
            ctx.stuck("imprecise-loop", f"a possible race between `{ea.span.text}` and `{eb.span.text}` on "
                      f"`{ea.region.name}` depends on {summary}, which the loop summary cannot bound", eb.span)
            return True
        ctx.report(_finding(ctx, threads, a, b, rename, small_model(ctx, threads, constraints, model), cond))
        return True


def _finding(ctx, threads, a: Logged, b: Logged, rename, model, cond) -> Finding:
    # The later access in the source is where the barrier goes; the other one is related.
    first, second = (a, b) if (a.ev.span.line, a.ev.span.col) <= (b.ev.span.line, b.ev.span.col) else (b, a)
    t_first = thread_text(threads, model, None if first is a else rename)
    t_second = thread_text(threads, model, rename if second is b else None)
    fa, sb = first.ev, second.ev

    def what(ev) -> str:
        return ("atomic " if ev.atomic else "") + ("write" if ev.write else "read")

    region = fa.region
    kind = "dynamic shared memory" if region.kind == "dynamic_shared" else "shared memory"
    if fa.span == sb.span:
        msg = (f"data race on {kind} `{region.name}`: two threads of one block {what(fa)} the same bytes at "
               f"`{fa.span.text}` with no barrier between them ({t_first} and {t_second})")
        fix = Fix(sb.span, None, "let one thread write (or give each thread its own element), or make the "
                  "update atomic")
    else:
        msg = (f"data race on {kind} `{region.name}`: `{fa.span.text}` ({what(fa)}, line {fa.span.line}) by "
               f"{t_first} and `{sb.span.text}` ({what(sb)}, line {sb.span.line}) by {t_second}, threads of "
               f"one block, in the same barrier interval")
        fix = Fix(sb.span, None, f"a `__syncthreads()` between line {fa.span.line} and line {sb.span.line} that "
                  "every thread of the block reaches (or `__syncwarp()` when both threads are always in one warp)")
    witness = second_thread_witness(ctx, threads, rename, model, cond)
    return Finding(check="race", message=msg, location=sb.span, op=ctx.op, kernel=ctx.kernel, witness=witness,
                   expression=sb.span, access=fa.span, trace=list(sb.stack), fix=fix,
                   related=[fa.span] if fa.span != sb.span else [], value_sources=ctx.loads_in(cond))
