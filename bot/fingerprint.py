"""A finding's identity across edits: a hash of its check, file, the text of the expression that
fails and the ops that fail there — not its line, so an edit that moves code keeps it. Two
findings with the same identity in one file are told apart by their order."""
from __future__ import annotations

import hashlib


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def base_fingerprint(check: str, file: str, location_text: str, expression_text: str | None, ops) -> str:
    h = hashlib.sha256("\x1f".join([check, file, _norm(location_text), _norm(expression_text),
                                    ",".join(sorted(ops))]).encode())
    return h.hexdigest()[:20]


def assign(findings) -> None:
    """Set ``fingerprint`` on every merged finding (sorted by place, as the scan returns them)."""
    seen: dict[str, int] = {}
    for m in sorted(findings, key=lambda m: (m.location.file, m.location.line, m.location.col, m.check)):
        f = m.finding
        base = base_fingerprint(m.check, f.location.file, f.location.text,
                                f.expression.text if f.expression is not None else None, m.ops)
        seen[base] = seen.get(base, 0) + 1
        m.fingerprint = base if seen[base] == 1 else f"{base}-{seen[base]}"
