"""How a sharded scan's wall time falls with the number of shards, from the results of one run.

    python bench/shards.py RESULTS.json [MORE.json ...] [--shards 1 4 16]

The results files are those of `kernelvet scan --results` (one whole scan, or every shard of one).
For each N it splits the run's instances as `kernelvet scan --shard I/N` would, once by instance
count and once by the run's own costs (`--balance`), and prints the slowest shard's time (the
matrix's wall time: the sum of its instances' seconds on one core, parsing not counted) against the
ideal (all seconds over N). Costs are the instances' work units, which is what --balance reads.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.results import load_costs  # noqa: E402
from bot.scan import shard_of  # noqa: E402


class _Text(str):
    """An instance as the results file spells it (repr of the manifest's instance)."""

    def __repr__(self):
        return str(self)


@dataclass
class Instance:  # what shard_of and cost_key read of a planned instance, and its seconds
    file: str
    op_name: str
    instance: _Text
    seconds: float


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--shards", nargs="+", type=int, default=[1, 4, 16])
    args = ap.parse_args()
    rows = []
    for path in args.results:
        for item in json.loads(Path(path).read_text())["instances"]:
            if "file" not in item:
                print(f"{path}: results without files (written before kernelvet recorded them): run the scan again",
                      file=sys.stderr)
                return 2
            rows.append(Instance(item["file"], item["op"], _Text(item["instance"]),
                                 float(item["result"]["seconds"])))
    costs = load_costs([Path(p) for p in args.results])
    total = sum(r.seconds for r in rows)
    print(f"{len(rows)} instances in {len({r.file for r in rows})} files, {total:.0f} s in sum")
    print(f"{'shards':>6} {'ideal s':>9} {'by count s':>11} {'by cost s':>10}")
    for n in args.shards:
        walls = []
        for costed in (None, costs):
            parts = [shard_of(rows, i, n, costed) for i in range(1, n + 1)]
            walls.append(max(sum(p.seconds for p in part) for part in parts))
        print(f"{n:6} {total / n:9.0f} {walls[0]:11.0f} {walls[1]:10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
