"""The C++ standard library pieces kernels and launchers use that need a model: std::optional
(presence is fixed per instance by the binding). Algorithms with bodies in the shims (std::min,
std::max, std::clamp, numeric_limits) are executed, not modelled; other std containers are opaque
host objects (unknown_call in calls.py)."""
from __future__ import annotations

import z3

from ...kir import types as T
from ..memory import PathEnd
from ..values import BoolV, OpaqueV, OptionalV, PtrV, RefV, StructV
from . import model
from .cuda import fresh_result

TENSOR = T.OpaqueType("at::Tensor", "tensor")


def _optional(interp, st, this, call) -> OptionalV:
    v = interp.load(st, interp.deref(this, T.OpaqueType("std::optional", "optional"), call.span), call.span)
    if not isinstance(v, OptionalV):
        raise PathEnd("stuck", "an optional the binding does not describe", call.span)
    return v


@model("std::optional::has_value", "std::optional::operator bool")
def has_value(interp, st, call, this, args):
    return BoolV(z3.BoolVal(_optional(interp, st, this, call).value is not None))


@model("std::optional::value", "std::optional::operator*")
def opt_value(interp, st, call, this, args):
    o = _optional(interp, st, this, call)
    if o.value is None:
        if call.name.endswith("value"):
            raise PathEnd("abort", "value() of an empty optional throws", call.span, kind="check")
        return RefV(interp.deref(interp.null_ptr(T.PtrType(TENSOR)), TENSOR, call.span))
    return RefV(interp.materialize(o.value, TENSOR, st, call.span))


@model("std::optional::operator->")
def opt_arrow(interp, st, call, this, args):
    o = _optional(interp, st, this, call)
    ty = TENSOR
    if o.value is None:
        return interp.null_ptr(T.PtrType(ty))
    loc = interp.materialize(o.value, ty, st, call.span)
    return PtrV(loc.region, loc.off, ty)


@model("std::optional::value_or")
def opt_value_or(interp, st, call, this, args):
    o = _optional(interp, st, this, call)
    return o.value if o.value is not None else args[0]


@model("std::optional::optional")
def opt_ctor(interp, st, call, this, args):
    if not args:
        return OptionalV(None)
    a = args[0]
    if isinstance(a, RefV):
        a = interp.load(st, a.loc, call.span)
    if isinstance(a, OptionalV):
        return a
    if isinstance(a, StructV) and a.ty.name.endswith("nullopt_t"):
        return OptionalV(None)
    return OptionalV(a)


@model("std::optional::operator=")
def opt_assign(interp, st, call, this, args):
    return fresh_result(interp, call)


@model("std::forward", "std::move", "std::as_const")
def forward(interp, st, call, this, args):
    """Casts: the argument itself (a reference stays the reference)."""
    return args[0]


@model("std::operator==", "std::operator!=", "std::operator<", "std::basic_string::compare",
       "std::basic_string::empty", "std::basic_string_view::compare", "std::basic_string_view::empty")
def string_compare(interp, st, call, this, args):
    """Comparisons of host strings (``kv_cache_dtype == "auto"``): either outcome; both are explored."""
    return fresh_result(interp, call, "string_comparison")
