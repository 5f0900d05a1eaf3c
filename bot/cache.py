"""The incremental cache: one verified instance result per file, keyed by what decides it.

key = sha256(cache format, tool version, the op's IR fingerprint (the launcher and everything it
calls, spans excluded), repr of the instance (binding with model fields substituted, dtype), the
analysis options). An edit that leaves the IR unchanged (comments, blank lines, formatting inside a
line) keeps the key; the result's spans are then relocated: every line the result refers to is
looked up by its exact text in the current file, nearest its old place, in order; if one is gone,
the entry is a miss. docs/cache.md describes the directory.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from analyzers import __version__
from analyzers.findings import InstanceResult
from analyzers.kir.nodes import Span

from .cache_schema import valid_entry
from .serialize import remap_spans, result_in, result_out, spans_of

FORMAT = "kernelvet.cache/1"
_MENTION = re.compile(r"(?P<file>[A-Za-z0-9_][A-Za-z0-9_./+\-]*\.[A-Za-z0-9]+):(?P<line>\d+)")
# Results that say more about this run than about the code are not kept.
_NOT_CACHED = {"internal-error", "op-error"}


def cache_key(fingerprint: str, instance, options) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([FORMAT, __version__, engine_digest(), fingerprint, repr(instance), repr(options)]).encode())
    return h.hexdigest()


_DIGEST: list[str] = []


def engine_digest() -> str:
    """A hash of kernelvet's analyzers (code and shim headers): a result is reused only by the
    kernelvet that computed it, even between two builds of one version."""
    if not _DIGEST:
        import analyzers
        base = Path(analyzers.__file__).parent
        h = hashlib.sha256()
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.suffix not in (".pyc",) and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(base)).encode())
                h.update(p.read_bytes())
        _DIGEST.append(h.hexdigest())
    return _DIGEST[0]


def closure_key(ws, file: str, launcher: str, memo: dict | None = None) -> str | None:
    """A key for an op's IR fingerprint that needs no parse: the content of every repository file
    its translation unit includes (textually, transitively), the parse configuration, the launcher
    and kernelvet itself. Same key, same IR: the fingerprint is taken from the cache."""
    from analyzers.frontend.includes import SHIM_ROOT
    memo = {} if memo is None else memo
    try:
        graph = ws.include_graph(file)
    except Exception:  # an unreadable file: the op is lowered, and says what is wrong
        return None
    if graph.opaque:
        return None  # an include the textual graph cannot follow: only a parse knows the files
    cfg = ws.cfg
    h = hashlib.sha256()
    h.update(json.dumps([FORMAT, engine_digest(), file, launcher, [str(d) for d in cfg.include_dirs],
                         sorted(cfg.defines.items()), cfg.arch, cfg.std, list(cfg.extra_args)]).encode())
    for path in sorted(graph.files()):
        try:
            h.update(b"repo:" + str(path.relative_to(ws.root)).encode())
        except ValueError:
            try:
                h.update(b"shim:" + str(path.relative_to(SHIM_ROOT)).encode())  # in engine_digest()
            except ValueError:
                return None
            continue
        if path not in memo:
            try:
                memo[path] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                return None
        h.update(memo[path].encode())
    for note in graph.notes:
        h.update(f"note:{note.name}:{note.why}".encode())
    return h.hexdigest()


def linked_keys(ws, op, memo: dict | None = None) -> dict | None:
    """Closure keys of the source files an op runs definitions from besides its own (crosstu):
    their content, their includes' and the parse configuration. None if one cannot be keyed."""
    out = {}
    for path in sorted(op.program.sources()):
        try:
            rel = str(Path(path).relative_to(ws.root))
        except ValueError:
            return None
        key = closure_key(ws, rel, "", memo)
        if key is None:
            return None
        out[rel] = key
    return out


