"""The torch extension API: tensors (shape, strides, dtype, data pointers, views, allocation),
optional tensors, streams and guards, checks.

The stable ABI (torch::stable::Tensor and the free functions of torch/csrc/stable/ops.h) is
answered by the same models: its tensor is the same value (a TensorV), its methods have the
classic ones' meaning, and its ops take the tensor as their first argument."""
from __future__ import annotations

import z3

from ...binding import DTYPE_SIZES
from ...kir import nodes as N
from ...kir import types as T
from .. import ints, lia
from ..memory import PathEnd
from ..values import (BoolV, IntArrayV, IntV, OpaqueV, OptionalV, PtrV, RefV, StructV, TensorV, const_int,
                      fresh_int)
from . import model
from .cuda import VOID, fresh_result

# c10::ScalarType numbering, as in the shim (kernelvet_torch.h) and in torch itself.
SCALAR_TYPES = {
    "uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6, "float64": 7,
    "bool": 11, "bfloat16": 15, "float8_e5m2": 23, "float8_e4m3fn": 24, "float8_e5m2fnuz": 25,
    "float8_e4m3fnuz": 26, "uint16": 27, "uint32": 28, "uint64": 29, "float8_e8m0fnu": 44,
    "float4_e2m1fn_x2": 45,
}
UNDEFINED_SCALAR_TYPE = 46
SCALAR_NAMES = {v: k for k, v in SCALAR_TYPES.items()}
# The C++ element types data_ptr<T>() accepts for each dtype.
CPP_TYPES = {
    "float32": {"float"}, "float64": {"double"}, "float16": {"c10::Half"}, "bfloat16": {"c10::BFloat16"},
    "float8_e4m3fn": {"c10::Float8_e4m3fn"}, "float8_e5m2": {"c10::Float8_e5m2"},
    "float8_e4m3fnuz": {"c10::Float8_e4m3fnuz"}, "float8_e5m2fnuz": {"c10::Float8_e5m2fnuz"},
    "float8_e8m0fnu": {"c10::Float8_e8m0fnu"}, "float4_e2m1fn_x2": {"c10::Float4_e2m1fn_x2"},
    "int8": {(8, True)}, "uint8": {(8, False)}, "int16": {(16, True)}, "int32": {(32, True)}, "int64": {(64, True)},
    "uint16": {(16, False)}, "uint32": {(32, False)}, "uint64": {(64, False)}, "bool": {"bool"},
}


def tensor_of(interp, st, this, call) -> TensorV:
    obj = interp.load(st, interp.deref(this, T.OpaqueType("at::Tensor", "tensor"), call.span), call.span)
    if isinstance(obj, OptionalV):
        obj = obj.value
    if isinstance(obj, OpaqueV) and obj.kind == UNDEFINED_TENSOR:
        raise PathEnd("stuck", f"{call.name} on an undefined tensor (default-constructed)", call.span)
    if not isinstance(obj, TensorV):
        raise PathEnd("stuck", f"{call.name} on a tensor the binding does not describe", call.span)
    return obj


UNDEFINED_TENSOR = "undefined tensor"


def kept_tensor(interp, st, name: str, span) -> TensorV:
    """A byte tensor an earlier call of the op left in a static variable: one dimension of any size
    (the op reads its numel() before use), said in the result's assumptions."""
    n = fresh_int(interp.ctx.fresh_name(f"{name}.numel()"), T.INT64, 0, 1 << 40)
    interp.ctx.note(f"the static tensor {name} holds what an earlier call left (a byte tensor of any size)")
    region = interp.new_region("global", name, n, span, elem_size=1, align=256, note="allocated")
    return TensorV(name, (n,), (const_int(1, T.INT64),), "int8", region)


@model("at::native::gpu_kernel", "at::native::gpu_kernel_with_scalars", "at::native::gpu_kernel_nocast")
def tensor_iterator_launch(interp, st, call, this, args):
    """ATen's elementwise launch over a TensorIterator: ATen's kernel, made from the functor. The
    iterator is not modelled, so the path ends here, inconclusive, and says so."""
    raise PathEnd("stuck", f"`{call.name}` launches ATen's elementwise kernel over a TensorIterator, which "
                  "kernelvet does not model: the functor is not checked", call.span)


@model("at::Tensor::Tensor")
def default_tensor(interp, st, call, this, args):
    """``at::Tensor z;``: an undefined tensor, which a launcher fills in only on some paths (an
    optional's value) and passes on unread on the others."""
    if args:
        return OpaqueV("tensor", T.OpaqueType("at::Tensor", "tensor"))
    return OpaqueV(UNDEFINED_TENSOR, T.OpaqueType("at::Tensor", "tensor"))


def _int_arg(v, call, what="dimension") -> int:
    if isinstance(v, RefV):
        raise PathEnd("stuck", f"{call.name}: {what} by reference", call.span)
    if not isinstance(v, IntV) or v.concrete() is None:
        raise PathEnd("stuck", f"{call.name} with a {what} that is not a constant", call.span)
    return v.concrete()


def _dim_index(t: TensorV, d: int, st, call) -> int:
    n = len(t.dims)
    if d < 0:
        d += n
    if not 0 <= d < n:
        raise PathEnd("abort", f"{call.name}({d}) on a {n}-d tensor raises", call.span)
    return d


def numel(t: TensorV, span) -> IntV:
    total = const_int(1, T.INT64)
    for d in t.dims:
        total = ints.arith("*", total, d, T.INT64, span)
    return total


def elem_size(t: TensorV) -> int:
    return DTYPE_SIZES.get(t.dtype, 1)


