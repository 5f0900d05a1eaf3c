"""How much of a real repository kernelvet reaches a verdict on, kernel by kernel.

    python bench/coverage.py PATH [--manifest FILE] [--jobs N] [--time-budget S] [--json OUT]
                                  [--files GLOB] [--exclude GLOB] [--reuse PREVIOUS.json]

Finds the in-scope CUDA files under PATH (every ``.cu``; ROCm/HIP, CPU backends and files that use
CUTLASS or CuTe are out of scope), the kernels they define or include from the repository, and the
ops of each file (torch ops and plain CUDA host functions that reach a launch). Each op runs with
its manifest binding when ``--manifest`` binds it, otherwise in zero-config mode. Prints one row
per kernel -- parsed / lowered / verdict (reason) / time -- and a summary: the share of kernels that
reach ``verified``, ``bug`` or ``contract`` (zero-config findings that need a call the op's callers
do not make), the top reasons for ``inconclusive``, and per-instance times. The share is also
given without the kernels no build compiles (a source file no CMake file of the repository names: a
stand-alone test program) and without dead code (kernels nothing names but their definition).

Each file is verified in its own process with a hard limit on its CPU time (budgets count work
units, docs/performance.md, so a loaded machine gives the same verdicts, only later), so a kernel that hangs the
solver or exhausts memory costs its own file's verdicts, never the run. A file with many instances (a
dispatch over dozens of quantization types) is split across up to ``--jobs`` processes.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import multiprocessing as mp
import os
import re
import resource
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OUT_OF_SCOPE_PATH = re.compile(r"(^|/)(rocm|hip|cpu|quickreduce)(/|_|$)|_hip\.|hip_", re.I)
CUTLASS_INCLUDE = re.compile(r'#\s*include\s*[<"](cutlass|cute)/')


@dataclass
class KernelRow:
    name: str  # qualified name
    file: str
    line: int
    parsed: bool = True
    lowered: bool = False
    verdict: str = "not reached"  # verified | bug | inconclusive | not reached
    reason: str = ""
    seconds: float = 0.0
    ops: list = field(default_factory=list)
    findings: list = field(default_factory=list)


def in_scope(root: Path, path: Path, resolver) -> tuple[bool, str]:
    rel = str(path.relative_to(root))
    if OUT_OF_SCOPE_PATH.search(rel):
        return False, "ROCm/HIP or CPU backend"
    graph = resolver.graph(path)
    for f in [path, *graph.files()]:
        try:
            text = Path(f).read_text(errors="replace")
        except OSError:
            continue
        if CUTLASS_INCLUDE.search(text):
            return False, "uses CUTLASS/CuTe"
    return True, ""


# ---------------------------------------------------------------- worker (one file)

def _limit_memory(gib: int) -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    except (ValueError, OSError):
        pass


def verify_file(root: str, rel: str, planned: list, options, out, defines: dict | None = None,
                shard: tuple[int, int] = (0, 1), jobs: int = 1, only_ops: frozenset | None = None) -> None:
    """Runs in a child process: parse, find ops and kernels, verify every instance. A file with many
    instances is split: the first worker asks for ``k`` shards and verifies every k-th instance; the
    driver starts the other shards, which verify the rest (same parse, same order)."""
    _limit_memory(8)
    from analyzers.api import Workspace
    from analyzers.frontend import discover
    from analyzers.frontend.typemap import qualified_name
    ws = Workspace(Path(root), defines=defines or {})
    result = {"file": rel, "errors": 0, "kernels": [], "ops": [], "instances": [], "shard": list(shard)}
    try:
        unit = ws.unit(rel)
    except Exception as exc:  # a file the front end cannot read: its kernels are not parsed
        result["fatal"] = f"{type(exc).__name__}: {exc}"
        out.send(result)
        return
    result["errors"] = len(unit.parsed.errors)
    result["kernels"] = _kernels(unit.parsed, Path(root), qualified_name)
    out.send({"parsed": {"errors": result["errors"], "kernels": result["kernels"]}})
    by_op = collections.defaultdict(list)
    for p in planned:
        by_op[p.launcher].append(p)
    bound = {n.rsplit("::", 1)[-1] for n in by_op}
    ops = [n for n in ws.entry_points(rel) if n.rsplit("::", 1)[-1] not in bound]
    work = []
    for name in list(by_op) + ops:
        if only_ops is not None and name.rsplit("::", 1)[-1] not in only_ops:
            continue
        t0 = time.perf_counter()
        try:
            op = ws.op(rel, name)
        except Exception as exc:
            result["ops"].append({"op": name, "error": f"{type(exc).__name__}: {exc}"})
            continue
        instances = [(p.label, p.instance, False) for p in by_op.get(name, [])]
        if not instances:
            try:
                instances = [(f"{name} (zero-config{', ' + label if label else ''})", inst, True)
                             for label, inst in ws.zero_config(op)]
            except Exception as exc:  # one op's planning failure costs that op, not the file
                result["ops"].append({"op": name, "error": f"planning it failed: {type(exc).__name__}: {exc}"})
                continue
        result["ops"].append({"op": name, "lowered": [], "seconds_lower": time.perf_counter() - t0})
        work += [(name, op, entry) for entry in instances]
    index, count = shard
    if count == 1 and jobs > 1 and len(work) >= 8:
        count = min(jobs, len(work) // 4)
        out.send({"split": count})
        result["shard"] = [0, count]
    for n, (name, op, (label, inst, zero)) in enumerate(work):
        if n % count != index:
            continue
        t1 = time.perf_counter()
        try:
            r = ws.verify(op, inst, options)
            entry = {"op": name, "label": label, "zero_config": zero, "verdict": r.verdict,
                     "kernels": r.kernels, "seconds": r.seconds,
                     "findings": [_finding(f) for f in r.findings],
                     "inconclusive": [_inconclusive(i) for i in r.inconclusive]}
        except Exception as exc:
            entry = {"op": name, "label": label, "zero_config": zero, "verdict": "inconclusive", "kernels": [],
                     "seconds": time.perf_counter() - t1, "findings": [],
                     "inconclusive": [{"reason": "internal-error", "detail": f"{type(exc).__name__}: {exc}",
                                       "at": "", "kernel": None}]}
        result["instances"].append(entry)
        out.send({"progress": label, "entry": entry})  # kept if the worker is killed later
    # Kernels are lowered when a path reaches their launch: list them once the instances ran.
    for o in result["ops"]:
        if "error" not in o:
            o["lowered"] = sorted(f.name for f in ws.op(rel, o["op"]).program.functions.values() if f.kind == "kernel")
    out.send(result)


def _kernels(parsed, root: Path, qualified_name) -> list[dict]:
    """__global__ functions defined in the file or in repository headers it includes."""
    import clang.cindex as ci
    out, seen = [], set()
    for c in parsed.tu.cursor.walk_preorder():
        if c.kind not in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE) or not c.is_definition():
            continue
        if not any(k.kind == ci.CursorKind.CUDAGLOBAL_ATTR for k in c.get_children()):
            continue
        loc = c.location
        if loc.file is None:
            continue
        try:
            rel = str(Path(loc.file.name).resolve().relative_to(root.resolve()))
        except ValueError:
            continue  # shims
        key = (qualified_name(c), rel)
        if key not in seen:
            seen.add(key)
            out.append({"name": key[0], "file": rel, "line": loc.line})
    return out


def _span(s) -> str:
    return f"{s.file}:{s.line}" if s is not None else ""


def _finding(f) -> dict:
    return {"check": f.check, "at": _span(f.location), "kernel": f.kernel, "message": f.message,
            "witness": f.witness, "zero_config": f.zero_config, "contract": f.contract or None}


def _inconclusive(i) -> dict:
    return {"reason": i.reason, "detail": i.detail, "at": _span(i.span), "kernel": i.kernel}


# ---------------------------------------------------------------- driver

def run_files(root: Path, files: list[str], planned: dict, options, jobs: int, verbose: bool,
              defines: dict | None = None, only_ops: frozenset | None = None) -> list[dict]:
    """Every file in its own process, ``jobs`` at a time, each with a hard limit. A file with many
    instances runs in several processes (shards), merged into one result."""
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    pending = [(rel, (0, 1)) for rel in files]
    running: dict = {}
    shards: dict = collections.defaultdict(list)  # file -> results of its shards
    expected: dict = {rel: 1 for rel in files}
    results = []
    per_instance = options.time_budget_s * 2 * (1 + options.follow_ups)  # twice the budget of each run, for slack
    while pending or running:
        while pending and len(running) < jobs:
            rel, shard = pending.pop(0)
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=verify_file, args=(str(root), rel, planned.get(rel, []), options, send, defines,
                                                         shard, jobs, only_ops), daemon=True)
            proc.start()
            send.close()
            # A file's limit: every instance at its budget, plus parsing. Instances are unknown up
            # front, so the limit grows with each instance the worker reports. An instance may run
            # its budget once more per follow-up run (a kernel that took the whole budget skipped).
            running[(rel, shard)] = {"proc": proc, "recv": recv, "deadline": 120 + per_instance,
                                     "started": time.monotonic(), "done": None, "parsed": None, "finished": []}
        time.sleep(0.05)
        for (rel, shard), r in list(running.items()):
            try:
                while r["recv"].poll():
                    msg = r["recv"].recv()
                    if "parsed" in msg:
                        r["parsed"] = msg["parsed"]
                    elif "progress" in msg:
                        r["deadline"] = _cpu_seconds(r["proc"].pid, r["started"]) + per_instance + 30
                        r["finished"].append(msg["entry"])
                        if verbose:
                            print(f"  {rel}: {msg['progress']}", file=sys.stderr)
                    elif "split" in msg:
                        expected[rel] = msg["split"]
                        pending[:0] = [(rel, (i, msg["split"])) for i in range(1, msg["split"])]
                    else:
                        r["done"] = msg
            except (EOFError, OSError):
                pass
            alive = r["proc"].is_alive()
            if r["done"] is not None or not alive or _cpu_seconds(r["proc"].pid, r["started"]) > r["deadline"]:
                if alive and r["done"] is None:
                    r["proc"].kill()
                    why = "killed: over its time limit"
                else:
                    why = f"the worker exited with code {r['proc'].exitcode}"
                r["proc"].join(5)
                shards[rel].append(r["done"] or _lost(rel, shard, why, r["parsed"], r["finished"]))
                del running[(rel, shard)]
                if len(shards[rel]) == expected[rel]:
                    results.append(merge_shards(shards.pop(rel)))
                    print(f"[{len(results)}/{len(files)}] {rel}", file=sys.stderr)
    return results


def _cpu_seconds(pid: int, started: float) -> float:
    """The CPU time a worker has used: the limits count it, like the instance budgets, so a busy
    machine does not kill a file. Where /proc is missing, the wall-clock time since its start."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.monotonic() - started


