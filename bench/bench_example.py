"""Times the scan of the bundled example repository and prints per-instance times.

    python bench/bench_example.py [--jobs N] [--repeat R] [--without-thread-checks]

Budget (issue "kernelvet v0"): the whole example scan under 10 s on 2 cores; the thread checks
(races on shared and global memory, barrier divergence, warp masks) at most double it: compare
a run with --without-thread-checks (the single-thread checks only).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.manifest import load  # noqa: E402
from bot.scan import scan  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--without-thread-checks", action="store_true",
                    help="run the single-thread checks only (race, barrier-divergence and sync-mask off)")
    args = ap.parse_args()
    if args.without_thread_checks:
        import analyzers.api
        from analyzers.checks import default_checks

        # The workers are forked from this process, so they see the replaced list too.
        thread_checks = ("race", "barrier-divergence", "sync-mask")
        analyzers.api.default_checks = lambda: [c for c in default_checks() if c.id not in thread_checks]
    example = ROOT / "examples" / "minivllm"
    manifest = load(example / "kernelvet.yaml")
    walls = []
    report = None
    for _ in range(args.repeat):
        t = time.perf_counter()
        report = scan(example, manifest, jobs=args.jobs)
        walls.append(time.perf_counter() - t)
    times = sorted(ir.result.seconds for ir in report.instances)
    print(f"{'instance':70} {'verdict':13} {'seconds':>8} {'queries':>8}")
    for ir in sorted(report.instances, key=lambda r: -r.result.seconds):
        print(f"{ir.planned.label[:70]:70} {ir.result.verdict:13} {ir.result.seconds:8.3f} {ir.result.queries:8}")
    p95 = times[int(0.95 * (len(times) - 1))]
    c = report.counts()
    print(f"\ninstances {len(times)}: {c['bug']} bug, {c['verified']} verified, {c['inconclusive']} inconclusive; "
          f"{len(report.findings)} findings")
    print(f"per instance: median {statistics.median(times):.3f} s, p95 {p95:.3f} s, max {times[-1]:.3f} s, "
          f"sum {sum(times):.1f} s")
    print(f"wall: {', '.join(f'{w:.2f}' for w in walls)} s (best {min(walls):.2f} s; budget 10 s on 2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
