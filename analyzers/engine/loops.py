"""Loops (DESIGN.md semantics 4).

A loop is unrolled while its condition stays concrete, up to ``unroll_max`` iterations; one without
a counter whose condition reads only the op's inputs forks there instead (``_forks``). What is left
is summarised by one symbolic iteration: the induction variable becomes ``start + k*step`` for a
symbolic iteration ``k`` (exact, so an induction variable that wraps is itself a finding), variables
advanced by a loop-invariant step alongside it follow the same ``k``, and every other variable the
body assigns is havocked, then bounded again by the invariants ``invariants.py`` proves. The exit
keeps the counter and its companions at the iteration where the condition first fails. A finding
that depends on a havocked value is not reported as a bug: the instance becomes inconclusive at the
loop instead (never a false alarm from a summary).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

from ..kir import nodes as N
from ..kir import types as T
from . import ints, lia, replay
from .terms import constants
from .threads import NO_BARRIERS
from .events import Sink
from .memory import PathEnd
from .state import State, decided, fresh_value, merge_all
from .writes import _strip, assigned_vars, declared_in, every_iteration, vars_used
from .values import MATH_BITS, FloatV, IntV, Loc, PtrV, RefV, StructV, WrapSite, const_int, new_site_id, widen

K_BITS = 40  # iterations of one loop by one thread: at most 2^40


@dataclass
class LoopShape:
    assigned: set = field(default_factory=set)  # var ids assigned in body/inc
    ind: N.VarDecl | None = None
    step: N.Expr | None = None
    step_neg: bool = False
    cmp: str = ""
    bound: N.Expr | None = None
    ind_left: bool = True
    offset: bool = False  # the condition compares the counter plus an invariant (j + 32 < n)
    secondary: dict = field(default_factory=dict)  # var id -> (VarDecl, step expr, negate)
    # Structs the body changes field by field (grid.x *= 2): var id -> {(byte offset, field type)}.
    # Only those fields are havocked; a var missing here is havocked whole.
    fields: dict = field(default_factory=dict)


def _names(*terms) -> tuple:
    """z3 names of the symbols in some terms (None skipped)."""
    from .context import _vars
    out: list = []
    for t in terms:
        if t is not None:
            out.extend(str(v) for v in _vars(t) if str(v) not in out)
    return tuple(out)


def _loop_value_name(region, where: str) -> str:
    """How a value a loop summary left in ``region`` is named in findings and reasons."""
    return f"{region.name} after iterations of loop at {where}"


def _step_of(write, decl) -> tuple[N.Expr, bool] | None:
    """The loop-invariant step of ``v += e`` / ``v++`` / ``v = v + e``, if ``write`` is one."""
    _, n = write
    if isinstance(n, N.IncDec):
        return N.IntLit(1, T.INT32), n.op == "--"
    if isinstance(n, N.Assign) and isinstance(_strip(n.lhs), N.Var):
        if n.op in ("+=", "-="):
            return n.rhs, n.op == "-="
        if n.op == "=":
            r = _strip(n.rhs)
            if isinstance(r, N.Binary) and r.op in ("+", "-"):
                if isinstance(_strip(r.lhs), N.Var) and _strip(r.lhs).decl.id == decl.id:
                    return r.rhs, r.op == "-"
                if r.op == "+" and isinstance(_strip(r.rhs), N.Var) and _strip(r.rhs).decl.id == decl.id:
                    return r.lhs, False
    return None


def _conjuncts(cond: N.Expr) -> list:
    """The operands of a condition's top-level `&&` (the condition itself when it has none)."""
    c = _strip(cond)
    if isinstance(c, N.Binary) and c.op == "&&":
        return _conjuncts(c.lhs) + _conjuncts(c.rhs)
    return [cond]