def _lost(rel: str, shard: tuple, why: str, parsed: dict | None, finished: list) -> dict:
    """The result of a worker that never sent its own: fatal, unless it had finished instances,
    which stand (the kernels only the unfinished ones reach are not reached, and say why)."""
    if parsed is None or not finished:
        return {"file": rel, "fatal": why, "kernels": [], "ops": [], "instances": [], "shard": list(shard)}
    ops = [{"op": o, "lowered": []} for o in dict.fromkeys(e["op"] for e in finished)]
    return {"file": rel, "errors": parsed["errors"], "kernels": parsed["kernels"], "ops": ops,
            "instances": finished, "shard": list(shard), "cut_short": f"{why} after {len(finished)} instances"}


def merge_ops(previous: dict | None, new: dict, only_ops: frozenset) -> dict:
    """A file's result when only some of its ops ran again: the previous result's instances and ops
    for the others, this run's for these (the parse is this run's)."""
    if previous is None or "fatal" in previous or "fatal" in new:
        return new
    other = lambda name: name.rsplit("::", 1)[-1] not in only_ops  # noqa: E731
    merged = dict(new, instances=[i for i in previous["instances"] if other(i["op"])] + new["instances"],
                  ops=[o for o in previous["ops"] if other(o["op"])] + new["ops"])
    if previous.get("cut_short"):
        merged["cut_short"] = previous["cut_short"]  # it may have left out instances of the other ops
    return merged


