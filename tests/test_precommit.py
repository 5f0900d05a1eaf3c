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


def test_try_repo_verifies_the_staged_kernel_file_from_the_cache(tmp_path):
    repo = example_repo(tmp_path / "repo")
    # An earlier commit's hook run left the cache (.kernelvet-cache) with the quant ops.
    warm = kernelvet("pre-commit", "csrc/quant_kernels.cu", cwd=repo)
    assert warm.returncode == 1, warm.stderr
    # Staged: a comment that moves the launcher down, and files no op depends on.
    edit(repo, "csrc/quant_kernels.cu", "void static_scaled_int8_quant(",
         "// Quantise with one scale for the whole tensor.\nvoid static_scaled_int8_quant(")
    (repo / "notes.yaml").write_text("a: 1\n")
    (repo / "README.md").write_text("changed\n")
    git(repo, "add", "-A")
    hook_ids = [h["id"] for r in yaml.safe_load(README_HOOKS)["repos"] for h in r["hooks"]]
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env = {k: v for k, v in env.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    pre_commit = [sys.executable, "-m", "pre_commit"]
    r = subprocess.run([*pre_commit, "try-repo", str(ROOT), *hook_ids], cwd=repo, capture_output=True, text=True,
                       env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "csrc/quant_kernels.cu:56:25: narrowing" in out  # moved down by the staged comment
    assert "12 instances: 12 bug" in out and "(12 from the cache)" in out
    assert "rms_norm" not in out  # an op the staged files do not reach
    assert "Traceback" not in out