def _counter_side(side: N.Expr, changing: set) -> tuple:
    """The counter a side of the loop condition compares, and whether it is offset: ``j`` in
    ``j < n``, also in ``j + 32 < n`` and ``j - 1 < n`` (the offset invariant)."""
    v = _strip(side)
    if isinstance(v, N.Binary) and v.op in ("+", "-") and isinstance(_strip(v.lhs), N.Var) \
            and not (vars_used(v.rhs) & changing):
        return _strip(v.lhs), True
    return v, False


def loop_shape(cond: N.Expr | None, inc: N.Expr | None, body: N.Stmt, functions=None) -> LoopShape:
    per_field: dict = {}
    ids, writes = assigned_vars(body, inc, fields=per_field, functions=functions)
    local = declared_in(body)
    ids -= local
    shape = LoopShape(assigned=ids, fields={v: fs for v, fs in per_field.items() if fs and v in ids})
    by_var: dict = {}
    for root, n in writes:
        if root.id not in local:
            by_var.setdefault(root.id, []).append((root, n))
    # Secondary inductions: variables written exactly once, on every iteration, by a loop-invariant
    # step. One stepped under an `if` (a block index bumped when an offset wraps) is havocked.
    every = every_iteration(body, cond, inc)
    for vid, ws in by_var.items():
        if len(ws) != 1 or id(ws[0][1]) not in every:
            continue
        step = _step_of(ws[0], ws[0][0])
        if step is not None and not (vars_used(step[0]) & (ids | local)):
            shape.secondary[vid] = (ws[0][0], step[0], step[1])
    # The counter's comparison: the condition itself, or one conjunct of `i < n && more`.
    candidates = [_strip(cond)] if cond is not None else []
    while candidates and isinstance(candidates[0], N.Binary) and candidates[0].op == "&&":
        top = candidates.pop(0)
        candidates[:0] = [_strip(top.lhs), _strip(top.rhs)]
    for c in candidates:
        if shape.ind is not None:
            break
        if not (isinstance(c, N.Binary) and c.op in ("<", "<=", ">", ">=", "!=")):
            continue
        for left, side, other in ((True, c.lhs, c.rhs), (False, c.rhs, c.lhs)):
            v, offset = _counter_side(side, ids | local)
            if isinstance(v, N.Var) and v.decl.id in shape.secondary and not (vars_used(other) & (ids | local)):
                decl, step, neg = shape.secondary.pop(v.decl.id)
                shape.ind, shape.step, shape.step_neg = decl, step, neg
                shape.cmp, shape.bound, shape.ind_left = c.op, other, left
                shape.offset = offset
                break
    return shape


