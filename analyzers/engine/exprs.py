"""Expression evaluation: rvalues, lvalues (locations), casts, guarded sub-evaluation."""
from __future__ import annotations

import dataclasses

import z3

from ..kir import nodes as N
from ..kir import types as T
from . import ints, replay
from .memory import UNCHECKED_SIZE, ForkNeeded, PathEnd, index_to_int64, int_size, unsupported
from .state import State, absorb, decided, fresh_value, merge_values
from .values import (BoolV, ClosureV, FloatV, exact_float, FuncV, IntV, Loc, MultiLoc, MultiPtrV, OpaqueV, PtrV, RefV,
                     StructV, Val, bool_of, const_int)

BUILTIN_VARS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")


class ExprOps:
    # ------------------------------------------------------------ entry points

    def eval(self, e: N.Expr, st: State) -> Val:
        handler = self._rv.get(type(e))
        if handler is None:
            raise PathEnd("stuck", f"expression {type(e).__name__}", e.span)
        return handler(self, e, st)

    def truth(self, v: Val, span: N.Span) -> z3.BoolRef:
        if isinstance(v, FloatV):
            return z3.Bool(self.ctx.fresh_name("float_condition"))
        if isinstance(v, MultiPtrV):
            return z3.BoolVal(True) if all(p.region.kind != "null" for _, p in v.alts) else z3.Or(
                *[c for c, p in v.alts if p.region.kind != "null"] or [z3.BoolVal(False)])
        if isinstance(v, (OpaqueV, FuncV, ClosureV)):
            return z3.BoolVal(True)
        try:
            term = ints.truth_of(v) if isinstance(v, IntV) else bool_of(v)
        except TypeError:
            raise PathEnd("stuck", f"truth value of {type(v).__name__}", span) from None
        return replay.decide(term, self.ctx.pin_terms)

    def guarded(self, st: State, cond: z3.BoolRef, fn):
        """Evaluate ``fn(sub)`` on a copy of ``st`` where ``cond`` holds, and fold the effects back
        under ``cond``. Returns None when every path of the sub-evaluation ended."""
        sub = st.fork(cond)
        try:
            value = fn(sub)
        except PathEnd as pe:
            if pe.status == "stuck":
                self.ctx.stuck(pe.kind, pe.reason, pe.span)
            st.assume(z3.Not(cond))
            return None
        absorb(st, sub, cond)
        return value

    # ------------------------------------------------------------ lvalues

    def lvalue(self, e: N.Expr, st: State):
        if isinstance(e, N.Var):
            return self.var_loc(e.decl, st, e.span)
        if isinstance(e, N.Global):
            return self.global_loc(e, st)
        if isinstance(e, N.Member):
            if e.arrow:
                base = self.deref(self.eval(e.base, st), _pointee(e.base.ty), e.span)
            else:
                base = self.lvalue(e.base, st)
            return self.field_loc(base, e.field, e.span, e.ty)
        if isinstance(e, N.Index):
            arr = e.base
            if isinstance(arr, N.Cast) and arr.kind == "decay" and isinstance(T.strip_ref(arr.operand.ty), T.ArrayType):
                arr = arr.operand  # the array itself: its row's extent is known
            bt = T.strip_ref(arr.ty)
            idx = self.eval(e.index, st)
            if not isinstance(idx, IntV):
                raise PathEnd("stuck", "index that is not an integer", e.span)
            if isinstance(bt, T.ArrayType):
                base = self.lvalue(arr, st)
                ptr = _loc_ptr(base, bt.elem)
                loc = self.deref(self.ptr_add(ptr, idx, e.span, self.stack_spans(st)), e.ty, e.span)
                if bt.count and isinstance(loc, Loc) and isinstance(base, Loc) and isinstance(arr, (N.Index, N.Member)):
                    # A row of a 2-D array, an array member of a struct: an access is checked
                    # against the sub-array too, not only against the whole object.
                    loc = Loc(loc.region, loc.off, loc.ty, (base.off, bt.count, max(bt.elem.size, 1)))
                return loc
            ptr = self.eval(e.base, st)
            return self.deref(self.ptr_add(ptr, idx, e.span, self.stack_spans(st)), e.ty, e.span)
        if isinstance(e, N.Deref):
            return self.deref(self.eval(e.operand, st), e.ty, e.span)
        if isinstance(e, N.Cast) and e.kind in ("implicit", "c", "static", "reinterpret", "const", "base", "functional") \
                and not isinstance(T.strip_ref(e.ty), (T.IntType, T.FloatType, T.BoolType, T.PtrType)):
            loc = self.lvalue(e.operand, st)
            return _retype(loc, T.strip_ref(e.ty))
        if isinstance(e, N.Call):
            v = self.call_value(e, st)
            if isinstance(v, RefV):
                return v.loc
            return self.materialize(v, e.ty, st, e.span)
        if isinstance(e, N.Assign):
            self.eval(e, st)
            return self.lvalue(e.lhs, st)
        if isinstance(e, N.IncDec) and e.prefix:
            self.eval(e, st)
            return self.lvalue(e.operand, st)
        if isinstance(e, N.Construct):
            ty = T.strip_ref(e.ty)
            region = self.local_region(ty, "temporary", e.span)
            loc = Loc(region, const_int(0, T.INT64), ty)
            self.construct_into(loc, e, st)
            return loc
        if isinstance(e, N.This):
            raise PathEnd("stuck", "this as an lvalue", e.span)
        v = self.eval(e, st)
        if isinstance(v, RefV):
            return v.loc
        return self.materialize(v, e.ty, st, e.span)

    def materialize(self, v: Val, ty: T.Type, st: State, span: N.Span) -> Loc:
        ty = T.strip_ref(ty)
        region = self.local_region(ty, "temporary", span)
        loc = Loc(region, const_int(0, T.INT64), ty)
        self._store_tracked(st, region, loc.off, ty, v, span)
        return loc

    def var_loc(self, decl: N.VarDecl, st: State, span: N.Span):
        region = st.lookup(decl.id)
        if region is None:
            region = self.static_region(decl)
            if region is None:
                raise PathEnd("stuck", f"variable {decl.name} used outside its scope", span)
        if isinstance(decl.ty, T.RefType):
            ref = self._read_at(st.content(region), 0, decl.ty, region, span)
            if not isinstance(ref, RefV):
                raise PathEnd("stuck", f"reference {decl.name} bound to nothing", span)
            return ref.loc
        return Loc(region, const_int(0, T.INT64), decl.ty)

    # ------------------------------------------------------------ rvalues

    def ev_int(self, e: N.IntLit, st: State) -> Val:
        if isinstance(e.ty, T.BoolType):
            return BoolV(z3.BoolVal(e.value != 0))
        if isinstance(e.ty, T.IntType):
            return const_int(e.value, e.ty)
        if isinstance(e.ty, T.PtrType) and e.value == 0:
            return self.null_ptr(e.ty, e.span)
        return const_int(e.value, T.INT64)

    def null_ptr(self, ty: T.Type, span: N.Span | None = None, what: str = "nullptr") -> PtrV:
        """A null pointer. Each place that makes one (a ``nullptr``, an absent optional) has its
        own null object, so that a null dereference can say where the pointer came from."""
        pointee = T.strip_ref(ty).pointee if isinstance(T.strip_ref(ty), T.PtrType) else T.VOID
        region = self.null_region
        if span is not None and span.file:
            key = ("null", span.file, span.line, span.col, what)
            region = self._statics.get(key)
            if region is None:
                region = self._statics[key] = self.new_region("null", what, 0, span)
        return PtrV(region, const_int(0, T.INT64), pointee)

    def ev_load(self, e: N.Expr, st: State) -> Val:
        if isinstance(e, N.Member) and isinstance(e.base, N.Global) and e.base.name in BUILTIN_VARS:
            return self.builtin_var(e.base.name, st, e.span).fields[e.field]
        if isinstance(e, N.Global) and e.name in BUILTIN_VARS:
            return self.builtin_var(e.name, st, e.span)
        if isinstance(e, N.Global) and isinstance(e.ty, T.FuncType):
            return FuncV(e.name if e.name in self.program.functions else None, e.name)
        if isinstance(e, N.Deref) and isinstance(T.strip_ref(e.ty), T.FuncType):
            f = self.eval(e.operand, st)
            if isinstance(f, FuncV):
                return f  # `(*f)(x)`: a function pointer dereferenced is the function
        loc = self.lvalue(e, st)
        ty = T.strip_ref(loc.ty)
        if isinstance(ty, T.ArrayType):
            return _loc_ptr(loc, ty.elem)  # an array used as a value decays (clang marks most of these)
        return self.load(st, loc, e.span)

    def ev_float(self, e: N.Expr, st: State) -> Val:
        return FloatV(e.ty, ("lit", e.span.text) if e.span.text else None, exact_float(_literal(e.span.text), e.ty))

    def ev_null(self, e: N.NullLit, st: State) -> Val:
        return self.null_ptr(e.ty if isinstance(T.strip_ref(e.ty), T.PtrType) else T.PtrType(T.VOID), e.span)

    def ev_str(self, e: N.StrLit, st: State) -> Val:
        return OpaqueV("string", e.ty, e.text)

    def ev_this(self, e: N.This, st: State) -> Val:
        this = st.frame.this
        if this is None:
            raise PathEnd("stuck", "this outside a member function", e.span)
        return this

    def ev_addr(self, e: N.AddrOf, st: State) -> Val:
        if isinstance(e.operand, N.Global) and isinstance(e.operand.ty, T.FuncType):
            return self.ev_load(e.operand, st)
        loc = self.lvalue(e.operand, st)
        if isinstance(loc, MultiLoc):
            return MultiPtrV(tuple((c, PtrV(sub.region, sub.off, sub.ty)) for c, sub in loc.alts), loc.ty)
        return PtrV(loc.region, loc.off, loc.ty)

    def ev_unary(self, e: N.Unary, st: State) -> Val:
        v = self.eval(e.operand, st)
        if e.op == "!":
            return BoolV(z3.Not(self.truth(v, e.span)))
        if isinstance(v, FloatV):
            return FloatV(e.ty)
        if isinstance(v, BoolV):
            v = ints.from_bool(v, T.INT32)
        if not isinstance(v, IntV):
            raise PathEnd("stuck", f"unary {e.op} on {type(v).__name__}", e.span)
        if e.op == "-":
            return ints.negate(v, e.span, self.stack_spans(st))
        if e.op == "~":
            return ints.bitnot(v)
        return v

    def ev_incdec(self, e: N.IncDec, st: State) -> Val:
        loc = self.lvalue(e.operand, st)
        old = self.load(st, loc, e.span)
        if isinstance(old, (PtrV, MultiPtrV)):
            new = self.ptr_add(old, const_int(1, T.INT64), e.span, self.stack_spans(st), subtract=e.op == "--")
        elif isinstance(old, IntV):
            common = ints.promote(old.ty)
            one = const_int(1, common)
            res = ints.arith("+" if e.op == "++" else "-", ints.convert(old, common, e.span), one, common, e.span,
                             self.stack_spans(st))
            new = ints.convert(res, old.ty, e.span, self.stack_spans(st))
        elif isinstance(old, FloatV):
            new = old
        else:
            raise PathEnd("stuck", f"{e.op} on {type(old).__name__}", e.span)
        self.store(st, loc, new, e.span)
        return new if e.prefix else old

    def ev_binary(self, e: N.Binary, st: State) -> Val:
        op = e.op
        if op in ("&&", "||"):
            a = self.truth(self.eval(e.lhs, st), e.span)
            d = decided(a)
            if (op == "&&" and d is False) or (op == "||" and d is True):
                return BoolV(z3.BoolVal(d))
            if d is not None:
                return BoolV(self.truth(self.eval(e.rhs, st), e.span))
            guard = a if op == "&&" else z3.Not(a)
            b = self.guarded(st, guard, lambda sub: self.truth(self.eval(e.rhs, sub), e.span))
            if b is None:
                return BoolV(a if op == "||" else z3.BoolVal(False))
            return BoolV(z3.And(a, b) if op == "&&" else z3.Or(a, b))
        if op == ",":
            self.eval(e.lhs, st)
            return self.eval(e.rhs, st)
        a = self.eval(e.lhs, st)
        b = self.eval(e.rhs, st)
        return self.binop(op, a, b, e.ty, e.span, st)

    def nonzero_divisor(self, b: IntV, st: State, span: N.Span) -> IntV:
        """An integer division by zero traps (host) or is undefined (device): paths go on with a
        divisor that is not zero, and end where it can only be zero. Returns the divisor as the
        path goes on with it (a non-negative one is then positive)."""
        if b.lo > 0 or b.hi < 0:
            return b
        if b.concrete() is None and not self.ctx.feasible(st.pc + (ints.compare("<", b, const_int(1, b.ty)).term,)):
            # Positive on this path (a size the launcher checked, plus one): said so, the integer
            # tier can then divide by it (lia.quotient).
            return dataclasses.replace(b, lo=1)
        nz = ints.compare("!=", b, const_int(0, b.ty)).term
        if z3.is_false(nz) or not self.ctx.feasible(st.pc + (nz,)):
            raise PathEnd("abort", "an integer division by zero", span)
        st.assume(nz)
        return dataclasses.replace(b, lo=1) if b.lo == 0 else b

    def binop(self, op: str, a: Val, b: Val, ty: T.Type, span: N.Span, st: State) -> Val:
        stack = self.stack_spans(st)
        if isinstance(a, BoolV) and op not in ("==", "!="):
            a = ints.from_bool(a, T.INT32)
        if isinstance(b, BoolV) and op not in ("==", "!="):
            b = ints.from_bool(b, T.INT32)
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return self.compare(op, a, b, span)
        if isinstance(a, (PtrV, MultiPtrV)) and isinstance(b, IntV) and op in ("+", "-"):
            return self.ptr_add(a, b, span, stack, subtract=op == "-")
        if isinstance(b, (PtrV, MultiPtrV)) and isinstance(a, IntV) and op == "+":
            return self.ptr_add(b, a, span, stack)
        if isinstance(a, PtrV) and isinstance(b, PtrV) and op == "-":
            if a.region is not b.region:
                raise PathEnd("stuck", "difference of pointers into different objects", span)
            diff = ints.arith("-", a.off, b.off, T.INT64, span, stack)
            size = max(T.strip_ref(a.pointee).size, 1)
            return ints.arith("/", diff, int_size(size), T.INT64, span, stack) if size > 1 else diff
        if isinstance(a, FloatV) or isinstance(b, FloatV) or isinstance(ty, T.FloatType):
            return FloatV(ty, exact=_float_arith(op, _exact(a), _exact(b), ty, host=st.thread is None))
        if isinstance(a, IntV) and isinstance(b, IntV) and isinstance(ty, T.IntType):
            if op not in ("<<", ">>") and (a.ty.bits != ty.bits or a.ty.signed != ty.signed):
                a = ints.convert(a, ty, span, stack)
            if op not in ("<<", ">>") and (b.ty.bits != ty.bits or b.ty.signed != ty.signed):
                b = ints.convert(b, ty, span, stack)
            if op in ("/", "%"):
                b = self.nonzero_divisor(b, st, span)
            return ints.arith(op, a, b, ty, span, stack)
        if isinstance(a, IntV) and isinstance(b, IntV) and isinstance(ty, T.BoolType):
            return BoolV(ints.arith(op, a, b, a.ty, span, stack).bv != 0)
        if isinstance(a, BoolV) and isinstance(b, BoolV) and op in ("&", "|", "^"):
            f = {"&": z3.And, "|": z3.Or, "^": z3.Xor}[op]
            return BoolV(f(a.term, b.term))
        raise PathEnd("stuck", f"operator {op} on {type(a).__name__} and {type(b).__name__}", span)

    def compare(self, op: str, a: Val, b: Val, span: N.Span) -> Val:
        if isinstance(a, IntV) and isinstance(b, IntV):
            if a.ty.bits != b.ty.bits:
                common = ints.usual_arithmetic(a.ty, b.ty)
                a, b = ints.convert(a, common, span), ints.convert(b, common, span)
            return ints.compare(op, a, b)
        if isinstance(a, BoolV) and isinstance(b, BoolV) and op in ("==", "!="):
            return BoolV(a.term == b.term if op == "==" else a.term != b.term)
        if isinstance(a, BoolV):
            a = ints.from_bool(a, T.INT32)
        if isinstance(b, BoolV):
            b = ints.from_bool(b, T.INT32)
        if isinstance(a, IntV) and isinstance(b, IntV):
            return self.compare(op, a, b, span)
        if isinstance(a, FloatV) or isinstance(b, FloatV):
            # An exactly known integral float against an integer (or another one): rounding the
            # integer to the float type is monotonic and keeps that value, so the comparison is the
            # integers' (`i < 64 * sqrt(16.0)`).
            ea, eb = (x.exact if isinstance(x, FloatV) else None for x in (a, b))
            if ea is not None and eb is not None:
                a, b = const_int(int(ea), T.INT64), const_int(int(eb), T.INT64)
            elif ea is not None or eb is not None:
                # The other side an integer, or a float converted from one (`i < 256.0`).
                other = b if ea is not None else a
                other = other.of_int if isinstance(other, FloatV) else other
                if isinstance(other, IntV):
                    c = const_int(int(ea if ea is not None else eb), T.INT64)
                    a, b = (c, other) if ea is not None else (other, c)
            if isinstance(a, IntV) and isinstance(b, IntV):
                return self.compare(op, a, b, span)
        if isinstance(a, PtrV) and isinstance(b, PtrV):
            if _same_object(a, b):
                return ints.compare(op, a.off, b.off)
            if op in ("==", "!="):
                return BoolV(z3.BoolVal(op == "!="))
        if isinstance(a, (PtrV, MultiPtrV)) and isinstance(b, (PtrV, MultiPtrV)) and op in ("==", "!="):
            # A pointer that may name several objects (``flag ? p : nullptr``): equal exactly when
            # both name the same object at the same offset, under the alternatives' conditions.
            eq = z3.Or(*[z3.And(ca, cb, ints.compare("==", pa.off, pb.off).term if _same_object(pa, pb)
                                else z3.BoolVal(False))
                         for ca, pa in _alternatives(a) for cb, pb in _alternatives(b)])
            return BoolV(eq if op == "==" else z3.Not(eq))
        return BoolV(z3.Bool(self.ctx.fresh_name("comparison")))

    def ev_assign(self, e: N.Assign, st: State) -> Val:
        if e.op == "=":
            v = self.eval(e.rhs, st)
            loc = self.lvalue(e.lhs, st)
            v = self.coerce(v, T.strip_ref(loc.ty), e.span, st)
            self.store(st, loc, v, e.span)
            return v
        loc = self.lvalue(e.lhs, st)
        old = self.load(st, loc, e.span)
        rhs = self.eval(e.rhs, st)
        op = e.op[:-1]
        stack = self.stack_spans(st)
        if isinstance(old, (PtrV, MultiPtrV)) and isinstance(rhs, IntV):
            new = self.ptr_add(old, rhs, e.span, stack, subtract=op == "-")
        elif isinstance(old, IntV) and isinstance(rhs, (IntV, BoolV)):
            if isinstance(rhs, BoolV):
                rhs = ints.from_bool(rhs, T.INT32)
            common = ints.promote(old.ty) if op in ("<<", ">>") else ints.usual_arithmetic(old.ty, rhs.ty)
            a = ints.convert(old, common, e.span, stack)
            b = rhs if op in ("<<", ">>") else ints.convert(rhs, common, e.span, stack)
            if op in ("/", "%"):
                b = self.nonzero_divisor(b, st, e.span)
            new = ints.convert(ints.arith(op, a, b, common, e.span, stack), old.ty, e.span, stack)
        elif isinstance(old, FloatV) or isinstance(rhs, FloatV):
            new = FloatV(T.strip_ref(loc.ty))
        elif isinstance(old, BoolV):
            new = BoolV(z3.Bool(self.ctx.fresh_name("bool")))
        else:
            raise PathEnd("stuck", f"compound assignment {e.op} on {type(old).__name__}", e.span)
        self.store(st, loc, new, e.span)
        return new

    def ev_cond(self, e: N.Cond, st: State) -> Val:
        c = self.truth(self.eval(e.cond, st), e.span)
        d = decided(c)
        if d is True:
            return self.eval(e.then, st)
        if d is False:
            return self.eval(e.els, st)
        a = self.guarded(st, c, lambda sub: self.eval(e.then, sub))
        b = self.guarded(st, z3.Not(c), lambda sub: self.eval(e.els, sub))
        if a is None and b is None:
            raise PathEnd("abort", "both branches of a conditional end the path", e.span)
        if a is None or b is None:
            return a if b is None else b
        m = merge_values(c, a, b)
        if m is None:
            # Objects no one value stands for: the branch the path takes, where it is known, or a
            # fork of the whole statement.
            if not self.ctx.feasible(st.pc, z3.Not(c)):
                return a
            if not self.ctx.feasible(st.pc, c):
                return b
            raise ForkNeeded(c, e.span)
        return m

    def ev_cast(self, e: N.Cast, st: State) -> Val:
        to = T.strip_ref(e.ty)
        if e.kind == "decay":
            if isinstance(e.operand, N.StrLit):  # a literal's characters are never indexed by host code we follow
                return OpaqueV("string", e.ty, e.operand.text)
            loc = self.lvalue(e.operand, st)
            elem = T.strip_ref(e.operand.ty)
            elem = elem.elem if isinstance(elem, T.ArrayType) else to.pointee if isinstance(to, T.PtrType) else T.VOID
            if isinstance(loc, MultiLoc):
                return MultiPtrV(tuple((c, PtrV(s.region, s.off, elem)) for c, s in loc.alts), elem)
            return PtrV(loc.region, loc.off, elem)
        if isinstance(to, T.VoidType):
            self.eval(e.operand, st)
            return OpaqueV("void")
        outer, self.cast_pointee = self.cast_pointee, _element_cast(e, to)
        try:
            v = self.eval(e.operand, st)
        finally:
            self.cast_pointee = outer
        return self.convert_value(v, to, e.span, st, explicit=e.kind != "implicit")

    def convert_value(self, v: Val, to: T.Type, span: N.Span, st: State, explicit: bool = False) -> Val:
        stack = self.stack_spans(st)
        if isinstance(to, T.IntType):
            if isinstance(v, IntV):
                return ints.convert(v, to, span, stack)
            if isinstance(v, BoolV):
                return ints.from_bool(v, to)
            if isinstance(v, FloatV) and v.exact is not None and to.min <= int(v.exact) <= to.max:
                return const_int(int(v.exact), to)  # C truncates toward zero; the value is an integer
            if isinstance(v, FloatV):
                x = fresh_value(to, "float_to_int", self.ctx.counter)
                what = f"float converted at {span.file}:{span.line}"
                self.ctx.symbol(what, x.bv, "load", to.signed, ("float", what, False))
                return x
            if isinstance(v, PtrV):
                return self.pointer_address(v, to, st, span)
            raise PathEnd("stuck", f"conversion of {type(v).__name__} to {to.name}", span)
        if isinstance(to, T.BoolType):
            if isinstance(v, FloatV):
                return BoolV(z3.Bool(self.ctx.fresh_name("float_truth")))
            return BoolV(self.truth(v, span))
        if isinstance(to, T.FloatType):
            # The same value converted is the same value (what a benign race compares).
            source = v.source if isinstance(v, FloatV) else ("int", v.bv) if isinstance(v, IntV) else None
            exact = v.exact if isinstance(v, FloatV) else v.concrete() if isinstance(v, IntV) else None
            return FloatV(to, source, exact_float(exact, to), v if isinstance(v, IntV) else
                          v.of_int if isinstance(v, FloatV) else None)
        if isinstance(to, T.PtrType):
            if isinstance(v, PtrV):
                return PtrV(v.region, v.off, to.pointee)
            if isinstance(v, MultiPtrV):
                return MultiPtrV(tuple((c, PtrV(p.region, p.off, to.pointee)) for c, p in v.alts), to.pointee)
            if isinstance(v, IntV) and v.concrete() == 0:
                return self.null_ptr(to, span)
            if isinstance(v, (FuncV, OpaqueV)):
                return v
            region = self.region_of_address(v.bv) if isinstance(v, IntV) and v.ty.bits == 64 else None
            if region is not None:
                # An address computed from a pointer and turned back (rounded up to an alignment):
                # the same object, at the integer's distance from its base.
                base = self.region_base(region, st)
                if _moves_with(v.bv, base, region.align):
                    off = z3.simplify(z3.substitute(v.bv, (base, z3.BitVecVal(0, 64))))
                else:
                    off = v.bv - base
                iv = v.iv - self.region_base_int(region) if v.iv is not None else None
                return PtrV(region, IntV(T.INT64, off, T.INT64.min, T.INT64.max, iv=iv), to.pointee)
            if isinstance(v, IntV):
                return self.pointer_from_integer(to, span)
            raise PathEnd("stuck", "an integer converted to a pointer", span)
        return v

    def pointer_from_integer(self, to: T.PtrType, span: N.Span) -> PtrV:
        """A pointer made from an integer the engine cannot trace to an object (peer GPUs' buffers
        an IPC handle hands over, addresses stored in a tensor), or read from such memory: memory
        nobody sized, at an address the engine does not know, taken as aligned for the type the
        cast names (the cast's own contract). Accesses through it are not checked, which the
        instance lists as an assumption; what it reads is any value. One object per place in the
        source."""
        key = ("int-pointer", span.file, span.line, span.col)
        region = self._statics.get(key)
        if region is None:
            align = max(getattr(to.pointee, "align", 1) or 1, 1)
            region = self._statics[key] = self.new_region(
                "global", f"memory at an address made from an integer (`{span.text}`)", UNCHECKED_SIZE, span,
                align=align, note="from-integer")
            self.ctx.foreign_pointers.append(f"`{span.text}` at {span.file}:{span.line}")
            self.ctx.note(f"`{span.text}` at {span.file}:{span.line} makes a pointer from an integer (or reads one "
                          "from memory nobody sized): accesses through it are not checked (the size of what it "
                          "points to is not known)")
        return PtrV(region, const_int(0, T.INT64), to.pointee)

    def pointer_address(self, p: PtrV, to: T.IntType, st: State, span: N.Span) -> IntV:
        """The integer value of a pointer: the object's base address (aligned as its allocator
        aligns it) plus the offset. Used for alignment tests such as ``(uintptr_t)p % 16``."""
        if p.region.kind == "null":
            base_bv = z3.BitVecVal(0, 64)
        else:
            base_bv = self.region_base(p.region, st)
        addr = base_bv + p.off.bv
        base_iv = self.region_base_int(p.region) if p.region.kind != "null" else 0
        v = IntV(T.UINT64, addr, 0, T.UINT64.max, iv=base_iv + ints.I(p.off))
        return ints.convert(v, to, span) if to.bits != 64 or to.signed else v

    def coerce(self, v: Val, ty: T.Type, span: N.Span, st: State) -> Val:
        if isinstance(ty, T.IntType) and isinstance(v, IntV) and (v.ty.bits != ty.bits or v.ty.signed != ty.signed):
            return ints.convert(v, ty, span, self.stack_spans(st))
        if isinstance(ty, T.IntType) and isinstance(v, BoolV):
            return ints.from_bool(v, ty)
        if isinstance(ty, T.BoolType) and isinstance(v, IntV):
            return BoolV(v.bv != 0)
        return v

    def ev_initlist(self, e: N.InitList, st: State) -> Val:
        ty = T.strip_ref(e.ty)
        vals = [self.eval(x, st) for x in e.elems]
        if isinstance(ty, T.StructType):
            fields = {}
            for f, v in zip(ty.fields, vals):
                fields[f.name] = self.coerce(v, f.type, e.span, st)
            for f in ty.fields[len(vals):]:
                z = _zero(f.type)
                if z is not None:
                    fields[f.name] = z
            return StructV(ty, fields)
        if isinstance(ty, T.ArrayType):
            fields = {i: self.coerce(v, ty.elem, e.span, st) for i, v in enumerate(vals)}
            for i in range(len(vals), ty.count or 0):
                z = _zero(ty.elem)
                if z is not None:
                    fields[i] = z
            return StructV(ty, fields)
        if len(vals) == 1:
            return self.coerce(vals[0], ty, e.span, st)
        if not vals and _zero(ty) is not None:
            return _zero(ty)
        if not vals and isinstance(ty, T.PtrType):
            return self.null_ptr(ty)
        raise PathEnd("stuck", f"initializer list for {ty.name}", e.span)

    def ev_lambda(self, e: N.Lambda, st: State) -> Val:
        st.frame.captured = True
        return ClosureV(e.key, st.stack[-1])

    def ev_asm(self, e: N.Asm, st: State) -> Val:
        for x in e.inputs:
            self.eval(x, st)
        for out in e.outputs:
            loc = self.lvalue(out, st)
            v = fresh_value(T.strip_ref(loc.ty), "asm_output", self.ctx.counter)
            if v is not None:
                if isinstance(v, IntV):
                    what = f"inline assembly at {e.span.file}:{e.span.line}"
                    self.ctx.symbol(what, v.bv, "load", v.ty.signed, ("asm", what, False))
                self.store(st, loc, v, e.span)
        self.ctx.note(f"inline assembly at {e.span.file}:{e.span.line}: its outputs are taken as unconstrained values")
        return OpaqueV("void")

    def ev_unsupported(self, e: N.Unsupported, st: State) -> Val:
        raise unsupported(e.what, e.span)


