"""Cold and warm scans of the example repository with the result cache, and a warm scan after a
comment-only edit of every kernel file (the cache relocates the moved lines).

    python bench/bench_cache.py [--repeat R]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "minivllm"


def kernelvet(*args: str) -> float:
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=ROOT)
    if r.returncode not in (0, 1):
        raise SystemExit(r.stderr)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cold, warm, moved = [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            repo, cache = Path(tmp) / "ex", Path(tmp) / "cache"
            shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".kernelvet-cache"))
            cold.append(kernelvet("scan", str(repo), "--cache-dir", str(cache)))
            warm.append(kernelvet("scan", str(repo), "--cache-dir", str(cache)))
            for f in (repo / "csrc").glob("*.cu"):
                f.write_text("// a comment that moves every line\n" + f.read_text())
            moved.append(kernelvet("scan", str(repo), "--cache-dir", str(cache)))
    med = statistics.median
    print(f"example scan, wall seconds of the whole command (median of {args.repeat}):")
    print(f"  cold cache:                         {med(cold):6.2f}  ({', '.join(f'{x:.2f}' for x in cold)})")
    print(f"  warm cache, no change:              {med(warm):6.2f}  ({', '.join(f'{x:.2f}' for x in warm)})"
          f"  = {100 * med(warm) / med(cold):.0f}% of cold")
    print(f"  warm cache, comment-only edits:     {med(moved):6.2f}  ({', '.join(f'{x:.2f}' for x in moved)})"
          f"  = {100 * med(moved) / med(cold):.0f}% of cold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
