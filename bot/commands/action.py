"""kernelvet action: the GitHub Action's entry point (action.yml runs it in the Docker image). It
takes the action's inputs as ``--NAME=VALUE`` arguments (action.yml passes every input so), or else
from the INPUT_* variables GitHub sets, and runs ``pr``, ``scan``, ``merge`` or ``post`` with them.
The token comes from the environment (GITHUB_TOKEN) only."""
from __future__ import annotations

import glob
import json
import os
import re

from .common import fail

MODES = ("auto", "pr", "scan", "post", "merge")


# The inputs of action.yml but the token (which comes in the environment only).
INPUTS = ("mode", "manifest", "paths", "fail-on", "max-comments", "cache-dir", "sarif-file", "results-file",
          "baseline", "shard", "balance", "time-budget", "explain-impact")
_ARGS: dict[str, str] = {}


def register(sub) -> None:
    p = sub.add_parser("action", help="the GitHub Action's entry point (inputs as --NAME=VALUE or INPUT_* variables)")
    for name in INPUTS:
        p.add_argument(f"--{name}", dest=f"input_{name}", metavar="VALUE", help=f"the action's input {name}")
    p.set_defaults(func=run)


def parse_inputs(args) -> dict[str, str]:
    return {name: v for name in INPUTS if (v := getattr(args, f"input_{name}", None)) is not None}


def _input(name: str, default: str = "") -> str:
    value = _ARGS.get(name)
    if value is not None and value.strip() != "":
        return value.strip()
    # GitHub upper-cases the name and keeps its dashes (INPUT_FAIL-ON); accept underscores too.
    for key in (f"INPUT_{name.upper()}", f"INPUT_{name.upper().replace('-', '_')}"):
        value = os.environ.get(key)
        if value is not None and value.strip() != "":
            return value.strip()
    return default


def _event_name() -> str:
    name = os.environ.get("GITHUB_EVENT_NAME", "")
    if name:
        return name
    try:
        with open(os.environ.get("GITHUB_EVENT_PATH", "")) as f:
            data = json.load(f)
        return "pull_request" if "pull_request" in data else "workflow_run" if "workflow_run" in data else "push"
    except (OSError, ValueError):
        return "push"


def _check_inputs() -> None:
    """Every input with a fixed form is checked by name before anything runs: a typo such as
    ``fail-on: nevr`` must not quietly mean the default."""
    from .pr import FAIL_ON
    mode = _input("mode", "auto")
    if mode not in MODES:
        raise ValueError(f"input mode: {mode!r} is not one of {', '.join(MODES)}")
    fail_on = _input("fail-on", "bug")
    if fail_on not in FAIL_ON:
        raise ValueError(f"input fail-on: {fail_on!r} is not one of {', '.join(FAIL_ON)}")
    explain = _input("explain-impact", "false")
    if explain.lower() not in ("true", "false"):
        raise ValueError(f"input explain-impact: {explain!r} is not true or false")
    comments = _input("max-comments", "30")
    if not comments.isdigit():
        raise ValueError(f"input max-comments: {comments!r} is not a whole number")
    budget = _input("time-budget")
    if budget:
        try:
            ok = float(budget) > 0
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"input time-budget: {budget!r} is not a positive number of seconds")
    shard = _input("shard")
    if shard and not re.fullmatch(r"\d+/\d+", shard):
        raise ValueError(f"input shard: {shard!r} is not I/N (e.g. 2/4)")


def argv() -> list[str]:
    _check_inputs()
    mode = _input("mode", "auto")
    if mode == "auto":
        event = _event_name()
        mode = ("pr" if event.startswith("pull_request") else "post" if event == "workflow_run" else "scan")
    tok = _input("github-token")
    if tok:
        os.environ["GITHUB_TOKEN"] = tok
    common: list[str] = []
    sarif = _input("sarif-file", "kernelvet.sarif")
    if mode in ("pr", "scan"):
        for name, flag in (("manifest", "--manifest"), ("cache-dir", "--cache-dir"), ("baseline", "--baseline"),
                           ("time-budget", "--time-budget")):
            if _input(name):
                common += [flag, _input(name)]
    if mode == "merge":
        files = sorted({f for pattern in _input("results-file", "kernelvet-results.json").split()
                        for f in (glob.glob(pattern) or [pattern])})
        flags = [x for name in ("manifest", "baseline") if _input(name) for x in (f"--{name}", _input(name))]
        return ["merge", *files, *flags, "--sarif", sarif, "--root", _input("root", ".")]
    if mode == "post":
        return ["post", _input("results-file", "kernelvet-results.json"), "--max-comments",
                _input("max-comments", "30"), "--fail-on", _input("fail-on", "bug")]
    if mode == "pr":
        out = ["pr", "--root", _input("root", "."), *common, "--sarif", sarif, "--results",
               _input("results-file", "kernelvet-results.json"), "--max-comments", _input("max-comments", "30"),
               "--fail-on", _input("fail-on", "bug")]
        if _input("explain-impact", "false").lower() == "true":
            out.append("--explain-impact")
        return out
    paths = _input("paths", ".").split()
    out = ["scan", *paths, *common, "--sarif", sarif, "--progress"]
    if len(paths) > 1 or (paths and not os.path.isdir(paths[0])):
        out += ["--root", _input("root", ".")]
    if _input("shard"):
        out += ["--shard", _input("shard"), "--results", _input("results-file", "kernelvet-results.json")]
        previous = sorted({f for pattern in _input("balance", "").split() for f in glob.glob(pattern)})
        if previous:
            out += ["--balance", *previous]
    return out


def run(args) -> int:
    from ..cli import main
    try:
        _ARGS.clear()
        _ARGS.update(parse_inputs(args))
        command = argv()
    except ValueError as exc:
        return fail(f"kernelvet: {exc}")
    code = main(command)
    if command[0] in ("scan", "merge"):
        from .pr import apply_fail_on
        return apply_fail_on(code, _input("fail-on", "bug"))
    return code
