"""Zero-config against a bound run of the same op: for every op a manifest binds, how long its
zero-config instance takes against its bound instances, and whether the verdict is as good.

    python bench/zero_config_ratio.py ROOT --manifest M --bound REPORT.json [--time-budget S]
                                      [--jobs N] [--ops NAME ...] [--json OUT]

REPORT.json is the JSON report of a scan of ROOT with that manifest (`kernelvet scan --json`), at
the same budget: its instances give the bound times and verdicts. This runs the zero-config
instances of the same (file, launcher) pairs, with the manifest's settings (include directories,
defines, statements about function results, options) but none of its bindings, and prints per op:
the median bound instance's work (engine steps and solver units, engine/work.py: the same on a
loaded machine as on an idle one) and seconds, the zero-config instances' (summed over the op's
zero-config splits), the ratio of the work, and both verdicts. The target (docs/performance.md):
the median ratio within 3, verdicts the same or better.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Better verdicts first: a zero-config instance is as good as the bound run when its rank is not
# higher than the best bound verdict's (bug and verified both decide).
RANK = {"bug": 0, "verified": 0, "contract": 1, "inconclusive": 2}


def settings_only(manifest: Path, dest: Path) -> Path:
    """The manifest without models or ops: what zero-config may use of it."""
    doc = yaml.safe_load(manifest.read_text())
    keep = {k: v for k, v in doc.items() if k not in ("models", "ops")}
    keep.setdefault("version", 0)
    keep["models"], keep["ops"] = [], []
    dest.write_text(yaml.safe_dump(keep, sort_keys=False))
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--bound", required=True, help="JSON report of the bound scan")
    ap.add_argument("--time-budget", type=float, default=None, help="as the bound scan's (default: the manifest's)")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--ops", nargs="*", help="only these launchers")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()

    from dataclasses import replace

    from bot.manifest import load
    from bot.scan import options_for, scan

    bound: dict[tuple, list] = {}
    for inst in json.loads(Path(args.bound).read_text())["instances"]:
        bound.setdefault((inst["file"], inst["launcher"]), []).append(inst)
    if args.ops:
        bound = {k: v for k, v in bound.items() if k[1] in args.ops or k[1].rsplit("::", 1)[-1] in args.ops}
    root = Path(args.root).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        manifest = load(settings_only(Path(args.manifest), Path(tmp) / "kernelvet.yaml"))
        opts = options_for(manifest)
        if args.time_budget is not None:
            opts = replace(opts, time_budget_s=args.time_budget)
        t0 = time.perf_counter()
        report = scan(root, manifest, options=opts, jobs=args.jobs,
                      zero_config_files=sorted({f for f, _ in bound}))
        wall = time.perf_counter() - t0
    zero: dict[tuple, list] = {}
    for ir in report.instances:
        key = (ir.planned.file, ir.planned.launcher.rsplit("::", 1)[-1])
        zero.setdefault(key, []).append(ir.result)
    rows = []
    for (file, launcher), insts in sorted(bound.items()):
        z = zero.get((file, launcher.rsplit("::", 1)[-1]))
        b_s = statistics.median(i["seconds"] for i in insts)
        b_w = statistics.median(i.get("work", 0) for i in insts)
        b_best = min((i["verdict"] for i in insts), key=lambda v: RANK.get(v, 3))
        row = {"op": launcher, "file": file, "bound_instances": len(insts), "bound_median_s": round(b_s, 2),
               "bound_median_work": b_w,
               "bound_verdicts": sorted({i["verdict"] for i in insts})}
        if not z:
            row.update(zero_s=None, zero_verdict="not planned", ratio=None, as_good=False)
        else:
            z_s = sum(r.seconds for r in z)  # every zero-config split of the op (a dispatch on a flag)
            z_w = sum(r.work for r in z)
            z_v = min((r.verdict for r in z), key=lambda v: RANK.get(v, 3))
            reasons = sorted({i.reason for r in z for i in r.inconclusive})
            row.update(zero_s=round(z_s, 2), zero_work=z_w, zero_instances=len(z), zero_verdict=z_v, zero_reasons=reasons,
                       ratio=round(z_w / max(b_w, 1), 2), as_good=RANK.get(z_v, 3) <= RANK.get(b_best, 3))
        rows.append(row)
    print(f"{'op':44} {'bound n':>7} {'bound s':>8} {'zero s':>8} {'bound Mu':>9} {'zero Mu':>9} {'ratio':>6}  "
          "bound verdicts -> zero-config  (Mu: million work units; ratio of the work)")
    for r in rows:
        z_s = f"{r['zero_s']:8.2f}" if r["zero_s"] is not None else f"{'-':>8}"
        ratio = f"{r['ratio']:6.1f}" if r["ratio"] is not None else f"{'-':>6}"
        why = f" ({', '.join(r['zero_reasons'])})" if r.get("zero_reasons") else ""
        z_w = f"{r['zero_work'] / 1e6:9.1f}" if r.get("zero_work") is not None else f"{'-':>9}"
        print(f"{r['op'][:44]:44} {r['bound_instances']:7d} {r['bound_median_s']:8.2f} {z_s} "
              f"{r['bound_median_work'] / 1e6:9.1f} {z_w} {ratio}  "
              f"{'/'.join(r['bound_verdicts'])} -> {r['zero_verdict']}{why}{'' if r['as_good'] else '  [worse]'}")
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    if ratios:
        print(f"\n{len(rows)} ops, {len(ratios)} with a zero-config instance; median ratio {statistics.median(ratios):.2f} "
              f"(target <= 3); verdict as good as bound: {sum(r['as_good'] for r in rows)} of {len(rows)}; "
              f"zero-config wall {wall:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
