"""A local stand-in for the GitHub REST API (loopback only) with the endpoints kernelvet uses and
GitHub's validation of them, driven by the real PyGithub client:

- paging with ``per_page``/``page`` and ``Link`` headers (the page size is capped, so a test can
  force several pages);
- review creation: ``commit_id`` must be the head, each comment's ``path`` a file of the pull
  request and its ``line`` inside one of that file's hunks on the RIGHT side, else 422 for the
  whole review ("line must be part of the diff");
- a secondary rate limit (403 with ``Retry-After``) on the next N review posts;
- a read-only token (403 "Resource not accessible by integration" on writes);
- a 502 after storing a review (the response lost on the way).

Every request is recorded (method, path, query, JSON body) for the tests to assert on.
"""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from unidiff import PatchSet

BOT = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}
HUMAN = {"login": "maintainer", "id": 1, "type": "User"}


def hunk_lines(filename: str, patch: str) -> set[int]:
    """RIGHT-side lines inside the hunks of a file's patch (what GitHub accepts a comment on)."""
    ps = PatchSet(f"--- a/{filename}\n+++ b/{filename}\n{patch}\n")
    out: set[int] = set()
    for h in ps[0]:
        out.update(range(h.target_start, h.target_start + h.target_length))
    return out


@dataclass
class Pull:
    number: int
    head_sha: str
    base_sha: str
    head_repo: str
    files: list[dict]  # {filename, status, patch, previous_filename?}
    comments: list[dict] = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)


@dataclass
class Request:
    method: str
    path: str
    query: dict
    body: object
    authorized: bool


