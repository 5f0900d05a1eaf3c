"""libclang functions the Python binding does not wrap (all present in the wheel's libclang.so)."""
from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import clang.cindex as ci

_lib = None

# clang's BinaryOperatorKind / UnaryOperatorKind numbering (CXBinaryOperatorKind, CXUnaryOperatorKind).
BINOPS = {
    1: ".*", 2: "->*", 3: "*", 4: "/", 5: "%", 6: "+", 7: "-", 8: "<<", 9: ">>", 10: "<=>",
    11: "<", 12: ">", 13: "<=", 14: ">=", 15: "==", 16: "!=", 17: "&", 18: "^", 19: "|",
    20: "&&", 21: "||", 22: "=", 23: "*=", 24: "/=", 25: "%=", 26: "+=", 27: "-=", 28: "<<=",
    29: ">>=", 30: "&=", 31: "^=", 32: "|=", 33: ",",
}
UNOPS = {
    1: "post++", 2: "post--", 3: "pre++", 4: "pre--", 5: "&", 6: "*", 7: "+", 8: "-", 9: "~",
    10: "!", 11: "__real", 12: "__imag", 13: "__extension__", 14: "co_await",
}


@functools.lru_cache(maxsize=8192)
def real_path(name: str) -> str:
    """A cursor's file name made absolute with links resolved. Walks over a translation unit ask
    for every top-level declaration of every header: resolving each time cost seconds per op."""
    return str(Path(name).resolve())


def lib():
    global _lib
    if _lib is None:
        _lib = ci.conf.lib
        _lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
        _lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
        _lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
        _lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
        _lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
        _lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
        _lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
        _lib.clang_EvalResult_getKind.restype = ctypes.c_int
        _lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
        _lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
        _lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
        _lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
        _lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
        _lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
        _lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
        _lib.clang_getFileLocation.argtypes = [
            ci.SourceLocation, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint),
            ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
        _lib.clang_getFileLocation.restype = None
        _lib.clang_getFileName.argtypes = [ctypes.c_void_p]
        _lib.clang_getFileName.restype = ci._CXString
        _lib.clang_getFileName.errcheck = ci._CXString.from_result
        _lib.clang_Cursor_getVarDeclInitializer.argtypes = [ci.Cursor]
        _lib.clang_Cursor_getVarDeclInitializer.restype = ci.Cursor
        _lib.clang_Cursor_getVarDeclInitializer.errcheck = ci.Cursor.from_result
        _lib.clang_Cursor_hasVarDeclGlobalStorage.argtypes = [ci.Cursor]
        _lib.clang_Cursor_hasVarDeclGlobalStorage.restype = ctypes.c_int
    return _lib


def binop(cursor: ci.Cursor) -> str:
    return BINOPS.get(lib().clang_getCursorBinaryOperatorKind(cursor), "?")


def unop(cursor: ci.Cursor) -> str:
    return UNOPS.get(lib().clang_getCursorUnaryOperatorKind(cursor), "?")


def evaluate_int(cursor: ci.Cursor) -> int | None:
    """The value of a constant integer expression, or None when clang cannot fold it."""
    res = lib().clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        if lib().clang_EvalResult_getKind(res) != 1:  # CXEval_Int
            return None
        if lib().clang_EvalResult_isUnsignedInt(res):
            return int(lib().clang_EvalResult_getAsUnsigned(res))
        return int(lib().clang_EvalResult_getAsLongLong(res))
    finally:
        lib().clang_EvalResult_dispose(res)


def file_location(loc: ci.SourceLocation) -> tuple[str | None, int, int, int]:
    """(file, line, column, offset) where the text was written: inside a macro argument this is the
    argument's own place in the file, not the macro's expansion point."""
    f = ctypes.c_void_p()
    line, col, off = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    lib().clang_getFileLocation(loc, ctypes.byref(f), ctypes.byref(line), ctypes.byref(col), ctypes.byref(off))
    name = lib().clang_getFileName(f) if f.value else None
    return name, line.value, col.value, off.value


def var_initializer(cursor: ci.Cursor) -> ci.Cursor | None:
    res = lib().clang_Cursor_getVarDeclInitializer(cursor)
    return res if res is not None and not res.kind.is_invalid() else None


def has_global_storage(cursor: ci.Cursor) -> bool:
    return lib().clang_Cursor_hasVarDeclGlobalStorage(cursor) == 1


def specialized_template(c: ci.Cursor) -> ci.Cursor | None:
    """The template a specialization instantiates (None for a plain declaration)."""
    lib = ci.conf.lib
    lib.clang_getSpecializedCursorTemplate.argtypes = [ci.Cursor]
    lib.clang_getSpecializedCursorTemplate.restype = ci.Cursor
    lib.clang_getSpecializedCursorTemplate.errcheck = ci.Cursor.from_result
    primary = lib.clang_getSpecializedCursorTemplate(c)
    return primary if primary is not None and not primary.kind.is_invalid() else None


def first_base_name(record: ci.Cursor) -> str | None:
    """The name (template arguments dropped) of a class's first base class. An implicit
    instantiation lists no bases of its own: its template's are read."""
    for decl in (record, specialized_template(record)):
        for b in decl.get_children() if decl is not None else ():
            if b.kind == ci.CursorKind.CXX_BASE_SPECIFIER:
                return plain_class_name(b.type.spelling)
    return None


def plain_class_name(spelling: str) -> str:
    for prefix in ("struct ", "class ", "const "):
        if spelling.startswith(prefix):
            spelling = spelling[len(prefix):]
    return spelling.split("<")[0].strip().split("::")[-1]
