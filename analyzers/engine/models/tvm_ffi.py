"""TVM-FFI's tensors (FlashInfer's op layer): ``tvm::ffi::TensorView`` and ``Tensor`` are tensors
as ``at::Tensor`` is. Their sizes, strides and data pointers share at::Tensor's models
(torch.py); here are what TVM-FFI describes in DLPack's terms: the dtype as a DLDataType and the
device as a DLDevice."""
from __future__ import annotations

import z3

from ...kir import types as T
from ..values import IntV, StructV, const_int
from . import model
from .torch import SCALAR_TYPES, _loaded, _on_cpu, tensor_of

# torch's dtype -> DLPack's (code, bits, lanes); the codes are the shim's (dlpack/dlpack.h).
DL_CODES = {"int": 0, "uint": 1, "float": 2, "bfloat": 4, "bool": 6, "float8_e4m3fn": 10, "float8_e4m3fnuz": 11,
            "float8_e5m2": 12, "float8_e5m2fnuz": 13, "float8_e8m0fnu": 14, "float4_e2m1fn": 17}
DL_TYPES = {
    "uint8": ("uint", 8, 1), "uint16": ("uint", 16, 1), "uint32": ("uint", 32, 1), "uint64": ("uint", 64, 1),
    "int8": ("int", 8, 1), "int16": ("int", 16, 1), "int32": ("int", 32, 1), "int64": ("int", 64, 1),
    "float16": ("float", 16, 1), "float32": ("float", 32, 1), "float64": ("float", 64, 1),
    "bfloat16": ("bfloat", 16, 1), "bool": ("bool", 8, 1), "float8_e4m3fn": ("float8_e4m3fn", 8, 1),
    "float8_e4m3fnuz": ("float8_e4m3fnuz", 8, 1), "float8_e5m2": ("float8_e5m2", 8, 1),
    "float8_e5m2fnuz": ("float8_e5m2fnuz", 8, 1), "float8_e8m0fnu": ("float8_e8m0fnu", 8, 1),
    "float4_e2m1fn_x2": ("float4_e2m1fn", 4, 2),
}
DL_CPU, DL_CUDA = 1, 2


def _field(ty: T.Type, name: str) -> T.IntType:
    for f in ty.fields if isinstance(ty, T.StructType) else ():
        if f.name == name and isinstance(f.type, T.IntType):
            return f.type
    return T.IntType(8, False, "uint8_t")


@model("tvm::ffi::TensorView::dtype", "tvm::ffi::Tensor::dtype")
def dl_dtype(interp, st, call, this, args):
    """The tensor's dtype as DLPack describes it: {code, bits, lanes}, a function of its torch dtype
    (which a zero-config tensor leaves open until a dispatch decides it)."""
    t = tensor_of(interp, st, this, call)
    ty = T.strip_ref(call.ty)
    out = {}
    for i, key in enumerate(("code", "bits", "lanes")):
        fty = _field(ty, key)
        table = {name: (DL_CODES[kind], bits, lanes)[i] for name, (kind, bits, lanes) in DL_TYPES.items()}
        if t.lazy is None:
            out[key] = const_int(table.get(t.dtype, 0), fty)
            continue
        term = z3.BitVecVal(0, fty.bits)  # a dtype DLPack has no code for
        for name, value in table.items():
            if name in SCALAR_TYPES:
                term = z3.If(t.lazy.code.bv == SCALAR_TYPES[name], z3.BitVecVal(value, fty.bits), term)
        out[key] = IntV(fty, term, 0, max(table.values()))
    return StructV(ty, out)


@model("tvm::ffi::TensorView::device", "tvm::ffi::Tensor::device")
def dl_device(interp, st, call, this, args):
    """{device_type, device_id}: kDLCUDA on GPU 0, kDLCPU for a host tensor."""
    t = _loaded(interp, st, this, call)
    ty = T.strip_ref(call.ty)
    dty, ity = _field(ty, "device_type"), _field(ty, "device_id")
    cpu = _on_cpu(t)
    kind = IntV(dty, z3.If(cpu, z3.BitVecVal(DL_CPU, dty.bits), z3.BitVecVal(DL_CUDA, dty.bits)), DL_CPU, DL_CUDA)
    return StructV(ty, {"device_type": kind, "device_id": const_int(0, ity)})


@model("tvm::ffi::TensorView::TensorView")
def tensor_view(interp, st, call, this, args):
    """A view of an owning tvm::ffi::Tensor: the same tensor."""
    return _loaded(interp, st, args[0], call)
