"""clang types to KIR types."""
from __future__ import annotations

import dataclasses

import re

import clang.cindex as ci

from ..kir import types as T

TK = ci.TypeKind

_INTS = {
    TK.CHAR_S: (8, True, "char"), TK.SCHAR: (8, True, "signed char"), TK.CHAR_U: (8, False, "char"),
    TK.UCHAR: (8, False, "unsigned char"), TK.SHORT: (16, True, "short"),
    TK.USHORT: (16, False, "unsigned short"), TK.INT: (32, True, "int"),
    TK.UINT: (32, False, "unsigned int"), TK.LONG: (64, True, "long"), TK.ULONG: (64, False, "unsigned long"),
    TK.LONGLONG: (64, True, "long long"), TK.ULONGLONG: (64, False, "unsigned long long"),
    TK.INT128: (128, True, "__int128"), TK.UINT128: (128, False, "unsigned __int128"),
    TK.WCHAR: (32, True, "wchar_t"), TK.CHAR16: (16, False, "char16_t"), TK.CHAR32: (32, False, "char32_t"),
}
_FLOATS = {TK.FLOAT: (32, "float"), TK.DOUBLE: (64, "double"), TK.LONGDOUBLE: (128, "long double"),
           TK.HALF: (16, "half"), TK.FLOAT128: (128, "__float128")}
for _name, _bits in (("FLOAT16", 16), ("BFLOAT16", 16)):
    if hasattr(TK, _name):
        _FLOATS[getattr(TK, _name)] = (_bits, _name.lower())

# Classes that behave as floating-point scalars: their values are opaque to the engine.
FLOAT_CLASSES = {
    "__half": 16, "c10::Half": 16, "__nv_bfloat16": 16, "c10::BFloat16": 16,
    "__nv_fp8_e4m3": 8, "__nv_fp8_e5m2": 8, "c10::Float8_e4m3fn": 8, "c10::Float8_e5m2": 8,
    "c10::Float8_e4m3fnuz": 8, "c10::Float8_e5m2fnuz": 8, "c10::Float8_e8m0fnu": 8, "__nv_fp8_e8m0": 8,
    "__half_raw": 16, "__nv_bfloat16_raw": 16,
}
# Classes the engine models as a whole, by kind.
OPAQUE_CLASSES = {
    "at::Tensor": "tensor",
    "torch::stable::Tensor": "tensor",  # the stable ABI's tensor: the same model as at::Tensor
    "tvm::ffi::TensorView": "tensor",  # TVM-FFI's tensors (FlashInfer): the same model too
    "tvm::ffi::Tensor": "tensor",
    "torch::stable::Device": "opaque",
    "at::cuda::CUDAStream": "stream",
    "c10::IntArrayRef": "intarray",
    "c10::TensorOptions": "options",
    "c10::Device": "opaque",
    "c10::Scalar": "opaque",
}
_SUGAR = {TK.ELABORATED, TK.TYPEDEF, TK.UNEXPOSED, TK.AUTO} | {getattr(TK, n) for n in ('ATTRIBUTED', 'BTFTAGATTRIBUTED') if hasattr(TK, n)}
_QUAL = re.compile(r"\b(const|volatile|__restrict|restrict|struct|class|union|enum)\b\s*")
# Standard classes whose shims the engine runs as plain structs; the other std:: classes are opaque.
STD_RECORDS = ("std::array", "std::pair", "std::tuple", "std::integer_sequence", "std::nullopt_t", "std::unique_ptr",
               "std::shared_ptr", "std::default_delete")
# Types clang gives expressions it could not type (a call to an undeclared function, an unresolved
# overload): they have no layout, and asking libclang for their size traps (SIGILL) in clang.
_NO_LAYOUT = {TK.DEPENDENT, TK.OVERLOAD, TK.INVALID}


def clean_spelling(spelling: str) -> str:
    return _QUAL.sub("", spelling).strip()


def qualified_name(cursor: ci.Cursor) -> str:
    parts = []
    c = cursor
    while c is not None and c.kind != ci.CursorKind.TRANSLATION_UNIT:
        if c.kind in (ci.CursorKind.NAMESPACE, ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL,
                      ci.CursorKind.CLASS_TEMPLATE, ci.CursorKind.UNION_DECL,
                      ci.CursorKind.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, ci.CursorKind.ENUM_DECL) or c is cursor:
            name = c.spelling
            if name and not name.startswith("(anonymous"):
                parts.append(name)
        c = c.semantic_parent
    return "::".join(reversed(parts))


