"""C/C++ integer semantics on symbolic values.

Operands arrive already converted by the front end (clang makes promotions and the usual arithmetic
conversions explicit); what is left here is each operation done exactly as C does it, the exact
mathematical result beside it, and a wrap site wherever the two may differ. Intervals (sound bounds
that ignore path conditions) let most operations prove on the spot that they cannot wrap.
"""
from __future__ import annotations

import z3

from ..kir import nodes as N
from ..kir import types as T
from .values import MATH_BITS, BoolV, IntV, WrapSite, new_site_id, widen

# Operations that can wrap, and so create sites, only when at most this wide (as Model2Kernel and
# real bugs: 64-bit index arithmetic does not overflow for bounded shapes).
SITE_MAX_BITS = 32


def _fits(lo: int, hi: int, ty: T.IntType) -> bool:
    return ty.min <= lo and hi <= ty.max


def _site(kind: str, span: N.Span, ty: T.IntType, wraps: z3.BoolRef, stack, from_type: str | None = None,
          machine=None, exact=None) -> WrapSite:
    return WrapSite(new_site_id(), kind, span, ty.name, from_type, wraps, tuple(stack), machine, exact, ty.signed)


def _interpret(lo: int, hi: int, ty: T.IntType) -> tuple[int, int]:
    return (lo, hi) if _fits(lo, hi, ty) else (ty.min, ty.max)


def convert(v: IntV, to: T.IntType, span: N.Span, stack=()) -> IntV:
    """An integral conversion (implicit or explicit) to ``to``."""
    fr = v.ty
    if fr.bits == to.bits and fr.signed == to.signed:
        return IntV(to, v.bv, v.lo, v.hi, v.math, v.sites)
    if to.bits > fr.bits:
        bv = z3.SignExt(to.bits - fr.bits, v.bv) if fr.signed else z3.ZeroExt(to.bits - fr.bits, v.bv)
    elif to.bits < fr.bits:
        bv = z3.Extract(to.bits - 1, 0, v.bv)
    else:
        bv = v.bv
    if _fits(v.lo, v.hi, to):
        return IntV(to, bv, v.lo, v.hi, v.math, v.sites)
    width = max(fr.bits, to.bits) + 1
    wraps = widen(bv, to.signed, width) != widen(v.bv, fr.signed, width)
    if z3.is_false(z3.simplify(wraps)):
        return IntV(to, bv, to.min, to.max, v.math, v.sites)
    site = _site("conversion", span, to, wraps, stack, fr.name, bv, widen(v.bv, fr.signed, MATH_BITS))
    return IntV(to, bv, to.min, to.max, v.exact, v.sites | {site})


def const(value: int, ty: T.IntType) -> IntV:
    from .values import const_int
    return const_int(value, ty)


def from_bool(b: BoolV, to: T.IntType) -> IntV:
    return IntV(to, z3.If(b.term, z3.BitVecVal(1, to.bits), z3.BitVecVal(0, to.bits)), 0, 1)


def to_bool(v: IntV) -> BoolV:
    return BoolV(v.bv != 0)


