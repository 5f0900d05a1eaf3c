"""The files and launchers a manifest names must exist: a typo is a configuration error at the
manifest's line (exit 2), with the nearest names, not an inconclusive instance per model."""
from __future__ import annotations

import difflib
import re
from pathlib import Path

from analyzers.binding import KERNEL_OP, kernel_name
from analyzers.frontend.includes import IncludeResolver

_SOURCE_GLOBS = ("*.cu", "*.cuh", "*.cc", "*.cpp", "*.cxx", "*.h", "*.hpp")
_CALLABLE = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>\s*)?\(")


def repository_sources(root: Path) -> list[str]:
    out = []
    for g in _SOURCE_GLOBS:
        for p in root.rglob(g):
            rel = p.relative_to(root)
            if not any(part.startswith(".") for part in rel.parts):
                out.append(str(rel))
    return sorted(out)


def _nearest(word: str, options, n: int = 2) -> str:
    options = sorted(set(options))
    close = difflib.get_close_matches(word, options, n=n, cutoff=0.75)
    if not close:  # a short name inside a longer one: 'op' for 'other_op'
        close = [o for o in options if word in o.split("_") and o != word][:n]
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


def check_targets(lm, planned, root: Path) -> list[str]:
    """One error per op whose file is missing or whose launcher no file of its translation unit
    names. The launcher check is textual (the op's file and what it includes): a name that appears
    nowhere there cannot be defined there."""
    root = Path(root).resolve()
    errors: list[str] = []
    seen: set[tuple[str, str]] = set()
    files: list[str] | None = None
    resolver = IncludeResolver(root, [root / d for d in getattr(lm.spec, "include_dirs", [])])
    texts: dict[str, str] = {}
    for p in planned:
        key = (p.file, p.launcher)
        if key in seen or p.op_index < 0:
            continue
        seen.add(key)
        where_file = lm.pos("ops", p.op_index, "file")
        path = root / p.file
        if Path(p.file).is_absolute() or not path.resolve().is_relative_to(root):
            shown = "an absolute path" if Path(p.file).is_absolute() else f"'{p.file}'"
            errors.append(f"{where_file}: ops[{p.op_index}] ({p.op_name}): file {shown} is outside the repository "
                          "(files are relative to it, and only files inside it are read)")
            continue
        if not path.is_file():
            if files is None:
                files = repository_sources(root)
            errors.append(f"{where_file}: ops[{p.op_index}] ({p.op_name}): no file '{p.file}' in the repository"
                          + _nearest(p.file, files))
            continue
        if p.file not in texts:
            chunks = []
            try:
                for f in resolver.graph(path).files():
                    if not Path(f).resolve().is_relative_to(root):
                        continue  # the shims declare thousands of names: they prove nothing here
                    try:
                        chunks.append(Path(f).read_text(errors="replace"))
                    except OSError:
                        pass
            except OSError:
                pass
            texts[p.file] = "\n".join(chunks)
        name = p.launcher.rsplit("::", 1)[-1]
        if p.launcher.startswith(KERNEL_OP):  # a bare kernel: its own name, template arguments aside
            name = kernel_name(p.launcher[len(KERNEL_OP):])
        if not re.search(rf"\b{re.escape(name)}\b", texts[p.file]):
            op = lm.spec.ops[p.op_index]
            key_name = "kernel" if getattr(op, "kernel", None) else "launcher" if getattr(op, "launcher", None) \
                else "op" if getattr(op, "op", None) else "name"
            candidates = _CALLABLE.findall(texts[p.file])
            errors.append(f"{lm.pos('ops', p.op_index, key_name)}: ops[{p.op_index}] ({p.op_name}): no function named "
                          f"'{name}' in {p.file} or the headers it includes" + _nearest(name, candidates))
    return errors
