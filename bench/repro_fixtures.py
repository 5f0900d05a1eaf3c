"""Reproducers for every fixture that reports a bug, and their confirmation on a GPU: the share of
findings compute-sanitizer (or the CUDA runtime) confirms, and why the others are not.

    python bench/repro_fixtures.py plan [--out DIR] [--only SUBSTRING]   # here: scan, kernelvet repro
    python bench/repro_fixtures.py run  [--out DIR] [--jobs 8] [--only S]  # on the GPU machine

``plan`` scans each fixture as the test suite does (once: later runs reuse the saved report unless
--rescan), writes its JSON report and the reproducers of
its findings (bot.repro, the code behind ``kernelvet repro``) into DIR (default
bench/out/fixture-repro). ``run`` needs only Python, PyTorch, nvcc and compute-sanitizer: it runs
them all (bot.repro.confirm, the code behind ``kernelvet confirm``) and prints one row per finding
and the totals per check.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_OUT = ROOT / "bench" / "out" / "fixture-repro"


def plan(out: Path, only: str | None, rescan: bool) -> int:
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import FIXTURES, all_fixtures, load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.scripts import reproduce

    index_path = out / "index.json"
    index = json.loads(index_path.read_text())["reproducers"] if index_path.is_file() else []
    for path in all_fixtures():
        fx = load_fixture(path)
        if only and only not in fx.name:
            continue
        if not fx.expected:
            continue
        stem = fx.name.replace("/", "__").removesuffix(".cu")
        saved = out / "reports" / f"{stem}.json"
        if rescan or not saved.is_file():
            with tempfile.TemporaryDirectory() as tmp:
                data = to_dict(run_fixture(fx, Path(tmp)))
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(json.dumps(data, indent=2))
        data = json.loads(saved.read_text())
        index = [e for e in index if not e["dir"].startswith(stem + "-")]
        for f in data["findings"]:
            d = f"{stem}-{(f.get('fingerprint') or 'x')[:8]}"
            r, entry = reproduce(f, out, d, FIXTURES)
            index.append(dict(entry, fingerprint=f"{stem}:{r.fingerprint}"))  # unique across the fixtures
            print(f"{d}: {r.check} at {r.where}: {'ready' if r.not_runnable is None else r.not_runnable}", flush=True)
    (out / "index.json").write_text(json.dumps({"reproducers": index}, indent=2))
    print(f"{len(index)} reproducers in {out}")
    return 0


def run(out: Path, sanitizer: str, timeout: float, jobs: int, only: str | None) -> int:
    from bot.repro.confirm import confirm_all

    t0 = time.time()

    def progress(entry, c):
        print(f"{c.status:15} {entry['check']:18} {entry['where']:60} {c.tool:9} {c.detail[:160]}", flush=True)

    results = confirm_all(out, sys.executable, sanitizer, timeout, progress, jobs, only)
    by_check = Counter((c["check"], c["status"]) for c in results.values())
    print(f"\n{len(results)} findings in {time.time() - t0:.0f} s")
    for check in sorted({k for k, _ in by_check}):
        row = ", ".join(f"{s} {by_check[(check, s)]}" for s in ("confirmed", "not-reproduced", "not-runnable")
                        if by_check[(check, s)])
        print(f"  {check:20} {row}")
    total = Counter(c["status"] for c in results.values())
    print(f"  {'all':20} " + ", ".join(f"{s} {n}" for s, n in total.items()))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["plan", "run"])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--only", help="fixtures whose name contains this")
    ap.add_argument("--rescan", action="store_true", help="scan again the fixtures whose report plan saved before "
                                                         "(else the reproducers are written from those reports)")
    ap.add_argument("--sanitizer", default="compute-sanitizer")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--jobs", type=int, default=8, help="reproducers built and run at once")
    args = ap.parse_args()
    if args.step == "plan":
        return plan(args.out, args.only, args.rescan)
    return run(args.out, args.sanitizer, args.timeout, args.jobs, args.only)


if __name__ == "__main__":
    sys.exit(main())
