"""Misaligned accesses: the address of an access through a type must be a multiple of the type's
alignment, capped at 16 bytes (the widest access the hardware does: a ``float4``/``uint4`` load is
one 16-byte instruction, a 32-byte ``alignas(32)`` struct two of them). A misaligned address faults
("misaligned address") on the GPU.

The address is the object's base plus the byte offset. Bases are taken as aligned as their allocator
aligns them (``Region.align``): a tensor's ``data_ptr()`` at 256 bytes (PyTorch's CUDA caching
allocator; a view's storage offset is part of the offset, so it is exact), static ``__shared__``
arrays at their declared alignment and at least 16 bytes, dynamic shared memory at 16 bytes. With
those, an access is misaligned exactly when its byte offset is not a multiple of the alignment, a
question about the offset's low bits that bit-vectors answer exactly, wrapped or not.

Most accesses are decided without a solver: the offset's term is a sum of products with constant
factors (``token * hidden_size * 2``), whose known trailing zero bits show it aligned. Others ask
the integers (``offset mod A != 0``), then the bit-vectors for a witness. Model-awareness comes for
free: model fields are constants of the instance, so ``hidden_size * 2`` is a number whose low bits
decide for that model.
"""
from __future__ import annotations

import z3

from ..engine import ints
from .base import Check, depends_on_summary, make_finding, span_key, value_of

MAX_ACCESS_ALIGN = 16
CHECKED_REGIONS = ("global", "constant", "shared", "dynamic_shared", "local")
BASE_NOTE = {
    "global": "tensor data pointers are taken as 256-byte aligned (PyTorch's CUDA caching allocator); "
              "a view's storage offset is part of the access offset",
    "dynamic_shared": "dynamic shared memory (extern __shared__) starts 16-byte aligned",
    "shared": "static __shared__ arrays start at their declared alignment, at least 16 bytes",
}
WHAT = {"global": "global memory", "constant": "constant memory", "shared": "shared memory",
        "dynamic_shared": "dynamic shared memory", "local": "local memory"}


def required_alignment(ev) -> int:
    """The alignment the access instructions need: the type's, at most 16 bytes."""
    return min(max(ev.align, 1), MAX_ACCESS_ALIGN)


_ZERO_BITS: dict[int, dict] = {}  # cap -> term id -> zero bits, over the process (terms kept alive below)
_ZERO_BITS_TERMS: list = []  # an id stays its term's while the term lives


def known_zero_bits(term: z3.ExprRef, cap: int = 8, memo: dict | None = None) -> int:
    """How many low bits of ``term`` are zero whatever its variables are (at most ``cap``): a sound
    under-estimate from the term's structure (sums, products, shifts, extensions, conditionals).
    Memoised per cap: a kernel's offsets share their index sub-terms."""
    if memo is None:
        if len(_ZERO_BITS_TERMS) > 200_000:
            _ZERO_BITS.clear()
            _ZERO_BITS_TERMS.clear()
        memo = _ZERO_BITS.setdefault(cap, {})
        if term.get_id() not in memo:
            _ZERO_BITS_TERMS.append(term)
    key = term.get_id()
    if key in memo:
        return memo[key]
    memo[key] = 0  # a cycle cannot happen in a term, but a deep one is cut here
    r = _zero_bits(term, cap, memo)
    memo[key] = r
    return r


def _zero_bits(t: z3.ExprRef, cap: int, memo: dict) -> int:
    if z3.is_bv_value(t):
        v = t.as_long()
        if v == 0:
            return cap
        return min((v & -v).bit_length() - 1, cap)
    if not z3.is_app(t):
        return 0
    k = t.decl().kind()
    kids = t.children()
    if k in (z3.Z3_OP_BADD, z3.Z3_OP_BSUB):
        return min(known_zero_bits(c, cap, memo) for c in kids)
    if k == z3.Z3_OP_BNEG:
        return known_zero_bits(kids[0], cap, memo)
    if k == z3.Z3_OP_BMUL:
        return min(sum(known_zero_bits(c, cap, memo) for c in kids), cap)
    if k == z3.Z3_OP_BSHL and z3.is_bv_value(kids[1]):
        return min(known_zero_bits(kids[0], cap, memo) + kids[1].as_long(), cap)
    if k == z3.Z3_OP_BNOT and z3.is_bv_value(kids[0]):
        v = ~kids[0].as_long() & ((1 << t.size()) - 1)
        return cap if v == 0 else min((v & -v).bit_length() - 1, cap)
    if k == z3.Z3_OP_BAND:
        return max(known_zero_bits(c, cap, memo) for c in kids)
    if k in (z3.Z3_OP_BOR, z3.Z3_OP_BXOR):
        return min(known_zero_bits(c, cap, memo) for c in kids)
    if k in (z3.Z3_OP_ZERO_EXT, z3.Z3_OP_SIGN_EXT):
        return known_zero_bits(kids[0], cap, memo)
    if k == z3.Z3_OP_EXTRACT:
        hi, lo = t.params()
        if lo == 0:
            return min(known_zero_bits(kids[0], cap, memo), hi + 1)
        return 0
    if k == z3.Z3_OP_CONCAT:
        low = kids[-1]
        z = known_zero_bits(low, cap, memo)
        if z < low.size() or len(kids) != 2:
            return z
        return min(low.size() + known_zero_bits(kids[0], cap, memo), cap)
    if k == z3.Z3_OP_ITE:
        return min(known_zero_bits(kids[1], cap, memo), known_zero_bits(kids[2], cap, memo))
    return 0


