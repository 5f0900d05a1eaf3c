"""Op discovery: which C++ function implements each registered torch op.

Registration blocks (``TORCH_LIBRARY``, ``TORCH_LIBRARY_FRAGMENT``, ``TORCH_LIBRARY_IMPL``, the
stable-ABI ``STABLE_TORCH_LIBRARY*`` and ``PYBIND11_MODULE``, also behind wrappers such as vLLM's
``TORCH_LIBRARY_EXPAND``) are parsed with libclang against the shims, which turn each block into a
function, so ``m.def("schema", &fn)`` and ``m.impl("name", kCUDA, &fn)`` are ordinary calls whose
function argument clang resolves. The function is often declared in a header and defined in another
file: that file is found by a textual pre-filter over the repository, confirmed by parsing it.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from . import clangx
from .discover import function_definitions
from .includes import IncludeResolver
from .parse import ParseConfig, ParseError, parse_file
from .typemap import qualified_name

CK = ci.CursorKind
SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".cuh", ".h", ".hpp")
_REGISTRATION_RE = re.compile(r"\b(?:STABLE_)?(?:TORCH_LIBRARY\w*|PYBIND11_MODULE)\s*\(")
# The shims know TORCH_LIBRARY*; the stable ABI's macros only matter here, where a block must parse.
_STABLE_DEFINES = {
    "STABLE_TORCH_LIBRARY(ns, m)": "void __kernelvet_torch_library_##ns(::torch::Library& m)",
    "STABLE_TORCH_LIBRARY_FRAGMENT(ns, m)": "void __kernelvet_torch_library_fragment_##ns(::torch::Library& m)",
    "STABLE_TORCH_LIBRARY_IMPL(ns, k, m)": "void __kernelvet_torch_library_impl_##ns##_##k(::torch::Library& m)",
    "TORCH_BOX(f)": "f",
}
_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# The stable ABI's blocks have their own names when its headers (the shims') define the macros.
_BLOCK_PREFIXES = tuple((f"__kernelvet_{abi}torch_library{part}_", "torch") for abi in ("", "stable_")
                        for part in ("_impl", "_fragment", "")) + (("__kernelvet_pybind11_module_", "pybind11"),)
_PREFERRED_KEYS = ("CUDA", "kCUDA", "CompositeExplicitAutograd", "CatchAll", "")


@dataclass
class Registration:
    """One registered op and the function that implements it."""

    name: str  # as Python calls it: torch.ops.<namespace>.<name>
    namespace: str
    kind: str  # torch | pybind11
    registered_at: tuple  # (file, line) of the def (or of the impl when no def names it)
    schema: str | None = None
    schema_args: tuple = ()  # argument names of the schema, in order
    schema_types: tuple = ()  # their schema types (Tensor, Tensor!, Tensor?, int, float, str, ...)
    function: str | None = None  # qualified name of the implementing function
    dispatch_key: str = ""
    params: tuple = ()  # parameter names of the implementing function
    declared_at: tuple | None = None
    file: str | None = None  # the file defining the function, relative to the root
    note: str = ""  # why no function or no definition was found
    impl_at: tuple | None = None  # (file, line) of the registration that chose the function
    schemas: list = field(default_factory=list, repr=False)  # every (where, text, parsed) def seen

    @property
    def launcher(self) -> str | None:
        return self.function

    def arg_names(self) -> dict[str, str]:
        """Schema argument name -> parameter name, by position (names often differ: result / out)."""
        return {s: p for s, p in zip(self.schema_args, self.params)}


@dataclass
class Registry:
    root: Path
    ops: list[Registration] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def find(self, name: str) -> list[Registration]:
        """Registrations named ``name`` (``rms_norm``) or ``namespace::name``."""
        ns, _, plain = name.rpartition("::")
        return [r for r in self.ops if r.name == plain and (not ns or r.namespace == ns)]


def discover(root: Path, include_dirs=(), defines: dict | None = None, arch: str = "sm_80",
             files: list[Path] | None = None) -> Registry:
    """Every op registered in the repository at ``root`` (or in ``files``), with its defining file."""
    root = Path(root).resolve()
    cfg = ParseConfig(root, [Path(d) for d in include_dirs], {**_STABLE_DEFINES, **(defines or {})}, arch)
    resolver = IncludeResolver(root, cfg.search_dirs())
    reg = Registry(root)
    sources = files if files is not None else _sources(root)
    parsed: dict[Path, object] = {}

    def parse(path: Path):
        if path not in parsed:
            try:
                parsed[path] = parse_file(path, cfg, resolver)
            except ParseError as exc:
                reg.problems.append(str(exc))
                parsed[path] = None
        return parsed[path]

    by_key: dict[tuple, Registration] = {}
    for path in sources:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if not _REGISTRATION_RE.search(text):
            continue
        p = parse(path)
        if p is None:
            continue
        for block, kind, namespace, key in _blocks(p.tu, path):
            if namespace == "TORCH_EXTENSION_NAME":  # TORCH_LIBRARY_IMPL pastes it unexpanded: the shim's value
                namespace = cfg.defines.get("TORCH_EXTENSION_NAME", "_C")
            for call in _calls(block):
                _record(call, kind, namespace, key, root, by_key)
    reg.ops = sorted(by_key.values(), key=lambda r: (r.namespace, r.name))
    _definitions(reg, sources, parse)
    return reg


def _sources(root: Path) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*")):
        if p.suffix in SOURCE_SUFFIXES and p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts):
            out.append(p)
    return out


def _blocks(tu: ci.TranslationUnit, path: Path):
    main = str(path.resolve())

    def walk(cursor):
        for c in cursor.get_children():
            if c.kind in (CK.NAMESPACE, CK.LINKAGE_SPEC):
                yield from walk(c)
            elif c.kind == CK.FUNCTION_DECL and c.is_definition() and c.location.file is not None \
                    and clangx.real_path(c.location.file.name) == main:
                yield c

    for c in walk(tu.cursor):
        for prefix, kind in _BLOCK_PREFIXES:
            if c.spelling.startswith(prefix):
                rest = c.spelling[len(prefix):]
                key = ""
                if prefix.endswith("_library_impl_"):
                    rest, _, key = rest.rpartition("_") if rest.count("_") else (rest, "", "")
                yield c, kind, rest, key
                break


def _calls(block: ci.Cursor):
    for node in block.walk_preorder():
        if node.kind == CK.CALL_EXPR and node.spelling in ("def", "impl"):
            yield node


def _record(call: ci.Cursor, kind: str, namespace: str, block_key: str, root: Path, by_key: dict) -> None:
    args = list(call.get_arguments())
    if not args:
        return
    text = _string(args[0])
    if text is None:
        return
    name, schema = _parse_schema(text)
    if not name:
        return
    fn, key = None, block_key
    for a in args[1:]:
        ref = _function_ref(a)
        if ref is not None:
            fn = ref
        else:
            spelled = " ".join(t.spelling for t in a.get_tokens())
            m = re.search(r"\b(k?[A-Z]\w*)\s*$", spelled)
            if m and fn is None:
                key = m.group(1)
    where = (_rel(call.location.file.name, root), call.location.line) if call.location.file else ("?", 0)
    reg = by_key.get((namespace, name))
    if reg is None:
        reg = by_key[(namespace, name)] = Registration(name, namespace, kind, where)
    if "(" in text:
        reg.schemas.append((where, text.strip(), schema))
    if fn is not None and (reg.function is None or _rank(key) < _rank(reg.dispatch_key)):
        reg.function = qualified_name(fn)
        reg.dispatch_key = key
        reg.impl_at = where
        reg.params = tuple(a.spelling for a in fn.get_arguments())
        loc = fn.location
        reg.declared_at = (_rel(loc.file.name, root), loc.line) if loc.file else None
        reg.file = None
        d = fn.get_definition()
        if d is not None and d.location.file is not None:
            reg.file = _rel(d.location.file.name, root)
            reg.params = tuple(a.spelling for a in d.get_arguments())
    _choose_schema(reg)


def _choose_schema(reg: Registration) -> None:
    """The schema registered beside the chosen implementation (a CPU backend's registration file
    may define the same op with another schema), else the first with arguments."""
    if not reg.schemas:
        return
    same = [s for s in reg.schemas if reg.impl_at and s[0][0] == reg.impl_at[0]]
    where, text, schema = (same or sorted(reg.schemas, key=lambda s: not s[2]))[0]
    reg.schema, reg.registered_at = text, where
    reg.schema_args = tuple(n for n, _ in schema)
    reg.schema_types = tuple(t for _, t in schema)


def _rank(key: str) -> int:
    return _PREFERRED_KEYS.index(key) if key in _PREFERRED_KEYS else len(_PREFERRED_KEYS)


def _string(cursor: ci.Cursor) -> str | None:
    """The value of a (possibly concatenated) string literal argument."""
    for node in cursor.walk_preorder():
        if node.kind == CK.STRING_LITERAL:
            parts = []
            for tok in node.get_tokens():
                if tok.kind == ci.TokenKind.LITERAL and tok.spelling.endswith('"'):
                    try:
                        parts.append(ast.literal_eval(tok.spelling))
                    except (ValueError, SyntaxError):
                        parts.append(tok.spelling.strip('"'))
            return "".join(parts)
    return None


def _function_ref(cursor: ci.Cursor) -> ci.Cursor | None:
    for node in cursor.walk_preorder():
        if node.kind in (CK.DECL_REF_EXPR, CK.OVERLOADED_DECL_REF):
            ref = node.referenced
            if ref is not None and ref.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE):
                return ref
    return None


def _parse_schema(text: str) -> tuple[str, tuple]:
    """``name.overload(Tensor! out, float eps=1e-6) -> ()`` -> ("name.overload", (("out", "Tensor!"),
    ("eps", "float")))."""
    head, paren, rest = text.partition("(")
    name = head.strip()
    if not re.fullmatch(r"[A-Za-z_]\w*(\.\w+)?", name):
        return "", ()
    if name.endswith(".default"):
        name = name[:-len(".default")]
    if not paren:
        return name, ()
    depth, cur, args = 0, "", []
    for ch in rest:
        if ch in "([" and True:
            depth += 1
        elif ch in ")]":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += ch
    args.append(cur)
    names = []
    for a in args:
        a = a.split("=", 1)[0].strip()
        if not a or a == "*":
            continue
        m = re.search(r"([A-Za-z_]\w*)\s*$", a)
        if m:
            names.append((m.group(1), re.sub(r"\s+", "", a[:m.start()])))
    return name, tuple(names)


def _definitions(reg: Registry, sources: list[Path], parse) -> None:
    """Find the file defining each registered function not defined where it was registered."""
    texts: dict[Path, str] = {}
    for r in reg.ops:
        if r.function is None:
            r.note = "no implementing function is registered (def without impl)"
            continue
        if r.file is not None:
            continue
        plain = r.function.rsplit("::", 1)[-1]
        pattern = re.compile(r"\b" + re.escape(plain) + r"\s*\([^;{]*\)\s*(?:const\s*)?\{", re.S)
        found = None
        for path in _by_closeness(sources, reg.root, r):
            if path not in texts:
                try:
                    texts[path] = _COMMENT_RE.sub(" ", path.read_text(errors="replace"))
                except OSError:
                    texts[path] = ""
            if plain not in texts[path] or not pattern.search(texts[path]):
                continue
            p = parse(path)
            if p is None:
                continue
            for c in function_definitions(p.tu, path):
                if qualified_name(c) == r.function:
                    found = (path, c)
                    break
            if found:
                break
        if found is None:
            r.note = f"no definition of {r.function} found in the repository"
            continue
        r.file = _rel(str(found[0]), reg.root)
        r.params = tuple(a.spelling for a in found[1].get_arguments())


def _by_closeness(sources: list[Path], root: Path, r: Registration) -> list[Path]:
    """Candidate defining files: CUDA sources first, then those nearest the registration that chose
    the function (a CPU backend in csrc/cpu/ defines the same names for its own registration)."""
    home = (root / r.impl_at[0]).parent if r.impl_at else root

    def distance(p: Path) -> int:
        a, b = p.parent.parts, home.parts
        common = 0
        for x, y in zip(a, b):
            if x != y:
                break
            common += 1
        return (len(a) - common) + (len(b) - common)
    code = [p for p in sources if p.suffix in (".cu", ".cpp", ".cc", ".cxx", ".cuh")]
    return sorted(code, key=lambda p: (p.suffix not in (".cu", ".cuh"), distance(p), str(p)))


def _rel(name: str, root: Path) -> str:
    p = Path(name).resolve()
    try:
        return str(p.relative_to(root))
    except ValueError:
        return str(p)
