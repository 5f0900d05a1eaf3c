"""kernelvet post: the privileged half of the split workflow for pull requests from forks. Runs on
``workflow_run``, reads the results artifact the pull request's run uploaded, and posts its review.
It checks out and runs nothing of the pull request. The artifact was written by a run of the
pull request's own workflow, so it is untrusted: the pull request must exist in this repository
with the head commit the workflow run names, the files and hunks come from the API, and the text
is rendered through the same escaping as always."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import fail
from .pr import REVIEW_SCHEMA, add_review_args, exit_code, outputs, post_review

MAX_ARTIFACT = 20 * 1024 * 1024


def register(sub) -> None:
    p = sub.add_parser("post", help="post the review of a results artifact (the workflow_run half of the split "
                                    "workflow for pull requests from forks)")
    p.add_argument("results", help="the results artifact written by kernelvet pr --results")
    p.add_argument("--event", help="the workflow_run event file (default: $GITHUB_EVENT_PATH)")
    add_review_args(p)
    p.set_defaults(func=run)


def _check_report(report) -> list[dict]:
    if not isinstance(report, dict) or not isinstance(report.get("summary"), dict):
        raise ValueError("no report")
    for k in ("instances", "bug", "verified", "inconclusive", "findings"):
        if not isinstance(report["summary"].get(k), int):
            raise ValueError(f"summary.{k} is not a number")
    findings = report.get("findings", [])
    if not isinstance(findings, list) or not isinstance(report.get("instances", []), list):
        raise ValueError("findings or instances is not a list")
    for inst in report.get("instances", []):
        if not (isinstance(inst, dict) and isinstance(inst.get("op"), str) and isinstance(inst.get("dtype"), str)
                and inst.get("verdict") in ("bug", "contract", "verified", "inconclusive")
                and isinstance(inst.get("models"), list) and all(isinstance(m, str) for m in inst["models"])
                and isinstance(inst.get("inconclusive", []), list)):
            raise ValueError("an instance is malformed")
    for f in findings:
        loc = f.get("location") if isinstance(f, dict) else None
        if not isinstance(loc, dict) or not isinstance(loc.get("file"), str) or not isinstance(loc.get("line"), int):
            raise ValueError("a finding has no location")
        if loc["file"].startswith(("/", "..")) or "/../" in loc["file"]:
            raise ValueError(f"a finding is outside the repository ({loc['file'][:100]!r})")
        if not isinstance(f.get("fingerprint"), str) or not all(isinstance(f.get(k), list) for k in
                                                                 ("ops", "models", "dtypes", "kernels")):
            raise ValueError("a finding lacks its fingerprint or lists")
    return findings


def run(args) -> int:
    from github import GithubException
    from requests.exceptions import RequestException

    from ..diff import DiffError, from_pr_files
    from ..github import actions, render

    try:
        event = actions.workflow_run_event(args.event)
    except actions.EventError as exc:
        return fail(f"kernelvet: {exc}")
    path = Path(args.results)
    try:
        if path.stat().st_size > MAX_ARTIFACT:
            return fail(f"kernelvet: {path}: larger than {MAX_ARTIFACT // 2**20} MiB; not a kernelvet artifact")
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or data.get("schema") != REVIEW_SCHEMA:
            raise ValueError(f"not a kernelvet results artifact (expected schema {REVIEW_SCHEMA})")
        info = data["pull_request"]
        number = int(info["number"])
        report = data["report"]
        _check_report(report)
        notes = [str(n) for n in data.get("notes", [])][:5]
        explanation = str(data.get("explanation") or "")
    except OSError as exc:
        return fail(f"kernelvet: {path}: cannot read the artifact ({exc.strerror})")
    except (ValueError, KeyError, TypeError) as exc:
        return fail(f"kernelvet: {path}: {exc}")
    tok = actions.token()
    if not tok:
        return fail("kernelvet: post needs a token with pull-requests: write (GITHUB_TOKEN)")
    gh = actions.client(tok)
    try:
        repo = gh.get_repo(event.repository)
        pr = repo.get_pull(number)
        head = pr.head.sha
        if head != event.head_sha:
            return fail(f"kernelvet: the artifact names pull request #{number}, whose head is {head[:12]}, not the "
                        f"workflow run's commit {event.head_sha[:12]}: nothing posted")
        changes = from_pr_files(pr.get_files())
    except GithubException as exc:
        return fail(f"kernelvet: cannot read pull request #{number} of {event.repository} ({exc.status})")
    except RequestException as exc:
        return fail(f"kernelvet: cannot reach the API ({exc.__class__.__name__})")
    except DiffError as exc:
        return fail(f"kernelvet: {exc}")
    actions.append_summary(render.summary(report, explanation=explanation, notes=notes, list_all=True))
    outputs(report, None)
    post_review(repo, pr, event.head_sha, report, changes, args.max_comments, explanation, notes)
    print(f"kernelvet: {report['summary']['findings']} findings for pull request #{number}", file=sys.stderr)
    return exit_code(report, args.fail_on)
