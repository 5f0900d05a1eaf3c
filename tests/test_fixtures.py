"""Every annotated kernel fixture produces exactly the findings and verdicts it declares."""
from __future__ import annotations

import pytest

from fixture_runner import all_fixtures, compare, load_fixture, run_fixture

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
