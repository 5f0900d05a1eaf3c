"""SARIF 2.1.0 for GitHub code scanning: one rule per check (with help in markdown), one result per
finding with its witness as a code flow, stable fingerprints, repository-relative URIs, and
inconclusive instances as tool notifications. Kept within GitHub's upload limits."""
from __future__ import annotations

import json

from analyzers import __version__
from analyzers.findings import CHECKS
from analyzers.frontend.includes import FOUND_BY_NAME

from . import SourceLines, fixed_line, witness_text

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
# GitHub's limits per run and per result (docs: "SARIF support for code scanning").
MAX_RESULTS = 25_000
MAX_RELATED = 1_000
MAX_FLOW_LOCATIONS = 1_000
MAX_NOTIFICATIONS = 1_000

_SUPPRESS_HELP = ("To accept a finding, write `// kernelvet: ignore[{check}] <reason>` on its line or the line "
                  "above; the reason is required. A baseline file (`kernelvet scan --write-baseline`) accepts "
                  "every current finding of a repository at once.")

RULES = {
    "oob": ("OutOfBoundsGlobalAccess", "8.1", ["external/cwe/cwe-787", "external/cwe/cwe-125"],
            "A load or store reaches bytes outside the tensor it points into, for a size a user can send. "
            "kernelvet decides it in bytes with the real access size (a `float4` load reads 16 bytes).",
            "Guard the access with the tensor's extent (`if (i < n)`), or size the launch so that no thread "
            "reaches past the last element; for vector loads, handle the tail that is not a whole vector."),
    "shared-oob": ("OutOfBoundsSharedAccess", "8.1", ["external/cwe/cwe-787", "external/cwe/cwe-125"],
                   "An access to shared memory (static or dynamic) outside the buffer.",
                   "Size the shared buffer from the same expression that bounds the index, or guard the index."),
    "local-oob": ("OutOfBoundsLocalAccess", "8.1", ["external/cwe/cwe-787", "external/cwe/cwe-125"],
                  "An access to a local (per-thread) array outside its bounds, often a loop bound off by one.",
                  "Bound the loop by the array's length (`<`, not `<=`)."),
    "null-deref": ("NullPointerDereference", "7.5", ["external/cwe/cwe-476"],
                   "An access through a null pointer, typically an optional tensor passed as `None`.",
                   "Check `has_value()` (or the pointer) before the kernel touches the tensor."),
    "overflow": ("Int32OverflowInIndex", "7.8", ["external/cwe/cwe-190"],
                 "A 32-bit (or narrower) integer operation wraps for some input size, and the wrapped value "
                 "reaches an address, an allocation size, a loop bound or a launch dimension. The finding names "
                 "the smallest sub-expression that wrapped and its C type.",
                 "Compute the expression in 64 bits: widen the first operand before the multiply "
                 "(`static_cast<int64_t>(blockIdx.x) * stride`), and store it in an `int64_t`."),
    "narrowing": ("NarrowingConversion", "7.0", ["external/cwe/cwe-197", "external/cwe/cwe-681"],
                  "A conversion to a narrower integer type (`int n = t.numel()`) changes the value for some input "
                  "size, and the value reaches an address, a size, a loop bound or a launch dimension.",
                  "Declare the variable with a type that holds every value (`int64_t`)."),
    "launch-config": ("InvalidLaunchConfiguration", "5.3", ["external/cwe/cwe-20"],
                      "A kernel launch configuration outside CUDA's limits for some input: a block above 1024 "
                      "threads (z above 64), grid.x above 2^31-1, grid.y or grid.z above 65535, a dimension of 0, "
                      "or more than 48 KiB of dynamic shared memory. The launch fails and the op does nothing.",
                      "Clamp the dimension, move the large extent to grid.x, or loop inside the kernel."),
    "misaligned": ("MisalignedVectorAccess", "6.5", ["external/cwe/cwe-704"],
                   "A vector access (`float4`, `int4`, ...) at an address not aligned to its size.",
                   "Fall back to scalar accesses when the base or the row stride is not a multiple of the vector."),
    "race": ("SharedMemoryDataRace", "7.0", ["external/cwe/cwe-362"],
             "Two threads of one block access the same bytes of shared memory in one barrier interval, at least "
             "one writing, not both atomically: the result depends on scheduling (a partial sum read before it is "
             "written, a tile overwritten under its reader).",
             "Put a `__syncthreads()` that every thread of the block reaches between the two accesses (`__syncwarp()` "
             "when both threads are always in one warp), give each thread its own element, or make the update atomic."),
    "barrier-divergence": ("BarrierDivergence", "6.5", ["external/cwe/cwe-833", "external/cwe/cwe-662"],
                           "A `__syncthreads()` (or a block group's `sync()`, a cub block collective) reached by some "
                           "threads of a block and not by others, for some model or input: undefined behaviour (the "
                           "block hangs or the barrier releases early). Threads that return before a barrier are the "
                           "common case; compute-sanitizer synccheck does not report them on sm_70 and later.",
                           "Keep the barrier where every thread of the block reaches it: let threads without work "
                           "skip the work, not the barrier."),
    "sync-mask": ("WarpSyncMaskMismatch", "6.5", ["external/cwe/cwe-833", "external/cwe/cwe-662"],
                  "A warp primitive (`__shfl_sync`, `__ballot_sync`, `__syncwarp`, ...) whose mask names a lane that "
                  "does not reach it (it took another branch or left) or does not exist (a block that is not a "
                  "multiple of 32 threads).",
                  "Call the primitive where every lane of the mask arrives, launch whole warps, or pass the mask of the "
                  "lanes that take the branch."),
}


