"""The per-instance budget counts work (engine steps and z3's resource units), not seconds: the
same instance gives the same verdict, findings and inconclusive places on an idle machine and on
one busy with other processes."""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

from analyzers.engine import work
from analyzers.engine.context import BudgetExceeded, Context, Options

TESTS = Path(__file__).parent

# Runs one fixture in a fresh process (so z3's term numbering starts alike) and prints what the
# verdict rests on: everything but the seconds.
_RUN = """
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, {tests!r})
from fixture_runner import load_fixture, run_fixture
report = run_fixture(load_fixture(Path({path!r})), Path(tempfile.mkdtemp()))
out = []
for ir in report.instances:
    r = ir.result
    out.append({{"verdict": r.verdict, "work": r.work, "kernels": r.kernels,
                "findings": [(f.check, f.location.line, sorted(f.witness.items())) for f in r.findings],
                "inconclusive": [(i.reason, i.detail, i.span.line if i.span else None) for i in r.inconclusive]}})
print(json.dumps(out, sort_keys=True))
"""


def _run_fixture_in_fresh_process(path: Path) -> list:
    code = _RUN.format(tests=str(TESTS), path=str(path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         cwd=TESTS.parent, env={**os.environ, "PYTHONHASHSEED": "0"})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spin(stop_at: float) -> None:
    x = 0
    while time.monotonic() < stop_at:
        x += 1


def test_a_run_beside_cpu_hogs_gives_the_same_result_as_a_run_alone():
    """A fixture whose budget runs out inside its first kernel (the point where it stops decides
    which follow-up runs happen and what they find): identical alone and beside two busy processes."""
    path = TESTS / "fixtures" / "budget" / "follow_up_after_slow_kernel.cu"
    alone = _run_fixture_in_fresh_process(path)
    hogs = [multiprocessing.Process(target=_spin, args=(time.monotonic() + 120,), daemon=True) for _ in range(2)]
    for h in hogs:
        h.start()
    try:
        loaded = _run_fixture_in_fresh_process(path)
    finally:
        for h in hogs:
            h.terminate()
    assert any(i[0] == "timeout" for r in alone for i in r["inconclusive"])  # the budget did run out
    assert loaded == alone


def test_the_budget_is_spent_by_work_and_the_cpu_clock_is_only_a_safety_net(monkeypatch):
    ctx = Context("op", Options(time_budget_s=1.0))
    assert ctx.meter.budget_units == work.UNITS_PER_SECOND
    ctx.meter.steps = work.UNITS_PER_SECOND // work.STEP_UNITS - 2
    ctx.tick()  # one step short of the budget: goes on
    ctx.meter.steps += 2
    try:
        ctx.tick()
        raise AssertionError("the budget in work units did not end the run")
    except BudgetExceeded:
        pass
    # A slow machine (CPU seconds far past the budget) with little work done: still within budget
    # until the safety net, at CPU_SAFETY_FACTOR times the budget.
    ctx = Context("op", Options(time_budget_s=1.0))
    start = ctx.meter.cpu_start
    monkeypatch.setattr(work, "cpu_clock", lambda: start + 0.9 * work.CPU_SAFETY_FACTOR)
    ctx.tick()
    monkeypatch.setattr(work, "cpu_clock", lambda: start + 1.1 * work.CPU_SAFETY_FACTOR)
    try:
        ctx.tick()
        raise AssertionError("the CPU safety net did not end the run")
    except BudgetExceeded:
        pass
    # The timeout says which limit ended it: the safety net is the one that depends on the machine.
    assert "CPU safety net" in ctx.meter.why_spent() and "depends on the machine" in ctx.meter.why_spent()
    ctx.meter.steps = 2 * work.UNITS_PER_SECOND // work.STEP_UNITS
    assert ctx.meter.why_spent().startswith("its budget of 1 s (counted in work units")


def test_solver_units_count_against_the_budget():
    import z3
    ctx = Context("op", Options(time_budget_s=10.0))
    before = ctx.meter.units()
    x, y = z3.BitVecs("budget_x budget_y", 32)
    assert ctx.solver.model([x * y == 1234567, x > 1, y > 1]) is not None
    assert ctx.meter.units() > before and ctx.meter.steps == 0
