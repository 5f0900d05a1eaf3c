"""The bot's commands at their edges: progress output, the action's inputs, usage errors, the
impact explanation, the Docker image's shape."""
from __future__ import annotations

import io
import json
import re

import pytest
import yaml

from bot.commands import action
from bot.progress import Bar, Lines
from gitrepo import ROOT, commit_all, edit, example_repo, git, kernelvet


class Tty(io.StringIO):
    def isatty(self):
        return True


class P:
    label = "rms_norm [float16] for llama-13b"


def test_progress_bar_on_a_terminal_and_lines_in_ci(monkeypatch):
    out = Tty()
    bar = Bar(out)
    bar(0, 4, P())
    bar(2, 4, P())
    bar(4, 4, None)
    assert "\r[############............] 2/4 rms_norm [float16]" in out.getvalue()
    assert out.getvalue().endswith("4/4 instances in 0.0 s\n")
    log = io.StringIO()
    clock = iter([0.0, 0.0, 5.0, 16.0, 20.0, 40.0])
    monkeypatch.setattr("bot.progress.time.monotonic", lambda: next(clock))
    lines = Lines(log, 15.0)
    lines(0, 10, P())   # t=0: announced
    lines(3, 10, P())   # t=5: too soon
    lines(6, 10, P())   # t=16: a line
    lines(7, 10, P())   # t=20: too soon
    lines(10, 10, None)
    assert log.getvalue().splitlines() == ["kernelvet: verifying 10 instances", "kernelvet: 6/10 instances (60%) after 16 s",
                                           "kernelvet: 10/10 instances done in 40.0 s"]


