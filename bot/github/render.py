"""Markdown for GitHub: review comments, the review body and the job summary, rendered from the JSON
report (docs/output.md), so the pull-request job and the ``workflow_run`` job of a fork render the
same. Every string from the report is treated as untrusted (it quotes the pull request's source):
code goes into code spans whose fence no backtick inside can close, mentions are neutralised, and
no HTML comment can be opened, so nothing can forge kernelvet's markers."""
from __future__ import annotations

import re

from ..reporters import plural

FINDING_MARKER = "<!-- kernelvet:finding:{fp} -->"
# Only a marker that ends the body counts: quoted source text may contain a look-alike.
FINDING_RE = re.compile(r"<!-- kernelvet:finding:([0-9a-f]{20}(?:-\d+)?) -->\s*\Z")
REVIEW_MARKER = "<!-- kernelvet:review -->"
REVIEW_RE = re.compile(r"<!-- kernelvet:review -->\s*<!-- kernelvet:run:[^>]* -->\s*\Z")
RUN_MARKER = "<!-- kernelvet:run:{run} -->"
RESOLVED_MARKER = "<!-- kernelvet:resolved:{fp} -->"
MAX_TEXT = 600
VERDICT_CELL = {"bug": "❌ bug", "inconclusive": "❔ inconclusive", "contract": "🟨 contract", "verified": "✅ verified"}


def plain(text, limit: int = MAX_TEXT) -> str:
    """Untrusted text outside code: one line, no mentions, no HTML comments or tags."""
    text = re.sub(r"\s+", " ", str(text))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("@", "@\u200b").replace("<", "&lt;").replace(">", "&gt;")
    return text


def code(text, limit: int = 200) -> str:
    """Untrusted text as an inline code span."""
    text = " ".join(str(text).split()).replace("<!--", "<\u200b!--").replace("@", "@\u200b")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if not text:
        return "` `"
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def message(text) -> str:
    """A finding's message: its `quoted` parts stay code, the rest is plain text."""
    parts = re.split(r"(`[^`]*`)", " ".join(str(text).split())[:MAX_TEXT])
    return "".join(code(p[1:-1]) if p.startswith("`") and p.endswith("`") and len(p) > 1 else plain(p) for p in parts)


def fence_block(text: str, info: str = "") -> str:
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def witness(w: dict) -> str:
    return ", ".join(f"{plain(k, 80)}={plain(v, 40)}" for k, v in list(w.items())[:24])


def where(span: dict | None) -> str:
    return f"{plain(span['file'], 200)}:{int(span['line'])}" if span else "?"


