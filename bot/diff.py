"""What a change touched: files, and for each file the lines of the new version that a review can
comment on (every line inside a hunk, RIGHT side). Parsed with unidiff from a git range, the staged
changes, or a pull request's files as the GitHub API lists them (one patch per file)."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError


class DiffError(Exception):
    pass


@dataclass
class FileChange:
    path: str  # the new path, repository-relative ('' never); the old one for a removed file
    status: str  # added | modified | removed | renamed
    old_path: str | None = None
    hunks: list[tuple[int, int]] = field(default_factory=list)  # [first, last] new-side lines of each hunk
    added: set[int] = field(default_factory=set)  # new-side lines added or changed
    patch_known: bool = True  # False when GitHub gave no patch (binary, or too large)

    def commentable(self, line: int) -> bool:
        """GitHub accepts a RIGHT-side comment only on a line inside one of the file's hunks."""
        return any(a <= line <= b for a, b in self.hunks)


@dataclass
class ChangeSet:
    files: dict[str, FileChange] = field(default_factory=dict)

    def paths(self) -> set[str]:
        """Every path the change touched, old names of renamed files included."""
        out = set(self.files)
        out.update(f.old_path for f in self.files.values() if f.old_path)
        return out

    def get(self, path: str) -> FileChange | None:
        return self.files.get(path)


def parse_patch(text: str) -> ChangeSet:
    """A unified diff of any number of files (git diff output)."""
    try:
        patch = PatchSet(text)
    except UnidiffParseError as exc:
        raise DiffError(f"cannot parse the diff: {exc}") from None
    out = ChangeSet()
    for pf in patch:
        fc = _file_change(pf)
        out.files[fc.path] = fc
    return out


def _strip(name: str | None) -> str | None:
    if name is None or name == "/dev/null":
        return None
    return name[2:] if name.startswith(("a/", "b/")) else name


def _file_change(pf) -> FileChange:
    old, new = _strip(pf.source_file), _strip(pf.target_file)
    if pf.is_added_file:
        status = "added"
    elif pf.is_removed_file:
        status = "removed"
    elif old and new and old != new:
        status = "renamed"
    else:
        status = "modified"
    fc = FileChange(new or old or pf.path, status, old if status == "renamed" else None)
    if status != "removed":
        for h in pf:
            if h.target_length > 0:
                fc.hunks.append((h.target_start, h.target_start + h.target_length - 1))
            fc.added.update(ln.target_line_no for ln in h if ln.is_added)
    return fc


def from_pr_files(files) -> ChangeSet:
    """The changes of a pull request from its files as the REST API lists them (PyGithub ``File``
    objects or dicts): ``filename``, ``status``, ``previous_filename``, ``patch`` (hunks only, absent
    for binary or very large files)."""
    out = ChangeSet()
    for f in files:
        get = f.get if isinstance(f, dict) else (lambda k, f=f: getattr(f, k, None))
        name, status, previous, patch = get("filename"), get("status"), get("previous_filename"), get("patch")
        status = {"changed": "modified", "copied": "added", "unchanged": "modified"}.get(status, status)
        if patch:
            old = previous or name
            header = (f"--- {'/dev/null' if status == 'added' else 'a/' + old}\n"
                      f"+++ {'/dev/null' if status == 'removed' else 'b/' + name}\n")
            try:
                parsed = PatchSet(header + patch + ("" if patch.endswith("\n") else "\n"))
            except UnidiffParseError as exc:
                raise DiffError(f"{name}: cannot parse the patch GitHub returned: {exc}") from None
            fc = _file_change(parsed[0]) if len(parsed) else FileChange(name, status)
            fc.path, fc.status = name, status
            fc.old_path = previous if status == "renamed" else None
        else:
            fc = FileChange(name, status, previous if status == "renamed" else None, patch_known=False)
        out.files[name] = fc
    return out


# ---------------------------------------------------------------- git


def git(root: Path, *args: str, check: bool = True) -> str:
    r = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise DiffError(f"git {' '.join(args)}: {r.stderr.strip() or 'failed'}")
    return r.stdout


def has_commit(root: Path, rev: str) -> bool:
    r = subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"{rev}^{{commit}}"], capture_output=True)
    return r.returncode == 0


def toplevel(path: Path) -> Path | None:
    r = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    return Path(r.stdout.strip()) if r.returncode == 0 else None


def merge_base(root: Path, a: str, b: str) -> str:
    return git(root, "merge-base", a, b).strip()


def from_git(root: Path, base: str, head: str | None = None, staged: bool = False) -> ChangeSet:
    """``git diff`` from ``base`` to ``head`` (a commit), to the index (``staged``), or to the
    working tree (neither)."""
    args = ["diff", "--no-color", "--no-ext-diff", "-M", "--unified=3"]
    if staged:
        args.append("--cached")
    args.append(base)
    if head:
        args.append(head)
    return parse_patch(git(root, *args))


def show(root: Path, rev: str, path: str) -> str | None:
    """A file's content at a revision (None if it does not exist there)."""
    r = subprocess.run(["git", "-C", str(root), "show", f"{rev}:{path}"], capture_output=True)
    return r.stdout.decode(errors="replace") if r.returncode == 0 else None
