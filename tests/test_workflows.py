"""The README's example workflows, run: every kernelvet step is run as GitHub would run it (its
``with:`` over action.yml's defaults, the event, the workspace the steps before it leave), against
the fake GitHub API; the steps around it are checked for what kernelvet relies on (the checkout's
ref and depth, the artifact and SARIF paths, the permissions)."""
from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml

from actionrun import ACTION, pull_request_event, run_action, workflow_run_event
from fake_github import FakeGitHub
from gitrepo import ROOT, example_repo, git, pr_files
from test_pr_review import REPO, TOKEN, head_1

README = (ROOT / "README.md").read_text()


def readme_yaml() -> dict[str, dict]:
    """YAML blocks of the README, by the file name in their first comment line."""
    out = {}
    for block in re.findall(r"```yaml\n(.*?)```", README, re.S):
        first = block.splitlines()[0]
        if first.startswith("# "):
            out[first[2:].strip()] = yaml.safe_load(block)
    return out


WORKFLOWS = readme_yaml()


def steps(workflow: dict, job: str) -> list[dict]:
    return workflow["jobs"][job]["steps"]


def ours(step: dict) -> bool:
    return bool(re.search(r"(^|/)kernelvet@", step.get("uses", "")))


def step_using(workflow: dict, job: str, action: str) -> dict:
    return next(s for s in steps(workflow, job) if s.get("uses", "").startswith(action))


def kernelvet_steps(workflow: dict, job: str) -> list[dict]:
    found = [s for s in steps(workflow, job) if ours(s)]
    assert found, f"job {job} has no kernelvet step"
    for s in found:
        assert set(s.get("with", {})) <= set(ACTION["inputs"]), s
    return found


def restore(cache_src, repo) -> None:
    """What actions/cache does with the path .kernelvet-cache."""
    shutil.copytree(cache_src, repo / ".kernelvet-cache", dirs_exist_ok=True)


def save(repo, cache_dst) -> None:
    if (repo / ".kernelvet-cache").is_dir():
        shutil.copytree(repo / ".kernelvet-cache", cache_dst, dirs_exist_ok=True)


def test_readme_has_the_four_set_ups():
    assert set(WORKFLOWS) == {".github/workflows/kernelvet.yml", ".github/workflows/kernelvet-post.yml",
                              ".github/workflows/kernelvet-nightly.yml", ".pre-commit-config.yaml"}
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    config = WORKFLOWS[".pre-commit-config.yaml"]
    assert {h["id"] for r in config["repos"] for h in r["hooks"]} <= hooks


@pytest.fixture
def fake():
    with FakeGitHub(REPO, TOKEN, max_page=3) as f:
        yield f


def run_pr_workflow(tmp_path, fake, shared_cache, head_repo=None):
    wf = WORKFLOWS[".github/workflows/kernelvet.yml"]
    assert wf["permissions"]["pull-requests"] == "write"
    checkout = step_using(wf, "review", "actions/checkout")
    # Line numbers are the head's, and the base commit is there for the IR comparison.
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    assert checkout["with"]["fetch-depth"] == 0
    assert step_using(wf, "review", "actions/cache")["with"]["path"] == ".kernelvet-cache"
    repo = example_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD")
    head = head_1(repo)
    fake.add_pull(3, head, base, pr_files(repo, base, head), head_repo)
    restore(shared_cache, repo)
    (step,) = kernelvet_steps(wf, "review")
    event = pull_request_event(REPO, 3, head, base, head_repo)
    run = run_action(repo, tmp_path / "run", fake.url, event, "pull_request", step.get("with", {}),
                     {"github.token": TOKEN})
    save(repo, shared_cache)
    upload = step_using(wf, "review", "actions/upload-artifact")
    sarif = step_using(wf, "review", "github/codeql-action/upload-sarif")
    assert (repo / upload["with"]["path"]).is_file() and (repo / sarif["with"]["sarif_file"]).is_file()
    return run, repo, head, upload


