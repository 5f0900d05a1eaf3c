"""Plain text: file:line:col: check: message, the source line with the wrapped sub-expression
underlined, the op, kernel, models, witness and fix; the bugs first, then the contract findings
(zero-config) apart; then inconclusive instances; then a summary."""
from __future__ import annotations

from . import SourceLines, fixed_line, plural, witness_text


def render(report, color: bool = False) -> str:
    lines = SourceLines(report.root)
    out: list[str] = []
    contracts = report.contracts
    for m in report.bugs + contracts:
        if contracts and m is contracts[0]:
            out.append(f"contract findings ({len(contracts)}): zero-config found them for calls that break what the op "
                       "does not check; its callers may keep it (a binding states it, docs/manifest.md)")
            out.append("")
        f = m.finding
        loc = f.location
        out.append(f"{loc.file}:{loc.line}:{loc.col}: {f.check}: {f.message}")
        src = lines.line(loc.file, loc.line)
        if src is not None:
            out.append(f"  {loc.line:5} | {src}")
            width = (loc.end_col - loc.col) if loc.end_line == loc.line and loc.end_col > loc.col else 1
            out.append(f"        | {' ' * (loc.col - 1)}^{'~' * max(width - 1, 0)}")
        if f.access is not None and (f.access.file, f.access.line) != (loc.file, loc.line):
            out.append(f"  reaches {f.access.file}:{f.access.line}:{f.access.col}: `{_short(f.access.text)}`")
        for r in f.related:
            out.append(f"  the same input also fails at {r.file}:{r.line}:{r.col}: `{_short(r.text)}`")
        parts = [f"op {', '.join(m.ops)}"]
        if m.kernels:
            parts.append(f"kernel {', '.join(m.kernels)}")
        out.append("  " + "; ".join(parts))
        out.append(f"  models: {', '.join(m.models)} ({', '.join(m.dtypes)})")
        if f.zero_config:
            out.append("  (zero-config: found without a binding; the witness is one input within the default ranges, "
                       "not a registered model)")
        if f.contract:
            out.append(f"  contract: {f.contract}")
        out.append(f"  witness: {witness_text(f.witness)}")
        fixed = fixed_line(lines, f.fix)
        if fixed is not None:
            out.append(f"  fix: {f.fix.description}:")
            out.append(f"        | {fixed.strip()}")
        out.append("")
    for ir in report.instances:
        r = ir.result
        if r.verdict != "inconclusive":
            continue
        out.append(f"inconclusive: {ir.planned.label}")
        for inc in r.inconclusive:
            where = f"{inc.span.file}:{inc.span.line}:{inc.span.col}: " if inc.span is not None and inc.span.line else ""
            out.append(f"  {where}{inc.reason}: {inc.detail}")
        out.append("")
    for m in report.findings:
        if m.status != "new":
            loc = m.location
            why = f"suppressed at {m.suppressed_at}: {m.suppressed}" if m.suppressed is not None else "in the baseline"
            out.append(f"{loc.file}:{loc.line}:{loc.col}: {m.check} ({why})")
    for p in report.problems:
        out.append(f"warning: {p}")
    for u in report.unverified:
        out.append(f"not verified: {u.text()}")
    for n in report.include_notes:
        out.append(f"note: {n}")
    if len(out) and out[-1] != "":
        out.append("")
    out.extend(summary(report))
    return "\n".join(out) + "\n"


def summary(report) -> list[str]:
    rows: dict[str, dict] = {}
    for ir in report.instances:
        row = rows.setdefault(ir.planned.op_name, {"bug": [], "contract": [], "verified": [], "inconclusive": []})
        row[ir.result.verdict].extend(f"{m}[{ir.result.dtype}]" for m in ir.planned.models)
    out = ["summary (op: verdict for models[dtype]):"]
    for op, row in rows.items():
        parts = [f"{v} {len(ms)}" for v, ms in row.items() if ms]
        out.append(f"  {op}: {', '.join(parts)}")
        for v in ("bug", "contract", "inconclusive"):
            if row[v]:
                out.append(f"      {v}: {', '.join(row[v])}")
    c = report.counts()
    quiet = len(report.findings) - len(report.active)
    cached = f" ({report.cache_hits} from the cache)" if report.cache_hits else ""
    files = [u for u in report.unverified if u.file != "."]
    unverified = (f"; {plural(len(files), 'file')} not verified" if files else
                  "; nothing verified" if report.unverified else "")
    contract = f", {c['contract']} contract" if c["contract"] else ""
    contract_findings = f", {len(report.contracts)} of them contract" if report.contracts else ""
    out.append(f"{plural(len(report.instances), 'instance')}: {c['bug']} bug{contract}, {c['verified']} verified, "
               f"{c['inconclusive']} inconclusive; {plural(len(report.active), 'finding')}{contract_findings}"
               + (f" ({quiet} suppressed or baselined)" if quiet else "") + unverified
               + f"; {report.seconds:.1f} s{cached}")
    return out


def _short(text: str, n: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
