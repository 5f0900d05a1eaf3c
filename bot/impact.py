"""Which instances a change can affect, and why.

1. Files: an op is affected when its file, or a file its translation unit includes (the textual
   include graph, transitively), changed; or a source file beside them (where the engine looks for
   the definition of a function the op's file only declares) that defines a name they use.
2. IR: when the base revision is at hand, an affected op whose IR hash (bot/irhash.py) is the
   same at the base and now is not re-verified: the edit changed comments, formatting, or code the
   op does not reach (another kernel of the same file).
3. Manifest: when the manifest or a model config it reads changed, exactly the instances that
   differ from the base's (instance equality: binding with model fields substituted, dtype) are
   affected; a model added with the sizes of an existing one adds no instance.

Without a base revision (pre-commit, a checkout without history) step 2 is left to the cache,
which re-verifies only what it has not seen.
"""
from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from analyzers.api import OpNotFound, Workspace
from analyzers.frontend.crosstu import SOURCE_SUFFIXES, definition_pattern, sources_named_after
from analyzers.frontend.parse import ParseError

from .cache import closure_key, linked_keys
from .diff import ChangeSet
from .irhash import op_hash
from .manifest import LoadedManifest, ManifestError, Planned, expand, load


@dataclass
class OpImpact:
    op_index: int
    name: str
    file: str
    launcher: str
    reasons: list[str] = field(default_factory=list)  # what changed that the op depends on
    decision: str = "unaffected"  # verify | unchanged | unaffected
    detail: str = ""
    planned: list[Planned] = field(default_factory=list)


@dataclass
class Impact:
    ops: list[OpImpact]
    base: str | None
    reached: set[str] = field(default_factory=set)  # every file an op of the manifest reaches

    @property
    def planned(self) -> list[Planned]:
        return [p for o in self.ops for p in o.planned]

    def explain(self, report=None) -> str:
        ran = {id(ir.planned): ir for ir in report.instances} if report is not None else {}
        lines = [f"impact (base {self.base[:12]}):" if self.base else "impact (no base revision: the cache decides "
                 "what is verified again):"]
        for o in self.ops:
            lines.append(f"  {o.name} ({o.file}): {o.decision}" + (f" — {o.detail}" if o.detail else ""))
            for r in o.reasons:
                lines.append(f"      because {r}")
            for p in o.planned:
                how = ""
                if id(p) in ran:
                    ir = ran[id(p)]
                    how = f" ({ir.result.verdict}, {'from the cache' if ir.cached else 'analysed in this run'})"
                lines.append(f"      instance {p.label}{how}")
        n = len(self.planned)
        lines.append(f"  {n} instance{'s' if n != 1 else ''} of {sum(1 for o in self.ops if o.planned)} ops to report")
        return "\n".join(lines) + "\n"


class BaseTree:
    """Files of a git revision, written on demand into a temporary directory (for parsing the
    base's version of an op; never built or run)."""

    def __init__(self, root: Path, rev: str):
        self.root, self.rev = root, rev
        self._tmp = tempfile.TemporaryDirectory(prefix="kernelvet-base-")
        self.dir = Path(self._tmp.name)

    def materialise(self, paths) -> None:
        paths = sorted(set(paths))
        if not paths:
            return
        # One git process for every file: ``cat-file --batch`` answers "<sha> blob <size>\n<data>\n".
        query = "".join(f"{self.rev}:{p}\n" for p in paths).encode()
        out = subprocess.run(["git", "-C", str(self.root), "cat-file", "--batch"], input=query,
                             capture_output=True).stdout
        pos = 0
        for p in paths:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].split()
            pos = nl + 1
            if len(header) < 3 or header[1] != b"blob":
                continue  # absent at the base
            size = int(header[2])
            target = self.dir / p
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(out[pos:pos + size])
            pos += size + 1

    def matching(self, patterns: list[str]) -> list[str]:
        """Paths of the revision matching ``patterns`` (plain paths, or globs)."""
        plain = [p for p in patterns if not any(ch in p for ch in "*?[")]
        globs = [p for p in patterns if p not in plain]
        if not globs:
            return plain
        names = subprocess.run(["git", "-C", str(self.root), "ls-tree", "-r", "--name-only", self.rev],
                               capture_output=True, text=True).stdout.splitlines()
        return plain + [n for n in names if any(fnmatch.fnmatch(n, g) for g in globs)]

    def close(self) -> None:
        self._tmp.cleanup()


