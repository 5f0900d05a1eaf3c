"""compute-sanitizer's report, read: how many errors each tool found, and the first of them with
the source line it names (reproducers build with -lineinfo)."""
from __future__ import annotations

import re
from dataclasses import dataclass

_SUMMARY = re.compile(r"=+\s*ERROR SUMMARY:\s*(\d+)\s+errors?")
_RACE_SUMMARY = re.compile(r"=+\s*RACECHECK SUMMARY:\s*(\d+)\s+hazards? displayed\s*\((\d+)\s+errors?,\s*(\d+)\s+warnings?\)")
_ERROR = re.compile(r"=+\s*((?:Invalid|Misaligned|Out of range|Barrier|Race|Error|Program hit|Unspecified|"
                    r"Uninitialized|Divergent|Illegal|Warp)[^\n]*)")
_HAZARD = re.compile(r"=+\s*(Error|Warning): Race reported between (\w+) access at ([^\n]+)")
# racecheck's other form, one hazard per address: "Error: (Warp Level Programming) Potential WAW
# hazard detected at __shared__ 0xa20 in block (0,0,0) :", then the two threads' accesses.
_ADDRESS_HAZARD = re.compile(r"=+\s*(Error|Warning): (?:\([^)\n]*\)\s*)?(Potential \w+ hazard detected at [^\n]*?)"
                             r"\s*:?\s*\n=+\s*(\w+) Thread [^\n]* in ([^\s:]+\.(?:cu|cuh|h|hpp|cpp|cc)):(\d+)")
_PLACE = re.compile(r"([^\s:(]+\.(?:cu|cuh|h|hpp|cpp|cc|inl)):(\d+)")
_AT = re.compile(r"=+\s*at (?:0x[0-9a-f]+ in )?(?:[^\n]*? in )?([^\s:]+\.(?:cu|cuh|h|hpp|cpp|cc)):(\d+)")


@dataclass
class SanitizerReport:
    errors: int | None  # None: no summary line (the tool did not run to its end)
    warnings: int = 0  # racecheck's hazards it cannot decide
    first: str = ""  # the first error's description
    at: tuple[str, int] | None = None  # the source line the first error names
    places: tuple = ()  # every (file, line) an error or its call stack names

    @property
    def found(self) -> bool:
        return bool(self.errors)


def parse(text: str) -> SanitizerReport:
    """Read compute-sanitizer's output (any tool). racecheck's hazards count as errors only when it
    calls them errors (warnings are possible races it cannot decide)."""
    errors, warnings = None, 0
    m = _RACE_SUMMARY.search(text)
    if m:
        errors, warnings = int(m.group(2)), int(m.group(3))
    else:
        summaries = _SUMMARY.findall(text)
        if summaries:
            errors = int(summaries[-1])
    first, at = "", None
    h = _HAZARD.search(text)
    a = _ADDRESS_HAZARD.search(text)
    if h and (h.group(1) == "Error" or not errors):
        first = f"{h.group(1).lower()}: race reported between {h.group(2)} access at {h.group(3).strip()}"
        loc = re.search(r"([^\s:]+\.(?:cu|cuh|h|hpp|cpp|cc)):(\d+)", h.group(3))
        at = (loc.group(1), int(loc.group(2))) if loc else None
    elif a and (a.group(1) == "Error" or not errors):
        first = f"{a.group(1).lower()}: {a.group(2)}; {a.group(3).lower()} at {a.group(4)}:{a.group(5)}"
        at = (a.group(4), int(a.group(5)))
    else:
        e = _ERROR.search(text)
        if e:
            first = e.group(1).strip()
            a = _AT.search(text, e.end())
            at = (a.group(1), int(a.group(2))) if a else None
    places = tuple((m.group(1), int(m.group(2))) for m in _PLACE.finditer(text))
    return SanitizerReport(errors, warnings, first[:300], at, places)


def names_line(report: SanitizerReport, file: str, line: int) -> bool:
    """Whether the report names ``file:line`` anywhere (the first error can sit in an inlined
    header function, with the finding's line further down its stack); files match by name, as
    the sanitizer prints the path the build saw."""
    base = file.rsplit("/", 1)[-1]
    return any(f.rsplit("/", 1)[-1] == base and n == line for f, n in report.places)
