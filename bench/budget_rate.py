"""Measures how the engine's work units (analyzers/engine/work.py) relate to CPU seconds, so that a
budget of N seconds in units still means about N seconds of one idle core, and checks that the
count is deterministic.

    python bench/budget_rate.py [--only SUBSTR] [--limit N] [--repeat R]

For every run of every fixture (one engine run each: first runs, follow-ups, replays) it records
the CPU seconds, the engine steps and z3's resource units, then fits
    cpu_seconds ≈ z3_units / UNITS_PER_SECOND + steps * STEP_UNITS / UNITS_PER_SECOND
by least squares and prints the fitted rate beside the one work.py uses, the spread of the
seconds-per-budget-second ratio, and (with --repeat) whether each fixture's units repeat exactly.
Run it on an idle machine: the fit is what the constants in work.py are set from.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from analyzers.engine import work  # noqa: E402
from fixture_runner import all_fixtures, load_fixture, run_fixture  # noqa: E402

_meters: list = []
_init = work.Meter.__init__


def _recording_init(self, budget_s: float):
    _init(self, budget_s)
    _meters.append(self)


def measure(path: Path) -> list[tuple[float, int, int]]:
    """(cpu seconds, steps, z3 units) of each engine run of one fixture."""
    _meters.clear()
    ends: dict[int, tuple] = {}
    original_units = work.Meter.units

    def units(self):  # the last reading of each meter is its run's total
        u = original_units(self)
        ends[id(self)] = (self.cpu_seconds(), self.steps, u - self.steps * work.STEP_UNITS)
        return u
    work.Meter.units = units
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run_fixture(load_fixture(path), Path(tmp))
    finally:
        work.Meter.units = original_units
    return [ends[id(m)] for m in _meters if id(m) in ends]


def fit(rows: list[tuple[float, int, int]]) -> tuple[float, float]:
    """Least squares cpu = a*z3 + b*steps (no intercept); returns (a, b) clamped at zero."""
    szz = sum(z * z for _, _, z in rows)
    sss = sum(s * s for _, s, _ in rows)
    szs = sum(z * s for _, s, z in rows)
    scz = sum(c * z for c, _, z in rows)
    scs = sum(c * s for c, s, _ in rows)
    det = szz * sss - szs * szs
    if det == 0:
        return (scz / szz if szz else 0.0), 0.0
    a = (scz * sss - scs * szs) / det
    b = (szz * scs - szs * scz) / det
    if b < 0:
        return scz / szz, 0.0
    if a < 0:
        return 0.0, scs / sss
    return a, b


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="fixtures whose path contains this")
    ap.add_argument("--limit", type=int, default=0, help="at most this many fixtures (spread over the list)")
    ap.add_argument("--repeat", type=int, default=1, help="run each fixture this many times and compare units")
    args = ap.parse_args()
    work.Meter.__init__ = _recording_init
    paths = [p for p in all_fixtures() if args.only in str(p)]
    if args.limit and len(paths) > args.limit:
        step = len(paths) / args.limit
        paths = [paths[int(i * step)] for i in range(args.limit)]
    rows: list = []
    unstable: list[str] = []
    for p in paths:
        runs = [measure(p) for _ in range(args.repeat)]
        units = [[s * work.STEP_UNITS + z for _, s, z in r] for r in runs]
        if any(u != units[0] for u in units[1:]):
            unstable.append(f"{p.relative_to(ROOT)}: {units}")
        rows += [r for r in runs[0] if r[0] > 0.05]  # runs too short to time add only noise
        cpu = sum(r[0] for r in runs[0])
        print(f"{str(p.relative_to(ROOT / 'tests' / 'fixtures')):70} cpu {cpu:7.2f} s  steps "
              f"{sum(r[1] for r in runs[0]):8}  z3 {sum(r[2] for r in runs[0]):12}", flush=True)
    a, b = fit(rows)
    print(f"\n{len(rows)} runs of {len(paths)} fixtures")
    if a > 0:
        print(f"fitted: UNITS_PER_SECOND = {1 / a:,.0f}, STEP_UNITS = {b / a:,.0f}")
    print(f"work.py: UNITS_PER_SECOND = {work.UNITS_PER_SECOND:,}, STEP_UNITS = {work.STEP_UNITS:,}")
    constants = [("work.py's", work.UNITS_PER_SECOND, work.STEP_UNITS)]
    if a > 0:
        constants.append(("the fitted", 1 / a, b / a))
    for label, rate, step_units in constants:
        ratios = sorted(c / ((z + s * step_units) / rate) for c, s, z in rows if z + s)
        if not ratios:
            continue
        q = statistics.quantiles(ratios, n=20) if len(ratios) >= 20 else ratios
        heavy = sorted(((c, s, z) for c, s, z in rows if c > 1.0), key=lambda r: -r[0] / ((r[2] + r[1] * step_units) / rate))
        print(f"CPU seconds per budget second with {label} constants: median {statistics.median(ratios):.2f}, "
              f"p5 {q[0]:.2f}, p95 {q[-1]:.2f}, max {ratios[-1]:.2f} (the safety net is {work.CPU_SAFETY_FACTOR:g}); "
              f"runs over 1 s: " + ", ".join(f"{(z + s * step_units) / rate / c:.2f}" for c, s, z in heavy[:3])
              + " budget seconds per CPU second at the low end")
    if args.repeat > 1:
        print(f"units repeated exactly in {len(paths) - len(unstable)} of {len(paths)} fixtures")
        for u in unstable:
            print("  differs:", u)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
