"""kernelvet pre-commit: the pre-commit hook's entry. Verifies the ops whose translation units
include the staged files (and the instances a staged manifest or model config changes), with the
cache answering everything whose IR did not change: a comment-only edit verifies nothing again."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import UsageError, fail


def register(sub) -> None:
    p = sub.add_parser("pre-commit", help="the pre-commit hook: verify what the given (staged) files affect")
    p.add_argument("files", nargs="*", help="files as pre-commit passes them (relative to the repository root)")
    p.add_argument("--manifest", help="the manifest (default: kernelvet.yaml at the repository root)")
    p.add_argument("--cache-dir", help="the cache (default: ROOT/.kernelvet-cache)")
    p.add_argument("--explain-impact", action="store_true", help="say what is verified and why")
    p.set_defaults(func=run, no_cache=False, baseline=None, time_budget=None)


def run(args) -> int:
    from ..diff import ChangeSet, FileChange, toplevel
    from ..driver import run_changes
    from ..manifest import ManifestError
    from ..reporters import text
    from . import common

    root = toplevel(Path.cwd()) or Path.cwd()
    changes = ChangeSet({f: FileChange(f, "modified") for f in (_relative(Path(x), root) for x in args.files)})
    if not changes.files:
        return 0
    try:
        manifest = common.load_manifest(root, args.manifest)
        result = run_changes(root, manifest, changes, None, common.open_cache(args, root),
                             common.options(args, manifest), None, common.baseline(args, root))
    except UsageError as exc:
        return fail(str(exc))
    except ManifestError as exc:
        return fail("\n".join(exc.errors))
    if args.explain_impact:
        sys.stderr.write(result.impact.explain(result.report))
    report = result.report
    if report.instances:
        sys.stdout.write(text.render(report))
    return report.exit_code


def _relative(p: Path, root: Path) -> str:
    try:
        return str((Path.cwd() / p).resolve().relative_to(root.resolve()))
    except ValueError:
        return str(p)
