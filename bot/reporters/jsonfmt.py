"""JSON: the schema documented in docs/output.md ("kernelvet.scan/1")."""
from __future__ import annotations

import json as _json

from analyzers import __version__
from . import SourceLines, fixed_line

SCHEMA = "kernelvet.scan/1"


def span(s) -> dict | None:
    if s is None:
        return None
    return {"file": s.file, "line": s.line, "column": s.col, "end_line": s.end_line, "end_column": s.end_col,
            "text": s.text}


def finding(m, lines: SourceLines) -> dict:
    f = m.finding
    fixed = fixed_line(lines, f.fix)
    return {
        "check": f.check,
        "message": f.message,
        "location": span(f.location),
        "expression": span(f.expression),
        "wrapped_type": f.wrapped_type,
        "access": span(f.access),
        "ops": m.ops,
        "manifest_places": [{"file": f, "start": a, "end": b} for f, a, b in m.causes],
        "kernels": m.kernels,
        "models": m.models,
        "dtypes": m.dtypes,
        "witness": f.witness,
        "fix": None if fixed is None else {"description": f.fix.description, "file": f.fix.span.file,
                                           "line": f.fix.span.line, "replacement_line": fixed},
        "trace": [span(s) for s in f.trace],
        "related": [span(s) for s in f.related],
        "zero_config": f.zero_config,
        "contract": f.contract or None,
        "static_only": f.static_only or None,
        "runtime_copy": f.runtime_copy,
        "hangs": f.hangs,
        "call": f.call,
        "fingerprint": m.fingerprint,
        "status": m.status,
        "suppression": None if m.suppressed is None else {"reason": m.suppressed, "at": m.suppressed_at},
    }


def instance(ir) -> dict:
    r = ir.result
    return {
        "op": ir.planned.op_name,
        "file": ir.planned.file,
        "launcher": ir.planned.launcher,
        "dtype": r.dtype,
        "models": ir.planned.models,
        "verdict": r.verdict,
        "findings": [{"check": f.check, "file": f.location.file, "line": f.location.line, "column": f.location.col}
                     for f in r.findings],
        "inconclusive": [{"reason": i.reason, "detail": i.detail, "location": span(i.span)} for i in r.inconclusive],
        "assumptions": r.assumptions,
        "kernels": r.kernels,
        "seconds": round(r.seconds, 3),
        "work": r.work,
        "queries": r.queries,
        "fingerprint": r.fingerprint,
        "cached": ir.cached,
    }


def to_dict(report) -> dict:
    from ..fingerprint import assign
    if report.findings and not report.findings[0].fingerprint:
        assign(report.findings)
    lines = SourceLines(report.root)
    c = report.counts()
    return {
        "schema": SCHEMA,
        "tool": {"name": "kernelvet", "version": __version__},
        "summary": {"instances": len(report.instances), **c, "findings": len(report.active),
                    "contract_findings": len(report.contracts),
                    "suppressed": sum(1 for m in report.findings if m.status == "suppressed"),
                    "baselined": sum(1 for m in report.findings if m.status == "baselined"),
                    "unverified": len(report.unverified),
                    "cached": report.cache_hits, "seconds": round(report.seconds, 3), "exit_code": report.exit_code},
        "problems": list(report.problems),
        "unverified": [{"file": u.file, "line": u.line, "why": u.why} for u in report.unverified],
        "include_notes": list(report.include_notes),
        "findings": [finding(m, lines) for m in report.findings],
        "instances": [instance(ir) for ir in report.instances],
    }


def render(report) -> str:
    return _json.dumps(to_dict(report), indent=2) + "\n"
