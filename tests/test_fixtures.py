"""Every annotated kernel fixture produces exactly the findings and verdicts it declares."""
from __future__ import annotations

import pytest

from fixture_runner import FIXTURES, all_fixtures, compare, load_fixture, run_fixture

FIXTURE_PATHS = all_fixtures()


def test_there_are_fixtures_both_ways():
    fixtures = [load_fixture(p) for p in FIXTURE_PATHS]
    bugs = [f for f in fixtures if f.expected]
    clean = [f for f in fixtures if not f.expected and not f.expected_inconclusive]
    assert len(fixtures) >= 40
    assert len(bugs) >= 15 and len(clean) >= 15


@pytest.mark.parametrize("path", FIXTURE_PATHS, ids=lambda p: p.stem)
def test_fixture(path, tmp_path):
    fx = load_fixture(path)
    report = run_fixture(fx, tmp_path)
    problems = compare(fx, report)
    assert not problems, "\n".join(problems)


def test_a_follow_up_run_reaches_the_launch_after_a_slow_kernel(tmp_path):
    """The budget runs out in the first kernel; the timeout is that kernel's alone, and the second
    kernel was verified by the follow-up run that skipped the first."""
    fx = load_fixture(FIXTURES / "budget" / "follow_up_after_slow_kernel_clean.cu")
    [ir] = run_fixture(fx, tmp_path).instances
    result = ir.result
    assert result.verdict == "inconclusive" and not result.findings
    [timeout] = [i for i in result.inconclusive if i.reason == "timeout"]
    assert timeout.kernel.startswith("dequant_rows_kernel") and "follow-up" in timeout.detail
    assert any(k.startswith("scale_rows_kernel") for k in result.kernels)
    assert [i for i in result.inconclusive if i.reason != "timeout"] == []


def test_a_budget_spent_mostly_in_a_kernel_is_that_kernels_when_it_runs_out_in_host_code():
    """A kernel that took at least half the budget is the one a follow-up run skips, even when the
    budget ran out in the host code after it (a memcpy check); a kernel that took less is not."""
    from analyzers.engine.context import BudgetExceeded, Context, Options

    for share, blamed in ((0.8, "make_sequential_kernel"), (0.3, None)):
        ctx = Context("op", Options(time_budget_s=1.0))
        units = ctx.meter.budget_units
        ctx.kernel_units = {"make_sequential_kernel": int(share * units), "shuffle_kernel": units // 10}
        ctx.meter.steps = 2 * units
        with pytest.raises(BudgetExceeded):
            ctx.tick()
        assert ctx.timed_out_in == blamed
