"""The manifest schema (version 0), validated with pydantic. docs/manifest.md describes it for users."""
from __future__ import annotations

from typing import Literal, Union

from pydantic import (BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, field_validator,
                      model_validator)

from analyzers.binding import DTYPE_SIZES, canonical_dtype
from analyzers.limits import WITNESS_MEMORY_GIB

Number = Union[StrictInt, StrictFloat]
# Sizes, strides, bounds and dims: a boolean is never one (YAML's true would become 1).
Expr = Union[StrictInt, StrictFloat, StrictStr]
ScalarExpr = Union[int, float, str]  # a scalar argument's value: true and false are 1 and 0


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _dtype(v: str | None) -> str | None:
    if v is None:
        return None
    c = canonical_dtype(v)
    if c not in DTYPE_SIZES:
        raise ValueError(f"unknown dtype {v!r} (known: {', '.join(sorted(set(DTYPE_SIZES)))})")
    return c


class _Ordered(Strict):
    @model_validator(mode="after")
    def ordered(self):
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class DimRange(_Ordered):
    min: StrictInt = Field(ge=0)
    max: StrictInt = Field(le=2**63 - 1)


class ReturnRange(_Ordered):
    """What a repository function returns, as its maintainers state it: calls are answered with any
    value in [min, max] instead of being followed (a device query behind a cache, an environment
    switch)."""

    min: StrictInt = Field(ge=-(2**63))
    max: StrictInt = Field(le=2**63 - 1)


class ModelEntry(Strict):
    name: str | None = None
    config: str | None = Field(None, description="path to a Hugging Face config.json, relative to the manifest")
    fields: dict[str, Number] = Field(default_factory=dict, description="inline values; override the config's")
    dtype: str | None = None

    @model_validator(mode="after")
    def has_source(self):
        if self.config is None and not self.fields:
            raise ValueError("a model needs 'config' (a config.json path) or 'fields' (inline values)")
        if self.config is None and self.name is None:
            raise ValueError("an inline model needs a 'name'")
        return self

    _dt = field_validator("dtype")(classmethod(lambda cls, v: _dtype(v)))


class TensorArg(Strict):
    shape: list[Expr]
    dtype: str | None = None
    strides: list[Expr] | None = None
    values: list[Expr] | None = Field(None, description="[min, max], inclusive, bounding every element")
    optional: bool = Field(False, description="an optional tensor that may also be absent: both are verified")
    device: Literal["cuda", "cpu"] = Field("cuda", description="where the tensor lives")
    nondecreasing: bool = Field(False, description="a 1-D index tensor whose elements never decrease")
    distinct: bool = Field(False, description="no two elements hold the same value (a slot mapping)")
    unknown_values: bool = Field(False, description="no one observed the contents (a recording on the meta device): "
                                 "a finding resting on them is inconclusive (needs-values)")

    _dt = field_validator("dtype")(classmethod(lambda cls, v: _dtype(v)))

    @field_validator("values")
    @classmethod
    def two_bounds(cls, v):
        if v is not None and len(v) != 2:
            raise ValueError("values must be [min, max]")
        return v

    @model_validator(mode="after")
    def strides_match(self):
        if self.strides is not None and len(self.strides) != len(self.shape):
            raise ValueError(f"{len(self.strides)} strides for {len(self.shape)} dimensions")
        if self.nondecreasing and len(self.shape) != 1:
            raise ValueError(f"'nondecreasing' is for a 1-D tensor (this one has {len(self.shape)} dimensions)")
        return self


class ScalarArg(Strict):
    value: ScalarExpr | None = None


class StringArg(Strict):
    string: str = Field(description="a string argument's value, as the caller passes it ('fp8')")


ArgSpec = Union[TensorArg, ScalarArg, StringArg, Literal["absent"]]


class OpSpec(Strict):
    name: str
    file: str
    launcher: str | None = None
    models: Union[Literal["all"], list[str]] = "all"
    dtypes: list[str] | None = None
    args: dict[str, ArgSpec] = Field(default_factory=dict)
    relations: list[str] = Field(default_factory=list, description="conditions over 1-D index tensors' elements")

    @field_validator("dtypes")
    @classmethod
    def known_dtypes(cls, v):
        return None if v is None else [_dtype(x) for x in v]


class Options(Strict):
    time_budget_s: float = Field(60.0, gt=0, le=86_400)
    query_timeout_ms: StrictInt = Field(10_000, ge=1)
    unroll_max: StrictInt = Field(16, ge=1, le=4096)
    minimal_witness: bool = True
    follow_ups: int = Field(default=2, ge=0, le=8)
    # The GPU memory the reproducers of findings may take (kernelvet repro): witnesses are chosen to fit.
    witness_memory_gib: float = Field(WITNESS_MEMORY_GIB, gt=0, le=1 << 20)
    # Races on global memory (docs/threads.md). Unset: checked for ops with a binding, not in
    # zero-config; true or false: everywhere or nowhere.
    global_races: bool | None = None


DEFAULT_DIMS = {"batch": DimRange(min=1, max=1000), "seq_len": DimRange(min=1, max=2_000_000)}
DEFAULT_DERIVED = {"num_tokens": "batch * seq_len"}
DEFAULT_CONSTRAINTS = ["batch * seq_len <= 9000000"]


class Manifest(Strict):
    version: Literal[0]
    include_dirs: list[str] = Field(default_factory=list)
    defines: dict[str, str] = Field(default_factory=dict)
    arch: str = "sm_80"
    models: list[ModelEntry]
    dtypes: list[str] = Field(default_factory=lambda: ["bfloat16"])
    user_dims: dict[str, DimRange] = Field(default_factory=lambda: dict(DEFAULT_DIMS))
    derived: dict[str, Expr] = Field(default_factory=lambda: dict(DEFAULT_DERIVED))
    constraints: list[str] = Field(default_factory=lambda: list(DEFAULT_CONSTRAINTS))
    ops: list[OpSpec]
    options: Options = Field(default_factory=Options)
    returns: dict[str, ReturnRange] = Field(default_factory=dict)

    @field_validator("dtypes")
    @classmethod
    def known_dtypes(cls, v):
        return [_dtype(x) for x in v]
