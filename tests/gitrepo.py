"""Temporary git repositories made from a copy of the example repository, and edits to them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from unidiff import PatchSet

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "minivllm"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, raw: bool = False) -> str:
    r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                       env={**os.environ, **GIT_ENV})
    assert r.returncode == 0, r.stderr
    return r.stdout if raw else r.stdout.strip()


def example_repo(path: Path) -> Path:
    shutil.copytree(EXAMPLE, path, ignore=shutil.ignore_patterns(".kernelvet-cache", "report.json"))
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "base")
    return path


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def edit(repo: Path, file: str, old: str, new: str, count: int = 1) -> None:
    p = repo / file
    text = p.read_text()
    assert text.count(old) >= count, f"{old!r} not in {file}"
    p.write_text(text.replace(old, new, count))


def line_of(repo: Path, file: str, needle: str) -> int:
    for i, line in enumerate((repo / file).read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {file}")


def pr_files(repo: Path, base: str, head: str) -> list[dict]:
    """The pull request's files as GET /pulls/N/files lists them (patch: hunks without headers)."""
    diff = git(repo, "diff", "-M", "--unified=3", base, head, raw=True)
    out = []
    for pf in PatchSet(diff):
        text = str(pf)
        patch = text[text.index("@@"):] if "@@" in text else None
        status = "added" if pf.is_added_file else "removed" if pf.is_removed_file else (
            "renamed" if pf.source_file[2:] != pf.target_file[2:] else "modified")
        item = {"filename": pf.path if not pf.is_removed_file else pf.source_file[2:], "status": status,
                "patch": patch[:-1] if patch and patch.endswith("\n") else patch, "additions": pf.added, "deletions": pf.removed}
        if status == "renamed":
            item["previous_filename"] = pf.source_file[2:]
        out.append(item)
    return out


def kernelvet(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={**base_env, **(env or {})})