def elem_size_value(interp, st, t: TensorV) -> IntV:
    """The element size as a value: a constant, or for a zero-config tensor the size its dtype
    symbol has on this path (a symbol while the path has not decided it)."""
    if t.lazy is None:
        return const_int(elem_size(t), T.INT64)
    k = pinned_size(interp, st, t)
    return const_int(k, T.INT64) if k is not None else t.lazy.esize


def pinned_size(interp, st, t: TensorV) -> int | None:
    """The one element size the path allows for a zero-config tensor, if there is one."""
    esize = t.lazy.esize
    options = [k for k in (1, 2, 4, 8) if interp.ctx.feasible(st.pc, ints.compare("==", esize, const_int(k, T.INT64)).term)]
    return options[0] if len(options) == 1 else None


def storage(interp, st, t: TensorV, esize: int):
    """The region of a zero-config tensor's storage for elements of ``esize`` bytes."""
    lz = t.lazy
    if esize not in lz.regions:
        lz.regions[esize] = interp.storage_region(t.name, lz.extent, esize, t.region.span, t.region.values,
                                                  t.region.note)
    return lz.regions[esize]


def pin_dtype(interp, st, t: TensorV, pointee: T.Type, call, strict: bool = True) -> None:
    """data_ptr<T>() on a zero-config tensor: from here on the path has a dtype that T accepts.
    Not ``strict`` (a C cast of the untyped pointer, which torch does not check): a dtype of T's size
    (a bf16 tensor read as `half*`), and none if the path already excludes them all."""
    if strict:
        codes = [c for name, c in SCALAR_TYPES.items() if _accepts(name, pointee)]
    else:
        codes = [c for name, c in SCALAR_TYPES.items() if DTYPE_SIZES.get(name) == pointee.size]
    code = t.lazy.code
    from .. import lia
    cond = lia.CURRENT.register(z3.Or(*[code.bv == c for c in codes]) if codes else z3.BoolVal(False),
                                z3.Or(*[ints.I(code) == c for c in codes]) if codes else None)
    if not interp.ctx.feasible(st.pc, cond):
        if not strict:
            return
        raise PathEnd("abort", f"data_ptr<{pointee.name}>() on a tensor of another dtype raises", call.span)
    st.assume(cond)


@model("at::Tensor::size", "torch::stable::Tensor::size", "tvm::ffi::TensorView::size", "tvm::ffi::Tensor::size")
def size(interp, st, call, this, args):
    t = tensor_of(interp, st, this, call)
    return t.dims[_dim_index(t, _int_arg(args[0], call), st, call)]


@model("at::Tensor::stride", "torch::stable::Tensor::stride", "tvm::ffi::TensorView::stride",
       "tvm::ffi::Tensor::stride")
def stride(interp, st, call, this, args):
    t = tensor_of(interp, st, this, call)
    return t.strides[_dim_index(t, _int_arg(args[0], call), st, call)]


@model("at::Tensor::sizes", "torch::stable::Tensor::sizes", "tvm::ffi::TensorView::shape", "tvm::ffi::Tensor::shape",
       "tvm::ffi::TensorView::sizes", "tvm::ffi::Tensor::sizes")
def sizes(interp, st, call, this, args):
    return IntArrayV(tensor_of(interp, st, this, call).dims)


@model("at::Tensor::strides", "torch::stable::Tensor::strides", "tvm::ffi::TensorView::strides",
       "tvm::ffi::Tensor::strides")
def strides(interp, st, call, this, args):
    return IntArrayV(tensor_of(interp, st, this, call).strides)


@model("at::Tensor::numel", "torch::stable::Tensor::numel", "tvm::ffi::TensorView::numel", "tvm::ffi::Tensor::numel")
def tensor_numel(interp, st, call, this, args):
    return numel(tensor_of(interp, st, this, call), call.span)


@model("at::Tensor::dim", "at::Tensor::ndimension", "torch::stable::Tensor::dim", "tvm::ffi::TensorView::ndim",
       "tvm::ffi::Tensor::ndim")
def dim(interp, st, call, this, args):
    return const_int(len(tensor_of(interp, st, this, call).dims), T.INT64)


@model("at::Tensor::scalar_type", "at::Tensor::dtype", "torch::stable::Tensor::scalar_type")
def scalar_type(interp, st, call, this, args):
    t = tensor_of(interp, st, this, call)
    if t.lazy is not None:
        return t.lazy.code
    return const_int(SCALAR_TYPES.get(t.dtype, UNDEFINED_SCALAR_TYPE), T.IntType(8, True, "c10::ScalarType"))


@model("at::Tensor::element_size", "at::Tensor::itemsize", "torch::stable::Tensor::element_size")
def element_size(interp, st, call, this, args):
    return elem_size_value(interp, st, tensor_of(interp, st, this, call))


@model("at::Tensor::nbytes")
def nbytes(interp, st, call, this, args):
    t = tensor_of(interp, st, this, call)
    return ints.arith("*", numel(t, call.span), elem_size_value(interp, st, t), T.INT64, call.span)


@model("at::Tensor::is_contiguous", "torch::stable::Tensor::is_contiguous", "tvm::ffi::TensorView::IsContiguous",
       "tvm::ffi::Tensor::IsContiguous")
def is_contiguous(interp, st, call, this, args):
    t = tensor_of(interp, st, this, call)
    return BoolV(z3.BoolVal(t.region.note != "strided"))


