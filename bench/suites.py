"""kernelvet on verification suites with ground truth: recall on the bug-tagged cases, false alarms
on the clean ones, and how many it did not reach or could not decide.

    python bench/suites.py gpuverify PATH [--json OUT] [--limit N] [--budget S]
    python bench/suites.py esbmc PATH     # ESBMC-GPU's regression/cuda (a test.desc per case)

- ``gpuverify``: every ``.cu`` under PATH whose first line is ``//pass`` or ``//xfail:...`` and
  whose header gives a launch; each is bound through ``kernelvet manifest from-gpuverify`` (its
  own ``--blockDim``/``--gridDim``) and scanned. ``//xfail`` cases expect a finding (GPUVerify's
  races and barrier divergence, kernelvet's checks of the same; out-of-bounds accesses are not
  GPUVerify's subject, so a bound finding on a ``//pass`` case is counted apart). Files with ``-D``
  flags or several kernels run with what the header gives.
- ``esbmc``: every case folder with a ``test.desc``; ``VERIFICATION FAILED`` cases expect a
  finding, ``VERIFICATION SUCCESSFUL`` ones none; the program's ``main`` runs zero-config.

Each case runs in its own process (one bad case never stops the run) under a CPU budget. Prints
one line per case and the totals: reached (an instance ran), found on bug cases, false alarms on
clean cases, inconclusive, not reached (with the reason), crashed. Suites are fetched by the user;
nothing of them is kept here.
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _gpuverify_cases(path: Path, limit: int | None) -> list[tuple[Path, bool]]:
    out = []
    for f in sorted(path.rglob("*.cu")):
        try:
            first = f.read_text(errors="replace").splitlines()[:1]
        except OSError:
            continue
        head = first[0].lower() if first else ""
        if head.startswith("//pass") or head.startswith("//xfail"):
            out.append((f, head.startswith("//xfail")))
    return out[:limit] if limit else out


def _esbmc_cases(path: Path, limit: int | None) -> list[tuple[Path, bool]]:
    out = []
    for desc in sorted(path.rglob("test.desc")):
        lines = desc.read_text(errors="replace").splitlines()
        # The source file is the first line (ESBMC-GPU) or follows a tag line (CORE, KNOWNBUG).
        names = [ln.strip() for ln in lines[:2] if ln.strip() and (desc.parent / ln.strip()).is_file()]
        if not names:
            continue
        main = desc.parent / names[0]
        text = "\n".join(lines)
        if not main.is_file() or "VERIFICATION" not in text:
            continue
        out.append((main, "VERIFICATION FAILED" in text))
    return out[:limit] if limit else out


def _run_case(kind: str, file: str, budget: float, queue) -> None:
    """In a child process: the case's verdicts and findings, or its error."""
    import yaml

    from bot.manifest import load
    from bot.scan import scan
    from analyzers.engine.context import Options
    try:
        path = Path(file)
        with tempfile.TemporaryDirectory() as tmp:
            if kind == "gpuverify":
                from bot.manifest.gpuverify import HeaderError, manifest_for
                root = path.parent
                try:
                    doc, _ = manifest_for([path], root)
                except HeaderError as exc:  # no kernel, no launch: nothing to bind
                    queue.put({"verdicts": [], "checks": [], "reasons": [], "unverified": [str(exc)]})
                    return
                doc["options"] = {"time_budget_s": budget}
                mpath = Path(tmp) / "kernelvet.yaml"
                mpath.write_text(yaml.safe_dump(doc, sort_keys=False))
                report = scan(root, load(mpath), jobs=1)
            else:
                root = path.parent
                report = scan(root, None, jobs=1, zero_config_files=[path.name],
                              options=Options(time_budget_s=budget))
        verdicts = [r.result.verdict for r in report.instances]
        reasons = [i.reason for r in report.instances for i in r.result.inconclusive]
        checks = sorted({f.check for f in report.findings})
        unverified = [u.why for u in report.unverified]
        queue.put({"verdicts": verdicts, "checks": checks, "reasons": reasons, "unverified": unverified})
    except Exception as exc:  # noqa: BLE001 - one bad case never stops the run
        queue.put({"error": f"{type(exc).__name__}: {str(exc)[:200]}"})


def run_case(kind: str, file: Path, budget: float) -> dict:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    p = ctx.Process(target=_run_case, args=(kind, str(file), budget, queue))
    t0 = time.perf_counter()
    p.start()
    p.join(budget * 4 + 60)
    if p.is_alive():
        p.kill()
        return {"error": "timed out", "seconds": time.perf_counter() - t0}
    out = queue.get() if not queue.empty() else {"error": f"died (exit {p.exitcode})"}
    out["seconds"] = time.perf_counter() - t0
    return out


def outcome(bug_expected: bool, r: dict) -> str:
    if "error" in r:
        return "crashed"
    if not r["verdicts"]:
        return "not reached"
    if "bug" in r["verdicts"]:
        return "found" if bug_expected else "false alarm"
    if "inconclusive" in r["verdicts"]:
        return "inconclusive"
    return "missed" if bug_expected else "verified"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=("gpuverify", "esbmc"))
    ap.add_argument("path")
    ap.add_argument("--json")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--budget", type=float, default=30.0, help="CPU seconds per instance (default 30)")
    args = ap.parse_args()
    path = Path(args.path).resolve()
    cases = (_gpuverify_cases if args.kind == "gpuverify" else _esbmc_cases)(path, args.limit)
    if not cases:
        print(f"no {args.kind} cases under {path}", file=sys.stderr)
        return 2
    rows, counts = [], collections.Counter()
    for f, bug in cases:
        r = run_case(args.kind, f, args.budget)
        o = outcome(bug, r)
        counts[(bug, o)] += 1
        why = r.get("error") or ", ".join(r.get("checks") or []) or ", ".join(sorted(set(r.get("reasons") or []))) \
            or "; ".join(u[:80] for u in r.get("unverified") or [])
        rows.append({"case": str(f.relative_to(path)), "bug": bug, "outcome": o, "why": why,
                     "seconds": round(r["seconds"], 1)})
        print(f"{'bug  ' if bug else 'clean'} {o:13s} {r['seconds']:6.1f}s  {f.relative_to(path)}  {why[:100]}",
              flush=True)
    bugs = sum(v for (b, _), v in counts.items() if b)
    clean = sum(v for (b, _), v in counts.items() if not b)
    reached = sum(v for (_, o), v in counts.items() if o not in ("not reached", "crashed"))
    print(f"\n{len(cases)} cases ({bugs} bug, {clean} clean): reached {reached} ({100 * reached / len(cases):.0f}%)")
    if bugs:
        print(f"  bug cases:   found {counts[(True, 'found')]} ({100 * counts[(True, 'found')] / bugs:.0f}% recall), "
              f"missed {counts[(True, 'missed')]}, inconclusive {counts[(True, 'inconclusive')]}, "
              f"not reached {counts[(True, 'not reached')]}, crashed {counts[(True, 'crashed')]}")
    if clean:
        print(f"  clean cases: verified {counts[(False, 'verified')]}, false alarms {counts[(False, 'false alarm')]} "
              f"({100 * counts[(False, 'false alarm')] / clean:.1f}%), inconclusive {counts[(False, 'inconclusive')]}, "
              f"not reached {counts[(False, 'not reached')]}, crashed {counts[(False, 'crashed')]}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
