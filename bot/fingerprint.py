"""A finding's identity across edits and across runs that see different parts of a repository: a
hash of its check, its file, and the texts of the expression that fails, the expression around it
and the access it reaches — not its line, so an edit that moves code keeps it, and not the ops
that fail there, since a pull-request, pre-commit or shard run verifies only some of them (a
baseline written by a full scan must still match). Two findings with the same identity in one
file are told apart by their order."""
from __future__ import annotations

import hashlib


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def base_fingerprint(check: str, file: str, location_text: str, expression_text: str | None,
                     access_text: str | None) -> str:
    h = hashlib.sha256("\x1f".join([check, file, _norm(location_text), _norm(expression_text),
                                    _norm(access_text)]).encode())
    return h.hexdigest()[:20]


def assign(findings) -> None:
    """Set ``fingerprint`` on every merged finding."""
    seen: dict[str, int] = {}
    for m in sorted(findings, key=lambda m: (m.location.file, m.location.line, m.location.col, m.check)):
        f = m.finding
        base = base_fingerprint(m.check, f.location.file, f.location.text,
                                f.expression.text if f.expression is not None else None,
                                f.access.text if f.access is not None else None)
        seen[base] = seen.get(base, 0) + 1
        m.fingerprint = base if seen[base] == 1 else f"{base}-{seen[base]}"
