"""The driver: manifest instances in, verdicts and merged findings out. One failing op, file or
instance never stops the others: it gets an inconclusive verdict with the reason."""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path

from analyzers.api import OpNotFound, Workspace
from analyzers.engine.context import Options
from analyzers.findings import Finding, Inconclusive, InstanceResult
from analyzers.frontend.parse import ParseError

from .isolation import IsolatedFailure, limit_memory, run_isolated
from .exitcodes import EXIT_CLEAN, EXIT_CONTRACT, EXIT_FINDINGS, EXIT_INCONCLUSIVE, EXIT_UNVERIFIED
from .cache import ResultCache, cache_key, closure_key, linked_keys
from . import zeroconfig
from .irhash import op_hash
from .serialize import remap_spans
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
    fingerprint: str = ""  # bot.fingerprint: stable across edits that move lines
    suppressed: str | None = None  # the reason of an inline suppression
    suppressed_at: str | None = None
    baselined: bool = False  # listed in the baseline file
    op_indexes: list[int] = field(default_factory=list)  # the manifest ops of the instances that fail here
    causes: list[tuple[str, int, int]] = field(default_factory=list)  # (file, first, last): manifest entries

    @property
    def location(self):
        return self.finding.location

    @property
    def status(self) -> str:
        return "suppressed" if self.suppressed is not None else "baselined" if self.baselined else "new"


@dataclass
class InstanceReport:
    planned: Planned
    result: InstanceResult
    cached: bool = False  # taken from the cache, not verified in this run


@dataclass(frozen=True)
class Unverified:
    """A file the run was asked to verify (named on the command line, scanned in zero-config mode,
    or touched by the change) that no instance verified, or that does not compile."""

    file: str
    why: str
    line: int = 0

    def text(self) -> str:
        return f"{self.file}:{self.line}: {self.why}" if self.line else f"{self.file}: {self.why}"


@dataclass
class ScanReport:
    root: Path
    instances: list[InstanceReport] = field(default_factory=list)
    findings: list[MergedFinding] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)  # malformed suppressions, with file:line
    unverified: list[Unverified] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)  # files the run was asked about (repository paths)
    include_notes: list[str] = field(default_factory=list)  # includes the sandbox dropped, once each

    def note_unverified(self, file: str, why: str, line: int = 0) -> None:
        u = Unverified(file, why, line)
        if u not in self.unverified:
            self.unverified.append(u)

    def rebase(self, top: Path) -> None:
        """Make every path relative to ``top`` (the repository root) instead of the scanned
        directory below it, so SARIF URIs and text paths exist at the root (code scanning links
        them); ``root`` becomes ``top``."""
        top = Path(top).resolve()
        try:
            prefix = Path(self.root).resolve().relative_to(top)
        except ValueError:
            return
        if str(prefix) == ".":
            return

        def sp(s):
            if s is None or not s.file or s.file.startswith("<") or Path(s.file).is_absolute():
                return s
            return replace(s, file=str(prefix / s.file))

        seen: set[int] = set()
        for ir in self.instances:
            if id(ir.result) not in seen:
                seen.add(id(ir.result))
                remap_spans(ir.result, sp)
        for m in self.findings:
            m.suppressed_at = str(prefix / m.suppressed_at) if m.suppressed_at else m.suppressed_at
        self.unverified = [replace(u, file=str(prefix / u.file) if u.file != "." else str(prefix))
                           for u in self.unverified]
        self.include_notes = [f"{prefix}/{n}" for n in self.include_notes]
        self.touched = {str(prefix / t) for t in self.touched}
        self.root = top

    def note_compile_errors(self) -> None:
        """A compiler error inside a touched file leaves what it touches unverified, whatever the
        verdict of the instances it stopped: it is not a mere inconclusive."""
        for ir in self.instances:
            for inc in ir.result.inconclusive:
                span = inc.span
                if (inc.detail.startswith("parse error") and span is not None and span.file in self.touched):
                    self.note_unverified(span.file, f"does not compile: {inc.detail.removeprefix('parse error: ')}",
                                         span.line)

    @property
    def active(self) -> list[MergedFinding]:
        """Findings neither suppressed nor in the baseline: what fails a run."""
        return [m for m in self.findings if m.status == "new"]

    @property
    def cache_hits(self) -> int:
        return sum(1 for r in self.instances if r.cached)

    @property
    def bugs(self) -> list[MergedFinding]:
        """Active findings that are bugs: contract findings (zero-config, engine/contract.py) apart."""
        return [m for m in self.active if not m.finding.contract]

    @property
    def contracts(self) -> list[MergedFinding]:
        """Active contract findings: real only for calls that break what the op does not check."""
        return [m for m in self.active if m.finding.contract]

    def counts(self) -> dict:
        out = {"bug": 0, "contract": 0, "verified": 0, "inconclusive": 0}
        for r in self.instances:
            out[r.result.verdict] = out.get(r.result.verdict, 0) + 1
        return out

    @property
    def exit_code(self) -> int:
        """1 bug findings, 5 something asked for is unverified, 6 contract findings, 3 inconclusive,
        0 all verified (README, "Exit codes")."""
        c = self.counts()
        if self.bugs:
            return EXIT_FINDINGS
        if self.unverified:
            return EXIT_UNVERIFIED
        if self.contracts:
            return EXIT_CONTRACT
        if c["inconclusive"]:
            return EXIT_INCONCLUSIVE
        return EXIT_CLEAN


