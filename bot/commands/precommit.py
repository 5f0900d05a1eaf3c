"""kernelvet pre-commit: the pre-commit hook's entry (docs/precommit.md). It reports what the
staged change introduces, exactly as ``kernelvet diff --staged`` does: the ops whose translation
units include the staged files and whose IR differs from HEAD's (and the instances a staged
manifest or model config changes). A comment-only edit to a file with findings passes; findings
that were there before are for a baseline, not for this commit."""
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
    from ..diff import ChangeSet, FileChange, has_commit, toplevel
    from ..driver import run_changes
    from ..manifest import ManifestError
    from ..reporters import text
    from . import common

    root = toplevel(Path.cwd()) or Path.cwd()
    changes = ChangeSet({f: FileChange(f, "modified") for f in (_relative(Path(x), root) for x in args.files)})
    if not changes.files:
        return 0
    # pre-commit stashes what is not staged, so the work tree is the staged state: compared with
    # HEAD, as diff --staged compares the index with it. No HEAD yet (a first commit): the cache decides.
    base = "HEAD" if has_commit(root, "HEAD") else None
    try:
        manifest = common.load_manifest(root, args.manifest)
        result = run_changes(root, manifest, changes, base, common.open_cache(args, root),
                             common.options(args, manifest), None, common.baseline(args, root))
    except UsageError as exc:
        return fail(str(exc))
    except ManifestError as exc:
        return fail("\n".join(exc.errors))
    if args.explain_impact:
        sys.stderr.write(result.impact.explain(result.report))
    report = result.report
    if report.instances or report.unverified:
        sys.stdout.write(text.render(report))
    common.say_unverified(report)
    if report.active:
        print("kernelvet: these findings are in ops this commit changes. Fix them, suppress one with a reason "
              "(// kernelvet: ignore[CHECK] REASON), or, for findings that were there before the change, record "
              "them once with `kernelvet scan --write-baseline .kernelvet-baseline.json` and commit that file "
              "(docs/precommit.md).", file=sys.stderr)
    return report.exit_code


def _relative(p: Path, root: Path) -> str:
    try:
        return str((Path.cwd() / p).resolve().relative_to(root.resolve()))
    except ValueError:
        return str(p)
