"""Parsing a .cu/.cuh/.cpp file with libclang in CUDA device mode against kernelvet's shims.

No CUDA toolkit, no torch and no system C++ library is read: the shims (shims/, shims/std/) stand
in for them, which makes a parse identical on every machine. Headers the workspace provides are
searched before the shims, so a repository's own headers win.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from .includes import SHIM_DIRS, STUB_DIR, IncludeGraph, IncludeResolver

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


def clang_args(cfg: ParseConfig) -> list[str]:
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
    for d in SHIM_DIRS:
        args += ["-isystem", str(d)]
    args += ["-isystem", STUB_DIR]
    args += cfg.extra_args
    return args


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
        tu = index().parse(str(path), args=clang_args(cfg), unsaved_files=unsaved)
    except ci.TranslationUnitLoadError as exc:
        raise ParseError(f"{path}: libclang could not parse the file ({exc})") from exc
    errors = []
    for d in tu.diagnostics:
        if d.severity < ci.Diagnostic.Error:
            continue
        loc = d.location
        errors.append(Diagnostic(loc.file.name if loc.file else str(path), loc.line, loc.column, d.spelling))
    return ParsedFile(path, tu, graph, errors)