def merge_shards(parts: list[dict]) -> dict:
    """One file's result from its shards: the first shard's parse, everyone's instances. A shard
    that failed leaves its instances out and says so; the file fails as a whole only if all did."""
    parts = sorted(parts, key=lambda p: p.get("shard", [0])[0])
    ok = [p for p in parts if "fatal" not in p]
    if not ok:
        return parts[0]
    merged = dict(ok[0], instances=[i for p in ok for i in p["instances"]])
    ops = {}
    for p in ok:
        for o in p["ops"]:
            if o["op"] in ops and "lowered" in o:
                ops[o["op"]]["lowered"] = sorted(set(ops[o["op"]].get("lowered", [])) | set(o["lowered"]))
            else:
                ops.setdefault(o["op"], dict(o))
    merged["ops"] = list(ops.values())
    cut = [p["cut_short"] for p in ok if p.get("cut_short")]
    if cut:
        merged["cut_short"] = "; ".join(cut)
    failed = [p for p in parts if "fatal" in p]
    if failed:
        merged["shard_failures"] = [f"shard {p['shard'][0]}: {p['fatal']}" for p in failed]
    return merged


def base_name(kernel_display: str) -> str:
    """``vllm::act_kernel<c10::Half, &silu>`` -> ``vllm::act_kernel``."""
    depth, out = 0, []
    for ch in kernel_display:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def summarise(results: list[dict]) -> tuple[list[KernelRow], dict]:
    rows: dict[tuple, KernelRow] = {}
    by_name: dict[str, list[KernelRow]] = collections.defaultdict(list)
    for res in results:
        for k in res.get("kernels", []):
            key = (k["name"], k["file"])
            if key not in rows:
                rows[key] = KernelRow(k["name"], k["file"], k["line"])
                by_name[k["name"]].append(rows[key])
    for res in results:
        if "fatal" in res:
            continue
        # A kernel the file's translation unit defines is that definition, not another file's
        # kernel of the same name (vLLM has two vllm::cvt_fp16_to_fp4).
        local: dict[str, list[KernelRow]] = collections.defaultdict(list)
        for k in res.get("kernels", []):
            local[k["name"]].append(rows[(k["name"], k["file"])])

        def rows_named(name: str) -> list[KernelRow]:
            return local.get(name) or by_name.get(name, [])

        for op in res["ops"]:
            for name in op.get("lowered", []):
                for row in rows_named(name):
                    row.lowered = True
        for inst in res["instances"]:
            reached = {base_name(k) for k in inst["kernels"]}
            for name in reached:
                for row in rows_named(name):
                    _add(row.ops, inst["op"])
                    row.seconds += inst["seconds"]
                    mine = [f for f in inst["findings"] if f["kernel"] and base_name(f["kernel"]) == name]
                    bugs = [f for f in mine if not f.get("contract")]
                    contracts = [f for f in mine if f.get("contract")]
                    stuck = [i for i in inst["inconclusive"] if i["kernel"] and base_name(i["kernel"]) == name]
                    # An instance that ran out of time stops wherever it was: every kernel it
                    # reached and did not finish clean is inconclusive.
                    stuck += [i for i in inst["inconclusive"] if i["kernel"] is None and i["reason"] == "timeout"]
                    if bugs:
                        row.verdict = "bug"
                        row.findings.extend(bugs)
                    elif contracts and row.verdict != "bug":
                        # Zero-config findings every witness of which breaks what the op's callers
                        # keep (README, "Contract findings"): decided, listed apart from bugs.
                        row.verdict = "contract"
                        row.findings.extend(contracts)
                    elif stuck and row.verdict not in ("bug", "contract"):
                        row.verdict = "inconclusive"
                        row.reason = row.reason or f"{stuck[0]['reason']}: {stuck[0]['detail']} ({stuck[0]['at']})"
                    elif row.verdict == "not reached":
                        row.verdict = "verified"
    for res in results:
        why = res.get("fatal")
        for k in res.get("kernels", []):
            row = rows[(k["name"], k["file"])]
            if row.verdict == "not reached":
                row.reason = row.reason or why or _not_reached_reason(res, k["name"])
    return sorted(rows.values(), key=lambda r: (r.file, r.line)), {}


