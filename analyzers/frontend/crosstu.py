"""Definitions in other translation units of the repository.

A launcher often calls a function its file only declares: ``invokeRouterGemm<T, 4, 256, 7168>``
is defined, and explicitly instantiated, in a sibling ``.cu`` file; ``get_device_attribute`` lives
in a utility ``.cu``. The engine follows such a call into the file that defines it, lowered there
(with that file's macros and includes) and run as part of the op.

Where to look: source files (``.cu``, ``.cc``, ``.cpp``, ``.c``) in the caller's directory and in
the directory of the header that declares the function, that name it; and the repository's one
source file named after that header, wherever it lies (``ggml/include/ggml.h`` declares what
``ggml/src/ggml.c`` defines: a library's headers and sources in separate trees). A template
specialization is found among those the defining file explicitly instantiates (``template void
f<T, 4>(...);``, the only ones another file can link to): the file is parsed once more with one
line naming each (``(void)&ns::f<T, 4>;``), which gives the engine their instantiated bodies.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from .discover import function_definitions
from .parse import ParseError
from .typemap import qualified_name

CK = ci.CursorKind
SOURCE_SUFFIXES = (".cu", ".cc", ".cpp", ".c")
_STUB = "__kernelvet_xtu_"


@dataclass
class _Instantiated:
    """A defining file parsed with the specializations one caller needs."""
    lowerer: object
    by_usr: dict = field(default_factory=dict)  # specialization USR -> its cursor in this parse


def sources_named_after(resolver, header: Path) -> list[Path]:
    """The repository's one source file of each source suffix named after ``header``, wherever it
    lies (``ggml/include/ggml.h`` -> ``ggml/src/ggml.c``); none for a source file itself."""
    if header.suffix in SOURCE_SUFFIXES:
        return []
    out = []
    for suffix in SOURCE_SUFFIXES:
        found = resolver.by_name(header.stem + suffix)
        if found is not None:
            out.append(found[0].resolve())
    return out


class CrossTU:
    def __init__(self, workspace):
        self.ws = workspace
        self._texts: dict[Path, str] = {}
        self._instantiated: dict[tuple, _Instantiated | None] = {}

    # ------------------------------------------------------------ where to look

    def candidates(self, caller_file: Path, decl: ci.Cursor) -> list[Path]:
        loc = decl.location.file
        if loc is None:
            return []
        decl_file = Path(loc.name).resolve()
        root = self.ws.root
        if root not in decl_file.parents:
            return []  # CUDA, torch and the standard library: their models decide
        # A file that defines it (a body follows the parameters) or instantiates it; files that
        # only call it are not parsed.
        defines = definition_pattern(re.escape(decl.spelling))
        out = []
        for d in sorted({caller_file.parent, decl_file.parent}):
            for p in sorted(d.iterdir()):
                if p.suffix in SOURCE_SUFFIXES and p.resolve() != caller_file and defines.search(self._text(p)):
                    out.append(p.resolve())
        for p in sources_named_after(self.ws.resolver, decl_file):
            if p != caller_file and p not in out and defines.search(self._text(p)):
                out.append(p)
        return out

    def _text(self, p: Path) -> str:
        if p not in self._texts:
            try:
                self._texts[p] = p.read_text(errors="replace")
            except OSError:
                self._texts[p] = ""
        return self._texts[p]

    # ------------------------------------------------------------ discovery

    def definition(self, caller_file: Path, decl: ci.Cursor) -> ci.Cursor | None:
        """A definition of ``decl`` (its primary template for a specialization) in another file:
        enough to tell whether the call reaches a launch."""
        name = qualified_name(decl)
        for p in self.candidates(caller_file, decl):
            unit = self._unit(p)
            if unit is None:
                continue
            for c in function_definitions(unit.parsed.tu, p, templates=True):
                if c.spelling == decl.spelling and qualified_name(c) == name:
                    return c
        return None

    # ------------------------------------------------------------ lowering

    def resolve(self, caller, decl: ci.Cursor):
        """(lowerer, cursor) of the definition the engine runs for a call of ``decl`` from the
        translation unit ``caller`` (a ParsedFile), or None."""
        caller_file = caller.path.resolve()
        templated = decl.get_num_template_arguments() > 0
        for p in self.candidates(caller_file, decl):
            if not templated:
                unit = self._unit(p)
                if unit is None:
                    continue
                for c in function_definitions(unit.parsed.tu, p, templates=True):
                    if c.kind != CK.FUNCTION_TEMPLATE and c.get_usr() == decl.get_usr():
                        return unit.lowerer, c
                continue
            inst = self._instantiate(p, decl)
            if inst is not None and decl.get_usr() in inst.by_usr:
                return inst.lowerer, inst.by_usr[decl.get_usr()]
        return None

    def _unit(self, p: Path):
        try:
            return self.ws.unit(p)
        except ParseError:  # a file that does not parse defines nothing the engine can run
            return None

    def _instantiate(self, p: Path, decl: ci.Cursor) -> _Instantiated | None:
        """``p`` parsed with a line naming each specialization of ``decl``'s template that ``p``
        explicitly instantiates (``template void f<T, 4>(...);``): the ones another file can
        link to, each with its instantiated body."""
        name = qualified_name(decl)
        key = (p, name)
        if key in self._instantiated:
            return self._instantiated[key]
        self._instantiated[key] = None
        text = self._text(p)
        stubs = [f"static void {_STUB}{i}() {{ (void)&::{name}<{args}>; }}"
                 for i, args in enumerate(explicit_instantiations(text, decl.spelling))]
        if not stubs:
            return None
        unit = self.ws.unit_with(p, text + "\n" + "\n".join(stubs) + "\n")
        if unit is None:
            return None
        inst = _Instantiated(unit.lowerer)
        for c in unit.parsed.tu.cursor.get_children():
            if c.kind == CK.FUNCTION_DECL and c.spelling.startswith(_STUB):
                for node in c.walk_preorder():
                    ref = node.referenced if node.kind == CK.DECL_REF_EXPR else None
                    if ref is not None and ref.kind == CK.FUNCTION_DECL and ref.spelling == decl.spelling:
                        inst.by_usr[ref.get_usr()] = ref
        self._instantiated[key] = inst
        return inst


def definition_pattern(name: str = r"([A-Za-z_]\w*)") -> re.Pattern:
    """Where a source file defines a function ``name`` (a regex; by default any name, captured):
    a body after its parameters, or an explicit instantiation (``template void f<T, 4>(...)``)."""
    return re.compile(rf"\b{name}\s*\([^;{{}}]*\)\s*(?:const\s*)?(?:noexcept\s*)?\{{"
                      rf"|\btemplate\s+(?!<)[^;{{}}<#]*\b{name}\s*<")


def explicit_instantiations(text: str, name: str) -> list[str]:
    """The template argument lists of ``template ... name<ARGS>(...);`` in a file's text, also
    where a function-like macro writes them (``#define INSTANTIATE(M) template void f<T, M>(...);``
    then ``INSTANTIATE(1) INSTANTIATE(2)``)."""
    text = text.replace("\\\n", " ")
    pattern = re.compile(rf"\btemplate\s+(?!<)[^;{{}}<#]*\b{re.escape(name)}\s*<([^;{{}}]*?)>\s*\(")
    out = []
    macros = {}
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)(.*)$", text, re.M):
        params = [x.strip() for x in m.group(2).split(",") if x.strip()]
        if pattern.search(m.group(3)):
            macros[m.group(1)] = (params, m.group(3))
    body = re.sub(r"^[ \t]*#.*$", "", text, flags=re.M)  # directives are no instantiations
    out += [m.group(1) for m in pattern.finditer(body)]
    for macro, (params, template) in macros.items():
        for call in re.finditer(rf"\b{re.escape(macro)}\s*\(([^()]*)\)", body):
            args = [x.strip() for x in call.group(1).split(",")]
            if len(args) != len(params):
                continue
            expanded = template
            for param, arg in zip(params, args):
                expanded = re.sub(rf"\b{re.escape(param)}\b", arg, expanded)
            out += [m.group(1) for m in pattern.finditer(expanded)]
    return list(dict.fromkeys(out))

