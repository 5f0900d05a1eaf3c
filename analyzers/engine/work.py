"""The work an instance's analysis does, counted so that the same input gives the same count on an
idle laptop and on a loaded 2-core CI runner: z3's resource units (its ``rlimit`` counter, which
every query advances deterministically) plus the engine's own steps (statements run, queries
built), each step weighed as the solver units of about the same CPU time.

A budget in seconds is turned into units at a fixed rate measured on the fixtures
(``bench/budget_rate.py`` prints it), so "60 s" still means about a minute of one idle core; the
CPU clock stays as a safety net far above it for an input whose steps are unusually heavy."""
from __future__ import annotations

import time

# Solver units per second of budget, and the units one engine step counts as. Measured with
# bench/budget_rate.py over the fixtures (median CPU seconds per unit on one idle core).
UNITS_PER_SECOND = 3_000_000
STEP_UNITS = 25_000
# The CPU clock ends an instance only past this many times its budget: a safety net against an
# input whose engine steps are far heavier than the rate assumes, never the common limit.
CPU_SAFETY_FACTOR = 4.0

_z3_units = 0  # z3's resource counter (one per process, shared by every solver) as last read


_own_context_units = 0  # the resource counters of queries asked in a z3 context of their own, summed


def note_query(solver, own_context: bool = False) -> int:
    """Read z3's resource counter after a query (solver or optimizer). The counter is global to
    the z3 context and only grows, so the last reading is the work of every query so far; a query
    in a context of its own (solver.py) adds its whole count, which is returned."""
    global _z3_units, _own_context_units
    try:
        units = int(solver.statistics().get_key_value("rlimit count"))
    except Exception:  # a query answered before z3 counted anything has no such statistic
        return 0
    if own_context:
        _own_context_units += units
        return units
    _z3_units = max(_z3_units, units)
    return 0


def charge(units: int) -> None:
    """Count work a query would have done had its answer not been remembered (solver.py): a
    remembered answer saves the time, never the budget, so a verdict does not depend on which
    queries ran before in the process."""
    global _own_context_units
    _own_context_units += units


def z3_units() -> int:
    return _z3_units + _own_context_units


def cpu_clock() -> float:
    """This process's CPU time: what the safety net and the reported seconds count."""
    return time.process_time()


class Meter:
    """One run's work: engine steps and solver units since it began, against a budget in units."""

    def __init__(self, budget_s: float):
        self.budget_s = budget_s
        self.budget_units = int(budget_s * UNITS_PER_SECOND)
        self.steps = 0
        self.z3_start = z3_units()
        self.cpu_start = cpu_clock()

    def step(self) -> None:
        self.steps += 1

    def units(self) -> int:
        return (z3_units() - self.z3_start) + self.steps * STEP_UNITS

    def remaining_units(self) -> int:
        return self.budget_units - self.units()

    def safety_seconds_left(self) -> float:
        """CPU seconds until the safety net ends the run: a query's wall-clock timeout is cut to it."""
        return self.budget_s * CPU_SAFETY_FACTOR - self.cpu_seconds()

    def cpu_seconds(self) -> float:
        return cpu_clock() - self.cpu_start

    def spent(self) -> bool:
        """Past the budget in work, or (the safety net) far past it in CPU time."""
        return self.units() > self.budget_units or self.by_safety_net()

    def by_safety_net(self) -> bool:
        return self.cpu_seconds() > self.budget_s * CPU_SAFETY_FACTOR

    def why_spent(self) -> str:
        """What ended the run, for the timeout's detail: the safety net is the one limit that
        depends on the machine, and a user must know when a verdict rests on it."""
        if self.by_safety_net() and self.units() <= self.budget_units:
            return (f"the CPU safety net of {CPU_SAFETY_FACTOR:g} times its budget of {self.budget_s:g} s "
                    f"({self.cpu_seconds():.0f} CPU s, {self.units() / max(1, self.budget_units):.0%} of the budget's "
                    "work): its engine steps are heavier than the budget's rate assumes, and where this limit "
                    "falls depends on the machine's speed")
        return f"its budget of {self.budget_s:g} s (counted in work units, the same on any machine)"
