"""What a statement may change: the variables (and fields) it writes, directly, through the
by-reference captures of lambdas it calls, and through methods it calls on an object. Loop summaries
havoc exactly these."""
from __future__ import annotations

from ..kir import nodes as N
from ..kir import types as T


def lvalue_root(e: N.Expr) -> N.VarDecl | None:
    while True:
        if isinstance(e, N.Var):
            return e.decl
        if isinstance(e, N.Member) and not e.arrow:
            e = e.base
        elif isinstance(e, N.Index) and (isinstance(T.strip_ref(e.base.ty), T.ArrayType) or _decayed(e.base)):
            e = e.base
        elif isinstance(e, N.Cast):
            e = e.operand
        else:
            return None


def _decayed(e) -> bool:
    """An array converted to a pointer to its first element (``a`` in ``a[i]``)."""
    return isinstance(e, N.Cast) and e.kind == "decay"


def _walk(node, fn) -> None:
    if node is None:
        return
    fn(node)
    for child in N.children(node):
        _walk(child, fn)


def member_path(e: N.Expr):
    """``v.f`` / ``v.f.g`` of a local struct: (decl, byte offset, field type); None otherwise."""
    e = _strip(e)
    if not (isinstance(e, N.Member) and not e.arrow):
        return None
    base = _strip(e.base)
    bty = T.strip_ref(base.ty)
    f = bty.field(e.field) if isinstance(bty, T.StructType) else None
    if f is None:
        return None
    if isinstance(base, N.Var) and not isinstance(base.decl.ty, T.RefType):
        return base.decl, f.offset, f.type
    inner = member_path(base)
    return (inner[0], inner[1] + f.offset, f.type) if inner is not None else None


def assigned_vars(*nodes, fields: dict | None = None, functions=None) -> tuple[set, list]:
    """Ids of variables a statement may modify, and the (decl, rhs, op) of every assignment.
    ``fields`` collects, per struct variable, the fields written one by one (None: written whole).
    ``functions`` (the program's) gives the bodies of lambdas the statement calls, whose writes
    through by-reference captures are the statement's too, and of methods it calls on an object,
    which change only the fields they write."""
    ids: set = set()
    writes: list = []
    followed: set = set()
    own: set = set()  # the lambdas' own locals and parameters: not the loop's

    def note(root, target) -> None:
        if fields is None:
            return
        path = member_path(target)
        if path is None or not isinstance(path[2], (T.IntType, T.FloatType, T.BoolType)):
            fields[root.id] = None
        elif fields.get(root.id, set()) is not None:
            fields.setdefault(root.id, set()).add((path[1], path[2]))

    def method_fields(root, call) -> None:
        changed = this_writes(call.func, functions) if functions is not None else None
        if changed is not None and not changed:
            return  # the method changes nothing of the object
        ids.add(root.id)
        if fields is None:
            return
        this = _strip(call.this)
        base = 0 if isinstance(this, N.Var) else (member_path(this) or (None, None))[1]
        if changed is None or base is None or not isinstance(root.ty, T.StructType):  # p->f(), r.f(): whole
            fields[root.id] = None
        elif fields.get(root.id, set()) is not None:
            fields.setdefault(root.id, set()).update((base + off, ty) for off, ty in changed)

    def assigned(n, target) -> None:
        root = lvalue_root(target)
        if root is not None:
            ids.add(root.id)
            writes.append((root, n))
            note(root, target)

    def written_whole(target) -> None:
        """Written through an address, a non-const reference or an asm output: any part of it."""
        root = lvalue_root(target)
        if root is not None:
            ids.add(root.id)
            if fields is not None:
                fields[root.id] = None

    indexed: set = set()  # arrays decayed only to be indexed: a read, unless the element is written

    def visit(n):
        if isinstance(n, N.Index) and _decayed(n.base):
            indexed.add(id(n.base))
        if isinstance(n, N.Assign):
            assigned(n, n.lhs)
        elif isinstance(n, N.IncDec):
            assigned(n, n.operand)
        elif isinstance(n, N.AddrOf) or (_decayed(n) and id(n) not in indexed):
            # An address taken, or an array passed on as a pointer: written through it, maybe.
            written_whole(n.operand)
        elif isinstance(n, (N.Call, N.Construct)):
            for a, pt in zip(n.args, n.param_types):
                if isinstance(pt, T.RefType) and not pt.const:  # std::min(a, b) writes neither
                    written_whole(a)
            if isinstance(n, N.Call) and functions is not None and n.func and n.func not in followed:
                followed.add(n.func)
                inner = _lambda_body(functions, n.func)
                if inner is not None:
                    # Its writes are havocked, never taken as the loop's own counters: the
                    # captured variable lives in the frame that made the lambda.
                    body_of_lambda, params = inner
                    mark = len(writes)
                    _walk(body_of_lambda, visit)
                    del writes[mark:]
                    own.update(declared_in(body_of_lambda) | params)
            if isinstance(n, N.Call) and n.this is not None:
                root = lvalue_root(n.this)
                if root is not None and not _unchanged_by_methods(root):
                    method_fields(root, n)
        elif isinstance(n, N.Asm):
            for o in n.outputs:
                written_whole(o)

    for node in nodes:
        _walk(node, visit)
    return ids - own, [w for w in writes if w[0].id not in own]


