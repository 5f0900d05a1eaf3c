"""The coverage report's shares: rounded down, so a target is never met by rounding."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.coverage import _share  # noqa: E402


def test_a_share_just_under_a_target_does_not_round_up_to_it():
    assert _share(132, 166) == "79.5%"
    assert _share(2, 3) == "66.6%"
    assert _share(133, 166) == "80.1%"


def test_whole_and_empty_shares():
    assert _share(5, 5) == "100.0%"
    assert _share(0, 0) == "0.0%"
