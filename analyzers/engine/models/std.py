"""The C++ standard library pieces kernels and launchers use that need a model: std::optional
(presence is fixed per instance by the binding, or symbolic when the binding marks the tensor
``optional``: then both are explored). Algorithms with bodies in the shims (std::min, std::max,
std::clamp, numeric_limits) are executed, not modelled; other std containers are opaque host
objects (unknown_call in calls.py)."""
from __future__ import annotations

import z3

from ...kir import types as T
from ..memory import PathEnd
from .. import ints
from ..values import BoolV, Loc, MultiLoc, MultiPtrV, OpaqueV, OptionalV, PtrV, RefV, StructV, const_int, fresh_int
from . import model
from .cuda import fresh_result
from .torch import same_device

TENSOR = T.OpaqueType("at::Tensor", "tensor")


def _optional(interp, st, this, call) -> OptionalV:
    v = interp.load(st, interp.deref(this, T.OpaqueType("std::optional", "optional"), call.span), call.span)
    if not isinstance(v, OptionalV):
        raise PathEnd("stuck", "an optional the binding does not describe", call.span)
    return v


def _absent_ptr(interp, o: OptionalV, call) -> PtrV:
    """What an absent optional's contents are: nothing, a null object that says where it came from."""
    return interp.null_ptr(T.PtrType(TENSOR), call.span, f"the contents of the absent optional `{o.name}`")


def _contents(interp, st, o: OptionalV, call):
    """A pointer to the optional's tensor: null when absent, either when its presence is symbolic."""
    if o.value is None:
        return _absent_ptr(interp, o, call)
    loc = interp.materialize(o.value, TENSOR, st, call.span)
    ptr = PtrV(loc.region, loc.off, TENSOR)
    if o.present is None:
        return ptr
    return MultiPtrV(((o.present, ptr), (z3.Not(o.present), _absent_ptr(interp, o, call))), TENSOR)


@model("std::optional::has_value", "std::optional::operator bool")
def has_value(interp, st, call, this, args):
    o = _optional(interp, st, this, call)
    if o.present is not None:
        return BoolV(o.present)
    return BoolV(z3.BoolVal(o.value is not None))


def _scalar(ty) -> bool:
    return isinstance(T.strip_ref(ty), (T.IntType, T.BoolType, T.FloatType))


@model("std::optional::value", "std::optional::operator*")
def opt_value(interp, st, call, this, args):
    o = _optional(interp, st, this, call)
    checked = call.name.endswith("value")
    if _scalar(call.ty) and o.present is None:
        # An optional number (the binding fixes its presence): its value, or the throw of value().
        if o.value is None:
            if checked:
                raise PathEnd("abort", "value() of an empty optional throws", call.span, kind="check")
            raise PathEnd("stuck", f"`*{o.name}` of an empty optional: no value to read", call.span)
        return RefV(interp.materialize(o.value, T.strip_ref(call.ty), st, call.span))
    if checked and (o.value is None or (o.present is not None and not interp.ctx.feasible(st.pc, o.present))):
        raise PathEnd("abort", "value() of an empty optional throws", call.span, kind="check")
    if checked and o.present is not None:
        st.assume(o.present)  # where it is absent, value() throws: that path ends safely
        return RefV(interp.materialize(o.value, TENSOR, st, call.span))
    p = _contents(interp, st, o, call)
    if isinstance(p, MultiPtrV):
        return RefV(MultiLoc(tuple((c, Loc(q.region, q.off, TENSOR)) for c, q in p.alts), TENSOR))
    return RefV(interp.deref(p, TENSOR, call.span))


@model("std::optional::operator->")
def opt_arrow(interp, st, call, this, args):
    return _contents(interp, st, _optional(interp, st, this, call), call)


@model("std::optional::value_or")
def opt_value_or(interp, st, call, this, args):
    o = _optional(interp, st, this, call)
    if o.present is not None:
        raise PathEnd("stuck", f"value_or of `{o.name}`, which may be present or absent", call.span)
    if o.value is not None:
        return o.value
    default = args[0]
    if not _scalar(call.ty):
        return default
    if isinstance(default, RefV):
        default = interp.load(st, default.loc, call.span)  # value_or(U&&): the default, converted
    return interp.convert_value(default, T.strip_ref(call.ty), call.span, st)


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


@model("std::forward", "std::move", "std::move_if_noexcept", "std::as_const")
def forward(interp, st, call, this, args):
    """Casts: the argument itself (a reference stays the reference). Clang folds these calls as
    builtins and gives them no instantiated body, so the engine answers them here."""
    return args[0]


@model("std::addressof")
def addressof(interp, st, call, this, args):
    if not args or not isinstance(args[0], RefV):
        raise PathEnd("stuck", f"{call.name} of a value the engine cannot refer to", call.span)
    loc = args[0].loc
    if not isinstance(loc, Loc):
        raise PathEnd("stuck", f"{call.name} of an object that depends on the path", call.span)
    return PtrV(loc.region, loc.off, loc.ty)

