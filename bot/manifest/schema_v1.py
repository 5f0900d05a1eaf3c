"""The manifest schema, version 1 (docs/manifest.md). Shorthands are expanded before validation, so
every mistake is reported against one model with the keys the user can write."""
from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from .schema import Expr, Number, Options, ReturnRange, _dtype

DEFAULT_MAX_NUM_BATCHED_TOKENS = 9_000_000


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Dim(Strict):
    """A user dim: an integer range (bounds may use model fields) or a set of values."""

    min: Expr | None = None
    max: Expr | None = None
    values: list[StrictInt] | None = Field(None, description="the only values it takes, e.g. [16, 32, 64]")

    @model_validator(mode="after")
    def range_or_set(self):
        if self.values is not None:
            if self.min is not None or self.max is not None:
                raise ValueError("give either 'values' or 'min'/'max', not both")
            if not self.values:
                raise ValueError("'values' needs at least one value")
        elif self.min is None or self.max is None:
            raise ValueError("a user dim needs 'min' and 'max' (or 'values')")
        elif isinstance(self.min, int) and isinstance(self.max, int) and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        for v in [self.min, self.max, *(self.values or ())]:
            if isinstance(v, int) and not 0 <= v <= 2**63 - 1:
                raise ValueError(f"{v} is not a size: user dims range over 0 .. 2^63 - 1")
        return self


class Model(Strict):
    config: str | None = Field(None, description="a config.json path or glob, relative to the manifest")
    name: str | None = None
    fields: dict[str, Number] = Field(default_factory=dict)
    dtype: str | None = None
    dtypes: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def shorthand(cls, v: Any):
        return {"config": v} if isinstance(v, str) else v

    @model_validator(mode="after")
    def has_source(self):
        if self.config is None and not self.fields:
            raise ValueError("a model needs 'config' (a config.json path or glob) or 'fields' (inline values)")
        if self.config is None and self.name is None:
            raise ValueError("an inline model needs a 'name'")
        if self.dtype is not None and self.dtypes is not None:
            raise ValueError("give 'dtype' or 'dtypes', not both")
        return self

    @field_validator("dtype")
    @classmethod
    def _one_dtype(cls, v):
        return _dtype(v)

    @field_validator("dtypes")
    @classmethod
    def _dtypes(cls, v):
        return None if v is None else [_dtype(x) for x in v]


def _shorthand(v: Any, list_key: str):
    """The short forms an argument and a struct member share: a list (a tensor's shape, an array
    member's entries), `absent`, `any` (or nothing), a number or an expression."""
    if isinstance(v, list):
        return {list_key: v}
    if v == "absent":
        return {"absent": True}
    if v == "any" or v is None:
        return {"any": True}
    if isinstance(v, bool):
        return {"value": int(v)}
    if isinstance(v, (str, int, float)):
        return {"value": v}
    return v


class Member(Strict):
    """One member of a struct that an argument's ``fields`` describes: a number, an array's entries,
    a struct (by value, or the one a pointer member points to), a pointer member's memory, a null
    pointer, or any value."""

    value: Expr | None = None
    items: list["Member"] | None = Field(None, description="an array member's entries, first to last "
                                         "(ne: [hidden, tokens, 1, 1])")
    fields: dict[str, "Member"] | None = Field(None, description="a struct member, or the struct a pointer member "
                                               "points to (src: [{fields: {...}}])")
    elements: Expr | None = Field(None, description="a pointer member's memory, in elements of 'dtype'")
    bytes: Expr | None = Field(None, description="a pointer member's memory, in bytes")
    dtype: str | None = None
    values: list[Expr] | None = Field(None, description="[min, max] of every element of a pointer member's memory")
    absent: bool = Field(False, description="a null pointer")
    any: bool = False

    @model_validator(mode="before")
    @classmethod
    def shorthand(cls, v: Any):
        return _shorthand("absent" if v == "null" else v, "items")

    @field_validator("dtype")
    @classmethod
    def _dt(cls, v):
        return _dtype(v)

    @model_validator(mode="after")
    def one_kind(self):
        kinds = [k for k, on in (("value", self.value is not None), ("items", self.items is not None),
                                 ("fields", self.fields is not None),
                                 ("elements or bytes", self.elements is not None or self.bytes is not None),
                                 ("absent", self.absent), ("any", self.any)) if on]
        if len(kinds) != 1:
            raise ValueError("a member is one of: a value, 'items' (an array's entries), 'fields' (a struct), "
                             "'elements' or 'bytes' (a pointer's memory), 'absent' (a null pointer), 'any'"
                             + (f"; this one has {', '.join(kinds)}" if kinds else ""))
        if self.elements is not None and self.bytes is not None:
            raise ValueError("give a pointer member's memory as 'elements' (with 'dtype') or as 'bytes', not both")
        if self.elements is not None and self.dtype is None:
            raise ValueError("'elements' needs a 'dtype' (or give the size in 'bytes')")
        if (self.dtype is not None or self.values is not None) and kinds != ["elements or bytes"]:
            raise ValueError("'dtype' and 'values' describe a pointer member's memory ('elements' or 'bytes')")
        if self.values is not None and len(self.values) != 2:
            raise ValueError("values must be [min, max]")
        return self


