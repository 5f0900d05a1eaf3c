"""GPUVerify's annotations, as kernels written for it use them (its tests and benchmarks): a
precondition ``__requires(n == 64)`` (and ``__assume``, ``__axiom``) is a fact the path assumes, as
a binding's constraint is; loop invariants, postconditions and ``__assert`` state nothing kernelvet
needs and are not checked; the predicates only they use (``__enabled()``, ``__read(p)``,
``__implies(a, b)``...) answer any value."""
from __future__ import annotations

import z3

from ...kir import types as T
from ..state import fresh_value
from ..values import BoolV, OpaqueV
from . import model

VOID = OpaqueV("void")


@model("__requires", "__assume", "__axiom")
def precondition(interp, st, call, this, args):
    for a in args:
        st.assume(interp.truth(a, call.span))
    return VOID


@model("__ensures", "__invariant", "__global_invariant", "__function_wide_invariant", "__assert",
       "__global_assert", "__candidate_invariant")
def unchecked_annotation(interp, st, call, this, args):
    return VOID


@model("__enabled", "__read", "__write", "__no_read", "__no_write", "__uniform_bool",
       "__distinct_bool", "__uniform_int", "__distinct_int", "__same_group", "__same_block", "__same_warp")
def annotation_predicate(interp, st, call, this, args):
    return BoolV(z3.Bool(interp.ctx.fresh_name(call.name)))


@model("__implies")
def implies(interp, st, call, this, args):
    return BoolV(z3.Implies(interp.truth(args[0], call.span), interp.truth(args[1], call.span)))


@model("__other_int", "__other_bool")
def other_thread_value(interp, st, call, this, args):
    """Another thread's value of the argument: any value of its type."""
    return fresh_value(T.strip_ref(call.ty), call.name, interp.ctx.counter)