class LoopOps:
    # ------------------------------------------------------------ statements

    def ex_for(self, s: N.For, st: State) -> list[State]:
        states = [st]
        if s.init is not None:
            states = self.exec_block((s.init,), states)
        out: list[State] = []
        for x in states:
            if x.status != "ok":
                out.append(x)
            else:
                out.extend(self.run_loop(s, s.cond, s.inc, s.body, x, body_first=False))
        return merge_all(out)

    def ex_while(self, s: N.While, st: State) -> list[State]:
        return self.run_loop(s, s.cond, None, s.body, st, body_first=False)

    def ex_dowhile(self, s: N.DoWhile, st: State) -> list[State]:
        return self.run_loop(s, s.cond, None, s.body, st, body_first=True)

    # ------------------------------------------------------------ unrolling, then summary

    def run_loop(self, loop: N.Stmt, cond, inc, body, st: State, body_first: bool) -> list[State]:
        self.loop_depth += 1
        try:
            return self._run_loop(loop, cond, inc, body, st, body_first)
        finally:
            self.loop_depth -= 1

    def _run_loop(self, loop: N.Stmt, cond, inc, body, st: State, body_first: bool) -> list[State]:
        exits: list[State] = []
        pending: list[State] = []
        states = [st]
        if self._symbolic_counter(loop, cond, inc, body, st):
            # A counter that starts at a symbolic value (tid, a block offset): unrolling would
            # repeat the same proof per iteration; one symbolic iteration covers them all.
            states, pending = [], [st]
        for it in range(self.ctx.options.unroll_max + 1):
            if not states:
                break
            if it == self.ctx.options.unroll_max:
                pending.extend(s for s in states if s.status == "ok")
                break
            nxt: list[State] = []
            for x in states:
                if not (body_first and it == 0) and cond is not None:
                    c = self.truth(self.eval(cond, x), loop.span)
                    d = decided(c)
                    if d is False:
                        exits.append(x)
                        continue
                    if d is None:
                        if not self._forks(loop, cond, inc, body, c):
                            pending.append(x)
                            continue
                        sides = self.branches(x, c, cond.span)
                        exits.extend(y for holds, y in sides if not holds)
                        x = next((y for holds, y in sides if holds), None)
                        if x is None:
                            continue
                going, done = self.iteration(body, inc, x)
                nxt.extend(going)
                exits.extend(done)
            states = merge_all(nxt)
            if not states:
                break
        for x in pending:
            try:
                exits.extend(self.summarise(loop, cond, inc, body, x))
            except PathEnd as pe:
                exits.append(self.end_path(x, pe))
        return merge_all(exits)

    def iteration(self, body, inc, st: State) -> tuple[list[State], list[State]]:
        """One pass through the body and the increment: the states that go on to the next
        iteration, and those that leave the loop (break, return, an ended path)."""
        going: list[State] = []
        done: list[State] = []
        for y in self.run_stmt(body, st):
            if y.status == "break":
                y.status = "ok"
                done.append(y)
            elif y.status in ("ok", "continue"):
                y.status = "ok"
                if inc is not None:
                    try:
                        self.eval(inc, y)
                    except PathEnd as pe:
                        done.append(self.end_path(y, pe))
                        continue
                going.append(y)
            else:
                done.append(y)
        return going, done

    def shape_of(self, loop: N.Stmt, cond, inc, body) -> LoopShape:
        shape = self._shapes.get(id(loop))
        if shape is None:
            shape = self._shapes[id(loop)] = loop_shape(cond, inc, body, self.program.functions)
        return shape

    def _forks(self, loop, cond, inc, body, c: z3.BoolRef) -> bool:
        """A loop without a counter whose condition reads only the op's inputs (a launch
        configuration reshaped while the grid is small, `while (grid.x <= sms && block.x > 64)`;
        the next power of two of a size) runs its few iterations path by path, leaving at each one
        where its condition can fail: a summary would lose the values it computes. A condition on
        threads or loaded values (a binary search) is summarised as before."""
        if self.shape_of(loop, cond, inc, body).ind is not None:
            return False
        for name in _names(c):
            sym = self.ctx.symbols.get(name)
            if sym is None or sym.kind not in replay.INPUT_KINDS:
                return False
        return True

    def _symbolic_counter(self, loop, cond, inc, body, st: State) -> bool:
        shape = self.shape_of(loop, cond, inc, body)
        if shape.ind is None:
            return False
        try:
            v = self.load(st, self.var_loc(shape.ind, st, loop.span), loop.span)
        except PathEnd:
            return False
        return isinstance(v, IntV) and v.concrete() is None

    def summarise(self, loop: N.Stmt, cond, inc, body, st: State) -> list[State]:
        shape = self.shape_of(loop, cond, inc, body)
        where = f"{loop.span.file}:{loop.span.line}"
        havocked = set(shape.assigned)
        k = None
        inside = exits_at = None
        if shape.ind is not None:
            self._inside = self._exits_at = None
            k = self._induction(shape, st, where, loop)
            inside, self._inside = self._inside, None
            exits_at, self._exits_at = self._exits_at, None
            if k is not None:
                havocked.discard(shape.ind.id)
                havocked -= set(shape.secondary)
        start = self.int_scalars(st, havocked - set(shape.fields))
        for vid in havocked:
            if vid in shape.fields:
                self.havoc_fields(st, vid, shape.fields[vid], where)
            else:
                self.havoc_var(st, vid, where)
        if start:
            invariant = self.loop_invariant(loop, cond, inc, body, st, start, inside)
            if invariant is not None:
                st.assume(invariant)
        entry = st.fork()
        leaving = self.loop_epochs(loop, cond, inc, body, entry, st, k, where)
        pair = self.new_pair()
        barriers = self.loop_barriers(loop, cond, inc, body) != NO_BARRIERS
        if inside is not None:
            # The condition on the counter, which its narrowed interval no longer shows.
            self.assume_decision(entry, inside, cond.span if cond is not None else loop.span, pair, True, barriers)
        if cond is not None:
            c = self.truth(self.eval(cond, entry), loop.span)
            self._bound_sink(shape, entry, loop)
            self.assume_decision(entry, c, cond.span, pair, True, barriers)
        out: list[State] = []
        going, done = [], []
        if self.ctx.feasible(entry.pc):
            going, done = self.iteration(body, inc, entry)
            out.extend(done)
            if shape.ind is not None:
                for y in going:
                    self._next_value_sink(shape, y, loop)
        exit_state = st
        # What the body reached, the path after the loop has reached (a lane leaving it has passed
        # the warp primitives inside).
        for y in (*going, *done):
            exit_state.warp_ops = exit_state.warp_ops | y.warp_ops
        if shape.ind is not None and (k is None or cond is None):
            self.havoc_var(exit_state, shape.ind.id, where)
            for vid in shape.secondary:
                self.havoc_var(exit_state, vid, where)
        elif shape.ind is not None:
            self._exit_iteration(shape, exit_state, cond, k, exits_at, loop)
        if cond is not None:
            c = self.truth(self.eval(cond, exit_state), loop.span)
            self.assume_decision(exit_state, z3.Not(c), cond.span, pair, False, barriers, leaving)
            if self.ctx.feasible(exit_state.pc):
                out.append(exit_state)
        return out

    def _exit_iteration(self, shape: LoopShape, st: State, cond: N.Expr, k, exits_at, loop: N.Stmt) -> None:
        """The loop left by its condition at iteration k: the counter and the variables advanced
        with it keep their values at k (``base`` after ``base += 256`` k times, for the tail after
        the loop), and k is the first iteration where the condition fails: it held at k - 1, unless
        it reads a variable the body changes (then its value at k - 1 is not known)."""
        value, previous = exits_at
        ind_loc = self.var_loc(shape.ind, st, loop.span)
        self._store_tracked(st, ind_loc.region, ind_loc.off, value.ty, value, loop.span)
        # The whole condition held at k - 1, so each of its `&&` conjuncts did; those that read no
        # variable the body changes (other than the counter, put back at k - 1) can be evaluated
        # there: `j > 0` of `while (j > 0 && vals[j - 1] < v)` leaves j at 0 or above.
        changed = shape.assigned - {shape.ind.id}
        kept = [c for c in _conjuncts(cond) if not (vars_used(c) & changed)]
        if not kept:
            return
        before = st.fork()
        self._store_tracked(before, ind_loc.region, ind_loc.off, value.ty, previous, loop.span)
        checks, self.ctx.checks = self.ctx.checks, []  # the condition at k - 1 was checked in the body
        try:
            held = [self.truth(self.eval(c, before), loop.span) for c in kept]
        except PathEnd:
            return
        finally:
            self.ctx.checks = checks
        st.assume(z3.Or(lia.CURRENT.register(k == 0, self._k_int(k) == 0), *([z3.And(*held)] if len(held) > 1 else held)))

    def _induction(self, shape: LoopShape, st: State, where: str, loop: N.Stmt):
        """Give the induction variable its value at a symbolic iteration k. None when the step's
        sign is unknown (then the variable is havocked like the others)."""
        ind_loc = self.var_loc(shape.ind, st, loop.span)
        start = self.load(st, ind_loc, loop.span)
        step = self.eval(shape.step, st)
        if not isinstance(start, (IntV, PtrV)) or not isinstance(step, IntV):
            return None
        # The step's sign, not its being non-zero, decides which way the variable moves: a step
        # of 0 (blockDim.x / num_groups on a path where it is 0) leaves it at its start, which the
        # same interval covers.
        if step.lo >= 0:
            down = False
        elif step.hi <= 0:
            down = True
        elif self.ctx.excluded(st.pc, ints.I(step) < 0):
            down = False
        elif self.ctx.excluded(st.pc, ints.I(step) > 0):
            down = True
        else:
            return None
        negative = down != shape.step_neg
        k = z3.BitVec(self.ctx.fresh_name("k"), K_BITS)
        self.ctx.symbol(f"iteration of loop at {where}", k, "loop", signed=False)
        if isinstance(start, PtrV):
            return None
        ty = start.ty
        name = self.ctx.fresh_name(shape.ind.name)
        bv = z3.BitVec(name, ty.bits)
        bound = None
        try:
            bound = self.eval(shape.bound, st.fork())
        except PathEnd:
            bound = None
        lo, hi = ty.min, ty.max
        if not negative:
            lo = max(start.lo, ty.min)
        else:
            hi = min(start.hi, ty.max)
        iv = lia.CURRENT.var(name, lo, hi)
        value = IntV(ty, bv, lo, hi, iv=iv)
        deps = _names(start.exact, step.exact, bound.bv if isinstance(bound, IntV) else None)
        if isinstance(bound, FloatV) and bound.exact is None:
            # Bounded by a float the engine does not compute: how far the counter goes is unknown,
            # and a finding that needs it far is needs-values, not a bug.
            what = f"the floating-point bound of the loop at {where}"
            marker = z3.Bool(self.ctx.fresh_name("float_bound"))
            self.ctx.symbol(what, marker, "load", False, ("float", what, False))
            deps = deps + (str(marker),)
        self.ctx.symbol(f"{shape.ind.name} (loop at {where})", bv, "loop", ty.signed, deps=deps)
        self.ctx.symbol(f"iteration of loop at {where}", k, "loop", signed=False, deps=deps)
        kk = z3.ZeroExt(MATH_BITS - K_BITS, k)
        stepx = step.exact if not shape.step_neg else -step.exact
        step_i = ints.I(step) if not shape.step_neg else -ints.I(step)
        st.assume(lia.CURRENT.register(widen(bv, ty.signed, MATH_BITS) == start.exact + kk * stepx,
                                       iv == ints.I(start) + self._k_int(k) * step_i))
        self._store_tracked(st, ind_loc.region, ind_loc.off, ty, value, loop.span)
        # Its value at k - 1 (the last iteration when the loop leaves at k), exact as the value at
        # k is: had the step to k - 1 wrapped, the summarised iteration reports it.
        prev = z3.Extract(ty.bits - 1, 0, start.exact + (kk - 1) * stepx)
        self._exits_at = (value, IntV(ty, prev, ty.min, ty.max, iv=ints.I(start) + (self._k_int(k) - 1) * step_i))
        if isinstance(bound, IntV) and shape.ind_left and not shape.offset and bound.ty.bits <= ty.bits:
            # Inside the loop the condition holds: put it on the path, then let the interval use it.
            cond = ints.compare(shape.cmp, value, ints.convert(bound, ty, loop.span) if bound.ty != ty else bound)
            if not negative and shape.cmp in ("<", "<="):
                hi = min(ty.max, bound.hi - (1 if shape.cmp == "<" else 0))
            elif negative and shape.cmp in (">", ">="):
                lo = max(ty.min, bound.lo + (1 if shape.cmp == ">" else 0))
            if (lo, hi) != (value.lo, value.hi) and lo <= hi:
                # The narrower interval holds inside the loop only: summarise assumes the condition
                # on the iteration's state, not here (after the loop it would claim an iteration ran).
                self._inside = cond.term
                self._store_tracked(st, ind_loc.region, ind_loc.off, ty, IntV(ty, bv, lo, hi, iv=iv), loop.span)
        for vid, (decl, sexpr, neg) in shape.secondary.items():
            self._advance(st, decl, sexpr, neg, k, where, loop)
        return k

    def _advance(self, st: State, decl: N.VarDecl, sexpr: N.Expr, neg: bool, k, where: str, loop: N.Stmt) -> None:
        """A variable advanced by a loop-invariant step: its value at iteration k."""
        loc = self.var_loc(decl, st, loop.span)
        v0 = self.load(st, loc, loop.span)
        step = self.eval(sexpr, st)
        if not isinstance(step, IntV):
            self.havoc_var(st, decl.id, where)
            return
        kv = IntV(T.INT64, z3.ZeroExt(64 - K_BITS, k), 0, (1 << K_BITS) - 1, iv=self._k_int(k))
        if isinstance(v0, PtrV):
            total = ints.arith("*", kv, ints.convert(step, T.INT64, loop.span), T.INT64, loop.span)
            self._store_tracked(st, loc.region, loc.off, loc.ty, self.ptr_add(v0, total, loop.span, (), subtract=neg), loop.span)
            return
        if not isinstance(v0, IntV):
            self.havoc_var(st, decl.id, where)
            return
        ty = v0.ty
        # Exact: v0 + k*step; the machine value wraps where the exact one leaves the type.
        exact = v0.exact + z3.ZeroExt(MATH_BITS - K_BITS, k) * (-step.exact if neg else step.exact)
        exact_i = ints.I(v0) + self._k_int(k) * (-ints.I(step) if neg else ints.I(step))
        bv = z3.Extract(ty.bits - 1, 0, exact)
        sites = v0.sites | step.sites
        if ty.bits <= ints.SITE_MAX_BITS:
            wraps = widen(bv, ty.signed, MATH_BITS) != exact
            sites = sites | {WrapSite(new_site_id(), "+", sexpr.span, ty.name, None, wraps, self.stack_spans(st), bv, exact,
                                      ty.signed, z3.Or(exact_i < ty.min, exact_i > ty.max))}
        value = IntV(ty, bv, ty.min, ty.max, exact, sites, None, exact_i)
        self._store_tracked(st, loc.region, loc.off, ty, value, loop.span)

    def _k_int(self, k) -> z3.ArithRef:
        return lia.CURRENT.var(str(k), 0, (1 << K_BITS) - 1)

    def havoc_var(self, st: State, vid: int, where: str) -> None:
        region = st.lookup(vid)
        if region is None:  # captured by reference by a lambda the loop calls: the maker's frame
            region = next((f.vars[vid] for f in st.frames.values() if vid in f.vars), None)
        if region is None:
            return
        content = st.content(region)
        entry = content.get(0)
        if entry is not None and isinstance(entry[1], RefV):
            # A reference is never reseated: what the loop may change is the object it names.
            self._havoc_target(st, entry[1].loc, where)
            return
        self._havoc_contents(st, region, where)

    def _havoc_contents(self, st: State, region, where: str) -> None:
        """Every value the object holds becomes a loop value of its type, and so does what it did
        not hold (the loop may have written it): a finding that needs one is the summary's
        imprecision, never a bug."""
        havocked = {off: (ty, self._havoc_value(region, ty, v, where)) for off, (ty, v) in st.content(region).items()}
        st.clear_content(region)  # what it did not hold: loop_written below
        self.ctx.loop_written.setdefault(region.id, _loop_value_name(region, where))
        fresh = st.write_content(region)
        for off, (ty, v) in sorted(havocked.items()):
            if v is not None:
                self._write_at(fresh, off, ty, v)

    def _havoc_value(self, region, ty: T.Type, old, where: str):
        """An unknown value in place of ``old`` after iterations of a loop: a pointer keeps its
        object (a loop moves a pointer, it does not make one up) at an unknown offset."""
        what = _loop_value_name(region, where)
        if isinstance(old, RefV):
            return old
        if isinstance(old, PtrV):
            off = fresh_value(T.INT64, "havoc_offset", self.ctx.counter)
            self.ctx.symbol(what, off.bv, "havoc")
            return PtrV(old.region, off, old.pointee)
        return self.fresh_loop_value(ty, what)

    def fresh_loop_value(self, ty: T.Type, what: str):
        """A value of ``ty`` a loop may have left, every integer in it (array elements and fields
        too) a "havoc" symbol: a finding that needs one is the summary's imprecision."""
        v = fresh_value(ty, "havoc", self.ctx.counter)
        self._register_havoc(v, what)
        return v

    def _register_havoc(self, v, what: str) -> None:
        if isinstance(v, IntV):
            self.ctx.symbol(what, v.bv, "havoc", v.ty.signed)
        elif isinstance(v, StructV):
            for f in v.fields.values():
                self._register_havoc(f, what)

    def havoc_fields(self, st: State, vid: int, fields: set, where: str) -> None:
        """Only the fields the body writes change; the others keep their values."""
        region = st.lookup(vid)
        if region is None:
            return
        content = st.write_content(region)
        for off, ty in sorted(fields, key=lambda f: f[0]):
            v = self.fresh_loop_value(ty, _loop_value_name(region, where))
            if v is None:
                self.havoc_var(st, vid, where)
                return
            self._write_at(content, off, ty, v)

    def _havoc_target(self, st: State, loc, where: str) -> None:
        region = loc.region
        if not region.tracked or region.kind not in ("local", "param"):
            return  # memory the engine does not keep values of: every load is fresh anyway
        c = loc.off.concrete()
        v = self.fresh_loop_value(loc.ty, _loop_value_name(region, where)) if c is not None else None
        if v is None:
            self._havoc_contents(st, region, where)
            return
        self._write_at(st.write_content(region), c, loc.ty, v)

    def _bound_sink(self, shape: LoopShape, st: State, loop: N.Stmt) -> None:
        if shape.bound is None:
            return
        try:
            b = self.eval(shape.bound, st.fork())
        except PathEnd:
            return
        if isinstance(b, IntV) and b.math is not None:
            self.emit_sink(st, Sink(b, "loop-bound", shape.bound.span, self.stack_spans(st), "the bound of the loop"))

    def _next_value_sink(self, shape: LoopShape, st: State, loop: N.Stmt) -> None:
        """After the increment, the induction variable is compared with the bound: if the increment
        wrapped, the loop runs on with a wrong index (or forever)."""
        try:
            v = self.load(st, self.var_loc(shape.ind, st, loop.span), loop.span)
        except PathEnd:
            return
        if isinstance(v, IntV) and v.math is not None:
            self.emit_sink(st, Sink(v, "loop-bound", shape.step.span if shape.step is not None else loop.span,
                                    self.stack_spans(st), f"the induction variable {shape.ind.name}"))


