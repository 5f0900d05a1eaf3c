"""Running reproducers on a GPU machine, and recording what happened: ``confirmed`` (the sanitizer,
or the CUDA runtime, reported the bug), ``not-reproduced`` (the run was clean), or
``not-runnable`` with the reason (it does not fit, it did not build, no sanitizer)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import FIELDS
from .sanitizer import names_line, parse
from .scripts import EXIT_BUILD, EXIT_CANNOT_RUN, EXIT_CUDA_ERROR, EXIT_OP_ERROR, EXIT_RAN
_FAULTS = ("an illegal memory access was encountered", "misaligned address", "unspecified launch failure",
           "an illegal instruction was encountered", "invalid configuration argument")


# Findings about an access a kernel makes: a CUDA API error (an invalid handle, a bad argument) is
# not their evidence, unless the access is a runtime copy's (the runtime refuses it so).
ACCESS_CHECKS = frozenset({"oob", "shared-oob", "local-oob", "null-deref", "misaligned", "race", "overflow",
                           "narrowing"})


def _api_error_refusal(desc: dict, tool: str, error: str) -> Confirmation | None:
    """``not-reproduced`` when the run's first error is a CUDA API call's (an invalid handle, a bad
    argument), which cannot be an access finding's evidence; None otherwise, a fault the runtime
    reports through an API call (an illegal address) included."""
    api = error.startswith("Program hit cudaError") or error.startswith("CUDA error")
    if not api or any(w in error for w in _FAULTS) or desc.get("check") not in ACCESS_CHECKS \
            or desc.get("runtime_copy"):
        return None
    return Confirmation("not-reproduced", tool, f"the call failed with a CUDA API error before any access "
                        f"({error.strip()[:240]}): the harness's call, not the finding's access")


@dataclass
class Confirmation:
    status: str  # confirmed | not-reproduced | not-runnable
    tool: str  # memcheck | racecheck | synccheck | none (the run alone)
    detail: str

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in FIELDS}


def _tail(text: str, n: int = 3) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " / ".join(lines[-n:])[-400:]


# A compiler's error line: nvcc's and gcc's `file(line): error: ...` / `file:line: error: ...`,
# ptxas's `ptxas file, line N; error   : ...`, a fatal one.
_ERROR_LINE = re.compile(r"^(?P<where>.*?)\berror\s*:\s*(?P<what>.+)$|^(?P<fatal>.*\bfatal(?: error)?\s*:.+)$")


def build_error(log: str) -> str:
    """The first compiler error of a failed build's last attempt (a torch op is built once more
    with the half-precision operators when the first attempt fails), with how many there were;
    the log's last lines when it names none."""
    last = log.rsplit("(built again", 1)[-1]
    errors = []
    for line in last.splitlines():
        m = _ERROR_LINE.match(line.strip())
        if m is None or m.group("fatal"):
            continue
        where = m.group("where").strip()
        tool = "ptxas: " if where.startswith("ptxas") else f"{where.rstrip(':; ')}: " if where else ""
        errors.append(tool + m.group("what").strip())
    if not errors:
        return _tail(log)
    more = f" ({len(errors)} errors)" if len(errors) > 1 else ""
    return (errors[0] + more)[:400]


HANG_SECONDS = 120.0  # a reproducer of a hang that has not returned by then has hung


