"""Raw results of a (sharded) scan, for ``kernelvet merge``: every instance with its full result,
matched back to the manifest's instances when merging, so shards of another manifest, an instance
verified twice or a missing shard are reported, not silently merged."""
from __future__ import annotations

import json
from pathlib import Path

from analyzers import __version__

from .jsonfile import read_json
from .manifest import LoadedManifest, expand
from .scan import InstanceReport, ScanReport, instance_key, merge
from .serialize import result_in, result_out

SCHEMA = "kernelvet.results/1"


class ResultsError(Exception):
    pass


def dump(report: ScanReport, shard: tuple[int, int] | None = None) -> str:
    return json.dumps({
        "schema": SCHEMA, "tool": {"name": "kernelvet", "version": __version__},
        "shard": list(shard) if shard else None, "seconds": report.seconds,
        "instances": [{"op_index": ir.planned.op_index, "op": ir.planned.op_name, "file": ir.planned.file,
                       "instance": repr(ir.planned.instance), "cached": ir.cached, "result": result_out(ir.result)}
                      for ir in report.instances],
    }) + "\n"


def _read(path: Path) -> dict:
    data = read_json(path, ResultsError)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ResultsError(f"{path}: not a kernelvet results file (write one with kernelvet scan --results FILE)")
    return data


def load_costs(paths: list[Path]) -> dict:
    """What each instance cost in a previous run, from its results files (every shard's, or a whole
    scan's), by scan.cost_key: the work units its verification spent (the same on any machine; a
    result served from the cache keeps those of the run that made it), or for results that predate
    them, its seconds at the budget's rate, unless it came from the cache (then nothing is known)."""
    from analyzers.engine.work import UNITS_PER_SECOND
    costs: dict = {}
    for path in paths:
        for i, item in enumerate(_read(path).get("instances", [])):
            try:
                r = item["result"]
                work = int(r.get("work") or 0)
                if "file" not in item or (not work and item.get("cached")):
                    continue
                cost = work or float(r.get("seconds", 0.0)) * UNITS_PER_SECOND
                costs[instance_key(str(item["file"]), str(item["op"]), str(item["instance"]))] = cost
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ResultsError(f"{path}: instances[{i}]: malformed result ({exc})") from None
    return costs


def load(paths: list[Path], root: Path, manifest: LoadedManifest, allow_partial: bool = False) -> ScanReport:
    planned = {(p.op_index, repr(p.instance)): p for p in expand(manifest, None, root)}
    seen: dict[tuple, str] = {}
    report = ScanReport(Path(root))
    for path in paths:
        data = _read(path)
        report.seconds = max(report.seconds, float(data.get("seconds", 0.0)))
        for i, item in enumerate(data.get("instances", [])):
            key = (item.get("op_index"), item.get("instance"))
            p = planned.get(key)
            if p is None:
                raise ResultsError(f"{path}: instances[{i}] ({item.get('op')}) is not an instance of {manifest.path}: "
                                   "results of another manifest or another version of it")
            if key in seen:
                raise ResultsError(f"{path}: instances[{i}] ({p.label}) was verified in {seen[key]} too: "
                                   "the shards overlap")
            seen[key] = str(path)
            try:
                result = result_in(item["result"])
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise ResultsError(f"{path}: instances[{i}]: malformed result ({exc})") from None
            report.instances.append(InstanceReport(p, result, bool(item.get("cached"))))
    missing = [p for k, p in planned.items() if k not in seen]
    if missing and not allow_partial:
        raise ResultsError(f"the results cover {len(seen)} of {len(planned)} instances; missing, e.g. "
                           f"{missing[0].label} (a shard that did not finish?)")
    order = {k: i for i, k in enumerate(planned)}
    report.instances.sort(key=lambda ir: order[(ir.planned.op_index, repr(ir.planned.instance))])
    report.findings = merge(report.instances)
    return report