def _not_reached_reason(res: dict, name: str) -> str:
    if res.get("cut_short"):
        return f"the file's worker was {res['cut_short']}"
    errors = [o for o in res["ops"] if "error" in o]
    if not res["ops"]:
        return "no op of the file reaches a launch"
    # The ops that lower this kernel are the ones whose stop explains it.
    mine = {o["op"] for o in res["ops"] if name in o.get("lowered", [])}
    if not mine:
        # Kernels are lowered when a path reaches their launch: an instance that ran out of time,
        # or stopped at something the engine does not follow, may have stopped before it.
        timed_out = [inst for inst in res["instances"]
                     if any(i["reason"] == "timeout" and i["kernel"] is None for i in inst["inconclusive"])]
        if timed_out:
            return f"the op stops before the launch: timeout: {timed_out[0]['op']} ran past its time budget"
        stops = collections.Counter((inst["op"], i["reason"], i["detail"], i["at"]) for inst in res["instances"]
                                    for i in inst["inconclusive"] if i["kernel"] is None)
        if stops:
            (op, reason, detail, at), _ = stops.most_common(1)[0]
            return f"the op stops before the launch: {reason}: {op}: {detail} ({at})"
        if errors:
            return f"op not lowered: {errors[0]['error']}"
        return "no op of the file launches it"
    stuck = [i for inst in res["instances"] if inst["op"] in mine
             for i in inst["inconclusive"] if i["kernel"] is None]
    if stuck:
        return f"the op stops before the launch: {stuck[0]['reason']}: {stuck[0]['detail']} ({stuck[0]['at']})"
    return "its op takes other paths (a dispatch case or branch no instance reaches)"


