"""C/C++ integer semantics on symbolic values.

Operands arrive already converted by the front end (clang makes promotions and the usual arithmetic
conversions explicit); what is left here is each operation done exactly as C does it, the exact
mathematical result beside it, and a wrap site wherever the two may differ. Intervals (sound bounds
that ignore path conditions) let most operations prove on the spot that they cannot wrap. Each
result also carries its exact value as an integer term (``iv``, see lia.py).
"""
from __future__ import annotations

import math

import z3

from ..kir import nodes as N
from ..kir import types as T
from . import lia
from .values import MATH_BITS, BoolV, IntV, WrapSite, const_int, new_site_id, widen

# Operations that can wrap, and so create sites, only when at most this wide (as Model2Kernel and
# real bugs: 64-bit index arithmetic does not overflow for bounded shapes).
SITE_MAX_BITS = 32


def I(v: IntV) -> z3.ArithRef:
    """The exact value of ``v`` as an integer term."""
    if v.iv is not None:
        return v.iv
    if v.math is None:
        return lia.CURRENT.bounded(v.bv, v.lo, v.hi)
    return lia.CURRENT.bounded(v.math, None, None)


def _fits(lo: int, hi: int, ty: T.IntType) -> bool:
    return ty.min <= lo and hi <= ty.max


def outside(iv: z3.ArithRef, ty: T.IntType) -> z3.BoolRef:
    return z3.Or(iv < ty.min, iv > ty.max)


def _site(kind: str, span: N.Span, ty: T.IntType, wraps: z3.BoolRef, stack, from_type: str | None,
          machine, exact, exact_iv) -> WrapSite:
    return WrapSite(new_site_id(), kind, span, ty.name, from_type, wraps, tuple(stack), machine, exact, ty.signed,
                    outside(exact_iv, ty))


def _interpret(lo: int, hi: int, ty: T.IntType) -> tuple[int, int]:
    return (lo, hi) if _fits(lo, hi, ty) else (ty.min, ty.max)


def _const_scaled(v: IntV) -> bool:
    return v.scaled is not None and isinstance(v.scaled[1], int)


def _abstract(ty: T.IntType, bv, lo: int, hi: int, **kw) -> IntV:
    """A result the integers do not follow: its integer twin is bounded by the interval only."""
    return IntV(ty, bv, lo, hi, iv=lia.CURRENT.bounded(bv, lo, hi), **kw)


def truncated(ty: T.IntType, bv, lo: int, hi: int) -> IntV:
    """A value made of some of another's bits (an intrinsic that reads the low 24 bits): exact as
    bits, its integer twin bounded by its range."""
    return _abstract(ty, bv, lo, hi)


def convert(v: IntV, to: T.IntType, span: N.Span, stack=()) -> IntV:
    """An integral conversion (implicit or explicit) to ``to``."""
    fr = v.ty
    iv = I(v)
    if fr.bits == to.bits and fr.signed == to.signed:
        return IntV(to, v.bv, v.lo, v.hi, v.math, v.sites, v.scaled, iv, v.machine_iv)
    if to.bits > fr.bits:
        bv = z3.SignExt(to.bits - fr.bits, v.bv) if fr.signed else z3.ZeroExt(to.bits - fr.bits, v.bv)
    elif to.bits < fr.bits:
        bv = z3.Extract(to.bits - 1, 0, v.bv)
    else:
        bv = v.bv
    if _fits(v.lo, v.hi, to):
        # A value that may have wrapped keeps its exact value (the checks exclude what a wrap
        # causes through it) and, read wider, its machine value is the narrow type's: a wrapped
        # `int n` read as int64 is the wrapped n, not the exact value modulo 2^64, where a
        # comparison `i < n` is concerned.
        machine = machine_int(v) if v.math is not None and to.bits > fr.bits else v.machine_iv
        return IntV(to, bv, v.lo, v.hi, v.math, v.sites, v.scaled if v.math is None else None, iv, machine)
    width = max(fr.bits, to.bits) + 1
    wraps = widen(bv, to.signed, width) != widen(v.bv, fr.signed, width)
    if z3.is_false(z3.simplify(wraps)):
        return IntV(to, bv, to.min, to.max, v.math, v.sites, None, iv)
    site = _site("conversion", span, to, wraps, stack, fr.name, bv, widen(v.bv, fr.signed, MATH_BITS), machine_int(v))
    return IntV(to, bv, to.min, to.max, v.exact, v.sites | {site}, None, iv)