class Arg(Strict):
    """One launcher argument: a tensor (shape ...), a scalar (value), a struct (fields), or absent."""

    shape: list[Expr] | None = None
    dtype: str | None = None
    strides: list[Expr] | None = None
    values: list[Expr] | None = Field(None, description="[min, max], inclusive, bounding every element")
    nondecreasing: bool = Field(False, description="a 1-D index tensor whose elements never decrease "
                                "(cumulative lengths)")
    distinct: bool = Field(False, description="no two elements hold the same value (a slot mapping: one "
                           "cache slot per token)")
    unknown_values: bool = Field(False, description="no one observed the contents (a recording on the meta "
                                 "device): a finding resting on them is inconclusive (needs-values) until "
                                 "'values' states their range")
    optional: bool = Field(False, description="verify the op with the tensor present and with it absent")
    device: Literal["cuda", "cpu"] | None = Field(None, description="where the tensor lives (default cuda)")
    value: Expr | None = None
    elements: Expr | None = Field(None, description="a raw pointer's allocation, in elements of 'dtype' (bare kernels)")
    bytes: Expr | None = Field(None, description="a raw pointer's allocation, in bytes (bare kernels)")
    string: str | None = Field(None, description="a string argument's value, as the caller passes it ('fp8')")
    absent: bool = False
    any: bool = False
    fields: dict[str, Member] | None = Field(None, description="a struct the op takes through a pointer "
                                             "(llama.cpp's `ggml_tensor * dst`) or by value: its members by name; "
                                             "a member left out is any value")

    @model_validator(mode="before")
    @classmethod
    def shorthand(cls, v: Any):
        return _shorthand(v, "shape")

    @field_validator("dtype")
    @classmethod
    def _dt(cls, v):
        return _dtype(v)

    @model_validator(mode="after")
    def consistent(self):
        if self.fields is not None:
            extra = [k for k, v in self.model_dump(exclude={"fields"}, exclude_defaults=True).items()]
            if extra:
                raise ValueError(f"a struct ('fields') cannot also have {', '.join(repr(k) for k in extra)}")
            return self
        if self.elements is not None or self.bytes is not None:
            if self.elements is not None and self.bytes is not None:
                raise ValueError("give a buffer's size as 'elements' (with 'dtype') or as 'bytes', not both")
            if self.elements is not None and self.dtype is None:
                raise ValueError("'elements' needs a 'dtype' (or give the size in 'bytes')")
            extra = [k for k in ("shape", "strides", "device", "value", "string") if getattr(self, k) is not None]
            extra += [k for k in ("optional", "nondecreasing", "distinct", "absent") if getattr(self, k)]
            if extra:
                raise ValueError(f"a buffer ('elements' or 'bytes') cannot also have {', '.join(repr(k) for k in extra)}")
            if self.values is not None and len(self.values) != 2:
                raise ValueError("values must be [min, max]")
            return self
        tensor_keys = [k for k in ("dtype", "strides", "values", "device") if getattr(self, k) is not None]
        tensor_keys += [k for k in ("optional", "nondecreasing", "distinct") if getattr(self, k)]
        if self.shape is None:
            if tensor_keys:
                raise ValueError(f"a tensor needs a 'shape' (it has {', '.join(repr(k) for k in tensor_keys)})")
        else:
            if self.value is not None or self.string is not None or self.absent or self.any:
                raise ValueError("a tensor ('shape') cannot also have 'value', 'string', 'absent' or 'any'")
            if self.strides is not None and len(self.strides) != len(self.shape):
                raise ValueError(f"{len(self.strides)} strides for {len(self.shape)} dimensions")
            if self.values is not None and len(self.values) != 2:
                raise ValueError("values must be [min, max]")
            if self.nondecreasing and len(self.shape) != 1:
                raise ValueError(f"'nondecreasing' is for a 1-D tensor (this one has {len(self.shape)} dimensions)")
        if self.shape is None and sum([self.value is not None, self.string is not None, self.absent, self.any]) > 1:
            raise ValueError("give one of 'value', 'string', 'absent' or 'any'")
        return self

    @property
    def is_tensor(self) -> bool:
        return self.shape is not None

    @property
    def is_buffer(self) -> bool:
        return self.elements is not None or self.bytes is not None


