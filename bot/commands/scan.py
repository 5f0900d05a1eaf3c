"""kernelvet scan: verify every op of the manifest (or the ops of the given files)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..exitcodes import EXIT_USAGE
from .common import UsageError, add_output_args, add_repo_args, fail


def register(sub) -> None:
    p = sub.add_parser("scan", help="verify every op of the manifest (or those in the given files)",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", help="a repository directory (default: .), or files of it to restrict the scan to")
    p.add_argument("--root", help="the repository root: the directory scanned when no PATHS are given, and the root "
                                  "PATHS are files of (default: the current directory)")
    add_repo_args(p)
    add_output_args(p)
    p.add_argument("--progress", action="store_true",
                   help="progress lines on standard error even without a terminal (a bar on one; lines in CI)")
    p.add_argument("--shard", metavar="I/N", help="verify only shard I of N (whole files per shard); "
                                                  "combine the shards' --results files with kernelvet merge")
    p.add_argument("--balance", metavar="FILE", nargs="+",
                   help="with --shard: split by what each instance cost in these results files of a previous run "
                        "(its shards' or a whole scan's --results) instead of by instance count")
    p.add_argument("--results", metavar="FILE", help="write the raw results (for kernelvet merge) to FILE")
    p.add_argument("--write-baseline", metavar="FILE", help="write the current findings to FILE as a baseline")
    p.add_argument("--zero-config", action="store_true",
                   help="also verify, without a binding, the ops of the scanned files that the manifest does not "
                        "bind (the default when there is no manifest)")
    p.set_defaults(func=run)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"kernelvet: --shard {text}: expected I/N, e.g. 1/4") from None
    if not (n >= 1 and 1 <= i <= n):
        raise UsageError(f"kernelvet: --shard {text}: I must be between 1 and N")
    return i, n


def _shard_costs(paths: list[str]) -> dict | None:
    """The previous run's costs; a results file that is missing (the first nightly run, an expired
    artifact) leaves the split by instance count, said on standard error."""
    from ..results import ResultsError, load_costs
    present = [Path(p) for p in paths if Path(p).is_file()]
    if len(present) < len(paths):
        print(f"kernelvet: --balance: {len(paths) - len(present)} of {len(paths)} results files not found",
              file=sys.stderr)
    if not present:
        print("kernelvet: --balance: no previous results: shards split by instance count", file=sys.stderr)
        return None
    try:
        return load_costs(present)
    except ResultsError as exc:
        raise UsageError(f"kernelvet: --balance: {exc}") from None


def run(args) -> int:
    from ..manifest import ManifestError, find_manifest, load
    from ..progress import for_stream
    from ..results import dump
    from ..scan import scan
    from ..suppress import apply, baseline_document
    from . import common

    # `--root DIR` alone scans DIR: a root named and then ignored for "." would scan another tree.
    paths = [Path(p) for p in args.paths] or [Path(args.root or ".")]
    if args.root and not Path(args.root).is_dir():
        print(f"kernelvet: --root {args.root}: no such directory", file=sys.stderr)
        return EXIT_USAGE
    if len(paths) == 1 and paths[0].is_dir():
        root, only = paths[0], None
    else:
        root = Path(args.root) if args.root else Path(".")
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            print(f"kernelvet: no such file: {', '.join(missing)}", file=sys.stderr)
            return EXIT_USAGE
        only = {_relative(p, root) for p in paths}
    root = root.resolve()
    manifest_path = Path(args.manifest) if args.manifest else find_manifest(root)
    if args.manifest and not manifest_path.is_file():
        print(f"kernelvet: no such manifest: {args.manifest}", file=sys.stderr)
        return EXIT_USAGE
    zero_config = args.zero_config or manifest_path is None
    if manifest_path is None:
        print(f"kernelvet: {root} has no kernelvet.yaml: verifying every op in zero-config mode (symbolic shapes "
              "within default ranges; see docs/manifest.md to bind ops to models)", file=sys.stderr)
    try:
        shard = parse_shard(args.shard)
        costs = _shard_costs(args.balance) if args.balance and shard is not None else None
        manifest = load(manifest_path) if manifest_path is not None else None
        files = None
        if zero_config:
            files = sorted(only) if only is not None else _cuda_files(root)
            if manifest is None and not files:
                raise UsageError(f"kernelvet: nothing to verify: {root} has no kernelvet.yaml and no .cu/.cuh files")
        cache = common.open_cache(args, root)
        baseline = common.baseline(args, root)
        report = scan(root, manifest, only, for_stream(sys.stderr, args.progress), common.options(args, manifest),
                      zero_config_files=files, cache=cache, shard=shard, shard_costs=costs)
    except UsageError as exc:
        return fail(str(exc))
    except ManifestError as exc:
        return fail("\n".join(exc.errors))
    _account(report, root, manifest, sorted(only) if only is not None else files or [])
    if not args.root:
        # Paths in every output are relative to the repository root, wherever the scanned directory is.
        from ..diff import toplevel
        report.rebase(toplevel(root) or root)
    apply(report, baseline)
    if cache is not None and shard is None and only is None:
        cache.prune()
    common.write_outputs(report, args, "scan" if shard is None else f"scan-shard-{shard[0]}-of-{shard[1]}")
    common.say_unverified(report)
    if args.results:
        common.write_file(args.results, dump(report, shard))
    _actions_summary(report, args.sarif)
    if args.write_baseline:
        common.write_file(args.write_baseline, baseline_document(report))
        from ..reporters import plural
        n = sum(1 for m in report.findings if m.suppressed is None)
        print(f"kernelvet: wrote {plural(n, 'finding')} to the baseline {args.write_baseline}: the report above "
              "lists them as findings; later runs that read this baseline report them as baselined and fail only "
              "on new ones (exit 0 here: writing the baseline succeeded)", file=sys.stderr)
        return 0
    return report.exit_code


def _account(report, root: Path, manifest, asked: list[str]) -> None:
    """Files named or scanned that no instance verified, compiler errors in them, dropped includes;
    a scan with no instance at all is unverified too (exit 5), never a clean pass."""
    from analyzers.api import Workspace
    from ..coverage_notes import account
    from ..manifest.schema import Manifest
    spec = manifest.spec if manifest is not None else Manifest(version=0, models=[], ops=[])
    report.touched = set(asked)
    account(report, Workspace(root, spec.include_dirs, spec.defines, spec.arch), asked)
    report.note_compile_errors()
    if not report.instances and not report.unverified:
        report.note_unverified(".", "nothing to verify: the scan has no instance (no op of the manifest in these files)")


def _actions_summary(report, sarif_path: str | None) -> None:
    """In GitHub Actions: the job summary and the step outputs."""
    import os
    if not os.environ.get("GITHUB_ACTIONS"):
        return
    from ..github import actions, render
    from ..reporters import jsonfmt
    from .pr import outputs
    data = jsonfmt.to_dict(report)
    actions.append_summary(render.summary(data, title="kernelvet scan", list_all=True))
    actions.annotate_findings(data)
    outputs(data, sarif_path)


def _cuda_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for ext in ("*.cu", "*.cuh") for p in root.rglob(ext)
                  if ".git" not in p.parts and not any(part.startswith(".") for part in p.relative_to(root).parts))


def _relative(p: Path, root: Path) -> str:
    try:
        return str(p.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(p)
