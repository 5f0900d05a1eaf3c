"""Confirms the thread checks' fixtures on a GPU: each race, barrier-divergence and sync-mask
finding (and the correct twins, which must stay clean) runs as a torch op under compute-sanitizer
with the sizes of kernelvet's witness.

Two steps, because the GPU machine has torch and the CUDA toolkit but not kernelvet's own
dependencies:

    python bench/confirm_threads.py plan  [--out bench/threads_plan.json]   # here: scan, keep witnesses
    python bench/confirm_threads.py run   [--plan bench/threads_plan.json]  # on the GPU machine

``run`` builds every fixture as a torch extension (``torch.utils.cpp_extension.load``, in parallel),
allocates the op's tensors with the witness's sizes and dtypes (index tensors filled inside their
binding's value range), and runs it under the sanitizer tool of its check (racecheck for races,
synccheck for barriers and masks, memcheck for accesses), with PYTORCH_NO_CUDA_MEMORY_CACHING=1 so
an access past a tensor's end is past its allocation. It prints one row per fixture: the check,
what kernelvet said, what the sanitizer said.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "threads"
TOOL = {"race": "racecheck", "barrier-divergence": "synccheck", "sync-mask": "synccheck", "oob": "memcheck"}


# ---------------------------------------------------------------- here: witnesses


def plan(out: Path, only: str = "") -> int:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture  # noqa: E402

    entries = []
    keep = {x.strip().removesuffix(".cu") for x in only.split(",") if x.strip()}
    for path in sorted(FIXTURES.glob("*.cu")):
        if keep and path.stem not in keep:
            continue
        fx = load_fixture(path)
        with tempfile.TemporaryDirectory() as tmp:
            report = run_fixture(fx, Path(tmp))
        findings = [(f, ir) for ir in report.instances for f in ir.result.findings]
        header = fx.header
        models = header.get("models") or [{"name": "m", "fields": header.get("fields", {})}]
        first = report.instances[0].planned.instance
        if findings:
            for f, ir in findings:
                fields = dict(ir.planned.instance.model_fields) if ir.planned.instance is not None else {}
                entries.append({"fixture": path.name, "op": header["op"], "check": f.check, "line": f.location.line,
                                "args": header.get("args", {}), "witness": f.witness,
                                "models": f.models, "fields": fields})
        else:
            # A correct twin: run with the smallest sizes, one model; the sanitizer must stay quiet.
            m = models[0]
            entries.append({"fixture": path.name, "op": header["op"], "check": None, "line": None,
                            "args": header.get("args", {}), "witness": {"num_tokens": 1, "batch": 1, "seq_len": 1,
                                                                        "capacity": 4,
                                                                        "dtype": (header.get("dtypes") or ["float32"])[0]},
                            "models": [m.get("name", "m")],
                            "fields": dict(first.model_fields) if first is not None else m.get("fields", {})})
    out.write_text(json.dumps(entries, indent=1, default=str))
    print(f"{len(entries)} runs planned in {out}")
    return 0


# ---------------------------------------------------------------- there: build and sanitize

_SIG = re.compile(r"^void\s+(\w+)\s*\(([^)]*)\)\s*\{", re.M)


def _signature(source: str, op: str) -> list[tuple[str, str]]:
    for m in _SIG.finditer(source):
        if m.group(1) == op:
            params = []
            for p in m.group(2).split(","):
                p = p.strip()
                name = re.findall(r"(\w+)\s*$", p)[0]
                params.append((p[: -len(name)].strip(), name))
            return params
    raise ValueError(f"no launcher {op}")


def _build(entry: dict, build_dir: str) -> str:
    """The extension's source: the fixture with a pybind11 module naming its op."""
    src = (FIXTURES / entry["fixture"]).read_text()
    name = "kv_" + re.sub(r"\W", "_", entry["fixture"][:-3])
    # One directory per extension: load() serialises builds that share a directory (its lock file).
    build_dir = str(Path(build_dir) / name)
    os.makedirs(build_dir, exist_ok=True)
    out = Path(build_dir) / f"{name}.cu"
    out.write_text(src + f'\n#include <torch/extension.h>\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{ m.def("{entry["op"]}", &{entry["op"]}); }}\n')
    from torch.utils.cpp_extension import load
    load(name=name, sources=[str(out)], build_directory=build_dir, extra_cuda_cflags=["-O1", "-lineinfo"], verbose=False)
    return name