def _lambda_body(functions, key: str):
    fn = functions.get(key)
    if fn is None or fn.kind != "lambda" or fn.body is None:
        return None
    return fn.body, {p.id for p in fn.params}


def _unchanged_by_methods(decl: N.VarDecl) -> bool:
    """A const reference, a tensor handle (its methods change data, never which tensor it is), or a
    lambda (calling it changes what it captured by reference, never the closure)."""
    ty = decl.ty
    if isinstance(ty, T.RefType) and ty.const:
        return True
    if isinstance(T.strip_ref(ty), T.ClosureType):
        return True
    return getattr(T.strip_ref(ty), "kind", None) in ("tensor", "optional")


def vars_used(e) -> set:
    out: set = set()
    _walk(e, lambda n: out.add(n.decl.id) if isinstance(n, N.Var) else None)
    return out


def _strip(e: N.Expr) -> N.Expr:
    while isinstance(e, N.Cast) and e.kind == "implicit":
        e = e.operand
    return e


def declared_in(node) -> set:
    out: set = set()
    _walk(node, lambda n: out.add(n.var.id) if isinstance(n, N.Decl) else None)
    return out


class _Escapes(Exception):
    """``this`` leaves the method's sight: what it changes is unknown."""


def _is_this(e: N.Expr) -> bool:
    e = _strip(e)
    if isinstance(e, N.Deref):
        e = _strip(e.operand)
    return isinstance(e, N.This)


def _this_field(e: N.Expr, this_type: T.Type):
    """The field of ``*this`` an lvalue lies in (``len_``, ``arr_[i]``, ``pair_.x``): (byte offset,
    field type) of the whole top-level field; None when the lvalue is not in ``*this``."""
    while True:
        e = _strip(e)
        if isinstance(e, N.Cast):
            e = e.operand
        elif isinstance(e, N.Index) and isinstance(T.strip_ref(e.base.ty), T.ArrayType):
            e = e.base
        elif isinstance(e, N.Member) and _is_this(e.base):
            f = this_type.field(e.field) if isinstance(this_type, T.StructType) else None
            if f is None:
                raise _Escapes()  # a field the type mapper does not lay out (a later base's)
            return f.offset, f.type
        elif isinstance(e, N.Member) and not e.arrow:
            e = e.base
        else:
            return None


