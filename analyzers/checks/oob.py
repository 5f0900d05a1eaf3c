"""Out-of-bounds and null accesses, decided in bytes with the real access size.

An access through an index that wrapped is reported once, as the overflow it is (overflow.py): this
check asks for an out-of-bounds access whose offset is also the exact one.
"""
from __future__ import annotations

import z3

from ..engine import ints
from .base import Check, depends_on_summary, make_finding, span_key, value_of
from ..findings import STATIC_ONLY, STATIC_ONLY_HOST, STATIC_ONLY_IN_OBJECT, STATIC_ONLY_RUNTIME_COPY

CHECK_OF_REGION = {
    "global": "oob", "constant": "oob", "host": "oob", "shared": "shared-oob", "dynamic_shared": "shared-oob",
    "local": "local-oob", "param": "local-oob", "null": "null-deref",
}
WHAT = {"oob": "global memory", "shared-oob": "shared memory", "local-oob": "local memory"}


def _same_cause(ctx, st, cond, ev, key, cond_i=None) -> bool:
    """An access that also fails for the input (the sizes) of an access already reported in this
    kernel is listed with that finding, not reported again: one root cause, one report. For another
    object it must also fail only where the reported one does (an unguarded row index read and
    written): one that fails where the reported access is in bounds is another cause (a float2 read
    past a row, and the 8-byte local read as four floats)."""
    terms = [t for _, t in ctx.dim_order]
    # Without the in-bounds assumptions earlier reports left on the path: they exclude exactly
    # the inputs that reached them (five 16-byte loads past one table, one report).
    pc = tuple(t for t in st.pc if t.get_id() not in ctx.continued)
    for kernel, obj, failed, failed_i, finding, model in ctx.witnesses:
        if kernel != ctx.kernel:
            continue
        # Failing where the reported access does not: asked in integers first, where "never" is
        # proved in milliseconds (a bit-vector proof of it took seconds on a row-quantisation kernel).
        if obj != ev.region.name and not (cond_i is not None and failed_i is not None
                                          and ctx.excluded(pc, cond_i, z3.Not(failed_i))) \
                and ctx.find_model(pc, z3.And(cond, z3.Not(failed)), ev.span) is not None:
            continue
        fixed = [t == model.eval(t, model_completion=True) for t in terms]
        if ctx.find_model(pc, z3.And(cond, *fixed), ev.span) is not None:
            ctx.mark(key)
            if ev.span != finding.location and ev.span not in finding.related:
                finding.related.append(ev.span)
            return True
    return False


def _continued(ctx, in_bounds, in_bounds_i):
    """The assumption a path goes on with after a report (the access was in bounds), registered
    and remembered as such."""
    term = ctx.lia.register(in_bounds, in_bounds_i)
    ctx.continued[term.get_id()] = term
    return term


