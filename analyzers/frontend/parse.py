"""Parsing a .cu/.cuh/.cpp file with libclang in CUDA device mode against kernelvet's shims.

No CUDA toolkit, no torch and no system C++ library is read: the shims (shims/, shims/std/) stand
in for them, which makes a parse identical on every machine. Headers the workspace provides are
searched before the shims, so a repository's own headers win.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from .includes import OUTSIDE_DIR, SHIM_DIRS, STUB_DIR, IncludeGraph, IncludeResolver

OVERLAY_PREFIX = "kernelvet-vfs-"
_SWEPT = False


def sweep_dead_overlays(directory: Path | None = None) -> int:
    """Removes the overlay files (sandbox_overlay) of processes that no longer run; returns how
    many. A live process's file is never touched: its parse may be reading it."""
    removed = 0
    for path in Path(directory or tempfile.gettempdir()).glob(f"{OVERLAY_PREFIX}*-*.yaml"):
        pid = path.name[len(OVERLAY_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or _running(int(pid)):
            continue
        try:
            path.unlink()
            removed += 1
        except OSError:
            pass  # another process swept it first
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


@contextlib.contextmanager
def sandbox_overlay(workspace: Path):
    """A clang virtual file system overlay that shows only the workspace and the shims, with no
    fallthrough to the real file system: whatever the preprocessor is asked for (a computed
    ``#include H``, ``%:include``, ``#import``, ``#include_next``, ``__has_include("/abs")``), a path
    outside them does not exist for clang. The textual resolver (includes.py) only decides which
    empty stand-ins to offer; this is what confines the parser.

    The file lives for one parse (clang reads it when the parse starts) and is removed right after,
    in the process that made it: a worker process ends through os._exit, so an exit hook would
    leave one file per worker and workspace behind. A process that libclang kills mid-parse cannot
    remove it: its name carries the process id, and the first parse of every process removes the
    files of processes that no longer run (sweep_dead_overlays)."""
    global _SWEPT
    if not _SWEPT:
        _SWEPT = True
        sweep_dead_overlays()
    ws = str(Path(workspace).resolve())
    roots = [{"type": "directory-remap", "name": d, "external-contents": d}
             for d in dict.fromkeys([ws, *(str(s.resolve()) for s in SHIM_DIRS)])]
    overlay = {"version": 0, "case-sensitive": "true", "fallthrough": False, "roots": roots}
    fd, path = tempfile.mkstemp(prefix=f"{OVERLAY_PREFIX}{os.getpid()}-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(overlay, f)
        yield path
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def outside_inclusions(tu: ci.TranslationUnit, workspace: Path, stand_ins=()) -> list[str]:
    """Files of the translation unit's real inclusion list whose real path (symlinks followed) is
    outside the workspace and the shims: a parse that read one is refused whole. ``stand_ins``:
    paths given to clang as empty unsaved files (their content overrides the disk's)."""
    ws = Path(workspace).resolve()
    allowed = [ws, *(s.resolve() for s in SHIM_DIRS)]
    out = []
    for inc in tu.get_includes():
        name = inc.include.name
        if name.startswith((STUB_DIR, OUTSIDE_DIR)) or name in stand_ins:
            continue  # kernelvet's empty stand-ins (unsaved files), never read from disk
        real = Path(os.path.realpath(name))
        if not any(real == a or a in real.parents for a in allowed):
            out.append(name)
    return out

_INDEX: ci.Index | None = None


def index() -> ci.Index:
    global _INDEX
    if _INDEX is None:
        _INDEX = ci.Index.create()
    return _INDEX


@dataclass
class ParseConfig:
    workspace: Path
    include_dirs: list[Path] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    arch: str = "sm_80"
    std: str = "c++17"
    extra_args: list[str] = field(default_factory=list)

    def search_dirs(self) -> list[Path]:
        ws = self.workspace.resolve()
        dirs = [ws / d if not Path(d).is_absolute() else Path(d) for d in self.include_dirs]
        # Common layouts of inference repositories: includes relative to the root or to csrc/.
        for d in (ws, ws / "csrc", ws / "include", ws / "src"):
            if d.is_dir() and d not in dirs:
                dirs.append(d)
        return dirs


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    col: int
    message: str


@dataclass
class ParsedFile:
    path: Path
    tu: ci.TranslationUnit
    graph: IncludeGraph
    errors: list[Diagnostic]

    def errors_in(self, file: str, start: int, end: int) -> list[Diagnostic]:
        return [e for e in self.errors if e.file == file and start <= e.line <= end]


class ParseError(Exception):
    pass


def shown_path(path, workspace: Path) -> str:
    """A path as the repository names it, for messages: relative to the workspace, and never an
    absolute path from outside it (only the file's name)."""
    p = Path(path)
    if not p.is_absolute():
        return str(p)
    try:
        return str(p.relative_to(Path(workspace).resolve()))
    except ValueError:
        return p.name


def clang_args(cfg: ParseConfig, overlay: str, found_dirs=()) -> list[str]:
    """``overlay``: the sandbox overlay's file (sandbox_overlay); ``found_dirs``: include
    directories inferred from headers found by their name, searched after all others."""
    args = [
        "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
        f"--cuda-gpu-arch={cfg.arch}", "--cuda-path=/__kernelvet_no_cuda__",
        f"-std={cfg.std}", "-nostdinc", "-nostdinc++", "-nobuiltininc",
        "-DNDEBUG", "-w", "-ferror-limit=0", "-fno-spell-checking",
        # nvcc accepts narrowing conversions in braced initialisers (a warning there).
        "-Wno-c++11-narrowing",
        "-include", "kernelvet_cuda.h",
    ]
    for name, value in cfg.defines.items():
        args.append(f"-D{name}={value}" if value != "" else f"-D{name}")
    for d in cfg.search_dirs():
        args += ["-I", str(d)]
    for d in found_dirs:
        args += ["-idirafter", str(d)]
    for d in SHIM_DIRS:
        args += ["-isystem", str(d)]
    args += ["-isystem", STUB_DIR]
    args += cfg.extra_args
    # The process's working directory may lie outside the overlay (a diff parses the base revision
    # in a temporary directory): clang must not need it, or it crashes.
    args += ["-ivfsoverlay", overlay, f"-working-directory={Path(cfg.workspace).resolve()}"]
    return args


# What clang says where a member template is called on a dependent object without the `template`
# keyword (`BlockAdjacentDifference<bool, kThreads>(s).SubtractLeft<N>(...)`): it read `<` as less-than.
_NO_TEMPLATE_KEYWORD = "reference to non-static member function must be called"
_MEMBER_TEMPLATE_CALL = re.compile(r"[A-Za-z_]\w*\s*<")
# The same for a static member template of a dependent class (`vec_cast<T, S>::cast<N>(...)`):
# clang reports it at the start of the qualified name.
_NO_TEMPLATE_KEYWORD_QUALIFIED = "reference to overloaded function could not be resolved"
_QUALIFIED_TEMPLATE_CALL = re.compile(r"[A-Za-z_][\w:]*\s*<[^;]*?>\s*::\s*(?=[A-Za-z_]\w*\s*<)")


def _template_keywords(tu, unsaved: dict, workspace: Path) -> dict[str, str]:
    """The repository files to parse again with `template` written before each member template call
    that lacks it: nvcc accepts `x.f<N>(...)` on a dependent object and `C<T>::f<N>(...)` on a
    dependent class (FlashInfer's sampling kernels and vector casts), clang does not. Only that line
    changes (its later columns move by nine)."""
    places: dict[str, set] = {}
    for d in tu.diagnostics:
        loc = d.location
        if d.severity >= ci.Diagnostic.Error and loc.file is not None and (
                d.spelling == _NO_TEMPLATE_KEYWORD or d.spelling.startswith(_NO_TEMPLATE_KEYWORD_QUALIFIED)):
            places.setdefault(loc.file.name, set()).add((loc.line, loc.column))
    out: dict[str, str] = {}
    for name, where in places.items():
        file = Path(name).resolve()
        if workspace not in file.parents:
            continue  # kernelvet's own shims and system headers are not rewritten
        try:
            text = unsaved[name] if name in unsaved else file.read_text(errors="replace")
        except OSError:
            continue
        lines = text.splitlines(keepends=True)
        changed = False
        for line, col in sorted(where, reverse=True):
            if not 1 <= line <= len(lines):
                continue
            src, i = lines[line - 1], col - 1
            before = src[:i].rstrip()
            qualified = _QUALIFIED_TEMPLATE_CALL.match(src[i:])
            if _MEMBER_TEMPLATE_CALL.match(src[i:]) and (before.endswith(".") or before.endswith("->")):
                lines[line - 1] = src[:i] + "template " + src[i:]
                changed = True
            elif qualified is not None:
                at = i + qualified.end()
                lines[line - 1] = src[:at] + "template " + src[at:]
                changed = True
        if changed:
            out[name] = "".join(lines)
    return out


def parse_file(path: Path, cfg: ParseConfig, resolver: IncludeResolver | None = None,
               text: str | None = None) -> ParsedFile:
    """``text``: the main file's content to parse instead of what is on disk (the same lines,
    with lines appended)."""
    path = path.resolve()
    resolver = resolver or IncludeResolver(cfg.workspace, cfg.search_dirs())
    graph = resolver.graph(path)
    unsaved = list(graph.overrides.items())
    if text is not None:
        unsaved = [(f, t) for f, t in unsaved if Path(f).resolve() != path] + [(str(path), text)]
    try:
        # No PARSE_INCOMPLETE: it skips the end-of-file template instantiation that gives kernels
        # their instantiated bodies.
        with sandbox_overlay(cfg.workspace) as overlay:
            tu = index().parse(str(path), args=clang_args(cfg, overlay, graph.found_dirs), unsaved_files=unsaved)
            fixed = _template_keywords(tu, dict(unsaved), Path(cfg.workspace).resolve())
            if fixed:
                unsaved = [(f, t) for f, t in unsaved if f not in fixed] + list(fixed.items())
                tu = index().parse(str(path), args=clang_args(cfg, overlay, graph.found_dirs), unsaved_files=unsaved)
    except ci.TranslationUnitLoadError as exc:
        raise ParseError(f"{shown_path(path, cfg.workspace)}: libclang could not parse the file ({exc}; a crash or "
                         "the memory limit inside libclang)") from exc
    outside = outside_inclusions(tu, cfg.workspace, {f for f, t in unsaved if t == ""})
    if outside:
        # A header reached through a symlink that leaves the workspace: nothing of the parse is used,
        # and the outside path itself is not echoed (only that there is one).
        raise ParseError(f"{shown_path(path, cfg.workspace)}: includes a file that resolves outside the repository "
                         f"({len(outside)} such file{'s' if len(outside) != 1 else ''}): not analysed")
    errors = []
    for d in tu.diagnostics:
        if d.severity < ci.Diagnostic.Error:
            continue
        loc = d.location
        errors.append(Diagnostic(loc.file.name if loc.file else str(path), loc.line, loc.column, d.spelling))
    return ParsedFile(path, tu, graph, errors)
