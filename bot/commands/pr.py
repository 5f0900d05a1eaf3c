"""kernelvet pr: verify what a pull request can affect and post one review (GitHub Actions, on a
pull_request event). From a fork, where the token cannot write, it writes the results artifact for
the split workflow's ``kernelvet post`` (docs/github.md)."""
from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

from ..exitcodes import (EXIT_CLEAN, EXIT_CONTRACT, EXIT_FINDINGS, EXIT_INCONCLUSIVE, EXIT_INTERNAL,
                         EXIT_UNVERIFIED, EXIT_USAGE)
from .common import UsageError, add_repo_args, fail

REVIEW_SCHEMA = "kernelvet.review/1"
FAIL_ON = ("bug", "contract", "inconclusive", "never")


def register(sub) -> None:
    p = sub.add_parser("pr", help="verify a pull request's changes and post a review (GitHub Actions)")
    p.add_argument("--root", default=".", help="the checked-out repository (default: the current directory)")
    p.add_argument("--event", help="the event file (default: $GITHUB_EVENT_PATH)")
    add_repo_args(p)
    add_review_args(p)
    p.add_argument("--results", metavar="FILE", help="write the results artifact (for kernelvet post) to FILE")
    p.add_argument("--explain-impact", action="store_true", help="say on standard error what is verified and why")
    p.add_argument("--no-post", action="store_true", help="write reports only; post nothing")
    p.set_defaults(func=run)


def add_review_args(p) -> None:
    p.add_argument("--sarif", metavar="FILE", help="write SARIF 2.1.0 to FILE")
    p.add_argument("--max-comments", type=int, default=30, help="inline comments per review (default 30; "
                                                                 "the others are listed in the review body)")
    p.add_argument("--fail-on", choices=FAIL_ON, default="bug",
                   help="bug: exit 1 on bug findings (default); contract: also exit 6 on contract findings "
                        "(zero-config); inconclusive: also exit 3 on inconclusive instances; never: exit 0")


def apply_fail_on(code: int, fail_on: str) -> int:
    """The exit code a run's result gives under ``fail-on`` (README, "Exit codes"): ``never`` passes
    everything; ``bug`` fails on findings (1) and on anything asked for and not verified (5: a file
    no instance reached, a compiler error in a touched file, a run with nothing to verify);
    ``contract`` fails on contract findings (6) too; ``inconclusive`` on those and on inconclusive
    instances (3). Usage and internal errors always fail."""
    if code in (EXIT_USAGE, EXIT_INTERNAL):
        return code
    if fail_on == "never":
        return EXIT_CLEAN
    if code == EXIT_CONTRACT and fail_on not in ("contract", "inconclusive"):
        return EXIT_CLEAN
    if code == EXIT_INCONCLUSIVE and fail_on != "inconclusive":
        return EXIT_CLEAN
    return code


def exit_code(report: dict, fail_on: str) -> int:
    s = report["summary"]
    contract = s.get("contract_findings", 0)
    if s["findings"] - contract > 0:
        code = EXIT_FINDINGS
    elif s.get("unverified"):
        code = EXIT_UNVERIFIED
    elif contract:
        code = EXIT_CONTRACT
    elif s["inconclusive"]:
        code = EXIT_INCONCLUSIVE
    else:
        code = EXIT_CLEAN
    return apply_fail_on(code, fail_on)