class Launch(Strict):
    """A bare kernel's launch configuration: up to three extents each, as expressions."""

    grid: list[Expr] = Field(min_length=1, max_length=3)
    block: list[Expr] = Field(min_length=1, max_length=3)
    shared_bytes: Expr = Field(0, description="dynamic shared memory of the launch, in bytes")

    @model_validator(mode="before")
    @classmethod
    def shorthand(cls, v: Any):
        if isinstance(v, dict):
            v = dict(v)
            for k in ("grid", "block"):
                if isinstance(v.get(k), (str, int)) and not isinstance(v.get(k), bool):
                    v[k] = [v[k]]
        return v


class Op(Strict):
    op: str | None = Field(None, description="the registered op name (torch.ops.<ns>.<op>); finds file and launcher")
    kernel: str | None = Field(None, description="a __global__ function launched by no code of the repository "
                               "(a kernel library): the op is one launch of it, with template arguments if any "
                               "('scale_rows<float, 4>')")
    launch: Launch | None = Field(None, description="a bare kernel's grid, block and dynamic shared memory")
    name: str | None = None
    file: str | None = None
    launcher: str | None = None
    models: Union[list[str], str] = "all"
    dtypes: list[str] | None = None
    args: dict[str, Arg] = Field(default_factory=dict)
    relations: list[str] = Field(default_factory=list, description="conditions over 1-D index tensors' elements "
                                 "that hold for every i: 'rowStarts[i] <= rowEnds[i]'")

    @model_validator(mode="after")
    def located(self):
        if self.kernel is not None or self.launch is not None:
            if self.kernel is None or self.launch is None:
                raise ValueError("a bare kernel needs both 'kernel' (its name) and 'launch' (grid, block)")
            if self.op is not None or self.launcher is not None:
                raise ValueError("'kernel' names the op by its kernel: it cannot also have 'op' or 'launcher'")
            return self
        if self.op is None and self.file is None:
            raise ValueError("an op needs 'op' (its registered name) or 'file' (where its launcher is defined)")
        if self.op is None and self.name is None and self.launcher is None:
            raise ValueError("an op given by 'file' needs a 'name' or a 'launcher'")
        return self

    @field_validator("dtypes")
    @classmethod
    def known_dtypes(cls, v):
        return None if v is None else [_dtype(x) for x in v]

    @property
    def display(self) -> str:
        return self.name or self.op or self.launcher or self.kernel


class Manifest(Strict):
    version: int
    include_dirs: list[str] = Field(default_factory=list)
    defines: dict[str, str] = Field(default_factory=dict)
    arch: str = "sm_80"
    models: list[Model]
    dtypes: list[str] = Field(default_factory=lambda: ["bfloat16"])
    user_dims: dict[str, Dim] = Field(default_factory=dict)
    derived: dict[str, Expr] = Field(default_factory=dict)
    max_num_batched_tokens: StrictInt | None = Field(DEFAULT_MAX_NUM_BATCHED_TOKENS, ge=1, le=2**63 - 1)
    constraints: list[str] = Field(default_factory=list)
    ops: list[Op]
    options: Options = Field(default_factory=Options)
    returns: dict[str, ReturnRange] = Field(default_factory=dict)

    @field_validator("version")
    @classmethod
    def one(cls, v):
        if v != 1:
            raise ValueError(f"this is a version 1 manifest reader, got version {v}")
        return v

    @field_validator("dtypes")
    @classmethod
    def known_dtypes(cls, v):
        return [_dtype(x) for x in v]


KNOWN_KEYS = sorted({f for cls in (Manifest, Model, Arg, Op, Dim, Options, ReturnRange) for f in cls.model_fields})
