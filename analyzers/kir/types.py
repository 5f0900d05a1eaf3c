"""KIR types: C/C++ types reduced to what memory-safety needs (width, signedness, layout).

Types are immutable and hashable; the structural IR hash includes them.
"""
from __future__ import annotations

from dataclasses import dataclass, field


class Type:
    size: int = 0  # bytes; 0 when unknown or not an object type
    align: int = 1

    @property
    def name(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__


@dataclass(frozen=True)
class VoidType(Type):
    size: int = 0
    align: int = 1

    @property
    def name(self) -> str:
        return "void"


@dataclass(frozen=True)
class BoolType(Type):
    size: int = 1
    align: int = 1

    @property
    def name(self) -> str:
        return "bool"


@dataclass(frozen=True)
class IntType(Type):
    bits: int = 32
    signed: bool = True
    spelling: str = "int"
    # An enum's type: its lowest and highest enumerator (zero-config ranges an enum-typed field or
    # argument to them, as the code that assigns it does); None for any other integer.
    enum_range: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def size(self) -> int:  # type: ignore[override]
        return self.bits // 8

    @property
    def align(self) -> int:  # type: ignore[override]
        return self.bits // 8

    @property
    def name(self) -> str:
        return self.spelling

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1


@dataclass(frozen=True)
class FloatType(Type):
    """Floating-point values are opaque to the engine; only their size matters."""

    bits: int = 32
    spelling: str = "float"

    @property
    def size(self) -> int:  # type: ignore[override]
        return self.bits // 8

    @property
    def align(self) -> int:  # type: ignore[override]
        return self.bits // 8

    @property
    def name(self) -> str:
        return self.spelling


@dataclass(frozen=True)
class PtrType(Type):
    pointee: Type = field(default_factory=VoidType)
    size: int = 8
    align: int = 8
    const: bool = False  # the pointee is const-qualified

    @property
    def name(self) -> str:
        return f"{self.pointee.name} *"


@dataclass(frozen=True)
class RefType(Type):
    """An lvalue or rvalue reference: a variable of this type names a location."""

    pointee: Type = field(default_factory=VoidType)
    size: int = 8
    align: int = 8
    const: bool = False

    @property
    def name(self) -> str:
        return f"{self.pointee.name} &"


@dataclass(frozen=True)
class ArrayType(Type):
    elem: Type = field(default_factory=VoidType)
    count: int | None = None  # None: incomplete (extern __shared__ T smem[])

    @property
    def size(self) -> int:  # type: ignore[override]
        return self.elem.size * (self.count or 0)

    @property
    def align(self) -> int:  # type: ignore[override]
        return self.elem.align

    @property
    def name(self) -> str:
        return f"{self.elem.name}[{'' if self.count is None else self.count}]"


@dataclass(frozen=True)
class Field:
    name: str
    type: Type
    offset: int  # bytes


@dataclass(frozen=True)
class StructType(Type):
    spelling: str = ""
    fields: tuple[Field, ...] = ()
    size: int = 0
    align: int = 1

    @property
    def name(self) -> str:
        return self.spelling

    def field(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


@dataclass(frozen=True)
class OpaqueType(Type):
    """A class the engine models as a whole (at::Tensor, std::optional<Tensor>, streams, guards),
    or one it cannot look into. ``kind`` selects the model."""

    spelling: str = ""
    kind: str = "opaque"
    size: int = 0
    align: int = 1
    # An optional of a scalar (std::optional<int64_t>, TVM-FFI's Optional<double>): the scalar's
    # type; None for an optional tensor (or of anything else the engine models as a whole).
    payload: "Type | None" = None

    @property
    def name(self) -> str:
        return self.spelling


@dataclass(frozen=True)
class ClosureType(Type):
    """A lambda's closure type; ``key`` names its call operator in the program."""

    key: str = ""
    size: int = 0
    align: int = 1

    @property
    def name(self) -> str:
        return "lambda"


@dataclass(frozen=True)
class FuncType(Type):
    spelling: str = ""

    @property
    def name(self) -> str:
        return self.spelling


# The integer types the engine creates on its own.
BOOL = BoolType()
VOID = VoidType()
UINT8 = IntType(8, False, "unsigned char")
INT32 = IntType(32, True, "int")
UINT32 = IntType(32, False, "unsigned int")
INT64 = IntType(64, True, "long")
UINT64 = IntType(64, False, "unsigned long")
SIZE_T = IntType(64, False, "size_t")
FLOAT = FloatType(32, "float")


def strip_ref(t: Type) -> Type:
    return t.pointee if isinstance(t, RefType) else t


def is_integral(t: Type) -> bool:
    return isinstance(t, (IntType, BoolType))


def only_floats(t: Type) -> bool:
    """A float, or a struct or array made of floats alone (__half2, float4): values the engine keeps
    opaque, whatever is written into them."""
    if isinstance(t, FloatType):
        return True
    if isinstance(t, StructType):
        return bool(t.fields) and all(only_floats(f.type) for f in t.fields)
    if isinstance(t, ArrayType):
        return only_floats(t.elem)
    return False


def is_scalar(t: Type) -> bool:
    return isinstance(t, (IntType, BoolType, FloatType, PtrType))
