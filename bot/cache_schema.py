"""The shape of a cache entry, checked strictly before anything of it is used: a cache directory
can hold files kernelvet did not write (docs/cache.md, "Trust"). An entry of the wrong shape, a
verdict that is not one, or a finding its verdict contradicts is a miss, never a crash."""
from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError, model_validator

from analyzers.findings import CHECKS

Span = Optional[tuple[StrictStr, StrictInt, StrictInt, StrictInt, StrictInt, StrictStr]]
Value = Union[StrictBool, StrictInt, StrictFloat, StrictStr, None]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class FixEntry(_Strict):
    span: Span
    replacement: Optional[StrictStr]
    description: StrictStr
    declare: Optional[StrictStr]


Number = Union[StrictInt, StrictFloat]


class CallArgEntry(_Strict):
    name: StrictStr
    kind: Literal["tensor", "buffer", "scalar", "string", "absent"]
    shape: Optional[list[Optional[StrictInt]]] = None
    strides: Optional[list[Optional[StrictInt]]] = None
    dtype: Optional[StrictStr] = None
    device: Optional[StrictStr] = None
    values: Optional[list[Optional[Number]]] = None
    nondecreasing: Optional[StrictBool] = None
    distinct: Optional[StrictBool] = None
    bytes: Optional[StrictInt] = None
    elem_size: Optional[StrictInt] = None
    value: Optional[Number] = None
    float: Optional[StrictBool] = None
    text: Optional[StrictStr] = None


class CallEntry(_Strict):
    op: StrictStr
    file: StrictStr
    launcher: StrictStr
    line: StrictInt
    dtype: StrictStr
    args: list[CallArgEntry]
    loads: dict[StrictStr, list[Number]]
    elements: dict[StrictStr, list[tuple[StrictInt, Number]]] = {}  # memory -> [element, value] loaded
    unknown: list[StrictStr]
    foreign_pointers: list[StrictStr] = []  # where the op made pointers from integers
    structs: list[StrictStr] = []  # parameters taken by value as structs (no call is built)


class FindingEntry(_Strict):
    check: Literal[tuple(CHECKS)]  # type: ignore[valid-type]
    message: StrictStr
    location: tuple[StrictStr, StrictInt, StrictInt, StrictInt, StrictInt, StrictStr]
    op: StrictStr
    kernel: Optional[StrictStr]
    witness: list[tuple[StrictStr, Value]]
    expression: Span
    access: Span
    wrapped_type: Optional[StrictStr]
    trace: list[Span]
    fix: Optional[FixEntry]
    models: list[StrictStr]
    dtypes: list[StrictStr]
    zero_config: StrictBool
    related: list[Span]
    call: Optional[CallEntry] = None
    contract: StrictStr = ""
    static_only: StrictStr = ""
    runtime_copy: StrictBool = False
    hangs: StrictBool = False


class InconclusiveEntry(_Strict):
    reason: StrictStr
    detail: StrictStr
    span: Span


class ResultEntry(_Strict):
    op: StrictStr
    instance: StrictStr
    models: list[StrictStr]
    dtype: StrictStr
    verdict: Literal["bug", "contract", "verified", "inconclusive"]
    findings: list[FindingEntry]
    inconclusive: list[InconclusiveEntry]
    assumptions: list[StrictStr]
    kernels: list[StrictStr]
    seconds: Union[StrictFloat, StrictInt]
    paths: StrictInt
    queries: StrictInt
    fingerprint: StrictStr
    work: StrictInt = 0

    @model_validator(mode="after")
    def _consistent(self):
        if (self.verdict in ("bug", "contract")) != bool(self.findings):
            raise ValueError("a bug or contract verdict goes with findings, and only it")
        if (self.verdict == "contract") != (bool(self.findings) and all(f.contract for f in self.findings)):
            raise ValueError("a contract verdict goes with contract findings only")
        if self.verdict == "inconclusive" and not self.inconclusive:
            raise ValueError("an inconclusive verdict has its reasons")
        return self


class FileRecord(_Strict):
    sha256: StrictStr
    lines: dict[StrictStr, StrictStr]


class CacheEntry(_Strict):
    format: StrictStr
    key: StrictStr
    version: StrictStr
    op: StrictStr
    fingerprint: StrictStr
    files: dict[StrictStr, FileRecord]
    result: ResultEntry
    mac: Optional[StrictStr] = None


def valid_entry(text: str) -> dict | None:
    """The entry's data if it has the shape kernelvet writes, else None."""
    try:
        CacheEntry.model_validate_json(text)
    except (ValidationError, ValueError):
        return None
    import json
    return json.loads(text)