ExprOps._rv = {
    N.IntLit: ExprOps.ev_int, N.FloatLit: ExprOps.ev_float, N.NullLit: ExprOps.ev_null, N.StrLit: ExprOps.ev_str,
    N.Var: ExprOps.ev_load, N.Global: ExprOps.ev_load, N.Member: ExprOps.ev_load, N.Index: ExprOps.ev_load,
    N.Deref: ExprOps.ev_load, N.This: ExprOps.ev_this, N.AddrOf: ExprOps.ev_addr, N.Unary: ExprOps.ev_unary,
    N.IncDec: ExprOps.ev_incdec, N.Binary: ExprOps.ev_binary, N.Assign: ExprOps.ev_assign, N.Cond: ExprOps.ev_cond,
    N.Cast: ExprOps.ev_cast, N.InitList: ExprOps.ev_initlist, N.Lambda: ExprOps.ev_lambda, N.Asm: ExprOps.ev_asm,
    N.Unsupported: ExprOps.ev_unsupported,
}


def _same_object(a: PtrV, b: PtrV) -> bool:
    """Two pointers into the same object (every null pointer names the same null object)."""
    return a.region is b.region or (a.region.kind == "null" and b.region.kind == "null")


def _alternatives(p) -> tuple:
    return p.alts if isinstance(p, MultiPtrV) else ((z3.BoolVal(True), p),)


