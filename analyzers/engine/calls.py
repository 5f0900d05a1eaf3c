"""Calls: functions with bodies are executed (inlined, with their own frame); functions without a
body are answered by the model registry (models/), or by the rule for unknown functions."""
from __future__ import annotations

import dataclasses

from ..kir import nodes as N
from ..kir import types as T
from .memory import PathEnd
from .models import lookup
from .models.std import READ_ONLY_STRING_MEMBERS, is_string_class, string_from_literal, string_holding
from .state import Frame, State, fresh_value, merge_all, new_frame_id
from .values import ClosureV, FloatV, FuncV, Loc, MultiLoc, MultiPtrV, OpaqueV, PtrV, RefV, StructV, Val, const_int


def _same_class(a: T.Type, b: T.Type) -> bool:
    a, b = T.strip_ref(a), T.strip_ref(b)
    return type(a) is type(b) and a.name == b.name


class CallOps:
    # ------------------------------------------------------------ calls

    def ev_call(self, e: N.Call, st: State) -> Val:
        """A call as an rvalue: a returned reference is read."""
        v = self.call_value(e, st)
        if isinstance(v, RefV):
            return self.load(st, v.loc, e.span)
        return v

    def call_value(self, e: N.Call, st: State) -> Val:
        this = self.receiver(e.this, st) if e.this is not None else None
        if e.name.endswith("::operator=") and this is not None and len(e.args) == 1 \
                and (_same_class(e.args[0].ty, e.this.ty) or _is_value_class(e.this.ty)):
            # Copy/move assignment of a value type: a plain store, whatever the (defaulted) body.
            v = self.eval(e.args[0], st)
            self.store(st, self.deref(this, T.strip_ref(e.this.ty) if not isinstance(T.strip_ref(e.this.ty), T.PtrType)
                                      else T.strip_ref(e.this.ty).pointee, e.span), v, e.span)
            return RefV(self.deref(this, T.strip_ref(e.this.ty), e.span))
        args = self.call_args(e.args, e.param_types, st)
        if e.callee is not None:
            e = self.pointer_target(e, st)
        stated = self.stated_return(e)
        if stated is not None:
            return self.stated_result(e, st, stated)
        model = lookup(e.name)
        fn = self.program.functions.get(e.func) if e.func else None
        if model is not None and (fn is None or getattr(model, "overrides_body", False)):
            return model(self, st, e, this, args)
        if fn is not None:
            closure = None
            if fn.kind == "lambda" and this is not None:
                obj = self.load(st, self.deref(this, T.strip_ref(e.this.ty), e.span), e.span)
                if isinstance(obj, ClosureV):
                    closure = obj.frame
            return self.invoke(fn, st, this, args, e.span, closure)
        return self.unknown_call(e, st, this, args)

    def stated_return(self, e: N.Call) -> tuple | None:
        """The range the manifest's ``returns`` states for the called function, if it names it
        (by its plain or qualified name, without template arguments)."""
        if not self.ctx.options.returns:
            return None
        name = e.name.split("<", 1)[0]
        for key, lo, hi in self.ctx.options.returns:
            if name == key or name.endswith("::" + key):
                return key, lo, hi
        return None

    def stated_result(self, e: N.Call, st: State, stated: tuple) -> Val:
        """A call the manifest answers: any value in the stated range, an input of the instance
        (witnesses show it, replays fix it). The body is not followed: the statement stands for it."""
        key, lo, hi = stated
        ret = T.strip_ref(e.ty)
        if not isinstance(ret, T.IntType) or lo < ret.min or hi > ret.max:
            raise PathEnd("stuck", f"the manifest states the results of {key}, which returns {ret.name}: "
                          f"[{lo}, {hi}] is no range of it", e.span, kind="unsupported")
        from .models.cuda import ranged_int
        v = ranged_int(self, st, key, ret, lo, hi)
        self.ctx.symbol(f"{key}() at {e.span.file}:{e.span.line}", v.bv, "stated", ret.signed)
        self.ctx.dim_order.append((str(v.bv), v.bv))  # a witness minimises it after the sizes
        self.ctx.note(f"{key} returns a value in [{lo}, {hi}] (the manifest's `returns`); its body is not followed")
        return v

    def pointer_target(self, e: N.Call, st: State) -> N.Call:
        """A call through a function pointer as a call of the function it holds on this path (a
        dispatch that returns one launcher per case forks one path per case), or the path's end."""
        target = self.function_bound(e.callee, st) or self.eval(e.callee, st)
        if isinstance(target, FuncV):
            return dataclasses.replace(e, name=target.name, func=target.key, callee=None)
        if isinstance(target, PtrV) and target.region.kind == "null":
            raise PathEnd("stuck", "a call through a null function pointer", e.span, kind="unsupported")
        raise PathEnd("stuck", "a call through a function pointer the engine cannot resolve", e.span,
                      kind="unsupported")

    def function_bound(self, callee: N.Expr, st: State) -> FuncV | None:
        """The function a reference parameter (``F&& fn``) is bound to, if it is one."""
        while isinstance(callee, N.Cast):
            callee = callee.operand
        if isinstance(callee, N.Var) and isinstance(callee.decl.ty, T.RefType):
            region = st.lookup(callee.decl.id)
            if region is not None:
                v = self._read_at(st.content(region), 0, callee.decl.ty, region, callee.span)
                return v if isinstance(v, FuncV) else None
        return None

    def receiver(self, obj: N.Expr, st: State):
        """A pointer to the object a member function is called on."""
        t = T.strip_ref(obj.ty)
        if isinstance(t, T.PtrType):
            return self.eval(obj, st)
        loc = self.lvalue(obj, st)
        if isinstance(loc, MultiLoc):
            return MultiPtrV(tuple((c, PtrV(s.region, s.off, t)) for c, s in loc.alts), t)
        return PtrV(loc.region, loc.off, t)

    def call_args(self, args, param_types, st: State) -> list:
        out = []
        for i, a in enumerate(args):
            pt = param_types[i] if i < len(param_types) else None
            if isinstance(pt, T.RefType) and isinstance(a, N.Global) and isinstance(a.ty, T.FuncType):
                out.append(self.eval(a, st))  # a function bound to a reference (F&& fn): the function
            elif isinstance(pt, T.RefType):
                out.append(RefV(self.lvalue(a, st)))
            else:
                v = self.eval(a, st)
                out.append(self.coerce(v, T.strip_ref(pt), a.span, st) if pt is not None else v)
        return out

    def invoke(self, fn: N.Function, st: State, this, args: list, span: N.Span, closure: int | None = None) -> Val:
        if len(st.stack) > self.ctx.options.max_call_depth:
            raise PathEnd("stuck", f"call depth above {self.ctx.options.max_call_depth} (recursion?)", span)
        if fn.body is None:
            raise PathEnd("stuck", f"{fn.display} has no body", span)
        kernel_frame = self.is_kernel_frame(st)
        frame = Frame(new_frame_id(), fn, {}, closure, this, span)
        st.frames[frame.id] = frame
        st.stack = st.stack + (frame.id,)
        for p, a in zip(fn.params, args):
            region = self.local_region(p.ty if not isinstance(p.ty, T.RefType) else T.PtrType(T.VOID), p.name, p.span, "param")
            frame.vars[p.id] = region
            if a is not None:
                self._write_at(st.write_content(region), 0, p.ty if not isinstance(a, RefV) else T.RefType(T.VOID), a)
        states = self.exec_block(fn.body.stmts, [st])
        live: list[State] = []
        stuck = aborted = 0
        for x in states:
            if x.status in ("ok", "return"):
                x.status = "ok"
                live.append(x)
            elif x.status == "abort":
                aborted += 1
            else:
                stuck += 1
        if kernel_frame:
            self.note_exits(live)
        if not live:
            # The causes (a failed check, an unsupported construct) are already recorded.
            raise PathEnd("abort" if not stuck else "stuck", "", span)
        for x in live:
            x.status = "return"
        if len(live) > 1:
            _forget_locals(live, frame.id)
        merged = merge_all(live)
        if len(merged) != 1:
            raise PathEnd("stuck", f"paths through {fn.display} return different objects", span, kind="unsupported")
        out = merged[0]
        out.status = "ok"
        value = out.retval
        out.retval = None
        out.stack = out.stack[:-1]
        f = out.frames.get(frame.id)
        if f is not None and not f.captured:
            del out.frames[frame.id]
        st.__dict__.update(out.__dict__)
        return value if value is not None else OpaqueV("void")

    def unknown_call(self, e: N.Call, st: State, this, args: list) -> Val:
        """A function with neither a body nor a model. Arguments it receives by reference are read
        (the access is checked); its result is any value of its type. One that may write through a
        pointer or a non-const reference to anything but an opaque float could change what the
        engine tracks: the path is then inconclusive, never silently verified."""
        owner = e.name.rsplit("::", 1)[0] if "::" in e.name else ""
        host_object = owner.startswith("std::")
        self.forget_string_literals(e, st, this, args)
        if self.ctx.kernel is None and not host_object and e.name not in (n for n, _ in self.ctx.host_calls_without_body):
            self.ctx.host_calls_without_body.append((e.name, e.span))
        if isinstance(this, (PtrV, MultiPtrV)) and isinstance(this.pointee, (T.IntType, T.FloatType, T.BoolType, T.StructType)):
            self.load(st, self.deref(this, this.pointee, e.span), e.span)  # a member function reads its object
        for i, a in enumerate(args):
            pt = e.param_types[i] if i < len(e.param_types) else None
            if isinstance(a, RefV):
                target = T.strip_ref(a.loc.ty)
                writable = not host_object and not (pt is not None and pt.const)
                if writable and not T.only_floats(target):
                    raise PathEnd("stuck", f"call to {e.name}, which has no body or model and may write "
                                  f"through its reference argument", e.span)
                if isinstance(target, (T.IntType, T.FloatType, T.BoolType, T.PtrType, T.StructType)):
                    self.load(st, a.loc, e.span)
                if writable:
                    # Floats are opaque, but the bytes change: whatever else was known there is not
                    # (a __half2 += over a register also read as uint32_t).
                    self.store(st, a.loc, FloatV(target), e.span)
            elif isinstance(pt, T.PtrType) and not host_object and not isinstance(a, OpaqueV):
                raise PathEnd("stuck", f"call to {e.name}, which has no body or model and receives a pointer "
                              f"(its memory accesses are unknown)", e.span)
        ret = T.strip_ref(e.ty)
        if isinstance(ret, T.VoidType):
            return OpaqueV("void")
        v = fresh_value(ret, "result", self.ctx.counter)
        if v is None:
            if isinstance(ret, (T.OpaqueType, T.StructType)):
                return OpaqueV("object", ret)
            raise PathEnd("stuck", f"result of {e.name} ({ret.name}) without a model", e.span)
        if not T.only_floats(ret):  # floats (a float2 too) are opaque whatever their source
            self.ctx.note(f"{e.name} has no body: its result is taken as any value of type {ret.name}")
            # A finding that needs a particular result is inconclusive (needs-values), not a bug.
            self.ctx.remember_untracked(v, "unknown-call", f"`{e.name}` at {e.span.file}:{e.span.line}")
        return v

    def forget_string_literals(self, e: N.Call, st: State, this, args: list) -> None:
        """A string made from a literal keeps it until a call may change it: assignment, append, or
        any std function given it by non-const reference. Its value is then unknown again."""
        targets = []
        if isinstance(this, PtrV) and e.name.rsplit("::", 1)[-1] not in READ_ONLY_STRING_MEMBERS:
            targets.append(Loc(this.region, this.off, this.pointee))
        targets += [a.loc for i, a in enumerate(args) if isinstance(a, RefV) and isinstance(a.loc, Loc)
                    and not (i < len(e.param_types) and getattr(e.param_types[i], "const", False))]
        for loc in targets:
            ty = T.strip_ref(loc.ty)
            if is_string_class(ty):
                v = self.load(st, loc, e.span)
                if isinstance(v, OpaqueV) and v.payload is not None:
                    self._store_tracked(st, loc.region, loc.off, ty, string_holding(ty, None), e.span)

    # ------------------------------------------------------------ construction

    def ev_construct(self, e: N.Construct, st: State) -> Val:
        ty = T.strip_ref(e.ty)
        if isinstance(ty, T.FloatType):
            for a in e.args:
                self.eval(a, st)
            return FloatV(ty)
        region = self.local_region(ty, "temporary", e.span)
        loc = Loc(region, const_int(0, T.INT64), ty)
        self.construct_into(loc, e, st)
        return self._read_at(st.content(region), 0, ty, region, e.span)

    def construct_into(self, loc: Loc, e: N.Construct, st: State) -> None:
        ty = T.strip_ref(e.ty)
        if isinstance(ty, T.FloatType):
            for a in e.args:
                self.eval(a, st)
            self._store_tracked(st, loc.region, loc.off, ty, FloatV(ty), e.span)
            return
        if len(e.args) == 1 and _same_class(e.args[0].ty, ty):
            # Copy or move construction of a value: copy the value (defaulted bodies say nothing).
            v = self.eval(e.args[0], st)
            self._store_tracked(st, loc.region, loc.off, ty, v, e.span)
            return
        model = lookup(e.name)
        fn = self.program.functions.get(e.func) if e.func else None
        this = PtrV(loc.region, loc.off, ty)
        if fn is not None and (model is None or not getattr(model, "overrides_body", False)):
            args = self.call_args(e.args, e.param_types, st)
            self.invoke(fn, st, this, args, e.span)
            return
        args = self.call_args(e.args, e.param_types, st)
        if model is not None:
            v = model(self, st, e, this, args)
            if v is not None and not (isinstance(v, OpaqueV) and v.kind == "void"):
                self._store_tracked(st, loc.region, loc.off, ty, v, e.span)
            return
        if not e.args:
            return  # default-initialised: contents indeterminate, read as fresh values
        if isinstance(ty, T.StructType) and len(e.args) == len(ty.fields):
            fields = {f.name: self.coerce(a, f.type, e.span, st) for f, a in zip(ty.fields, args)}
            self._store_tracked(st, loc.region, loc.off, ty, StructV(ty, fields), e.span)
            return
        if isinstance(ty, T.OpaqueType):
            self._store_tracked(st, loc.region, loc.off, ty, string_holding(ty, string_from_literal(ty, args)), e.span)
            return
        raise PathEnd("stuck", f"constructor {e.name} has no body or model", e.span)


def _is_value_class(t: T.Type) -> bool:
    return isinstance(T.strip_ref(t), T.FloatType)


def _forget_locals(states: list, frame_id: int) -> None:
    """The function's own locals and parameters end with it: what the paths held there (a function
    pointer picked on each path, `mode ? mirrored : same`) does not keep them from joining."""
    for x in states:
        f = x.frames.get(frame_id)
        if f is None or f.captured:
            continue
        for region in f.vars.values():
            if getattr(region, "kind", None) in ("local", "param"):
                x.mem.pop(region.id, None)
