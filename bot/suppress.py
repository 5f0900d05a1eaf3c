"""Inline suppressions and baselines.

- ``// kernelvet: ignore[overflow] the row count is capped at 65535 by the router`` on the line of
  a finding, or on a comment line right above it, suppresses the named checks there (``*``: every
  check). The reason is required: a suppression without one suppresses nothing and is reported.
- A baseline file (``kernelvet.baseline/1``) lists findings by fingerprint; they are reported as
  baselined and fail nothing, so an existing repository adopts kernelvet without a wall of old
  findings. ``kernelvet scan --write-baseline FILE`` writes one.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from analyzers import __version__

from .fingerprint import assign
from .jsonfile import read_json
from .reporters import SourceLines

BASELINE_SCHEMA = "kernelvet.baseline/1"
DEFAULT_BASELINE = ".kernelvet-baseline.json"
_MARK = re.compile(r"kernelvet:\s*ignore(?P<bracket>\[(?P<checks>[^\]]*)\])?(?P<reason>.*)")
_COMMENT_ONLY = re.compile(r"^\s*(//|/\*|\*)")


class BaselineError(Exception):
    pass


@dataclass
class Suppression:
    file: str
    line: int
    checks: set[str]
    reason: str


def suppression_at(lines: SourceLines, file: str, line: int) -> tuple[Suppression | None, str | None]:
    """The suppression comment governing ``file:line`` (on it, or on a comment line above it), and
    a problem with it if it is malformed."""
    for n in (line, line - 1):
        text = lines.line(file, n)
        if text is None or (n != line and not _COMMENT_ONLY.match(text)):
            continue
        m = _MARK.search(text)
        if m is None:
            continue
        where = f"{file}:{n}"
        if m.group("bracket") is None:
            return None, f"{where}: kernelvet: ignore needs the checks it suppresses, e.g. ignore[overflow]"
        checks = {c.strip() for c in m.group("checks").split(",") if c.strip()}
        reason = m.group("reason").strip().removesuffix("*/").strip()
        if not reason:
            return None, f"{where}: kernelvet: ignore[{m.group('checks')}] has no reason: the finding is reported"
        return Suppression(file, n, checks, reason), None
    return None, None


def load_baseline(path: Path) -> set[str]:
    data = read_json(path, BaselineError, "the baseline")
    if not isinstance(data, dict) or data.get("schema") != BASELINE_SCHEMA or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{path}:1:1: not a kernelvet baseline (expected \"schema\": \"{BASELINE_SCHEMA}\")")
    out = set()
    for i, f in enumerate(data["findings"]):
        if not isinstance(f, dict) or not isinstance(f.get("fingerprint"), str):
            raise BaselineError(f"{path}: findings[{i}] has no \"fingerprint\"")
        out.add(f["fingerprint"])
    return out


def baseline_document(report) -> str:
    assign(report.findings)
    return json.dumps({
        "schema": BASELINE_SCHEMA, "tool": f"kernelvet {__version__}",
        "findings": [{"fingerprint": m.fingerprint, "check": m.check, "file": m.location.file, "line": m.location.line,
                      "text": m.location.text, "ops": m.ops}
                     for m in report.findings if m.suppressed is None],
    }, indent=2) + "\n"


def apply(report, baseline: set[str] | None = None) -> None:
    """Give every finding its fingerprint and status; collect malformed suppressions in
    ``report.problems``."""
    assign(report.findings)
    lines = SourceLines(report.root)
    for m in report.findings:
        loc = m.location
        sup, problem = suppression_at(lines, loc.file, loc.line)
        if problem and problem not in report.problems:
            report.problems.append(problem)
        if sup is not None and ("*" in sup.checks or m.check in sup.checks):
            m.suppressed = sup.reason
            m.suppressed_at = f"{sup.file}:{sup.line}"
        elif baseline and m.fingerprint in baseline:
            m.baselined = True