def run(args) -> int:
    from github import GithubException
    from requests.exceptions import RequestException

    from ..diff import ChangeSet, DiffError, from_git, from_pr_files, git, has_commit, merge_base, toplevel
    from ..driver import run_changes
    from ..github import actions, render
    from ..manifest import ManifestError
    from ..progress import for_stream
    from ..reporters import jsonfmt, sarif
    from . import common

    try:
        event = actions.pull_request_event(args.event)
    except actions.EventError as exc:
        return fail(f"kernelvet: {exc}")
    root = Path(args.root).resolve()
    notes: list[str] = []
    tok = actions.token()
    gh = actions.client(tok) if tok else None
    repo = pr = None
    try:
        changes = None
        if gh is not None:
            try:
                repo = gh.get_repo(event.repository)
                pr = repo.get_pull(event.number)
                changes = from_pr_files(pr.get_files())
            except (GithubException, RequestException) as exc:
                status = getattr(exc, "status", None)
                actions.annotate("warning", f"cannot list the pull request's files through the API ({status or exc.__class__.__name__}); "
                                 "using git instead")
        top = toplevel(root)
        base = None
        if top is not None and has_commit(top, event.base_sha) and has_commit(top, "HEAD"):
            base = merge_base(top, event.base_sha, "HEAD")
        if changes is None:
            if base is None:
                raise UsageError("kernelvet: neither the API nor git gives the pull request's changes: check out "
                                 "with fetch-depth: 0, or give the action a token that can read the pull request")
            changes = from_git(top, base)
        head_ok = top is None or git(top, "rev-parse", "HEAD").strip() == event.head_sha
        if not head_ok:
            notes.append(f"The work tree is not the pull request's head ({event.head_sha[:12]}), so line numbers may "
                         "differ: every finding is listed here, none inline. Check out the head "
                         "(actions/checkout with ref set to the pull request's head sha).")
        if base is None:
            notes.append("The base commit is not in the checkout (fetch-depth: 0 gives it): ops whose files changed "
                         "are verified unless the cache has their current IR.")
        manifest = common.load_manifest(root, args.manifest)
        result = run_changes(root, manifest, changes, base, common.open_cache(args, root),
                             common.options(args, manifest), for_stream(sys.stderr), common.baseline(args, root))
    except (UsageError, DiffError) as exc:
        return fail(str(exc) if isinstance(exc, UsageError) else f"kernelvet: {exc}")
    except ManifestError as exc:
        return fail("\n".join(exc.errors))

    report = jsonfmt.to_dict(result.report)
    explanation = result.impact.explain(result.report)
    if args.explain_impact:
        sys.stderr.write(explanation)
    if args.sarif:
        common.write_file(args.sarif, sarif.render(result.report, "pr"), root)
    if args.results:
        common.write_file(args.results, json.dumps({
            "schema": REVIEW_SCHEMA,
            "pull_request": {"repository": event.repository, "number": event.number, "head_sha": event.head_sha,
                             "base_sha": event.base_sha},
            "report": report, "explanation": explanation, "notes": notes}) + "\n", root)
    actions.append_summary(render.summary(report, explanation=explanation, notes=notes, list_all=True))
    actions.annotate_findings(report)
    outputs(report, args.sarif)
    sys.stdout.write(render_text(result.report))
    common.say_unverified(result.report)

    if args.no_post:
        pass
    elif event.from_fork:
        actions.annotate("notice", "pull request from a fork: the token cannot write a review; findings are in the "
                         "SARIF file, the job summary and the results artifact, which the workflow_run workflow "
                         "posts (docs/github.md, \"Pull requests from forks\")")
    elif pr is None:
        actions.annotate("warning", "no token: the review is not posted (findings are in the job summary)")
    else:
        place = changes if head_ok else ChangeSet()
        post_review(repo, pr, event.head_sha, report, place, args.max_comments, explanation, notes)
    return exit_code(report, args.fail_on)


def render_text(report) -> str:
    from ..reporters import text
    return text.render(report)


def outputs(report: dict, sarif_path: str | None) -> None:
    from ..github import actions
    s = report["summary"]
    actions.set_outputs({"findings": s["findings"], "contract-findings": s.get("contract_findings", 0),
                         "bug": s["bug"], "contract": s.get("contract", 0), "verified": s["verified"],
                         "inconclusive": s["inconclusive"], "instances": s["instances"],
                         "sarif": sarif_path or ""})


def post_review(repo, pr, head_sha: str, report: dict, changes, max_comments: int, explanation: str | None,
                notes: list[str]) -> bool:
    """Post and report what happened; a failure is reported, never raised (the findings are in the
    SARIF file and the job summary already)."""
    from github import GithubException
    from requests.exceptions import RequestException

    from ..github import actions, review

    run_id = f"{os.environ.get('GITHUB_RUN_ID', 'local')}-{os.environ.get('GITHUB_RUN_ATTEMPT', '1')}-{uuid.uuid4().hex[:8]}"
    try:
        out = review.post(repo, pr, head_sha, report, changes, max_comments, run_id, explanation, notes,
                          log=lambda m: actions.annotate("warning", m))
    except GithubException as exc:
        msg = review._message(exc)
        if exc.status == 403:
            actions.annotate("error", f"GitHub refused the review (403: {msg}). The token needs pull-requests: write; "
                             "a pull request from a fork gets a read-only token: use the split workflow "
                             "(docs/github.md). Every finding is in the SARIF file and the job summary.")
        elif exc.status == 401:
            actions.annotate("error", f"GitHub did not accept the token (401: {msg}). Every finding is in the SARIF "
                             "file and the job summary.")
        elif exc.status == 422:
            actions.annotate("error", f"GitHub rejected the review (422: {msg}). Every finding is in the SARIF file "
                             "and the job summary.")
        else:
            retried = " after retries" if exc.status == 429 or exc.status >= 500 else ""
            actions.annotate("error", f"posting the review failed ({exc.status}: {msg}){retried}. Every finding "
                             "is in the SARIF file and the job summary.")
        return False
    except RequestException as exc:
        actions.annotate("error", f"posting the review failed ({exc.__class__.__name__}); every finding is in the "
                         "SARIF file and the job summary")
        return False
    for e in out.errors:
        actions.annotate("warning", e)
    print(f"kernelvet: review {'posted' if out.posted else 'updated'}: {out.created} new inline comments, "
          f"{out.edited} edited, {out.deleted} deleted, {out.resolved} marked resolved", file=sys.stderr)
    return True