LoopOps._loop_stmts = {N.For: LoopOps.ex_for, N.While: LoopOps.ex_while, N.DoWhile: LoopOps.ex_dowhile}


class LoopRuns:
    """Accesses made inside different runs of one summarised loop (its body reached once per
    unrolled iteration of an outer loop: a head loop around a vector loop) as accesses of one run.
    Each run has its own counter symbols (``k``, ``i``), so the accesses' offsets share no
    polynomial and pairing them costs one question per pair of runs; with each run's counters
    renamed to symbols all runs of that loop share, they differ by constants alone.

    ``one_run(pc, off)`` renames the counters of the runs the integer offset ``off`` moves with and
    keeps from ``pc`` only what does not speak of another run of the same loops (an earlier run's
    exit): a weaker path, so a proof about the renamed access holds for the access. None where the
    access is not inside exactly one run of each loop it moves with."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.lia = ctx.lia
        self.shared: dict[str, tuple] = {}  # a counter's description -> (bit-vector, integer) symbol of all runs
        self.bounds: dict[str, object] = {}  # shared integer name -> the bound every run's counter has, or None
        self.atoms: dict[int, z3.BoolRef] = {}  # renamed condition's id -> one object for it
        self._symbols_of: dict[int, dict] = {}  # term id -> its loop counters (the term kept alive in keep)
        self.keep: list = []
        self.paths: dict[tuple, tuple] = {}

    def _loop_symbols(self, term) -> dict:
        """Loop counters ``term`` mentions: name -> the loop's location."""
        hit = self._symbols_of.get(term.get_id())
        if hit is not None:
            return hit
        out = {}
        for v in constants(term):
            name = v.decl().name()
            sym = self.ctx.symbols.get(name)
            if sym is not None and sym.kind == "loop" and "loop at " in sym.name:
                out[name] = sym.name.rsplit("loop at ", 1)[1].rstrip(")")
        self._symbols_of[term.get_id()] = out
        self.keep.append(term)
        return out

    def one_run(self, pc: tuple, off: z3.ArithRef):
        own = self._loop_symbols(off)
        if not own:
            return None
        where = set(own.values())
        # The run's other counters: those its path ties to the ones the offset names.
        grew = True
        while grew:
            grew = False
            for c in pc:
                names = self._loop_symbols(c)
                if names.keys() & own.keys():
                    for n, w in names.items():
                        if n not in own and w in where:
                            own[n] = w
                            grew = True
        described = [self.ctx.symbols[n].name for n in own]
        if len(set(described)) != len(described):
            return None  # two runs of one loop behind one access
        pairs_bv, pairs_int = [], []
        for n, what in zip(own, described):
            sym = self.ctx.symbols[n]
            if what not in self.shared:
                name = self.ctx.fresh_name("run")
                self.shared[what] = (z3.Const(name, sym.term.sort()), z3.Int(name))
            bv, iv = self.shared[what]
            if bv.sort() != sym.term.sort():
                return None
            pairs_bv.append((sym.term, bv))
            pairs_int.append((z3.Int(n), iv))
            self._bound(n, iv)
        kept = []
        for c in pc:
            names = self._loop_symbols(c)
            if any(w in where and n not in own for n, w in names.items()):
                continue  # another run of the same loop (its exit): left out, which only weakens the path
            kept.append(self._renamed_atom(c, pairs_bv, pairs_int) if names.keys() & own.keys() else c)
        path = self.paths.setdefault(tuple(id(c) for c in kept), tuple(kept))  # one object per path
        return path, z3.substitute(off, *pairs_int)

    def _bound(self, name: str, shared: z3.ArithRef) -> None:
        """The shared counter's bound: the runs' own where they all agree, else none."""
        b = self.lia.bounds.get(name)
        mine = None if b is None else z3.substitute(b, (z3.Int(name), shared))
        key = str(shared)
        if key not in self.bounds:
            self.bounds[key] = mine
        elif self.bounds[key] is not None and (mine is None or not mine.eq(self.bounds[key])):
            self.bounds[key] = None
        if self.bounds[key] is None:
            self.lia.bounds.pop(key, None)
        else:
            self.lia.bounds[key] = self.bounds[key]

    def _renamed_atom(self, c, pairs_bv, pairs_int):
        new = z3.substitute(c, *pairs_bv)
        hit = self.atoms.get(new.get_id())
        if hit is not None:
            return hit
        known = self.lia.atoms.get(c.get_id())
        table = self.lia.atoms
        if known is None:
            known, table = self.lia.nonlinear.get(c.get_id()), self.lia.nonlinear
        if known is not None and new.get_id() not in table:
            self.lia.register(new, z3.substitute(known, *pairs_int))
        self.atoms[new.get_id()] = new
        return new