@model("at::Tensor::defined", "at::Tensor::is_floating_point", "torch::stable::Tensor::defined")
def true_(interp, st, call, this, args):
    if call.name.endswith("is_floating_point"):
        t = tensor_of(interp, st, this, call)
        if t.lazy is not None:
            return BoolV(z3.Or(*[t.lazy.code.bv == c for n, c in SCALAR_TYPES.items() if n.startswith(("float", "bfloat"))]))
        return BoolV(z3.BoolVal(t.dtype.startswith(("float", "bfloat"))))
    obj = interp.load(st, interp.deref(this, T.OpaqueType("at::Tensor", "tensor"), call.span), call.span)
    return BoolV(z3.BoolVal(not (isinstance(obj, OpaqueV) and obj.kind == UNDEFINED_TENSOR)))


def _on_cpu(v) -> z3.BoolRef:
    """Whether a tensor or a device value is the host's (tensors are on the GPU unless bound otherwise)."""
    if isinstance(v, OptionalV):
        v = v.value
    cpu = v.cpu if isinstance(v, TensorV) else v.payload if isinstance(v, OpaqueV) and v.kind == "device" else None
    return cpu if cpu is not None else z3.BoolVal(False)


def _loaded(interp, st, v, call):
    """The object a receiver or argument names, read without an access check (a temporary Device)."""
    if isinstance(v, RefV):
        return interp.load(st, v.loc, call.span)
    if isinstance(v, PtrV):
        c = v.off.concrete()
        entry = st.content(v.region).get(c) if c is not None and v.region.tracked else None
        if entry is not None:
            return entry[1]
        return interp.load(st, interp.deref(v, T.OpaqueType("c10::Device", "device"), call.span), call.span)
    return v


@model("at::Tensor::is_cpu", "torch::stable::Tensor::is_cpu", "c10::Device::is_cpu", "torch::stable::Device::is_cpu",
       "at::Tensor::is_cuda", "torch::stable::Tensor::is_cuda", "c10::Device::is_cuda", "torch::stable::Device::is_cuda")
def is_cpu(interp, st, call, this, args):
    cpu = _on_cpu(_loaded(interp, st, this, call))
    return BoolV(cpu if call.name.endswith("is_cpu") else z3.Not(cpu))


@model("at::Tensor::device", "at::device_of", "torch::stable::Tensor::device")
def device(interp, st, call, this, args):
    t = _loaded(interp, st, this if this is not None else args[0], call)
    ty = T.strip_ref(call.ty)
    return OpaqueV("device", ty, _on_cpu(t))


@model("c10::Device::Device", "torch::stable::Device::Device")
def device_ctor(interp, st, call, this, args):
    """A copy keeps where it is; Device(DeviceType, index) is the host's for DeviceType::CPU (0)."""
    first = _loaded(interp, st, args[0], call) if args else None
    if isinstance(first, OpaqueV) and first.kind == "device":
        return first
    if isinstance(first, IntV):
        return OpaqueV("device", T.strip_ref(call.ty), first.bv == 0)
    return OpaqueV("device", T.strip_ref(call.ty), z3.BoolVal(False))


@model("c10::Device::type", "torch::stable::Device::type")
def device_type(interp, st, call, this, args):
    ty = T.strip_ref(call.ty)
    ty = ty if isinstance(ty, T.IntType) else T.IntType(8, True, "c10::DeviceType")
    cpu = _on_cpu(_loaded(interp, st, this, call))
    return IntV(ty, z3.If(cpu, z3.BitVecVal(0, ty.bits), z3.BitVecVal(1, ty.bits)), 0, 1,
                iv=lia.CURRENT.bounded(z3.If(cpu, z3.BitVecVal(0, ty.bits), z3.BitVecVal(1, ty.bits)), 0, 1))


@model("c10::Device::operator==", "c10::Device::operator!=", "torch::stable::Device::operator==",
       "torch::stable::Device::operator!=")
def device_equal(interp, st, call, this, args):
    return same_device(call, _loaded(interp, st, this, call), _loaded(interp, st, args[0], call))


def same_device(call, a, b) -> BoolV | None:
    """``a == b`` (or ``!=``) of two devices: both on the host or both on the GPU (one GPU: index 0).
    None when the two are not devices."""
    if not any(isinstance(v, OpaqueV) and v.kind == "device" for v in (a, b)):
        return None
    same = _on_cpu(a) == _on_cpu(b)
    return BoolV(z3.Not(same) if call.name.endswith("!=") else same)


@model("at::Tensor::get_device", "at::cuda::current_device", "torch::stable::Tensor::get_device",
       "torch::stable::Tensor::get_device_index", "torch::stable::accelerator::getCurrentDeviceIndex")
def device_index(interp, st, call, this, args):
    return const_int(0, T.strip_ref(call.ty) if isinstance(T.strip_ref(call.ty), T.IntType) else T.INT32)


@model("at::Tensor::data_ptr", "at::Tensor::mutable_data_ptr", "at::Tensor::const_data_ptr",
       "torch::stable::Tensor::data_ptr", "torch::stable::Tensor::mutable_data_ptr", "torch::stable::Tensor::const_data_ptr",
       "tvm::ffi::TensorView::data_ptr", "tvm::ffi::Tensor::data_ptr")
def data_ptr(interp, st, call, this, args):
    t = tensor_of(interp, st, this, call)
    ret = T.strip_ref(call.ty)
    pointee = ret.pointee if isinstance(ret, T.PtrType) else T.VOID
    region, esize = t.region, elem_size(t)
    if t.lazy is not None:
        if not isinstance(pointee, T.VoidType):
            pin_dtype(interp, st, t, pointee, call)
        elif interp.cast_pointee is not None and interp.cast_pointee[0] is call:
            # `(const half*)x.data_ptr()`: the cast says the element type, without torch's check.
            pin_dtype(interp, st, t, interp.cast_pointee[1], call, strict=False)
        k = pinned_size(interp, st, t)
        if k is not None:
            region, esize = storage(interp, st, t, k), k
        elif t.offset is not None:
            raise PathEnd("stuck", "data_ptr() of a view whose dtype this path does not decide", call.span)
    elif not isinstance(pointee, T.VoidType) and not _accepts(t.dtype, pointee):
        # torch checks the element type of data_ptr<T>() and throws on a mismatch.
        raise PathEnd("abort", f"data_ptr<{pointee.name}>() on a {t.dtype} tensor raises", call.span)
    off = const_int(0, T.INT64)
    if t.offset is not None:
        off = ints.arith("*", t.offset, const_int(esize, T.INT64), T.INT64, call.span)
    return PtrV(region, off, pointee)


