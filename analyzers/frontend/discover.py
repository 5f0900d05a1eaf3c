"""Finding ops in a translation unit: launcher functions by name, and the kernels they launch.

A launch is a ``kernel<<<...>>>(...)`` or a call of ``cudaLaunchKernelEx(&config, kernel, ...)``
(the extended launch, with the configuration in a cudaLaunchConfig_t)."""
from __future__ import annotations

from pathlib import Path

import clang.cindex as ci

from . import clangx
from .typemap import qualified_name

CK = ci.CursorKind
LAUNCH_EX = "cudaLaunchKernelEx"


def function_definitions(tu: ci.TranslationUnit, main_file: Path):
    """Function definitions written in ``main_file`` (namespaces followed; templates skipped)."""
    main = str(main_file.resolve())

    def walk(cursor):
        for c in cursor.get_children():
            loc = c.location.file
            if loc is None or str(Path(loc.name).resolve()) != main:
                if c.kind == CK.NAMESPACE:
                    yield from walk(c)
                continue
            if c.kind == CK.NAMESPACE or c.kind == CK.LINKAGE_SPEC:
                yield from walk(c)
            elif c.kind in (CK.FUNCTION_DECL, CK.CXX_METHOD) and c.is_definition():
                yield c
    yield from walk(tu.cursor)


def find_function(tu: ci.TranslationUnit, main_file: Path, name: str) -> list[ci.Cursor]:
    """Definitions named ``name`` (plain or qualified: ``vllm::rms_norm``) in ``main_file``."""
    out = []
    for c in function_definitions(tu, main_file):
        if c.spelling == name or qualified_name(c) == name or qualified_name(c).endswith("::" + name):
            out.append(c)
    return out


def launchers(tu: ci.TranslationUnit, main_file: Path) -> list[ci.Cursor]:
    """Host functions of ``main_file`` that contain a kernel launch (``<<<...>>>`` or
    ``cudaLaunchKernelEx``)."""
    out = []
    for c in function_definitions(tu, main_file):
        if any(k.kind == CK.CUDAGLOBAL_ATTR for k in c.get_children()):
            continue
        for node in c.walk_preorder():
            if node.kind == CK.CALL_EXPR:
                kids = list(node.get_children())
                if len(kids) >= 2 and kids[1].kind == CK.CALL_EXPR and kids[1].spelling in (
                        "cudaConfigureCall", "__cudaPushCallConfiguration"):
                    out.append(c)
                    break
                if is_launch_ex(node):
                    out.append(c)
                    break
    return out


def is_launch_ex(call: ci.Cursor) -> bool:
    """A call of cudaLaunchKernelEx (the templated C++ form: configuration, kernel, arguments)."""
    ref = call.referenced
    return (call.kind == CK.CALL_EXPR and ref is not None and ref.spelling == LAUNCH_EX
            and len(list(call.get_arguments())) >= 2)


def launched_kernel(expr: ci.Cursor) -> ci.Cursor | None:
    """The kernel an expression names: ``kernel<T>``, ``&kernel<T>``, or a local variable initialised
    with one of those and never assigned or had its address taken afterwards. None when the kernel
    is chosen at run time (the variable is reassigned, or comes from elsewhere)."""
    c = _strip(expr)
    if c.kind != CK.DECL_REF_EXPR or c.referenced is None:
        return None
    ref = c.referenced
    if ref.kind in (CK.FUNCTION_DECL, CK.FUNCTION_TEMPLATE):
        return ref if any(k.kind == CK.CUDAGLOBAL_ATTR for k in ref.get_children()) else None
    if ref.kind == CK.VAR_DECL and not clangx.has_global_storage(ref):
        init = clangx.var_initializer(ref)
        scope = ref.semantic_parent
        if init is None or scope is None or _written_after_init(ref, scope):
            return None
        return launched_kernel(init)
    return None


def _strip(c: ci.Cursor) -> ci.Cursor:
    """Through implicit conversions, parentheses and ``&``."""
    while True:
        kids = list(c.get_children())
        if c.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR, CK.CSTYLE_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR,
                      CK.CXX_REINTERPRET_CAST_EXPR) and kids:
            c = kids[-1]
        elif c.kind == CK.UNARY_OPERATOR and clangx.unop(c) == "&" and len(kids) == 1:
            c = kids[0]
        else:
            return c


def _written_after_init(var: ci.Cursor, scope: ci.Cursor) -> bool:
    for node in scope.walk_preorder():
        if node.kind in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR) and clangx.binop(node) in _ASSIGN_OPS:
            lhs = next(iter(node.get_children()), None)
            if lhs is not None and _names(lhs, var):
                return True
        elif node.kind == CK.UNARY_OPERATOR and clangx.unop(node) == "&":
            operand = next(iter(node.get_children()), None)
            if operand is not None and _names(operand, var):
                return True
    return False


_ASSIGN_OPS = ("=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|=")


def _names(expr: ci.Cursor, var: ci.Cursor) -> bool:
    c = expr
    while c.kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR):
        kids = list(c.get_children())
        if len(kids) != 1:
            break
        c = kids[0]
    return c.kind == CK.DECL_REF_EXPR and c.referenced is not None and c.referenced == var