def comment_body(f: dict, line: int, on_access: bool = False, via_manifest: bool = False) -> str:
    """The inline comment of a finding placed on ``line`` of its file, or (``via_manifest``) on the
    changed manifest or model-config line whose instances it fails for."""
    kernels = ", ".join(code(k, 120) for k in f.get("kernels", [])[:4])
    out = [f"**kernelvet · {plain(f['check'], 40)}** in op {', '.join(code(o, 80) for o in f['ops'][:6])}"
           + (f", kernel {kernels}" if kernels else ""), "", message(f["message"]), ""]
    rows = []
    expr, loc = f.get("expression"), f["location"]
    if expr and expr.get("text") and expr["text"] != loc.get("text") and expr.get("line") == loc["line"]:
        rows.append(("expression", code(expr["text"])))
    wrapped = code(loc.get("text", "")) + (f" ({code(f['wrapped_type'], 40)})" if f.get("wrapped_type") else "")
    rows.append(("wraps" if f["check"] in ("overflow", "narrowing") else "fails at", wrapped))
    if on_access or via_manifest:
        rows.append(("computed at", where(loc)))
    if via_manifest:
        rows.insert(0, ("caused by", "this change: an instance it adds or changes fails in the code"))
    acc = f.get("access")
    if acc and not on_access and (acc["file"], acc["line"]) != (loc["file"], loc["line"]):
        rows.append(("reaches", f"{code(acc.get('text', ''))} at {where(acc)}"))
    for r in f.get("related", [])[:5]:
        rows.append(("also fails", f"{code(r.get('text', ''))} at {where(r)}"))
    rows.append(("models", f"{plain(', '.join(f['models']), 300)} ({plain(', '.join(f['dtypes']), 80)})"))
    rows.append(("witness", witness(f.get("witness", {}))))
    badge = confirmation_badge(f.get("confirmation"))
    if badge:
        rows.append(("on a GPU", badge))
    out += ["| | |", "|---|---|"] + [f"| {k} | {v.replace('|', '&#124;')} |" for k, v in rows]
    fix = f.get("fix")
    if fix and fix.get("replacement_line") is not None:
        out += ["", f"**Fix**: {plain(fix['description'], 200)}."]
        if not via_manifest and int(fix["line"]) == line and fix.get("file") == loc["file"]:
            out.append(fence_block(fix["replacement_line"], "suggestion"))
        else:
            out.append(f"At {plain(fix['file'], 200)}:{int(fix['line'])}:")
            out.append(fence_block(fix["replacement_line"], "cpp"))
    out += ["", f"<sub>To accept it: <code>// kernelvet: ignore[{plain(f['check'], 40)}] reason</code> on the line "
                "or the line above.</sub>", FINDING_MARKER.format(fp=f["fingerprint"])]
    return "\n".join(out)


CONFIRMATION_BADGES = {"confirmed": "🟥 **confirmed**", "not-reproduced": "⬜ not reproduced",
                       "not-runnable": "⬜ not runnable"}


def confirmation_badge(c) -> str:
    """``kernelvet confirm``'s outcome for a finding (docs/confirm.md); its detail is the output of
    running the repository's code, so it is shown as code."""
    if not isinstance(c, dict) or c.get("status") not in CONFIRMATION_BADGES:
        return ""
    tool = plain(c.get("tool", ""), 20)
    how = "by the run itself" if tool == "none" else f"by compute-sanitizer {tool}"
    return f"{CONFIRMATION_BADGES[c['status']]} {how}: {code(c.get('detail', ''), 300)}"


def finding_item(f: dict) -> str:
    loc = f["location"]
    return (f"- **{plain(f['check'], 40)}** at `{plain(loc['file'], 200)}:{int(loc['line'])}` "
            f"({', '.join(code(o, 80) for o in f['ops'][:6])}): {message(f['message'])}; "
            f"models {plain(', '.join(f['models']), 200)}; witness {witness(f.get('witness', {}))}")


def verdict_table(report: dict, all_models: list[str] | None = None) -> list[str]:
    """ops × models: the worst verdict over the instance's dtypes (bug, then inconclusive, then contract)."""
    rank = {"verified": 0, "contract": 1, "inconclusive": 2, "bug": 3}
    cells: dict[str, dict[str, str]] = {}
    models: list[str] = list(all_models or [])
    for inst in report.get("instances", []):
        row = cells.setdefault(inst["op"], {})
        for m in inst["models"]:
            if m not in models:
                models.append(m)
            old = row.get(m)
            if old is None or rank[inst["verdict"]] > rank[old]:
                row[m] = inst["verdict"]
    if not cells:
        return []
    models = models[:20]
    out = ["| op | " + " | ".join(plain(m, 40) for m in models) + " |", "|---" * (len(models) + 1) + "|"]
    for op, row in cells.items():
        out.append(f"| {code(op, 80)} | " + " | ".join(VERDICT_CELL.get(row.get(m), "–") for m in models) + " |")
    return out


