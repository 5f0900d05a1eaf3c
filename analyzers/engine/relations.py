"""What a binding states about the contents of index tensors, made true of the values kernels load.

Global memory contents are not tracked: each load is a fresh value (DESIGN.md, semantics 3), so a
binding's `values` bound every load, one at a time. A relation (``rowStarts[i] <= rowEnds[i]``), a
nondecreasing tensor (cumulative lengths) or a distinct one (a slot mapping) ties loads together.
It holds of the contents, so it holds of every combination of loads whose offsets fit one index
``i``. Each new load instantiates it with the loads before it: the condition on the offsets implies
the relation of the values. The solver sees no quantifier, and the facts are true on every path,
since the contents are the op's input.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import z3

from .. import binding as B
from ..kir import nodes as N
from ..kir import types as T
from . import ints
from .values import IntV, Region, const_int

# Instantiations one load may add: past it, the rest are left out (fewer facts, never a wrong one).
MAX_COMBINATIONS = 256


@dataclass
class _Load:
    id: int
    off: IntV  # byte offset into the tensor, int64
    value: IntV  # widened to int64
    esize: int
    index: IntV | None = None  # the element index, where the offset is a known multiple of esize


def _element_index(off: IntV, esize: int, span: N.Span) -> IntV | None:
    """``off / esize`` without a division, where the offset is an index times a multiple of esize
    (every typed access ``p[i]``); None otherwise."""
    if off.scaled is None or not isinstance(off.scaled[1], int) or off.scaled[1] % esize or off.math is not None:
        return None
    return ints.arith("/", off, const_int(esize, T.INT64), T.INT64, span)


@dataclass
class TensorFacts:
    # (B.Expr over Elem (launcher parameter names), dims and numbers; its elements, in a fixed order)
    relations: tuple
    nondecreasing: set  # parameter names
    tensors: set  # every parameter a relation, nondecreasing or distinct names
    distinct: set = field(default_factory=set)  # parameter names whose elements are pairwise different
    watched: dict = field(default_factory=dict)  # region id -> (parameter name, element size)
    loads: dict = field(default_factory=dict)  # parameter name -> [_Load]
    seen: set = field(default_factory=set)  # (relation index, load ids) already instantiated
    count: int = 0  # loads recorded

    @classmethod
    def of(cls, inst: B.Instance) -> "TensorFacts":
        flags = {n for n, a in inst.args if isinstance(a, B.TensorArg) and a.nondecreasing}
        distinct = {n for n, a in inst.args if isinstance(a, B.TensorArg) and a.distinct}
        relations = tuple((r, tuple(sorted(B.elems(r), key=lambda e: (e.tensor, e.offset)))) for r in inst.relations)
        return cls(relations, flags, flags | distinct | {e.tensor for _, terms in relations for e in terms},
                   distinct=distinct)

    def distinct_regions(self) -> set:
        """Ids of the regions whose elements the binding states pairwise different."""
        return {rid for rid, (name, _) in self.watched.items() if name in self.distinct}

    def nondecreasing_regions(self) -> dict:
        """Region id -> element size of the tensors the binding states nondecreasing."""
        return {rid: esize for rid, (name, esize) in self.watched.items() if name in self.nondecreasing}

    def track(self, region: Region, name: str, esize: int) -> None:
        if name in self.tensors:
            self.watched[region.id] = (name, esize)


class FactOps:
    """Mixed into the interpreter: instantiates the instance's TensorFacts on loads."""

    def facts_on_load(self, st, region: Region, off: IntV, v, span: N.Span) -> None:
        facts: TensorFacts | None = getattr(self, "tensor_facts", None)
        if facts is None or region.id not in facts.watched or not isinstance(v, IntV):
            return
        name, esize = facts.watched[region.id]
        if v.ty.size != esize:
            return  # a load of another width (a vector of indices): no element of its own
        loads = facts.loads.setdefault(name, [])
        facts.count += 1
        new = _Load(facts.count, off, ints.convert(v, T.INT64, span), esize, _element_index(off, esize, span))
        if name in facts.nondecreasing:
            for old in loads:
                self._order_fact(st, old, new, span)
        if name in facts.distinct:
            for old in loads:
                self._distinct_fact(st, old, new, span)
        loads.append(new)
        for k, (rel, terms) in enumerate(facts.relations):
            self._instantiate(st, facts, k, rel, terms, name, new, span)

    def _order_fact(self, st, a: _Load, b: _Load, span: N.Span) -> None:
        aligned = z3.And(self._aligned(a, span), self._aligned(b, span))
        ka, kb = (a.index, b.index) if a.index is not None and b.index is not None else (a.off, b.off)
        a_first = ints.compare("<=", ka, kb).term
        b_first = ints.compare("<=", kb, ka).term
        self._assume_if(st, z3.And(aligned, a_first), lambda: ints.compare("<=", a.value, b.value).term)
        self._assume_if(st, z3.And(aligned, b_first), lambda: ints.compare("<=", b.value, a.value).term)

    def _distinct_fact(self, st, a: _Load, b: _Load, span: N.Span) -> None:
        aligned = z3.And(self._aligned(a, span), self._aligned(b, span))
        apart = z3.Not(ints.compare("==", a.off, b.off).term)
        # Negative values mark padding (a slot mapping's -1) and may repeat.
        valid = ints.compare(">=", a.value, const_int(0, T.INT64)).term
        self._assume_if(st, z3.And(aligned, apart), lambda: z3.Implies(valid, z3.Not(
            ints.compare("==", a.value, b.value).term)))

    @staticmethod
    def _assume_if(st, cond: z3.BoolRef, fact) -> None:
        """Assume ``cond -> fact()``: nothing where the offsets cannot fit, the fact alone where they
        always do (a load at bid and one at bid + 1), so the solver splits cases only when it must."""
        cond = z3.simplify(cond)
        if z3.is_false(cond):
            return
        st.assume(fact() if z3.is_true(cond) else z3.Implies(cond, fact()))

    def _instantiate(self, st, facts: TensorFacts, k: int, rel, terms: tuple, name: str, new: _Load,
                     span: N.Span) -> None:
        if not any(e.tensor == name for e in terms):
            return
        choices = [facts.loads.get(e.tensor, []) for e in terms]
        made = 0
        for combo in itertools.product(*choices):
            if new not in combo:
                continue
            key = (k, tuple(ld.id for ld in combo))
            if key in facts.seen:
                continue
            if made >= MAX_COMBINATIONS:
                return
            facts.seen.add(key)
            made += 1
            anchor, a_elem = combo[0], terms[0]
            conds = [self._aligned(anchor, span)]
            for ld, e in zip(combo[1:], terms[1:]):
                if anchor.index is not None and ld.index is not None:
                    lhs = ints.arith("-", ld.index, anchor.index, T.INT64, span)
                    rhs = const_int(e.offset - a_elem.offset, T.INT64)
                else:
                    # (off / esize) - offset is the same i: cross-multiplied, so no division.
                    lhs = ints.arith("-", ints.arith("*", ld.off, const_int(anchor.esize, T.INT64), T.INT64, span),
                                     ints.arith("*", anchor.off, const_int(ld.esize, T.INT64), T.INT64, span),
                                     T.INT64, span)
                    rhs = const_int((e.offset - a_elem.offset) * anchor.esize * ld.esize, T.INT64)
                conds += [self._aligned(ld, span), ints.compare("==", lhs, rhs).term]
            values = {e: ld.value for e, ld in zip(terms, combo)}
            self._assume_if(st, z3.And(*conds), lambda: self.sym_bool(rel, span, values))

    def _aligned(self, ld: _Load, span: N.Span) -> z3.BoolRef:
        if ld.index is not None:
            return z3.BoolVal(True)
        rem = ints.arith("%", ld.off, const_int(ld.esize, T.INT64), T.INT64, span)
        return ints.compare("==", rem, const_int(0, T.INT64)).term