def options_for(manifest: LoadedManifest | None, time_budget_s: float | None = None) -> Options:
    spec = manifest.spec if manifest is not None else Manifest(version=0, models=[], ops=[])
    o = spec.options
    returns = tuple(sorted((name, r.min, r.max) for name, r in spec.returns.items()))
    return Options(time_budget_s=o.time_budget_s if time_budget_s is None else time_budget_s,
                   query_timeout_ms=o.query_timeout_ms, unroll_max=o.unroll_max, minimal_witness=o.minimal_witness,
                   follow_ups=o.follow_ups, returns=returns,
                   witness_memory_bytes=int(o.witness_memory_gib * (1 << 30)), global_races=o.global_races)


def shard_of(planned: list[Planned], index: int, count: int, costs: dict | None = None) -> list[Planned]:
    """Shard ``index`` (1-based) of ``count``: the costliest part first to the shard with the least
    cost so far; the same input always splits the same. A part is a whole file (parsed once), or,
    for a file that costs more than a shard's fair share, each of its instances (the file is then
    parsed in each shard that has some: seconds, against the minutes such a file takes). An
    instance's cost is its ``costs`` entry (by ``cost_key``: the work a previous run measured,
    results.load_costs), one the previous run did not have costing the median of those it had;
    without costs, every instance costs one."""
    known = sorted(costs.values()) if costs else []
    default = known[len(known) // 2] if known else 1
    cost = [costs.get(cost_key(p), default) for p in planned] if costs else [1] * len(planned)
    by_file: dict[str, list[int]] = {}
    for i, p in enumerate(planned):
        by_file.setdefault(p.file, []).append(i)
    fair = sum(cost) / count
    parts: list[tuple[float, str, list[int]]] = []
    for file, idx in by_file.items():
        total = sum(cost[i] for i in idx)
        if total > fair and len(idx) > 1:
            parts += [(cost[i], file, [i]) for i in idx]
        else:
            parts.append((total, file, idx))
    loads = [0.0] * count
    mine: set[int] = set()
    for part_cost, _, idx in sorted(parts, key=lambda x: (-x[0], x[1], x[2])):
        k = min(range(count), key=lambda i: (loads[i], i))
        loads[k] += part_cost
        if k == index - 1:
            mine.update(idx)
    return [p for i, p in enumerate(planned) if i in mine]


def cost_key(p: Planned) -> tuple[str, str, str]:
    """An instance as a later run of an edited manifest still names it (op indexes shift), as a
    results file records it (results.dump: file, op, instance)."""
    return instance_key(p.file, p.op_name, repr(p.instance))


def instance_key(file: str, op: str, instance: str) -> tuple[str, str, str]:
    return (file, op, instance)


def scan(root: Path, manifest: LoadedManifest | None, only_files: set[str] | None = None, progress=None,
         options: Options | None = None, jobs: int | None = None, zero_config_files: list[str] | None = None, *,
         planned: list[Planned] | None = None,
         cache: ResultCache | None = None, shard: tuple[int, int] | None = None,
         shard_costs: dict | None = None, workspace: Workspace | None = None) -> ScanReport:
    """Verify every instance of the manifest (or ``planned``), in ``jobs`` processes (default: one
    per core), and in zero-config mode every op of ``zero_config_files`` that the manifest does not
    bind; take what ``cache`` holds for the same IR, binding and tool version. With ``shard``, only
    that shard, balanced by ``shard_costs`` (shard_of). A ``workspace`` that
    already lowered ops (the impact analysis's) is handed to forked workers."""
    t0 = time.perf_counter()
    spec = manifest.spec if manifest is not None else Manifest(version=0, models=[], ops=[])
    opts = options or options_for(manifest)
    if planned is None:
        planned = expand(manifest, only_files, root) if manifest is not None else []
        if manifest is not None:
            from .manifest import ManifestError
            from .manifest.targets import check_targets
            errors = check_targets(manifest, planned, Path(root))
            if errors:
                raise ManifestError(errors)
        if zero_config_files:
            covered = {(p.file, p.launcher) for p in planned}
            if jobs == 1 and workspace is None:
                # No isolation asked for (tests, debugging): parse here, once, for planning and
                # verifying both.
                workspace = Workspace(Path(root), spec.include_dirs, spec.defines, spec.arch)
            planned += zeroconfig.plan(Path(root), zero_config_files, covered, spec.include_dirs, spec.defines,
                                       spec.arch, workspace=workspace if jobs == 1 else None)
    if shard is not None:
        planned = shard_of(planned, *shard, costs=shard_costs)
    setup = (str(root), tuple(spec.include_dirs), dict(spec.defines), spec.arch, opts,
             str(cache.dir) if cache is not None else None)
    n = len(planned)
    results: list = [None] * n
    done = [0]

    def finish(i: int, outcome) -> None:
        results[i] = outcome
        if progress is not None:
            progress(done[0], n, planned[i])
        done[0] += 1

    tasks: list[tuple[str, list[int]]] = []
    if cache is not None:
        # Files unchanged since the cache saw them: answered here, without a parse or a worker.
        ws = workspace or Workspace(Path(root), spec.include_dirs, spec.defines, spec.arch)
        hashes: dict = {}
        for i, p in enumerate(planned):
            hit = _cached(cache, cache.get_fingerprint(closure_key(ws, p.file, p.launcher, hashes), ws, hashes), p, opts,
                          ws.root)
            if hit is not None:
                finish(i, (hit, True))
        # The others: one task per op lowers it once and answers what the cache has for its IR;
        # what it does not have is verified instance by instance (in parallel).
        by_op: dict[tuple, list[int]] = {}
        for i, p in enumerate(planned):
            if results[i] is None:
                by_op.setdefault((p.file, p.launcher), []).append(i)
        tasks = [("probe", idx) for _, idx in sorted(by_op.items())]
    else:
        tasks = [("verify", [i]) for i, _ in sorted(enumerate(planned), key=lambda x: x[1].file)]
    _INHERITED.clear()
    if workspace is not None:
        _INHERITED.append(workspace)
    in_process = jobs == 1  # asked for explicitly (tests, debugging): no worker, no isolation
    jobs = max(1, min(jobs or os.cpu_count() or 1, sum(len(idx) for _, idx in tasks)))
    if tasks and in_process:
        _init_worker(*setup)
        for kind, idx in tasks:
            if kind == "verify":
                finish(idx[0], _verify_in_worker(planned[idx[0]]))
                continue
            for i, r in zip(idx, _probe_in_worker([planned[i] for i in idx])):
                finish(i, r if r is not None else _verify_in_worker(planned[i]))
    elif tasks:
        _run_pool(tasks, jobs, setup, planned, finish, _hard_limit(opts))
    if progress is not None:
        progress(len(planned), len(planned), None)
    report = ScanReport(Path(root))
    report.instances = [InstanceReport(p, r, cached) for p, (r, cached) in zip(planned, results)]
    if cache is not None:
        cache.hits += report.cache_hits
        cache.misses += len(planned) - report.cache_hits
    report.findings = merge(report.instances)
    report.seconds = time.perf_counter() - t0
    return report


def _hard_limit(opts: Options) -> float:
    """Wall-clock seconds after which a worker that finished nothing is taken for hung in a native
    call and stopped (the budget counts CPU time and z3 work; this is the safety net)."""
    return max(300.0, 4 * opts.time_budget_s * (1 + opts.follow_ups))


def _run_pool(tasks, jobs: int, setup, planned, finish, hard_s: float) -> None:
    """The tasks on ``jobs`` worker processes. A worker that dies (a crash in libclang or z3, the
    memory cap) breaks the pool: a new one takes the tasks that were lost. A task lost twice runs
    alone in an isolated process, where its death is its own verdict, and the others keep theirs."""
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    lost: dict[tuple, int] = {}
    queue = list(tasks)
    while queue:
        pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker, initargs=setup)
        pending: dict = {}
        unsent: list = []  # tasks the pool refused because a worker had already died

        def submit(kind: str, idx: list[int]) -> None:
            try:
                if kind == "probe":
                    pending[pool.submit(_probe_in_worker, [planned[i] for i in idx])] = (kind, idx)
                else:
                    pending[pool.submit(_verify_in_worker, planned[idx[0]])] = (kind, idx)
            except BrokenProcessPool:
                unsent.append((kind, idx))

        for kind, idx in queue:
            submit(kind, idx)
        queue, broken = [], False
        try:
            while pending and not broken and not unsent:
                ready, _ = wait(pending, timeout=hard_s, return_when=FIRST_COMPLETED)
                if not ready:
                    broken = True  # nothing finished within the hard limit: a native call hangs
                    break
                for fut in ready:
                    kind, idx = pending.pop(fut)
                    try:
                        outcome = fut.result()
                    except BrokenProcessPool:
                        queue.append((kind, idx))
                        broken = True
                        continue
                    except Exception as exc:  # noqa: BLE001 - the instances say so, the scan goes on
                        for i in idx:
                            finish(i, (_failed(planned[i], "internal-error",
                                               f"the worker failed ({type(exc).__name__}: {exc})"), False))
                        continue
                    _take(kind, idx, outcome, finish, submit)
        finally:
            if broken or unsent:
                queue += list(pending.values())
                for proc in list(getattr(pool, "_processes", {}).values()):
                    if proc.is_alive():
                        proc.kill()
            pool.shutdown(wait=True, cancel_futures=True)
        # A task refused at submit was not lost by the worker that died: it runs again without
        # counting as a loss of its own.
        again = list(unsent)
        for kind, idx in queue:
            key = (kind, tuple(idx))
            lost[key] = lost.get(key, 0) + 1
            if lost[key] < 2:
                again.append((kind, idx))
                continue
            outcome = _run_alone(setup, kind, [planned[i] for i in idx], hard_s * len(idx))
            if isinstance(outcome, IsolatedFailure):
                for i in idx:
                    finish(i, (_stopped(planned[i], outcome), False))
                continue
            _take(kind, idx, outcome, finish, lambda k, ix: finish(ix[0], _verify_alone(setup, planned[ix[0]], hard_s)))
        queue = again


