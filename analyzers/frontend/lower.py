"""Lowering libclang cursors to KIR.

A function is lowered through the cursor of its *instantiation* (reached from a call or launch
site), so template arguments are concrete and every implicit conversion is visible. Anything the
lowering does not understand becomes an ``Unsupported`` node carrying its location: the engine turns
it into an ``inconclusive`` verdict only if a feasible path reaches it.
"""
from __future__ import annotations

import itertools
import os
from pathlib import Path

import clang.cindex as ci

from ..kir import nodes as N
from ..kir import types as T
from . import attrs, clangx, discover
from .includes import SHIM_ROOT
from .mutated import mutated_globals
from .parse import ParsedFile
from .typemap import TypeMapper, clean_spelling, qualified_name

CK = ci.CursorKind
_DEBUG = bool(os.environ.get("KERNELVET_DEBUG"))

_CAST_KINDS = {
    CK.CSTYLE_CAST_EXPR: "c", CK.CXX_STATIC_CAST_EXPR: "static", CK.CXX_REINTERPRET_CAST_EXPR: "reinterpret",
    CK.CXX_CONST_CAST_EXPR: "const", CK.CXX_DYNAMIC_CAST_EXPR: "dynamic", CK.CXX_FUNCTIONAL_CAST_EXPR: "functional",
}
_CONSTANT_KINDS = {CK.INTEGER_LITERAL, CK.CHARACTER_LITERAL, CK.CXX_BOOL_LITERAL_EXPR, CK.CXX_UNARY_EXPR} | {
    getattr(CK, n) for n in ("SIZE_OF_PACK_EXPR", "CXX_NOEXCEPT_EXPR") if hasattr(CK, n)}
_CONFIG_CALLS = ("cudaConfigureCall", "__cudaPushCallConfiguration")
_SKIPPED_DECLS = {CK.TYPE_ALIAS_DECL, CK.TYPEDEF_DECL, CK.STATIC_ASSERT, CK.USING_DECLARATION,
                  CK.USING_DIRECTIVE, CK.STRUCT_DECL, CK.CLASS_DECL, CK.ENUM_DECL, CK.UNION_DECL,
                  CK.TYPE_ALIAS_TEMPLATE_DECL, CK.NAMESPACE_ALIAS, CK.FUNCTION_DECL}
_METHOD_KINDS = (CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR, CK.CONVERSION_FUNCTION)


def _ident(c: ci.Cursor) -> tuple:
    return (c.hash, c.kind.value, c.spelling)


def _is_expr(c: ci.Cursor) -> bool:
    return c.kind.is_expression()


def _has_unsupported(e: N.Node) -> bool:
    if isinstance(e, N.Unsupported):
        return True
    return any(_has_unsupported(x) for x in N.children(e))


def _tuple_element(base: N.Expr, ty: T.Type, i: int, sp: N.Span) -> N.Expr | None:
    """Element ``i`` of a ``std::tuple`` (the shim's layout: a head and a tail tuple), or None when
    ``ty`` is not one."""
    target = base
    for step in range(i + 1):
        fields = {f.name: f for f in ty.fields} if isinstance(ty, T.StructType) else {}
        if "_M_head" not in fields or "_M_tail" not in fields:
            return None
        f = fields["_M_head" if step == i else "_M_tail"]
        target, ty = N.Member(target, f.name, False, f.type, span=sp), f.type
    return target


def _unwrap(c: ci.Cursor) -> ci.Cursor:
    while c.kind == CK.UNEXPOSED_EXPR:
        ch = list(c.get_children())
        if len(ch) != 1:
            break
        c = ch[0]
    return c


def _designator(c: ci.Cursor):
    """What a designated initializer's entry names: ("field", name) for ``.name = v``, ("index",)
    for ``[i] = v``, "nested" for a chain (``.a.b = v``, ``[0].x = v``), None for a plain value."""
    if c.kind != CK.UNEXPOSED_EXPR:
        return None
    tokens = [t.spelling for t in itertools.islice(c.get_tokens(), 64)]
    if len(tokens) >= 3 and tokens[0] == "." and tokens[2] == "=":
        return ("field", tokens[1])
    if tokens[:1] == ["."]:
        return "nested"
    if tokens[:1] == ["["]:
        depth, i = 0, 0
        for i, t in enumerate(tokens):
            depth += t == "["
            depth -= t == "]"
            if depth == 0:
                break
        rest = tokens[i + 1:i + 2]
        if rest == ["="] and len(list(c.get_children())) == 2:
            return ("index",)
        return "nested" if rest in (["["], ["."]) else None  # else a value such as a lambda `[&] { ... }`
    return None