class FakeGitHub:
    def __init__(self, repo: str, token: str = "test-token", max_page: int = 100):
        self.repo = repo
        self.token = token
        self.max_page = max_page
        self.pulls: dict[int, Pull] = {}
        self.requests: list[Request] = []
        self.read_only = False
        self.rate_limit_reviews = 0  # the next N review posts get a secondary rate limit
        self.retry_after = 1
        self.lose_next_review_response = False  # store the review, answer 502
        self.fail_reviews_with_5xx = 0
        self.reject_comments = False  # GitHub's diff disagrees: every inline comment is outside it
        self._next_id = 1000
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------ state helpers for tests

    def add_pull(self, number: int, head_sha: str, base_sha: str, files: list[dict], head_repo: str | None = None):
        self.pulls[number] = Pull(number, head_sha, base_sha, head_repo or self.repo, files)
        return self.pulls[number]

    def new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def reply(self, number: int, to_comment: int, body: str) -> dict:
        """A person replies to a comment."""
        pull = self.pulls[number]
        parent = next(c for c in pull.comments if c["id"] == to_comment)
        c = self._comment(pull, parent["path"], parent["line"], body, HUMAN, to_comment)
        pull.comments.append(c)
        return c

    def comment(self, number: int, path: str, line: int, body: str) -> dict:
        """A person comments on a line (a top-level comment: no in_reply_to_id, as GitHub sends it)."""
        pull = self.pulls[number]
        c = self._comment(pull, path, line, body, HUMAN)
        pull.comments.append(c)
        return c

    def calls(self, method: str, pattern: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    def _comment(self, pull: Pull, path: str, line: int | None, body: str, user: dict, reply_to=None) -> dict:
        cid = self.new_id()
        # As GitHub does, a top-level comment has no in_reply_to_id key at all (not null).
        out = {"id": cid, "url": f"{self.url}/repos/{self.repo}/pulls/comments/{cid}", "path": path, "line": line,
               "original_line": line, "side": "RIGHT", "body": body, "user": user,
               "commit_id": pull.head_sha, "pull_request_url": f"{self.url}/repos/{self.repo}/pulls/{pull.number}"}
        if reply_to is not None:
            out["in_reply_to_id"] = reply_to
        return out

    # ------------------------------------------------------------ HTTP

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, data=None, headers: dict | None = None):
                payload = b"" if data is None else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("X-RateLimit-Limit", "1000")
                self.send_header("X-RateLimit-Remaining", "999")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def _handle(self, method: str):
                url = urlparse(self.path)
                query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                authorized = self.headers.get("Authorization", "") in (f"token {fake.token}", f"Bearer {fake.token}")
                fake.requests.append(Request(method, url.path, query, body, authorized))
                if not authorized:
                    return self._send(401, {"message": "Bad credentials"})
                status, data, headers = fake.route(method, url.path, query, body)
                self._send(status, data, headers)

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

            def do_PATCH(self):
                self._handle("PATCH")

            def do_PUT(self):
                self._handle("PUT")

            def do_DELETE(self):
                self._handle("DELETE")

        return Handler

    def _page(self, path: str, query: dict, items: list):
        per_page = min(int(query.get("per_page", 30)), self.max_page)
        page = int(query.get("page", 1))
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []
        last = max(1, -(-len(items) // per_page))
        if page < last:
            links.append(f'<{self.url}{path}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{self.url}{path}?per_page={per_page}&page={last}>; rel="last"')
        return 200, chunk, ({"Link": ", ".join(links)} if links else {})

    def _pull_json(self, pull: Pull) -> dict:
        base_url = f"{self.url}/repos/{self.repo}"
        return {"number": pull.number, "url": f"{base_url}/pulls/{pull.number}", "state": "open",
                "head": {"sha": pull.head_sha, "ref": "feature", "repo": {"full_name": pull.head_repo}},
                "base": {"sha": pull.base_sha, "ref": "main", "repo": self._repo_json()}}

    def _repo_json(self) -> dict:
        owner, name = self.repo.split("/")
        return {"full_name": self.repo, "name": name, "owner": {"login": owner}, "url": f"{self.url}/repos/{self.repo}"}

    def route(self, method: str, path: str, query: dict, body):
        repo = f"/repos/{self.repo}"
        if not path.startswith(repo):
            return 404, {"message": "Not Found"}, {}
        rest = path[len(repo):]
        if method == "GET" and rest == "":
            return 200, self._repo_json(), {}
        m = re.fullmatch(r"/commits/([0-9a-f]+)", rest)
        if m and method == "GET":
            known = {p.head_sha for p in self.pulls.values()} | {p.base_sha for p in self.pulls.values()}
            if m.group(1) not in known:
                return 422, {"message": "No commit found for SHA: " + m.group(1)}, {}
            return 200, {"sha": m.group(1), "url": f"{self.url}{path}"}, {}
        m = re.fullmatch(r"/pulls/comments/(\d+)", rest)
        if m:
            return self._comment_route(method, int(m.group(1)), body)
        m = re.fullmatch(r"/pulls/(\d+)(/[a-z]+)?(?:/(\d+))?", rest)
        if not m or int(m.group(1)) not in self.pulls:
            return 404, {"message": "Not Found"}, {}
        pull = self.pulls[int(m.group(1))]
        sub, item = m.group(2), m.group(3)
        if method == "GET" and sub is None:
            return 200, self._pull_json(pull), {}
        if method == "GET" and sub == "/files":
            return self._page(path, query, pull.files)
        if method == "GET" and sub == "/comments":
            return self._page(path, query, pull.comments)
        if method == "GET" and sub == "/reviews" and item is None:
            return self._page(path, query, pull.reviews)
        if method == "POST" and sub == "/reviews":
            return self._create_review(pull, body or {})
        if method == "PUT" and sub == "/reviews" and item:
            if self.read_only:
                return 403, {"message": "Resource not accessible by integration"}, {}
            review = next((r for r in pull.reviews if r["id"] == int(item)), None)
            if review is None:
                return 404, {"message": "Not Found"}, {}
            review["body"] = (body or {}).get("body", review["body"])
            return 200, review, {}
        return 404, {"message": "Not Found"}, {}

    def _comment_route(self, method: str, cid: int, body):
        for pull in self.pulls.values():
            for c in pull.comments:
                if c["id"] != cid:
                    continue
                if method == "GET":
                    return 200, c, {}
                if self.read_only or c["user"]["login"] != BOT["login"]:
                    return 403, {"message": "Resource not accessible by integration"}, {}
                if method == "PATCH":
                    c["body"] = (body or {}).get("body", c["body"])
                    return 200, c, {}
                if method == "DELETE":
                    pull.comments.remove(c)
                    return 204, None, {}
        return 404, {"message": "Not Found"}, {}

    def _create_review(self, pull: Pull, body: dict):
        if self.read_only:
            return 403, {"message": "Resource not accessible by integration",
                         "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"}, {}
        if self.rate_limit_reviews > 0:
            self.rate_limit_reviews -= 1
            return 403, {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you "
                                    "try again."}, {"Retry-After": str(self.retry_after)}
        if self.fail_reviews_with_5xx > 0:
            self.fail_reviews_with_5xx -= 1
            return 502, {"message": "Server Error"}, {}
        event = body.get("event")
        if event not in (None, "COMMENT", "APPROVE", "REQUEST_CHANGES"):
            return 422, {"message": "Unprocessable Entity", "errors": ["Invalid event"]}, {}
        if body.get("commit_id") not in (None, pull.head_sha):
            return 422, {"message": "Unprocessable Entity", "errors": ["commit_id is not part of the pull request"]}, {}
        text = body.get("body") or ""
        if len(text) > 65536:
            return 422, {"message": "Validation Failed", "errors": ["body is too long (maximum is 65536 characters)"]}, {}
        comments = body.get("comments") or []
        if event == "COMMENT" and not text and not comments:
            return 422, {"message": "Unprocessable Entity", "errors": ["Body can't be blank"]}, {}
        files = {f["filename"]: f for f in pull.files}
        if self.reject_comments and comments:
            return 422, {"message": "Unprocessable Entity",
                         "errors": ["Pull request review thread line must be part of the diff"]}, {}
        for c in comments:
            f = files.get(c.get("path"))
            if f is None:
                return 422, {"message": "Unprocessable Entity", "errors": ["Path could not be resolved"]}, {}
            if "position" in c or c.get("side", "RIGHT") != "RIGHT" or not isinstance(c.get("line"), int):
                return 422, {"message": "Unprocessable Entity", "errors": ["line and side RIGHT expected"]}, {}
            if c["line"] not in hunk_lines(f["filename"], f.get("patch") or ""):
                return 422, {"message": "Unprocessable Entity",
                             "errors": ["Pull request review thread line must be part of the diff"]}, {}
        rid = self.new_id()
        review = {"id": rid, "user": BOT, "body": text, "state": "COMMENTED", "commit_id": pull.head_sha,
                  "submitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "pull_request_url": f"{self.url}/repos/{self.repo}/pulls/{pull.number}",
                  "html_url": f"{self.url}/{self.repo}/pull/{pull.number}#pullrequestreview-{rid}"}
        pull.reviews.append(review)
        for c in comments:
            stored = self._comment(pull, c["path"], c["line"], c["body"], BOT)
            stored["pull_request_review_id"] = rid
            pull.comments.append(stored)
        if self.lose_next_review_response:
            self.lose_next_review_response = False
            return 502, {"message": "Server Error"}, {}
        return 200, review, {}
