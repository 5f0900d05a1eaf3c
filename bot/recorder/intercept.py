"""Recording custom-op calls of a PyTorch program: a TorchDispatchMode sees every op the dispatcher
runs, keeps those outside torch's own namespaces, and notes each argument's shape, strides, dtype,
scalar value, and for integer tensors with data, the smallest and largest element."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode

TORCH_NAMESPACES = frozenset({"aten", "prim", "prims", "profiler", "_c10d_functional", "c10d", "quantized",
                              "rngprims", "debugprims", "higher_order", "inductor", "_quantized", "_c10d_functional_autograd"})
_INT_DTYPES = {torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8}


@dataclass(frozen=True)
class TensorRec:
    shape: tuple
    strides: tuple
    contiguous: bool
    dtype: str
    lo: int | None = None  # integer tensors with data: the smallest element
    hi: int | None = None
    # 1-D integer tensors with data: how many elements are not negative (padding such as a slot
    # mapping's -1 aside), and how many different values they hold.
    entries: int = 0
    different: int = 0


@dataclass(frozen=True)
class ScalarRec:
    value: object  # int, float or bool


@dataclass(frozen=True)
class AbsentRec:
    pass


@dataclass
class Call:
    op: str  # namespace::name
    args: list = field(default_factory=list)  # (schema name, TensorRec | ScalarRec | AbsentRec | None)


def dtype_name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


def describe(value):
    if isinstance(value, torch.Tensor):
        lo = hi = None
        entries = different = 0
        if value.dtype in _INT_DTYPES and value.device.type != "meta" and value.numel() > 0:
            lo, hi = int(value.min()), int(value.max())
            if value.dim() == 1:
                kept = value[value >= 0]
                entries, different = int(kept.numel()), int(torch.unique(kept).numel())
        return TensorRec(tuple(int(d) for d in value.shape), tuple(int(s) for s in value.stride()),
                         value.is_contiguous(), dtype_name(value.dtype), lo, hi, entries, different)
    if value is None:
        return AbsentRec()
    if isinstance(value, (bool, int, float)):
        return ScalarRec(value)
    return None  # strings, lists, devices: not bound


class OpRecorder(TorchDispatchMode):
    """Records calls of ops outside torch's namespaces (or only of ``namespaces`` when given). With
    ``execute=False``, recorded ops that return nothing are not run: a program can call ops whose
    kernels this machine lacks (CUDA-only ops on meta tensors)."""

    def __init__(self, namespaces=None, execute: bool = True):
        super().__init__()
        self.namespaces = set(namespaces) if namespaces else None
        self.execute = execute
        self.calls: list[Call] = []

    def wanted(self, ns: str) -> bool:
        return ns in self.namespaces if self.namespaces is not None else ns not in TORCH_NAMESPACES

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        ns = getattr(func, "namespace", "aten")
        if self.wanted(ns):
            schema = func._schema
            values = list(args) + [None] * (len(schema.arguments) - len(args))
            for i, a in enumerate(schema.arguments):
                if a.name in kwargs:
                    values[i] = kwargs[a.name]
                elif i >= len(args) and a.has_default_value():
                    values[i] = a.default_value
            name = schema.name.split("::", 1)[-1]
            self.calls.append(Call(f"{ns}::{name}", [(a.name, describe(v)) for a, v in zip(schema.arguments, values)]))
            if not self.execute and not schema.returns:
                return None
        return func(*args, **kwargs)