def _rule(check: str) -> dict:
    name, severity, cwes, what, how = RULES.get(check, (check, "5.0", [], CHECKS.get(check, check), ""))
    return {
        "id": check,
        "name": name,
        "shortDescription": {"text": CHECKS.get(check, check)},
        "fullDescription": {"text": what.replace("`", "")},
        "defaultConfiguration": {"level": "error"},
        "help": {"text": f"{what} {how}".replace("`", ""),
                 "markdown": f"{what}\n\n**Fix.** {how}\n\n**Suppress.** {_SUPPRESS_HELP.format(check=check)}"},
        "properties": {"tags": ["security", "correctness", "cuda", "memory-safety", *cwes][:20],
                       "precision": "high", "problem.severity": "error", "security-severity": severity},
    }


def _location(s, message: str | None = None, **extra) -> dict | None:
    if s is None or s.file.startswith("<") or s.line <= 0:
        return None  # kernelvet's own headers are no artifact of the repository
    region = {"startLine": s.line}
    if s.col > 0:
        region["startColumn"] = s.col
        if s.end_line >= s.line and s.end_col > 0 and (s.end_line, s.end_col) > (s.line, s.col):
            region["endLine"] = s.end_line
            region["endColumn"] = s.end_col
    loc = {"physicalLocation": {"artifactLocation": {"uri": s.file, "uriBaseId": "%SRCROOT%"}, "region": region}}
    if message:
        loc["message"] = {"text": message}
    loc.update(extra)
    return loc


def _flow(m) -> list[dict]:
    f = m.finding
    steps: list[tuple] = []
    for s in f.trace:
        steps.append((s, "called from the op" if not s.text else f"calls `{_short(s.text)}`"))
    steps.append((f.location, f"{m.check}: `{_short(f.location.text)}`"
                  + (f" in {f.wrapped_type}" if f.wrapped_type else "")))
    if f.access is not None and (f.access.file, f.access.line, f.access.col) != (f.location.file, f.location.line, f.location.col):
        steps.append((f.access, f"reaches `{_short(f.access.text)}`"))
    out, last = [], None
    for s, text in steps:
        here = (s.file, s.line, s.col)
        if here == last:
            continue
        loc = _location(s, text)
        if loc is not None:
            out.append({"location": loc, "nestingLevel": 0})
            last = here
    if out:
        out[-1]["state"] = {k: {"text": str(v)} for k, v in f.witness.items()}
    return out[:MAX_FLOW_LOCATIONS]


