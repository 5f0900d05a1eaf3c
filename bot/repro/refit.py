"""A finding's witness again, under a smaller GPU memory bound than the scan's: the scan minimised
each witness's sizes within its manifest's ``witness_memory_gib`` (72 GiB by default, an 80 GB
card); a reproducer meant for a smaller card (``kernelvet repro --memory-gib 16``) verifies the
finding's op once more, for the finding's models and dtype only, with the engine minimising under
that bound (engine/context._fit_memory), and takes the same finding's new witness and call."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from analyzers.findings import gib


def refit(finding: dict, root: Path, manifest, memory_gib: float) -> tuple[dict | None, str]:
    """The finding as a scan under ``memory_gib`` reports it (None when that scan does not report it,
    or its witness still needs more), and a sentence saying what happened."""
    from ..reporters.jsonfmt import to_dict
    from ..scan import options_for, scan
    from ..zeroconfig import plan as zero_config_plan
    from ..manifest import ManifestError, expand

    call = finding.get("call") or {}
    file, launcher = call.get("file"), call.get("launcher")
    if not file or not launcher:
        return None, "the finding has no recorded call to verify again"
    models, dtype = set(finding.get("models") or []), call.get("dtype")
    try:
        if finding.get("zero_config") or manifest is None:
            spec = manifest.spec if manifest is not None else None
            planned = zero_config_plan(root, [file], set(),
                                       *((spec.include_dirs, spec.defines, spec.arch) if spec else ()))
        else:
            planned = expand(manifest, {file}, root)
    except (ManifestError, OSError) as exc:
        return None, f"cannot verify {file} again: {exc}"
    planned = [p for p in planned if p.launcher == launcher and (
        p.instance is None or (p.instance.dtype == dtype and (not models or models & set(p.models))))]
    if not planned:
        return None, f"no instance of {launcher} for {', '.join(sorted(models)) or 'zero-config'} [{dtype}] to verify again"
    bound = int(memory_gib * (1 << 30))
    options = dataclasses.replace(options_for(manifest), witness_memory_bytes=bound)
    report = scan(root, manifest, planned=planned, options=options, jobs=1)
    for again in to_dict(report)["findings"]:
        if _same(finding, again):
            need = _device_bytes(again)
            if need > bound:
                return None, (f"verified again under {gib(bound)}: no failing input of this finding fits "
                              f"(the smallest found needs {gib(need)})")
            return again, f"witness minimised again under {gib(bound)} (the scan's needed {gib(_device_bytes(finding))})"
    return None, f"a scan of {launcher} under {gib(bound)} no longer reports this finding"


def _same(a: dict, b: dict) -> bool:
    """The same finding: its check and failing expression, at the same line of the same file (the
    fingerprint would do, but it hashes the file's path, which reports may name from different
    roots)."""
    la, lb = a["location"], b["location"]
    fa, fb = la["file"], lb["file"]
    return (a["check"] == b["check"] and la["line"] == lb["line"] and (fa.endswith("/" + fb) or fb.endswith("/" + fa)
            or fa == fb) and _text(a) == _text(b))


def _text(finding: dict):
    return (finding.get("expression") or {}).get("text")


def _device_bytes(finding: dict) -> int:
    from .plan import plan
    return plan(finding, None, memory_gib=1 << 20).device_bytes