class TypeMapper:
    def __init__(self):
        self._records: dict[str, T.Type] = {}
        self._in_progress: set[str] = set()

    def __call__(self, t: ci.Type) -> T.Type:
        return self.map(t)

    def map(self, t: ci.Type) -> T.Type:
        k = t.kind
        if k in _NO_LAYOUT:
            return T.OpaqueType(clean_spelling(t.spelling), "unknown", 0, 1)
        if k in _SUGAR:
            c = t.get_canonical()
            if c.kind != k or k == TK.UNEXPOSED:
                if c.kind == TK.UNEXPOSED:
                    return self._record(c)
                return self.map(c)
        if k == TK.BOOL:
            return T.BOOL
        if k == TK.VOID:
            return T.VOID
        if k in _INTS:
            bits, signed, name = _INTS[k]
            return T.IntType(bits, signed, name)
        if k in _FLOATS:
            bits, name = _FLOATS[k]
            return T.FloatType(bits, name)
        if k in (TK.POINTER, TK.BLOCKPOINTER):
            return T.PtrType(self.map(t.get_pointee()), const=t.get_pointee().is_const_qualified())
        if k == TK.MEMBERPOINTER:
            return T.OpaqueType("member pointer", "opaque", 8, 8)
        if k in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            return T.RefType(self.map(t.get_pointee()), const=t.get_pointee().is_const_qualified())
        if k == TK.CONSTANTARRAY:
            return T.ArrayType(self.map(t.element_type), t.element_count)
        if k in (TK.INCOMPLETEARRAY, TK.VARIABLEARRAY, TK.DEPENDENTSIZEDARRAY):
            return T.ArrayType(self.map(t.element_type), None)
        if k == TK.ENUM:
            decl = t.get_declaration()
            if decl.kind != ci.CursorKind.ENUM_DECL:
                return T.INT32
            base = self.map(decl.enum_type)
            constants = [(c.spelling, c.enum_value) for c in decl.get_children()
                         if c.kind == ci.CursorKind.ENUM_CONSTANT_DECL]
            values = [v for _, v in constants]
            if len(constants) > 1 and constants[-1][0].upper().endswith("COUNT") and \
                    constants[-1][1] > max(values[:-1]):
                # `GGML_TYPE_COUNT`: how many slots there are, not one of them; past the highest
                # named one by more than one where retired enumerators left their values unused.
                values = values[:-1]
            if isinstance(base, T.IntType) and values:
                return dataclasses.replace(base, enum_range=(min(values), max(values)))
            return base
        if k == TK.NULLPTR:
            return T.PtrType(T.VOID)
        if k in (TK.FUNCTIONPROTO, TK.FUNCTIONNOPROTO):
            return T.FuncType(t.spelling)
        if k == TK.RECORD:
            return self._record(t)
        if k == TK.VECTOR or k == TK.EXTVECTOR:
            elem = self.map(t.element_type)
            count = t.element_count
            fields = tuple(T.Field("xyzw"[i] if i < 4 else f"e{i}", elem, i * elem.size) for i in range(count))
            return T.StructType(t.spelling, fields, max(t.get_size(), 0), max(t.get_align(), 1))
        return T.OpaqueType(clean_spelling(t.spelling), "unknown", max(t.get_size(), 0), max(t.get_align(), 1))

    def _scalar_payload(self, t: ci.Type) -> T.Type | None:
        """The value type of an optional of an integer, flag or floating-point number."""
        canonical = t.get_canonical()
        if canonical.get_num_template_arguments() < 1:
            return None
        payload = self.map(canonical.get_template_argument_type(0))
        return payload if isinstance(payload, (T.IntType, T.BoolType, T.FloatType)) else None

    def _record(self, t: ci.Type) -> T.Type:
        decl = t.get_declaration()
        spelling = clean_spelling(t.get_canonical().spelling)
        if spelling.startswith("(lambda at") or (decl.kind != ci.CursorKind.NO_DECL_FOUND and decl.spelling == "" and "lambda" in spelling):
            return T.ClosureType(spelling)
        base = spelling.split("<", 1)[0]
        if base in FLOAT_CLASSES:
            return T.FloatType(FLOAT_CLASSES[base], base)
        if base in OPAQUE_CLASSES:
            return T.OpaqueType(spelling, OPAQUE_CLASSES[base], max(t.get_size(), 0), max(t.get_align(), 1))
        if base in ("std::optional", "c10::optional"):
            return T.OpaqueType(spelling, "optional", max(t.get_size(), 0), 8, self._scalar_payload(t))
        # std::nullopt_t stays a (field-less) struct: std::optional's model recognises it by type; the
        # tuple shim (fields _M_head, _M_tail) is plain code the engine runs (tuple_cat, std::apply).
        if base.startswith("std::") and base not in STD_RECORDS:
            return T.OpaqueType(spelling, "std", max(t.get_size(), 0), max(t.get_align(), 1))
        if spelling in self._records:
            return self._records[spelling]
        if spelling in self._in_progress:
            return T.OpaqueType(spelling, "recursive", max(t.get_size(), 0), max(t.get_align(), 1))
        self._in_progress.add(spelling)
        try:
            fields = []
            canon = t.get_canonical()
            for base_cursor in decl.get_children() if decl.kind != ci.CursorKind.NO_DECL_FOUND else ():
                if base_cursor.kind == ci.CursorKind.CXX_BASE_SPECIFIER:
                    base_t = self.map(base_cursor.type)
                    if isinstance(base_t, T.StructType):
                        fields.extend(base_t.fields)  # offsets hold for a single non-virtual base at 0
            for f in canon.get_fields():
                off = f.get_field_offsetof()  # by cursor: an anonymous member has no name to ask by
                ftype = self.map(f.type)
                fields.append(T.Field(f.spelling, ftype, max(off, 0) // 8))
                if f.is_anonymous() and isinstance(ftype, T.StructType):
                    # An anonymous union or struct's members are members of the enclosing record
                    # (`block.d` for `union { struct { half d, s; }; half2 ds; }`), at its offset.
                    named = {x.name for x in fields}
                    fields.extend(T.Field(x.name, x.type, max(off, 0) // 8 + x.offset)
                                  for x in ftype.fields if x.name not in named)
            size, align = t.get_size(), t.get_align()
            rec = T.StructType(spelling, tuple(fields), max(size, 0), max(align, 1))
        finally:
            self._in_progress.discard(spelling)
        self._records[spelling] = rec
        return rec
