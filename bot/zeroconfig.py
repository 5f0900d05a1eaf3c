"""Planning ops that no manifest binds: every host function of the given files that reaches a
kernel launch (a torch op, a plain CUDA ``main``) becomes one zero-config instance."""
from __future__ import annotations

from pathlib import Path

from analyzers.api import Workspace
from analyzers.binding import op_display

from .isolation import run_isolated
from .manifest import Planned

PARSE_LIMIT_S = 300.0  # wall-clock seconds to parse one file and find its entry points

ZERO_CONFIG_LABEL = "zero-config"


def plan(root: Path, files: list[str], covered: set[tuple[str, str]], include_dirs=(), defines=None,
         arch: str = "sm_80", errors: list | None = None, workspace: Workspace | None = None) -> list[Planned]:
    """One planned zero-config verification per entry point of ``files`` that ``covered`` (file,
    launcher) pairs of the manifest do not already bind. A file that cannot be read is noted in
    ``errors`` and skipped; the rest go on. Given a ``workspace``, the files are parsed in it, in
    this process (a run without isolation, whose verification then reuses the parse)."""
    ws = workspace or Workspace(root, include_dirs, defines or {}, arch)
    out: list[Planned] = []
    for i, file in enumerate(files):
        try:
            # In a forked child: libclang crashing on one file (SIGSEGV, SIGILL, the memory cap)
            # is that file's problem, never the run's.
            names = ws.entry_points(file) if workspace is not None else \
                run_isolated(ws.entry_points, file, timeout=PARSE_LIMIT_S)
        except Exception as exc:  # one unreadable file never stops the others
            if errors is not None:
                errors.append(f"{file}: {exc}")
            continue
        for name in names:
            if (file, name) in covered or (file, name.rsplit("::", 1)[-1]) in covered:
                continue
            out.append(Planned(-1 - i, op_display(name), file, name, None, [ZERO_CONFIG_LABEL]))
    return out
