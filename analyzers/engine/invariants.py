"""Loop invariants of summarised loops, found Houdini-style.

A summary havocks the integer variables a body assigns, and with them the range a loop keeps them
in itself: a binary search's `lo` and `hi` stay inside the array, but after havoc `a[mid]` depends
on any `lo`, and the check is inconclusive. Candidates are guessed from the variables' values at
entry: each variable against its own start (it only grows, or only shrinks) and against each other
variable of its type (`lo <= hi`). A candidate is kept only if it is inductive: assumed at the head
together with the loop condition, one silent pass through the body (no check sees it) must give it
back on every path that goes round again; the ones a pass breaks are dropped and the rest tried
again until none breaks. The head then holds "no iteration has run (every variable at its start),
or every candidate kept": the first disjunct makes the entry case exact without a separate proof,
and a loop that runs zero times keeps its entry values.

A candidate is proved on exact values together with "no operation computing a carried value
wraps": where one may, the machine value is not the exact one, and the candidate is dropped.
"""
from __future__ import annotations

import z3

from . import ints
from .values import IntV

MAX_PAIR_VARS = 6  # more variables: only each against its start (pairs grow quadratically)
MAX_VARS = 12
MAX_ROUNDS = 4


class InvariantOps:
    def int_scalars(self, st, vids) -> dict:
        """The havocked variables that are plain integers, with their values in ``st``."""
        out: dict = {}
        for vid in sorted(vids):
            v = self._scalar(st, vid)
            if v is not None:
                out[vid] = v
                if len(out) == MAX_VARS:
                    break
        return out

    def _scalar(self, st, vid: int) -> IntV | None:
        region = st.lookup(vid)
        if region is None:
            return None
        content = st.content(region)
        entry = content.get(0)
        if len(content) != 1 or entry is None or not isinstance(entry[1], IntV):
            return None
        return entry[1]

    def loop_invariant(self, loop, cond, inc, body, st, start: dict, inside) -> z3.BoolRef | None:
        """What holds at the head of every iteration of the loop and after it, over the variables of
        ``start`` (their entry values), ``st`` being the havocked state; None when nothing is kept."""
        if self._silent:
            return None  # a loop inside a silent pass is summarised plainly: the search stays linear in the depth
        now = {vid: v for vid in start if (v := self._scalar(st, vid)) is not None and v.ty == start[vid].ty}
        if not now:
            return None
        start = {vid: start[vid] for vid in now}
        cands = _candidates(start)
        not_yet = z3.And(*[ints.compare("==", now[vid], start[vid]).term for vid in now])
        for _ in range(MAX_ROUNDS):
            if not cands:
                return None
            invariant = z3.Or(not_yet, z3.And(*[_term(c, now, start) for c in cands]))
            head = st.fork()
            head.assume(invariant)
            if inside is not None:
                head.assume(inside)
            if cond is not None:
                head.assume(self.truth(self.eval(cond, head), loop.span))
            if not self.ctx.feasible(head.pc):
                return invariant  # the body never runs from here: every candidate holds
            broken = self._broken(cands, start, self._silent_iteration(body, inc, head))
            if not broken:
                return invariant
            cands = [c for i, c in enumerate(cands) if i not in broken]
        return None

    def _silent_iteration(self, body, inc, head) -> list:
        """The states that go round again after one pass, run with no check listening: the pass only
        tests candidates; the summary's own pass reports (under weaker assumptions, so it sees every
        path this one does). Loops inside it are summarised without a search of their own (sound,
        only less precise): nested searches would multiply, level by level."""
        checks, self.ctx.checks, self._silent = self.ctx.checks, [], True
        try:
            going, _ = self.iteration(body, inc, head)
        finally:
            self.ctx.checks, self._silent = checks, False
        return going

    def _broken(self, cands: list, start: dict, going: list) -> set:
        """The candidates some state that goes round again does not give back."""
        broken: set = set()
        for y in going:
            after = {vid: self._scalar(y, vid) for vid in start}
            for i, (vid, op, (which, other)) in enumerate(cands):
                if i in broken:
                    continue
                a = after[vid]
                b = after[other] if which == "now" else start[other]
                if a is None or b is None or a.ty != start[vid].ty or b.ty != a.ty:
                    broken.add(i)  # the variable no longer holds a plain integer of its type
                    continue
                # Proved on the exact values, and that no operation computing a carried value
                # wraps (where one may, the machine value is not the exact one: the candidate goes).
                carried = (a, b) if which == "now" else (a,)
                wraps = [s.iwraps for v in carried for s in v.sites if s.iwraps is not None]
                ib = ints.I(b) if which == "now" else ints.machine_int(b)
                holds = ints.I(a) >= ib if op == ">=" else ints.I(a) <= ib
                if not self.ctx.excluded(y.pc, z3.Or(z3.Not(holds), *wraps)):
                    broken.add(i)
        return broken


def _candidates(start: dict) -> list:
    """(var, op, (which, var)): the variable against its own start, and against the others of its
    type now."""
    vids = list(start)
    out = [(a, op, ("start", a)) for a in vids for op in (">=", "<=")]
    if len(vids) <= MAX_PAIR_VARS:
        out += [(a, "<=", ("now", b)) for a in vids for b in vids if a != b and start[a].ty == start[b].ty]
    return out


def _term(cand, now: dict, start: dict) -> z3.BoolRef:
    vid, op, (which, other) = cand
    return ints.compare(op, now[vid], (start if which == "start" else now)[other]).term
