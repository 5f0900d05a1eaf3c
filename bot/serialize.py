"""InstanceResult <-> plain JSON data, losslessly: what the cache stores and what shards hand to
``kernelvet merge``."""
from __future__ import annotations

from analyzers.findings import Finding, Fix, Inconclusive, InstanceResult
from analyzers.kir.nodes import Span


def span_out(s: Span | None) -> list | None:
    return None if s is None else [s.file, s.line, s.col, s.end_line, s.end_col, s.text]


def span_in(d) -> Span | None:
    return None if d is None else Span(str(d[0]), int(d[1]), int(d[2]), int(d[3]), int(d[4]), str(d[5]))


def finding_out(f: Finding) -> dict:
    return {
        "check": f.check, "message": f.message, "location": span_out(f.location), "op": f.op, "kernel": f.kernel,
        "witness": list(f.witness.items()),  # a list: keys are not always strings-only in spirit, order matters
        "expression": span_out(f.expression), "access": span_out(f.access), "wrapped_type": f.wrapped_type,
        "trace": [span_out(s) for s in f.trace],
        "fix": None if f.fix is None else {"span": span_out(f.fix.span), "replacement": f.fix.replacement,
                                           "description": f.fix.description, "declare": f.fix.declare},
        "models": list(f.models), "dtypes": list(f.dtypes), "zero_config": f.zero_config,
        "related": [span_out(s) for s in f.related],
        "call": f.call, "contract": f.contract,
        "static_only": f.static_only, "runtime_copy": f.runtime_copy, "hangs": f.hangs,
    }


def finding_in(d: dict) -> Finding:
    fix = d.get("fix")
    return Finding(
        d["check"], d["message"], span_in(d["location"]), d["op"], d.get("kernel"),
        {str(k): v for k, v in d.get("witness", [])}, span_in(d.get("expression")), span_in(d.get("access")),
        d.get("wrapped_type"), [span_in(s) for s in d.get("trace", [])],
        None if fix is None else Fix(span_in(fix["span"]), fix.get("replacement"), fix["description"], fix.get("declare")),
        list(d.get("models", [])), list(d.get("dtypes", [])), bool(d.get("zero_config", False)),
        [span_in(s) for s in d.get("related", [])], call=d.get("call"), contract=str(d.get("contract", "")),
        static_only=str(d.get("static_only", "")), runtime_copy=bool(d.get("runtime_copy", False)),
        hangs=bool(d.get("hangs", False)),
    )


def result_out(r: InstanceResult) -> dict:
    return {
        "op": r.op, "instance": r.instance, "models": list(r.models), "dtype": r.dtype, "verdict": r.verdict,
        "findings": [finding_out(f) for f in r.findings],
        "inconclusive": [{"reason": i.reason, "detail": i.detail, "span": span_out(i.span)} for i in r.inconclusive],
        "assumptions": list(r.assumptions), "kernels": list(r.kernels), "seconds": r.seconds, "paths": r.paths,
        "queries": r.queries, "fingerprint": r.fingerprint, "work": r.work,
    }


def result_in(d: dict) -> InstanceResult:
    return InstanceResult(
        d["op"], d["instance"], list(d["models"]), d["dtype"], d["verdict"],
        [finding_in(f) for f in d.get("findings", [])],
        [Inconclusive(i["reason"], i["detail"], span_in(i.get("span"))) for i in d.get("inconclusive", [])],
        list(d.get("assumptions", [])), list(d.get("kernels", [])), float(d.get("seconds", 0.0)),
        int(d.get("paths", 0)), int(d.get("queries", 0)), d.get("fingerprint", ""), int(d.get("work", 0)),
    )


def remap_spans(r: InstanceResult, sp) -> None:
    """Replace every span of the result (those spans_of lists) by ``sp(span)``, in place: lines
    moved by an edit (the cache), paths rebased to the repository root (a scan below it)."""
    for f in r.findings:
        f.location, f.expression, f.access = sp(f.location), sp(f.expression), sp(f.access)
        f.trace = [sp(s) for s in f.trace]
        f.related = [sp(s) for s in f.related]
        if f.fix is not None:
            f.fix.span = sp(f.fix.span)
    for i in r.inconclusive:
        i.span = sp(i.span)


def spans_of(r: InstanceResult):
    """Every span a result refers to (for relocation after an edit that moved lines)."""
    for f in r.findings:
        yield from (s for s in (f.location, f.expression, f.access, f.fix.span if f.fix else None) if s is not None)
        yield from f.trace
        yield from f.related
    for i in r.inconclusive:
        if i.span is not None:
            yield i.span
