"""Attributes the Python binding does not expose: ``__launch_bounds__``, a variable's ``alignas``,
a function's ``noreturn``.

libclang shows the attribute only as an unexposed child, so its argument is read from the
declaration's tokens (``__launch_bounds__(kThreads)`` and torch's ``C10_LAUNCH_BOUNDS_1``), with the
instantiation's template arguments substituted, and evaluated as integer arithmetic.
"""
from __future__ import annotations

import ast
import operator
import re

import clang.cindex as ci

from . import clangx

CK = ci.CursorKind
_SPELLINGS = ("__launch_bounds__", "C10_LAUNCH_BOUNDS_1", "C10_LAUNCH_BOUNDS_2")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Div: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift, ast.RShift: operator.rshift}


def launch_bounds(c: ci.Cursor, template_values: dict[str, int]) -> int | None:
    """The maximum threads per block ``c`` declares, or None (no attribute, or not a constant)."""
    primary = clangx.specialized_template(c)
    if not any(k.kind == CK.UNEXPOSED_ATTR for x in (c, primary) if x is not None for k in x.get_children()):
        return None
    tokens = []
    for t in (primary or c).get_tokens():
        if t.spelling == "{":
            break  # the body starts: the attribute comes before it
        tokens.append(t.spelling)
    if not any(t in _SPELLINGS for t in tokens):
        tokens = _tokens_before_name(primary or c)
    for i, t in enumerate(tokens):
        if t in _SPELLINGS and i + 1 < len(tokens) and tokens[i + 1] == "(":
            depth, arg = 0, []
            for tok in tokens[i + 2:]:
                if tok in ("(", "<", "["):
                    depth += 1
                elif tok in (")", ">", "]"):
                    if depth == 0:
                        break
                    depth -= 1
                elif tok == "," and depth == 0:
                    break
                arg.append(tok)
            return _evaluate(" ".join(str(template_values.get(a, a)) for a in arg))
    return None


def _tokens_before_name(c: ci.Cursor) -> list[str]:
    """The declaration's own tokens up to its name, read from the file: when the declaration starts
    with a macro (``__global__``), libclang's extent starts inside the macro's definition."""
    loc = c.location
    if loc.file is None:
        return []
    tu = c.translation_unit
    start = ci.SourceLocation.from_position(tu, loc.file, max(1, loc.line - 8), 1)
    out: list[str] = []
    for t in tu.get_tokens(extent=ci.SourceRange.from_locations(start, loc)):
        if t.spelling in (";", "}", "{"):
            out = []  # the end of an earlier declaration
        else:
            out.append(t.spelling)
    return out


_ALIGNAS = re.compile(r"(?:alignas|__align__|__attribute__\s*\(\(\s*aligned)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


def declared_alignment(c: ci.Cursor) -> int:
    """The alignment a variable declaration asks for (``alignas(16) T regs[8]``, CUDA's
    ``__align__(16)``, ``__attribute__((aligned(16)))``), 0 when none or not a constant: the
    type's own alignment then holds. Read from the source at the attribute, as libclang shows only
    its kind."""
    attr = next((k for k in c.get_children() if k.kind == CK.ALIGNED_ATTR), None)
    if attr is None or attr.extent.start.file is None:
        return 0
    where = attr.extent.start
    tu = c.translation_unit
    # Rebuilt from its position: a macro's attribute (__align__) then reads at its use, not in the
    # macro's definition.
    start = ci.SourceLocation.from_position(tu, where.file, where.line, where.column)
    end = ci.SourceLocation.from_position(tu, where.file, where.line + 1, 1)
    text = " ".join(t.spelling for t in tu.get_tokens(extent=ci.SourceRange.from_locations(start, end)))
    m = _ALIGNAS.match(text)
    if m is None:
        return 0
    v = _evaluate(m.group(1))
    return v if v is not None and v & (v - 1) == 0 else 0


def template_parameter_names(c: ci.Cursor) -> list[str]:
    """Names of the template parameters of the template ``c`` instantiates (or of ``c`` itself)."""
    source = clangx.specialized_template(c) or c
    return [k.spelling for k in source.get_children()
            if k.kind in (CK.TEMPLATE_NON_TYPE_PARAMETER, CK.TEMPLATE_TYPE_PARAMETER, CK.TEMPLATE_TEMPLATE_PARAMETER)]


def _evaluate(text: str) -> int | None:
    text = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", text)  # 256u, 1024UL
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None

    def ev(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            return _OPS[type(n.op)](ev(n.left), ev(n.right))
        raise ValueError
    try:
        v = ev(tree.body)
    except (ValueError, ZeroDivisionError):
        return None
    return v if v > 0 else None


_NORETURN = ("noreturn", "_Noreturn", "__noreturn__")


def is_noreturn(c: ci.Cursor) -> bool:
    """Whether a function is declared not to return (``[[noreturn]]``, ``_Noreturn``,
    ``__attribute__((noreturn))``) on any declaration of it: a library's abort helper
    (``ggml_abort``), whose call ends the path as ``abort()`` does."""
    if "noreturn" in c.type.spelling:
        return True  # the GNU spelling is part of the function's type
    seen = set()
    for d in (c, c.canonical, c.get_definition()):
        if d is None or d.hash in seen:
            continue
        seen.add(d.hash)
        for k in d.get_children():
            if k.kind == CK.UNEXPOSED_ATTR:
                first = next(iter(k.get_tokens()), None)
                if first is not None and first.spelling in _NORETURN:
                    return True
    return False
