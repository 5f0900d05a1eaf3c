"""Runtime values of the symbolic engine.

Integers carry their machine value (a z3 bit-vector of the C width), and, when some operation on the
way may have wrapped, their exact mathematical value (a wide bit-vector) and the wrap sites that may
have made the two differ. An *overflow finding* is a place where machine and mathematical value of
an address, size, bound or launch dimension can differ.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import z3

from ..kir import nodes as N
from ..kir import types as T

MATH_BITS = 128  # wide enough for every exact intermediate of bounded inference shapes


class Val:
    __slots__ = ()


@dataclass(frozen=True, eq=False)
class WrapSite:
    """An operation that may wrap: ``wraps`` holds exactly when its machine result differs from the
    exact result of its (machine) operands."""

    id: int
    kind: str  # '*', '+', '-', '<<', 'neg', 'conversion'
    span: N.Span
    ctype: str  # the C type the operation is done in, e.g. 'unsigned int'
    from_type: str | None
    wraps: z3.BoolRef
    stack: tuple[N.Span, ...] = ()
    machine: z3.BitVecRef | None = None  # the result in the C type
    exact: z3.BitVecRef | None = None  # the exact result, wide
    signed: bool = True  # how to read ``machine``
    iwraps: z3.BoolRef | None = None  # ``wraps`` over integers: the exact result leaves the type


_site_ids = itertools.count(1)


def new_site_id() -> int:
    return next(_site_ids)


@dataclass(frozen=True, eq=False)
class IntV(Val):
    ty: T.IntType
    bv: z3.BitVecRef
    lo: int
    hi: int
    math: z3.BitVecRef | None = None
    sites: frozenset = frozenset()
    scaled: tuple | None = None  # (base IntV, factor int or IntV): this value is exactly base * factor
    iv: z3.ArithRef | None = None  # the exact value as an integer term (lia.py); None: not followed
    # The machine value as an integer term, where it is not ``iv`` reduced into the type (ints.
    # machine_int): a value that may have wrapped in a narrower type, read wider.
    machine_iv: z3.ArithRef | None = None

    @property
    def exact(self) -> z3.BitVecRef:
        """The mathematical value, MATH_BITS wide."""
        if self.math is not None:
            return self.math
        return widen(self.bv, self.ty.signed, MATH_BITS)

    def concrete(self) -> int | None:
        return self.lo if self.lo == self.hi else None


@dataclass(frozen=True, eq=False)
class BoolV(Val):
    term: z3.BoolRef


@dataclass(frozen=True, eq=False)
class FloatV(Val):
    ty: T.Type
    # Where the value came from, when two values from the same source are equal (the race check's
    # benign writes): ("mem", region id, byte offset term, whose copy: the block's (and, for a
    # local array, the thread's) indices, () for memory all threads share), ("lit", source text),
    # ("int", term).
    source: tuple | None = None
    # The value itself, where every step to it is exact in the type (small integers and their sums
    # and products: `2 * sizeof(float)` held in a float, `(int)sqrtf(16)` on the host): see exact_float.
    exact: float | None = None
    of_int: object = None  # the IntV this float was converted from (a comparison with an exact float)


def exact_float(x, ty) -> float | None:
    """``x`` when the float type holds it exactly and it is an integer small enough that every
    float operation kernelvet evaluates on it (+, -, *, and on the host / and sqrt) is exact in
    IEEE arithmetic and under --use_fast_math alike; else None."""
    if x is None or x != x or x in (float("inf"), float("-inf")):
        return None
    limit = 1 << (24 if getattr(ty, "bits", 32) <= 32 else 53)
    if float(x) != int(x) or abs(int(x)) >= limit:
        return None
    return float(x)


# Region.note of a region that stands for an extent only (a CUDA array's row or column, which a
# surface access must stay inside), not for memory threads share: no race is asked about it.
EXTENT_ONLY = "extent-only"


@dataclass(frozen=True, eq=False)
class Region:
    """A memory object. ``size`` is its size in bytes as a 64-bit term; ``lo_size`` a lower bound."""

    id: int
    kind: str  # global | shared | dynamic_shared | local | param | constant | host | null
    name: str
    size: z3.BitVecRef
    size_lo: int
    size_hi: int
    span: N.Span | None = None
    elem_size: int = 0
    tracked: bool = False  # contents tracked per thread (locals, parameters)
    note: str = ""
    values: tuple | None = None  # (lo, hi) IntV bounds of every integer element (index tensors)
    align: int = 16  # alignment of the object's base address
    size_iv: z3.ArithRef | None = None  # the size as an integer term (lia.py)
    unstated: bool = False  # contents the binding says no one observed: findings resting on them wait

    @property
    def size_concrete(self) -> int | None:
        return self.size_lo if self.size_lo == self.size_hi else None


@dataclass(frozen=True, eq=False)
class PtrV(Val):
    region: Region
    off: IntV  # byte offset, int64
    pointee: T.Type


@dataclass(frozen=True, eq=False)
class MultiPtrV(Val):
    """A pointer that names one of several objects, each under its condition (the conditions are
    disjoint and cover the path): the join of paths, or ``c ? a : b``."""

    alts: tuple  # ((z3.BoolRef, PtrV), ...)
    pointee: T.Type


@dataclass(frozen=True, eq=False)
class StructV(Val):
    ty: T.Type
    fields: dict  # name -> Val

    def leaves(self, name: str):
        """(``name.field`` path, value) of every integer and flag inside, nested structs and
        arrays included (an array's elements are named by index: ``name.dims.0``)."""
        for field, v in self.fields.items():
            if isinstance(v, StructV):
                yield from v.leaves(f"{name}.{field}")
            elif isinstance(v, (IntV, BoolV)):
                yield f"{name}.{field}", v


@dataclass(frozen=True, eq=False)
class TensorV(Val):
    name: str
    dims: tuple  # IntV (int64)
    strides: tuple  # IntV (int64)
    dtype: str
    region: Region
    offset: IntV | None = None  # element offset of a view into ``region``
    lazy: "LazyDtype | None" = None  # zero-config: the dtype is a symbol the op's own code decides
    cpu: object = None  # a z3 Bool: the tensor is in host memory (None: on the GPU)


@dataclass(eq=False)
class LazyDtype:
    """A tensor whose dtype the binding leaves open. ``code`` is its c10::ScalarType as a symbol
    (a dispatch switch forks on it, ``data_ptr<T>()`` pins it); ``esize`` its element size, tied to
    ``code``. Storage is one region per element size, created when a path first learns it, so sizes
    in bytes stay linear (extent * 2, never extent * esize)."""

    code: "IntV"
    esize: "IntV"
    extent: "IntV"  # elements the storage holds
    regions: dict = field(default_factory=dict)  # element size -> Region


@dataclass(frozen=True, eq=False)
class OptionalV(Val):
    value: Val | None
    name: str = ""
    present: z3.BoolRef | None = None  # symbolic presence (the binding says the argument may be absent)


@dataclass(frozen=True, eq=False)
class ClosureV(Val):
    key: str
    frame: int  # id of the frame it was created in (captures by reference)


@dataclass(frozen=True, eq=False)
class FuncV(Val):
    key: str | None
    name: str


@dataclass(frozen=True, eq=False)
class IntArrayV(Val):
    items: tuple  # IntV


@dataclass(frozen=True, eq=False)
class OpaqueV(Val):
    kind: str
    ty: T.Type | None = None
    payload: object = None


@dataclass(frozen=True, eq=False)
class Loc:
    """An lvalue: ``ty`` at byte offset ``off`` of ``region``."""

    region: Region
    off: IntV
    ty: T.Type
    within: tuple | None = None  # (byte offset IntV, count, element size): the sub-array indexed (a row of a 2-D array)


@dataclass(frozen=True, eq=False)
class MultiLoc:
    alts: tuple  # ((z3.BoolRef, Loc), ...)
    ty: T.Type


@dataclass(frozen=True, eq=False)
class RefV(Val):
    """The value of a reference variable: the location it is bound to."""

    loc: "Loc | MultiLoc"


def widen(bv: z3.BitVecRef, signed: bool, bits: int) -> z3.BitVecRef:
    extra = bits - bv.size()
    if extra <= 0:
        return bv if extra == 0 else z3.Extract(bits - 1, 0, bv)
    return z3.SignExt(extra, bv) if signed else z3.ZeroExt(extra, bv)


def const_int(value: int, ty: T.IntType) -> IntV:
    mod = value % (1 << ty.bits)
    if ty.signed and mod >= 1 << (ty.bits - 1):
        mod -= 1 << ty.bits
    return IntV(ty, z3.BitVecVal(mod % (1 << ty.bits), ty.bits), mod, mod, iv=z3.IntVal(mod))


def fresh_int(name: str, ty: T.IntType, lo: int | None = None, hi: int | None = None) -> IntV:
    """A fresh machine integer and its integer twin, both bounded by [lo, hi] (default: the type)."""
    from . import lia
    lo = ty.min if lo is None else max(lo, ty.min)
    hi = ty.max if hi is None else min(hi, ty.max)
    bv = z3.BitVec(name, ty.bits)
    return IntV(ty, bv, lo, hi, iv=lia.CURRENT.var(name, lo, hi))


def bool_of(v: Val) -> z3.BoolRef:
    if isinstance(v, BoolV):
        return v.term
    if isinstance(v, IntV):
        return v.bv != 0
    if isinstance(v, PtrV):
        return z3.BoolVal(v.region.kind != "null")
    raise TypeError(f"no truth value for {type(v).__name__}")


@dataclass
class Counter:
    n: itertools.count = field(default_factory=lambda: itertools.count(1))

    def __call__(self) -> int:
        return next(self.n)
