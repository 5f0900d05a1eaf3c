"""Pull-request reviews end to end: the Action's entry point (kernelvet action) on a git repository
made from the example, against the fake GitHub server, through the real PyGithub client; the
assertions are on what the server received and stored."""
from __future__ import annotations

import json
import time

import pytest
from github import Auth, Github, GithubException

from actionrun import pull_request_event, run_action, workflow_run_event
from fake_github import FakeGitHub, hunk_lines
from gitrepo import commit_all, edit, example_repo, git, line_of, pr_files

REPO = "acme/minivllm"
TOKEN = "ghs_test_token_0123456789"
QUANT = "csrc/quant_kernels.cu"
ACT = "csrc/activation_kernels.cu"


def head_1(repo):
    """A pull request that renames variables in two ops (their IR changes, their bugs stay) and
    edits a README (a file no op depends on)."""
    edit(repo, ACT, "const vec b = yv[i];\n    vec r;\n#pragma unroll\n    for (int j = 0; j < VEC; ++j) {\n"
                    "      r.val[j] = static_cast<scalar_t>(gelu_tanh(static_cast<float>(a.val[j])) * "
                    "static_cast<float>(b.val[j]));",
         "const vec gate = yv[i];\n    vec r;\n#pragma unroll\n    for (int j = 0; j < VEC; ++j) {\n"
         "      r.val[j] = static_cast<scalar_t>(gelu_tanh(static_cast<float>(a.val[j])) * "
         "static_cast<float>(gate.val[j]));")
    edit(repo, QUANT, "const int num_elems = input.numel();\n  dim3 grid(minivllm::ceil_div(num_elems, 256));",
         "const int count = input.numel();\n  dim3 grid(minivllm::ceil_div(count, 256));")
    edit(repo, QUANT, "scale.data_ptr<float>(), num_elems);", "scale.data_ptr<float>(), count);")
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nOne more line.\n")
    return commit_all(repo, "rename")


class Harness:
    def __init__(self, tmp_path, cache_dir, max_page=100):
        self.repo = example_repo(tmp_path / "repo")
        self.base = git(self.repo, "rev-parse", "HEAD")
        self.tmp = tmp_path
        self.cache = cache_dir
        self.fake = FakeGitHub(REPO, TOKEN, max_page=max_page)
        self.runs = 0

    def open_pull(self, head: str, number: int = 7, head_repo: str | None = None):
        return self.fake.add_pull(number, head, self.base, pr_files(self.repo, self.base, head), head_repo)

    def push(self, pull, head: str):
        pull.head_sha = head
        pull.files = pr_files(self.repo, self.base, head)

    def action(self, pull, with_: dict | None = None, head_repo: str | None = None, cache: bool = True):
        self.runs += 1
        event = pull_request_event(REPO, pull.number, pull.head_sha, self.base, head_repo)
        with_ = {**({"cache-dir": str(self.cache)} if cache else {}), **(with_ or {})}
        return run_action(self.repo, self.tmp / f"run{self.runs}", self.fake.url, event, "pull_request", with_,
                          {"github.token": TOKEN})


@pytest.fixture
def h(tmp_path, shared_cache):
    harness = Harness(tmp_path, shared_cache, max_page=2)  # pages of two: files and comments come in pages
    with harness.fake:
        yield harness


def bodies(pull):
    return [c["body"] for c in pull.comments]