def _add(xs: list, x) -> None:
    if x not in xs:
        xs.append(x)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="a checkout of the repository")
    ap.add_argument("--manifest", help="bindings for the ops it names (others run in zero-config mode)")
    ap.add_argument("--models", help="with --manifest: only these models (comma-separated names)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--time-budget", type=float, default=60.0, help="seconds per instance (default 60)")
    ap.add_argument("--files", action="append", default=[], metavar="GLOB",
                    help="glob of files under PATH (default **/*.cu; repeat for several)")
    ap.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                    help="leave out files matching this glob (with --reuse: their previous results stand)")
    ap.add_argument("--json", help="write every row and instance here")
    ap.add_argument("-D", "--define", action="append", default=[], metavar="NAME[=VALUE]",
                    help="a preprocessor definition the repository's build sets (vLLM: -D ENABLE_FP8)")
    ap.add_argument("--reuse", metavar="JSON", help="a previous --json: its results stand for the files this run "
                    "does not verify (re-verify a few files, report the whole repository)")
    ap.add_argument("--ops", metavar="NAME,...", help="only these ops of the files (launcher names, as the "
                    "JSON's `op` field gives them); with --reuse, the files' other ops keep their previous instances "
                    "(a long file's ops in separate runs, or one op re-verified); without it, kernels only other "
                    "ops launch show as not reached")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    only_ops = frozenset(o.strip().rsplit("::", 1)[-1] for o in args.ops.split(",")) if args.ops else None
    root = Path(args.path).resolve()
    from analyzers.frontend.includes import IncludeResolver
    from analyzers.frontend.parse import ParseConfig
    resolver = IncludeResolver(root, ParseConfig(root).search_dirs())
    files, skipped = [], collections.Counter()
    for p in sorted({p for pattern in args.files or ["**/*.cu"] for p in root.glob(pattern)}):
        if any(p.relative_to(root).match(x) for x in args.exclude):
            continue
        ok, why = in_scope(root, p, resolver)
        if ok:
            files.append(str(p.relative_to(root)))
        else:
            skipped[why] += 1
    planned = {}
    manifest = None
    if args.manifest:
        from bot.manifest import expand, load
        keep = set(args.models.split(",")) if args.models else None
        manifest = load(Path(args.manifest))
        for p in expand(manifest, None, root):
            if keep is not None:
                p.models = [m for m in p.models if m in keep]
                if not p.models:
                    continue
            planned.setdefault(p.file, []).append(p)
    t0 = time.perf_counter()
    defines = dict((d.split("=", 1) + ["1"])[:2] for d in args.define)
    from bot.scan import options_for  # the manifest's options and stated function results
    options = options_for(manifest, args.time_budget)
    results = run_files(root, files, planned, options, max(1, args.jobs), args.verbose, defines, only_ops)
    wall = time.perf_counter() - t0
    if args.reuse:
        previous = {r["file"]: r for r in json.loads(Path(args.reuse).read_text())["files"]}
        if only_ops is not None:
            results = [merge_ops(previous.get(r["file"]), r, only_ops) for r in results]
        mine = {r["file"] for r in results}
        results = [r for f, r in previous.items() if f not in mine] + results
        files = sorted({r["file"] for r in results})
    rows, _ = summarise(results)
    mark_unnamed(root, rows)
    mark_unbuilt(root, rows)
    print_report(rows, results, files, skipped, wall, partial=bool(args.reuse))
    print_threads(rows, results, root)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": [r.__dict__ for r in rows], "files": results}, indent=1,
                                              default=str))
    return 0