class Lowerer:
    def __init__(self, parsed: ParsedFile, workspace: Path, var_base: int = 0, external=None):
        self.parsed = parsed
        # A declaration without a body here -> (lowerer, definition) of another file, or None.
        self.external = external
        self.workspace = workspace.resolve()
        self.types = TypeMapper()
        self.program = N.Program(path=str(parsed.path.resolve()))
        self.program.functions.loader = self._load
        self._pending: dict[str, tuple] = {}
        self._vars: dict[tuple, N.VarDecl] = {}
        self._local_statics: dict[tuple, N.VarDecl] = {}
        self._mutated_names: set[str] | None = None  # globals the file's code copies into or writes
        self._next_var = var_base
        self._keys: dict[tuple, str] = {}
        self._closures: dict[int, str] = {}
        self._lambda_count: dict[str, int] = {}
        self._stack: list[str] = []
        self._sources: dict[str, bytes] = {}
        self._relpaths: dict[str, str] = {}  # clang's file name -> workspace-relative (resolving is slow)

    # ------------------------------------------------------------ spans

    def relpath(self, name: str | None) -> str:
        if not name:
            return "<unknown>"
        hit = self._relpaths.get(name)
        if hit is None:
            hit = self._relpaths[name] = self._relpath(name)
        return hit

    def _relpath(self, name: str) -> str:
        p = Path(name)
        try:
            return str(p.resolve().relative_to(self.workspace))
        except (ValueError, OSError):
            pass
        try:
            return N.SHIM_PREFIX + str(p.resolve().relative_to(SHIM_ROOT))
        except (ValueError, OSError):
            return p.name

    def source(self, name: str) -> bytes:
        if name not in self._sources:
            try:
                self._sources[name] = Path(name).read_bytes()
            except OSError:
                self._sources[name] = b""
        return self._sources[name]

    def span(self, c: ci.Cursor) -> N.Span:
        ext = c.extent
        f1, l1, c1, o1 = clangx.file_location(ext.start)
        f2, l2, c2, o2 = clangx.file_location(ext.end)
        text = ""
        if f1 and f1 == f2 and o2 >= o1:
            text = self.source(f1)[o1:o2].decode(errors="replace")
        return N.Span(self.relpath(f1), l1, c1, l2, c2, text)

    # ------------------------------------------------------------ functions

    def template_args(self, c: ci.Cursor) -> tuple[str, ...]:
        n = c.get_num_template_arguments()
        out = []
        for i in range(max(n, 0)):
            try:
                kind = c.get_template_argument_kind(i)
            except ValueError:  # a kind this libclang's Python binding does not name (a pack)
                out.append("?")
                continue
            if kind == ci.TemplateArgumentKind.TYPE:
                out.append(clean_spelling(c.get_template_argument_type(i).get_canonical().spelling))
            elif kind == ci.TemplateArgumentKind.INTEGRAL:
                value = c.get_template_argument_value(i)
                if value == -1 and c.get_template_argument_unsigned_value(i) == 1:
                    out.append("true")  # a bool argument: one bit, which reads as -1 when signed
                else:
                    out.append(str(value))
            else:
                out.append("?")
        return tuple(out)

    def _mutated(self) -> set[str]:
        """Names of the global variables the file's code (and its repository headers') copies into
        or may write (their contents change at run time, whatever their initializer says):
        frontend/mutated.py."""
        if self._mutated_names is None:
            self._mutated_names = mutated_globals(self.parsed.tu, str(self.parsed.path), str(SHIM_ROOT.resolve()) + os.sep)
        return self._mutated_names

    def function_name(self, c: ci.Cursor) -> str:
        parent = c.semantic_parent
        if parent is not None and parent.kind in (CK.STRUCT_DECL, CK.CLASS_DECL, CK.CLASS_TEMPLATE, CK.UNION_DECL):
            owner = clean_spelling(parent.type.get_canonical().spelling) if parent.type.kind != ci.TypeKind.INVALID else parent.spelling
            return f"{owner}::{c.spelling}"
        return qualified_name(c)

    def key_of(self, c: ci.Cursor) -> str:
        ident = _ident(c)
        if ident in self._keys:
            return self._keys[ident]
        targs = self.template_args(c)
        parent = c.semantic_parent
        closure = self._closures.get(parent.hash) if parent is not None else None
        if closure is not None:
            base = f"{closure}::operator()"
        else:
            base = self.function_name(c)
        sig = ",".join(clean_spelling(a.type.spelling) for a in c.get_arguments())
        key = f"{base}{'<' + ', '.join(targs) + '>' if targs else ''}({sig})"
        if key in self._keys.values():  # distinct declarations printing alike (local lambdas of twin instantiations)
            key = f"{key}#{c.hash}"
        self._keys[ident] = key
        return key

    def function(self, c: ci.Cursor | None) -> str | None:
        """Lower the function whose declaration or instantiation is ``c``; return its key, or None
        when it has no body in the translation unit (then the engine's models decide)."""
        if c is None or c.kind.is_invalid():
            return None
        defn = c.get_definition() or c
        body = None
        for ch in defn.get_children():
            if ch.kind == CK.COMPOUND_STMT:
                body = ch
        if body is None:
            return self._external(defn)
        key = self.key_of(defn)
        functions = self.program.functions
        if key in functions or key in self._stack:
            return key
        # Lowered when first asked for (LazyFunctions): a dispatch that names hundreds of
        # instantiations costs only those a verification runs.
        self._pending[key] = (defn, body)
        functions.pending[key] = any(ch.kind == CK.CUDAGLOBAL_ATTR for ch in defn.get_children())
        return key

    def _external(self, decl: ci.Cursor) -> str | None:
        """A function declared here and defined in another file of the repository: lowered by
        that file's lowerer, its program linked to this one (its callees and globals)."""
        if self.external is None or decl.kind not in (CK.FUNCTION_DECL, CK.CXX_METHOD):
            return None
        hit = self.external(decl)
        if hit is None:
            return None
        other, defn = hit
        key = other.function(defn)
        if key is None:
            return None
        self.program.link(other.program)
        return key

    def _load(self, key: str) -> None:
        defn, body = self._pending.pop(key)
        outer = self._stack
        self._stack = [key]
        try:
            fn = self._lower_function(defn, key, body)
        finally:
            self._stack = outer
        self.program.functions.pending.pop(key, None)
        dict.__setitem__(self.program.functions, key, fn)

    def constructor_inits(self, c: ci.Cursor, this_type: T.Type, explicit: dict, bases: list) -> list[N.Stmt]:
        """What a constructor does before its body, in C++'s order: the base class's constructor,
        then every field in declaration order, from the initializer list or, when the list does not
        name it, from its default member initializer (``int len_ = 0;``)."""
        out: list[N.Stmt] = []
        this = N.This(T.PtrType(this_type))
        first_base = clangx.first_base_name(c.semantic_parent) if bases else None
        own = c.semantic_parent.type.get_canonical().spelling
        for call in bases:
            ref = call.referenced
            if ref is None or ref.kind != CK.CONSTRUCTOR:
                continue
            delegating = ref.semantic_parent.type.get_canonical().spelling == own
            # Only the first base surely lies at offset 0, where a derived-to-base cast finds it.
            if not delegating and (first_base is None or clangx.plain_class_name(ref.semantic_parent.spelling) != first_base):
                continue
            args = list(call.get_arguments())
            ptypes = tuple(self.types(a.type) for a in ref.get_arguments())
            out.append(N.ExprStmt(N.Call(self.function_name(ref), self.function(ref), self.arguments(args, ref), T.VOID,
                                         this=this, param_types=ptypes, span=self.span(call))))
            if delegating:
                return out  # the constructor it delegates to initializes every field
        fields = list(c.semantic_parent.type.get_canonical().get_fields())
        named = {f.spelling for f in fields}
        for f in fields + [m for m, _ in explicit.values() if m.spelling not in named]:
            member, init = explicit.get(f.spelling, (f, None))
            if init is None:
                init = next((x for x in reversed(list(f.get_children())) if _is_expr(x)), None)
                if init is None:
                    continue
                value = self.expr(init)
                if _has_unsupported(value):
                    continue  # a dependent default the instantiation does not show: left unknown
            else:
                value = self.expr(init)
            ft = self.types(member.type)
            target = N.Member(this, f.spelling, True, ft, span=self.span(member))
            out.append(N.ExprStmt(N.Assign("=", target, value, ft, span=self.span(init))))
        return out

    def _lower_function(self, c: ci.Cursor, key: str, body: ci.Cursor) -> N.Function:
        params = []
        kinds = set()
        explicit: dict = {}  # a constructor's member initializers: field -> (member ref, init)
        bases: list = []  # its base-class constructor calls
        children = list(c.get_children())
        this_type = None
        if c.kind in _METHOD_KINDS and not c.is_static_method():
            parent = c.semantic_parent
            this_type = self.types(parent.type) if parent is not None else T.VOID
        for i, ch in enumerate(children):
            if ch.kind == CK.PARM_DECL:
                params.append(self.var(ch, "param"))
            elif ch.kind == CK.CUDAGLOBAL_ATTR:
                kinds.add("global")
            elif ch.kind == CK.CUDADEVICE_ATTR:
                kinds.add("device")
            elif ch.kind == CK.CUDAHOST_ATTR:
                kinds.add("host")
            elif ch.kind == CK.MEMBER_REF and c.kind == CK.CONSTRUCTOR and i + 1 < len(children):
                if _is_expr(children[i + 1]):
                    explicit[ch.spelling] = (ch, children[i + 1])
            elif ch.kind == CK.CALL_EXPR and c.kind == CK.CONSTRUCTOR and (i == 0 or children[i - 1].kind != CK.MEMBER_REF):
                bases.append(ch)
        if not params:
            # Implicit members (a defaulted operator=) list their parameters only as arguments.
            params = [self.var(a, "param") for a in (c.get_arguments() or [])]
        if "global" in kinds:
            kind = "kernel"
        elif self._closures.get(c.semantic_parent.hash if c.semantic_parent else -1):
            kind = "lambda"
        elif kinds == {"device"}:
            kind = "device"
        elif kinds == {"device", "host"}:
            kind = "hostdevice"
        else:
            kind = "host"
        stmts = self.constructor_inits(c, this_type, explicit, bases) if c.kind == CK.CONSTRUCTOR and this_type else []
        for err in self.parse_errors(c, body.extent.start.file):
            stmts.append(N.UnsupportedStmt(f"parse error: {err.message}", span=self.error_span(err)))
        stmts.extend(self.block(body).stmts)
        name = self.function_name(c)
        targs = self.template_args(c)
        display = f"{name}<{', '.join(targs)}>" if targs else name
        if kind == "lambda":
            display = f"lambda in {self._stack[-2] if len(self._stack) > 1 else name}"
        max_threads = None
        if kind == "kernel":
            values = dict(zip(attrs.template_parameter_names(c), targs))
            max_threads = attrs.launch_bounds(c, {k: v for k, v in values.items() if v.lstrip("-").isdigit()})
        return N.Function(key, name, display, tuple(params), self.types(c.result_type), N.Block(tuple(stmts), span=self.span(body)),
                          kind, this_type, span=self.span(c), max_threads=max_threads)

    # ------------------------------------------------------------ declarations

    def var(self, c: ci.Cursor, storage: str | None = None) -> N.VarDecl:
        ident = _ident(c)
        if ident in self._vars:
            return self._vars[ident]
        if storage is None:
            storage = "local"
            kids = list(c.get_children())
            if any(k.kind == CK.CUDASHARED_ATTR for k in kids):
                storage = "extern_shared" if c.type.kind == ci.TypeKind.INCOMPLETEARRAY else "shared"
            elif any(k.kind == CK.CUDACONSTANT_ATTR for k in kids):
                storage = "constant"
            elif c.storage_class == ci.StorageClass.STATIC:
                storage = "static"
        self._next_var += 1
        ty = self.types(c.type)
        if storage == "param" and isinstance(ty, T.ArrayType):
            # `int p[]`, `float a[4]`, `float m[][4]` as parameters are pointers to their element (the
            # caller's array is not copied): a `[4]` states nothing about the memory behind it.
            ty = T.PtrType(ty.elem)
        v = N.VarDecl(self._next_var, c.spelling, ty, storage, span=self.span(c),
                      const=_const_object(c.type), align=attrs.declared_alignment(c))
        self._vars[ident] = v
        return v

    # ------------------------------------------------------------ statements

    def block(self, c: ci.Cursor) -> N.Block:
        out: list[N.Stmt] = []
        for ch in c.get_children():
            out.extend(self.stmts(ch))
        return N.Block(tuple(out), span=self.span(c))

    def stmt(self, c: ci.Cursor) -> N.Stmt:
        out = self.stmts(c)
        if len(out) == 1:
            return out[0]
        return N.Block(tuple(out), span=self.span(c))

    def stmts(self, c: ci.Cursor) -> list[N.Stmt]:
        k = c.kind
        sp = self.span(c)
        if k == CK.COMPOUND_STMT:
            return [self.block(c)]
        if k == CK.DECL_STMT:
            out = []
            for d in c.get_children():
                if d.kind == CK.VAR_DECL:
                    out.append(self.decl(d))
                elif d.kind == CK.UNEXPOSED_DECL and d.spelling.startswith("["):
                    out.extend(self.decomposition(d))
                elif d.kind not in _SKIPPED_DECLS:
                    out.append(N.UnsupportedStmt(f"declaration {d.kind.name.lower()}", span=self.span(d)))
            return out
        if k in (CK.NULL_STMT, CK.STATIC_ASSERT, CK.TYPE_ALIAS_DECL, CK.TYPEDEF_DECL):
            return []
        if k == CK.IF_STMT:
            return [self.if_stmt(c)]
        if k == CK.FOR_STMT:
            return [self.for_stmt(c)]
        if k == CK.WHILE_STMT:
            ch = list(c.get_children())
            if len(ch) != 2:
                return [N.UnsupportedStmt("while with a condition variable", span=sp)]
            return [N.While(self.cond(ch[0]), self.stmt(ch[1]), span=sp)]
        if k == CK.DO_STMT:
            ch = list(c.get_children())
            return [N.DoWhile(self.stmt(ch[0]), self.cond(ch[1]), span=sp)]
        if k == CK.SWITCH_STMT:
            return [self.switch(c)]
        if k == CK.RETURN_STMT:
            ch = list(c.get_children())
            return [N.Return(self.expr(ch[0]) if ch else None, span=sp)]
        if k == CK.BREAK_STMT:
            return [N.Break(span=sp)]
        if k == CK.CONTINUE_STMT:
            return [N.Continue(span=sp)]
        if k in (CK.UNEXPOSED_STMT,):
            # AttributedStmt (#pragma unroll, [[likely]]) wraps the statement it applies to.
            ch = list(c.get_children())
            if len(ch) == 1:
                return self.stmts(ch[0])
            return [N.UnsupportedStmt("statement", span=sp)]
        if k in (CK.ASM_STMT, CK.MS_ASM_STMT):
            return [N.ExprStmt(self.asm(c), span=sp)]
        if k in (CK.CASE_STMT, CK.DEFAULT_STMT):
            return [N.UnsupportedStmt("case label outside a switch body", span=sp)]
        if k == CK.CXX_FOR_RANGE_STMT:
            return [self.range_for(c)]
        if _is_expr(c):
            return [N.ExprStmt(self.expr(c), span=sp)]
        return [N.UnsupportedStmt(k.name.lower().replace("_", " "), span=sp)]

    def decl(self, d: ci.Cursor) -> N.Stmt:
        v = self.var(d)
        if clangx.has_global_storage(d) and v.storage in ("static", "constant"):
            # A function-local static: one object for all threads; its initializer runs once.
            init = clangx.var_initializer(d)
            self._local_statics[_ident(d)] = v
            self.program.globals.setdefault(f"{v.name}#{v.id}", v)
            return N.Decl(v, self.expr(init) if init is not None else None, span=self.span(d))
        if v.storage in ("shared", "extern_shared"):
            # A function-local __shared__ array: its uses name this declaration, of this template
            # instantiation (a global by name would be one object, one size, for all of them).
            self._local_statics[_ident(d)] = v
        init = clangx.var_initializer(d)
        return N.Decl(v, self.expr(init) if init is not None else None, span=self.span(d))

    def decomposition(self, d: ci.Cursor) -> list[N.Stmt]:
        """``auto [a, b] = e;`` of a struct or an array: a hidden object initialised by ``e``, and
        each name a reference to its member or element (as C++ defines them); of a ``std::tuple``,
        its element i, as ``get<i>`` reads it. Other tuple-likes (a class's own get<i>) are
        unsupported."""
        sp = self.span(d)
        kids = list(d.get_children())
        names = [k for k in kids if k.kind == CK.UNEXPOSED_DECL]
        inits = [k for k in kids if _is_expr(k)]
        if not inits:
            return [N.UnsupportedStmt("a structured binding without an initializer", span=sp)]
        ty = self.types(d.type)
        hidden = self._local_var(d.spelling, ty, sp)
        out: list[N.Stmt] = [N.Decl(hidden, self.expr(inits[-1]), span=sp)]
        obj = T.strip_ref(ty)
        fields = [f for f in obj.fields] if isinstance(obj, T.StructType) else None
        for i, b in enumerate(names):
            bty = self.types(b.type)
            base = N.Var(hidden, hidden.ty, span=sp)
            element = _tuple_element(base, obj, i, sp)
            if element is not None:
                target = element
            elif fields is not None and i < len(fields):
                target = N.Member(base, fields[i].name, False, fields[i].type, span=sp)
            elif isinstance(obj, T.ArrayType):
                target = N.Index(base, N.IntLit(i, T.INT64, span=sp), obj.elem, span=sp)
            else:
                return [N.UnsupportedStmt(f"a structured binding of {obj.name}", span=sp)]
            v = self._vars[_ident(b)] = self._local_var(b.spelling, T.RefType(bty), self.span(b))
            out.append(N.Decl(v, target, span=sp))
        return out

    def cond(self, c: ci.Cursor) -> N.Expr:
        return self.expr(c)

    def if_stmt(self, c: ci.Cursor) -> N.Stmt:
        ch = list(c.get_children())
        init = None
        if ch and not _is_expr(ch[0]) and len(ch) >= 3:
            init = self.stmt(ch[0])
            ch = ch[1:]
        if ch and ch[0].kind == CK.VAR_DECL:  # if (T x = ...): the variable is the condition
            decl = self.decl(ch[0])
            cond_expr = N.Cast("implicit", N.Var(decl.var, decl.var.ty), T.BOOL)
            rest = ch[1:]
            if rest and _is_expr(rest[0]) and len(rest) >= 2 and rest[0].kind != CK.COMPOUND_STMT:
                cond_expr = self.cond(rest[0])
                rest = rest[1:]
            then = self.stmt(rest[0])
            els = self.stmt(rest[1]) if len(rest) > 1 else None
            return N.Block((decl, N.If(cond_expr, then, els, span=self.span(c))), span=self.span(c))
        if len(ch) < 2:
            return N.UnsupportedStmt("if statement", span=self.span(c))
        then = self.stmt(ch[1])
        els = self.stmt(ch[2]) if len(ch) > 2 else None
        return N.If(self.cond(ch[0]), then, els, init, span=self.span(c))

    def for_stmt(self, c: ci.Cursor) -> N.Stmt:
        ch = list(c.get_children())
        sp = self.span(c)
        body = ch[-1]
        parts = ch[:-1]
        init = cond = inc = None
        if len(parts) == 3:
            init, cond, inc = parts
        elif parts:
            slots = self._for_slots(c)
            if slots is None:
                return N.UnsupportedStmt("for statement with omitted parts inside a macro", span=sp)
            semi1, semi2 = slots
            for p in parts:
                off = clangx.file_location(p.extent.start)[3]
                if off < semi1:
                    init = p
                elif off < semi2:
                    cond = p
                else:
                    inc = p
        return N.For(
            self.stmt(init) if init is not None else None,
            self.cond(cond) if cond is not None else None,
            self.expr(inc) if inc is not None else None,
            self.stmt(body), span=sp)

    def range_for(self, c: ci.Cursor) -> N.Stmt:
        """``for (x : range)`` as the counted loop it stands for, where the range is one kernelvet
        can count: a C array of known length (``x`` a copy of, or a reference to, each element)
        or ``c10::irange([begin,] end)`` (``x`` each integer from ``begin``, default 0, below
        ``end``; empty when ``end <= begin``, as c10 defines it). ``end`` is evaluated once, as the
        range is. Other ranges (containers, iterators) are unsupported, with what they are."""
        sp = self.span(c)
        ch = list(c.get_children())
        if len(ch) != 3 or ch[0].kind != CK.VAR_DECL:
            return N.UnsupportedStmt("range-based for", span=sp)
        var_c, range_c, body_c = ch
        rng = _unwrap(range_c)
        loop_var = self.var(var_c)
        rty = T.strip_ref(self.types(range_c.type))
        if isinstance(rty, T.ArrayType) and rty.count is not None:
            if rng.kind not in (CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR):
                return N.UnsupportedStmt("range-based for over an array expression that is not a variable or "
                                         "member", span=sp)
            counter = self._local_var(f"{var_c.spelling}_index", T.INT64, sp)  # named for witnesses
            element = N.Index(self.expr(range_c), N.Var(counter, T.INT64, span=sp), rty.elem, span=sp)
            first = N.Decl(loop_var, element, span=self.span(var_c))
            return self._counted(counter, N.IntLit(0, T.INT64, span=sp), N.IntLit(rty.count, T.INT64, span=sp),
                                 first, body_c, sp)
        if rng.kind == CK.CALL_EXPR and rng.spelling == "irange" and rng.referenced is not None \
                and qualified_name(rng.referenced) == "c10::irange":  # at::irange names the same function
            args = list(rng.get_arguments())
            inits = [k for k in var_c.get_children() if _is_expr(k)]
            if len(args) not in (1, 2) or not inits:
                return N.UnsupportedStmt("c10::irange with a step", span=sp)
            ety = self.types(inits[0].type)  # the range's integers: operator*'s type (end's)
            if not isinstance(ety, T.IntType):
                return N.UnsupportedStmt("c10::irange over a non-integer type", span=sp)
            counter = self._local_var(var_c.spelling, ety, sp)  # the value the witness shows
            begin = N.Cast("implicit", self.expr(args[0]), ety, span=sp) if len(args) == 2 else N.IntLit(0, ety, span=sp)
            first = N.Decl(loop_var, N.Var(counter, ety, span=sp), span=self.span(var_c))
            return self._counted(counter, begin, N.Cast("implicit", self.expr(args[-1]), ety, span=sp), first, body_c,
                                 sp)
        what = rty.name if getattr(rty, "name", None) else range_c.type.spelling
        return N.UnsupportedStmt(f"range-based for over `{what}` (arrays of known length and c10::irange are "
                                 "supported)", span=sp)

    def _local_var(self, name: str, ty: T.Type, sp: N.Span) -> N.VarDecl:
        """A local the lowering declares itself (a loop counter, a structured binding's object)."""
        self._next_var += 1
        return N.VarDecl(self._next_var, name, ty, "local", span=sp)

    def _counted(self, counter: N.VarDecl, begin: N.Expr, end: N.Expr, first: N.Stmt, body_c: ci.Cursor,
                 sp: N.Span) -> N.Stmt:
        """``{ end' = end; for (counter = begin; counter < end'; ++counter) { first; body } }``."""
        ty = counter.ty
        bound = self._local_var(f"__{counter.name}_end", ty, sp)
        body = self.stmt(body_c)
        loop = N.For(N.Decl(counter, begin, span=sp),
                     N.Binary("<", N.Var(counter, ty, span=sp), N.Var(bound, ty, span=sp), T.BOOL, span=sp),
                     N.IncDec("++", True, N.Var(counter, ty, span=sp), ty, span=sp),
                     N.Block((first, body), span=body.span), span=sp)
        return N.Block((N.Decl(bound, end, span=sp), loop), span=sp)

    def _for_slots(self, c: ci.Cursor) -> tuple[int, int] | None:
        depth = 0
        semis = []
        for tok in c.get_tokens():
            s = tok.spelling
            if s == "(":
                depth += 1
            elif s == ")":
                depth -= 1
                if depth == 0:
                    break
            elif s == ";" and depth == 1:
                semis.append(clangx.file_location(tok.location)[3])
        return (semis[0], semis[1]) if len(semis) == 2 else None

    def switch(self, c: ci.Cursor) -> N.Stmt:
        ch = list(c.get_children())
        if len(ch) != 2:
            return N.UnsupportedStmt("switch with an init statement", span=self.span(c))
        flat: list[N.Stmt] = []
        labels: list[tuple[int | None, int]] = []

        def visit(s: ci.Cursor):
            if s.kind == CK.CASE_STMT:
                kids = list(s.get_children())
                value = clangx.evaluate_int(kids[0])
                if value is None:
                    flat.append(N.UnsupportedStmt("case label that is not a constant", span=self.span(s)))
                    return
                labels.append((value, len(flat)))
                visit(kids[-1])
            elif s.kind == CK.DEFAULT_STMT:
                labels.append((None, len(flat)))
                kids = list(s.get_children())
                if kids:
                    visit(kids[-1])
            else:
                flat.extend(self.stmts(s))

        body = ch[1]
        if body.kind == CK.COMPOUND_STMT:
            for s in body.get_children():
                visit(s)
        else:
            visit(body)
        return N.Switch(self.expr(ch[0]), tuple(flat), tuple(labels), span=self.span(c))

    def asm(self, c: ci.Cursor) -> N.Expr:
        n_out = 0
        section = 0
        depth = 0
        for tok in c.get_tokens():
            s = tok.spelling
            if s == "(":
                depth += 1
            elif s == ")":
                depth -= 1
            elif s == ":" and depth == 1:
                section += 1
            elif section == 1 and depth == 1 and tok.kind == ci.TokenKind.LITERAL and s.startswith('"'):
                n_out += 1
        exprs = [self.expr(e) for e in c.get_children() if _is_expr(e)]
        return N.Asm(tuple(exprs[:n_out]), tuple(exprs[n_out:]), span=self.span(c))

    # ------------------------------------------------------------ expressions

    def expr(self, c: ci.Cursor) -> N.Expr:
        try:
            return self._expr(c)
        except (ValueError, AttributeError, IndexError, KeyError) as exc:  # libclang gave a shape we do not know
            if _DEBUG:
                raise
            return N.Unsupported(f"expression {c.kind.name.lower()} ({exc.__class__.__name__})", self.types(c.type), span=self.span(c))

    def _expr(self, c: ci.Cursor) -> N.Expr:
        k = c.kind
        sp = self.span(c)
        ty = self.types(c.type)
        if k == CK.UNEXPOSED_EXPR:
            return self.unexposed(c, ty, sp)
        if k == CK.PAREN_EXPR:
            return self.expr(next(iter(c.get_children())))
        if k in _CONSTANT_KINDS:
            value = clangx.evaluate_int(c)
            if value is None and k == CK.CXX_BOOL_LITERAL_EXPR:
                value = 1 if any(t.spelling == "true" for t in c.get_tokens()) else 0
            if value is None:
                return N.Unsupported(f"constant {k.name.lower()}", ty, span=sp)
            return N.IntLit(value, ty, span=sp)
        if k == CK.FLOATING_LITERAL:
            return N.FloatLit(ty, span=sp)
        if k in (CK.STRING_LITERAL, CK.OBJC_STRING_LITERAL):
            return N.StrLit(ty, span=sp, text=c.spelling or "")
        if k in (CK.CXX_NULL_PTR_LITERAL_EXPR, CK.GNU_NULL_EXPR):
            return N.NullLit(ty, span=sp)
        if k == CK.DECL_REF_EXPR:
            return self.decl_ref(c, ty, sp)
        if k == CK.MEMBER_REF_EXPR:
            return self.member(c, ty, sp)
        if k == CK.ARRAY_SUBSCRIPT_EXPR:
            base, idx = list(c.get_children())
            b, i = self.expr(base), self.expr(idx)
            if isinstance(b.ty, (T.IntType, T.BoolType)) and isinstance(i.ty, (T.PtrType, T.ArrayType)):
                b, i = i, b
            return N.Index(b, i, ty, span=sp)
        if k == CK.CALL_EXPR:
            return self.call(c, ty, sp)
        if k == CK.UNARY_OPERATOR:
            op = clangx.unop(c)
            operand = self.expr(next(iter(c.get_children())))
            if op in ("pre++", "pre--", "post++", "post--"):
                return N.IncDec(op[-2:], op.startswith("pre"), operand, ty, span=sp)
            if op == "&":
                return N.AddrOf(operand, ty, span=sp)
            if op == "*":
                return N.Deref(operand, ty, span=sp)
            if op in ("-", "+", "~", "!"):
                return N.Unary(op, operand, ty, span=sp)
            if op == "__extension__":
                return operand
            return N.Unsupported(f"unary operator {op}", ty, span=sp)
        if k in (CK.BINARY_OPERATOR, CK.COMPOUND_ASSIGNMENT_OPERATOR):
            op = clangx.binop(c)
            lhs, rhs = [self.expr(x) for x in c.get_children()]
            if op.endswith("=") and op not in ("==", "!=", "<=", ">="):
                return N.Assign(op, lhs, rhs, ty, span=sp)
            if op in (".*", "->*", "<=>", "?"):
                return N.Unsupported(f"operator {op}", ty, span=sp)
            return N.Binary(op, lhs, rhs, ty, span=sp)
        if k == CK.CONDITIONAL_OPERATOR:
            a, b, d = [self.expr(x) for x in c.get_children()]
            return N.Cond(a, b, d, ty, span=sp)
        if k in _CAST_KINDS:
            operand = [x for x in c.get_children() if _is_expr(x)]
            if not operand:
                return N.Unsupported("cast without operand", ty, span=sp)
            inner = self.expr(operand[-1])
            if isinstance(inner, N.Construct) and not isinstance(ty, (T.IntType, T.FloatType, T.PtrType, T.BoolType)):
                return inner
            return N.Cast(_CAST_KINDS[k], inner, ty, span=sp)
        if k == CK.INIT_LIST_EXPR:
            kids = [x for x in c.get_children() if _is_expr(x)]
            marks = [_designator(x) for x in kids]
            if any(marks):
                return self.designated_init(kids, marks, ty, sp)
            return N.InitList(tuple(self.expr(x) for x in kids), ty, span=sp)
        if k == CK.LAMBDA_EXPR:
            return self.lambda_expr(c, ty, sp)
        if k == CK.CXX_THIS_EXPR:
            return N.This(ty, span=sp)
        if k == CK.CXX_NEW_EXPR:
            return self.new_expr(c, ty, sp)
        if k == CK.CXX_THROW_EXPR:
            return N.Call("__kernelvet_throw", None, (), T.VOID, span=sp)
        if k == CK.PACK_EXPANSION_EXPR:
            return N.Unsupported("pack expansion", ty, span=sp)
        return N.Unsupported(k.name.lower().replace("_", " "), ty, span=sp)

    def designated_init(self, kids: list, marks: list, ty: T.Type, sp: N.Span) -> N.Expr:
        """A C99 designated initializer (``[GGML_TYPE_F32] = {.type_size = 4, ...}``, ggml's type
        table; ``.x = 1`` also in C++20) in the positional form the engine evaluates: each value at
        the member or index it names, the next one after it, and the slots in between zero (an
        empty list), as C and C++ leave them."""
        sty = T.strip_ref(ty)
        names = [f.name for f in sty.fields] if isinstance(sty, T.StructType) else None
        slots: dict[int, N.Expr] = {}
        at = 0
        for kid, mark in zip(kids, marks):
            value = kid
            if mark == "nested":
                return N.Unsupported("nested designator", ty, span=sp)
            if isinstance(mark, tuple) and mark[0] == "field":
                if names is None or mark[1] not in names:
                    return N.Unsupported(f"designator .{mark[1]}", ty, span=sp)
                at, value = names.index(mark[1]), list(kid.get_children())[-1]
            elif isinstance(mark, tuple):
                index, value = list(kid.get_children())
                at = clangx.evaluate_int(index)
                if at is None or not isinstance(sty, T.ArrayType) or at < 0 or \
                        (sty.count is not None and at >= sty.count):
                    return N.Unsupported("array designator", ty, span=sp)
            slots[at] = self.expr(value)
            at += 1
        elem = (lambda i: sty.fields[i].type) if names is not None else (lambda i: getattr(sty, "elem", T.VOID))
        return N.InitList(tuple(slots.get(i, N.InitList((), elem(i), span=sp)) for i in range(max(slots) + 1)),
                          ty, span=sp)

    def new_expr(self, c: ci.Cursor, ty: T.Type, sp: N.Span) -> N.Expr:
        """``new T[n]`` and ``new T`` of a scalar, a pointer or a plain struct: a host allocation of
        ``n * sizeof(T)`` bytes (its contents unknown, as malloc's are). A new-expression that
        runs a constructor or an initializer stays unsupported."""
        elem = ty.pointee if isinstance(ty, T.PtrType) else None
        plain = T.is_scalar(elem) or (isinstance(elem, T.StructType)
                                      and all(T.is_scalar(T.strip_ref(f.type)) for f in elem.fields))
        operands = [x for x in c.get_children() if _is_expr(x)]
        tokens = [t.spelling for t in c.get_tokens()]
        is_array = "[" in tokens and (operands and tokens.index("[") < min(
            (tokens.index(x) for x in ("(", "{") if x in tokens), default=len(tokens)))
        if elem is None or not plain or elem.size <= 0 or (len(operands) != (1 if is_array else 0)):
            return N.Unsupported("new-expression that runs a constructor or an initializer", ty, span=sp)
        size = N.IntLit(elem.size, T.INT64, span=sp)
        if is_array:
            count = N.Cast("implicit", self.expr(operands[0]), T.INT64, span=sp)
            size = N.Binary("*", count, size, T.INT64, span=sp)
        return N.Cast("static", N.Call(N.NEW_CALL, None, (size,), T.PtrType(T.VOID), span=sp), ty, span=sp)

    def unexposed(self, c: ci.Cursor, ty: T.Type, sp: N.Span) -> N.Expr:
        ch = list(c.get_children())
        if not ch:
            # A default argument, a value-initialisation (T()), or an implicit member init.
            value = clangx.evaluate_int(c)
            if value is not None and isinstance(ty, (T.IntType, T.BoolType)):
                return N.IntLit(value, ty, span=sp)
            if isinstance(ty, T.PtrType):
                return N.NullLit(ty, span=sp)
            if isinstance(ty, T.FloatType):
                return N.FloatLit(ty, span=sp)
            if isinstance(ty, (T.StructType, T.OpaqueType, T.ArrayType)):
                return N.Construct(ty.name, None, (), ty, span=sp)
            return N.Unsupported("implicit expression", ty, span=sp)
        exprs = [x for x in ch if _is_expr(x)]
        if len(exprs) == 1 and len(ch) == 1:
            inner = self.expr(exprs[0])
            return self.implicit_cast(inner, ty, sp)
        if len(exprs) == 1:
            return self.implicit_cast(self.expr(exprs[0]), ty, sp)
        return N.Unsupported("expression", ty, span=sp)

    def implicit_cast(self, inner: N.Expr, ty: T.Type, sp: N.Span) -> N.Expr:
        it = T.strip_ref(inner.ty)
        ty = T.strip_ref(ty)
        if _same_type(it, ty) or isinstance(it, T.FuncType) or isinstance(ty, T.VoidType):
            return inner
        if isinstance(it, T.ArrayType) and isinstance(ty, T.PtrType):
            return N.Cast("decay", inner, ty, span=sp)
        if isinstance(it, T.PtrType) and isinstance(ty, T.ArrayType):
            return inner  # an array parameter's declared type, read: it is the pointer (see var)
        if isinstance(inner, N.Construct) or isinstance(ty, (T.StructType, T.OpaqueType, T.ClosureType)):
            if isinstance(it, (T.StructType, T.OpaqueType, T.ClosureType)) or isinstance(inner, N.Construct):
                return inner if isinstance(inner, N.Construct) or it.name == ty.name else N.Cast("base", inner, ty, span=sp)
        return N.Cast("implicit", inner, ty, span=sp)

    def decl_ref(self, c: ci.Cursor, ty: T.Type, sp: N.Span) -> N.Expr:
        ref = c.referenced
        if ref is None:
            value = clangx.evaluate_int(c)
            if value is not None:
                return N.IntLit(value, ty, span=sp)
            return N.Unsupported("reference to an unknown declaration", ty, span=sp)
        rk = ref.kind
        if rk == CK.ENUM_CONSTANT_DECL:
            return N.IntLit(ref.enum_value, ty, span=sp)
        if rk == CK.TEMPLATE_NON_TYPE_PARAMETER or c.spelling == "":
            value = clangx.evaluate_int(c)
            if value is not None:
                return N.IntLit(value, ty, span=sp)
        if rk == CK.UNEXPOSED_DECL and _ident(ref) in self._vars:  # a structured binding's name
            v = self._vars[_ident(ref)]
            return N.Var(v, v.ty, span=sp)
        if rk in (CK.VAR_DECL, CK.PARM_DECL):
            if isinstance(ty, (T.IntType, T.BoolType)) and ref.type.is_const_qualified():
                value = clangx.evaluate_int(c)
                if value is not None:
                    return N.IntLit(value, ty, span=sp)
            if rk == CK.VAR_DECL and clangx.has_global_storage(ref):
                ident = _ident(ref)
                if ident in self._local_statics:
                    v = self._local_statics[ident]
                    return N.Var(v, v.ty, span=sp)
                name = qualified_name(ref)
                if name not in self.program.globals:
                    self.program.globals[name] = self.var(ref, self._global_storage(ref))
                    init = clangx.var_initializer(ref)
                    if init is not None and name not in ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize") \
                            and ref.spelling not in self._mutated():
                        # A variable nothing copies into or writes holds its initializer.
                        self.program.global_inits[name] = self.expr(init)
                return N.Global(name, ty, span=sp)
            v = self.var(ref)
            return N.Var(v, v.ty if not isinstance(v.ty, T.RefType) else v.ty, span=sp)
        if rk in (CK.FUNCTION_DECL, CK.CXX_METHOD, CK.FUNCTION_TEMPLATE):
            key = self.function(ref)
            return N.Global(key or self.function_name(ref), T.FuncType(ref.spelling), span=sp)
        if rk == CK.UNEXPOSED_DECL:
            # A variable template's specialisation (std::is_same_v<A, B>, a constexpr bound): a
            # constant integer is folded; a floating-point one is a float value (opaque anyway).
            value = clangx.evaluate_int(c) if isinstance(ty, (T.IntType, T.BoolType)) else None
            if value is not None:
                return N.IntLit(value, ty, span=sp)
            if isinstance(ty, T.FloatType) and ref.type.is_const_qualified():
                return N.FloatLit(ty, span=sp)
        return N.Unsupported(f"reference to {rk.name.lower()}", ty, span=sp)

    def _global_storage(self, ref: ci.Cursor) -> str:
        kids = list(ref.get_children())
        if any(k.kind == CK.CUDASHARED_ATTR for k in kids):
            return "extern_shared" if ref.type.kind == ci.TypeKind.INCOMPLETEARRAY else "shared"
        if any(k.kind == CK.CUDACONSTANT_ATTR for k in kids):
            return "constant"
        return "global"

    def member(self, c: ci.Cursor, ty: T.Type, sp: N.Span) -> N.Expr:
        ref = c.referenced
        kids = [x for x in c.get_children() if _is_expr(x)]
        if ref is not None and ref.kind == CK.VAR_DECL:  # static data member
            value = clangx.evaluate_int(c)
            if value is not None and isinstance(ty, (T.IntType, T.BoolType)):
                return N.IntLit(value, ty, span=sp)
            return self.decl_ref(c, ty, sp)
        if ref is not None and ref.kind == CK.ENUM_CONSTANT_DECL:
            return N.IntLit(ref.enum_value, ty, span=sp)
        if kids:
            base = self.expr(kids[0])
        else:
            parent = ref.semantic_parent if ref is not None else None
            base = N.This(T.PtrType(self.types(parent.type) if parent is not None else T.VOID), span=sp)
        arrow = isinstance(T.strip_ref(base.ty), T.PtrType)
        return N.Member(base, c.spelling, arrow, ty, span=sp)

    def lambda_expr(self, c: ci.Cursor, ty: T.Type, sp: N.Span) -> N.Expr:
        decl = c.type.get_declaration()
        owner = self._stack[-1] if self._stack else "<toplevel>"
        if decl.hash not in self._closures:
            n = self._lambda_count.get(owner, 0)
            self._lambda_count[owner] = n + 1
            self._closures[decl.hash] = f"{owner}::lambda#{n}"
        return N.Lambda(self._closures[decl.hash], (), T.ClosureType(self._closures[decl.hash]), span=sp)

    def call(self, c: ci.Cursor, ty: T.Type, sp: N.Span) -> N.Expr:
        ref = c.referenced
        children = list(c.get_children())
        if len(children) >= 2:
            cfg = _unwrap(children[1])
            if cfg.kind == CK.CALL_EXPR and cfg.spelling in _CONFIG_CALLS:
                return self.launch(c, cfg, sp)
        if discover.is_launch_ex(c):
            return self.launch_ex(c, ty, sp)
        args_c = list(c.get_arguments())
        if (ref is None or ref.kind.is_invalid()) and children:
            ref = _template_argument_function(children[0])
        if (ref is None or ref.kind.is_invalid()) and children and _is_function_pointer(children[0]):
            # A call through a pointer an expression computes (an entry of a table of functions).
            return self.pointer_call(children[0], args_c, ty, sp)
        if ref is None or ref.kind.is_invalid():
            return N.Unsupported("call to an unresolved function", ty, span=sp)
        if ref.kind == CK.CONSTRUCTOR:
            key = self.function(ref)
            ptypes = tuple(self.types(a.type) for a in ref.get_arguments())
            return N.Construct(self.function_name(ref), key, self.arguments(args_c, ref), ty, ptypes, span=sp)
        if ref.kind in (CK.VAR_DECL, CK.PARM_DECL, CK.FIELD_DECL):
            return self.pointer_call(children[0], args_c, ty, sp)
        name = self.function_name(ref)
        ptypes = tuple(self.types(a.type) for a in ref.get_arguments())
        targs = self.template_args(ref)
        is_method = ref.kind in _METHOD_KINDS and not ref.is_static_method()
        this = None
        if is_method:
            callee = _unwrap(children[0]) if children else None
            # A member call names the method (obj.f(...)); an operator call on a member (s.g = x)
            # starts with its first operand, a member expression naming the field.
            if callee is not None and callee.kind == CK.MEMBER_REF_EXPR and callee.referenced is not None \
                    and callee.referenced.kind in _METHOD_KINDS:
                kids = [x for x in callee.get_children() if _is_expr(x)]
                if kids:
                    this = self.expr(kids[0])
                else:
                    parent = ref.semantic_parent
                    this = N.This(T.PtrType(self.types(parent.type)), span=sp)
                args = self.arguments(args_c, ref)
            else:  # an operator call: the object is the first operand
                if not args_c:
                    return N.Unsupported(f"call to {name}", ty, span=sp)
                this = self.expr(args_c[0])
                args = self.arguments(args_c[1:], ref)
        else:
            args = self.arguments(args_c, ref)
            if ref.kind == CK.FUNCTION_DECL and attrs.is_noreturn(ref):
                # Nothing after it runs: the path ends here, whatever the body does on its way out.
                return N.Call(N.NORETURN_CALL, None, args, ty, span=sp)
        # After the operands: a lambda operand registers its closure before its operator() lowers.
        key = self.function(ref)
        return N.Call(name, key, args, ty, this, None, targs, ptypes, span=sp)

    def pointer_call(self, callee_c: ci.Cursor, args_c: list, ty: T.Type, sp: N.Span) -> N.Expr:
        """A call through a function pointer held in a variable (``auto f = pick(type); f(x)``):
        the engine calls whichever function the pointer holds on the path."""
        fty = callee_c.type.get_canonical()
        if fty.kind == ci.TypeKind.POINTER:
            fty = fty.get_pointee().get_canonical()
        if fty.kind != ci.TypeKind.FUNCTIONPROTO:
            return N.Unsupported("call through a callable object that is not a function pointer", ty, span=sp)
        ptypes = tuple(self.types(a) for a in fty.argument_types())
        args = tuple(self.expr(a) for a in args_c)
        return N.Call("<function pointer>", None, args, ty, None, self.expr(callee_c), (), ptypes, span=sp)

    def arguments(self, args_c: list, callee: ci.Cursor | None) -> tuple:
        """The lowered arguments of a call. A default argument appears in the call as an expression
        with neither children nor a place in the source: it is lowered from the parameter's
        declaration when that expression has the parameter's type (std::optional<T> p =
        std::nullopt is an empty optional, not an indeterminate object)."""
        params = list(callee.get_arguments()) if callee is not None and not callee.kind.is_invalid() else []
        out = []
        for i, a in enumerate(args_c):
            d = self._default_argument(a, params[i]) if i < len(params) else None
            out.append(d if d is not None else self.expr(a))
        return tuple(out)

    def _default_argument(self, a: ci.Cursor, param: ci.Cursor) -> N.Expr | None:
        if a.kind != CK.UNEXPOSED_EXPR or a.extent.start.file is not None or any(True for _ in a.get_children()):
            return None
        exprs = [x for x in param.get_children() if _is_expr(x)]
        if not exprs:
            return None
        e = self.expr(exprs[-1])
        want = T.strip_ref(self.types(param.type))
        return e if _same_type(T.strip_ref(e.ty), want) else None

    def launch(self, c: ci.Cursor, cfg: ci.Cursor, sp: N.Span) -> N.Expr:
        kernel = c.referenced
        cfg_args = [self.expr(a) for a in cfg.get_arguments()]
        while len(cfg_args) < 4:
            cfg_args.append(N.IntLit(0, T.SIZE_T, span=sp) if len(cfg_args) == 2 else N.NullLit(T.PtrType(T.VOID), span=sp))
        args = self.arguments(list(c.get_arguments()), kernel)
        if kernel is None or kernel.kind.is_invalid():
            return N.Unsupported("launch of an unresolved kernel", T.VOID, span=sp)
        if kernel.kind in (CK.VAR_DECL, CK.PARM_DECL, CK.FIELD_DECL):
            # kernel<<<...>>>(...) through a pointer (auto kernel = cond ? k<1> : k<2>): the engine
            # reads which kernel it holds on each path.
            callee = _unwrap(list(c.get_children())[0])
            return N.Launch(None, kernel.spelling, cfg_args[0], cfg_args[1], cfg_args[2], cfg_args[3], args,
                            target=self.expr(callee), span=sp)
        key = self.function(kernel)
        name = self.function_name(kernel)
        targs = self.template_args(kernel)
        display = f"{name}<{', '.join(targs)}>" if targs else name
        if key is None and (unparsed := self.unparsed(kernel, display)) is not None:
            return unparsed
        return N.Launch(key, display, cfg_args[0], cfg_args[1], cfg_args[2], cfg_args[3], args, span=sp)

    def unparsed(self, kernel: ci.Cursor, display: str) -> N.Unsupported | None:
        """A kernel template with a parse error in its body has no instantiated body: the first
        error, at its own line, says why (an unknown type is a missing include)."""
        errors = self.parse_errors(kernel, kernel.extent.start.file)
        if not errors:
            return None
        return N.Unsupported(f"parse error in kernel {display}: {errors[0].message}", T.VOID,
                             span=self.error_span(errors[0]))

    def parse_errors(self, c: ci.Cursor, file: ci.File | None) -> list:
        """The parse errors of ``file`` (a function body's) within the lines of ``c``."""
        if file is None:
            return []
        return self.parsed.errors_in(clangx.real_path(file.name), c.extent.start.line, c.extent.end.line)

    def error_span(self, err) -> N.Span:
        return N.Span(self.relpath(err.file), err.line, err.col, err.line, err.col)

    def launch_ex(self, c: ci.Cursor, ty: T.Type, sp: N.Span) -> N.Expr:
        """``cudaLaunchKernelEx(&config, kernel, args...)``: a launch of the kernel with the
        configuration's grid, block, dynamic shared memory and stream (its attributes change
        scheduling, not the launch), like ``<<<...>>>``. The arguments convert to the kernel's
        parameter types, as the call inside the runtime's template does. The call's value is
        cudaSuccess: a launch that cannot run is the launch check's finding. (cudaLaunchKernel's
        argument array is read by its model instead.)"""
        args_c = list(c.get_arguments())
        kernel = discover.launched_kernel(args_c[1])
        if kernel is not None:
            params = [self.types(p.type) for p in kernel.get_arguments()]
        else:
            # A kernel chosen at run time (a pointer assigned on some paths): the engine reads which
            # kernel the pointer holds on each path, as for kernel<<<...>>> through a pointer.
            fty = args_c[1].type.get_canonical()
            if fty.kind == ci.TypeKind.POINTER:
                fty = fty.get_pointee().get_canonical()
            if fty.kind != ci.TypeKind.FUNCTIONPROTO:
                return N.Unsupported("cudaLaunchKernelEx of a kernel the front end cannot name", ty, span=sp)
            params = [self.types(t) for t in fty.argument_types()]
        cfg = self.expr(args_c[0])
        cfg_type = args_c[0].type.get_canonical().get_pointee().get_canonical()
        fields = {f.spelling: self.types(f.type) for f in cfg_type.get_fields()}
        if not set(N.LAUNCH_CONFIG_FIELDS) <= set(fields):
            return N.Unsupported("cudaLaunchKernelEx with a configuration the front end cannot read", ty, span=sp)

        def member(name: str) -> N.Expr:
            return N.Member(cfg, name, True, fields[name], span=sp)

        if len(params) != len(args_c) - 2:
            return N.Unsupported("cudaLaunchKernelEx with arguments that do not match the kernel", ty, span=sp)
        args = []
        for a, pt in zip(args_c[2:], params):
            e = self.expr(a)
            args.append(e if _same_type(T.strip_ref(e.ty), pt) else N.Cast("implicit", e, pt, span=e.span))
        dims = tuple(member(name) for name in N.LAUNCH_CONFIG_FIELDS)
        if kernel is None:
            launch = N.Launch(None, args_c[1].spelling or "kernel pointer", *dims, tuple(args),
                              target=self.expr(args_c[1]), span=sp)
            return N.Binary(",", launch, N.IntLit(0, ty, span=sp), ty, span=sp)
        key = self.function(kernel)
        name = self.function_name(kernel)
        targs = self.template_args(kernel)
        display = f"{name}<{', '.join(targs)}>" if targs else name
        launch = N.Launch(key, display, *dims, tuple(args), span=sp)
        return N.Binary(",", launch, N.IntLit(0, ty, span=sp), ty, span=sp)


