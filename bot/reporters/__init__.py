"""Reporters: the scan report as text for people, JSON for programs (SARIF and reviews: see bot)."""
from __future__ import annotations

import re
from pathlib import Path


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 finding``, ``2 findings``."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


class SourceLines:
    """Lines of workspace files, read once (for excerpts and suggestions)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._cache: dict[str, list[str]] = {}

    def line(self, file: str, line: int) -> str | None:
        if file.startswith("<"):
            return None
        if file not in self._cache:
            try:
                self._cache[file] = (self.root / file).read_text(errors="replace").splitlines()
            except OSError:
                self._cache[file] = []
        lines = self._cache[file]
        return lines[line - 1] if 0 < line <= len(lines) else None


_DECL = re.compile(r"\b(?P<type>unsigned\s+int|unsigned|int32_t|uint32_t|int|short)(?P<rest>\s+\w+\s*=\s*)$")


def fixed_line(lines: SourceLines, fix) -> str | None:
    """The source line with the fix applied (a one-line suggestion), or None when it cannot be."""
    if fix is None:
        return None
    span = fix.span
    text = lines.line(span.file, span.line)
    if text is None or span.line != span.end_line:
        return None
    start, end = span.col - 1, span.end_col - 1
    if text[start:end] != span.text:
        return None
    new = text[:start] + (fix.replacement if fix.replacement is not None else span.text) + text[end:]
    if fix.declare is not None:
        m = _DECL.search(text[:start])
        if m is None:
            return None
        new = new[:m.start("type")] + fix.declare + new[m.end("type"):]
    return new


def witness_text(w: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in w.items())