def _take(kind: str, idx: list[int], outcome, finish, submit) -> None:
    if kind == "verify":
        finish(idx[0], outcome)
        return
    for i, r in zip(idx, outcome):
        if r is None:
            submit("verify", [i])
        else:
            finish(i, r)


def _task_alone(setup, kind: str, items: list):
    _init_worker(*setup)
    if kind == "verify":
        return _verify_in_worker(items[0])
    return _probe_in_worker(items)


def _run_alone(setup, kind: str, items: list, timeout: float):
    """The task's outcome, run in an isolated process; or the IsolatedFailure that stopped it."""
    try:
        return run_isolated(_task_alone, setup, kind, items, timeout=timeout)
    except IsolatedFailure as exc:
        return exc


def _verify_alone(setup, p: Planned, hard_s: float):
    outcome = _run_alone(setup, "verify", [p], hard_s)
    return (_stopped(p, outcome), False) if isinstance(outcome, IsolatedFailure) else outcome


def _stopped(p: Planned, exc: IsolatedFailure) -> InstanceResult:
    reason = {"timeout": "timeout", "crash": "native-crash"}.get(exc.kind, "internal-error")
    return _failed(p, reason, f"the analysis of this instance stopped: {exc}; the other instances were not affected")


_WORKER: dict = {}
_INHERITED: list = []  # a Workspace of the parent process, reused by forked workers (no parse again)