def _pointee(t: T.Type) -> T.Type:
    t = T.strip_ref(t)
    return t.pointee if isinstance(t, T.PtrType) else T.VOID


def _loc_ptr(loc, elem: T.Type):
    if isinstance(loc, MultiLoc):
        return MultiPtrV(tuple((c, PtrV(s.region, s.off, elem)) for c, s in loc.alts), elem)
    return PtrV(loc.region, loc.off, elem)


def _retype(loc, ty: T.Type):
    if isinstance(loc, MultiLoc):
        return MultiLoc(tuple((c, Loc(s.region, s.off, ty)) for c, s in loc.alts), ty)
    return Loc(loc.region, loc.off, ty)


def _zero(ty: T.Type) -> Val:
    ty = T.strip_ref(ty)
    if isinstance(ty, T.IntType):
        return const_int(0, ty)
    if isinstance(ty, T.BoolType):
        return BoolV(z3.BoolVal(False))
    if isinstance(ty, T.FloatType):
        return FloatV(ty)
    if isinstance(ty, T.StructType):
        return StructV(ty, {f.name: z for f in ty.fields if (z := _zero(f.type)) is not None})
    if isinstance(ty, T.ArrayType):
        return StructV(ty, {i: z for i in range(ty.count or 0) if (z := _zero(ty.elem)) is not None})
    return None  # pointers and objects: left unknown