SOURCES = ("*.cu", "*.cuh", "*.cpp", "*.cc", "*.h", "*.hpp", "*.py")


def mark_unnamed(root: Path, rows: list[KernelRow]) -> None:
    """A kernel no op reached and whose name appears nowhere in the repository but at its
    definition is dead code: no op can reach it. Said so, and counted apart in the summary."""
    pending = collections.defaultdict(list)
    for r in rows:
        if r.verdict == "not reached":
            pending[r.name.rsplit("::", 1)[-1]].append(r)
    if not pending:
        return
    words = re.compile(r"\b(" + "|".join(re.escape(n) for n in pending) + r")\b")
    uses = collections.Counter()
    for pattern in SOURCES:
        for path in root.rglob(pattern):
            try:
                uses.update(words.findall(path.read_text(errors="replace")))
            except OSError:
                continue
    defined = collections.Counter(r.name.rsplit("::", 1)[-1] for r in rows)
    for name, named_rows in pending.items():
        if uses[name] <= defined[name]:
            for row in named_rows:
                row.reason = "dead code: nothing in the repository names it but its definition"


_CMAKE_GLOB = re.compile(r"file\s*\(\s*(GLOB|GLOB_RECURSE)\s+\w+((?:\s+(?:\"[^\"]*\"|[^\s)]+))*)\s*\)", re.I)


