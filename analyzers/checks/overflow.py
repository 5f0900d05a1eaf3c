"""Integer overflow and narrowing that reach an address, an allocation size, a loop bound or a
launch dimension: the machine value there differs from the exact one. The finding names the
smallest sub-expression that wrapped (the earliest wrap site that wraps in the witness) and its C
type, and offers a widening fix where it is mechanical."""
from __future__ import annotations

import re

import z3

from ..engine import ints
from ..engine.values import MATH_BITS, widen
from ..findings import Fix
from .base import Check, depends_on_summary, havocked, make_finding, span_key, value_of

_OPS = {"*": "multiplication", "+": "addition", "-": "subtraction", "<<": "left shift", "neg": "negation"}


class OverflowCheck(Check):
    id = "overflow"

    def on_access(self, ctx, st, ev) -> None:
        if ev.region.kind == "null":
            return
        self._sink(ctx, st, ev.off, ev.guard, ev.span, f"the address of `{ev.span.text}`", ev.stack)

    def on_sink(self, ctx, st, sink) -> None:
        self._sink(ctx, st, sink.value, None, sink.span, sink.what, sink.stack)

    def _sink(self, ctx, st, v, guard, span, what: str, stack) -> None:
        if v.math is None or not v.sites:
            return
        ordered = sorted(v.sites, key=lambda s: s.id)  # creation order: upstream first
        pending = [s for s in ordered if _key(ctx, s) not in ctx.reported]
        if not pending:
            return
        guard_i = [ctx.lia.translate(guard)] if guard is not None else []
        if ctx.excluded(st.pc, z3.Or(*[s.iwraps for s in pending]), *guard_i):
            return  # no pending site can wrap on this path
        differs = widen(v.bv, v.ty.signed, MATH_BITS) != v.math
        for site in pending:
            # The most upstream site that can wrap into this sink is the root cause: fixing it
            # fixes what it feeds. One report per sink.
            if ctx.excluded(st.pc, site.iwraps, *guard_i):
                continue
            cond = z3.And(differs, site.wraps, *([guard] if guard is not None else []))
            model = ctx.find_model(st.pc, cond, span, z3.And(site.iwraps, *guard_i), _sharper(v, site, guard_i))
            if model is None:
                continue
            # An expression around it that wraps too is the one to fix (declare int64 and widen);
            # not sought for a wrap that rests on a loop summary's value: that is inconclusive
            # whichever expression it names.
            outers = pending if havocked(ctx, cond) is None else []
            for outer in sorted(outers, key=lambda s: (_length(s.span), s.id), reverse=True):
                if outer is site or not _contains(outer.span, site.span):
                    continue
                if ctx.excluded(st.pc, outer.iwraps, *guard_i):
                    continue
                outer_cond = z3.And(differs, outer.wraps, *([guard] if guard is not None else []))
                outer_model = ctx.find_model(st.pc, outer_cond, span, z3.And(outer.iwraps, *guard_i),
                                             _sharper(v, outer, guard_i))
                if outer_model is not None:
                    site, cond, model = outer, outer_cond, outer_model
                    break
            for other in ordered:
                if _nested(other.span, site.span):
                    ctx.mark(_key(ctx, other))
            ctx.mark(_key(ctx, site))
            if _finding_key(ctx, site) in ctx.findings:
                return
            summary = depends_on_summary(ctx, cond, model)
            if summary is not None:
                ctx.stuck("imprecise-loop", f"a possible wrap of `{site.span.text}` depends on {summary}, "
                          "which the loop summary cannot bound", site.span)
                return
            model = ctx.minimal(st.pc, cond, z3.And(site.iwraps, *guard_i), model)
            ctx.report(self._finding(ctx, st, site, model, cond, span, what, stack))
            return

    def _finding(self, ctx, st, site, model, cond, sink_span, what, stack):
        exact = value_of(model, site.exact) if site.exact is not None else None
        machine = value_of(model, site.machine, site.signed) if site.machine is not None else None
        values = f" ({exact} becomes {machine})" if exact is not None and machine is not None else ""
        if site.kind == "conversion":
            check = "narrowing"
            msg = (f"conversion of `{site.span.text}` from {site.from_type} to {site.ctype} changes its value{values}; "
                   f"it reaches {what}")
            wide = "int64_t" if site.ctype in ("int", "long", "short", "signed char", "char") else "uint64_t"
            widened = _widen_text(site.span.text) if site.from_type and _bits32(site.from_type) else None
            how = f"declare the variable as {wide}" + (" and compute its value in 64 bits" if widened else "")
            fix = Fix(site.span, widened, how, declare=wide)
        else:
            check = "overflow"
            msg = (f"32-bit {_OPS.get(site.kind, site.kind)} `{site.span.text}` wraps in {site.ctype}{values}; "
                   f"it reaches {what}")
            fix = widening_fix(site)
        return make_finding(ctx, st, check, msg, site.span, model, z3.And(cond, site.wraps), expression=sink_span,
                            access=sink_span, wrapped_type=site.ctype, trace=list(site.stack or stack), fix=fix)