def test_review_then_rerun_then_push(h):
    head = head_1(h.repo)
    pull = h.open_pull(head)
    run = h.action(pull)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and TOKEN not in run.stdout + run.stderr + run.summary

    # One review, COMMENT, on the head commit, with an inline comment per finding on a changed line.
    posts = h.fake.calls("POST", r"/pulls/7/reviews$")
    assert len(posts) == 1
    sent = posts[0].body
    assert sent["event"] == "COMMENT" and sent["commit_id"] == head
    act_line, quant_line = line_of(h.repo, ACT, "const vec gate = yv[i];"), line_of(h.repo, QUANT, "const int count")
    placed = {(c["path"], c["line"]) for c in sent["comments"]}
    # gelu_and_mul's two JAIS findings (the misaligned x load, the y load past the row) and the
    # launcher's narrowing: all three on lines of the diff's hunks.
    assert placed == {(ACT, act_line - 1), (ACT, act_line), (QUANT, quant_line)}
    files = {f["filename"]: f for f in pull.files}
    for c in sent["comments"]:
        assert c["side"] == "RIGHT" and c["line"] in hunk_lines(c["path"], files[c["path"]]["patch"])
        assert "<!-- kernelvet:finding:" in c["body"]
    narrowing = next(c["body"] for c in sent["comments"] if c["path"] == QUANT)
    assert "```suggestion\n  const int64_t count = input.numel();\n```" in narrowing
    assert "narrowing" in narrowing and "`input.numel()`" in narrowing and "static_scaled_int8_quant" in narrowing
    assert "num_tokens=" in narrowing and "llama-13b" in narrowing
    oob = next(c["body"] for c in sent["comments"] if c["path"] == ACT and c["line"] == act_line)
    assert "`yv[i]`" in oob and "jais-13b" in oob and "gelu_and_mul" in oob and "suggestion" not in oob
    # The summary: ops x models, in the review body and the job summary.
    assert "| op | llama-13b | mistral-7b |" in sent["body"] and "❌ bug" in sent["body"]
    assert "| `gelu_and_mul` |" in run.summary and "3 findings" in run.summary
    assert "#### Findings" in run.summary and f"`{QUANT}:{quant_line}`" in run.summary  # every finding listed
    assert run.outputs["findings"] == "3" and run.outputs["sarif"] == "kernelvet.sarif"
    sarif = json.loads((h.repo / "kernelvet.sarif").read_text())
    assert sorted(r["ruleId"] for r in sarif["runs"][0]["results"]) == ["misaligned", "narrowing", "oob"]
    # Files and comments were read page by page (two per page).
    assert len(h.fake.calls("GET", r"/pulls/7/files$")) == 2
    # Workflow annotations, so that a run that cannot post still shows each finding on the diff.
    assert f"::error file={QUANT},line={quant_line},col=" in run.stdout
    assert run.stdout.count("::error file=") == 3

    # A re-run on the same commit: nothing new is posted, nothing is duplicated. Its requests do not
    # grow with the comments already there: GitHub sends top-level comments without in_reply_to_id,
    # and no comment is fetched again one by one.
    before = list(bodies(pull))
    for i in range(6):
        h.fake.comment(7, QUANT, quant_line, f"note {i}")
    gets_before = len(h.fake.calls("GET", ""))
    rerun = h.action(pull)
    assert not h.fake.calls("GET", r"/pulls/comments/\d+$")
    rerun_gets = len(h.fake.calls("GET", "")) - gets_before
    for i in range(6):
        h.fake.comment(7, QUANT, quant_line, f"more {i}")
    gets_before = len(h.fake.calls("GET", ""))
    assert h.action(pull).returncode == 1
    # Pages of two: six more comments are three more pages to list, and no other read.
    assert len(h.fake.calls("GET", "")) - gets_before == rerun_gets + 3
    assert not h.fake.calls("GET", r"/pulls/comments/\d+$")
    pull.comments[:] = [c for c in pull.comments if not c["body"].startswith(("note ", "more "))]
    assert rerun.returncode == 1, rerun.stderr
    assert len(h.fake.calls("POST", r"/reviews$")) == 1
    assert bodies(pull) == before
    assert not h.fake.calls("PATCH", r"/pulls/comments/") and not h.fake.calls("DELETE", r"/pulls/comments/")

    # Someone answers the oob comment; then a push moves that code down and undoes the quant edit.
    act_comment = next(c for c in pull.comments if c["path"] == ACT and c["line"] == act_line)
    h.fake.reply(7, act_comment["id"], "@someone this is real, tracking in #12")
    quant_comment = next(c for c in pull.comments if c["path"] == QUANT)
    edit(h.repo, ACT, "    const vec gate = yv[i];", "    // the gate half of the row\n    const vec gate = yv[i];")
    git(h.repo, "checkout", h.base, "--", QUANT)
    head2 = commit_all(h.repo, "move, revert quant")
    h.push(pull, head2)
    third = h.action(pull)
    assert third.returncode == 1, third.stderr
    posts = h.fake.calls("POST", r"/reviews$")
    assert len(posts) == 2
    assert [(c["path"], c["line"]) for c in posts[1].body["comments"]] == [(ACT, act_line + 1)]
    assert posts[1].body["commit_id"] == head2
    # The quant comment (no reply) is deleted; the answered one is kept and marked resolved.
    deleted = [r.path for r in h.fake.calls("DELETE", r"/pulls/comments/")]
    assert deleted == [f"/repos/{REPO}/pulls/comments/{quant_comment['id']}"]
    old = next(c for c in pull.comments if c["id"] == act_comment["id"])
    assert old["body"].startswith("**Resolved**") and "kernelvet:finding:" not in old["body"]
    # The first review's summary now points to the newer one.
    first_review = pull.reviews[0]
    assert "superseded" in first_review["body"] and "kernelvet:review" not in first_review["body"]
    live = [c for c in pull.comments if "kernelvet:finding:" in c["body"]]
    assert sorted((c["path"], c["line"]) for c in live) == [(ACT, act_line - 1), (ACT, act_line + 1)]