def _init_worker(root: str, include_dirs, defines, arch, options, cache_dir: str | None = None) -> None:
    if mp.parent_process() is not None:
        limit_memory()  # a worker, not the main process (jobs=1 runs here)
    inherited = _INHERITED[0] if _INHERITED else None
    if inherited is not None and inherited.root == Path(root).resolve():
        _WORKER["ws"] = inherited
    else:
        _WORKER["ws"] = Workspace(Path(root), include_dirs, defines, arch)
    _WORKER["options"] = options
    _WORKER["cache"] = ResultCache(Path(cache_dir)) if cache_dir else None
    _WORKER["hashes"] = {}


def _verify_in_worker(p: Planned) -> tuple[InstanceResult, bool]:
    if os.environ.get("KERNELVET_FAULT_INJECT") == p.op_name:
        # Fault injection for the recovery tests: this worker dies as a libclang crash would.
        import signal
        os.kill(os.getpid(), signal.SIGSEGV)
    return verify_one(_WORKER["ws"], p, _WORKER["options"], _WORKER["cache"], _WORKER["hashes"])


def _probe_in_worker(batch: list[Planned]) -> list:
    """Instances of one op: lower it once (in this worker) and take from the cache what it has for
    its IR; None for each instance that needs verifying."""
    ws, options, cache = _WORKER["ws"], _WORKER["options"], _WORKER["cache"]
    try:
        op = ws.op(batch[0].file, batch[0].launcher)
    except (OpNotFound, ParseError) as exc:
        return [(_failed(p, "op-error", str(exc)), False) for p in batch]
    ir = op_hash(op)  # lowers all the op reaches, the definitions of other files included
    hashes = _WORKER["hashes"]
    cache.put_fingerprint(closure_key(ws, batch[0].file, batch[0].launcher, hashes), ir, linked_keys(ws, op, hashes))
    out = []
    for p in batch:
        hit = _cached(cache, ir, p, options, ws.root)
        out.append((hit, True) if hit is not None else None)
    return out