def _sharper(v, site, guard_i) -> z3.BoolRef | None:
    """The sink's own change in integers, for a sink of at most 32 bits: its exact value outside
    its type. ``iwraps`` says only that the site's exact value leaves the site's type, which a
    round trip can undo: `int64 -> int -> unsigned` changes a grid size only from 2^32 on, so an
    integer guess of 2^31 rows is refused by the bit-vectors. (A narrower type between the site
    and the sink can change a value inside the sink's type: then ``iwraps``' guesses are the ones.)"""
    if v.ty.bits > 32 or site.iwraps is None:
        return None
    return z3.And(site.iwraps, ints.outside(ints.I(v), v.ty), *guard_i)


def _finding_key(ctx, site) -> tuple:  # as Finding.key()
    check = "narrowing" if site.kind == "conversion" else "overflow"
    return (check, site.span.file, site.span.line, site.span.col, ctx.kernel or "")


def _contains(outer, inner) -> bool:
    """``outer`` covers ``inner`` (equal spans count: the later operation is the outer one)."""
    return outer.file == inner.file and (outer.line, outer.col) <= (inner.line, inner.col) \
        and (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)


def _length(span) -> tuple:
    return (span.end_line - span.line, span.end_col - span.col)


def _nested(a, b) -> bool:
    """One span inside the other (same file)."""
    if a.file != b.file:
        return False
    sa, ea = (a.line, a.col), (a.end_line, a.end_col)
    sb, eb = (b.line, b.col), (b.end_line, b.end_col)
    return (sa <= sb and eb <= ea) or (sb <= sa and ea <= eb)


def _key(ctx, site) -> tuple:
    # A site is one place in the source: reported once, from the first sink it reaches.
    return ("wrap", span_key(site.span))


def widening_fix(site) -> Fix | None:
    """``a * b`` -> ``static_cast<int64_t>(a) * b``: the whole chain then runs in 64 bits."""
    if site.kind not in ("*", "+", "-", "<<") or site.span.line != site.span.end_line:
        return None
    text = _widen_text(site.span.text, site.kind)
    if text is None:
        return None
    return Fix(site.span, text, f"compute `{site.span.text}` in 64 bits")


def _bits32(ctype: str) -> bool:
    return ctype in ("int", "unsigned int", "short", "unsigned short", "char", "signed char", "unsigned char")


def _widen_text(text: str, op: str | None = None) -> str | None:
    """Cast the first operand of the first top-level ``op`` (any arithmetic operator when None)."""
    if not text or "\n" in text or re.search(r"(?<![=!<>])=(?!=)", text):
        return None  # an assignment (i += s): the fix is the variable's type, not a cast
    ops = (op,) if op else ("*", "+", "-", "<<")
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and i > 0:
            for o in ops:
                if not text.startswith(o, i):
                    continue
                if o in ("+", "-") and (text.startswith(o * 2, i) or text[i - 1] in "+-*/%<>=!&|^(,"):
                    continue  # ++, --, a unary sign
                if o == "*" and text[i - 1] in "(,":
                    continue
                left = text[:i].rstrip()
                if not left or left.endswith(("<", ">", "=")):
                    continue
                return f"static_cast<int64_t>({left}) {text[i:].lstrip()}"
    return None