class ResultCache:
    def __init__(self, directory: Path, mac_key: str | None = None):
        self.dir = Path(directory)
        self.hits = 0
        self.misses = 0
        # With a key (a CI secret, $KERNELVET_CACHE_KEY), every entry is authenticated: one written
        # without it, or altered, is a miss (docs/cache.md, "Trust").
        key = mac_key if mac_key is not None else os.environ.get("KERNELVET_CACHE_KEY")
        self._mac_key = key.encode() if key else None

    def _mac(self, text: str) -> str:
        return hmac.new(self._mac_key, text.encode(), hashlib.sha256).hexdigest()

    def _authentic(self, entry: dict) -> bool:
        if self._mac_key is None:
            return True
        mac = entry.get("mac")
        body = json.dumps({k: v for k, v in entry.items() if k != "mac"}, sort_keys=True)
        return isinstance(mac, str) and hmac.compare_digest(mac, self._mac(body))

    def _path(self, key: str) -> Path:
        return self.dir / "v1" / key[:2] / f"{key}.json"

    def unwritable(self) -> str | None:
        """Why entries cannot be written here (a read-only mount, a file in the way, another
        user's directory), or None when a probe file can be created and removed."""
        try:
            (self.dir / "v1").mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.dir / "v1", prefix=".tmp-probe-"):
                pass
        except OSError as exc:
            return exc.strerror or type(exc).__name__
        return None

    def get(self, key: str, root: Path) -> InstanceResult | None:
        path = self._path(key)
        try:
            entry = valid_entry(path.read_text())
            if entry is None or entry["format"] != FORMAT or entry["key"] != key or not self._authentic(entry):
                raise ValueError("not an entry of this format, or not authentic")
            result = result_in(entry["result"])
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            self.misses += 1  # absent, partly written by a run that was killed, or not kernelvet's: verify again
            return None
        moved = _relocate(result, entry["files"], Path(root))
        if moved is not None and not _plausible(moved, entry["files"], Path(root)):
            moved = None
        if moved is None:
            self.misses += 1
            return None
        try:
            os.utime(path)  # recently used: kept by prune()
        except OSError:
            pass
        self.hits += 1
        return moved

    def get_fingerprint(self, closure: str | None, ws=None, memo: dict | None = None) -> str | None:
        """The IR fingerprint recorded for an op's closure key, if the other files it linked
        (definitions in sibling sources) are still as they were; their check needs ``ws``."""
        if closure is None:
            return None
        try:
            lines = (self.dir / "v1" / "fp" / closure[:2] / closure).read_text().splitlines()
        except OSError:
            return None
        if self._mac_key is not None:
            if not lines or not lines[-1].startswith("mac ") or not hmac.compare_digest(
                    lines[-1][4:].strip(), self._mac(closure + "\n" + "\n".join(lines[:-1]))):
                return None
            lines = lines[:-1]
        if not lines or not re.fullmatch(r"[0-9a-f]{64}", lines[0].strip()):
            return None
        for line in lines[1:]:
            parts = line.split(" ")
            if len(parts) != 3 or parts[0] != "linked" or ws is None:
                return None
            if closure_key(ws, parts[1], "", memo) != parts[2]:
                return None  # a linked definition's file (or what it includes) changed
        return lines[0].strip()

    def put_fingerprint(self, closure: str | None, fingerprint: str, linked: dict | None = None) -> None:
        """``linked``: repository path -> closure key of each other file whose definitions the op
        runs (None when one could not be keyed: then nothing is recorded)."""
        if closure is not None and linked is not None:
            text = fingerprint + "\n" + "".join(f"linked {rel} {key}\n" for rel, key in sorted(linked.items()))
            if self._mac_key is not None:
                text += f"mac {self._mac(closure + chr(10) + text.rstrip(chr(10)))}\n"
            self._write(self.dir / "v1" / "fp" / closure[:2] / closure, text)

    def _write(self, path: Path, text: str) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not (self.dir / ".gitignore").exists():  # never committed by accident
                (self.dir / ".gitignore").write_text("# kernelvet's result cache (docs/cache.md)\n*\n")
            # Written whole to a temporary file, then renamed: a reader sees the old entry or the new one.
            with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".tmp-", delete=False) as tmp:
                tmp.write(text)
            os.replace(tmp.name, path)
        except OSError:
            pass  # a read-only or full cache directory slows the next run down, nothing more

    def put(self, key: str, result: InstanceResult, root: Path) -> None:
        if any(i.reason in _NOT_CACHED for i in result.inconclusive):
            return
        entry = {"format": FORMAT, "key": key, "version": __version__, "op": result.op,
                 "fingerprint": result.fingerprint, "files": _referenced_lines(result, Path(root)),
                 "result": result_out(result)}
        if self._mac_key is not None:
            entry["mac"] = self._mac(json.dumps(entry, sort_keys=True))
        self._write(self._path(key), json.dumps(entry))

    def prune(self, max_age_days: float = 30.0) -> int:
        """Delete entries unused for ``max_age_days`` and leftovers of interrupted writes."""
        cutoff = time.time() - max_age_days * 86400
        removed = 0
        for p in [*self.dir.glob("v1/*/*.json"), *self.dir.glob("v1/*/.tmp-*"), *self.dir.glob("v1/fp/*/*")]:
            try:
                if p.name.startswith(".tmp-") or p.stat().st_mtime < cutoff:
                    p.unlink()
                    removed += 1
            except OSError:
                pass
        return removed