def this_writes(key: str | None, functions, _seen: frozenset = frozenset()) -> set | None:
    """The fields of ``*this`` (byte offset, type) a method may change, itself or through the
    methods it calls on ``this``; None when that is unknown: no body, ``this`` passed on or
    captured, or a field's address or non-const reference handed out."""
    fn = functions.get(key) if key else None
    if fn is None or fn.body is None or fn.this_type is None:
        return None
    if key in _seen:
        return set()
    seen = _seen | {key}
    out: set = set()

    def written(e):
        f = _this_field(e, fn.this_type)
        if f is not None:
            out.add(f)

    def visit(n):
        if isinstance(n, N.This):
            raise _Escapes()  # `this` on its own: passed, returned or stored
        if isinstance(n, N.Lambda):
            raise _Escapes()  # a closure may capture `this`
        if isinstance(n, N.Member) and _is_this(n.base):
            return  # a field read (writes are noted where they happen)
        if isinstance(n, (N.Assign, N.IncDec)):
            written(n.lhs if isinstance(n, N.Assign) else n.operand)
        elif isinstance(n, N.AddrOf) or (isinstance(n, N.Cast) and n.kind == "decay"):
            written(n.operand)
        elif isinstance(n, N.Decl) and n.init is not None and isinstance(n.var.ty, T.RefType) and not n.var.ty.const:
            written(n.init)
        elif isinstance(n, N.Return) and n.value is not None and isinstance(fn.ret, (T.RefType, T.PtrType)):
            written(n.value)
        elif isinstance(n, N.Asm):
            for o in n.outputs:
                written(o)
        elif isinstance(n, (N.Call, N.Construct)):
            for a, pt in zip(n.args, n.param_types):
                if isinstance(pt, T.RefType) and not pt.const:
                    written(a)
            if isinstance(n, N.Call) and n.this is not None:
                if _is_this(n.this):
                    inner = this_writes(n.func, functions, seen)
                    if inner is None:
                        raise _Escapes()
                    out.update(inner)
                    for a in n.args:
                        visit(a)
                    return
                written(n.this)  # a method of a field's object: that field changes
        for child in N.children(n):
            visit(child)

    try:
        visit(fn.body)
    except _Escapes:
        return None
    return out


def every_iteration(body: N.Stmt, *always: N.Expr | None) -> set:
    """Python ids of the assignments a loop runs on every iteration that goes on to the next: those
    in ``always`` (its condition and increment) and in the body's top-level statements before the
    first that may ``continue``, outside the branches of ``?:``, ``&&``, ``||`` and of statements."""
    out: set = set()

    def expr(e) -> None:
        if e is None or isinstance(e, N.Lambda):
            return
        if isinstance(e, (N.Assign, N.IncDec)):
            out.add(id(e))
        if isinstance(e, N.Cond):
            expr(e.cond)
            return
        if isinstance(e, N.Binary) and e.op in ("&&", "||"):
            expr(e.lhs)
            return
        for child in N.children(e):
            expr(child)

    def may_continue(s) -> bool:
        if isinstance(s, N.Continue):
            return True
        if isinstance(s, (N.For, N.While, N.DoWhile)):
            return False  # a continue in there is that loop's
        return any(may_continue(c) for c in N.children(s) if isinstance(c, N.Stmt))

    def stmt(s) -> bool:
        """Collect from ``s``; False once the rest of the body may be skipped."""
        if may_continue(s):
            if isinstance(s, N.If):
                expr(s.cond)
            return False
        if isinstance(s, N.Block):
            return all(stmt(c) for c in s.stmts)
        if isinstance(s, N.ExprStmt):
            expr(s.expr)
        elif isinstance(s, N.Decl):
            expr(s.init)
        elif isinstance(s, (N.If, N.Switch)):
            expr(s.cond)
        elif isinstance(s, N.Return):
            expr(s.value)
            return False
        elif isinstance(s, N.Break):
            return False
        return True

    for e in always:
        expr(e)
    stmt(body)
    return out
