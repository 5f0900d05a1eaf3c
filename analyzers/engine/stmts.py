"""Statement execution: paths fork at symbolic branches, infeasible ones are pruned, and paths
join again after each statement where they can."""
from __future__ import annotations

import z3

from ..kir import nodes as N
from ..kir import types as T
from .memory import ForkNeeded, PathEnd, TableFork, unsupported
from . import ints
from .state import State, decided, merge_all
from .values import IntV, Loc, RefV, const_int
from .writes import _strip


class StmtOps:
    def exec_block(self, stmts, states: list[State]) -> list[State]:
        for s in stmts:
            if not any(x.status == "ok" for x in states):
                break
            nxt: list[State] = []
            for x in states:
                if x.status != "ok":
                    nxt.append(x)
                else:
                    nxt.extend(self.run_stmt(s, x))
            states = merge_all(nxt)
            if len(states) > self.ctx.options.max_paths:
                raise PathEnd("stuck", f"more than {self.ctx.options.max_paths} paths that cannot be joined", s.span,
                              kind="path-explosion")
        return states

    def run_stmt(self, s: N.Stmt, st: State, refork: bool = True) -> list[State]:
        self.ctx.tick()
        start = st.fork() if refork and self.picks_objects(s) else None
        try:
            return self._stmt[type(s)](self, s, st)
        except ForkNeeded as fk:
            if start is None:
                return [self.end_path(st, fk)]
            # `t = inplace ? x : torch::empty_like(x)`: once per branch, where the branch is known.
            # A declaration keeps one object on both paths, so that they can join again.
            region = self.decl_region(s.var, start) if isinstance(s, N.Decl) else None
            out: list[State] = []
            for c in (fk.cond, z3.Not(fk.cond)):
                if self.ctx.feasible(start.pc, c):
                    self._decl_again = (s.var.id, region) if region is not None else None
                    try:
                        # A table's entries are forked one at a time, each fork fixing one more.
                        out.extend(self.run_stmt(s, start.fork(c), refork=isinstance(fk, TableFork)))
                    finally:
                        self._decl_again = None
            return out
        except PathEnd as pe:
            return [self.end_path(st, pe)]

    def end_path(self, st: State, pe: PathEnd) -> State:
        if pe.status == "stuck":
            self.ctx.stuck(pe.kind, pe.reason, _in_user_code(st, pe.span))
        elif pe.reason and pe.span is not None:
            self.ctx.aborted(pe.reason, pe.span)
        st.status = pe.status
        return st

    # ------------------------------------------------------------ statements

    def ex_block(self, s: N.Block, st: State) -> list[State]:
        return self.exec_block(s.stmts, [st])

    def ex_expr(self, s: N.ExprStmt, st: State) -> list[State]:
        if isinstance(s.expr, N.Call):
            self.call_value(s.expr, st)  # a discarded result: a returned reference is not read
        else:
            self.eval(s.expr, st)
        return [st]

    def picks_objects(self, s: N.Stmt) -> bool:
        """Whether the statement's own expressions (not its nested statements) hold a conditional
        of objects (tensors, classes, functions: ``mode ? mirrored : same``) that may need a fork.
        Memoised per instance."""
        memo = self.__dict__.setdefault("_picks", {})
        hit = memo.get(id(s))
        if hit is None:
            hit = memo[id(s)] = any((isinstance(x, N.Cond) and _object_type(T.strip_ref(x.ty)))
                                    or (isinstance(x, N.Call) and x.callee is not None and _table_entry(x.callee))
                                    for x in _exprs(s))
        return hit

    def ex_decl(self, s: N.Decl, st: State) -> list[State]:
        v = s.var
        again = getattr(self, "_decl_again", None)
        region = again[1] if again is not None and again[0] == v.id else self.decl_region(v, st)
        st.frame.vars[v.id] = region
        if v.storage in ("shared", "extern_shared", "static", "constant", "global") \
                and not (v.storage == "static" and v.const and s.init is not None and not st.content(region)):
            # Shared memory has no initializer; statics keep one value for all threads and calls.
            # A const static's first initialization is the value every call sees
            # (`static const std::string kv_cache_dtype = "fp8_e4m3"`).
            return [st]
        init = s.init
        loc = Loc(region, const_int(0, T.INT64), v.ty)
        if isinstance(v.ty, T.RefType):
            if init is None:
                raise PathEnd("stuck", f"reference {v.name} without initializer", s.span)
            target = self.lvalue(init, st)
            self._write_at(st.write_content(region), 0, v.ty, RefV(target))
            return [st]
        if init is None:
            if isinstance(v.ty, T.OpaqueType):
                self.construct_into(loc, N.Construct(v.ty.name, None, (), v.ty, span=s.span), st)
            return [st]
        if isinstance(init, N.Construct):
            self.construct_into(loc, init, st)
            return [st]
        value = self.coerce(self.eval(init, st), T.strip_ref(v.ty), s.span, st)
        self._store_tracked(st, region, loc.off, T.strip_ref(v.ty), value, s.span)
        return [st]

    def ex_if(self, s: N.If, st: State) -> list[State]:
        states = [st]
        if s.init is not None:
            states = self.exec_block((s.init,), states)
        out: list[State] = []
        for x in states:
            if x.status != "ok":
                out.append(x)
                continue
            c = self.truth(self.eval(s.cond, x), s.span)
            for branch, cond in self.branches(x, c, s.cond.span):
                if decided(c) is None:
                    self.refine(s.cond, branch, cond)
                body = s.then if branch else s.els
                if body is None:
                    out.append(cond)
                else:
                    out.extend(self.run_stmt(body, cond))
        return merge_all(out)

    def refine(self, cond: N.Expr, holds: bool, st: State) -> None:
        """On the side of a branch where ``var == constant`` holds (``TORCH_CHECK(group_size == 128)``
        continues only so), the variable holds the constant: later divisions and remainders by it
        are by a constant, linear for the integers instead of a divider for the solver."""
        for side, other in _equalities(cond, holds):
            var = _strip(side)
            k = N.int_literal(other, _strip)
            if not isinstance(var, N.Var) or k is None or var.decl.storage not in ("local", "param"):
                continue
            vty, cty = var.decl.ty, side.ty
            if not (isinstance(vty, T.IntType) and isinstance(cty, T.IntType)) or not vty.min <= k <= vty.max:
                continue
            # The conversion to the comparison's type must keep every value apart (a widening).
            if (vty.bits, vty.signed) != (cty.bits, cty.signed) and not (vty.bits < cty.bits and (cty.signed or not vty.signed)):
                continue
            try:
                loc = self.var_loc(var.decl, st, cond.span)
                old = self.load(st, loc, cond.span)
            except PathEnd:
                continue
            if isinstance(old, IntV) and old.concrete() is None and old.math is None and not old.sites:
                self.store(st, loc, const_int(k, vty), cond.span)

    def branches(self, st: State, c: z3.BoolRef, span: N.Span | None = None) -> list[tuple[bool, State]]:
        """The feasible sides of a branch on ``c``, each in its own state."""
        d = decided(c)
        if d is not None:
            return [(d, st)]
        then_ok = self.ctx.feasible(st.pc, c)
        else_ok = self.ctx.feasible(st.pc, z3.Not(c))
        if then_ok and else_ok:
            sides = [(True, st.fork(c)), (False, st.fork(z3.Not(c)))]
            if st.epoch is not None:
                self.note_decision(sides, span)
            return sides
        if then_ok:
            st.assume(c)
            return [(True, st)]
        if else_ok:
            st.assume(z3.Not(c))
            return [(False, st)]
        st.status = "abort"  # the path was already infeasible
        return []

    def ex_return(self, s: N.Return, st: State) -> list[State]:
        if s.value is not None:
            fn = st.frame.fn
            if fn is not None and isinstance(fn.ret, T.RefType):
                st.retval = RefV(self.lvalue(s.value, st))
            else:
                v = self.eval(s.value, st)
                st.retval = self.coerce(v, T.strip_ref(fn.ret), s.span, st) if fn is not None else v
        st.status = "return"
        return [st]

    def ex_break(self, s: N.Break, st: State) -> list[State]:
        st.status = "break"
        return [st]

    def ex_continue(self, s: N.Continue, st: State) -> list[State]:
        st.status = "continue"
        return [st]

    def ex_unsupported(self, s: N.UnsupportedStmt, st: State) -> list[State]:
        raise unsupported(s.what, s.span)

    def ex_switch(self, s: N.Switch, st: State) -> list[State]:
        v = self.eval(s.cond, st)
        if not isinstance(v, IntV):
            raise PathEnd("stuck", "switch on a value that is not an integer", s.span)
        entries: list[tuple[int, State]] = []
        rest = st
        default_at = None
        taken = []
        for value, pos in s.labels:
            if value is None:
                default_at = pos
                continue
            c = ints.compare("==", v, const_int(value, v.ty)).term
            taken.append(c)
            d = decided(c)
            if d is False:
                continue
            if d is True:
                entries.append((pos, rest))
                rest = None
                break
            if self.ctx.feasible(rest.pc, c):
                entries.append((pos, rest.fork(c)))
            rest.assume(z3.Not(c))
            if not self.ctx.feasible(rest.pc):
                rest = None
                break
        if rest is not None:
            if default_at is not None:
                entries.append((default_at, rest))
            else:
                entries.append((len(s.stmts), rest))
        out: list[State] = []
        for pos, x in entries:
            for y in self.exec_block(s.stmts[pos:], [x]):
                if y.status == "break":
                    y.status = "ok"
                out.append(y)
        return merge_all(out)