def _corners(op, a: IntV, b: IntV) -> tuple[int, int]:
    vals = [op(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    return min(vals), max(vals)


def _exact(op: str, x: z3.BitVecRef, y: z3.BitVecRef, signed: bool) -> z3.BitVecRef:
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        return x / y if signed else z3.UDiv(x, y)
    if op == "%":
        return z3.SRem(x, y) if signed else z3.URem(x, y)
    if op == "<<":
        return x << y
    if op == ">>":
        return x >> y if signed else z3.LShR(x, y)
    if op == "&":
        return x & y
    if op == "|":
        return x | y
    if op == "^":
        return x ^ y
    raise ValueError(op)


def arith(op: str, a: IntV, b: IntV, ty: T.IntType, span: N.Span, stack=()) -> IntV:
    """``a op b`` computed in type ``ty`` (operands already of that type; shifts excepted)."""
    signed = ty.signed
    if op in ("<<", ">>"):
        shift = b
        b = IntV(ty, widen(b.bv, b.ty.signed, ty.bits), b.lo, b.hi, None, b.sites)
    x, y = a.bv, b.bv
    if op == "/" and b.concrete() and a.scaled is not None and a.scaled[1] % b.concrete() == 0 \
            and a.math is None and b.math is None:
        # (n * c) / d with d | c, the product exact: n * (c / d). Keeps divisions out of the solver.
        base, factor = a.scaled
        q = factor // b.concrete()
        base = convert(base, ty, span, stack) if base.ty != ty else base
        return base if q == 1 else arith("*", base, const(q, ty), ty, span, stack)
    if op in ("/", "%") and a.lo >= 0 and b.lo > 0:
        # Non-negative operands: unsigned division at the width the values need gives the same
        # result, and a narrow divider is far cheaper for the solver.
        w = max(a.hi.bit_length(), b.hi.bit_length(), 1) + 1
        f = z3.UDiv if op == "/" else z3.URem
        if w < ty.bits:
            r = z3.ZeroExt(ty.bits - w, f(z3.Extract(w - 1, 0, x), z3.Extract(w - 1, 0, y)))
        else:
            r = f(x, y)
    else:
        # C division truncates toward zero, as SMT-LIB bvsdiv does.
        r = _exact(op, x, y, signed)
    lo, hi, can_wrap = _bounds(op, a, b if op not in ("<<", ">>") else shift, ty)
    divergent = a.math is not None or b.math is not None
    sites = a.sites | b.sites
    if op in ("&", "|", "^") and not signed:
        # Bit manipulation on unsigned values is modular on purpose (hashes, masks).
        return IntV(ty, r, *_interpret(lo, hi, ty))
    if not can_wrap:
        math = _exact(op, a.exact, b.exact, True) if divergent else None
        scaled = None
        if op == "*" and not divergent:
            if b.concrete() and a.lo >= 0:
                scaled = (a, b.concrete()) if a.scaled is None else (a.scaled[0], a.scaled[1] * b.concrete())
            elif a.concrete() and b.lo >= 0:
                scaled = (b, a.concrete()) if b.scaled is None else (b.scaled[0], b.scaled[1] * a.concrete())
        return IntV(ty, r, lo, hi, math, sites, scaled)
    math = _exact(op, a.exact, b.exact, True)
    if ty.bits > SITE_MAX_BITS or op not in ("+", "-", "*", "<<"):
        return IntV(ty, r, ty.min, ty.max, math if divergent else None, sites)
    width = 2 * ty.bits + 2
    wide = _exact(op, widen(x, signed, width), widen(y, signed if op != "<<" else False, width), True)
    wraps = widen(r, signed, width) != wide
    if op == "<<":
        wraps = z3.Or(wraps, z3.UGE(y, ty.bits))
    if z3.is_false(z3.simplify(wraps)):
        return IntV(ty, r, ty.min, ty.max, math if divergent else None, sites)
    site = _site(op, span, ty, wraps, stack, None, r, widen(wide, True, MATH_BITS))
    return IntV(ty, r, ty.min, ty.max, math, sites | {site})


def _bounds(op: str, a: IntV, b: IntV, ty: T.IntType) -> tuple[int, int, bool]:
    """Interval of the exact result and whether it may leave ``ty``."""
    if op in ("+", "-", "*"):
        f = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q}[op]
        lo, hi = _corners(f, a, b)
        return lo, hi, not _fits(lo, hi, ty)
    if op == "/":
        if b.lo > 0 and a.lo >= 0:
            return a.lo // b.hi, a.hi // b.lo, False
        if b.lo > 0:
            m = max(abs(a.lo), abs(a.hi))
            return -m, m, False
        m = max(abs(a.lo), abs(a.hi))
        return (-m, m, ty.signed) if ty.signed else (0, m, False)
    if op == "%":
        bm = max(abs(b.lo), abs(b.hi))
        if a.lo >= 0:
            return 0, min(a.hi, max(bm - 1, 0)), False
        return -(bm - 1), bm - 1, False
    if op == "<<":
        if b.lo == b.hi and 0 <= b.lo < ty.bits:
            lo, hi = a.lo << b.lo, a.hi << b.lo
            return lo, hi, not _fits(lo, hi, ty)
        return ty.min, ty.max, True
    if op == ">>":
        if b.lo == b.hi and 0 <= b.lo < ty.bits:
            return a.lo >> b.lo, a.hi >> b.lo, False
        return (min(a.lo, 0), max(a.hi, 0), False) if _fits(a.lo, a.hi, ty) else (ty.min, ty.max, False)
    if op in ("&", "|", "^"):
        if a.lo >= 0 and b.lo >= 0:
            if op == "&":
                return 0, min(a.hi, b.hi), False
            return 0, (1 << max(a.hi.bit_length(), b.hi.bit_length())) - 1, False
        return ty.min, ty.max, False
    raise ValueError(op)


def negate(a: IntV, span: N.Span, stack=()) -> IntV:
    ty = a.ty
    r = -a.bv
    if not ty.signed:
        return IntV(ty, r, *_interpret(-a.hi, -a.lo, ty))  # modular negation is deliberate
    lo, hi = -a.hi, -a.lo
    if _fits(lo, hi, ty):
        return IntV(ty, r, lo, hi, (-a.math) if a.math is not None else None, a.sites)
    wraps = a.bv == z3.BitVecVal(1 << (ty.bits - 1), ty.bits)
    site = _site("neg", span, ty, wraps, stack, None, r, -widen(a.bv, True, MATH_BITS))
    return IntV(ty, r, ty.min, ty.max, -a.exact, a.sites | {site})


def bitnot(a: IntV) -> IntV:
    ty = a.ty
    r = ~a.bv
    if ty.signed and _fits(-a.hi - 1, -a.lo - 1, ty):
        return IntV(ty, r, -a.hi - 1, -a.lo - 1, (~a.math) if a.math is not None else None, a.sites)
    return IntV(ty, r, ty.min, ty.max)


def compare(op: str, a: IntV, b: IntV) -> BoolV:
    x, y = a.bv, b.bv
    signed = a.ty.signed
    # Decide on intervals when they do not overlap: saves the solver most loop and guard tests.
    if op == "==":
        if a.hi < b.lo or b.hi < a.lo:
            return BoolV(z3.BoolVal(False))
        if a.lo == a.hi == b.lo == b.hi:
            return BoolV(z3.BoolVal(True))
        return BoolV(x == y)
    if op == "!=":
        if a.hi < b.lo or b.hi < a.lo:
            return BoolV(z3.BoolVal(True))
        if a.lo == a.hi == b.lo == b.hi:
            return BoolV(z3.BoolVal(False))
        return BoolV(x != y)
    decided = _decide(op, a, b)
    if decided is not None:
        return BoolV(z3.BoolVal(decided))
    if op == "<":
        return BoolV(x < y if signed else z3.ULT(x, y))
    if op == "<=":
        return BoolV(x <= y if signed else z3.ULE(x, y))
    if op == ">":
        return BoolV(x > y if signed else z3.UGT(x, y))
    if op == ">=":
        return BoolV(x >= y if signed else z3.UGE(x, y))
    raise ValueError(op)


def _decide(op: str, a: IntV, b: IntV) -> bool | None:
    if op == "<":
        return True if a.hi < b.lo else False if a.lo >= b.hi else None
    if op == "<=":
        return True if a.hi <= b.lo else False if a.lo > b.hi else None
    if op == ">":
        return True if a.lo > b.hi else False if a.hi <= b.lo else None
    if op == ">=":
        return True if a.lo >= b.hi else False if a.hi < b.lo else None
    return None


def ite(c: z3.BoolRef, a: IntV, b: IntV) -> IntV:
    if a is b:
        return a
    if a.math is None and b.math is None:
        math = None
    else:
        math = z3.If(c, a.exact, b.exact)
    return IntV(a.ty, z3.If(c, a.bv, b.bv), min(a.lo, b.lo), max(a.hi, b.hi), math, a.sites | b.sites)


def rank(t: T.IntType) -> int:
    return {8: 1, 16: 2, 32: 3, 64: 4, 128: 5}.get(t.bits, 3)


def promote(t: T.IntType) -> T.IntType:
    if t.bits < 32:
        return T.INT32
    return t


def usual_arithmetic(a: T.IntType, b: T.IntType) -> T.IntType:
    """The common type of the usual arithmetic conversions (C++ [expr.arith.conv])."""
    a, b = promote(a), promote(b)
    if a.bits == b.bits and a.signed == b.signed:
        return a
    if a.signed == b.signed:
        return a if rank(a) > rank(b) else b
    u, s = (a, b) if not a.signed else (b, a)
    if rank(u) >= rank(s):
        return u
    if s.bits > u.bits:
        return s
    return T.IntType(s.bits, False, "unsigned " + s.name)


MATH_ZERO = z3.BitVecVal(0, MATH_BITS)