def cmake_globbed(root: Path, cmake_dir: Path, text: str) -> set[str]:
    """The files (relative to ``root``) that the ``file(GLOB ...)`` / ``file(GLOB_RECURSE ...)``
    calls of a CMake file collect (llama.cpp names its CUDA sources so: ``file(GLOB SRCS "*.cu")``).
    Patterns with a variable in them (``${DIR}/*.cu``) are left out: their files stay unnamed."""
    out: set[str] = set()
    for m in _CMAKE_GLOB.finditer(text):
        recurse = m.group(1).upper() == "GLOB_RECURSE"
        for word in re.findall(r'"([^"]*)"|(\S+)', m.group(2)):
            pattern = word[0] or word[1]
            if not pattern or "${" in pattern or pattern.upper() in ("CONFIGURE_DEPENDS", "LIST_DIRECTORIES",
                                                                    "RELATIVE", "FOLLOW_SYMLINKS", "TRUE", "FALSE"):
                continue
            base = Path(pattern) if Path(pattern).is_absolute() else cmake_dir / pattern
            found = base.parent.rglob(base.name) if recurse else base.parent.glob(base.name)
            for f in found:
                try:
                    out.add(str(f.resolve().relative_to(root.resolve())))
                except ValueError:
                    continue
    return out


def mark_unbuilt(root: Path, rows: list[KernelRow]) -> None:
    """Where the repository builds with CMake, a source file no CMake file names (by path or name)
    is not compiled into it: a stand-alone test program (vLLM's custom_all_reduce_test.cu, built by
    hand against MPI and NCCL). Its kernels are not the repository's; said so, counted apart."""
    if not (root / "CMakeLists.txt").is_file():
        return
    text = ""
    globbed: set[str] = set()
    for path in [root / "CMakeLists.txt", *root.glob("cmake/**/*.cmake"), *root.glob("**/CMakeLists.txt")]:
        try:
            content = path.read_text(errors="replace")
        except OSError:
            continue
        text += content
        globbed |= cmake_globbed(root, path.parent, content)
    for row in rows:
        source = Path(row.file).suffix in (".cu", ".cc", ".cpp")  # a header's kernels: built where included
        if source and row.file not in text and Path(row.file).name not in text and row.file not in globbed \
                and row.verdict in ("not reached", "inconclusive"):
            row.reason = "not built: no CMake file of the repository compiles its file"


def _share(part: int, whole: int) -> str:
    """A percentage to one decimal, rounded down: 132 of 166 is 79.5%, never a rounded-up 80%."""
    return f"{math.floor(1000 * part / max(whole, 1)) / 10:.1f}%"


def print_report(rows: list[KernelRow], results: list[dict], files: list[str], skipped, wall: float,
                 partial: bool = False) -> None:
    print(f"{'kernel':58} {'file:line':52} {'parsed':6} {'lowered':7} {'seconds':>8}  verdict")
    errors = {r["file"]: r.get("errors", 0) for r in results}
    for r in rows:
        parsed = "yes" if errors.get(r.file, 0) == 0 else "errors" if r.file in errors else "yes"
        verdict = r.verdict + (f" ({r.reason})" if r.reason and r.verdict not in ("bug", "contract") else "")
        if r.verdict in ("bug", "contract"):
            verdict += " " + "; ".join(sorted({f"{f['check']} at {f['at']}" for f in r.findings}))
        print(f"{r.name[:58]:58} {(r.file + ':' + str(r.line))[-52:]:52} {parsed:6} {'yes' if r.lowered else 'no':7} "
              f"{r.seconds:8.1f}  {verdict[:220]}")
    counts = collections.Counter(r.verdict for r in rows)
    total = len(rows)
    decided = counts["verified"] + counts["bug"] + counts["contract"]
    instances = [i for res in results for i in res.get("instances", [])]
    times = sorted(i["seconds"] for i in instances)
    print()
    print(f"files: {len(files)} in scope ({', '.join(f'{n} {why}' for why, n in skipped.items()) or 'none'} skipped); "
          f"{sum(1 for r in results if 'fatal' in r)} failed as a whole"
          + "".join(f"; {r['file']}: {why}" for r in results for why in r.get("shard_failures", []))
          + "".join(f"; {r['file']}: {r['cut_short']}" for r in results if r.get("cut_short")))
    print(f"kernels: {total}; verified {counts['verified']}, bug {counts['bug']}, contract {counts['contract']}, "
          f"inconclusive {counts['inconclusive']}, not reached {counts['not reached']}; verified, bug or contract: "
          f"{decided}/{total} = {_share(decided, total)}")
    unbuilt = sum(1 for r in rows if r.reason.startswith("not built"))
    if unbuilt:
        print(f"of the {total - unbuilt} kernels the build compiles ({unbuilt} are in files it does not): "
              f"verified, bug or contract {decided}/{total - unbuilt} = {_share(decided, total - unbuilt)}")
    dead = sum(1 for r in rows if r.reason.startswith("dead code"))
    if dead:
        rest = total - dead - unbuilt
        print(f"of the {rest} kernels the build compiles and something names ({dead} are dead code): "
              f"verified, bug or contract {decided}/{rest} = {_share(decided, rest)}")
    reasons = collections.Counter(r.reason.split(":")[0] for r in rows if r.verdict in ("inconclusive", "not reached"))
    print("top reasons (inconclusive / not reached): " + ", ".join(f"{why} {n}" for why, n in reasons.most_common(8)))
    if times:
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(f"instances: {len(times)}; median {statistics.median(times):.2f} s, p95 {p95:.2f} s, "
              f"max {times[-1]:.2f} s, sum {sum(times):.1f} s; "
              f"wall {wall:.1f} s{' (the files verified by this run only)' if partial else ''}")