@model("std::operator==", "std::operator!=", "std::operator<", "std::basic_string::compare",
       "std::basic_string::empty", "std::basic_string_view::compare", "std::basic_string_view::empty")
def string_compare(interp, st, call, this, args):
    """Comparisons of host strings (``kv_cache_dtype == "auto"``): either outcome; both are explored.
    A string compared with literals is one unknown choice among them: ``s == "a"`` gives the same
    answer every time on a path, and ``s == "a"`` and ``s == "b"`` are never both true."""
    name = call.name.rsplit("::", 1)[-1]
    vals = [interp.load(st, a.loc, call.span) if isinstance(a, RefV) and isinstance(a.loc, Loc) else a for a in args]
    devices = same_device(call, *vals) if name in ("operator==", "operator!=") and len(vals) == 2 else None
    if devices is not None:  # device_of(a) == device_of(b)
        return devices
    opts = [v for v in vals if isinstance(v, OptionalV)]
    if name in ("operator==", "operator!=") and len(vals) == 2 and len(opts) == 1 \
            and any(isinstance(v, StructV) and v.ty.name.endswith("nullopt_t") for v in vals):
        o = opts[0]  # o == std::nullopt: absent
        has = o.present if o.present is not None else z3.BoolVal(o.value is not None)
        return BoolV(z3.Not(has) if name == "operator==" else has)
    if name in ("operator==", "operator!=") and len(args) == 2:
        sides = [a for a in args if not _literal(a)]
        lits = [a.payload for a in args if _literal(a)]
        known = [v.payload for v in vals if isinstance(v, OpaqueV) and v.kind == "std" and isinstance(v.payload, str)]
        if len(sides) == 1 and len(lits) == 1 and known:  # a string made from a literal: the answer is known
            same = known[0] == lits[0]
            return BoolV(z3.BoolVal(same if name == "operator==" else not same))
        if len(sides) == 1 and len(lits) == 1 and isinstance(sides[0], RefV) and isinstance(sides[0].loc, Loc):
            loc = sides[0].loc
            key = f"{id(loc.region)}:{loc.off.concrete()}"
            choices = interp.ctx.string_choices
            if key not in choices:
                choices[key] = fresh_int(interp.ctx.fresh_name("string"), T.INT32, 0, 1 << 20)
                interp.ctx.symbol(f"the string `{loc.region.name}`", choices[key].bv, "user")
                interp.ctx.string_names.add(f"the string `{loc.region.name}`")
            codes = interp.ctx.string_codes
            code = codes.setdefault(lits[0], len(codes) + 1)
            eq = ints.compare("==", choices[key], const_int(code, T.INT32))
            return eq if name == "operator==" else BoolV(z3.Not(eq.term))
    return fresh_result(interp, call, "string_comparison")


def _literal(v) -> bool:
    return literal_text(v) is not None


def literal_text(v) -> str | None:
    """The text of a string literal value (``"fp8_e4m3"``, quotes included), else None."""
    return v.payload if isinstance(v, OpaqueV) and v.kind == "string" and isinstance(v.payload, str) \
        and v.payload != "" else None


def is_string_class(ty: T.Type) -> bool:
    return isinstance(ty, T.OpaqueType) and ty.kind == "std" \
        and ty.spelling.split("<", 1)[0] in ("std::string", "std::basic_string", "std::string_view")


def string_holding(ty: T.Type, text: str | None) -> OpaqueV:
    """A std::string object; ``text`` is the literal it holds (quotes included, as a literal's value
    is), None when unknown."""
    return OpaqueV(ty.kind, ty, text)


def string_from_literal(ty: T.Type, args: list) -> str | None:
    """A std::string made from one literal keeps the literal: a launcher that fixes its cache dtype
    with ``static const std::string kv_cache_dtype = "fp8_e4m3"`` dispatches on that value only."""
    return literal_text(args[0]) if is_string_class(ty) and len(args) == 1 else None


# std::string members that leave the characters as they are (a string made from a literal keeps it).
READ_ONLY_STRING_MEMBERS = frozenset({
    "size", "length", "c_str", "empty", "compare", "find", "rfind", "find_first_of", "find_last_of",
    "find_first_not_of", "find_last_not_of", "substr", "operator()"})


@model("getenv", "std::getenv", "secure_getenv")
def getenv(interp, st, call, this, args):
    """An environment variable the launcher reads (a feature flag such as TRTLLM_ENABLE_PDL): read
    as unset, the deployment's default. Said in the result's assumptions."""
    name = args[0].payload if args and isinstance(args[0], OpaqueV) and args[0].kind == "string" else None
    interp.ctx.note(f"environment variable {name or '(named at run time)'} read as unset")
    return interp.null_ptr(call.ty, call.span, "an unset environment variable")
