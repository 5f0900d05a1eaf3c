"""Textual include resolution: the include graph of a translation unit, and its sandbox.

kernelvet parses untrusted code. Includes resolve only inside the workspace and the shim
directories; anything else (absolute paths, ``..`` escaping the workspace, symlinks pointing out)
is replaced by an empty file, and an include that resolves nowhere becomes an empty stub so the
rest of the file still parses. Both are reported as notes.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

SHIM_ROOT = Path(__file__).resolve().parent / "shims"
SHIM_DIRS = (SHIM_ROOT, SHIM_ROOT / "std")
STUB_DIR = "/__kernelvet_missing__"
OUTSIDE_DIR = "/__kernelvet_outside__"

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
# Any directive that can include a file, however it is spelled: '%:' for '#', comments between
# '#' and the name, #import, #include_next, a macro as the name. The lines are joined at
# backslash-newlines first, as the preprocessor does.
_ANY_INCLUDE_RE = re.compile(r'^[ \t]*(?:#|%:)[ \t]*(?:/\*.*?\*/[ \t]*)*(?:include|import|include_next)\b', re.M)


@dataclass(frozen=True)
class IncludeNote:
    includer: str
    line: int
    name: str
    why: str  # "missing" | "outside-workspace" | "by-name"
    found: str = ""  # by-name: the repository file taken for it


@dataclass
class IncludeGraph:
    root_file: Path
    edges: dict[Path, list[Path]] = field(default_factory=dict)
    notes: list[IncludeNote] = field(default_factory=list)
    overrides: dict[str, str] = field(default_factory=dict)  # path -> content (empty)
    quote_overrides: dict[tuple[str, str], str] = field(default_factory=dict)
    # An include this textual graph cannot follow (a computed '#include H', '%:include', ...): the
    # files the parser really includes may differ, so only a parse tells (Workspace.included_files).
    opaque: list[str] = field(default_factory=list)
    # Include directories inferred from headers found by their name (IncludeResolver.by_name): the
    # parser searches them after every other directory (-idirafter), as the guesses they are.
    found_dirs: list[Path] = field(default_factory=list)

    def files(self) -> set[Path]:
        out = {self.root_file}
        for targets in self.edges.values():
            out.update(targets)
        return out


# Directories never searched for a header by its name: version control, caches, build outputs.
_UNSEARCHED_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".kernelvet-cache", "build", "dist"}
MAX_INDEXED_FILES = 200_000  # larger repositories are not searched by name: their missing includes stay dropped
FOUND_BY_NAME = "found by its name at"  # the words of a note on a header found so (reporters key on them)


class IncludeResolver:
    def __init__(self, workspace: Path, include_dirs: list[Path]):
        self.workspace = workspace.resolve()
        self.include_dirs = [d.resolve() for d in include_dirs if d.is_dir()]
        self._cache: dict[Path, list[tuple[int, str, bool]]] = {}
        self._opaque: dict[Path, bool] = {}
        self._by_basename: dict[str, list[Path]] | None = None

    def inside(self, path: Path) -> bool:
        real = path.resolve()
        return _is_under(real, self.workspace) or any(_is_under(real, s) for s in SHIM_DIRS)

    def directives(self, path: Path) -> list[tuple[int, str, bool]]:
        if path not in self._cache:
            try:
                text = path.read_text(errors="replace")
            except OSError:
                text = ""
            out = []
            for m in _INCLUDE_RE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                out.append((line, m.group(2).strip(), m.group(1) == '"'))
            self._cache[path] = out
            joined = text.replace("\\\r\n", "").replace("\\\n", "")
            self._opaque[path] = len(_ANY_INCLUDE_RE.findall(joined)) != len(out)
        return self._cache[path]

    def resolve(self, name: str, quoted: bool, includer: Path, found_dirs: list[Path] = ()) -> Path | None:
        if os.path.isabs(name):
            p = Path(name)
            return p if p.is_file() else None
        candidates: list[Path] = []
        if quoted:
            candidates.append(includer.parent)
        candidates.extend(self.include_dirs)
        candidates.extend(SHIM_DIRS)
        candidates.extend(found_dirs)  # a guess: last, as the parser's -idirafter
        for d in candidates:
            p = d / name
            if p.is_file():
                return p
        return None

    def by_name(self, name: str) -> tuple[Path, Path] | None:
        """The one repository file whose path ends with ``name`` (``ggml.h`` ->
        ``ggml/include/ggml.h``), and the include directory that makes ``name`` reach it; None when
        no file or several do. A repository's build passes such directories (-I); a scan without
        them would otherwise drop every header of the repository that is not beside its includer."""
        parts = Path(name).parts
        if not parts or ".." in parts or "." in parts:
            return None
        if self._by_basename is None:
            self._by_basename = {}
            count = 0
            for dirpath, dirnames, filenames in os.walk(self.workspace):
                dirnames[:] = [d for d in dirnames if d not in _UNSEARCHED_DIRS and not d.startswith(".")]
                for f in filenames:
                    self._by_basename.setdefault(f, []).append(Path(dirpath) / f)
                count += len(filenames)
                if count > MAX_INDEXED_FILES:
                    self._by_basename = {}
                    break
        found = [p for p in self._by_basename.get(parts[-1], [])
                 if p.parts[-len(parts):] == parts and self.inside(p) and p.resolve().is_file()]
        if len(found) != 1:
            return None
        path = found[0]
        directory = Path(*path.parts[:-len(parts)])
        return path, directory

    def graph(self, root_file: Path) -> IncludeGraph:
        g = IncludeGraph(root_file.resolve())
        todo = [g.root_file]
        seen: set[Path] = set()
        while todo:
            cur = todo.pop()
            if cur in seen:
                continue
            seen.add(cur)
            targets: list[Path] = []
            directives = self.directives(cur)
            if self._opaque.get(cur):
                g.opaque.append(str(cur))
            for line, name, quoted in directives:
                target = self.resolve(name, quoted, cur, g.found_dirs)
                # Only a quoted include is the repository's own header; an angle-bracket one names
                # a library (the repository may wrap it in a file of the same name: <cuda.h>).
                if target is None and quoted and (hit := self.by_name(name)) is not None:
                    target, directory = hit
                    g.notes.append(IncludeNote(str(cur), line, name, "by-name", str(target)))
                    if directory not in g.found_dirs:
                        g.found_dirs.append(directory)
                if target is None:
                    g.notes.append(IncludeNote(str(cur), line, name, "missing"))
                    # An empty stub lets the rest of the file parse; uses of its names are reported.
                    g.overrides[f"{STUB_DIR}/{name.lstrip('/')}"] = ""
                    continue
                if not self.inside(target):
                    g.notes.append(IncludeNote(str(cur), line, name, "outside-workspace"))
                    g.overrides[str(target)] = ""
                    if not os.path.isabs(name):
                        g.overrides[str(Path(os.path.normpath(cur.parent / name)))] = ""
                    continue
                target = target.resolve()
                targets.append(target)
                if not _is_under(target, SHIM_ROOT):
                    todo.append(target)
            g.edges[cur] = targets
        return g


def _is_under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False
