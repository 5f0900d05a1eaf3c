"""kernelvet diff: verify what a git change can affect (a branch against its base, or the staged
changes), with the reasons on request."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import UsageError, add_output_args, add_repo_args, fail


def register(sub) -> None:
    p = sub.add_parser("diff", help="verify only what a git change can affect",
                       description="Verify the ops a change can affect: BASE (a branch or commit; compared "
                                   "from its merge base with HEAD to the working tree), BASE..HEAD, or --staged.")
    p.add_argument("base", nargs="?", help="BASE or BASE..HEAD (HEAD must be checked out)")
    p.add_argument("--staged", action="store_true", help="the staged changes against HEAD")
    p.add_argument("--root", default=".", help="a directory of the repository (default: the current one)")
    p.add_argument("--explain-impact", action="store_true", help="say on standard error what is verified and why")
    add_repo_args(p)
    add_output_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..diff import DiffError, from_git, git, has_commit, merge_base, toplevel
    from ..driver import run_changes
    from ..manifest import ManifestError
    from ..progress import for_stream
    from . import common

    try:
        root = toplevel(Path(args.root))
        if root is None:
            raise UsageError(f"kernelvet: {args.root} is not inside a git repository")
        if args.staged:
            base = "HEAD" if has_commit(root, "HEAD") else None
            changes = from_git(root, base or _empty_tree(root), staged=True)
        else:
            if not args.base:
                raise UsageError("kernelvet: diff needs BASE (e.g. main), BASE..HEAD, or --staged")
            rev, _, head = args.base.partition("..")
            if head and git(root, "rev-parse", head).strip() != git(root, "rev-parse", "HEAD").strip():
                raise UsageError(f"kernelvet: {head} is not checked out; kernelvet reads the files of the work tree")
            if not has_commit(root, rev):
                raise UsageError(f"kernelvet: no commit {rev!r} in {root}")
            base = merge_base(root, rev, "HEAD")
            changes = from_git(root, base)
        manifest = common.load_manifest(root, args.manifest)
        result = run_changes(root, manifest, changes, base, common.open_cache(args, root),
                             common.options(args, manifest), for_stream(sys.stderr), common.baseline(args, root))
    except (UsageError, DiffError) as exc:
        return fail(str(exc) if isinstance(exc, UsageError) else f"kernelvet: {exc}")
    except ManifestError as exc:
        return fail("\n".join(exc.errors))
    if args.explain_impact:
        sys.stderr.write(result.impact.explain(result.report))
    common.write_outputs(result.report, args, "diff")
    common.say_unverified(result.report)
    return result.report.exit_code


def _empty_tree(root: Path) -> str:
    from ..diff import git
    return git(root, "hash-object", "-t", "tree", "/dev/null").strip()
