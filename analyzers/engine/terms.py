"""Walking z3 terms. The walks go through z3's C API: wrapping every subterm in a Python ExprRef
(``children()``) cost more than the solver itself in the race and integer checks, which ask the
same conditions' constants over and over."""
from __future__ import annotations

import z3
from z3 import z3core
from z3.z3 import _to_expr_ref

_SEEN: dict = {}  # (term id, order) -> (term, its constants); entries keep their terms alive
_SEEN_MAX = 4096


def name(const: z3.ExprRef) -> str:
    """A constant's name, as ``str(const)`` gives it without z3's printer (which costs more than
    the questions where the race check asks it thousands of times)."""
    ref = const.ctx.ref()
    return z3core.Z3_get_symbol_string(ref, z3core.Z3_get_decl_name(ref, z3core.Z3_get_app_decl(ref, const.as_ast())))


def constants(term: z3.ExprRef, left_to_right: bool = False) -> list:
    """The uninterpreted constants of ``term``, each once, in the order of a depth-first walk
    (right to left unless ``left_to_right``)."""
    key = (term.get_id(), left_to_right)
    hit = _SEEN.get(key)
    if hit is not None and hit[0].eq(term):
        return list(hit[1])
    ctx = term.ctx
    ref = ctx.ref()
    seen: set[int] = set()
    out = []
    stack = [term.as_ast()]
    while stack:
        a = stack.pop()
        i = z3core.Z3_get_ast_id(ref, a)
        if i in seen:
            continue
        seen.add(i)
        if z3core.Z3_get_ast_kind(ref, a) != z3.Z3_APP_AST:
            continue  # a numeral (kernelvet builds no quantifiers)
        app = z3core.Z3_to_app(ref, a)
        n = z3core.Z3_get_app_num_args(ref, app)
        if n:
            args = range(n - 1, -1, -1) if left_to_right else range(n)
            stack.extend(z3core.Z3_get_app_arg(ref, app, j) for j in args)
        elif z3core.Z3_get_decl_kind(ref, z3core.Z3_get_app_decl(ref, app)) == z3.Z3_OP_UNINTERPRETED:
            out.append(_to_expr_ref(a, ctx))
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    _SEEN[key] = (term, tuple(out))
    return out