def verify_one(ws: Workspace, p: Planned, options: Options, cache: ResultCache | None = None,
               hashes: dict | None = None) -> tuple[InstanceResult, bool]:
    """The instance's result, and whether it came from the cache."""
    closure = None
    if cache is not None:
        # Files unchanged since the op was last lowered: its fingerprint is known without a parse.
        closure = closure_key(ws, p.file, p.launcher, hashes)
        hit = _cached(cache, cache.get_fingerprint(closure, ws, hashes), p, options, ws.root)
        if hit is not None:
            return hit, True
    try:
        op = ws.op(p.file, p.launcher)
    except (OpNotFound, ParseError) as exc:
        return _failed(p, "op-error", str(exc)), False
    key = None
    if cache is not None:
        ir = op_hash(op)
        cache.put_fingerprint(closure, ir, linked_keys(ws, op, hashes))
        key = cache_key(ir, p.instance, options)
        hit = _cached(cache, ir, p, options, ws.root)
        if hit is not None:
            return hit, True
    try:
        if p.instance is None:
            result = ws.verify_zero_config(op, options, p.label)
        else:
            result = ws.verify(op, p.instance, options, p.label, p.models)
    except Exception as exc:  # a defect of kernelvet: say so, keep going
        if os.environ.get("KERNELVET_DEBUG"):
            import traceback
            traceback.print_exc()
        return _failed(p, "internal-error", f"kernelvet failed on this instance ({type(exc).__name__}: {exc})"), False
    if key is not None:
        cache.put(key, result, ws.root)
    return result, False


def _cached(cache: ResultCache, fingerprint: str | None, p: Planned, options: Options, root: Path):
    if fingerprint is None:
        return None
    hit = cache.get(cache_key(fingerprint, p.instance, options), root)
    if hit is not None:
        # The models an instance stands for are not part of its key (a model added to the manifest
        # with the same sizes reuses the result): name the current ones.
        hit.instance, hit.models = p.label, list(p.models)
    return hit


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
            elif _preferred(f, m.finding):
                m.finding = f
            _add(m.ops, ir.planned.op_name)
            _add(m.op_indexes, ir.planned.op_index)
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


def _preferred(f: Finding, than: Finding) -> bool:
    """The finding a merged one shows: a bug before a contract finding of the same place (an
    instance where it breaks no contract makes it a bug), then the smaller witness."""
    if bool(f.contract) != bool(than.contract):
        return not f.contract
    return _smaller(f.witness, than.witness)


def _smaller(a: dict, b: dict) -> bool:
    """The witness with the smaller input (its largest size first, e.g. num_tokens, then the rest)."""
    def size(w):
        vals = [v for k, v in w.items() if isinstance(v, int) and not isinstance(v, bool)
                and not k.startswith(("model.", "blockIdx", "threadIdx")) and "(loop" not in k and "loaded at" not in k]
        return (max(vals, default=0), sum(vals))
    return size(a) < size(b)