def _relative(paths, root: Path) -> set[str]:
    out = set()
    for p in paths:
        try:
            out.add(str(Path(p).resolve().relative_to(root)))
        except ValueError:
            pass  # kernelvet's shims
    return out


def _model_files(manifest: LoadedManifest, root: Path) -> set[str]:
    """The manifest and the config files its models read (a config may be a glob in version 1)."""
    files = {manifest.path}
    for m in manifest.spec.models:
        if m.config:
            if any(ch in m.config for ch in "*?["):
                files.update(manifest.path.parent.glob(m.config))
            else:
                files.add(manifest.path.parent / m.config)
    return _relative(files, root)


def analyse(root: Path, manifest: LoadedManifest, changes: ChangeSet, ws: Workspace,
            base: BaseTree | None = None, cache=None) -> Impact:
    root = Path(root).resolve()
    changed = changes.paths()
    planned = expand(manifest, None, root)
    ops: list[OpImpact] = []
    by_op: dict[int, list[Planned]] = {}
    for p in planned:
        if p.op_index not in by_op:
            ops.append(OpImpact(p.op_index, p.op_name, p.file, p.launcher))
        by_op.setdefault(p.op_index, []).append(p)

    closures: dict[str, set[str]] = {}
    texts: dict[str, str] = {}
    for o in ops:
        if o.file not in closures:
            try:
                closures[o.file] = _relative(ws.included_files(o.file), root)
            except (OSError, ParseError):
                closures[o.file] = {o.file}
        hit = sorted(closures[o.file] & changed)
        for f in hit:
            o.reasons.append(f"{f} changed" + ("" if f == o.file else f" (included by {o.file})"))
        for f in _linkable(root, o.file, closures[o.file], changed - closures[o.file], texts,
                           _named_after_headers(ws, closures[o.file])):
            o.reasons.append(f"{f} changed (it defines a function that {o.file} or a header it includes names)")

    # The manifest: the instances that differ from the base's.
    changed_instances: set[tuple] | None = None
    manifest_changed = bool(_model_files(manifest, root) & changed)
    if manifest_changed:
        changed_instances = _changed_instances(root, manifest, planned, base)

    if base is not None:
        # A source file removed beside an op is read at the base only: changed files are asked for too.
        need = {f for f in changed if Path(f).suffix in SOURCE_SUFFIXES}
        for o in ops:
            if o.reasons:
                need |= closures[o.file] | _sources_beside(root, o.file, closures[o.file]) | \
                    _named_after_headers(ws, closures[o.file])
        base.materialise(need)
        base_ws = Workspace(base.dir, manifest.spec.include_dirs, manifest.spec.defines, manifest.spec.arch)
    for o in ops:
        mine = by_op.get(o.op_index, [])
        if o.reasons:
            if base is None:
                o.decision, o.detail = "verify", "the cache re-verifies it if its IR changed"
                o.planned = list(mine)
                continue
            now = _hash(ws, o, cache)
            before = _hash(base_ws, o, cache) if (base.dir / o.file).is_file() else None
            if now is not None and now == before:
                o.decision, o.detail = "unchanged", f"same IR as the base ({now[:12]}): not verified again"
            else:
                o.decision = "verify"
                o.detail = ("new op" if before is None and not (base.dir / o.file).is_file() else
                            "its IR changed" if now is not None and before is not None else
                            "its IR could not be compared (the op does not lower at one side)")
                o.planned = list(mine)
                continue
        if changed_instances is not None:
            extra = [p for p in mine if (o.name, o.file, o.launcher, repr(p.instance)) in changed_instances]
            if extra:
                o.reasons.append("the manifest changed its binding" + ("" if len(extra) == len(mine) else
                                                                       f" for {len(extra)} of {len(mine)} instances"))
                o.decision = "verify"
                o.detail = "new or changed instances"
                o.planned = extra
    return Impact(ops, base.rev if base is not None else None, set().union(*closures.values()) if closures else set())