def test_pull_request_workflow(tmp_path, fake, shared_cache):
    run, repo, head, _ = run_pr_workflow(tmp_path, fake, shared_cache)
    assert run.returncode == 1, run.stderr
    (post,) = fake.calls("POST", r"/pulls/3/reviews$")
    assert post.body["commit_id"] == head and len(post.body["comments"]) == 3


def test_fork_workflows(tmp_path, fake, shared_cache):
    run, repo, head, upload = run_pr_workflow(tmp_path, fake, shared_cache, head_repo="someone/minivllm")
    assert run.returncode == 1, run.stderr
    assert not fake.calls("POST", r"/reviews$")
    wf = WORKFLOWS[".github/workflows/kernelvet-post.yml"]
    assert wf.get("on", wf.get(True))["workflow_run"]["workflows"] == [WORKFLOWS[".github/workflows/kernelvet.yml"]["name"]]
    assert wf["permissions"] == {"actions": "read", "pull-requests": "write"}
    job = wf["jobs"]["post"]
    assert "head_repository.full_name != github.repository" in job["if"]
    assert not any(s.get("uses", "").startswith("actions/checkout") for s in job["steps"])  # no PR code
    download = step_using(wf, "post", "actions/download-artifact")
    assert download["with"]["name"] == upload["with"]["name"]
    workspace = tmp_path / "post-workspace"  # empty but for the downloaded artifact
    workspace.mkdir()
    shutil.copy(repo / upload["with"]["path"], workspace / upload["with"]["path"])
    (step,) = kernelvet_steps(wf, "post")
    posted = run_action(workspace, tmp_path / "post-run", fake.url, workflow_run_event(REPO, head, "someone/minivllm"),
                        "workflow_run", step.get("with", {}), {"github.token": TOKEN})
    assert posted.returncode == 1, posted.stderr
    (post,) = fake.calls("POST", r"/reviews$")
    assert post.body["commit_id"] == head and len(post.body["comments"]) == 3


def test_nightly_workflow(tmp_path, shared_cache):
    from sarif_kit.validate import validation_errors

    wf = WORKFLOWS[".github/workflows/kernelvet-nightly.yml"]
    assert wf["permissions"]["security-events"] == "write"
    repo = example_repo(tmp_path / "repo")
    shards = wf["jobs"]["scan"]["strategy"]["matrix"]["shard"]
    upload = step_using(wf, "scan", "actions/upload-artifact")
    report = tmp_path / "report"  # the report job's workspace: a checkout and the downloaded shards
    shutil.copytree(repo, report)
    event = {"repository": {"full_name": REPO}}
    for shard in shards:
        shard_repo = tmp_path / f"shard{shard}"  # each matrix job has its own checkout and cache
        shutil.copytree(repo, shard_repo)
        restore(shared_cache, shard_repo)
        (step,) = kernelvet_steps(wf, "scan")
        ctx = {"matrix.shard": shard, "github.token": TOKEN}
        run = run_action(shard_repo, tmp_path / f"run{shard}", "http://127.0.0.1:9", event, "schedule",
                         step["with"], ctx)
        assert run.returncode == 0, run.stderr  # fail-on: never
        assert "kernelvet: verifying" in run.stderr  # periodic progress lines in the CI log
        save(shard_repo, shared_cache)
        produced = shard_repo / re.sub(r"\$\{\{ matrix.shard \}\}", str(shard), upload["with"]["path"])
        shutil.copy(produced, report)
    (merge,) = kernelvet_steps(wf, "report")
    run = run_action(report, tmp_path / "merge-run", "http://127.0.0.1:9", event, "schedule", merge["with"],
                     {"github.token": TOKEN})
    assert run.returncode == 1, run.stderr  # the findings fail the job ...
    sarif_step = step_using(wf, "report", "github/codeql-action/upload-sarif")
    assert sarif_step["if"] == "always()"  # ... and the SARIF is uploaded all the same
    sarif = json.loads((report / sarif_step["with"]["sarif_file"]).read_text())
    assert validation_errors(sarif) == []
    assert len(sarif["runs"][0]["results"]) == 6  # the example's six planted bugs, from all shards
    assert "| `fused_add_rms_norm` |" in run.summary
