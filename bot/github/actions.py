"""The GitHub Actions environment: the event, the API client, step outputs, the job summary and
workflow-command annotations. The token is read from the environment only and never printed."""
from __future__ import annotations

import io
import os
import re
import sys
from dataclasses import dataclass

from ..jsonfile import read_json


class EventError(Exception):
    pass


@dataclass
class PullRequestEvent:
    repository: str  # owner/name of the base repository
    number: int
    head_sha: str
    base_sha: str
    head_repository: str | None  # owner/name the head branch lives in (another one for a fork)

    @property
    def from_fork(self) -> bool:
        return self.head_repository is not None and self.head_repository.lower() != self.repository.lower()


@dataclass
class WorkflowRunEvent:
    repository: str
    head_sha: str
    head_repository: str | None
    conclusion: str | None


def _load(path: str | None) -> dict:
    path = path or os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        raise EventError("no event: GITHUB_EVENT_PATH is not set (run inside GitHub Actions, or give --event FILE)")
    data = read_json(path, EventError, "the event")
    if not isinstance(data, dict):
        raise EventError(f"{path}: the event is not a JSON object")
    return data


def pull_request_event(path: str | None = None) -> PullRequestEvent:
    data = _load(path)
    pr = data.get("pull_request")
    if not isinstance(pr, dict):
        raise EventError("the event has no pull_request: run mode pr on pull_request events (mode scan otherwise)")
    try:
        head, base = pr["head"], pr["base"]
        return PullRequestEvent(
            repository=(data.get("repository") or base["repo"])["full_name"], number=int(pr["number"]),
            head_sha=head["sha"], base_sha=base["sha"],
            head_repository=(head.get("repo") or {}).get("full_name"))
    except (KeyError, TypeError, ValueError) as exc:
        raise EventError(f"the pull_request event lacks {exc}") from None


def workflow_run_event(path: str | None = None) -> WorkflowRunEvent:
    data = _load(path)
    run = data.get("workflow_run")
    if not isinstance(run, dict):
        raise EventError("the event has no workflow_run: mode post runs in a workflow triggered by workflow_run")
    try:
        return WorkflowRunEvent(repository=data["repository"]["full_name"], head_sha=run["head_sha"],
                                head_repository=(run.get("head_repository") or {}).get("full_name"),
                                conclusion=run.get("conclusion"))
    except (KeyError, TypeError) as exc:
        raise EventError(f"the workflow_run event lacks {exc}") from None


def _retry(**kw):
    """GitHub's retry (rate limits: Retry-After, X-RateLimit-Reset, secondary limits; 5xx with
    backoff), except that a POST is not repeated after a 5xx: GitHub may have stored it. The review
    POST checks for itself (review._create_review)."""
    from github import GithubRetry

    class _Retry(GithubRetry):
        def is_retry(self, method, status_code, has_retry_after=False):
            if method == "POST" and status_code >= 500:
                return False
            return super().is_retry(method, status_code, has_retry_after)

    return _Retry(**kw)


def token() -> str | None:
    for name in ("GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN"):
        value = os.environ.get(name)
        if value:
            return value
    return None


def client(tok: str):
    """A PyGithub client (imported here: a scan never talks to GitHub, and PyGithub's import is a
    fifth of a scan command's start-up)."""
    from github import Auth, Github

    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    # connect=1: an API that refuses connections fails over in about a second (one retry at once),
    # not after six backed-off attempts; rate limits and 5xx keep GitHub's retry rules.
    retry = _retry(total=6, connect=1, backoff_factor=1.0, secondary_rate_wait=60)
    # Writes one second apart (GitHub's advice against secondary rate limits); reads unthrottled.
    return Github(auth=Auth.Token(tok), base_url=api, retry=retry, per_page=100, timeout=30, lazy=True,
                  seconds_between_requests=None, seconds_between_writes=1.0)


def set_outputs(values: dict) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a") as f:
        for k, v in values.items():
            f.write(f"{k}={v}\n")


def append_summary(markdown: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a") as f:
            f.write(markdown + "\n")


MAX_ANNOTATIONS = 50  # GitHub shows at most 50 annotations of a job


class CommandGuard(io.TextIOBase):
    """A text stream for GitHub Actions logs on which no line can start a workflow command: a line
    (after a newline or carriage return, wherever it came from: a file name with a newline, a
    message quoting the source) that begins with '::' gets a zero-width space between the colons.
    kernelvet's own commands go around it (``emit``)."""

    def __init__(self, raw):
        self.raw = raw
        self._bol = True

    def write(self, s: str) -> int:
        out = []
        for piece in _LINE_BREAKS.split(s):
            if piece in ("\r", "\n"):
                out.append(piece)
                self._bol = True
                continue
            if not piece:
                continue
            if self._bol and piece.lstrip(" \t").startswith("::"):
                i = piece.index("::")
                piece = piece[:i] + ":\u200b:" + piece[i + 2:]
            self._bol = False
            out.append(piece)
        self.raw.write("".join(out))
        return len(s)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    @property
    def encoding(self):
        return getattr(self.raw, "encoding", "utf-8")


_LINE_BREAKS = re.compile(r"([\r\n])")


def guard_streams() -> None:
    """In GitHub Actions, put stdout and stderr behind CommandGuard (once)."""
    if os.environ.get("GITHUB_ACTIONS") and not isinstance(sys.stdout, CommandGuard):
        sys.stdout = CommandGuard(sys.stdout)
        sys.stderr = CommandGuard(sys.stderr)


def emit(command: str) -> None:
    """Write one of kernelvet's own workflow commands (its data already escaped) at a line start."""
    sys.stdout.flush()
    raw = sys.stdout.raw if isinstance(sys.stdout, CommandGuard) else sys.stdout
    raw.write(command + "\n")
    raw.flush()
    if isinstance(sys.stdout, CommandGuard):
        sys.stdout._bol = True


def _escape_data(text: str) -> str:
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotate_findings(report: dict) -> None:
    """One ``::error file=...,line=...`` workflow command per active finding (JSON report form), so
    that a run without review permissions still shows each on the diff, as linters' actions do."""
    if not os.environ.get("GITHUB_ACTIONS"):
        return
    active = [f for f in report.get("findings", []) if f.get("status", "new") == "new"]
    for f in active[:MAX_ANNOTATIONS]:
        loc = f["location"]
        props = (f"file={_escape_property(loc['file'])},line={int(loc['line'])},col={int(loc.get('column') or 1)},"
                 f"title={_escape_property('kernelvet ' + f['check'])}")
        if f.get("contract"):  # real only for calls that break what the op does not check
            emit(f"::notice {props}::{_escape_data(f['message'] + '. Contract finding: ' + f['contract'])}")
        else:
            emit(f"::error {props}::{_escape_data(f['message'])}")
    if len(active) > MAX_ANNOTATIONS:
        emit(f"::warning::{len(active) - MAX_ANNOTATIONS} more findings are in the job summary and the SARIF file")


def annotate(level: str, message: str) -> None:
    """A workflow command (``::warning::``) when running in Actions; plain standard error otherwise."""
    if os.environ.get("GITHUB_ACTIONS"):
        emit(f"::{level}::{_escape_data(message)}")
    else:
        print(f"kernelvet: {level}: {message}", file=sys.stderr)
