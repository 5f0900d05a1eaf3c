"""The driver: manifest instances in, verdicts and merged findings out. One failing op, file or
instance never stops the others: it gets an inconclusive verdict with the reason."""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from analyzers.api import OpNotFound, Workspace
from analyzers.engine.context import Options
from analyzers.findings import Finding, Inconclusive, InstanceResult
from analyzers.frontend.parse import ParseError

from . import zeroconfig
from .manifest import LoadedManifest, Planned, expand
from .manifest.schema import Manifest


@dataclass
class MergedFinding:
    """One place in the source, with every instance that fails there."""

    check: str
    finding: Finding  # the representative: the smallest witness
    ops: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)

    @property
    def location(self):
        return self.finding.location


@dataclass
class InstanceReport:
    planned: Planned
    result: InstanceResult


@dataclass
class ScanReport:
    root: Path
    instances: list[InstanceReport] = field(default_factory=list)
    findings: list[MergedFinding] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> dict:
        out = {"bug": 0, "verified": 0, "inconclusive": 0}
        for r in self.instances:
            out[r.result.verdict] = out.get(r.result.verdict, 0) + 1
        return out

    @property
    def exit_code(self) -> int:
        c = self.counts()
        if self.findings:
            return 1
        if c["inconclusive"]:
            return 3
        return 0


def scan(root: Path, manifest: LoadedManifest | None, only_files: set[str] | None = None, progress=None,
         options: Options | None = None, jobs: int | None = None,
         zero_config_files: list[str] | None = None) -> ScanReport:
    """Verify every instance of the manifest (in ``jobs`` processes; default: one per core), and
    in zero-config mode every op of ``zero_config_files`` that the manifest does not bind."""
    t0 = time.perf_counter()
    spec = manifest.spec if manifest is not None else Manifest(version=0, models=[], ops=[])
    opts = options or Options(time_budget_s=spec.options.time_budget_s, query_timeout_ms=spec.options.query_timeout_ms,
                              unroll_max=spec.options.unroll_max, minimal_witness=spec.options.minimal_witness)
    planned = expand(manifest, only_files, root) if manifest is not None else []
    if zero_config_files:
        covered = {(p.file, p.launcher) for p in planned}
        planned += zeroconfig.plan(Path(root), zero_config_files, covered, spec.include_dirs, spec.defines, spec.arch)
    setup = (str(root), tuple(spec.include_dirs), dict(spec.defines), spec.arch, opts)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(planned)))
    results: list = [None] * len(planned)
    done = 0
    if jobs == 1:
        _init_worker(*setup)
        for i, p in enumerate(planned):
            if progress is not None:
                progress(done, len(planned), p)
            results[i] = _verify_in_worker(p)
            done += 1
    else:
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker, initargs=setup) as pool:
            # Instances of one file go out together, so each worker parses a file about once.
            futures = {pool.submit(_verify_in_worker, p): i for i, p in sorted(enumerate(planned), key=lambda x: x[1].file)}
            for fut in as_completed(futures):
                i = futures[fut]
                try:
                    results[i] = fut.result()
                except Exception as exc:  # a worker that died: the instance says so, the scan goes on
                    results[i] = _failed(planned[i], "internal-error", f"the worker failed ({type(exc).__name__}: {exc})")
                done += 1
                if progress is not None:
                    progress(done - 1, len(planned), planned[i])
    if progress is not None:
        progress(len(planned), len(planned), None)
    report = ScanReport(Path(root))
    report.instances = [InstanceReport(p, r) for p, r in zip(planned, results)]
    report.findings = merge(report.instances)
    report.seconds = time.perf_counter() - t0
    return report


_WORKER: dict = {}


def _init_worker(root: str, include_dirs, defines, arch, options) -> None:
    _WORKER["ws"] = Workspace(Path(root), include_dirs, defines, arch)
    _WORKER["options"] = options


def _verify_in_worker(p: Planned) -> InstanceResult:
    return verify_one(_WORKER["ws"], p, _WORKER["options"])


def verify_one(ws: Workspace, p: Planned, options: Options) -> InstanceResult:
    try:
        op = ws.op(p.file, p.launcher)
    except (OpNotFound, ParseError) as exc:
        return _failed(p, "op-error", str(exc))
    try:
        if p.instance is None:
            return ws.verify_zero_config(op, options, p.label)
        return ws.verify(op, p.instance, options, p.label, p.models)
    except Exception as exc:  # a defect of kernelvet: say so, keep going
        return _failed(p, "internal-error", f"kernelvet failed on this instance ({type(exc).__name__}: {exc})")


def _failed(p: Planned, reason: str, detail: str) -> InstanceResult:
    r = InstanceResult(p.op_name, p.label, list(p.models), p.instance.dtype if p.instance is not None else "any", "inconclusive")
    r.inconclusive.append(Inconclusive(reason, detail, None))
    return r


def merge(instances: list[InstanceReport]) -> list[MergedFinding]:
    merged: dict[tuple, MergedFinding] = {}
    for ir in instances:
        for f in ir.result.findings:
            key = (f.check, f.location.file, f.location.line, f.location.col)
            m = merged.get(key)
            if m is None:
                m = merged[key] = MergedFinding(f.check, f)
            elif _smaller(f.witness, m.finding.witness):
                m.finding = f
            _add(m.ops, ir.planned.op_name)
            if f.kernel:
                _add(m.kernels, f.kernel)
            for model in ir.planned.models:
                _add(m.models, model)
            _add(m.dtypes, ir.result.dtype)
    # Model-aware findings first: zero-config ones hold only for some shape, and rank below.
    return sorted(merged.values(), key=lambda m: (m.finding.zero_config, m.location.file, m.location.line,
                                                  m.location.col, m.check))


def _add(xs: list, x) -> None:
    if x not in xs:
        xs.append(x)


def _smaller(a: dict, b: dict) -> bool:
    """The witness with the smaller input (its largest size first, e.g. num_tokens, then the rest)."""
    def size(w):
        vals = [v for k, v in w.items() if isinstance(v, int) and not isinstance(v, bool)
                and not k.startswith(("model.", "blockIdx", "threadIdx")) and "(loop" not in k and "loaded at" not in k]
        return (max(vals, default=0), sum(vals))
    return size(a) < size(b)
