"""Events the engine emits for the checks: memory accesses, values reaching sinks, launches."""
from __future__ import annotations

from dataclasses import dataclass

import z3

from ..kir import nodes as N
from .values import IntV, Region


@dataclass(frozen=True)
class Access:
    region: Region
    off: IntV  # byte offset (int64), with its exact value and wrap sites
    size: int  # bytes the access reads or writes
    write: bool
    span: N.Span  # the access expression
    stack: tuple  # call sites from the op down to here
    guard: z3.BoolRef | None = None  # extra condition (one alternative of a pointer that may name several objects)
    vector: bool = False  # a vector access (float4, int4, ...): alignment matters
    align: int = 1
    within: tuple | None = None  # (byte offset IntV, count, element size) of the sub-array indexed
    atomic: bool = False  # one half of an atomic read-modify-write
    value: object = None  # what a write stores (a Val)
    scope: str = ""  # an atomic's scope where it is narrower than the device: "block" (atomicAdd_block)
    copy_end: str = ""  # "first" / "last": a byte at an end of the range a CUDA runtime copy or fill touches


@dataclass(frozen=True)
class Sink:
    """A value used as an allocation size, a loop bound or a launch dimension."""

    value: IntV
    kind: str  # alloc | loop-bound | launch-dim | shared-size
    span: N.Span
    stack: tuple
    what: str  # e.g. "grid.x of the launch of rms_norm_kernel<float, 8>"


@dataclass(frozen=True)
class LaunchEvent:
    kernel: str
    grid: tuple  # 3 IntV (unsigned int)
    block: tuple  # 3 IntV (unsigned int)
    smem: IntV
    span: N.Span
    stack: tuple
    max_threads: int | None = None  # the kernel's __launch_bounds__


@dataclass(frozen=True)
class Barrier:
    """A barrier reached: ``scope`` block (``__syncthreads``, a block ``sync()``, a cub block
    collective) or warp (``__syncwarp``)."""

    scope: str
    name: str
    span: N.Span
    stack: tuple


@dataclass(frozen=True)
class WarpSync:
    """A warp primitive that names the lanes taking part (``__shfl_sync``, ``__ballot_sync``,
    ``__syncwarp``...): every lane of ``mask`` that has not exited must reach it. A shuffle also
    names the lane it reads: ``source`` is (its lane/delta/mask operand, its width)."""

    name: str
    mask: IntV
    span: N.Span
    stack: tuple
    source: tuple | None = None
