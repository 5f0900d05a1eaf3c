"""The diff-aware run shared by ``kernelvet diff``, ``kernelvet pr`` and the pre-commit hook:
changes -> impact -> instances (the cache answers what it can) -> report with suppressions."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analyzers.api import Workspace

from .coverage_notes import CUDA_SUFFIXES, why_unreached
from .diff import ChangeSet
from .impact import BaseTree, Impact, analyse
from .scan import ScanReport, scan
from .suppress import apply


@dataclass
class ChangeRun:
    report: ScanReport
    impact: Impact


def run_changes(root: Path, manifest, changes: ChangeSet, base_rev: str | None, cache, options,
                progress=None, baseline: set[str] | None = None) -> ChangeRun:
    root = Path(root).resolve()
    spec = manifest.spec
    ws = Workspace(root, spec.include_dirs, spec.defines, spec.arch)
    base = BaseTree(root, base_rev) if base_rev else None
    try:
        impact = analyse(root, manifest, changes, ws, base, cache)
    finally:
        if base is not None:
            base.close()
    report = scan(root, manifest, options=options, progress=progress, planned=impact.planned, cache=cache,
                  workspace=ws)
    apply(report, baseline)
    account_changes(report, ws, changes, impact)
    manifest_places(report, manifest, root)
    return ChangeRun(report, impact)


def manifest_places(report: ScanReport, manifest, root: Path) -> None:
    """For each finding, the manifest entries its instances come from (the op's entry, the entries
    and config files of its models): when a change to one of them caused the finding, the review
    comments on the changed line there."""
    try:
        rel = str(Path(manifest.path).resolve().relative_to(root))
    except ValueError:
        return
    by_name = {m.name: m for m in manifest.models}
    for mf in report.findings:
        places = []
        for oi in mf.op_indexes:
            if oi >= 0 and (span := manifest.doc.lines(("ops", oi))) is not None:
                places.append((rel, *span))
        for name in mf.models:
            model = by_name.get(name)
            if model is None:
                continue
            if (span := manifest.doc.lines(("models", model.index))) is not None:
                places.append((rel, *span))
            if model.source:
                try:
                    places.append((str(Path(model.source).resolve().relative_to(root)), 1, 1 << 30))
                except ValueError:
                    pass
        mf.causes = list(dict.fromkeys(places))


def account_changes(report: ScanReport, ws: Workspace, changes: ChangeSet, impact: Impact) -> None:
    """A changed CUDA file that no op of the manifest reaches, and a compiler error in a changed
    file, are not verified: the run says so and exits 5, it does not pass."""
    report.touched = set(changes.paths())
    for f in sorted(report.touched):
        if f.endswith(CUDA_SUFFIXES) and f not in impact.reached and (ws.root / f).is_file():
            why, line, kind = why_unreached(ws, f)
            if kind == "bare-kernels":
                why = f"no op of the manifest reaches it ({why})"
            elif kind == "no-op":
                why = "no op of the manifest reaches it"
            report.note_unverified(f, why, line)
    report.note_compile_errors()