def confirm_one(repro_dir: Path, python: str, sanitizer: str | None, timeout: float,
                hang_seconds: float = HANG_SECONDS) -> Confirmation:
    desc = json.loads((repro_dir / "repro.json").read_text())
    tool = desc["tool"] if desc["use_sanitizer"] else "none"
    if not desc["runnable"]:
        return Confirmation("not-runnable", tool, desc["not_runnable"])
    script = str(repro_dir / "repro.py")
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    t0 = time.time()
    try:
        built = subprocess.run([python, script, "--build-only"], capture_output=True, text=True, timeout=timeout,
                               env=env)
    except subprocess.TimeoutExpired:
        return Confirmation("not-runnable", tool, f"the build ran past {timeout:g} s")
    (repro_dir / "build.log").write_text(built.stdout + built.stderr)
    t1 = time.time()
    if built.returncode != EXIT_RAN:
        return Confirmation("not-runnable", tool, "the build failed: " + build_error(built.stdout + built.stderr))
    cmd = [python, script]
    if tool != "none":
        exe = shutil.which(sanitizer or "compute-sanitizer")
        if exe is None:
            return Confirmation("not-runnable", tool, f"{sanitizer or 'compute-sanitizer'} is not installed here")
        extra = {"racecheck": ["--racecheck-report", "all"],
                 # An access past one tensor's end (or before its start) otherwise lands in its
                 # neighbour's allocation, which memcheck sees as valid. Not for a runtime copy:
                 # the padding would make a range past the end valid to the runtime's own check.
                 "memcheck": [] if desc.get("runtime_copy") else ["--padding", str(MEMCHECK_PADDING)]}.get(tool, [])
        cmd = [exe, "--tool", tool, "--target-processes", "all"] + extra + cmd
    hangs = bool(desc.get("hangs"))
    limit = min(timeout, hang_seconds) if hangs else timeout
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        if hangs:
            return Confirmation("confirmed", tool, f"the run did not return in {limit:g} s: the kernel hung, as the "
                                "finding says")
        return Confirmation("not-runnable", tool, f"the run ran past {timeout:g} s")
    out = done.stdout + done.stderr
    (repro_dir / "run.log").write_text(f"$ {' '.join(cmd)}\n# build {t1 - t0:.0f} s, run {time.time() - t1:.0f} s, "
                                       f"exit status {done.returncode}\n" + out)
    if done.returncode == EXIT_CANNOT_RUN and "not runnable:" in out:
        return Confirmation("not-runnable", tool, _tail(out, 1))
    if tool != "none":
        report = parse(out)
        if report.errors is None:
            return Confirmation("not-runnable", tool, "the sanitizer printed no summary: " + _tail(out))
        # The finding's line, or its other access's (racecheck may name either side of a race).
        at_finding = any(names_line(report, file, int(line)) for file, _, line in
                         (w.rpartition(":") for w in [desc["where"], *desc.get("also", [])]))
        if not report.found and report.warnings and at_finding:
            # racecheck's warnings are hazards it cannot prove harmful or harmless (it does not know
            # the values); one at either access of the finding is the race seen, said as a warning.
            return Confirmation("confirmed", tool, f"racecheck warning (no error) at the finding's accesses: "
                                f"{report.first}")
        refused = _api_error_refusal(desc, tool, report.first) if report.found else None
        if refused is not None:
            return refused
        if report.found:
            at = f" at {report.at[0]}:{report.at[1]}" if report.at else ""
            elsewhere = "" if not report.places or at_finding else \
                f" (the sanitizer does not name the finding's line {desc['where']}: the witness fails elsewhere first)"
            return Confirmation("confirmed", tool, f"{report.errors} error(s); first: {report.first}{at}{elsewhere}")
    if done.returncode == EXIT_OP_ERROR:
        said = next((ln for ln in out.splitlines() if ln.startswith("the op raised")), "the op raised an error")
        return Confirmation("not-reproduced", tool, said[:300])
    cuda_error = next((ln for ln in out.splitlines() if ln.startswith("CUDA error")), None)
    if tool in ("racecheck", "synccheck") and (cuda_error or done.returncode < 0):
        # A fault is not the race or the barrier this finding claims: only the tool's report is.
        return Confirmation("not-reproduced", tool, f"{tool} reported nothing; the run faulted instead: "
                            + (cuda_error or f"signal {-done.returncode}")[:240])
    if done.returncode == EXIT_CUDA_ERROR and cuda_error:
        refused = _api_error_refusal(desc, tool, cuda_error)
        if refused is not None:
            return refused
        return Confirmation("confirmed", tool, cuda_error.strip()[:300])
    # A fault can also end the process from a destructor (an asynchronous CUDA error thrown where
    # nothing catches it): the runtime's own words confirm it.
    fault = next((ln for ln in out.splitlines() if any(w in ln for w in _FAULTS)), None)
    if done.returncode < 0 and fault:
        return Confirmation("confirmed", tool, f"the process died ({-done.returncode}) on: {fault.strip()[:260]}")
    if desc["kind"] == "program" and any(f"program fault: signal {n}" in out for n in (7, 11)):
        # A host access of the program's own (argv, a host array): no sanitizer watches host memory,
        # the segmentation fault is the evidence.
        return Confirmation("confirmed", tool, "the program died on a memory fault (SIGSEGV/SIGBUS) in host code")
    if done.returncode not in (EXIT_RAN, EXIT_CUDA_ERROR, EXIT_BUILD, EXIT_OP_ERROR):
        return Confirmation("not-runnable", tool, f"exit status {done.returncode}: " + _tail(out))
    why = f" ({desc['static_only']})" if desc.get("static_only") else ""
    return Confirmation("not-reproduced", tool, "the run was clean" + (f" under {tool}" if tool != "none" else "")
                        + why)


MEMCHECK_PADDING = 1 << 20  # bytes of invalid memory after every allocation
LARGE_BYTES = 8 << 30  # reproducers this large run one at a time, after the others


def confirm_all(out_dir: Path, python: str | None = None, sanitizer: str | None = None,
                timeout: float = 1800, progress=None, jobs: int = 1, only: str | None = None) -> dict[str, dict]:
    """Run every reproducer ``kernelvet repro`` wrote into ``out_dir`` (its index.json; ``only``: those
    whose directory contains one of its comma-separated parts); returns, and writes to ``out_dir/confirmations.json``,
    fingerprint -> confirmation. ``jobs`` reproducers build and run at once (they share the GPU);
    one that needs more than LARGE_BYTES of GPU memory runs alone."""
    index = json.loads((out_dir / "index.json").read_text())
    wanted = [w for w in (only or "").split(",") if w]
    entries = [e for e in index["reproducers"] if not wanted or any(w in e["dir"] for w in wanted)]
    results: dict[str, dict] = {}

    def one(entry):
        c = confirm_one(out_dir / entry["dir"], python or sys.executable, sanitizer, timeout)
        results[entry["fingerprint"]] = dict(c.as_dict(), where=entry["where"], check=entry["check"])
        if progress:
            progress(entry, c)

    def large(entry) -> bool:
        desc = json.loads((out_dir / entry["dir"] / "repro.json").read_text())
        return desc["runnable"] and desc["device_bytes"] > LARGE_BYTES

    small = [e for e in entries if not large(e)]
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(one, small))
    for entry in entries:
        if entry not in small:
            one(entry)
    results = {e["fingerprint"]: results[e["fingerprint"]] for e in entries}  # the index's order
    (out_dir / "confirmations.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


def annotate_report(report: dict, confirmations: dict[str, dict]) -> int:
    """Add each finding's confirmation to a JSON report (docs/output.md); returns how many."""
    n = 0
    for f in report.get("findings", []):
        c = confirmations.get(f.get("fingerprint"))
        if c is not None:
            f["confirmation"] = {k: c[k] for k in FIELDS}
            n += 1
    return n