def from_bool(b: BoolV, to: T.IntType) -> IntV:
    bv = z3.If(b.term, z3.BitVecVal(1, to.bits), z3.BitVecVal(0, to.bits))
    return IntV(to, bv, 0, 1, iv=z3.If(lia.CURRENT.translate(b.term), z3.IntVal(1), z3.IntVal(0)))


def to_bool(v: IntV) -> BoolV:
    return BoolV(truth_of(v))


def truth_of(v: IntV) -> z3.BoolRef:
    term = v.bv != 0
    lia.CURRENT.register(term, machine_int(v) != 0)
    return term


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


def _int_op(op: str, a: IntV, b: IntV, lo: int, hi: int) -> z3.ArithRef | None:
    """The exact result as an integer term, or None where integers would need case splits."""
    x, y = I(a), I(b)
    if op in ("+", "-"):
        return lia.CURRENT.sum(x, y, 1 if op == "+" else -1)
    if op == "*":
        if a.concrete() is None and b.concrete() is None and a.math is None and b.math is None:
            return lia.CURRENT.product(x, y, a.lo, a.hi, b.lo, b.hi)
        return x * y
    nonneg = a.lo >= 0 and b.lo > 0
    if op in ("/", "%") and b.lo > 0 and b.concrete() is None:
        # A symbolic positive divisor: the quotient as a variable with linear facts (lia.quotient);
        # the remainder, as C's, is x - q * y whatever the dividend's sign.
        q, qy = lia.CURRENT.quotient(x, y, a.lo, a.hi, b.lo, b.hi)
        return q if op == "/" else x - qy
    if op == "/" and nonneg:
        return x / y  # z3's integer division floors: the same as C for non-negative operands
    if op == "%" and nonneg:
        return x % y
    k = b.concrete()
    if op in ("/", "%") and k is not None and k != 0:
        # C truncates toward zero: linear in the integers when the divisor is a constant.
        q = z3.If(x >= 0, x / abs(k), -((-x) / abs(k)))
        q = q if k > 0 else -q
        return q if op == "/" else x - q * k
    if op == "<<" and k is not None and 0 <= k < 64:
        return x * (1 << k)
    if op == ">>" and k is not None and 0 <= k < 64 and (a.lo >= 0 or a.ty.signed):
        return x / (1 << k)  # an arithmetic shift floors, as z3's division by a positive constant
    if op == "&" and a.lo >= 0 and k is not None and k >= 0 and (k + 1) & k == 0:
        return x % (k + 1)  # a mask of low bits
    if op == "|" and a.lo >= 0 and b.lo >= 0:
        # Bit fields that do not overlap (a swizzled layout's `(tile << 9) | (row << 4) | col`,
        # `row << 4` below 512): their sum.
        for high, low in ((x, b), (y, a)):
            zeros = _low_zero_bits(high)
            if zeros and low.hi < (1 << zeros):
                return x + y
    return None


def _low_zero_bits(t: z3.ArithRef) -> int:
    """How many low bits of the integer term ``t`` are 0 whatever its variables (``c * x`` with
    ``c`` a multiple of 2^k, and sums of such terms): k, at most 62."""
    if z3.is_int_value(t):
        v = t.as_long()
        return 62 if v == 0 else min((v & -v).bit_length() - 1, 62)
    if z3.is_mul(t):
        return min(sum(_low_zero_bits(c) for c in t.children() if z3.is_int_value(c)), 62)
    if z3.is_add(t) or z3.is_sub(t):
        return min(_low_zero_bits(c) for c in t.children())
    return 0