def _accepts(dtype: str, ty: T.Type) -> bool:
    allowed = CPP_TYPES.get(dtype)
    if allowed is None:
        return True
    if isinstance(ty, T.IntType):
        return (ty.bits, ty.signed) in allowed
    if isinstance(ty, T.BoolType):
        return "bool" in allowed
    return ty.name in allowed


@model("at::Tensor::contiguous", "at::Tensor::clone", "at::Tensor::to")
def same_tensor(interp, st, call, this, args):
    return _copy_of(interp, st, tensor_of(interp, st, this, call), call)


def _copy_of(interp, st, t: TensorV, call) -> TensorV:
    """The tensor itself (contiguous() of a contiguous one), otherwise a contiguous copy."""
    if call.name.endswith("contiguous") and t.region.note != "strided":
        return t
    if t.lazy is not None:
        return _lazy_like(interp, st, t, t.dims, f"{t.name}.{call.name.rsplit('::', 1)[1]}()", call.span)
    region = interp.new_region("global", f"{t.name}.{call.name.rsplit('::', 1)[1]}()",
                               ints.arith("*", numel(t, call.span), const_int(elem_size(t), T.INT64), T.INT64, call.span),
                               call.span, elem_size=elem_size(t), values=t.region.values, align=256)
    return TensorV(t.name, t.dims, contiguous_strides(t.dims, call.span), t.dtype, region, cpu=t.cpu)


@model("at::Tensor::view", "at::Tensor::reshape")
def view(interp, st, call, this, args):
    return _view(tensor_of(interp, st, this, call), args[0], call)


def _view(t: TensorV, shape, call) -> TensorV:
    if not isinstance(shape, IntArrayV):
        raise PathEnd("stuck", f"{call.name} with a shape the engine cannot read", call.span)
    total = numel(t, call.span)
    dims = list(shape.items)
    unknown = [i for i, d in enumerate(dims) if d.concrete() == -1]
    if len(unknown) == 1:
        rest = const_int(1, T.INT64)
        for i, d in enumerate(dims):
            if i != unknown[0]:
                rest = ints.arith("*", rest, d, T.INT64, call.span)
        dims[unknown[0]] = ints.arith("/", total, rest, T.INT64, call.span)
    return TensorV(t.name, tuple(dims), contiguous_strides(dims, call.span), t.dtype, t.region, t.offset, t.lazy, t.cpu)


def _shape_arg(interp, st, v, call) -> IntArrayV:
    v = interp.load(st, v.loc, call.span) if isinstance(v, RefV) else v
    if not isinstance(v, IntArrayV):
        raise PathEnd("stuck", f"{call.name} with a shape the engine cannot read", call.span)
    return v


