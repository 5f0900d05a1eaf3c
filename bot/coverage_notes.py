"""What a run was asked to verify and did not: the files no instance reached, each with the reason,
and the includes the sandbox dropped. Nothing that was not verified may pass as success
(README, "Exit codes")."""
from __future__ import annotations

from pathlib import Path

from analyzers.api import Workspace
from analyzers.frontend import discover
from analyzers.frontend.includes import FOUND_BY_NAME

from .isolation import IsolatedFailure, run_isolated

# Files a user means as CUDA sources: named or changed, they must reach a verdict.
CUDA_SUFFIXES = (".cu", ".cuh")
# Sources and headers kernelvet parses at all.
PARSED_SUFFIXES = (".cu", ".cuh", ".h", ".hh", ".hpp", ".hxx", ".cc", ".cpp", ".cxx", ".c", ".inl")


def reached_files(ws: Workspace, op_files: set[str]) -> set[str]:
    """The repository files of the translation units of ``op_files`` (what their ops can reach)."""
    out: set[str] = set()
    root = ws.root
    for f in op_files:
        out.add(f)
        try:
            for p in ws.included_files(f):
                try:
                    out.add(str(Path(p).resolve().relative_to(root)))
                except ValueError:
                    pass
        except Exception:  # noqa: BLE001 - a file that does not parse reaches only itself
            pass
    return out


def why_unreached(ws: Workspace, file: str) -> tuple[str, int, str | None]:
    """Why no instance verified ``file``, the line it concerns (0: the whole file), and, for a
    source nothing launches, which kind: 'bare-kernels' or 'no-op' (a diff words those itself)."""
    path = ws.root / file
    if ws.outside(file):
        return "resolves outside the repository (a symlink that leaves it): not read", 0, None
    if not path.is_file():
        return "no such file", 0, None
    if path.suffix not in PARSED_SUFFIXES:
        return "not a CUDA or C++ source: nothing in it was verified", 0, None
    try:
        head = path.read_bytes()[:65536]
    except OSError as exc:
        return f"cannot be read ({exc.strerror})", 0, None
    if b"\0" in head:
        return "a binary file, not CUDA source: nothing in it was verified", 0, None
    try:
        # Parsed in a forked child: a file that crashes libclang is named, the run goes on.
        kernels, error = run_isolated(_kernels_and_first_error, ws, file, timeout=300.0)
    except IsolatedFailure as exc:
        return f"cannot be parsed: libclang did not finish it ({exc})", 0, None
    except Exception as exc:  # noqa: BLE001 - one bad file never stops the run
        return f"cannot be parsed ({exc})", 0, None
    if kernels:
        names = ", ".join(f"{name} (line {line})" for name, line in kernels[:5])
        more = f" and {len(kernels) - 5} more" if len(kernels) > 5 else ""
        first = kernels[0][0]
        return (f"kernels {names}{more} have no launcher in the scanned files, so nothing verified them: "
                "scan the file that launches them too, or bind each by name in a version 1 manifest (a kernel "
                f"launched from Python or another library): `- kernel: {first}`, `launch: {{grid: ..., block: ...}}`, "
                "and its pointers as `{elements: n, dtype: float32}` (docs/manifest.md, \"Bare kernels\")",
                kernels[0][1], "bare-kernels")
    if error is not None:
        return f"does not compile: {error[0]}", error[1], None
    return "no op launches a kernel from it, and no verified op includes it: nothing in it was verified", 0, "no-op"


def _kernels_and_first_error(ws: Workspace, file: str):
    """(name, line) of the file's kernels, and its first compiler error (message, line) or None."""
    unit = ws.unit(file)
    path = (ws.root / file).resolve()
    errors = [e for e in unit.parsed.errors if Path(e.file).resolve() == path]
    kernels = [(c.spelling, c.location.line)
               for c in discover.function_definitions(unit.parsed.tu, unit.parsed.path, templates=True)
               if discover.is_kernel(c)]
    return kernels, ((errors[0].message, errors[0].line) if errors else None)


def account(report, ws: Workspace, asked: list[str] | set[str]) -> None:
    """Note every file of ``asked`` that no instance of ``report`` reached, and the includes dropped
    from the translation units it verified (once each)."""
    op_files = {ir.planned.file for ir in report.instances}
    reached = reached_files(ws, op_files)
    for f in sorted(set(asked)):
        if f not in reached:
            why, line, kind = why_unreached(ws, f)
            if kind == "no-op" and (reached_files(ws, {f}) - {f}) & op_files:
                # A source that only includes the file an op lives in (a `main` in a header it
                # includes): its translation unit is that op's, verified.
                continue
            report.note_unverified(f, why, line)
    seen = set()
    for f in sorted(op_files):
        try:
            notes = ws.include_graph(f).notes
        except OSError:
            continue
        for n in notes:
            key = (n.includer, n.line, n.name)
            if key in seen:
                continue
            seen.add(key)
            try:
                includer = str(Path(n.includer).resolve().relative_to(ws.root))
            except ValueError:
                includer = n.includer
            if n.why == "by-name":
                found = str(Path(n.found).resolve().relative_to(ws.root))
                report.include_notes.append(
                    f"{includer}:{n.line}: #include {n.name} {FOUND_BY_NAME} {found}: no include directory given holds "
                    "it (the manifest's include_dirs say where the build looks)")
                continue
            why = ("not found in the repository or the shims: an empty file stands for it" if n.why == "missing"
                   else "outside the repository: not read, an empty file stands for it")
            report.include_notes.append(f"{includer}:{n.line}: #include {n.name} dropped: {why}")
