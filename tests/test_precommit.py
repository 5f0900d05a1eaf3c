"""The pre-commit hook, end to end with ``pre-commit try-repo`` on a temporary git repository: it
verifies only the ops the staged files reach, from the cache when their IR did not change."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import yaml

from gitrepo import GIT_ENV, ROOT, edit, example_repo, git, kernelvet

HOOKS = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
README_HOOKS = re.search(r"# \.pre-commit-config\.yaml\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)


def test_hooks_select_cuda_and_cpp_files():
    from identify.identify import tags_from_filename

    main = HOOKS["kernelvet"]
    assert {"cuda", "c++"} <= set(main["types_or"])
    for name in ("a.cu", "b.cuh", "c.h", "d.hpp", "kernelvet.yaml"):
        assert tags_from_filename(name) & set(main["types_or"]), name
    assert not tags_from_filename("e.py") & set(main["types_or"])
    pattern = re.compile(HOOKS["kernelvet-files"]["files"])  # for an identify without the cuda tag
    assert all(pattern.search(n) for n in ("x/a.cu", "b.cuh", "c.h", "d.hpp", "kernelvet.yaml", "m/c.json"))
    assert not any(pattern.search(n) for n in ("a.py", "README.md", "x.cuda.txt"))


def _try_repo(repo, tmp_path):
    hook_ids = [h["id"] for r in yaml.safe_load(README_HOOKS)["repos"] for h in r["hooks"]]
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env = {k: v for k, v in env.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    pre_commit = [sys.executable, "-m", "pre_commit"]
    r = subprocess.run([*pre_commit, "try-repo", str(ROOT), *hook_ids], cwd=repo, capture_output=True, text=True,
                       env=env)
    return r, r.stdout + r.stderr


def test_try_repo_reports_what_the_staged_change_introduces(tmp_path):
    repo = example_repo(tmp_path / "repo")
    # Staged: a comment that moves a launcher with findings down, and files no op depends on. The
    # findings were there before: the commit does not introduce them, so the hook passes, as
    # `kernelvet diff --staged` does.
    edit(repo, "csrc/quant_kernels.cu", "void static_scaled_int8_quant(",
         "// Quantise with one scale for the whole tensor.\nvoid static_scaled_int8_quant(")
    (repo / "notes.yaml").write_text("a: 1\n")
    (repo / "README.md").write_text("changed\n")
    git(repo, "add", "-A")
    staged = kernelvet("diff", "--staged", cwd=repo)
    assert staged.returncode == 0, staged.stdout + staged.stderr
    r, out = _try_repo(repo, tmp_path)
    assert r.returncode == 0, out
    assert "narrowing" not in out and "Traceback" not in out
    git(repo, "commit", "-qm", "comment")

    # Staged: a change to the op's code (its IR changes) that keeps its bug. The hook fails on the
    # op's findings, as diff --staged does, and says how to baseline what was there before.
    edit(repo, "csrc/quant_kernels.cu", "const int num_elems = input.numel();",
         "const int num_elems = input.numel();  // elements\n  (void)num_elems;")
    git(repo, "add", "-A")
    staged = kernelvet("diff", "--staged", cwd=repo)
    assert staged.returncode == 1
    r, out = _try_repo(repo, tmp_path)
    assert r.returncode == 1, out
    assert "csrc/quant_kernels.cu:56:25: narrowing" in out  # moved down by the comment committed above
    assert "rms_norm" not in out  # an op the staged files do not reach
    assert "--write-baseline .kernelvet-baseline.json" in out
    assert "Traceback" not in out
