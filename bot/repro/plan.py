"""What a finding's reproducer needs: the kind of program (a torch op built as an extension, a bare
kernel launched from a small CUDA harness, a host launcher of raw pointers and structs called from
one, a plain CUDA program), the sources and flags that build
it, every argument at the witness's sizes (the ``call`` the engine recorded), the GPU memory that
takes, and which compute-sanitizer tool sees the bug. Reads only the JSON report and the
repository's manifest: nothing here builds or runs anything."""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from analyzers.binding import DTYPE_SIZES, KERNEL_OP, canonical_dtype
from analyzers.findings import gib
from analyzers.limits import WITNESS_MEMORY_GIB as DEFAULT_MEMORY_GIB

# The compute-sanitizer tool that reports each check's bug; "none": the CUDA runtime itself does
# (a launch outside CUDA's limits fails at the launch).
TOOLS = {
    "oob": "memcheck", "shared-oob": "memcheck", "local-oob": "memcheck", "misaligned": "memcheck",
    "null-deref": "memcheck", "overflow": "memcheck", "narrowing": "memcheck",
    "launch-config": "none", "race": "racecheck", "barrier-divergence": "synccheck", "sync-mask": "synccheck",
}

TORCH_DTYPES = {canonical_dtype(n) for n in DTYPE_SIZES}  # every dtype kernelvet knows is a torch one
# A finding at a CUDA runtime copy or fill: the runtime checks its range against the allocation
# it starts in, which memcheck's padding would stretch past the allocation's end.
SANITIZER_MAX_BYTES = 1 << 30  # above this, memcheck's cost per access makes the plain run the judge
UNSTATED_BUFFER_BYTES = 64 << 20  # a bare kernel's `any` pointer, a host launcher's struct member: memory nobody sized


@dataclass
class Repro:
    fingerprint: str
    check: str
    where: str  # file:line of the finding
    kind: str  # torch-op | kernel | host | program | none
    call: dict | None
    sources: list[str] = field(default_factory=list)  # repository-relative; the first is the op's file
    include_dirs: list[str] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    arch: str = "native"
    device_bytes: int = 0
    host_bytes: int = 0
    memory_bound: int = 0
    tool: str = "memcheck"
    use_sanitizer: bool = True
    not_runnable: str | None = None  # why the reproducer does not run (it says so when run)
    argv: list[str] = field(default_factory=list)  # a program's command-line arguments
    notes: list[str] = field(default_factory=list)
    hangs: bool = False  # the finding is a hang: a run that does not return confirms it
    also: list[str] = field(default_factory=list)  # file:line of the finding's other access (a race's first)
    static_only: str | None = None  # why a sanitizer can stay silent on it (Finding.static_only)
    runtime_copy: bool = False  # the access is a CUDA runtime copy or fill (memcheck runs it without padding)

    def describe(self) -> dict:
        return {"fingerprint": self.fingerprint, "check": self.check, "where": self.where, "also": self.also,
                "kind": self.kind,
                "sources": self.sources, "device_bytes": self.device_bytes, "host_bytes": self.host_bytes,
                "memory_bound": self.memory_bound, "tool": self.tool, "use_sanitizer": self.use_sanitizer,
                "runnable": self.not_runnable is None, "not_runnable": self.not_runnable,
                "static_only": self.static_only, "runtime_copy": self.runtime_copy, "notes": self.notes, "hangs": self.hangs}


def storage_bytes(arg: dict) -> int:
    """Bytes a tensor of the call occupies: its shape, or its strides' furthest element."""
    size = DTYPE_SIZES.get(canonical_dtype(arg.get("dtype") or "float32"), 4)
    shape = arg["shape"]
    if any(d == 0 for d in shape):
        return 0
    strides = arg.get("strides")
    if strides:
        return (sum((d - 1) * s for d, s in zip(shape, strides)) + 1) * size
    return prod(shape) * size