_DEFINED = definition_pattern()  # function names a source file defines or explicitly instantiates
_NOT_NAMES = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof", "defined"}


def _source_dirs(file: str, closure: set[str]) -> set[str]:
    """Where the engine looks for the definitions of what an op's file only declares
    (analyzers/frontend/crosstu.py): the file's directory and its repository headers' directories."""
    return {str(Path(f).parent) for f in closure | {file}}


def _sources_beside(root: Path, file: str, closure: set[str]) -> set[str]:
    out = set()
    for d in _source_dirs(file, closure):
        try:
            entries = sorted((root / d).iterdir())
        except OSError:
            continue
        out |= {str(p.relative_to(root)) for p in entries if p.suffix in SOURCE_SUFFIXES and p.is_file()}
    return out - {file}


def _named_after_headers(ws: Workspace, closure: set[str]) -> set[str]:
    """The repository's one source file named after each header of the closure, wherever it lies
    (crosstu: ``ggml/include/ggml.h`` -> ``ggml/src/ggml.c``)."""
    out = set()
    for h in closure:
        for p in sources_named_after(ws.resolver, Path(h)):
            try:
                out.add(str(p.relative_to(ws.root)))
            except ValueError:
                continue
    return out


def _linkable(root: Path, file: str, closure: set[str], changed: set[str], texts: dict,
              named_after: set[str] = frozenset()) -> list[str]:
    """Changed source files beside the op, or named after one of its headers, whose definitions the
    op may run: a function one of them defines is named in the op's file or a header it includes,
    or the file was removed. The IR hash then decides."""
    def text(rel: str) -> str:
        if rel not in texts:
            try:
                texts[rel] = (root / rel).read_text(errors="replace")
            except OSError:
                texts[rel] = ""
        return texts[rel]
    dirs = _source_dirs(file, closure)
    beside = sorted(f for f in changed if Path(f).suffix in SOURCE_SUFFIXES and f != file
                    and (str(Path(f).parent) in dirs or f in named_after))
    if not beside:
        return []
    words = set(re.findall(r"[A-Za-z_]\w*", "\n".join(text(f) for f in closure | {file})))
    out = []
    for f in beside:
        defined = {a or b for a, b in _DEFINED.findall(text(f))} - _NOT_NAMES
        if defined & words or not (root / f).is_file():
            out.append(f)
    return out


def _hash(ws: Workspace, o: OpImpact, cache=None) -> str | None:
    """The op's IR hash; from the cache when the files of its translation unit are ones it has seen
    (the base's, after the base branch's scan), without a parse."""
    closure = closure_key(ws, o.file, o.launcher) if cache is not None else None
    known = cache.get_fingerprint(closure, ws) if cache is not None else None
    if known is not None:
        return known
    try:
        op = ws.op(o.file, o.launcher)
        h = op_hash(op)
    except (OpNotFound, ParseError, OSError):
        return None
    if cache is not None:
        cache.put_fingerprint(closure, h, linked_keys(ws, op))
    return h


def _changed_instances(root: Path, manifest: LoadedManifest, planned: list[Planned], base: BaseTree | None) -> set[tuple]:
    """(op name, file, launcher, instance) of every instance now that the base does not have."""
    def ident(p: Planned) -> tuple:
        return (p.op_name, p.file, p.launcher, repr(p.instance))

    now = {ident(p) for p in planned}
    if base is None:
        return now
    rel = str(manifest.path.resolve().relative_to(root))
    base.materialise([rel])
    base_manifest_path = base.dir / rel
    if not base_manifest_path.is_file():
        return now
    try:
        raw = yaml.safe_load(base_manifest_path.read_text()) or {}
        configs = [os.path.normpath(str(Path(rel).parent / m["config"])) for m in raw.get("models", [])
                   if isinstance(m, dict) and isinstance(m.get("config"), str)]
        base.materialise(base.matching(configs))
        base_manifest = load(base_manifest_path)
        before = {ident(p) for p in expand(base_manifest, None, base.dir)}
    except (ManifestError, yaml.YAMLError, AttributeError):
        return now  # the base's manifest did not load: everything is new
    return now - before
