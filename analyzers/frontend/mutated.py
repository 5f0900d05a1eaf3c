"""Which global variables a program may change after their initializer: the host copies into them
(``cudaMemcpyToSymbol*``), or code writes them (assigned, incremented, passed by non-const
reference, its address taken, an array decayed to a pointer that could be written through). A
variable none of that happens to holds its initializer for the whole run, const or not: a
``__device__`` lookup table is read like a ``__constant__`` one.

The main file's code and the repository headers it includes are looked at (kernelvet's own
headers are not: they write no program variable); a variable that another translation unit
declares ``extern`` and writes is not seen. The test is syntactic and leans to "written": a
use it cannot classify counts as a write."""
from __future__ import annotations

import clang.cindex as ci

from . import clangx

CK = ci.CursorKind
ASSIGNMENTS = {"=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|="}
MUTATING_UNARY = {"post++", "post--", "pre++", "pre--", "&"}
# Expressions an lvalue passes through unchanged on its way to its use.
TRANSPARENT = (CK.PAREN_EXPR, CK.MEMBER_REF_EXPR)


def mutated_globals(tu: ci.TranslationUnit, main: str, skip: str | None = None) -> set[str]:
    """Names (as spelled) of the global variables the translation unit's code copies into or may
    write, in the main file and the headers it includes (those under ``skip`` left out)."""
    out: set[str] = set()
    for top in tu.cursor.get_children():
        if top.location.file is None:
            continue
        path = clangx.real_path(top.location.file.name)
        if path != main and skip is not None and path.startswith(skip):
            continue
        # Depth-first, each node with its chain of ancestors (a linked tuple: parent, its chain).
        stack = [(top, None)]
        while stack:
            node, up = stack.pop()
            if node.kind == CK.CALL_EXPR and node.spelling.startswith("cudaMemcpyToSymbol"):
                args = list(node.get_arguments())
                if args:
                    out.update(x.spelling for x in args[0].walk_preorder() if x.kind == CK.DECL_REF_EXPR)
            elif node.kind == CK.DECL_REF_EXPR:
                ref = node.referenced
                if ref is not None and ref.kind == CK.VAR_DECL and clangx.has_global_storage(ref) \
                        and ref.spelling not in out and not _const_object(ref) and _written(node, up):
                    out.add(ref.spelling)
            chain = (node, up)
            stack.extend((kid, chain) for kid in node.get_children())
    return out


def _const_object(var: ci.Cursor) -> bool:
    """A variable declared const (an array of const elements too: ggml's `static const struct
    ggml_type_traits type_traits[]`): no well-defined program writes it, whatever takes its address."""
    t = var.type
    while t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        t = t.element_type
    return t.is_const_qualified()


def _written(ref: ci.Cursor, up) -> bool:
    """Whether this use of a variable may change it (conservative)."""
    cur, decayed = ref, False
    while up is not None:
        parent, above = up
        kind = parent.kind
        if kind in TRANSPARENT or (kind == CK.ARRAY_SUBSCRIPT_EXPR and _first_child(parent) == cur):
            cur, up, decayed = parent, above, False  # an element: an lvalue again
            continue
        if kind == CK.UNEXPOSED_EXPR:
            # An implicit conversion: an lvalue read (its value taken) ends the question; an array
            # decaying to a pointer (then made a pointer to const, ...) goes on to what uses it.
            if _is_pointer(parent.type) and (_is_array(cur.type) or (decayed and _is_pointer(cur.type))):
                cur, up, decayed = parent, above, True
                continue
            return False
        break
    else:
        return False  # nothing uses it (an expression statement of its own)
    parent = up[0]
    kind = parent.kind
    if kind == CK.ARRAY_SUBSCRIPT_EXPR:
        return False  # the index of another subscript: read
    if kind == CK.BINARY_OPERATOR or kind == CK.COMPOUND_ASSIGNMENT_OPERATOR:
        return clangx.binop(parent) in ASSIGNMENTS and _first_child(parent) == cur
    if kind == CK.UNARY_OPERATOR:
        return clangx.unop(parent) in MUTATING_UNARY
    if kind == CK.CXX_UNARY_EXPR:
        return False  # sizeof / alignof
    if decayed or _is_array(cur.type):
        return True  # a pointer to its elements escapes
    if kind == CK.VAR_DECL:
        # Bound without a conversion: a non-const reference may write it; a copy or a const
        # reference reads it.
        t = parent.type
        return t.kind == ci.TypeKind.LVALUEREFERENCE and not t.get_pointee().is_const_qualified()
    if kind == CK.CALL_EXPR:
        return not _bound_to_const(parent, cur)
    # An initializer element or a returned value taken without a conversion may be bound to a
    # non-const reference: counted as a write.
    return kind in (CK.INIT_LIST_EXPR, CK.RETURN_STMT)


def _bound_to_const(call: ci.Cursor, arg: ci.Cursor) -> bool:
    """Whether an argument passed without a conversion binds to a const reference (``std::min``'s
    ``const T&``) of the called function, as its declaration says; unknown: not."""
    callee = call.referenced
    if callee is None:
        return False
    args = list(call.get_arguments())
    params = [c for c in callee.get_children() if c.kind == CK.PARM_DECL]
    for i, a in enumerate(args):
        if a == arg and i < len(params):
            t = params[i].type
            return t.kind == ci.TypeKind.LVALUEREFERENCE and t.get_pointee().is_const_qualified()
    return False


def _first_child(c: ci.Cursor):
    for kid in c.get_children():
        return kid
    return None


def _is_pointer(t: ci.Type) -> bool:
    return t.get_canonical().kind == ci.TypeKind.POINTER


def _is_array(t: ci.Type) -> bool:
    return t.get_canonical().kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY,
                                      ci.TypeKind.VARIABLEARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY)