def plan(finding: dict, spec=None, memory_gib: float = DEFAULT_MEMORY_GIB, tool: str | None = None) -> Repro:
    """The reproducer of one finding of a JSON report; ``spec`` is the manifest's settings (include
    directories, defines, arch) or None for a zero-config scan; ``tool``: the sanitizer tool to run
    it under, when not the check's own."""
    call = finding.get("call")
    loc = finding["location"]
    r = Repro(finding.get("fingerprint", ""), finding["check"], f"{loc['file']}:{loc['line']}", "none", call,
              memory_bound=int(memory_gib * (1 << 30)), tool=tool or TOOLS.get(finding["check"], "memcheck"))
    access = finding.get("access") or {}
    if access.get("file") and access.get("line"):
        r.also.append(f"{access['file']}:{access['line']}")
    r.hangs = bool(finding.get("hangs"))
    r.static_only = finding.get("static_only") or None
    r.runtime_copy = bool(finding.get("runtime_copy"))
    if spec is not None:
        r.include_dirs, r.defines = list(spec.include_dirs), dict(spec.defines)
    if not call:
        r.not_runnable = "the report holds no call for this finding (it was written by an older kernelvet: scan again)"
        return r
    op_file = call["file"]
    r.sources = [op_file]
    spans = [s for s in [loc, finding.get("access")] + list(finding.get("trace") or []) if s and s.get("file")]
    # Reports name files from the top of the git checkout; the call, from the scanned root.
    prefix = next((s["file"][: -len(op_file)] for s in spans if s["file"].endswith("/" + op_file)), "")
    # A kernel another translation unit defines (the op's file declares it): built beside it.
    for span in spans:
        f = span["file"][len(prefix):] if span["file"].startswith(prefix) else span["file"]
        if f.endswith(".cu") and f not in r.sources:
            r.sources.append(f)
    if call["op"].startswith(KERNEL_OP):
        r.kind = "kernel"
    elif call["launcher"] == "main":
        r.kind = "program"
        argc = call["args"][0].get("value") if call["args"] else None
        if call["args"] and (not isinstance(argc, int) or any(k.startswith("a string of ") for k in call["loads"])):
            r.not_runnable = ("the program's failing input is in its command-line strings, whose values the witness "
                              "does not record")
        elif call["args"]:
            # The witness fixes how many arguments, not what they say: any content fails.
            r.argv = ["1"] * (argc - 1)
            call["unknown"] = [u for u in call.get("unknown", []) if u != call["args"][1]["name"]]
    elif not any(a["kind"] == "tensor" for a in call["args"]) and \
            any(a["kind"] in ("struct", "bound-struct", "buffer") for a in call["args"]):
        # A host launcher of raw pointers and structs (a graph suite's `GPU*` function, a params
        # struct's launcher): a CUDA harness calls it, as a bare kernel's launches it.
        r.kind = "host"
    else:
        r.kind = "torch-op"
    if r.kind in ("kernel", "host"):
        # Memory nobody sized (an `any` pointer, a struct's pointer member): the engine checked only
        # offsets below its start, so any size reproduces those; the harness allocates a fixed size.
        unstated = [a["name"] for a in call["args"] if a["kind"] == "buffer" and a.get("bytes") is None]
        call["unknown"] = [u for u in call.get("unknown", []) if u not in unstated]
    if call.get("foreign_pointers") and r.not_runnable is None:
        r.not_runnable = (f"the op makes pointers from integers ({', '.join(call['foreign_pointers'][:2])}): the "
                          "memory they point to (another process's or GPU's buffers) is not something a "
                          "reproducer can allocate")
    for a in call["args"]:
        if a["name"] not in call.get("structs", ()) or r.not_runnable is not None:
            continue
        other = [m for m in a.get("members", ()) if m["kind"] == "other"]
        if r.kind != "host" or "members" not in a:
            r.not_runnable = (f"the op takes {a['name']} by value beside tensors: a struct a torch extension "
                              "cannot pass (write a harness that fills it with the witness's fields)"
                              if r.kind == "torch-op" else f"the op takes {a['name']} by value, a struct the "
                              "report does not describe (scan again)")
        elif other:
            r.not_runnable = (f"the op takes {a['name']} by value, whose member {other[0]['path']} "
                              f"({other[0].get('type') or 'of its library'}) a harness cannot make from the witness")
    if call.get("unknown") and r.not_runnable is None:
        r.not_runnable = (f"the witness leaves the size or value of {', '.join(call['unknown'][:4])} open: "
                          "no call to build")
    for a in call["args"]:
        if a["kind"] == "tensor" and a.get("dtype") not in TORCH_DTYPES and r.not_runnable is None:
            r.not_runnable = f"tensor '{a['name']}' has dtype {a.get('dtype')!r}, which torch cannot allocate"
        if a["kind"] == "tensor" and not a["name"] in call.get("unknown", []):
            n = storage_bytes(a)
            if a.get("device") == "cpu":
                r.host_bytes += n
            else:
                r.device_bytes += n
        elif a["kind"] == "buffer":
            r.device_bytes += a["bytes"] if a.get("bytes") is not None else UNSTATED_BUFFER_BYTES
            if a.get("bytes") is None:
                r.notes.append(f"'{a['name']}' has no size in the binding: {UNSTATED_BUFFER_BYTES >> 20} MiB "
                               "are allocated")
        elif a["kind"] in ("struct", "bound-struct"):
            r.device_bytes += sum(m["bytes"] or 0 for m in a["members"] if m["kind"] == "buffer")
            if a["kind"] == "bound-struct":
                r.notes.append(f"{a['name']}: the members its binding names are set as it names them; the others "
                               "are zero (null pointers), but for pointer members to memory, given as below")
            pointers = [m["path"] for m in a.get("members", ()) if m["kind"] == "pointer"]
            r.device_bytes += len(pointers) * UNSTATED_BUFFER_BYTES
            if pointers:
                r.notes.append(f"{', '.join(pointers[:4])}{' ...' if len(pointers) > 4 else ''}: memory of a size "
                               f"nobody states, {UNSTATED_BUFFER_BYTES >> 20} MiB of managed memory each (the host "
                               "and the GPU can both read it)")
    placed = call.get("elements") or {}
    for name, values in (call.get("loads") or {}).items():
        # Values whose element the witness names are put there; the rest come from the fill.
        values = [v for v in values if v not in {value for _, value in placed.get(name, [])}]
        if len(values) > 1:
            r.notes.append(f"the witness loads {len(values)} different values from '{name}' ({values[:4]}): the "
                           f"tensor is filled with {values[0]}, so the failing access may need another of them")
    if r.not_runnable is None and r.device_bytes > r.memory_bound:
        r.not_runnable = (f"the witness needs {gib(r.device_bytes)} of GPU memory, more than the bound of "
                          f"{gib(r.memory_bound)} (--memory-gib)")
    if r.tool == "none" or r.device_bytes > SANITIZER_MAX_BYTES:
        r.use_sanitizer = False
        if r.tool != "none":
            r.notes.append(f"{gib(r.device_bytes)} of tensors: too many accesses for {r.tool}; the run itself "
                           "is the judge (a CUDA error, or none)")
    return r
