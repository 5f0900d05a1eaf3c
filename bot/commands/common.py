"""Options and steps the commands share: the manifest, the cache, the baseline, and writing reports."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ..exitcodes import EXIT_USAGE

DEFAULT_CACHE = ".kernelvet-cache"


class UsageError(Exception):
    """A problem with the command line or the repository; printed as it is, exit code 2."""


def add_repo_args(p) -> None:
    p.add_argument("--manifest", help="the manifest (default: kernelvet.yaml at the repository root)")
    p.add_argument("--cache-dir", help=f"where verified results are kept between runs (default: ROOT/{DEFAULT_CACHE}, "
                                       "or $KERNELVET_CACHE_DIR)")
    p.add_argument("--no-cache", action="store_true", help="verify everything again; read and write no cache")
    p.add_argument("--baseline", help="findings listed in this file are reported as baselined and fail nothing "
                                      "(default: ROOT/.kernelvet-baseline.json when it exists)")
    p.add_argument("--time-budget", type=float, help="budget per instance, in seconds of one idle core counted as work units (default 60): "
                        "past it the instance is inconclusive")


def add_output_args(p, formats=("text", "json", "sarif")) -> None:
    p.add_argument("--format", choices=formats, default="text")
    p.add_argument("--output", "-o", help="write the report to this file instead of standard output")
    p.add_argument("--sarif", metavar="FILE", help="also write SARIF 2.1.0 to FILE")
    p.add_argument("--json", metavar="FILE", dest="json_file", help="also write the JSON report to FILE")


def load_manifest(root: Path, manifest_arg: str | None):
    from ..manifest import find_manifest, load
    path = Path(manifest_arg) if manifest_arg else find_manifest(root)
    if path is None:
        raise UsageError(f"kernelvet: no manifest: {root} has no kernelvet.yaml (give one with --manifest)")
    return load(path)


def open_cache(args, root: Path):
    from ..cache import ResultCache
    if getattr(args, "no_cache", False):
        return None
    d = getattr(args, "cache_dir", None) or os.environ.get("KERNELVET_CACHE_DIR") or str(root / DEFAULT_CACHE)
    if leaves_workspace(Path(d), root) or leaves_workspace(Path(d)):
        print(f"kernelvet: note: the result cache {d} is a symlink that leads outside the repository: not used "
              "(nothing is read from it or written to it)", file=sys.stderr)
        return None
    if committed_files(Path(d)):
        # Entries that come with the checkout come from whoever wrote the commit: a pull request
        # could make its own bugs 'verified' (docs/cache.md, "Trust").
        print(f"kernelvet: note: the result cache {d} holds files committed to the repository: not used "
              "(a cache is restored by the workflow, never taken from the checkout)", file=sys.stderr)
        return None
    cache = ResultCache(Path(d))
    problem = cache.unwritable()
    if problem:
        # Read what is there; say once that nothing of this run will be kept.
        print(f"kernelvet: note: the result cache {d} cannot be written ({problem}): "
              "this run's results are not kept for the next one", file=sys.stderr)
    return cache


def baseline(args, root: Path) -> set[str] | None:
    from ..suppress import DEFAULT_BASELINE, BaselineError, load_baseline
    path = getattr(args, "baseline", None)
    if path is None:
        default = root / DEFAULT_BASELINE
        if not default.is_file():
            return None
        path = default
    try:
        return load_baseline(Path(path))
    except BaselineError as exc:
        raise UsageError(str(exc)) from None


def options(args, manifest):
    from ..scan import options_for
    return options_for(manifest, getattr(args, "time_budget", None))


def render(report, fmt: str, category: str) -> str:
    from ..reporters import jsonfmt, sarif, text
    if fmt == "json":
        return jsonfmt.render(report)
    if fmt == "sarif":
        return sarif.render(report, category)
    return text.render(report)


def write_outputs(report, args, category: str) -> None:
    rendered = render(report, args.format, category)
    if args.output:
        write_file(args.output, rendered)
    else:
        sys.stdout.write(rendered)
    if getattr(args, "sarif", None):
        write_file(args.sarif, render(report, "sarif", category))
    if getattr(args, "json_file", None):
        write_file(args.json_file, render(report, "json", category))


def say_unverified(report) -> None:
    """On stderr, whatever the report's format: what was asked for and not verified, and the
    includes dropped. A run with any of the first exits 5 (README, "Exit codes")."""
    for u in report.unverified:
        print(f"kernelvet: not verified: {u.text()}", file=sys.stderr)
    for n in report.include_notes:
        print(f"kernelvet: note: {n}", file=sys.stderr)


def leaves_workspace(path: Path, root: Path | None = None) -> bool:
    """Whether ``path`` names a place inside the workspace (the current directory, or ``root``) that
    symlinks lead outside it: a committed ``kernelvet.sarif`` or ``.kernelvet-cache`` symlink must
    not make kernelvet write elsewhere. A path outside the workspace as written is the caller's
    explicit choice and is allowed."""
    base = Path(os.path.abspath(root or Path.cwd()))
    written = Path(os.path.abspath(path))
    if not written.is_relative_to(base):
        return False
    return not Path(os.path.realpath(written)).is_relative_to(Path(os.path.realpath(base)))


def committed_files(directory: Path) -> bool:
    """Whether git tracks any file under ``directory`` (a directory of the work tree)."""
    import subprocess
    d = Path(os.path.abspath(directory))
    if not d.is_dir():
        return False
    r = subprocess.run(["git", "-C", str(d), "ls-files", "--", "."], capture_output=True, text=True)
    return r.returncode == 0 and bool(r.stdout.strip())


def write_file(path, text: str, root: Path | None = None) -> None:
    """Write an output file, never through a symlink that leaves the workspace."""
    if leaves_workspace(Path(path), root):
        raise UsageError(f"kernelvet: {path}: a symlink that leads outside the repository; not written")
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)  # --json out/report.json in a fresh checkout
        Path(path).write_text(text)
    except OSError as exc:
        raise UsageError(f"kernelvet: cannot write {path}: {exc.strerror or exc}") from None


def fail(message: str) -> int:
    print(message, file=sys.stderr)
    return EXIT_USAGE
