"""kernelvet merge: one report from the --results files of a sharded scan (a CI matrix)."""
from __future__ import annotations

from pathlib import Path

from .common import UsageError, add_output_args, fail


def register(sub) -> None:
    p = sub.add_parser("merge", help="merge the --results files of a sharded scan into one report")
    p.add_argument("results", nargs="+", help="results files written by kernelvet scan --shard I/N --results FILE")
    p.add_argument("--root", default=".", help="the repository root (default: the current directory)")
    p.add_argument("--manifest", help="the manifest (default: kernelvet.yaml at the repository root)")
    p.add_argument("--baseline", help="baseline file (default: ROOT/.kernelvet-baseline.json when it exists)")
    p.add_argument("--allow-partial", action="store_true", help="merge even if some instances have no result")
    add_output_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..manifest import ManifestError
    from ..results import ResultsError, load
    from ..suppress import apply
    from . import common

    root = Path(args.root).resolve()
    try:
        manifest = common.load_manifest(root, args.manifest)
        report = load([Path(p) for p in args.results], root, manifest, args.allow_partial)
        baseline = common.baseline(args, root)
    except (UsageError, ResultsError) as exc:
        return fail(f"kernelvet: {exc}" if isinstance(exc, ResultsError) else str(exc))
    except ManifestError as exc:
        return fail("\n".join(exc.errors))
    apply(report, baseline)
    common.write_outputs(report, args, "scan")
    from .scan import _actions_summary
    _actions_summary(report, args.sarif)
    return report.exit_code