class BoundsCheck(Check):
    id = "oob"

    def __init__(self):
        self.null_findings: dict = {}  # (kernel, null object) -> finding

    def _null(self, ctx, st, ev, key) -> None:
        """A dereference of a null pointer. One report per null pointer and kernel (the ``nullptr``
        a launcher passes, an absent optional): its other dereferences are listed with it."""
        region = ev.region
        cond = ev.guard if ev.guard is not None else z3.BoolVal(True)
        guard_i = ctx.lia.translate(ev.guard) if ev.guard is not None else z3.BoolVal(True)
        model = ctx.find_model(st.pc, cond, ev.span, guard_i)
        if model is None:
            return
        ctx.mark(key)
        first = self.null_findings.get((ctx.kernel, region.id))
        if first is not None:
            if ev.span != first.location and ev.span not in first.related:
                first.related.append(ev.span)
            return
        model = ctx.minimal(st.pc, cond, guard_i, model)
        action = "write through" if ev.write else "read through"
        origin = ""
        if region.span is not None and region.span.file:
            origin = f"; the pointer is {region.name} at {region.span.file}:{region.span.line}"
            if region.span.text and region.name == "nullptr" and region.span.text != "nullptr":
                origin += f" (`{region.span.text}`)"
        finding = make_finding(ctx, st, "null-deref", f"{action} a null pointer: `{ev.span.text}`{origin}", ev.span,
                               model, cond, expression=ev.span, trace=list(ev.stack))
        ctx.report(finding)
        self.null_findings[(ctx.kernel, region.id)] = finding

    def on_access(self, ctx, st, ev) -> None:
        region = ev.region
        if region.note == "from-integer":
            return  # memory nobody sized, where a pointer made from an integer points: an assumption
        check = CHECK_OF_REGION.get(region.kind, "oob")
        key = (check, span_key(ev.span), ctx.kernel)
        if key in ctx.reported:
            return
        if check == "null-deref":
            self._null(ctx, st, ev, key)
            return
        self._object(ctx, st, ev, check, key)
        if ev.within is not None and key not in ctx.reported:
            self._dimension(ctx, st, ev, check, key)

    def _dimension(self, ctx, st, ev, check, key) -> None:
        """An index into a row of a multi-dimensional array (or an array member) stays in that row:
        ``acc[r][c]`` with ``c`` past the row's end is a bug even where the byte offset is still
        inside the object (it reads or writes a neighbouring row)."""
        region = ev.region
        base, count, esize = ev.within
        off = ev.off
        extent = count * esize
        if base.concrete() is not None and off.lo >= base.lo and off.hi + ev.size <= base.lo + extent:
            return
        oi, bi = ints.I(off), ints.I(base)
        guard_i = [ctx.lia.translate(ev.guard)] if ev.guard is not None else []
        cond_i = z3.And(z3.Or(oi < bi, oi + ev.size > bi + extent), *guard_i)
        if ctx.excluded(st.pc, cond_i):
            return
        cond = z3.Or(off.bv < base.bv, off.bv + ev.size > base.bv + extent)
        if ev.guard is not None:
            cond = z3.And(ev.guard, cond)
        if _same_cause(ctx, st, cond, ev, key, cond_i):
            return
        model = ctx.find_model(st.pc, cond, ev.span, cond_i)
        if model is None:
            return
        ctx.mark(key)
        model = ctx.minimal(st.pc, cond, cond_i, model)
        st.assume(_continued(ctx, z3.Not(cond), z3.Not(cond_i)))
        summary = depends_on_summary(ctx, cond, model)
        if summary is not None:
            ctx.stuck("imprecise-loop", f"a possible out-of-bounds index `{ev.span.text}` depends on {summary}, "
                      "which the loop summary cannot bound", ev.span)
            return
        at = value_of(model, off.bv)
        index = (at - value_of(model, base.bv)) // esize
        action = "write" if ev.write else "read"
        msg = (f"{action} of `{ev.span.text}` with index {index} into a dimension of {count} elements of "
               f"`{region.name}` ({WHAT[check]}): byte offset {at} is inside the object, in a neighbouring row "
               f"or member (static-only: {STATIC_ONLY_IN_OBJECT})")
        finding = make_finding(ctx, st, check, msg, ev.span, model, cond, expression=ev.span, trace=list(ev.stack),
                               static_only=STATIC_ONLY_IN_OBJECT)
        ctx.report(finding)
        ctx.witnesses.append((ctx.kernel, region.name, cond, cond_i, finding, model))

    def _object(self, ctx, st, ev, check, key) -> None:
        """The access stays inside its object, in bytes with the access size."""
        region = ev.region
        off = ev.off
        if off.lo >= 0 and off.hi + ev.size <= region.size_lo:
            return  # in bounds for every value the interval allows
        # In integers first: proves most accesses of a correct kernel in bounds in milliseconds.
        oi, size_i = ints.I(off), region.size_iv
        no_wrap = [z3.Not(s.iwraps) for s in sorted(off.sites, key=lambda s: s.id)]
        guard_i = [ctx.lia.translate(ev.guard)] if ev.guard is not None else []
        cond_i = None
        if size_i is not None:
            cond_i = z3.And(z3.Or(oi < 0, oi + ev.size > size_i), *no_wrap, *guard_i)
            if ctx.excluded(st.pc, cond_i):
                return
        o = off.bv
        cond = z3.Or(o < 0, o + ev.size > region.size)
        if off.math is not None:
            # Not an effect of a wrapped index (the overflow check reports those): no site wraps.
            cond = z3.And(cond, *[z3.Not(s.wraps) for s in sorted(off.sites, key=lambda s: s.id)])
        if ev.guard is not None:
            cond = z3.And(ev.guard, cond)
        if _same_cause(ctx, st, cond, ev, key, cond_i):
            return
        model = ctx.find_model(st.pc, cond, ev.span, cond_i)
        if model is None:
            return
        ctx.mark(key)
        model = ctx.minimal(st.pc, cond, cond_i, model)
        # Report a root cause once: the path goes on as if this access had been in bounds.
        st.assume(_continued(ctx, z3.Not(cond), z3.Not(cond_i) if cond_i is not None else None))
        summary = depends_on_summary(ctx, cond, model)
        if summary is not None:
            ctx.stuck("imprecise-loop", f"a possible out-of-bounds access `{ev.span.text}` depends on {summary}, "
                      "which the loop summary cannot bound", ev.span)
            return
        at = value_of(model, o)
        size = value_of(model, region.size)
        action = "write" if ev.write else "read"
        where = "before the start" if at < 0 else "past the end"
        what = WHAT[check]
        if region.kind == "dynamic_shared" and region.span is not None:
            what = f"dynamic shared memory, the size the launch at {region.span.file}:{region.span.line} gives"
        host_object = check == "local-oob" and ctx.kernel is None  # the host code's own object or argument
        if host_object:
            what = "host memory"
        msg = (f"{action} of {ev.size} bytes at byte offset {at} of `{region.name}` ({size} bytes, {what}), "
               f"{where}: `{ev.span.text}`")
        reason = None  # the check's, unless the access's kind says more
        if check == "local-oob":
            reason = STATIC_ONLY_HOST if host_object else STATIC_ONLY[check]
        elif ev.copy_end == "first" and region.kind == "global":
            reason = STATIC_ONLY_RUNTIME_COPY
        if reason is not None:
            msg += f" (static-only: {reason})"
        finding = make_finding(ctx, st, check, msg, ev.span, model, cond, sized=(region, o), cond_i=cond_i, expression=ev.span,
                               trace=list(ev.stack), runtime_copy=bool(ev.copy_end), static_only=reason)
        ctx.report(finding)
        ctx.witnesses.append((ctx.kernel, region.name, cond, cond_i, finding, model))
