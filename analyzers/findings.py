"""What the analysis of one instance produces: findings with witnesses, and a verdict.

Plain dataclasses: the bot turns them into text, JSON, SARIF and review comments.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .kir.nodes import Span

CHECKS = {
    "oob": "Out-of-bounds global memory access",
    "shared-oob": "Out-of-bounds shared memory access (static arrays, dynamic shared memory against the launch's size)",
    "local-oob": "Out-of-bounds local array access (the object, and the row of a multi-dimensional array)",
    "overflow": "32-bit integer overflow reaching an address, size, bound or launch dimension",
    "narrowing": "Narrowing conversion that changes a value reaching an address, size, bound or launch dimension",
    "launch-config": "Launch configuration outside CUDA's limits",
    "misaligned": "Misaligned access: the address is not a multiple of the accessed type's alignment (at most 16 bytes)",
    "null-deref": "Dereference of a null pointer (a nullptr passed for an absent optional tensor, an empty optional)",
    "race": "Data race on shared memory: two threads of a block access the same bytes in one barrier interval, one writing",
    "barrier-divergence": "A block barrier reached by some threads of a block and not by others",
    "sync-mask": "A warp primitive whose mask names a lane that runs on without reaching it, or a shuffle that reads a "
                 "lane that does not execute it",
}

# Why compute-sanitizer can stay silent on a real bug of a check: the message of such a finding
# says so, and a reproducer that runs clean (kernelvet confirm) gives it as the reason.
STATIC_ONLY = {
    "local-oob": "a local array can live in registers: an access past its end then touches no memory "
                 "compute-sanitizer watches",
    "overflow": "the wrapped value can stay inside the allocation: compute-sanitizer then sees a valid access to the "
                "wrong element",
    "narrowing": "the narrowed value can stay inside the allocation: compute-sanitizer then sees a valid access to "
                 "the wrong element",
    "barrier-divergence": "compute-sanitizer synccheck does not report threads that skip a barrier by leaving the "
                          "branch or the kernel on sm_70 and later",
    "sync-mask": "compute-sanitizer synccheck reported none of these on sm_90: a shuffle's value read from a lane that "
                 "exited or does not exist is undefined but faults nowhere, and two primitives on two sides of a "
                 "branch paired up (a lane waiting at a barrier instead hangs the warp, which is seen)",
}
# The words a finding whose bug is a hang (a lane of a warp waits where another never arrives)
# says it with (Finding.hangs): kernelvet confirm takes a run that does not return as its
# confirmation.
HANG_WORDS = "the kernel never returns"


def gib(n: int) -> str:
    """A byte count as findings and reproducers write it: "80.0 GiB"."""
    return f"{n / (1 << 30):.1f} GiB"


STATIC_ONLY_UNINITIALIZED = ("an uninitialized value is whatever the register or memory held, which can "
                             "happen to be harmless on a given run")
# Measured on an H200 (docs/confirm.md): a runtime copy whose device range starts inside an
# allocation and runs past it fails with cudaErrorInvalidValue (unless memcheck's padding stretches
# the allocation); one that starts past the end fails where no allocation lies there and is carried
# out, unreported, into the neighbouring allocation where one does.
STATIC_ONLY_RUNTIME_COPY = ("the CUDA runtime checks a copy's range only against the allocation it starts in: a range "
                            "that starts outside it fails where no allocation lies there, and reads or writes the "
                            "neighbouring allocation, unreported, where one does")
STATIC_ONLY_HOST = ("the object is host memory, which compute-sanitizer does not watch (AddressSanitizer on the host "
                    "code does)")
STATIC_ONLY_IN_OBJECT = "the access stays inside the object, so compute-sanitizer sees a valid access"
# Measured with bench/block_scope_atomics.py: an H200 performs global atomics of every scope at L2,
# and 4,096 blocks adding into shared counters with atomicAdd_block lost no update in 20 runs.
STATIC_ONLY_BLOCK_SCOPE = ("the GPUs measured (H200) perform global atomics of every scope atomically for the "
                           "whole device, so no update is lost there; the CUDA memory model does not promise it")
# sync-mask findings of three kinds, as measured on sm_90 (docs/threads.md).
STATIC_ONLY_ABSENT_LANE = "compute-sanitizer synccheck does not report lanes that do not exist on sm_70 and later"
STATIC_ONLY_PAIRED_PRIMITIVES = ("where it reaches another primitive, on sm_90 the two paired up and compute-sanitizer "
                                 "synccheck reported nothing")
STATIC_ONLY_EXITED_SOURCE = "neither memcheck nor synccheck sees it"


@dataclass
class Fix:
    """A mechanical fix a review can offer as a one-line suggestion: the text of ``span`` becomes
    ``replacement`` (None: unchanged), and when ``declare`` is set, the integer type of the variable
    that ``span`` initialises becomes it (``int n = t.numel();`` -> ``int64_t n = ...``)."""

    span: Span
    replacement: str | None
    description: str
    declare: str | None = None


@dataclass
class Finding:
    check: str
    message: str
    location: Span  # where to fix: the wrapped sub-expression, or the access
    op: str
    kernel: str | None  # kernel instantiation, None for host code
    witness: dict  # symbol -> value, in reading order
    expression: Span | None = None  # the full expression containing ``location``
    access: Span | None = None  # the access, size, bound or launch the value reaches
    wrapped_type: str | None = None
    trace: list[Span] = field(default_factory=list)  # call sites from the op to the location
    fix: Fix | None = None
    models: list[str] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    zero_config: bool = False  # holds for some shape within default ranges, not for a bound model
    related: list[Span] = field(default_factory=list)  # other places that fail for the same witness
    value_sources: list[tuple] = field(default_factory=list)  # (region kind, name, bounded) of loads it needs
    call: dict | None = None  # the op's arguments at the witness (binding.concrete_call): what a reproducer runs
    load_elements: dict = field(default_factory=dict)  # memory -> [[element, value]] the witness loads (context.py)
    # Zero-config only: why every witness breaks a guarantee the op's callers keep (engine/contract.py);
    # '' for a bug.
    contract: str = ""
    # Why compute-sanitizer can stay silent on this bug (its message says it too, as "static-only:
    # ..."); '' where it sees it. What kernelvet confirm gives as the reason of a clean run.
    static_only: str = ""
    runtime_copy: bool = False  # at a CUDA runtime copy or fill: memcheck's padding would carry it out
    hangs: bool = False  # the bug is a hang (HANG_WORDS): a run that does not return confirms it

    def key(self) -> tuple:
        return (self.check, self.location.file, self.location.line, self.location.col, self.kernel or "")


def verdict_of(findings: list, inconclusive: list) -> str:
    """An instance's verdict: ``bug`` with a finding that is not a contract finding, ``contract``
    with contract findings only (zero-config: real for calls that break what the op's callers
    guarantee, engine/contract.py), else ``inconclusive`` with a reason, else ``verified``."""
    if any(not f.contract for f in findings):
        return "bug"
    if findings:
        return "contract"
    return "inconclusive" if inconclusive else "verified"


@dataclass
class Inconclusive:
    reason: str  # timeout | solver-unknown | unsupported | path-explosion | binding-infeasible | imprecise-loop | unknown-alignment
    detail: str
    span: Span | None = None
    kernel: str | None = None  # the kernel instantiation running when it happened; None: host code


@dataclass
class InstanceResult:
    op: str
    instance: str  # a readable name of the instance
    models: list[str]
    dtype: str
    verdict: str  # bug | contract | verified | inconclusive (verdict_of)
    findings: list[Finding] = field(default_factory=list)
    inconclusive: list[Inconclusive] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    seconds: float = 0.0
    paths: int = 0
    queries: int = 0
    fingerprint: str = ""
    work: int = 0  # engine steps and solver units spent (engine/work.py): the same on any machine
    # With Options.control_call: the op's call at small sizes the binding allows (binding.sample_sizes),
    # for a control run of a verified op on a GPU (bench/repro_fixtures.py --controls).
    control_call: dict | None = None
    # The op refused every input of the instance, which it may (Instance.may_reject: one layout of
    # a zero-config op): the variant proves nothing and is left out of the op's folded result.
    refused: bool = False