__all__ = ["ExprOps", "index_to_int64"]


def _element_cast(e: N.Cast, to: T.Type) -> tuple[N.Call, T.Type] | None:
    """The element type an untyped ``data_ptr()`` is cast to (``(const half*)a.data_ptr()``), when it
    is a number of two bytes or more: the launcher's statement of the tensor's element type, which
    a zero-config tensor takes as ``data_ptr<half>()`` would. Byte views (``char*``) and vector
    types (``int4*``) say nothing of the element type. Any call returning ``void*`` qualifies here:
    only the data_ptr() model reads the hint, and only for the very call it is given."""
    if not isinstance(to, T.PtrType) or not isinstance(to.pointee, (T.IntType, T.FloatType)) or to.pointee.size < 2:
        return None
    inner = e.operand
    while isinstance(inner, N.Cast) and inner.kind == "implicit":
        inner = inner.operand
    if isinstance(inner, N.Call) and isinstance(T.strip_ref(inner.ty), T.PtrType) \
            and isinstance(T.strip_ref(inner.ty).pointee, T.VoidType):
        return inner, to.pointee  # the call itself: another data_ptr() evaluated on the way is not cast
    return None


def _moves_with(e: z3.BitVecRef, base: z3.BitVecRef, align: int) -> bool:
    """Whether ``e(base + align*t) == e(base) + align*t`` for every t: sums with base-free terms and
    masks that clear only bits below the alignment (``(addr + 15) & ~15``). Then ``e - base`` is
    ``e`` at base 0, a term without the address (base is a multiple of ``align``)."""
    if z3.eq(e, base):
        return True
    if not _mentions(e, base):
        return False
    kind = e.decl().kind() if z3.is_app(e) else None
    kids = e.children()
    if kind == z3.Z3_OP_BADD:
        moving = [k for k in kids if _mentions(k, base)]
        return len(moving) == 1 and _moves_with(moving[0], base, align)
    if kind == z3.Z3_OP_BSUB and len(kids) == 2:
        return not _mentions(kids[1], base) and _moves_with(kids[0], base, align)
    if kind == z3.Z3_OP_BAND:
        masks = [k for k in kids if z3.is_bv_value(k)]
        rest = [k for k in kids if not z3.is_bv_value(k)]
        full = (1 << e.size()) - 1
        return len(rest) == 1 and all((m.as_long() | (align - 1)) == full for m in masks) \
            and _moves_with(rest[0], base, align)
    return False


def _mentions(e: z3.ExprRef, x: z3.ExprRef) -> bool:
    from .context import _vars
    return any(z3.eq(v, x) for v in _vars(e))


def _literal(text: str | None) -> float | None:
    """The value of a floating-point literal's spelling (``16.0f``, ``1e3``, ``0x1p4``)."""
    if not text:
        return None
    t = text.strip().rstrip("fFlL")
    try:
        return float.fromhex(t) if t.lower().startswith(("0x", "-0x")) else float(t)
    except ValueError:
        return None


def _exact(v) -> float | None:
    if isinstance(v, FloatV):
        return v.exact
    if isinstance(v, IntV):
        return v.concrete()
    return None


def _float_arith(op: str, a, b, ty, host: bool) -> float | None:
    """An operation on two exactly known values, kept where the result is exact (exact_float).
    Division only on the host: device code may be built with fast, approximate division."""
    if a is None or b is None or not isinstance(ty, T.FloatType):
        return None
    if op == "+":
        return exact_float(a + b, ty)
    if op == "-":
        return exact_float(a - b, ty)
    if op == "*":
        return exact_float(a * b, ty)
    if op == "/" and host and b != 0 and a % b == 0:
        return exact_float(a / b, ty)
    return None