def test_secondary_rate_limit_is_retried_after_retry_after(h):
    pull = h.open_pull(head_1(h.repo))
    h.action(pull, {"fail-on": "never"})  # warm the cache: the timing below is the retry's
    pull.comments.clear()
    pull.reviews.clear()
    h.fake.requests.clear()
    h.fake.rate_limit_reviews = 1
    h.fake.retry_after = 2
    t = time.monotonic()
    run = h.action(pull, {"fail-on": "never"})
    assert run.returncode == 0, run.stderr
    posts = h.fake.calls("POST", r"/reviews$")
    assert len(posts) == 2 and len(pull.reviews) == 1  # refused once, posted once
    assert time.monotonic() - t >= 2


def test_a_lost_response_does_not_duplicate_the_review(h):
    pull = h.open_pull(head_1(h.repo))
    h.fake.lose_next_review_response = True
    run = h.action(pull)
    assert run.returncode == 1, run.stderr
    assert len(pull.reviews) == 1 and len(h.fake.calls("POST", r"/reviews$")) == 1
    assert len([c for c in pull.comments if "kernelvet:finding:" in c["body"]]) == 3


def test_findings_outside_the_diff_go_to_the_body(h):
    # The launcher's block variable is renamed: the op's IR changes, and its finding, in the kernel
    # (line 37), is on a line the diff does not touch.
    edit(h.repo, QUANT, "dim3 block(32, minivllm::kTokensPerBlock);", "dim3 threads(32, minivllm::kTokensPerBlock);")
    edit(h.repo, QUANT, "<<<grid, block, 0, stream>>>(\n        out.data_ptr<int8_t>(), scales",
         "<<<grid, threads, 0, stream>>>(\n        out.data_ptr<int8_t>(), scales")
    pull = h.open_pull(commit_all(h.repo, "alias"))
    run = h.action(pull)
    assert run.returncode == 1, run.stderr
    review = h.fake.calls("POST", r"/reviews$")[0].body
    assert review["comments"] == []  # the failing access (line 37) is not in a hunk
    assert "Findings outside the lines this pull request changes" in review["body"]
    assert f"`{QUANT}:37`" in review["body"]


def test_max_comments_puts_the_rest_in_the_body(h):
    pull = h.open_pull(head_1(h.repo))
    run = h.action(pull, {"max-comments": "1"})
    assert run.returncode == 1, run.stderr
    review = h.fake.calls("POST", r"/reviews$")[0].body
    assert len(review["comments"]) == 1
    assert "2 more findings (over the limit of inline comments per review)" in review["body"]


def test_read_only_token_reports_clearly_and_keeps_the_findings(h):
    pull = h.open_pull(head_1(h.repo))
    h.fake.read_only = True
    run = h.action(pull)
    assert run.returncode == 1  # the findings decide, not the failed post
    assert "::error::GitHub refused the review (403: Resource not accessible by integration)" in run.stdout
    assert "3 findings" in run.summary
    assert len(json.loads((h.repo / "kernelvet.sarif").read_text())["runs"][0]["results"]) == 3
    assert not pull.reviews


def test_a_422_falls_back_to_the_body(h):
    pull = h.open_pull(head_1(h.repo))
    # GitHub's diff disagrees with the listed files (a push between listing and posting): the
    # review with inline comments is rejected as a whole.
    h.fake.reject_comments = True
    run = h.action(pull)
    assert run.returncode == 1, run.stderr
    posts = h.fake.calls("POST", r"/reviews$")
    assert len(posts) == 2 and len(posts[0].body["comments"]) == 3 and posts[1].body["comments"] == []
    assert "GitHub rejected the inline comments" in run.stdout
    body = pull.reviews[0]["body"]
    assert "Findings outside the lines this pull request changes" in body and f"`{QUANT}:" in body


def test_the_fake_server_rejects_comments_outside_the_hunks(h):
    """The 422 kernelvet avoids is real here: the same client, a line outside every hunk."""
    pull = h.open_pull(head_1(h.repo))
    gh = Github(auth=Auth.Token(TOKEN), base_url=h.fake.url, retry=None)
    pr = gh.get_repo(REPO).get_pull(7)
    with pytest.raises(GithubException) as err:
        pr.create_review(commit=gh.get_repo(REPO).get_commit(pull.head_sha), body="x", event="COMMENT",
                         comments=[{"path": QUANT, "line": 1, "side": "RIGHT", "body": "x"}])
    assert err.value.status == 422 and "must be part of the diff" in str(err.value.data)


