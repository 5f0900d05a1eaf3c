"""Checks: one module per check, each deciding on the events the engine emits."""
from __future__ import annotations

from .align import AlignmentCheck
from .base import Check
from .launch import LaunchCheck
from .oob import BoundsCheck
from .overflow import OverflowCheck
from .race import RaceCheck
from .divergence import BarrierDivergenceCheck
from .syncmask import SyncMaskCheck


def default_checks() -> list[Check]:
    return [BoundsCheck(), OverflowCheck(), LaunchCheck(), AlignmentCheck(), RaceCheck(), BarrierDivergenceCheck(),
            SyncMaskCheck()]


__all__ = ["Check", "default_checks", "BoundsCheck", "OverflowCheck", "LaunchCheck", "AlignmentCheck", "RaceCheck",
           "BarrierDivergenceCheck", "SyncMaskCheck"]