class AlignmentCheck(Check):
    id = "misaligned"

    def __init__(self):
        self.witnesses: list = []  # (kernel, finding, model) of reported accesses

    def on_access(self, ctx, st, ev) -> None:
        region = ev.region
        if region.kind not in CHECKED_REGIONS:
            return
        need = required_alignment(ev)
        if need <= 1 or need & (need - 1):
            return
        if need > region.align:
            # The object is only guaranteed its declared alignment; whether the access faults
            # depends on where the compiler puts it (registers, or local memory at that alignment).
            ctx.stuck("unknown-alignment", f"`{ev.span.text}` accesses `{region.name}` as a type that needs {need}-byte "
                      f"alignment, but the object is only guaranteed {region.align} (give it a type aligned to {need}, "
                      "e.g. a struct declared alignas or a union with uint4)",
                      ev.span)
            return
        bits = need.bit_length() - 1
        off = ev.off
        try:
            if known_zero_bits(off.bv, bits) >= bits:
                return
        except RecursionError:
            pass  # a very deep term: the solver decides
        c = off.concrete()
        if c is not None and c % need == 0:
            return
        key = ("misaligned", span_key(ev.span), ctx.kernel)
        if key in ctx.reported:
            return
        if region.kind in BASE_NOTE:
            ctx.note(BASE_NOTE[region.kind])
        # In integers first (the offset's low bits are the same, wrapped or not: ``need`` divides 2^w).
        guard_i = [ctx.lia.translate(ev.guard)] if ev.guard is not None else []
        cond_i = z3.And(ints.I(off) % need != 0, *guard_i)
        if ctx.excluded(st.pc, cond_i):
            return
        cond = z3.Extract(bits - 1, 0, off.bv) != 0
        if ev.guard is not None:
            cond = z3.And(ev.guard, cond)
        if self._same_cause(ctx, st, cond, ev, key):
            return
        model = ctx.find_model(st.pc, cond, ev.span, cond_i)
        if model is None:
            return
        ctx.mark(key)
        model = ctx.minimal(st.pc, cond, cond_i, model)
        summary = depends_on_summary(ctx, cond, model)
        if summary is not None:
            ctx.stuck("imprecise-loop", f"a possibly misaligned access `{ev.span.text}` depends on {summary}, "
                      "which the loop summary cannot bound", ev.span)
            return
        at = value_of(model, off.bv)
        action = "write" if ev.write else "read"
        msg = (f"{ev.size}-byte {action} at byte offset {at} of `{region.name}` ({WHAT[region.kind]}, base "
               f"{region.align}-byte aligned) needs {need}-byte alignment; {at} is {at % need} past a multiple "
               f"of {need}: `{ev.span.text}`")
        finding = make_finding(ctx, st, "misaligned", msg, ev.span, model, cond, cond_i=cond_i, expression=ev.span,
                               trace=list(ev.stack))
        ctx.report(finding)
        self.witnesses.append((ctx.kernel, finding, model))

    def _same_cause(self, ctx, st, cond, ev, key) -> bool:
        """Another access misaligned for the input (the sizes) of one already reported in this
        kernel is listed with it: one row offset that breaks alignment is one root cause."""
        terms = [t for _, t in ctx.dim_order]
        for kernel, finding, model in self.witnesses:
            if kernel != ctx.kernel:
                continue
            fixed = [t == model.eval(t, model_completion=True) for t in terms]
            if ctx.find_model(st.pc, z3.And(cond, *fixed), ev.span) is not None:
                ctx.mark(key)
                if ev.span != finding.location and ev.span not in finding.related:
                    finding.related.append(ev.span)
                return True
        return False
