"""Running the GitHub Action's entry point as GitHub runs it: the inputs as INPUT_* variables (the
defaults from action.yml, overridden by a workflow step's ``with:``), the event file, and the
files behind GITHUB_OUTPUT and GITHUB_STEP_SUMMARY."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from gitrepo import ROOT, kernelvet

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def evaluate(value, context: dict) -> str:
    """The ``${{ ... }}`` expressions of a workflow value that these tests give values to."""
    def sub(m):
        expr = m.group(1).strip()
        if expr not in context:
            raise KeyError(f"no test value for the expression {expr!r}")
        return str(context[expr])
    return re.sub(r"\$\{\{(.*?)\}\}", sub, str(value))


def inputs(with_: dict, context: dict) -> dict:
    unknown = set(with_) - set(ACTION["inputs"])
    assert not unknown, f"inputs not declared in action.yml: {unknown}"
    return {name: evaluate(with_.get(name, spec.get("default", "")), context) for name, spec in ACTION["inputs"].items()}


def input_env(with_: dict, context: dict) -> dict:
    """The INPUT_* variables GitHub sets (upper case, dashes kept) and action.yml's runs.env."""
    values = inputs(with_, context)
    env = {f"INPUT_{name.upper()}": value for name, value in values.items()}
    ctx = {**context, **{f"inputs.{n}": v for n, v in values.items()}}
    env.update({k: evaluate(v, ctx) for k, v in ACTION["runs"].get("env", {}).items()})
    return env


def action_args(with_: dict, context: dict) -> list[str]:
    """action.yml's runs.args with the inputs substituted, as the runner passes them to the image."""
    values = inputs(with_, context)
    ctx = {**context, **{f"inputs.{n}": v for n, v in values.items()}}
    return [evaluate(a, ctx) for a in ACTION["runs"]["args"]]


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    summary: str
    outputs: dict


def run_action(repo: Path, tmp: Path, api_url: str, event: dict, event_name: str, with_: dict,
               context: dict, drop_dashed_inputs: bool = True) -> Run:
    tmp.mkdir(parents=True, exist_ok=True)
    event_path = tmp / "event.json"
    event_path.write_text(json.dumps(event))
    summary, output = tmp / "summary.md", tmp / "output.txt"
    summary.write_text("")
    output.write_text("")
    env = {"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event_path),
           "GITHUB_API_URL": api_url, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           "GITHUB_REPOSITORY": event["repository"]["full_name"], "GITHUB_WORKSPACE": str(repo),
           "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "1", **input_env(with_, context)}
    if drop_dashed_inputs:  # as some runners do: INPUT_* names with a dash never arrive
        env = {k: v for k, v in env.items() if not (k.startswith("INPUT_") and "-" in k)}
    r = kernelvet(*action_args(with_, context), cwd=repo, env=env)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return Run(r.returncode, r.stdout, r.stderr, summary.read_text(), outputs)


def pull_request_event(repo_name: str, number: int, head: str, base: str, head_repo: str | None = None) -> dict:
    return {"action": "synchronize", "number": number, "repository": {"full_name": repo_name},
            "pull_request": {"number": number, "head": {"sha": head, "repo": {"full_name": head_repo or repo_name}},
                             "base": {"sha": base, "repo": {"full_name": repo_name}}}}


def workflow_run_event(repo_name: str, head: str, head_repo: str) -> dict:
    return {"action": "completed", "repository": {"full_name": repo_name},
            "workflow_run": {"head_sha": head, "head_repository": {"full_name": head_repo}, "conclusion": "failure",
                             "event": "pull_request", "pull_requests": []}}
