"""Reproducers for every fixture that reports a bug, and their confirmation on a GPU: the share of
findings compute-sanitizer (or the CUDA runtime) confirms, and why the others are not.

    python bench/repro_fixtures.py plan [--out DIR] [--only SUBSTRING] [--controls]  # here: scan, kernelvet repro
    python bench/repro_fixtures.py run  [--out DIR] [--jobs 8] [--only S]  # on the GPU machine

``plan`` scans each fixture as the test suite does (once: later runs reuse the saved report unless
--rescan), writes its JSON report and the reproducers of
its findings (bot.repro, the code behind ``kernelvet repro``) into DIR (default
bench/out/fixture-repro). With ``--controls``, each correct twin (a fixture whose every op must
verify; those under threads/ unless --only says otherwise) also gets reproducers at small sizes
its binding allows (binding.sample_sizes), one per tool (racecheck, synccheck, memcheck): the
sanitizer must stay quiet on them, and a hazard there is a finding kernelvet missed (or a sanitizer
false alarm) to look at. ``run`` needs only Python, PyTorch, nvcc and compute-sanitizer: it runs
them all (bot.repro.confirm, the code behind ``kernelvet confirm``) and prints one row per finding
and the totals per check, then the controls.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_OUT = ROOT / "bench" / "out" / "fixture-repro"


CONTROL_TOOLS = ("racecheck", "synccheck", "memcheck")


def plan(out: Path, only: str | None, rescan: bool, controls: bool = False) -> int:
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import FIXTURES, all_fixtures, load_fixture, run_fixture, verdicts

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.scripts import reproduce

    index_path = out / "index.json"
    index = json.loads(index_path.read_text())["reproducers"] if index_path.is_file() else []
    for path in all_fixtures():
        fx = load_fixture(path)
        if only and only not in fx.name:
            continue
        stem = fx.name.replace("/", "__").removesuffix(".cu")
        if controls and not fx.expected and (only or fx.name.startswith("threads/")) \
                and set(verdicts(fx).values()) == {"verified"}:
            index = [e for e in index if not e["dir"].startswith(stem + "-")]
            index += _controls(fx, stem, out, run_fixture, FIXTURES, reproduce)
            continue
        if not fx.expected:
            continue
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


def _controls(fx, stem: str, out: Path, run_fixture, fixtures: Path, reproduce) -> list[dict]:
    """Reproducers of a verified fixture's op at small sizes, one per tool: the fixture's first
    instance that records a call (Options.control_call)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = run_fixture(fx, Path(tmp), control_call=True)
    call = next((ir.result.control_call for ir in report.instances if ir.result.control_call), None)
    if call is None:
        print(f"{stem}: no control (no sizes meet the binding's constraints near the smallest)", flush=True)
        return []
    # One fingerprint for the fixture's three runs: with $KERNELVET_REPRO_BUILD_DIR set they share
    # one build (the extension's name and directory come from it).
    fingerprint = "control" + hashlib.sha256(stem.encode()).hexdigest()[:13]
    finding = {"check": "control", "location": {"file": fx.name, "line": call["line"]}, "call": call,
               "fingerprint": fingerprint, "message": ""}
    rows = []
    for tool in CONTROL_TOOLS:
        d = f"{stem}-control-{tool}"
        r, entry = reproduce(finding, out, d, fixtures, tool=tool)
        rows.append(dict(entry, fingerprint=f"{stem}:control:{tool}", control=True))
        print(f"{d}: control under {tool}: {'ready' if r.not_runnable is None else r.not_runnable}", flush=True)
    return rows


def run(out: Path, sanitizer: str, timeout: float, jobs: int, only: str | None) -> int:
    from bot.repro.confirm import confirm_all

    # A control fixture's three runs share one build (their fingerprint names it).
    os.environ.setdefault("KERNELVET_REPRO_BUILD_DIR", str(out.resolve() / "builds"))
    t0 = time.time()

    def progress(entry, c):
        print(f"{c.status:15} {entry['check']:18} {entry['where']:60} {c.tool:9} {c.detail[:160]}", flush=True)

    results = confirm_all(out, sys.executable, sanitizer, timeout, progress, jobs, only)
    index = json.loads((out / "index.json").read_text())["reproducers"]
    control_dirs = {e["fingerprint"]: e["dir"] for e in index if e.get("control")}
    controls = {fp: results.pop(fp) for fp in list(results) if fp in control_dirs}
    by_check = Counter((c["check"], c["status"]) for c in results.values())
    print(f"\n{len(results)} findings in {time.time() - t0:.0f} s")
    for check in sorted({k for k, _ in by_check}):
        row = ", ".join(f"{s} {by_check[(check, s)]}" for s in ("confirmed", "not-reproduced", "not-runnable")
                        if by_check[(check, s)])
        print(f"  {check:20} {row}")
    total = Counter(c["status"] for c in results.values())
    print(f"  {'all':20} " + ", ".join(f"{s} {n}" for s, n in total.items()))
    if controls:
        _print_controls(out, controls, control_dirs)
    return 0


def _print_controls(out: Path, controls: dict, dirs: dict) -> None:
    """The verified fixtures' runs: clean, or what the sanitizer saw (any error, and racecheck's
    warnings, which a finding's confirmation counts only at its own lines)."""
    from bot.repro.sanitizer import parse

    said = Counter()
    print(f"\n{len(controls)} control runs of verified fixtures")
    for fp, c in controls.items():
        log = out / dirs[fp] / "run.log"
        report = parse(log.read_text()) if log.is_file() else None
        if c["status"] == "not-runnable":
            outcome = "not-runnable"
        elif c["detail"].startswith("the op raised"):
            outcome = "op-refused"  # the sizes break a check of the launcher the binding does not state
        elif report is not None and (report.found or report.warnings):
            outcome = "HAZARD"
        else:
            outcome = "clean"
        said[outcome] += 1
        if outcome != "clean":
            print(f"  {outcome:13} {fp:70} {report.first[:160] if outcome == 'HAZARD' else c['detail'][:160]}")
    print("  " + ", ".join(f"{k} {n}" for k, n in said.items()))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["plan", "run"])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--only", help="fixtures whose name contains this")
    ap.add_argument("--rescan", action="store_true", help="scan again the fixtures whose report plan saved before "
                                                         "(else the reproducers are written from those reports)")
    ap.add_argument("--controls", action="store_true",
                    help="plan: also run the correct twins (verified fixtures) at small sizes, which must stay clean")
    ap.add_argument("--sanitizer", default="compute-sanitizer")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--jobs", type=int, default=8, help="reproducers built and run at once")
    args = ap.parse_args()
    if args.step == "plan":
        return plan(args.out, args.only, args.rescan, args.controls)
    return run(args.out, args.sanitizer, args.timeout, args.jobs, args.only)


if __name__ == "__main__":
    sys.exit(main())
