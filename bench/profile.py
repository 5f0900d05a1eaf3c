"""Where an analysis spends its time, phase by phase, for the slowest instances of a scan.

    python bench/profile.py ROOT [--manifest FILE] [--files F ...] [--zero-config] [--top 20]
                                 [--time-budget S]
    python bench/profile.py --fixtures tests/fixtures/shared/group_absmax_warp_fold.cu ...

Scans ROOT in this process (one instance after another, as `kernelvet scan --jobs 1` does) with
timers around the engine's phases, each second counted once, in the first phase below that holds it:
  parse       libclang (frontend/parse.py)
  lower       the rest of lowering an op to KIR (the first instance of an op pays it)
  follow-up   runs after an instance's first (follow-ups past a slow kernel, replays with inputs
              fixed), whole
  witness     making a found witness small (smallest sizes, block 0), its queries included
  solver      z3 queries (bit-vector and integer)
  engine      the rest: path exploration, term building, checks
Prints the phases' totals and the --top slowest instances with their split. The numbers are CPU
seconds of this process (time.process_time), so run it on an idle machine.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PHASES = ("parse", "lower", "follow-up", "witness", "solver", "engine")
_stack: list = []  # [phase, start, time spent in nested timed calls]
_totals: dict = {}


def _timed(phase: str, fn):
    def wrapper(*args, **kwargs):
        # A phase nested in a higher-precedence one (a solver query inside witness making) counts
        # as the outer one: only the outermost timed call of those two records it.
        outer = next((f[0] for f in _stack if PHASES.index(f[0]) <= PHASES.index(phase)), None)
        if outer is not None and outer != phase:
            return fn(*args, **kwargs)
        _stack.append([phase, time.process_time(), 0.0])
        try:
            return fn(*args, **kwargs)
        finally:
            ph, start, nested = _stack.pop()
            spent = time.process_time() - start
            _totals[ph] = _totals.get(ph, 0.0) + spent - nested
            if _stack:
                _stack[-1][2] += spent
    return wrapper


def _install() -> None:
    from analyzers import api
    from analyzers.engine import context, interp, lia, solver, threads
    from analyzers.checks import race
    from analyzers.frontend import parse, registrations

    parse.parse_file = api.parse_file = registrations.parse_file = _timed("parse", parse.parse_file)
    api.Workspace.op = _timed("lower", api.Workspace.op)
    api.Workspace.kernel_op = _timed("lower", api.Workspace.kernel_op)
    solver.Solver._check = _timed("solver", solver.Solver._check)
    for name in ("_check", "model_values", "minimize"):
        setattr(lia.Lia, name, _timed("solver", getattr(lia.Lia, name)))
    context.Context.minimal = _timed("witness", context.Context.minimal)
    threads.small_model = race.small_model = _timed("witness", threads.small_model)
    first_run = interp._analyze_once
    runs = {"n": 0}

    def analyze_once(*args, **kwargs):
        runs["n"] += 1
        if runs["n"] == 1:
            return first_run(*args, **kwargs)
        return _timed("follow-up", first_run)(*args, **kwargs)
    interp._analyze_once = analyze_once
    analyze = interp.analyze

    def analyze_counted(*args, **kwargs):
        runs["n"] = 0
        return analyze(*args, **kwargs)
    interp.analyze = analyze_counted
    api.analyze = analyze_counted


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="+", help="a repository, or with --fixtures annotated fixture files")
    ap.add_argument("--fixtures", action="store_true", help="ROOT is one or more test fixtures, run as the suite does")
    ap.add_argument("--manifest")
    ap.add_argument("--files", nargs="*", help="only these files (relative to ROOT)")
    ap.add_argument("--zero-config", action="store_true", help="also the unbound ops of --files")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--time-budget", type=float)
    args = ap.parse_args()
    _install()
    import bot.scan as scan_module
    from bot.manifest import load
    from bot.scan import options_for, scan

    rows = []
    verify = scan_module._verify_in_worker

    def verify_timed(p):
        _totals.clear()
        t = time.process_time()
        out = _timed("engine", verify)(p)
        rows.append((p.label, out[0].verdict, time.process_time() - t, dict(_totals)))
        return out
    scan_module._verify_in_worker = verify_timed
    if args.fixtures:
        import tempfile
        sys.path.insert(0, str(ROOT / "tests"))
        from fixture_runner import load_fixture, run_fixture
        for path in args.root:
            with tempfile.TemporaryDirectory() as tmp:
                run_fixture(load_fixture(Path(path).resolve()), Path(tmp))
    else:
        root = Path(args.root[0]).resolve()
        manifest = load(Path(args.manifest)) if args.manifest else None
        zero = args.files if (args.zero_config or manifest is None) else None
        scan(root, manifest, set(args.files) if args.files and manifest is not None else None,
             options=options_for(manifest, args.time_budget), jobs=1, zero_config_files=zero)
    total = {ph: sum(r[3].get(ph, 0.0) for r in rows) for ph in PHASES}
    all_s = sum(total.values()) or 1.0
    print(f"{len(rows)} instances, {all_s:.1f} CPU s")
    print("  ".join(f"{ph} {total[ph]:.1f} s ({100 * total[ph] / all_s:.0f}%)" for ph in PHASES))
    print(f"\n{'instance':60} {'verdict':12} {'cpu s':>7} " + " ".join(f"{ph:>9}" for ph in PHASES))
    for label, verdict, spent, phases in sorted(rows, key=lambda r: -r[2])[:args.top]:
        print(f"{label[:60]:60} {verdict:12} {spent:7.1f} "
              + " ".join(f"{100 * phases.get(ph, 0.0) / (spent or 1):8.0f}%" for ph in PHASES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