StmtOps._stmt = {
    N.Block: StmtOps.ex_block, N.ExprStmt: StmtOps.ex_expr, N.Decl: StmtOps.ex_decl, N.If: StmtOps.ex_if,
    N.Return: StmtOps.ex_return, N.Break: StmtOps.ex_break, N.Continue: StmtOps.ex_continue,
    N.UnsupportedStmt: StmtOps.ex_unsupported, N.Switch: StmtOps.ex_switch,
}


def _table_entry(callee: N.Expr) -> bool:
    """A callee read from a table (``rules[mode](i, n)``): an entry the index picks."""
    while isinstance(callee, N.Cast):
        callee = callee.operand
    return isinstance(callee, N.Index)


def _exprs(node):
    stack = [v for v in N.children(node) if isinstance(v, N.Expr)]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(v for v in N.children(x) if isinstance(v, N.Expr))


def _equalities(e: N.Expr, holds: bool):
    """(side, other side) of the equalities that hold where ``e`` evaluates to ``holds``."""
    e = _strip(e)
    if isinstance(e, N.Unary) and e.op == "!":
        yield from _equalities(e.operand, not holds)
    elif isinstance(e, N.Binary) and e.op == ("&&" if holds else "||"):
        yield from _equalities(e.lhs, holds)
        yield from _equalities(e.rhs, holds)
    elif isinstance(e, N.Binary) and e.op == ("==" if holds else "!="):
        yield e.lhs, e.rhs
        yield e.rhs, e.lhs


def _object_type(ty: T.Type) -> bool:
    """A type whose values no one merged value stands for: tensors, classes, and functions (a
    pointer to one is the function it names, called as that function on its path)."""
    if isinstance(ty, T.PtrType):
        return isinstance(ty.pointee, T.FuncType)
    return isinstance(ty, (T.OpaqueType, T.StructType, T.FuncType))


def _in_user_code(st: State, span: N.Span | None) -> N.Span | None:
    """Where a path stopped inside a shim's body (`unique_ptr::get` reading an untracked static):
    the innermost call in the user's code that led there, which is the line a maintainer reads."""
    if span is None or not span.file.startswith(N.SHIM_PREFIX):
        return span
    for fid in reversed(st.stack):
        frame = st.frames.get(fid)
        call = frame.call_span if frame is not None else None
        if call is not None and not call.file.startswith(N.SHIM_PREFIX):
            return call
    return span