_RUNNER = r'''
import json, sys, torch
from torch.utils.cpp_extension import load
import importlib
entry = json.loads(sys.argv[1]); build = sys.argv[2]; name = sys.argv[3]
sys.path.insert(0, build + "/" + name)
mod = importlib.import_module(name)
w = entry["witness"]
env = {k.split(".", 1)[1] if k.startswith("model.") else k: v for k, v in w.items() if isinstance(v, int)}
env.update({k: v for k, v in entry["fields"].items() if isinstance(v, int)})
DT = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "int32": torch.int32,
      "uint8": torch.uint8, "int64": torch.int64}
dtype = DT[w.get("dtype", "float32")]
def ev(e):
    return int(eval(str(e).replace("/", "//"), {}, dict(env)))
args = []
for ty, pname in json.loads(sys.argv[4]):
    spec = entry["args"].get(pname, {})
    if "value" in spec:
        args.append(ev(spec["value"]))
        continue
    shape = [ev(d) for d in spec["shape"]]
    dt = DT[spec.get("dtype", "")] if spec.get("dtype") in DT else dtype
    if "values" in spec:
        lo, hi = (ev(v) for v in spec["values"])
        # Every element at the low end of its range: index tensors whose equal values make threads
        # meet (a histogram's bins), counters that start at their stated value.
        t = torch.full(shape, lo, dtype=dt, device="cuda")
    elif dt.is_floating_point:
        t = torch.randn(shape, device="cuda").to(dt)
    else:
        t = torch.randint(0, 4, shape, dtype=dt, device="cuda")
    args.append(t)
getattr(mod, entry["op"])(*args)
torch.cuda.synchronize()
print("ran", [tuple(a.shape) if hasattr(a, "shape") else a for a in args])
'''


def _sanitize(entry: dict, build: str, name: str, tools: list[str]) -> dict:
    params = _signature((FIXTURES / entry["fixture"]).read_text(), entry["op"])
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    out = {}
    for tool in tools:
        cmd = ["compute-sanitizer", "--tool", tool, *(["--racecheck-report", "all"] if tool == "racecheck" else []),
               sys.executable, "-c", _RUNNER, json.dumps(entry), build, name, json.dumps(params)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
            text = p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            text = "timeout"
        m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
        if m:
            count = int(m.group(2)) + int(m.group(3))
        else:
            m = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
            count = int(m.group(1)) if m else None
        out[tool] = {"hazards": count, "ran": "ran [" in text, "tail": text[-1200:]}
    return out


def run(plan_path: Path, out_path: Path | None, only: str = "") -> int:
    entries = json.loads(plan_path.read_text())
    if only:
        keep = {x.strip() for x in only.split(",")}
        entries = [e for e in entries if e["fixture"] in keep or e["fixture"][:-3] in keep]
    build = tempfile.mkdtemp(prefix="kv_threads_")
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")  # the card in hand only: one code object per build
    os.environ.setdefault("MAX_JOBS", "1")  # the builds run side by side, one compiler each
    names: dict = {}
    with ProcessPoolExecutor(max_workers=min(16, os.cpu_count() or 4)) as pool:
        futures = {e["fixture"]: pool.submit(_build, e, build) for e in entries if e["fixture"] not in names}
        for fixture, fut in futures.items():
            try:
                names[fixture] = fut.result()
            except Exception as exc:  # a build failure is a row of the table, not the end of the run
                names[fixture] = None
                print(f"build of {fixture} failed: {str(exc)[-800:]}")
    print(f"built {sum(1 for n in names.values() if n)} of {len(names)} extensions", flush=True)
    rows = []
    with ProcessPoolExecutor(max_workers=12) as pool:
        jobs = []
        submitted: dict = {}  # (fixture, tools) -> future: one run serves the fixture's findings of one check
        for e in entries:
            if names.get(e["fixture"]) is None:
                rows.append((e, {"build": "failed"}))
                continue
            tools = [TOOL[e["check"]]] if e["check"] else ["racecheck", "synccheck"]
            key = (e["fixture"], tuple(tools))
            if key not in submitted:
                submitted[key] = pool.submit(_sanitize, e, build, names[e["fixture"]], tools)
            jobs.append((e, submitted[key]))
        for e, fut in jobs:
            rows.append((e, fut.result()))
            res = rows[-1][1]
            print(e["fixture"], e["check"], {t: r["hazards"] for t, r in res.items()}, flush=True)
            if out_path is not None:
                out_path.write_text(json.dumps([{"fixture": x["fixture"], "check": x["check"], "line": x["line"],
                                                 "sanitizer": r} for x, r in rows], indent=1))
    print(f"{'fixture':48} {'check':19} {'line':>4}  sanitizer")
    results = []
    for e, res in rows:
        said = ", ".join(f"{t}: {r['hazards']}{'' if r['ran'] else ' (did not run)'}" for t, r in res.items()
                         if isinstance(r, dict)) or "build failed"
        print(f"{e['fixture'][:48]:48} {str(e['check'] or 'clean'):19} {str(e['line'] or ''):>4}  {said}")
        results.append({"fixture": e["fixture"], "check": e["check"], "line": e["line"], "sanitizer": res})
    if out_path is not None:
        out_path.write_text(json.dumps(results, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "threads_plan.json")
    p.add_argument("--only", default="", help="comma-separated fixture names (default: every fixture)")
    r = sub.add_parser("run")
    r.add_argument("--plan", type=Path, default=ROOT / "bench" / "threads_plan.json")
    r.add_argument("--out", type=Path, default=None)
    r.add_argument("--only", default="", help="comma-separated fixture names (default: every planned run)")
    args = ap.parse_args()
    return plan(args.out, args.only) if args.cmd == "plan" else run(args.plan, args.out, args.only)


if __name__ == "__main__":
    sys.exit(main())