THREAD_CHECKS = ("race", "barrier-divergence", "sync-mask")
_USES_THREADS = re.compile(r"__shared__|__syncthreads|__syncwarp|__shfl\w*_sync|__ballot_sync|__any_sync|__all_sync|"
                           r"\.sync\(\)|Block(Reduce|Scan)|extern\s+__shared__")
# Inconclusive reasons the thread checks give (checks/race.py, divergence.py, syncmask.py).
_THREAD_REASON = re.compile(r"race|barrier|lane of the mask|every thread of the block|shared-memory accesses")


def kernel_text(root: Path, row: KernelRow, limit: int = 400) -> str:
    """The kernel's definition, from its line to the first closing brace in column 0 (enough to
    see whether it touches shared memory or warp primitives; its helpers are not followed)."""
    try:
        lines = (root / row.file).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    out = []
    for line in lines[max(row.line - 1, 0): row.line - 1 + limit]:
        out.append(line)
        if line.startswith("}"):
            break
    return "\n".join(out)


def print_threads(rows: list[KernelRow], results: list[dict], root: Path) -> None:
    """How many kernels that use shared memory, barriers or warp primitives reach a verdict of
    the thread checks: a finding of one of them, or a run of the kernel with none of their
    inconclusive reasons (race-free, barrier- and mask-uniform for the instances that ran)."""
    undecided: set = set()
    for res in results:
        for inst in res.get("instances", []):
            for i in inst["inconclusive"]:
                if i["kernel"] and _THREAD_REASON.search(i["detail"]):
                    undecided.add(base_name(i["kernel"]))
    users = [r for r in rows if _USES_THREADS.search(kernel_text(root, r))]
    found = [r for r in users if any(f["check"] in THREAD_CHECKS for f in r.findings)]
    clean = [r for r in users if r not in found and r.verdict in ("verified", "bug", "contract")
             and r.name not in undecided]
    stuck = [r for r in users if r not in found and r not in clean]
    print(f"thread checks: {len(users)} kernels use shared memory, barriers or warp primitives; "
          f"{len(found) + len(clean)} reach a verdict ({_share(len(found) + len(clean), len(users))}): "
          f"{len(found)} with a race, barrier-divergence or sync-mask finding, {len(clean)} without; "
          f"{len(stuck)} undecided (the kernel not reached or inconclusive)")
    for r in found:
        for f in r.findings:
            if f["check"] in THREAD_CHECKS:
                print(f"  {f['check']}: {r.name} at {f['at']}")


if __name__ == "__main__":
    sys.exit(main())
