"""Finding ops in a translation unit: launcher functions by name, and the kernels they launch."""
from __future__ import annotations

from pathlib import Path

import clang.cindex as ci

from .typemap import qualified_name

CK = ci.CursorKind


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
    """Host functions of ``main_file`` that contain a kernel launch (``<<<...>>>``)."""
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
    return out