def _short(text: str, n: int = 80) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def result(m, rule_index: int, lines: SourceLines) -> dict | None:
    f = m.finding
    primary = _location(f.location) or _location(f.access) or next(
        (loc for loc in (_location(s) for s in reversed(f.trace)) if loc), None)
    if primary is None:
        return None
    text = (f"{f.message}. " + (f"Contract finding: {f.contract}. " if f.contract else "") + f"Op {', '.join(m.ops)}" + (f"; kernel {', '.join(m.kernels)}" if m.kernels else "")
            + f"; models {', '.join(m.models)} ({', '.join(m.dtypes)}); witness: {witness_text(f.witness)}.")
    fixed = fixed_line(lines, f.fix)
    if fixed is not None:
        text += f" Fix: {f.fix.description}: {fixed.strip()}"
    out = {
        "ruleId": m.check,
        "ruleIndex": rule_index,
        # A contract finding (zero-config) is real only for calls that break what the op does not
        # check: a note, below the bugs.
        "level": "note" if f.contract else "error",
        "message": {"text": text},
        "locations": [primary],
        # Line-independent: an edit that moves the code keeps the alert (bot/fingerprint.py).
        "partialFingerprints": {"primaryLocationLineHash": m.fingerprint, "kernelvetFinding/v1": m.fingerprint},
        "properties": {"ops": m.ops, "kernels": m.kernels, "models": m.models, "dtypes": m.dtypes,
                       "witness": {k: v for k, v in f.witness.items()}, "wrappedType": f.wrapped_type,
                       "zeroConfig": f.zero_config, **({"contract": f.contract} if f.contract else {}),
                       **({"staticOnly": f.static_only} if f.static_only else {})},
    }
    flow = _flow(m)
    if flow:
        out["codeFlows"] = [{"message": {"text": f"witness: {witness_text(f.witness)}"},
                             "threadFlows": [{"locations": flow}]}]
    related = [loc for loc in (_location(s, f"the same input also fails here: `{_short(s.text)}`", id=i)
                               for i, s in enumerate(f.related[:MAX_RELATED], 1)) if loc]
    if related:
        out["relatedLocations"] = related
    if fixed is not None and f.fix.span.file and not f.fix.span.file.startswith("<"):
        old = lines.line(f.fix.span.file, f.fix.span.line) or ""
        out["fixes"] = [{"description": {"text": f.fix.description}, "artifactChanges": [{
            "artifactLocation": {"uri": f.fix.span.file, "uriBaseId": "%SRCROOT%"},
            "replacements": [{"deletedRegion": {"startLine": f.fix.span.line, "startColumn": 1,
                                                "endLine": f.fix.span.line, "endColumn": len(old) + 1},
                              "insertedContent": {"text": fixed}}]}]}]
    if m.suppressed is not None:
        out["suppressions"] = [{"kind": "inSource", "status": "accepted", "justification": m.suppressed}]
    elif m.baselined:
        out["suppressions"] = [{"kind": "external", "status": "accepted", "justification": "listed in the baseline file"}]
        out["baselineState"] = "unchanged"
    return out


def to_dict(report, category: str = "scan") -> dict:
    from ..fingerprint import assign
    if report.findings and not report.findings[0].fingerprint:
        assign(report.findings)
    lines = SourceLines(report.root)
    checks = sorted(set(RULES) | {m.check for m in report.findings})
    index = {c: i for i, c in enumerate(checks)}
    results = [r for r in (result(m, index[m.check], lines) for m in report.findings) if r is not None]
    notifications = []
    for ir in report.instances:
        for inc in ir.result.inconclusive:
            n = {"level": "warning", "message": {"text": f"inconclusive: {ir.planned.label}: {inc.reason}: {inc.detail}"},
                 "descriptor": {"id": f"inconclusive/{inc.reason}"}}
            loc = _location(inc.span)
            if loc is not None:
                n["locations"] = [loc]
            notifications.append(n)
    for p in report.problems:
        notifications.append({"level": "warning", "message": {"text": p}, "descriptor": {"id": "suppression"}})
    for u in report.unverified:
        n = {"level": "error", "message": {"text": f"not verified: {u.why}"}, "descriptor": {"id": "unverified"}}
        if u.file != ".":
            n["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": u.file},
                                                    **({"region": {"startLine": u.line}} if u.line else {})}}]
        notifications.append(n)
    for text in report.include_notes:
        kind = "include-found-by-name" if FOUND_BY_NAME in text else "include-dropped"
        notifications.append({"level": "note", "message": {"text": text}, "descriptor": {"id": kind}})
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "kernelvet", "semanticVersion": __version__, "version": __version__,
                                "rules": [_rule(c) for c in checks]}},
            "automationDetails": {"id": f"kernelvet/{category}/"},
            "invocations": [{"executionSuccessful": True,
                             "toolExecutionNotifications": notifications[:MAX_NOTIFICATIONS]}],
            "columnKind": "unicodeCodePoints",
            "results": results[:MAX_RESULTS],
            "properties": {"counts": report.counts(), "instances": len(report.instances)},
        }],
    }


def render(report, category: str = "scan") -> str:
    return json.dumps(to_dict(report, category), indent=2) + "\n"


def annotate(sarif: dict, confirmations: dict[str, dict]) -> int:
    """Add ``kernelvet confirm``'s results to a SARIF log written by a scan: a ``confirmation``
    property (status, tool, detail) and a tag (``confirmed``, ``not-reproduced``, ``not-runnable``)
    on each result whose fingerprint has one. Returns how many results changed."""
    from ..repro import FIELDS, STATUSES
    n = 0
    for run in sarif.get("runs", []):
        for res in run.get("results", []):
            c = confirmations.get((res.get("partialFingerprints") or {}).get("kernelvetFinding/v1"))
            if c is None:
                continue
            props = res.setdefault("properties", {})
            props["confirmation"] = {k: c[k] for k in FIELDS}
            tags = [t for t in props.get("tags", []) if t not in STATUSES]
            props["tags"] = tags + [c["status"]]
            n += 1
    return n