def summary(report: dict, *, inline: list[dict] = (), elsewhere: list[dict] = (), overflow: list[dict] = (),
            title: str = "kernelvet", explanation: str | None = None, notes: list[str] = (),
            list_all: bool = False) -> str:
    """The review body (``inline``, ``elsewhere``, ``overflow``: where the review put each finding),
    or the job summary (``list_all``: every finding listed)."""
    s = report["summary"]
    findings = report.get("findings", [])
    quiet = [f for f in findings if f.get("status") in ("suppressed", "baselined")]
    active = [f for f in findings if f.get("status", "new") == "new" and not f.get("contract")]
    contracts = [f for f in findings if f.get("status", "new") == "new" and f.get("contract")]
    head = f"**{plural(len(active), 'finding')}**" if active else "**No findings**"
    if contracts:
        head += f" · {plural(len(contracts), 'contract finding')}"
    unverified = report.get("unverified", [])
    out = [f"### {title}", "",
           f"{head} · {plural(s['instances'], 'instance')}: {s['bug']} bug, "
           + (f"{s['contract']} contract, " if s.get("contract") else "") + f"{s['verified']} verified, "
           f"{s['inconclusive']} inconclusive" + (f" ({s['cached']} from the cache)" if s.get("cached") else "")
           + (f" · **{plural(len(unverified), 'file')} not verified**" if unverified else "")]
    if inline:
        out[-1] += f" · {len(inline)} commented inline"
    out += [""] + verdict_table(report)
    if not report.get("instances"):
        out.append("Nothing this change touches is verified by kernelvet (no op of the manifest depends on it).")
    for n in notes:
        out += ["", f"> {plain(n, 500)}"]
    if list_all and active:
        out += ["", "#### Findings"] + [finding_item(f) for f in active]
    if elsewhere:
        out += ["", "#### Findings outside the lines this pull request changes"] + [finding_item(f) for f in elsewhere]
    if overflow:
        out += ["", f"#### {len(overflow)} more findings (over the limit of inline comments per review)"]
        out += [finding_item(f) for f in overflow]
    if contracts:
        out += ["", f"#### {plural(len(contracts), 'contract finding')} (zero-config)", "",
                "Real only for calls that break what the op does not check: its callers may keep the contract. "
                "A binding in the manifest states it (docs/manifest.md, \"Contract findings\")."]
        out += [finding_item(f) + f"; contract: {message(f['contract'])}" for f in contracts[:30]]
    if quiet:
        out += ["", "#### Suppressed or baselined"]
        for f in quiet:
            why = (f"suppressed: {plain(f['suppression']['reason'], 200)}" if f.get("suppression") else "in the baseline")
            out.append(f"- {plain(f['check'], 40)} at `{plain(f['location']['file'], 200)}:{int(f['location']['line'])}` ({why})")
    inconclusive = [i for i in report.get("instances", []) if i["verdict"] == "inconclusive"]
    if inconclusive:
        out += ["", "#### Inconclusive"]
        for i in inconclusive[:30]:
            for r in i["inconclusive"][:3]:
                loc = f" at `{where(r['location'])}`" if r.get("location") else ""
                out.append(f"- {code(i['op'], 80)} [{plain(i['dtype'], 20)}] for {plain(', '.join(i['models']), 200)}: "
                           f"{plain(r['reason'], 40)}{loc}: {plain(r['detail'], 300)}")
    if unverified:
        out += ["", "#### Not verified"]
        for u in unverified[:30]:
            at = f"{u['file']}:{int(u['line'])}" if u.get("line") else u["file"]
            out.append(f"- `{plain(at, 200)}`: {plain(u['why'], 300)}")
    if report.get("include_notes"):
        out += ["", "#### Includes dropped or found by name"] + [f"- {plain(n, 300)}" for n in report["include_notes"][:30]]
    if report.get("problems"):
        out += ["", "#### Warnings"] + [f"- {plain(p, 300)}" for p in report["problems"][:30]]
    if explanation:
        out += ["", "<details><summary>What was verified and why</summary>", "", fence_block(explanation[:20000]),
                "", "</details>"]
    return "\n".join(out) + "\n"