def test_fork_pull_request_writes_the_artifact_and_the_workflow_run_posts_it(h):
    head = head_1(h.repo)
    pull = h.open_pull(head, head_repo="contributor/minivllm")
    run = h.action(pull, head_repo="contributor/minivllm")
    assert run.returncode == 1, run.stderr
    assert "::notice::pull request from a fork" in run.stdout
    assert not h.fake.calls("POST", r"/reviews$")  # a read-only token: not even tried
    artifact = h.repo / "kernelvet-results.json"
    data = json.loads(artifact.read_text())
    assert data["schema"] == "kernelvet.review/1" and data["pull_request"]["number"] == 7

    # The privileged workflow: only the artifact (in an empty directory), no checkout.
    post_dir = h.tmp / "post"
    post_dir.mkdir()
    (post_dir / "kernelvet-results.json").write_text(artifact.read_text())
    event = workflow_run_event(REPO, head, "contributor/minivllm")
    posted = run_action(post_dir, h.tmp / "post-run", h.fake.url, event, "workflow_run", {}, {"github.token": TOKEN})
    assert posted.returncode == 1, posted.stderr
    review = h.fake.calls("POST", r"/reviews$")
    assert len(review) == 1 and len(review[0].body["comments"]) == 3
    assert "| op |" in posted.summary

    # An artifact for another commit is refused.
    event = workflow_run_event(REPO, "0" * 40, "contributor/minivllm")
    refused = run_action(post_dir, h.tmp / "post-run2", h.fake.url, event, "workflow_run", {}, {"github.token": TOKEN})
    assert refused.returncode == 2 and "nothing posted" in refused.stderr
    assert len(h.fake.calls("POST", r"/reviews$")) == 1


def test_a_comment_whose_text_changed_is_edited_in_place(h):
    pull = h.open_pull(head_1(h.repo))
    assert h.action(pull).returncode == 1
    quant = next(c for c in pull.comments if c["path"] == QUANT)
    expected = quant["body"]
    # As a run with an older witness or model list would have written it.
    quant["body"] = expected.replace("llama-13b", "llama-7b")
    h.fake.requests.clear()
    assert h.action(pull).returncode == 1
    patches = h.fake.calls("PATCH", r"/pulls/comments/")
    assert [r.path for r in patches] == [f"/repos/{REPO}/pulls/comments/{quant['id']}"]
    assert quant["body"] == expected
    assert not h.fake.calls("POST", r"/reviews$") and not h.fake.calls("DELETE", r"/pulls/comments/")


def test_an_unreachable_api_fails_over_in_seconds(tmp_path, shared_cache):
    """Connection refused: the files come from git and the review is reported as not posted, in
    seconds (one immediate retry), not after minutes of backed-off retries."""
    import socket
    harness = Harness(tmp_path, shared_cache)
    head = head_1(harness.repo)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    event = pull_request_event(REPO, 7, head, harness.base, None)
    t0 = time.monotonic()
    run = run_action(harness.repo, tmp_path / "run", f"http://127.0.0.1:{port}", event, "pull_request",
                     {"cache-dir": str(shared_cache)}, {"github.token": TOKEN})
    api_seconds = time.monotonic() - t0
    assert run.returncode == 1, run.stderr
    out = run.stdout + run.stderr
    assert "cannot list the pull request's files through the API" in out and "using git instead" in out
    assert "posting the review failed" in out and "Traceback" not in out and TOKEN not in out
    assert api_seconds < 30, api_seconds  # before: about 126 s of retries; the verification is cached


def test_a_finding_caused_by_a_manifest_change_is_commented_on_the_changed_manifest_line(tmp_path, shared_cache):
    """The pull request adds JAIS to the manifest; JAIS's rows of odd length make gelu_and_mul read
    past the row. The kernel did not change: the comment goes on the added manifest lines."""
    harness = Harness(tmp_path, shared_cache)
    jais = "  - config: models/JAISLMHeadModel.json\n    name: jais-13b\n"
    manifest = (harness.repo / "kernelvet.yaml").read_text()
    assert jais in manifest
    (harness.repo / "kernelvet.yaml").write_text(manifest.replace(jais, ""))
    harness.base = commit_all(harness.repo, "without JAIS")
    (harness.repo / "kernelvet.yaml").write_text(manifest)
    head = commit_all(harness.repo, "add JAIS")
    with harness.fake:
        pull = harness.open_pull(head)
        run = harness.action(pull)
        assert run.returncode == 1, run.stderr
        [post] = harness.fake.calls("POST", r"/pulls/7/reviews$")
        jais_line = line_of(harness.repo, "kernelvet.yaml", "config: models/JAISLMHeadModel.json")
        placed = sorted((c["path"], c["line"]) for c in post.body["comments"])
        assert placed and set(placed) == {("kernelvet.yaml", jais_line)}, placed
        body = post.body["comments"][0]["body"]
        assert "caused by" in body and "activation_kernels.cu:" in body and "jais-13b" in body
        assert "```suggestion" not in body