@model("torch::stable::pad", "at::pad", "torch::pad", "at::constant_pad_nd")
def pad(interp, st, call, this, args):
    """pad(x, {left, right, top, bottom, ...}): pairs from the last dimension backwards; a new
    contiguous tensor."""
    t = arg_tensor(interp, st, args[0], call)
    pads = _shape_arg(interp, st, args[1], call).items
    if len(pads) % 2 or len(pads) // 2 > len(t.dims):
        raise PathEnd("abort", f"{call.name}: {len(pads)} padding sizes for a {len(t.dims)}-d tensor raise", call.span)
    dims = list(t.dims)
    for i in range(len(pads) // 2):
        d = len(dims) - 1 - i
        for amount in pads[2 * i:2 * i + 2]:
            dims[d] = ints.arith("+", dims[d], ints.convert(amount, T.INT64, call.span), T.INT64, call.span)
    name = f"pad({t.name})"
    if t.lazy is not None:
        return _lazy_like(interp, st, t, tuple(dims), name, call.span)
    return _new_tensor(interp, st, call, dims, t.dtype, name)


@model("torch::stable::narrow", "at::narrow", "at::Tensor::narrow")
def narrow(interp, st, call, this, args):
    """narrow(x, dim, start, length): a view of ``length`` entries of ``dim`` from ``start`` (the op
    raises unless they lie inside the dimension)."""
    if this is not None:
        t, rest = tensor_of(interp, st, this, call), args
    else:
        t, rest = arg_tensor(interp, st, args[0], call), args[1:]
    d = _dim_index(t, _int_arg(rest[0], call), st, call)
    start, length = (ints.convert(v, T.INT64, call.span) for v in rest[1:3])
    end = ints.arith("+", start, length, T.INT64, call.span)
    st.assume(z3.And(start.bv >= 0, length.bv >= 0, end.bv <= t.dims[d].bv))
    dims = t.dims[:d] + (length,) + t.dims[d + 1:]
    base = t.offset if t.offset is not None else const_int(0, T.INT64)
    offset = ints.arith("+", base, ints.arith("*", start, t.strides[d], T.INT64, call.span), T.INT64, call.span)
    return TensorV(t.name, dims, t.strides, t.dtype, t.region, offset, t.lazy, t.cpu)


@model("at::Tensor::flatten")
def flatten(interp, st, call, this, args):
    return _flatten(tensor_of(interp, st, this, call), call, args, st)


def _flatten(t: TensorV, call, dims_args=(), st=None) -> TensorV:
    """``x.flatten(start, end)``: dims start..end become one; the others stay (a view, as
    torch gives for the contiguous tensors kernels read)."""
    ks = [_int_arg(a, call) for a in dims_args[:2]]
    start, end = (ks + [0, -1][len(ks):])[:2]
    if not t.dims:
        return TensorV(t.name, (const_int(1, T.INT64),), (const_int(1, T.INT64),), t.dtype, t.region, t.offset,
                       t.lazy, t.cpu)
    start, end = _dim_index(t, start, st, call), _dim_index(t, end, st, call)
    if start > end:
        raise PathEnd("abort", f"{call.name}: start_dim after end_dim raises", call.span)
    merged = numel(TensorV(t.name, t.dims[start:end + 1], t.strides[start:end + 1], t.dtype, t.region), call.span)
    dims = t.dims[:start] + (merged,) + t.dims[end + 1:]
    strides = t.strides[:start] + (t.strides[end],) + t.strides[end + 1:]
    if start == 0 and end == len(t.dims) - 1:
        strides = (const_int(1, T.INT64),)
    return TensorV(t.name, dims, strides, t.dtype, t.region, t.offset, t.lazy, t.cpu)


def contiguous_strides(dims, span) -> tuple:
    out = []
    acc = const_int(1, T.INT64)
    for d in reversed(list(dims)):
        out.append(acc)
        acc = ints.arith("*", acc, d, T.INT64, span)
    return tuple(reversed(out))


# An ArrayRef built from (data, length) is read element by element up to this length (a tensor's rank).
MAX_ARRAYREF_READ = 16


@model("c10::IntArrayRef::IntArrayRef")
def intarray_ctor(interp, st, call, this, args):
    if len(args) == 1 and isinstance(args[0], StructV):
        return IntArrayV(tuple(args[0].fields[i] for i in sorted(args[0].fields)))
    if len(args) == 1 and isinstance(args[0], IntArrayV):
        return args[0]
    if len(args) == 1 and isinstance(args[0], RefV):
        v = interp.load(st, args[0].loc, call.span)
        if isinstance(v, IntV):
            return IntArrayV((ints.convert(v, T.INT64, call.span),))
    if len(args) == 1 and isinstance(args[0], IntV):
        return IntArrayV((ints.convert(args[0], T.INT64, call.span),))
    length = args[1].concrete() if len(args) == 2 and isinstance(args[1], IntV) else None
    if length is not None and isinstance(args[0], PtrV) and 0 <= length <= MAX_ARRAYREF_READ:
        # ArrayRef(data, length): the elements the pointer holds (a local array of dims).
        elem = T.strip_ref(args[0].pointee)
        elem = elem if isinstance(elem, T.IntType) else T.INT64
        items = []
        for i in range(length):
            v = interp.load(st, interp.deref(interp.ptr_add(args[0], const_int(i, T.INT64), call.span), elem,
                                             call.span), call.span)
            if not isinstance(v, IntV):
                break
            items.append(ints.convert(v, T.INT64, call.span))
        else:
            return IntArrayV(tuple(items))
    raise PathEnd("stuck", "an IntArrayRef the engine cannot read", call.span)


def _intarray(interp, st, this, call) -> IntArrayV:
    v = interp.load(st, interp.deref(this, T.OpaqueType("c10::IntArrayRef", "intarray"), call.span), call.span)
    if not isinstance(v, IntArrayV):
        raise PathEnd("stuck", "an IntArrayRef the engine cannot read", call.span)
    return v


def _same_shape(a: IntArrayV, b: IntArrayV) -> BoolV:
    """Two shapes are equal when they have as many dims and each pair is equal."""
    if len(a.items) != len(b.items):
        return BoolV(z3.BoolVal(False))
    terms = [ints.compare("==", x, y).term for x, y in zip(a.items, b.items)]
    return BoolV(z3.And(*terms) if terms else z3.BoolVal(True))


@model("c10::operator==", "c10::operator!=", "c10::IntArrayRef::equals")
def intarray_equal(interp, st, call, this, args):
    vals = [interp.load(st, v.loc, call.span) if isinstance(v, RefV) else v for v in args]
    a, b = (_intarray(interp, st, this, call), vals[0]) if this is not None else vals
    devices = same_device(call, a, b)
    if devices is not None:
        return devices
    if not (isinstance(a, IntArrayV) and isinstance(b, IntArrayV)):
        raise PathEnd("stuck", f"{call.name} on values the engine cannot read", call.span)
    eq = _same_shape(a, b)
    return BoolV(z3.Not(eq.term)) if call.name.endswith("!=") else eq


@model("at::Tensor::is_same_size")
def is_same_size(interp, st, call, this, args):
    other = args[0]
    if isinstance(other, RefV):
        other = interp.load(st, other.loc, call.span)
    if isinstance(other, OptionalV):
        other = other.value
    if not isinstance(other, TensorV):
        raise PathEnd("stuck", "is_same_size with a tensor the binding does not describe", call.span)
    return _same_shape(IntArrayV(tensor_of(interp, st, this, call).dims), IntArrayV(other.dims))


@model("c10::IntArrayRef::size")
def intarray_size(interp, st, call, this, args):
    return const_int(len(_intarray(interp, st, this, call).items), T.SIZE_T)


@model("c10::IntArrayRef::operator[]")
def intarray_at(interp, st, call, this, args):
    items = _intarray(interp, st, this, call).items
    i = _int_arg(args[0], call, "index")
    if not 0 <= i < len(items):
        if interp.ctx.zero_config:
            # The rank is zero-config's choice, one layout of several the launcher checks: this
            # path belongs to another layout (its shape check refuses this one).
            raise PathEnd("abort", f"IntArrayRef index {i} of a {len(items)}-d shape: a path of another layout",
                          call.span)
        raise PathEnd("stuck", f"IntArrayRef index {i} out of its {len(items)} elements", call.span)
    return items[i]


@model("c10::IntArrayRef::front", "c10::IntArrayRef::back")
def intarray_end(interp, st, call, this, args):
    items = _intarray(interp, st, this, call).items
    return items[0] if call.name.endswith("front") else items[-1]


def _new_tensor(interp, st, call, dims, dtype: str, name: str):
    dims = tuple(ints.convert(d, T.INT64, call.span) if d.ty.bits != 64 else d for d in dims)
    total = const_int(1, T.INT64)
    for d in dims:
        total = ints.arith("*", total, d, T.INT64, call.span)
    size = DTYPE_SIZES.get(dtype, 4)
    nbytes = ints.arith("*", total, const_int(size, T.INT64), T.INT64, call.span)
    _fits_in_memory(st, dims, size)
    for d in dims:
        if d.math is not None:
            from ..events import Sink
            interp.emit_sink(st, Sink(d, "alloc", call.span, interp.stack_spans(st), f"a dimension of the tensor {name}"))
    region = interp.new_region("global", name, nbytes, call.span, elem_size=size, align=256, note="allocated")
    return TensorV(name, dims, contiguous_strides(dims, call.span), dtype, region)


def _fits_in_memory(st, dims, esize: int) -> None:
    """Torch refuses a negative dimension and a size whose byte count overflows 64 bits (c10's
    storage-size check throws): no path goes on with such a tensor. The product is taken exactly,
    128 bits wide, since the 64-bit one it stands for wraps."""
    if all(d.concrete() is not None for d in dims):
        return
    wide = z3.BitVecVal(esize, 128)
    int_total = z3.IntVal(esize)
    for d in dims:
        wide = wide * z3.SignExt(64, d.bv)
        int_total = int_total * ints.I(d)
        st.assume(lia.CURRENT.register(d.bv >= 0, ints.I(d) >= 0))
    limit = (1 << 63) - 1
    st.assume(lia.CURRENT.register(z3.ULE(wide, limit), int_total <= limit))


def _lazy_like(interp, st, t: TensorV, dims, name: str, span) -> TensorV:
    """A new contiguous tensor with the (undecided) dtype of the zero-config tensor ``t``."""
    return _lazy_tensor(interp, st, t.lazy.code, t.lazy.esize, dims, t.dtype, name, span)


def _lazy_tensor(interp, st, code, esize, dims, dtype: str, name: str, span) -> TensorV:
    """A new contiguous tensor whose dtype (``code``, element size ``esize``) is still undecided.
    Torch's checks hold for it as for any allocation; with the element size open, the smallest
    one it may have bounds the byte count (sound for every dtype, and linear)."""
    from ..values import LazyDtype
    dims = tuple(ints.convert(d, T.INT64, span) if d.ty.bits != 64 else d for d in dims)
    extent = const_int(1, T.INT64)
    for d in dims:
        extent = ints.arith("*", extent, d, T.INT64, span)
    _fits_in_memory(st, dims, max(esize.lo, 1))
    region = interp.new_region("global", name, ints.arith("*", extent, esize, T.INT64, span), span, align=256,
                               note="allocated")
    return TensorV(name, dims, contiguous_strides(dims, span), dtype, region, lazy=LazyDtype(code, esize, extent))


def _options_dtype(v) -> str | None:
    if isinstance(v, OptionalV):  # the stable ABI passes the dtype as std::optional<ScalarType>
        v = v.value
    if isinstance(v, OpaqueV) and v.kind == "options" and isinstance(v.payload, str) and v.payload:
        return v.payload
    if isinstance(v, IntV) and v.concrete() is not None:
        return SCALAR_NAMES.get(v.concrete())
    return None


@model("at::empty", "at::zeros", "at::ones", "at::empty_strided")
def empty(interp, st, call, this, args):
    shape = args[0]
    if isinstance(shape, RefV):
        shape = interp.load(st, shape.loc, call.span)
    if not isinstance(shape, IntArrayV):
        raise PathEnd("stuck", f"{call.name} with a shape the engine cannot read", call.span)
    dtype = _options_dtype(args[-1]) if len(args) > 1 else None
    like = args[-1].payload if len(args) > 1 and isinstance(args[-1], OpaqueV) else None
    name = f"{call.name.rsplit('::', 1)[1]}@{call.span.line}"
    if dtype is None and isinstance(like, TensorV):
        return _lazy_like(interp, st, like, shape.items, name, call.span)
    # TensorOptions().dtype(x.dtype()), or the dtype itself, of a zero-config tensor: its dtype, undecided
    lazy = like if isinstance(like, tuple) else _lazy_dtype_arg(interp, args[-1]) if len(args) > 1 else None
    if dtype is None and lazy is not None:
        return _lazy_tensor(interp, st, lazy[0], lazy[1], shape.items, "", name, call.span)
    return _new_tensor(interp, st, call, shape.items, dtype or "float32", name)


def arg_tensor(interp, st, v, call) -> TensorV:
    """A tensor passed as an argument (the stable ops take theirs as the first one)."""
    if isinstance(v, RefV):
        v = interp.load(st, v.loc, call.span)
    if isinstance(v, OptionalV):
        v = v.value
    if not isinstance(v, TensorV):
        raise PathEnd("stuck", f"{call.name} of a tensor the binding does not describe", call.span)
    return v


@model("at::empty_like", "at::zeros_like", "torch::stable::empty_like")
def empty_like(interp, st, call, this, args):
    src = arg_tensor(interp, st, args[0], call)
    dtype = _options_dtype(args[1]) if len(args) > 1 else None
    name = f"{call.name.rsplit('::', 1)[1]}({src.name})"
    if dtype is None and src.lazy is not None:
        return _lazy_like(interp, st, src, src.dims, name, call.span)
    return _new_tensor(interp, st, call, src.dims, dtype or src.dtype, name)


@model("torch::stable::empty")
def stable_empty(interp, st, call, this, args):
    """empty(size, dtype = nullopt, layout, device, pin_memory, memory_format): float32 by default."""
    shape = _shape_arg(interp, st, args[0], call)
    lazy = _lazy_dtype_arg(interp, args[1] if len(args) > 1 else None)
    if lazy is not None:  # empty(..., other.scalar_type()) of a zero-config tensor: its dtype, undecided
        return _lazy_tensor(interp, st, lazy[0], lazy[1], shape.items, "", f"empty@{call.span.line}", call.span)
    dtype = _stable_dtype(args[1] if len(args) > 1 else None, call)
    return _new_tensor(interp, st, call, shape.items, dtype or "float32", f"empty@{call.span.line}")


def _lazy_dtype_arg(interp, v):
    """(code, element size) when a dtype argument is a zero-config tensor's undecided dtype."""
    if isinstance(v, OptionalV):
        v = v.value
    if isinstance(v, IntV) and v.concrete() is None and z3.is_const(v.bv):
        return interp.ctx.lazy_dtypes.get(str(v.bv))
    return None


def _stable_dtype(v, call) -> str | None:
    """The dtype of a stable op's std::optional<ScalarType> argument: None when absent. A dtype the
    path has not decided (a zero-config tensor's scalar_type()) is not guessed."""
    if isinstance(v, OptionalV) and v.value is None or v is None:
        return None
    dtype = _options_dtype(v)
    if dtype is None:
        raise PathEnd("stuck", f"{call.name} with a dtype the engine cannot read", call.span)
    return dtype


@model("torch::stable::new_empty", "torch::stable::new_zeros")
def stable_new_empty(interp, st, call, this, args):
    """new_empty(self, size, dtype = nullopt, ...): self's dtype unless one is given."""
    src = arg_tensor(interp, st, args[0], call)
    shape = _shape_arg(interp, st, args[1], call)
    dtype = _stable_dtype(args[2] if len(args) > 2 else None, call)
    name = f"{call.name.rsplit('::', 1)[1]}({src.name})@{call.span.line}"
    if dtype is None and src.lazy is not None:
        dims = tuple(ints.convert(d, T.INT64, call.span) if d.ty.bits != 64 else d for d in shape.items)
        return _lazy_like(interp, st, src, dims, name, call.span)
    return _new_tensor(interp, st, call, shape.items, dtype or src.dtype, name)


@model("torch::stable::view", "torch::stable::reshape")
def stable_view(interp, st, call, this, args):
    return _view(arg_tensor(interp, st, args[0], call), _shape_arg(interp, st, args[1], call), call)


@model("torch::stable::contiguous", "torch::stable::clone", "torch::stable::to")
def stable_copy(interp, st, call, this, args):
    return _copy_of(interp, st, arg_tensor(interp, st, args[0], call), call)


@model("torch::stable::flatten")
def stable_flatten(interp, st, call, this, args):
    return _flatten(arg_tensor(interp, st, args[0], call), call, args[1:], st)


@model("torch::stable::zero_", "torch::stable::fill_", "torch::stable::copy_")
def stable_in_place(interp, st, call, this, args):
    """In-place ops run on the device after the launcher's checks: the same tensor comes back."""
    return arg_tensor(interp, st, args[0], call)


@model("aoti_torch_get_current_cuda_stream", "torch_get_current_cuda_blas_handle")
def aoti_handle_out(interp, st, call, this, args):
    """The handle is written through the last argument: the default stream (a null handle)."""
    out = args[-1]
    interp.store(st, interp.deref(out, T.PtrType(T.VOID), call.span), interp.null_ptr(T.PtrType(T.VOID)), call.span)
    return fresh_result(interp, call, "aoti_error")


@model("aoti_torch_get_device_index", "aoti_torch_get_current_device_index")
def aoti_device_out(interp, st, call, this, args):
    """The device index is written through the last argument: device 0, as get_device() answers."""
    interp.store(st, interp.deref(args[-1], T.INT32, call.span), const_int(0, T.INT32), call.span)
    return fresh_result(interp, call, "aoti_error")


@model("at::Tensor::options")
def options(interp, st, call, this, args):
    t = tensor_of(interp, st, this, call)
    # A zero-config tensor's options carry the tensor: what they create shares its dtype symbol.
    return OpaqueV("options", payload=t if t.lazy is not None else t.dtype)


@model("c10::TensorOptions::TensorOptions", "c10::TensorOptions::dtype")
def options_dtype(interp, st, call, this, args):
    for a in args:
        if isinstance(a, IntV) and a.concrete() is not None:
            return OpaqueV("options", payload=SCALAR_NAMES.get(a.concrete()))
        lazy = _lazy_dtype_arg(interp, a)
        if lazy is not None:  # .dtype(x.dtype()) of a zero-config tensor: (its dtype code, element size)
            return OpaqueV("options", payload=lazy)
    if this is not None and call.name.endswith("::dtype") and not args:
        v = interp.load(st, interp.deref(this, T.OpaqueType("c10::TensorOptions", "options"), call.span), call.span)
        if isinstance(v.payload, TensorV):
            return v.payload.lazy.code
        if isinstance(v.payload, tuple):
            return v.payload[0]
        return const_int(SCALAR_TYPES.get(v.payload or "float32", 6), T.IntType(8, True, "c10::ScalarType"))
    return OpaqueV("options", payload=None)


@model("c10::TensorOptions::device", "c10::TensorOptions::requires_grad")
def options_same(interp, st, call, this, args):
    return interp.load(st, interp.deref(this, T.OpaqueType("c10::TensorOptions", "options"), call.span), call.span)


@model("at::cuda::getCurrentCUDAStream", "at::cuda::getStreamFromPool",
       "at::cuda::CUDAStream::stream", "at::cuda::CUDAStream::operator CUstream_st *",
       "at::cuda::CUDAGuard::CUDAGuard", "at::cuda::OptionalCUDAGuard::OptionalCUDAGuard",
       "at::cuda::OptionalCUDAGuard::set_index", "c10::Device::index",
       "torch::stable::Device::index", "torch::stable::accelerator::DeviceGuard::DeviceGuard",
       "torch::stable::accelerator::DeviceGuard::set_index", "torch::stable::accelerator::getCurrentStream",
       "at::cuda::getCurrentCUDABlasHandle", "at::cuda::getCurrentCUDABlasLtHandle",
       "TVMFFIEnvGetStream")
def opaque(interp, st, call, this, args):
    ty = T.strip_ref(call.ty)
    if isinstance(ty, T.BoolType):
        return BoolV(z3.BoolVal(True))
    if isinstance(ty, T.IntType):
        return const_int(0, ty)
    return OpaqueV("handle", ty)


@model("at::cuda::getCurrentDeviceProperties", "at::cuda::getDeviceProperties")
def device_properties(interp, st, call, this, args):
    ty = T.strip_ref(call.ty)
    pointee = ty.pointee if isinstance(ty, T.PtrType) else T.VOID
    region = interp.new_region("host", "cudaDeviceProp", max(pointee.size, 1), call.span)
    return PtrV(region, const_int(0, T.INT64), pointee)


@model("kernelvet_detail::check_failed", "__kernelvet_throw", "__assert_fail", "abort", "exit", "__trap",
       "std::abort", "std::exit", N.NORETURN_CALL)
def check_failed(interp, st, call, this, args):
    # A check a shim's macro makes (TVM_FFI_ICHECK) fails at the user's line that wrote it.
    span, _ = N.in_user_code(call.span, interp.stack_spans(st))
    text = " ".join(span.text.split())
    raise PathEnd("abort", f"`{text[:120]}` fails" if text else "a failing check", span, kind="check")



@model("at::Tensor::operator[]", "at::Tensor::select")
def select(interp, st, call, this, args):
    """``t[i]`` / ``t.select(dim, i)``: the view one index in; torch raises on an index out of range
    (negative ones count from the end), which ends the path safely."""
    t = tensor_of(interp, st, this, call)
    dim = 0 if call.name.endswith("operator[]") else _dim_index(t, _int_arg(args[0], call), st, call)
    idx = args[-1]
    if isinstance(idx, RefV):
        idx = interp.load(st, idx.loc, call.span)
    if not isinstance(idx, IntV) or not t.dims:
        raise PathEnd("stuck", f"{call.name} the engine cannot read", call.span)
    idx = ints.convert(idx, T.INT64, call.span) if idx.ty != T.INT64 else idx
    size = t.dims[dim]
    neg = ints.compare("<", idx, const_int(0, T.INT64)).term
    real = ints.ite(neg, ints.arith("+", idx, size, T.INT64, call.span), idx)
    inside = z3.And(ints.compare(">=", real, const_int(0, T.INT64)).term, ints.compare("<", real, size).term)
    if not interp.ctx.feasible(st.pc + (inside,)):
        raise PathEnd("abort", f"{call.name} with an index out of range raises", call.span)
    st.assume(inside)
    base = t.offset if t.offset is not None else const_int(0, T.INT64)
    offset = ints.arith("+", base, ints.arith("*", real, t.strides[dim], T.INT64, call.span), T.INT64, call.span)
    dims = t.dims[:dim] + t.dims[dim + 1:]
    strides = t.strides[:dim] + t.strides[dim + 1:]
    return TensorV(t.name, dims, strides, t.dtype, t.region, offset, t.lazy, t.cpu)


@model("at::Tensor::item")
def item(interp, st, call, this, args):
    """The one element of a tensor, read as its dtype and converted to the requested type."""
    t = tensor_of(interp, st, this, call)
    ret = T.strip_ref(call.ty)
    if t.lazy is not None or not isinstance(ret, T.IntType) or not t.dtype.startswith(("int", "uint")):
        v = fresh_result(interp, call, "item")
        if isinstance(v, IntV):  # an element of the input: its values are the binding's to bound
            interp.ctx.symbol(f"an element of `{t.name}`", v.bv, "load", v.ty.signed,
                              ("global", t.region.name, t.region.values is not None))
        return v
    bits = 8 * DTYPE_SIZES[t.dtype]
    ety = T.IntType(bits, not t.dtype.startswith("uint"), t.dtype)
    off = ints.arith("*", t.offset if t.offset is not None else const_int(0, T.INT64),
                     const_int(bits // 8, T.INT64), T.INT64, call.span)
    from ..values import Loc
    loc = Loc(t.region, off, ety)
    interp.emit_access(st, loc, bits // 8, False, call.span)
    v = interp.load(st, loc, call.span)
    return ints.convert(v, ret, call.span) if isinstance(v, IntV) and v.ty != ret else v