def residue(v: IntV) -> tuple[int, int]:
    """(m, r) with ``v`` ≡ r (mod m) whatever its variables; (1, 0) when nothing is known. Read
    from the exact integer term, so only for a value no site can wrap (then the machine value is
    that integer): `type * 56 + 8`, a table entry's member, is 8 modulo 56."""
    if v.sites or v.math is not None:
        return 1, 0
    m, r = _residue(I(v))
    return (m, r % m) if m > 1 else (1, 0)


def _residue(t: z3.ArithRef) -> tuple[int, int]:
    # m == 0: the term is the constant r.
    if z3.is_int_value(t):
        return 0, t.as_long()
    if z3.is_mul(t):
        c, rest = 1, []
        for x in t.children():
            if z3.is_int_value(x):
                c *= x.as_long()
            else:
                rest.append(x)
        if not rest:
            return 0, c
        m, r = _residue(rest[0]) if len(rest) == 1 else (1, 0)
        return abs(c) * m, c * r
    if z3.is_add(t) or z3.is_sub(t):
        parts = [_residue(x) for x in t.children()]
        m, r = parts[0]
        for m2, r2 in parts[1:]:
            m, r = math.gcd(m, m2), (r - r2 if z3.is_sub(t) else r + r2)
        return m, r
    if z3.is_app_of(t, z3.Z3_OP_ITE):
        (m1, r1), (m2, r2) = _residue(t.arg(1)), _residue(t.arg(2))
        return math.gcd(m1, m2, r1 - r2), r1
    return 1, 0