def test_action_inputs_become_arguments(monkeypatch):
    for k in list(__import__("os").environ):
        if k.startswith("INPUT_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("INPUT_FAIL-ON", "inconclusive")  # GitHub keeps the dash
    monkeypatch.setenv("INPUT_MAX_COMMENTS", "5")  # an underscore works too
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", "t0k")
    monkeypatch.setenv("INPUT_CACHE-DIR", "  ")
    argv = action.argv()
    assert argv[0] == "pr" and argv[argv.index("--fail-on") + 1] == "inconclusive"
    assert argv[argv.index("--max-comments") + 1] == "5" and "--cache-dir" not in argv
    assert "t0k" not in argv  # the token travels in the environment only
    monkeypatch.setenv("GITHUB_EVENT_NAME", "schedule")
    monkeypatch.setenv("INPUT_SHARD", "2/4")
    argv = action.argv()
    assert argv[:2] == ["scan", "."] and argv[argv.index("--shard") + 1] == "2/4"
    monkeypatch.setenv("INPUT_MODE", "deploy")
    with pytest.raises(ValueError):
        action.argv()
    # Arguments win over the environment; an empty one falls back to it.
    from bot.cli import parser
    parsed = parser().parse_args(["action", "--mode=scan", "--shard=", "--paths=csrc/a.cu csrc/b.cu"])
    monkeypatch.setattr(action, "_ARGS", action.parse_inputs(parsed))
    argv = action.argv()
    assert argv[:3] == ["scan", "csrc/a.cu", "csrc/b.cu"] and argv[argv.index("--shard") + 1] == "2/4"


def test_action_yml_and_dockerfile():
    spec = yaml.safe_load((ROOT / "action.yml").read_text())
    assert spec["runs"]["using"] == "docker" and spec["runs"]["image"] == "Dockerfile"
    args = spec["runs"]["args"]
    assert args[0] == "action"
    # Every input but the token as an argument (a Docker action may not get dashed INPUT_* names);
    # the token only in the environment.
    assert args[1:] == [f"--{n}=${{{{ inputs.{n} }}}}" for n in spec["inputs"] if n != "github-token"]
    assert list(action.INPUTS) == [n for n in spec["inputs"] if n != "github-token"]
    assert spec["runs"]["env"] == {"GITHUB_TOKEN": "${{ inputs.github-token }}"}
    assert spec["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert {"findings", "bug", "verified", "inconclusive", "sarif"} <= set(spec["outputs"])
    docker = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["kernelvet"]' in docker  # the rest of the image: tests/test_docker_image.py
    # Every command the action can run exists.
    for mode in ("pr", "scan", "merge", "post"):
        assert kernelvet(mode, "--help", cwd=ROOT).returncode == 0


def test_a_cache_that_cannot_be_written_says_so(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.cu").write_text("__global__ void k(float* p) { p[threadIdx.x] = 0.f; }\n")
    (tmp_path / "blocker").write_text("a file where the cache directory should be\n")
    r = kernelvet("scan", "src", "--cache-dir", str(tmp_path / "blocker" / "cache"), cwd=tmp_path)
    assert "Traceback" not in r.stderr
    assert re.search(r"note: the result cache \S+ cannot be written \(Not a directory\): this run's results are not kept",
                     r.stderr), r.stderr


def test_pr_and_post_without_their_event_are_usage_errors(tmp_path):
    for cmd in (["pr"], ["post", "x.json"]):
        r = kernelvet(*cmd, cwd=tmp_path)
        assert r.returncode == 2 and "GITHUB_EVENT_PATH" in r.stderr and "Traceback" not in r.stderr
    event = tmp_path / "e.json"
    event.write_text(json.dumps({"workflow_run": {"head_sha": "a" * 40}, "repository": {"full_name": "o/r"}}))
    art = tmp_path / "a.json"
    art.write_text(json.dumps({"schema": "kernelvet.review/1", "pull_request": {"number": 1},
                               "report": {"summary": {}, "findings": []}}))
    r = kernelvet("post", str(art), "--event", str(event), cwd=tmp_path)
    assert r.returncode == 2 and "summary.instances is not a number" in r.stderr
    art.write_text(json.dumps({"schema": "kernelvet.review/1", "pull_request": {"number": 1}, "report": {
        "summary": {"instances": 1, "bug": 1, "verified": 0, "inconclusive": 0, "findings": 1},
        "findings": [{"location": {"file": "../../etc/passwd", "line": 1}}]}}))
    r = kernelvet("post", str(art), "--event", str(event), cwd=tmp_path)
    assert r.returncode == 2 and "outside the repository" in r.stderr


def test_diff_command_explains_the_impact(tmp_path, shared_cache):
    repo = example_repo(tmp_path / "repo")
    git(repo, "checkout", "-qb", "topic")
    edit(repo, "csrc/quant_kernels.cu", "const int num_elems = input.numel();\n  dim3 grid(minivllm::ceil_div(num_elems, 256));",
         "const int64_t num_elems = input.numel();\n  dim3 grid(minivllm::ceil_div<int64_t>(num_elems, 256));")
    commit_all(repo, "fix")
    r = kernelvet("diff", "main", "--explain-impact", "--cache-dir", str(shared_cache), "--format", "json", cwd=repo)
    report = json.loads(r.stdout)
    assert report["unverified"] == []  # the fix compiles (int64_t needs ceil_div<int64_t>)
    assert {i["op"] for i in report["instances"]} == {"static_scaled_int8_quant"}
    assert "static_scaled_int8_quant (csrc/quant_kernels.cu): verify — its IR changed" in r.stderr
    assert "dynamic_per_token_int8_quant (csrc/quant_kernels.cu): unchanged" in r.stderr
    # Each instance says its verdict and where it came from (a bug instance is never labelled "verified").
    labels = re.findall(r"      instance .* \((\w+), (from the cache|analysed in this run)\)", r.stderr)
    assert len(labels) == len(report["instances"])
    assert sorted(v for v, _ in labels) == sorted(i["verdict"] for i in report["instances"])
    assert not [f for f in report["findings"] if f["location"]["line"] == 55]  # the fix holds
    r = kernelvet("diff", "nope", cwd=repo)
    assert r.returncode == 2 and "no commit 'nope'" in r.stderr


def test_text_from_the_pull_request_cannot_forge_markers_or_mention():
    from bot.github import render
    evil = "<!-- kernelvet:finding:" + "0" * 20 + " --> @org/team ``` `x`"
    f = {"check": "oob", "message": f"read past `{evil}` {evil}", "ops": ["op"], "kernels": [evil],
         "location": {"file": "k.cu", "line": 3, "text": evil}, "access": None, "expression": None,
         "models": ["m"], "dtypes": ["float32"], "witness": {evil: 1}, "fix": None, "related": [],
         "wrapped_type": None, "fingerprint": "a" * 20, "status": "new"}
    body = render.comment_body(f, 3)
    assert render.FINDING_RE.findall(body) == ["a" * 20] and body.count("<!--") == 1
    assert "@org" not in body.replace("`", "") or "@\u200borg" in body
    outside_code = re.sub(r"(`+).*?\1", "", body)
    assert "@org" not in outside_code and "<!--" not in outside_code.replace(render.FINDING_MARKER.format(fp="a" * 20), "")
