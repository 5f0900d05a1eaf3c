"""One review per run, kept in step with the previous runs' comments.

- Each finding on a line inside the diff hunks becomes an inline comment (RIGHT side) with a hidden
  fingerprint marker; findings elsewhere, and those over the per-review limit, go to the body.
- A comment of a previous run with the same fingerprint on the same line is kept (edited if its
  text changed); one that no finding wants any more is deleted, or, when someone replied to it,
  edited to say it is resolved. A re-run never duplicates.
- The review is validated against the hunks before it is posted (GitHub rejects the whole review
  with a 422 that does not say which comment failed); if GitHub still says 422, it is posted again
  with every finding in the body.
- With no new inline comment, the previous kernelvet review's body is updated instead of posting a
  new review.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from github import GithubException

from . import render
from ..diff import ChangeSet


@dataclass
class Wanted:
    fingerprint: str
    path: str
    line: int
    body: str
    finding: dict


@dataclass
class Existing:
    id: int
    path: str
    line: int | None  # None once GitHub considers the comment outdated
    body: str
    fingerprint: str | None
    in_reply_to: int | None
    obj: object = None  # the PyGithub comment


@dataclass
class Plan:
    create: list[Wanted] = field(default_factory=list)
    overflow: list[dict] = field(default_factory=list)  # findings over the limit: the body lists them
    elsewhere: list[dict] = field(default_factory=list)  # findings outside the hunks: the body lists them
    keep: list[Existing] = field(default_factory=list)
    edit: list[tuple[Existing, str]] = field(default_factory=list)
    delete: list[Existing] = field(default_factory=list)
    resolve: list[Existing] = field(default_factory=list)  # replied to: edited, not deleted

    kept: list[dict] = field(default_factory=list)  # findings whose comment of a previous run stays

    @property
    def inline(self) -> list[dict]:
        return [w.finding for w in self.create] + self.kept


def place(findings: list[dict], changes: ChangeSet) -> tuple[list[Wanted], list[dict]]:
    """Inline comments for the findings on commentable lines; the others. Contract findings
    (zero-config) get no comment and are not among the others: the review body lists them apart."""
    wanted, elsewhere = [], []
    for f in findings:
        if f.get("status", "new") != "new" or f.get("contract"):
            continue
        target = None
        for span, on_access in ((f["location"], False), (f.get("access"), True)):
            if span is None:
                continue
            fc = changes.get(span["file"])
            if fc is not None and fc.commentable(int(span["line"])):
                target = (span["file"], int(span["line"]), on_access)
                break
        if target is None:
            # Not on a changed line of the code: on a changed line of the manifest entry (or model
            # config) its instances come from, when the change touched one: that change caused it.
            for place in f.get("manifest_places", []):
                fc = changes.get(place["file"])
                lines = sorted(n for n in (fc.added if fc is not None else ())
                               if place["start"] <= n <= place["end"] and fc.commentable(n))
                if lines:
                    wanted.append(Wanted(f["fingerprint"], place["file"], lines[0],
                                         render.comment_body(f, lines[0], via_manifest=True), f))
                    break
            else:
                elsewhere.append(f)
        else:
            path, line, on_access = target
            wanted.append(Wanted(f["fingerprint"], path, line, render.comment_body(f, line, on_access), f))
    return wanted, elsewhere


def plan(wanted: list[Wanted], elsewhere: list[dict], existing: list[Existing], max_comments: int) -> Plan:
    p = Plan(elsewhere=list(elsewhere))
    replied = {e.in_reply_to for e in existing if e.in_reply_to}
    ours: dict[str, list[Existing]] = {}
    for e in existing:
        if e.fingerprint and not e.in_reply_to:
            ours.setdefault(e.fingerprint, []).append(e)
    retire: list[Existing] = []
    for w in wanted:
        olds = ours.pop(w.fingerprint, [])
        same = next((e for e in olds if e.path == w.path and e.line == w.line), None)
        retire += [e for e in olds if e is not same]
        if same is None:
            if len(p.create) < max_comments:
                p.create.append(w)
            else:
                p.overflow.append(w.finding)
        elif same.body.strip() != w.body.strip():
            p.edit.append((same, w.body))
            p.kept.append(w.finding)
        else:
            p.keep.append(same)
            p.kept.append(w.finding)
    for olds in ours.values():
        retire += olds
    for e in retire:
        (p.resolve if e.id in replied else p.delete).append(e)
    return p


def existing_comments(pr) -> list[Existing]:
    out = []
    for c in pr.get_review_comments():  # paged by PyGithub
        # Read what the page returned. GitHub omits in_reply_to_id on top-level comments, and
        # reading a missing attribute makes PyGithub fetch the comment again: one GET per comment.
        raw = getattr(c, "_rawData", None)
        if not isinstance(raw, dict):
            raw = {"id": c.id, "path": c.path, "line": c.line, "body": c.body, "in_reply_to_id": c.in_reply_to_id}
        body = raw.get("body") or ""
        m = render.FINDING_RE.search(body.rstrip())
        out.append(Existing(raw["id"], raw.get("path"), raw.get("line"), body, m.group(1) if m else None,
                            raw.get("in_reply_to_id"), c))
    return out


def previous_reviews(pr) -> list:
    return [r for r in pr.get_reviews() if render.REVIEW_RE.search(r.body or "")]


@dataclass
class Outcome:
    posted: bool = False
    review_id: int | None = None
    created: int = 0
    edited: int = 0
    deleted: int = 0
    resolved: int = 0
    fallback_to_body: bool = False
    errors: list[str] = field(default_factory=list)


def resolved_body(e: Existing, sha: str) -> str:
    old = render.FINDING_RE.sub("", e.body).strip()
    return (f"**Resolved**: kernelvet no longer reports this at {sha[:12]}.\n\n<details><summary>Previous report"
            f"</summary>\n\n{old}\n\n</details>\n" + render.RESOLVED_MARKER.format(fp=e.fingerprint))


def post(repo, pr, head_sha: str, report: dict, changes: ChangeSet, max_comments: int, run_id: str,
         explanation: str | None = None, notes: list[str] = (), log=print) -> Outcome:
    """Post this run's review and bring the previous runs' comments up to date."""
    out = Outcome()
    wanted, elsewhere = place(report.get("findings", []), changes)
    p = plan(wanted, elsewhere, existing_comments(pr), max_comments)

    def body(fallback: bool = False) -> str:
        elsewhere_ = p.elsewhere + ([w.finding for w in p.create] if fallback else [])
        text = render.summary(report, inline=[] if fallback else p.inline, elsewhere=elsewhere_,
                              overflow=p.overflow, explanation=explanation, notes=notes)
        return f"{text}\n{render.REVIEW_MARKER}\n{render.RUN_MARKER.format(run=run_id)}"

    previous = previous_reviews(pr)
    if p.create or not previous:
        comments = [{"path": w.path, "line": w.line, "side": "RIGHT", "body": w.body} for w in p.create]
        commit = repo.get_commit(head_sha)  # the commit whose lines the comments refer to
        try:
            review = _create_review(pr, commit, body(), comments, run_id)
            out.created = len(comments)
        except GithubException as exc:
            if exc.status != 422 or not comments:
                raise
            log(f"kernelvet: GitHub rejected the inline comments ({_message(exc)}); posting every finding in the "
                "review body instead")
            out.fallback_to_body = True
            review = _create_review(pr, commit, body(fallback=True), [], run_id)
        out.posted, out.review_id = True, review.id
        for old in previous:
            if render.RUN_MARKER.format(run=run_id) in (old.body or ""):
                continue
            _try(out, f"mark review {old.id} superseded", lambda old=old: old.edit(
                f"kernelvet: superseded by the review of {head_sha[:12]}."))
    else:
        latest = previous[-1]
        new_body = body()
        if _strip_run(latest.body or "") != _strip_run(new_body):
            _try(out, f"update review {latest.id}", lambda: latest.edit(new_body))
        out.review_id = latest.id
    for e, text in p.edit:
        if _try(out, f"edit comment {e.id}", lambda e=e, text=text: e.obj.edit(text)):
            out.edited += 1
    for e in p.delete:
        if _try(out, f"delete comment {e.id}", lambda e=e: e.obj.delete()):
            out.deleted += 1
    for e in p.resolve:
        if _try(out, f"resolve comment {e.id}", lambda e=e: e.obj.edit(resolved_body(e, head_sha))):
            out.resolved += 1
    return out


def _strip_run(text: str) -> str:
    return re.sub(r"<!-- kernelvet:run:[^>]* -->", "", text).strip()


def _create_review(pr, commit, body: str, comments: list[dict], run_id: str):
    try:
        return pr.create_review(commit=commit, body=body, event="COMMENT", comments=comments)
    except GithubException as exc:
        if exc.status < 500:
            raise
        # A 5xx may come after GitHub stored the review: look before posting again.
        for r in pr.get_reviews():
            if render.RUN_MARKER.format(run=run_id) in (r.body or ""):
                return r
        return pr.create_review(commit=commit, body=body, event="COMMENT", comments=comments)


def _message(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    errors = data.get("errors")
    text = data.get("message") or str(exc.status)
    if isinstance(errors, list) and errors:
        text += ": " + "; ".join(str(e if isinstance(e, str) else e.get("message", e)) for e in errors[:3])
    return render.plain(text, 300)


def _try(out: Outcome, what: str, action) -> bool:
    try:
        action()
        return True
    except GithubException as exc:
        out.errors.append(f"could not {what}: {exc.status} {_message(exc)}")
        return False