def arith(op: str, a: IntV, b: IntV, ty: T.IntType, span: N.Span, stack=()) -> IntV:
    """``a op b`` computed in type ``ty`` (operands already of that type; shifts excepted)."""
    signed = ty.signed
    shift = None
    if op in ("<<", ">>"):
        shift = b
        b = IntV(ty, widen(b.bv, b.ty.signed, ty.bits), b.lo, b.hi, None, b.sites, iv=I(b))
    identity = _identity(op, a, b, ty)
    if identity is not None:
        return identity
    x, y = a.bv, b.bv
    if op == "/" and b.concrete() is None and a.scaled is not None and a.math is None and b.math is None:
        # (m * n) / n, the product exact and n > 0: m. numel / hidden_size is the row count, and
        # numel / num_tokens of a [num_tokens, 5120] tensor is 5120, not a 64-bit division the
        # solver has to bit-blast.
        base, factor = a.scaled
        if isinstance(factor, int):
            factor = const_int(factor, a.ty)
        for keep, drop in ((base, factor), (factor, base)):
            if b.lo > 0 and z3.eq(I(drop), I(b)):
                return convert(keep, ty, span, stack) if keep.ty != ty else keep
    if op == "/" and b.concrete() and a.scaled is not None and isinstance(a.scaled[1], int) \
            and a.scaled[1] % b.concrete() == 0 and a.math is None and b.math is None:
        # (n * c) / d with d | c, the product exact: n * (c / d). Keeps divisions out of the solver.
        base, factor = a.scaled
        q = factor // b.concrete()
        base = convert(base, ty, span, stack) if base.ty != ty else base
        return base if q == 1 else arith("*", base, const_int(q, ty), ty, span, stack)
    if op == "/" and b.concrete() and a.scaled is not None and isinstance(a.scaled[1], int) and a.scaled[1] > 0 \
            and b.concrete() % a.scaled[1] == 0 and a.math is None and b.math is None and a.scaled[0].lo >= 0:
        # (n * c) / d with c | d and n >= 0: n / (d / c) (cols * sizeof(half) / 16 is cols / 8).
        base, factor = a.scaled
        base = convert(base, ty, span, stack) if base.ty != ty else base
        return arith("/", base, const_int(b.concrete() // factor, ty), ty, span, stack)
    if op in ("/", "%") and a.lo >= 0 and b.lo >= 0 and b.hi > 0:
        # Non-negative operands: unsigned division at the width the values need gives the same
        # result, and a narrow divider is far cheaper for the solver.
        w = max(a.hi.bit_length(), b.hi.bit_length(), 1) + 1
        f = z3.UDiv if op == "/" else z3.URem
        r = z3.ZeroExt(ty.bits - w, f(z3.Extract(w - 1, 0, x), z3.Extract(w - 1, 0, y))) if w < ty.bits else f(x, y)
    else:
        # C division truncates toward zero, as SMT-LIB bvsdiv does.
        r = _exact(op, x, y, signed)
    lo, hi, can_wrap = _bounds(op, a, b if shift is None else shift, ty)
    divergent = a.math is not None or b.math is not None
    if lo == hi and not can_wrap and not divergent and a.concrete() is not None and b.concrete() is not None:
        return const_int(lo, ty)  # constant folding keeps terms small and linear
    sites = a.sites | b.sites
    if op in ("&", "|", "^") and not signed:
        # Bit manipulation on unsigned values is modular on purpose (hashes, masks).
        lo, hi = _interpret(lo, hi, ty)
        iv = _int_op(op, a, b, lo, hi) if not divergent else None
        return IntV(ty, r, lo, hi, iv=iv) if iv is not None else _abstract(ty, r, lo, hi)
    iv = _int_op(op, a, b, lo, hi)
    if not can_wrap:
        math = _exact(op, a.exact, b.exact, True) if divergent else None
        scaled = None
        if op == "*" and not divergent:
            if b.concrete() and a.lo >= 0:
                scaled = (a, b.concrete()) if not _const_scaled(a) else (a.scaled[0], a.scaled[1] * b.concrete())
            elif a.concrete() and b.lo >= 0:
                scaled = (b, a.concrete()) if not _const_scaled(b) else (b.scaled[0], b.scaled[1] * a.concrete())
            elif a.lo >= 0 and b.lo >= 0:
                scaled = (a, b)
        if iv is None:
            return _abstract(ty, r, lo, hi, math=math, sites=sites, scaled=scaled) if math is None else \
                IntV(ty, r, lo, hi, math, sites, scaled, lia.CURRENT.bounded(math, None, None))
        return IntV(ty, r, lo, hi, math, sites, scaled, iv)
    math = _exact(op, a.exact, b.exact, True)
    if iv is None:
        iv = lia.CURRENT.bounded(math, None, None)
    if ty.bits > SITE_MAX_BITS or op not in ("+", "-", "*", "<<"):
        return IntV(ty, r, ty.min, ty.max, math if divergent else None, sites, None, iv if divergent else
                    lia.CURRENT.bounded(r, ty.min, ty.max))
    width = 2 * ty.bits + 2
    wide = _exact(op, widen(x, signed, width), widen(y, signed if op != "<<" else False, width), True)
    wraps = widen(r, signed, width) != wide
    if op == "<<":
        wraps = z3.Or(wraps, z3.UGE(y, ty.bits))
    if z3.is_false(z3.simplify(wraps)):
        return IntV(ty, r, ty.min, ty.max, math if divergent else None, sites, None, iv)
    # The site's own exact result, from its machine operands: what ``iwraps`` bounds.
    operands_exact = _int_op(op, _machine(a), _machine(b), lo, hi)
    if operands_exact is None:
        operands_exact = lia.CURRENT.bounded(wide, None, None)
    site = _site(op, span, ty, wraps, stack, None, r, widen(wide, True, MATH_BITS), operands_exact)
    return IntV(ty, r, ty.min, ty.max, math, sites | {site}, None, iv)


def _identity(op: str, a: IntV, b: IntV, ty: T.IntType) -> IntV | None:
    """``x * 1``, ``1 * x``, ``x + 0``, ``0 + x``, ``x - 0``, ``x / 1``: ``x`` itself. A product
    started from 1 (a numel, a view's known dims) then keeps the factors that later cancel a
    division, instead of a 64-bit divider for the solver."""
    one_side = {"*": 1, "+": 0, "-": 0, "/": 1}.get(op)
    if one_side is None:
        return None
    def neutral(v: IntV) -> bool:
        return v.concrete() == one_side and v.math is None and not v.sites
    if neutral(b) and a.ty == ty:
        return a
    if op in ("*", "+") and neutral(a) and b.ty == ty:
        return b
    return None


def _machine(v: IntV) -> IntV:
    """``v`` read as its machine value (what an operation receives)."""
    if v.math is None:
        return v
    return IntV(v.ty, v.bv, v.ty.min, v.ty.max, iv=machine_int(v))


def machine_int(v: IntV) -> z3.ArithRef:
    """The machine value of ``v`` as an integer: its exact value reduced into the type's range
    (two's complement), which is what the hardware computes, and linear for z3."""
    if v.machine_iv is not None:
        return v.machine_iv
    if v.math is None:
        return I(v)
    span = 1 << v.ty.bits
    return (I(v) - v.ty.min) % span + v.ty.min


def _bounds(op: str, a: IntV, b: IntV, ty: T.IntType) -> tuple[int, int, bool]:
    """Interval of the exact result and whether it may leave ``ty``."""
    if op in ("+", "-", "*"):
        f = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q}[op]
        lo, hi = _corners(f, a, b)
        return lo, hi, not _fits(lo, hi, ty)
    if op == "/":
        # A divisor of 0 is excluded on the path before any division (nonzero_divisor; in C it
        # is undefined): a divisor in [0, hi] divides as one in [1, hi].
        blo = 1 if b.lo == 0 and b.hi > 0 else b.lo
        if blo > 0 and a.lo >= 0:
            return a.lo // b.hi, a.hi // blo, False
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
        return _abstract(ty, r, *_interpret(-a.hi, -a.lo, ty))  # modular negation is deliberate
    lo, hi = -a.hi, -a.lo
    if _fits(lo, hi, ty):
        return IntV(ty, r, lo, hi, (-a.math) if a.math is not None else None, a.sites, None, -I(a))
    wraps = a.bv == z3.BitVecVal(1 << (ty.bits - 1), ty.bits)
    site = _site("neg", span, ty, wraps, stack, None, r, -widen(a.bv, True, MATH_BITS), -I(_machine(a)))
    return IntV(ty, r, ty.min, ty.max, -a.exact, a.sites | {site}, None, -I(a))


def bitnot(a: IntV) -> IntV:
    ty = a.ty
    r = ~a.bv
    if ty.signed and _fits(-a.hi - 1, -a.lo - 1, ty):
        return IntV(ty, r, -a.hi - 1, -a.lo - 1, (~a.math) if a.math is not None else None, a.sites, None, -I(a) - 1)
    if not ty.signed and a.math is None:
        return IntV(ty, r, ty.max - a.hi, ty.max - a.lo, iv=ty.max - I(a))
    return _abstract(ty, r, ty.min, ty.max)


def compare(op: str, a: IntV, b: IntV) -> BoolV:
    x, y = a.bv, b.bv
    signed = a.ty.signed
    # Decide on intervals when they do not overlap: saves the solver most loop and guard tests.
    if op in ("==", "!="):
        if a.hi < b.lo or b.hi < a.lo:
            return BoolV(z3.BoolVal(op == "!="))
        if a.lo == a.hi == b.lo == b.hi:
            return BoolV(z3.BoolVal(op == "=="))
        term = x == y if op == "==" else x != y
    else:
        decided = _decide(op, a, b)
        if decided is not None:
            return BoolV(z3.BoolVal(decided))
        if op == "<":
            term = x < y if signed else z3.ULT(x, y)
        elif op == "<=":
            term = x <= y if signed else z3.ULE(x, y)
        elif op == ">":
            term = x > y if signed else z3.UGT(x, y)
        elif op == ">=":
            term = x >= y if signed else z3.UGE(x, y)
        else:
            raise ValueError(op)
    # The machine values compare as integers do (a wrapped one as its exact value reduced modulo 2^w).
    ia, ib = machine_int(a), machine_int(b)
    lia.CURRENT.register(term, {"==": ia == ib, "!=": ia != ib, "<": ia < ib, "<=": ia <= ib,
                                ">": ia > ib, ">=": ia >= ib}[op])
    return BoolV(term)


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
    iv = z3.If(lia.CURRENT.translate(c), I(a), I(b))
    return IntV(a.ty, z3.If(c, a.bv, b.bv), min(a.lo, b.lo), max(a.hi, b.hi), math, a.sites | b.sites, None, iv)


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