# ---------------------------------------------------------------- relocation


def _repo_file(root: Path, file: str) -> Path | None:
    if file.startswith("<") or os.path.isabs(file):
        return None  # kernelvet's own headers: covered by the tool version in the key
    p = root / file
    if not p.resolve().is_relative_to(Path(root).resolve()):
        return None  # '..' or a symlink out of the repository: never read
    return p if p.is_file() else None


def _mentions(result: InstanceResult):
    """(file, line) written inside texts: witness names like ``i (loop at FILE:LINE)``, messages."""
    texts = [f.message for f in result.findings] + [k for f in result.findings for k in f.witness]
    texts += [i.detail for i in result.inconclusive] + list(result.assumptions)
    for t in texts:
        for m in _MENTION.finditer(t):
            yield m.group("file"), int(m.group("line"))


def _referenced_lines(result: InstanceResult, root: Path) -> dict:
    wanted: dict[str, set[int]] = {}
    for s in spans_of(result):
        wanted.setdefault(s.file, set()).update({s.line, s.end_line} - {0})
    for f, n in _mentions(result):
        wanted.setdefault(f, set()).add(n)
    out = {}
    for file, lines in wanted.items():
        p = _repo_file(root, file)
        if p is None:
            continue
        data = p.read_bytes()
        text = data.decode(errors="replace").splitlines()
        out[file] = {"sha256": hashlib.sha256(data).hexdigest(),
                     "lines": {str(n): text[n - 1] for n in sorted(lines) if 0 < n <= len(text)}}
    return out


def _line_map(old: dict[str, str], current: list[str]) -> dict[int, int] | None:
    """Old line number -> new one, each line found by its exact text nearest its old place (shifted
    like the previous one), in increasing order. None if one cannot be found."""
    where: dict[str, list[int]] = {}
    for i, t in enumerate(current, 1):
        where.setdefault(t, []).append(i)
    out: dict[int, int] = {}
    last, shift = 0, 0
    for n in sorted(int(k) for k in old):
        candidates = [i for i in where.get(old[str(n)], ()) if i > last]
        if not candidates:
            return None
        new = min(candidates, key=lambda i: (abs(i - (n + shift)), i))
        out[n] = new
        last, shift = new, new - n
    return out


def _plausible(result: InstanceResult, files: dict, root: Path) -> bool:
    """Every place the result names is a line of a repository file the entry recorded: an entry
    pointing outside the repository, or past a file's end, is not kernelvet's."""
    lengths: dict[str, int] = {}
    for s in spans_of(result):
        if s.file.startswith("<") or (s.line == 0 and s.end_line == 0):
            continue  # kernelvet's own headers (in the key through the analyzers' digest); no line
        if s.file not in files:
            return False
        if s.file not in lengths:
            p = _repo_file(root, s.file)
            if p is None:
                return False
            lengths[s.file] = p.read_bytes().count(b"\n") + 1
        if not (0 < s.line <= lengths[s.file] and s.line <= s.end_line <= lengths[s.file]):
            return False
    return True


def _relocate(result: InstanceResult, files: dict, root: Path) -> InstanceResult | None:
    maps: dict[str, dict[int, int]] = {}
    for file, rec in files.items():
        p = _repo_file(root, file)
        if p is None:
            return None
        data = p.read_bytes()
        if hashlib.sha256(data).hexdigest() == rec.get("sha256"):
            continue
        m = _line_map(rec.get("lines", {}), data.decode(errors="replace").splitlines())
        if m is None:
            return None
        if any(a != b for a, b in m.items()):
            maps[file] = m
    if not maps:
        return result

    def sp(s: Span | None) -> Span | None:
        if s is None or s.file not in maps:
            return s
        m = maps[s.file]
        return replace(s, line=m.get(s.line, s.line), end_line=m.get(s.end_line, s.end_line))

    def txt(t: str) -> str:
        def sub(mo):
            m = maps.get(mo.group("file"))
            return f"{mo.group('file')}:{m.get(int(mo.group('line')), mo.group('line'))}" if m else mo.group(0)
        return _MENTION.sub(sub, t)

    # The result was just read from its entry: it is changed in place.
    remap_spans(result, sp)
    for f in result.findings:
        f.message, f.witness = txt(f.message), {txt(k): v for k, v in f.witness.items()}
    for i in result.inconclusive:
        i.detail = txt(i.detail)
    result.assumptions = [txt(a) for a in result.assumptions]
    return result