def _const_object(t: ci.Type) -> bool:
    """Whether an object of type ``t`` is const: an array is when its elements are (``const
    index_fn rules[2]``: the qualifier is on the element type)."""
    t = t.get_canonical()
    while t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        if t.is_const_qualified():
            return True
        t = t.element_type.get_canonical()
    return t.is_const_qualified()


def _is_function_pointer(callee: ci.Cursor) -> bool:
    t = callee.type.get_canonical()
    return t.kind == ci.TypeKind.POINTER and t.get_pointee().get_canonical().kind == ci.TypeKind.FUNCTIONPROTO


def _template_argument_function(callee: ci.Cursor) -> ci.Cursor | None:
    """The function a call through a function-pointer template argument calls: in the
    instantiation the callee is the substituted argument (``&act_fn``), a constant."""
    c = callee
    for _ in range(8):
        kids = list(c.get_children())
        if c.kind == CK.DECL_REF_EXPR and c.referenced is not None:
            return c.referenced if c.referenced.kind == CK.FUNCTION_DECL else None
        if len(kids) != 1 or c.kind not in (CK.UNEXPOSED_EXPR, CK.DECL_REF_EXPR, CK.UNARY_OPERATOR, CK.PAREN_EXPR):
            return None
        c = kids[0]
    return None


def _same_type(a: T.Type, b: T.Type) -> bool:
    if isinstance(a, T.IntType) and isinstance(b, T.IntType):
        return a.bits == b.bits and a.signed == b.signed
    if isinstance(a, T.PtrType) and isinstance(b, T.PtrType):
        return _same_type(T.strip_ref(a.pointee), T.strip_ref(b.pointee)) or a.pointee.name == b.pointee.name
    if type(a) is not type(b):
        return False
    if isinstance(a, (T.StructType, T.OpaqueType, T.FloatType)):
        return a.name == b.name
    return a == b
