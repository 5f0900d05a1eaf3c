"""Integer arithmetic beside the bit-vectors: a fast, sound way to prove that something cannot happen.

Every integer value carries an exact integer term (``IntV.iv``). Path conditions are translated to
integers atom by atom: a comparison of values that cannot have wrapped becomes the same comparison
of their integer terms; anything else becomes a free boolean. The result admits every behaviour of
the program (an over-approximation), so when z3's arithmetic solver finds it unsatisfiable, the
bit-vector query is unsatisfiable too. Proofs of "in bounds" and "cannot wrap" -- most queries of a
correct kernel -- are linear, and take milliseconds this way; bit-vectors are asked only for what
the integers cannot exclude, and for witnesses.
"""
from __future__ import annotations

import itertools
import math
import time

import z3

from . import work
from .partition import Partition
from .terms import constants


MODELS_KEPT = 4  # satisfying models tried before a question is asked (see Lia._models)
# The work limit of the first, fast try at a nonlinear question (Lia.refutes): over a third of the
# fixtures' 163 such questions, the core solver decided 143 within it, the tactic the other 20
# (units in all, with the tactic asked where the core solver gave up: 13 million, 51 million
# for the tactic alone, which left 5 undecided).
NONLINEAR_FIRST_RLIMIT = 200_000


class Lia:
    # Work limits in z3's resource units, not seconds: an answer must not depend on how busy the
    # machine is. About half a second of arithmetic on an idle core; the wall clock is a backstop.
    # The nonlinear tier gets twice that: it is asked only when the linear one could not decide,
    # and what it leaves open goes to the bit-vectors, where the same question (a product of
    # sizes bounded by another) costs up to the solver's whole limit, ten times as much; checks
    # behind a runtime check that a dispatch then narrows (hidden / group_size, then a constant
    # group size) needed about 3.3 million units.
    def __init__(self, rlimit: int = 2_000_000, timeout_ms: int = 60_000, nonlinear_rlimit: int = 4_000_000):
        # Names count from 1 in every instance: the same query whatever ran before in the process.
        self._ids = itertools.count(1)
        self.atoms: dict[int, z3.BoolRef] = {}
        self.nonlinear: dict[int, z3.BoolRef] = {}  # used by the second tier only
        self.bounds: dict[str, z3.BoolRef] = {}
        self.abstract: dict[int, z3.ArithRef] = {}
        self._abstracted: dict[str, z3.ExprRef] = {}  # abstracting variable's name -> its bit-vector term
        self.products: dict[tuple, z3.ArithRef] = {}
        self.definitions: list = []  # exact nonlinear facts, for the second tier
        self.product_names: set[str] = set()
        self._by_factor: dict[int, list] = {}  # factor term id -> [(product, other factor, product name)]
        self._factors: dict[str, tuple] = {}  # product name -> ((x, xl, xu), (y, yl, yu))
        self.envelopes: dict[str, z3.BoolRef] = {}  # product name -> McCormick envelope
        self._substitutions: dict[tuple, z3.ExprRef] = {}  # (equalities, factor) -> substituted factor
        self._sides_of: dict[int, tuple] = {}  # term (Python id) -> the equalities it asserts (see _equations)
        self._path_orders: dict[tuple, z3.BoolRef] = {}  # order lemmas of products the path relates
        self._classes_of: dict[tuple, tuple] = {}  # terms asserting equalities -> their classes (_equalities)
        self._quotients: dict[str, tuple] = {}  # quotient name -> (dividend, divisor), dividend >= 0
        self._divisions: dict[str, tuple] = {}  # quotient name -> (dividend, divisor, quotient * divisor)
        self._exact: dict[str, list] = {}  # product name -> linear sums it equals (see sum)
        self.orders: dict[str, list] = {}  # product name -> [(other product name, order lemma)]
        self._vars_of: dict[int, frozenset] = {}
        self._keep: list = []  # z3 ids stay unique while their terms live
        self._memo: dict[int, z3.BoolRef] = {}
        self._memo_nl: dict[int, z3.BoolRef] = {}
        # Questions proved unsatisfiable: (term ids of the path and of the conditions) -> whether
        # the proof needed the nonlinear tier. Facts only accumulate, so a proof stays one; a load
        # and the store back to its address ask the same question.
        self._proved: dict[tuple, bool] = {}
        # Models of the last questions found satisfiable: a branch's two sides are asked one after
        # the other, and the path's model already satisfies one of them (and most questions of a
        # path that goes on). A model that satisfies every term is the answer the solver would
        # give: nothing to prove, so nothing to ask.
        self._models: list = []
        self.witnessed = 0
        self.last_model = None
        self.skipped = False
        self._true_id = z3.BoolVal(True).get_id()  # an id test: z3.is_true() costs several calls into z3
        self.quiet: set[int] = set()  # nonlinear definitions that alone never justify the second tier
        self.timeout_ms = timeout_ms
        self.rlimit = rlimit
        self.nonlinear_rlimit = nonlinear_rlimit
        self.queries = 0
        self.proved = 0
        self.seconds = 0.0

    # ------------------------------------------------------------ terms

    def var(self, name: str, lo: int | None, hi: int | None) -> z3.ArithRef:
        v = z3.Int(name)
        if name not in self.bounds:
            parts = []
            if lo is not None:
                parts.append(v >= lo)
            if hi is not None:
                parts.append(v <= hi)
            self.bounds[name] = z3.And(*parts) if parts else z3.BoolVal(True)
        return v

    def pinned(self, name: str, bits: int, value: int) -> z3.BoolRef | None:
        """The integer twin of a fixed bit-vector input (a replay's pin): its variable equal to the
        reading of ``value`` (unsigned or signed) that its bounds admit, None where the variable
        is unknown or both readings or neither are admitted."""
        if name not in self.bounds:
            return None
        v = z3.Int(name)
        readings = {value, value - (1 << bits) if bits and value >= 1 << (bits - 1) else value}
        fits = [r for r in readings
                if z3.is_true(z3.simplify(z3.substitute(self.bounds[name], (v, z3.IntVal(r)))))]
        return v == fits[0] if len(fits) == 1 else None

    def fresh(self, prefix: str, lo: int, hi: int) -> z3.ArithRef:
        """A new variable in [lo, hi] (an over-approximation's free index)."""
        return self.var(f"{prefix}!{next(self._ids)}", lo, hi)

    def product(self, x: z3.ArithRef, y: z3.ArithRef, xl: int, xu: int, yl: int, yu: int) -> z3.ArithRef:
        """x * y as a variable bounded by its McCormick envelopes: four linear inequalities that
        hold for every x in [xl, xu] and y in [yl, yu]. They make most index bounds that multiply
        two sizes (col * tokens) provable in linear arithmetic; the exact product stays for the
        nonlinear tier."""
        # Factors are matched in z3's normal form: (rows + 1) - 1 is rows, so products of the same
        # sizes share their factors (the order lemmas match factors by identity). The facts keep
        # the terms as the path has them: a normal form's own divisions would be new terms to the
        # arithmetic solver.
        nx, ny = z3.simplify(x), z3.simplify(y)
        if nx.get_id() > ny.get_id():
            x, y, nx, ny, xl, xu, yl, yu = y, x, ny, nx, yl, yu, xl, xu
        key = (nx.get_id(), ny.get_id())
        if key not in self.products:
            corners = [xl * yl, xl * yu, xu * yl, xu * yu]
            p = self.var(f"prod!{next(self._ids)}", min(corners), max(corners))
            self._keep.extend((x, y, nx, ny))
            self.envelopes[str(p)] = z3.And(
                p >= xl * y + yl * x - xl * yl, p >= xu * y + yu * x - xu * yu,
                p <= xu * y + yl * x - xu * yl, p <= xl * y + yu * x - xl * yu)
            self.definitions.append(p == x * y)
            self.product_names.add(str(p))
            self.products[key] = p
            self._factors[str(p)] = ((nx, xl, xu), (ny, yl, yu))
            self._order_lemmas(p, ((x, y, yl, ny), (y, x, xl, nx)))
        return self.products[key]

    def sum(self, x: z3.ArithRef, y: z3.ArithRef, sign: int = 1) -> z3.ArithRef:
        """x + sign * y. Where both are multiples of products with a common factor (a row's
        offset ``seq * heads * parts + head * parts``), the sum is that factor times the sum of the
        other factors, a product of its own: ordered against the products that share the factor,
        it gives ``(seq * heads + head) * parts + parts <= seqs * heads * parts`` where the two
        products apart give nothing linear. The product equals the sum exactly (a linear fact)."""
        plain = x + sign * y
        left, right = self._multiple(x), self._multiple(y)
        if left is None or right is None:
            return plain
        (c1, p1), (c2, p2) = left, right
        for (f, fl, fu), (a1, a1l, a1u) in self._sides(p1):
            if fl < 0:
                continue
            for (f2, _, _), (a2, a2l, a2u) in self._sides(p2):
                if not z3.eq(f, f2):
                    continue
                # The common constant stays outside (a byte offset's element size): the other
                # factor is then comparable with the other products' (seq * heads + head vs seqs * heads).
                common = math.gcd(c1, sign * c2)
                k1, k2 = c1 // common, sign * c2 // common
                other = z3.simplify(k1 * a1 + k2 * a2)
                lo = min(k1 * a1l, k1 * a1u) + min(k2 * a2l, k2 * a2u)
                hi = max(k1 * a1l, k1 * a1u) + max(k2 * a2l, k2 * a2u)
                p = self.product(f, other, fl, fu, lo, hi)
                name = str(p)
                exact = p == k1 * p1 + k2 * p2
                if not any(z3.eq(exact, e) for e in self._exact.get(name, ())):
                    self._exact.setdefault(name, []).append(exact)
                    self.envelopes[name] = z3.And(self.envelopes[name], exact)
                return p if common == 1 else common * p
        return plain

    def _multiple(self, t: z3.ArithRef) -> tuple[int, z3.ArithRef] | None:
        """(c, p) when t is c * p for a product variable p and a constant c."""
        c = 1
        while z3.is_mul(t) and t.num_args() == 2:
            k = [a for a in t.children() if z3.is_int_value(a)]
            if len(k) != 1:
                return None
            c *= k[0].as_long()
            t = t.arg(1) if z3.is_int_value(t.arg(0)) else t.arg(0)
        return (c, t) if z3.is_const(t) and str(t) in self._factors else None

    def _sides(self, p: z3.ArithRef):
        """Each factor of a product with the other factor: ((f, lo, hi), (other, lo, hi))."""
        x, y = self._factors[str(p)]
        return ((x, y), (y, x))

    def quotient(self, x: z3.ArithRef, y: z3.ArithRef, xl: int, xu: int, yl: int, yu: int) -> tuple:
        """C's x / y for a symbolic y >= 1, as a variable q tied to x by q * y <= x < q * y + y
        (x >= 0; mirrored for x < 0, where C truncates toward zero), q * y a product with its
        envelopes: linear facts where the quotient itself would make every condition that mentions
        it nonlinear (a block's share of threads, a warp's token and head). Returns (q, q * y); the
        exact quotient stays for the nonlinear tier."""
        key = ("div", x.get_id(), y.get_id())
        if key not in self.products:
            ql = xl // yu if xl >= 0 else -((-xl) // yl)
            qu = xu // yl if xu >= 0 else -((-xu) // yu)
            q = self.var(f"quot!{next(self._ids)}", ql, qu)
            p = self.product(q, y, ql, qu, yl, yu)
            self._keep.extend((x, y))
            below = z3.And(p <= x, x <= p + y - 1)
            envelope = below if xl >= 0 else \
                z3.And(z3.Implies(x >= 0, below), z3.Implies(x < 0, z3.And(p - y + 1 <= x, x <= p)))
            # The divisor's lower bound holds where the division runs (a path that excluded 0), not
            # on every path the quotient's term reaches (`n > 0 ? h / n : 1` merged): the facts hold
            # where it does, or they would refute the paths with a divisor of 0.
            in_range = y >= yl
            self.envelopes[str(q)] = z3.Implies(in_range, envelope)
            for v in (q, p):
                self.bounds[str(v)] = z3.Implies(in_range, self.bounds[str(v)])
            self.envelopes[str(p)] = z3.Implies(in_range, self.envelopes[str(p)])
            self.definitions.append(q == (x / y if xl >= 0 else z3.If(x >= 0, x / y, -((-x) / y))))
            if xl >= 0:
                self._quotients[str(q)] = (z3.simplify(x), z3.simplify(y))
            self._divisions[str(q)] = (x, y, p)
            self.products[key] = (q, p)
        return self.products[key]

    def _order_lemmas(self, p: z3.ArithRef, sides) -> None:
        """Products that share a non-negative factor are ordered as their other factors are:
        row < rows gives row * hidden + hidden <= rows * hidden. Linear facts about the product
        variables, true for all values, which McCormick envelopes alone cannot give; they prove the
        row bounds of kernels whose sizes are all symbols."""
        name = str(p)
        for other, c, c_lo, c_normal in sides:
            if c_lo < 0:
                continue
            for q, other_q, q_name in self._by_factor.get(c_normal.get_id(), ()):
                self.orders.setdefault(name, []).append((q_name, _ordered(p, other, q, other_q, c)))
            self._by_factor.setdefault(c_normal.get_id(), []).append((p, other, name))

    def bounded(self, key: z3.ExprRef, lo: int, hi: int) -> z3.ArithRef:
        """An integer standing for a value the integers do not follow exactly (a bitwise result,
        a load): one per bit-vector term, bounded by its interval."""
        k = key.get_id()
        if k not in self.abstract:
            self._keep.append(key)
            self.abstract[k] = self.var(f"abs!{next(self._ids)}", lo, hi)
            self._abstracted[str(self.abstract[k])] = key
        return self.abstract[k]

    def factors(self, name: str) -> tuple | None:
        """A product variable's two factors (terms), None for any other name."""
        f = self._factors.get(name)
        return None if f is None else (f[0][0], f[1][0])

    def source(self, cond: z3.BoolRef) -> z3.BoolRef | None:
        """The bit-vector condition an integer condition made of abstracted ones (``atom!N``, under
        And, Or, Not) stands for; None where some part is the integers' own."""
        if z3.is_const(cond):
            return self._abstracted.get(str(cond))
        if z3.is_and(cond) or z3.is_or(cond) or z3.is_not(cond):
            parts = [self.source(c) for c in cond.children()]
            if any(p is None for p in parts):
                return None
            return z3.Not(parts[0]) if z3.is_not(cond) else z3.And(*parts) if z3.is_and(cond) else z3.Or(*parts)
        return None

    def division(self, name: str) -> tuple | None:
        """A quotient variable's (dividend, divisor, the product quotient * divisor), None for any
        other name: ``x == y * q + (x - p)`` is how a remainder ``x % y`` reads in the integers."""
        return self._divisions.get(name)

    def stands_for(self, name: str) -> tuple | None:
        """The terms an auxiliary variable of the integers is a function of (a product's factors, a
        quotient's dividend and divisor, the bit-vector term of an abstracted value or condition), or
        None for one that stands for nothing known."""
        factors = self.factors(name)
        if factors is not None:
            return factors
        if name in self._quotients:
            return self._quotients[name]
        key = self._abstracted.get(name)
        return None if key is None else (key,)

    def define(self, cond: z3.BoolRef, int_cond: z3.BoolRef) -> z3.BoolRef:
        """Register a definition (num_tokens == batch * seq_len)."""
        self.register(cond, int_cond)
        self.quiet.add(cond.get_id())
        return cond

    def register(self, cond: z3.BoolRef, int_cond: z3.BoolRef | None) -> z3.BoolRef:
        """Record the integer version of a condition. Nonlinear ones are left out (the condition
        then counts as unknown): linear arithmetic is decided fast and completely."""
        if int_cond is not None and not z3.is_true(cond) and not z3.is_false(cond):
            self._keep.append(cond)
            (self.atoms if linear(int_cond) else self.nonlinear)[cond.get_id()] = int_cond
        return cond

    # ------------------------------------------------------------ translation

    def translate(self, cond: z3.BoolRef, nonlinear: bool = False) -> z3.BoolRef:
        memo = self._memo_nl if nonlinear else self._memo
        k = cond.get_id()
        hit = memo.get(k)
        if hit is not None:
            return hit
        out = self.atoms.get(k)
        if out is None and nonlinear:
            out = self.nonlinear.get(k)
        if out is None:
            if z3.is_true(cond) or z3.is_false(cond):
                out = cond
            elif z3.is_and(cond):
                out = z3.And(*[self.translate(c, nonlinear) for c in cond.children()])
            elif z3.is_or(cond):
                out = z3.Or(*[self.translate(c, nonlinear) for c in cond.children()])
            elif z3.is_not(cond):
                out = z3.Not(self.translate(cond.arg(0), nonlinear))
            elif z3.is_implies(cond):
                out = z3.Implies(self.translate(cond.arg(0), nonlinear), self.translate(cond.arg(1), nonlinear))
            elif z3.is_app_of(cond, z3.Z3_OP_ITE) and z3.is_bool(cond):
                out = z3.If(*[self.translate(c, nonlinear) for c in cond.children()])
            elif z3.is_eq(cond) and z3.is_bool(cond.arg(0)):
                out = self.translate(cond.arg(0), nonlinear) == self.translate(cond.arg(1), nonlinear)
            else:
                if not nonlinear and k in self.nonlinear and k not in self.quiet:
                    self.skipped = True
                out = z3.Bool(f"atom!{next(self._ids)}")  # unknown to the integers: any truth value
                self._abstracted[str(out)] = cond
        self._keep.append(cond)
        memo[k] = out
        return out

    # ------------------------------------------------------------ queries

    def unsat(self, pc, *conds, nonlinear: bool = True) -> bool:
        """True when pc ∧ conds is proved unsatisfiable in the integers (then it is, in the program).
        Linear arithmetic first; when that cannot decide and nonlinear facts were left out (a
        product of two sizes), once more with them in z3's nonlinear arithmetic."""
        key = (tuple(t.get_id() for t in pc), tuple(c.get_id() for c in conds))
        needed_nonlinear = self._proved.get(key)
        if needed_nonlinear is not None and (nonlinear or not needed_nonlinear):
            self.skipped = False
            return True
        proved = self._unsat(pc, conds, nonlinear)
        if proved:
            self._proved[key] = nonlinear
            self._keep.append((tuple(pc), conds))
        return proved

    def _unsat(self, pc, conds, nonlinear: bool) -> bool:
        self.skipped = False
        if all(linear(c) for c in conds):
            terms = [self.translate(c) for c in pc]
            if self._check("QF_LIA", terms, conds):
                return True
            # A check (not a branch) the plain facts leave open: once more with the products the
            # path's equalities relate, which cost every query that carries them.
            if nonlinear and self._check("QF_LIA", terms, conds, path=True):
                return True
            if not nonlinear or (not self.skipped and not self._mentions_product(conds)):
                return False
        elif not nonlinear:
            return False
        return self._check("QF_NIA", [self.translate(c, nonlinear=True) for c in pc] + self.definitions, conds)

    def facts(self, terms, path: bool = False) -> list | None:
        """The bounds, envelopes and order lemmas about the variables ``terms`` mention (and, for a
        product, about its factors): the whole instance's facts would make every query pay for
        every kernel analysed before it. With ``path``, also the facts of ``_path_products``, or
        None when there are none."""
        # Ordered containers throughout: the facts' order steers z3's search, and a verdict or a
        # witness must not depend on Python's per-process string hashing.
        names: dict[str, None] = {}
        todo: list[str] = []
        for t in terms:
            for n in self._names(t):
                if n not in names:
                    names[n] = None
                    todo.append(n)
        out: list = []
        self._expand(todo, names, out)
        # Products the path makes equal to the ones named (out.size(0) * out.size(1) and the
        # launcher's mn * groups) join the query with their own facts.
        if path:
            equal, partners = self._path_products(terms, names)
            if not equal:
                return None
        else:
            equal, partners = [], []
        out += equal
        todo = [n for n in partners if n not in names]
        names.update(dict.fromkeys(todo))
        self._expand(todo, names, out)
        for n in list(names):
            for q, lemma in self.orders.get(n, ()):
                if q in names:
                    out.append(lemma)
                    for m in self._names(lemma):
                        if m not in names and m in self.bounds:
                            names[m] = None
                            out.append(self.bounds[m])
        return out

    def _expand(self, todo: list, names: dict, out: list) -> None:
        """Bounds and envelopes of the names in ``todo`` and of every name the envelopes bring."""
        i = 0
        while i < len(todo):
            n = todo[i]
            i += 1
            b = self.bounds.get(n)
            if b is not None:
                out.append(b)
            env = self.envelopes.get(n)
            if env is not None:
                out.append(env)
                for m in self._names(env):
                    if m not in names:
                        names[m] = None
                        todo.append(m)

    def _path_products(self, terms, names: dict) -> tuple[list, list]:
        """Facts about products from the equalities the terms assert about their factors, with
        every factor put in its class's representative (``_classes``):
        - a factor fixed to a constant c (a dispatch that picked group_size == 128 after
          hidden / group_size was taken) makes the product c times the other factor;
        - products whose factors are now the same are equal, and products that now share a
          factor are ordered as their other factors are (``_order_lemmas``): the launcher checked
          out.size(0) == mn, so out.size(0) * (out.size(1) - 1) bounds mn * group.
        Linear facts, true on the path, that envelopes built on each factor's whole range cannot
        give. Returns the facts and the products they bring into the query."""
        equal, signature, touched, over = self._equalities(terms, names)
        if not equal:
            return [], []
        # The products over a term of an equality, beside the ones named: where a named one's
        # partner is.
        candidates = dict.fromkeys(n for n in names if n in self._factors)
        for term_id in over:
            candidates.update(dict.fromkeys(name for _, _, name in self._by_factor.get(term_id, ())))
        out, same, sharing, partners = [], {}, {}, {}
        for n in candidates:
            (x, xl, _), (y, yl, _) = self._factors[n]
            xs, ys = (self._substituted(f, equal, signature, touched) for f in (x, y))
            changed = xs is not x or ys is not y
            if changed and (z3.is_int_value(xs) or z3.is_int_value(ys)):
                if n in names:
                    out.append(z3.Int(n) == xs * ys)
                continue
            if changed and n in names and (p := self._over_quotient(n, xs, ys)) is not None:
                # rows * k with k a multiple of 128 is 128 * (rows * (k / 128)): the product over
                # k / 128, ordered against the kernel's row * (k / 128), joins the query.
                out.append(z3.Int(n) == p[0] * p[1])
                partners[str(p[1])] = None
            same.setdefault(tuple(sorted((xs.get_id(), ys.get_id()))), []).append(n)
            for f, f_lo, other in ((xs, xl, ys), (ys, yl, xs)):
                if f_lo >= 0:
                    sharing.setdefault(f.get_id(), []).append((n, f, other, changed))
        for members in same.values():
            if len(members) > 1 and any(m in names for m in members):
                out += [z3.Int(a) == z3.Int(b) for a, b in zip(members, members[1:])]
                partners.update(dict.fromkeys(m for m in members if m not in names))
        for group in sharing.values():
            for i, (p, c, op, p_changed) in enumerate(group):
                for q, _, oq, q_changed in group[i + 1:]:
                    if (p_changed or q_changed) and (p in names or q in names) and not op.eq(oq):
                        key = (p, q, op.get_id(), oq.get_id(), c.get_id())
                        lemma = self._path_orders.get(key)
                        if lemma is None:
                            lemma = self._path_orders[key] = _ordered(z3.Int(p), op, z3.Int(q), oq, c)
                        out.append(lemma)
                        partners.update(dict.fromkeys(m for m in (p, q) if m not in names))
        return out, list(partners)

    def _over_quotient(self, n: str, xs: z3.ExprRef, ys: z3.ExprRef) -> tuple | None:
        """(c, q * other) when a factor of product n is c * q on the path (``_multiples``) and
        non-negative: n is c times that product."""
        (_, xl, xu), (_, yl, yu) = self._factors[n]
        for f, fl, fu, other, ol, ou in ((xs, xl, xu, ys, yl, yu), (ys, yl, yu, xs, xl, xu)):
            if fl < 0 or not (z3.is_mul(f) and f.num_args() == 2 and z3.is_int_value(f.arg(0))):
                continue
            c = f.arg(0).as_long()
            if c > 1:
                return c, self.product(f.arg(1), other, -(-fl // c), fu // c, ol, ou)
        return None

    def _substituted(self, f: z3.ExprRef, equal: list, signature: tuple, touched: set) -> z3.ExprRef:
        """f with the equalities' terms put in their representatives. Queries along a path ask with
        the same equalities over and over: the results are kept per set of equalities."""
        if touched.isdisjoint(self._names(f)):
            return f  # mentions no symbol of an equated term
        key = (signature, f.get_id())
        hit = self._substitutions.get(key)
        if hit is None:
            hit = z3.simplify(z3.substitute(f, *equal))
            self._substitutions[key] = hit = f if hit.eq(f) else hit
            self._keep.append(f)
        return hit

    def _equations(self, t: z3.BoolRef) -> tuple:
        """What a term asserts about integers being equal, through conjunctions and double
        negations: ("eq", a, b) with both sides simplified, ("in", x, values) for a disjunction of
        x == constant, ("ne", x, value) for x != constant. Kept per term, as the path's terms recur
        in every query along it."""
        hit = self._sides_of.get(id(t))  # t is kept alive below: its id stays its own
        if hit is not None:
            return hit
        out, stack = [], [t]
        while stack:
            u = stack.pop()
            if z3.is_not(u) and z3.is_not(u.arg(0)):
                stack.append(u.arg(0).arg(0))
            elif z3.is_and(u):
                stack.extend(u.children())
            elif z3.is_eq(u) and z3.is_int(u.arg(0)):
                out.append(("eq",) + tuple(z3.simplify(x) for x in u.children()))
            elif z3.is_or(u):
                pins = [_pin(c) for c in u.children()]
                if pins and all(pins) and len({x.get_id() for x, _ in pins}) == 1:
                    out.append(("in", pins[0][0], frozenset(v for _, v in pins)))
            elif z3.is_not(u) and (pin := _pin(u.arg(0))):
                out.append(("ne",) + pin)
        self._keep.append(t)
        self._sides_of[id(t)] = hit = tuple(out)
        return hit

    def _equalities(self, terms, names: dict) -> tuple:
        """The substitution pairs of ``_classes`` with what ``_path_products`` derives from them:
        a signature, the symbols of the equated terms, the ids of the equated terms. The queries of
        a path share them: kept per set of terms that assert an equality."""
        bearing = tuple(id(t) for t in terms if self._equations(t))
        key = (bearing, tuple(n for n in names if n in self._quotients))
        hit = self._classes_of.get(key)
        if hit is None:
            equal = self._classes(terms, names) if bearing else []
            hit = (equal, tuple((a.get_id(), b.get_id()) for a, b in equal),
                   {n for a, _ in equal for n in self._names(a)},
                   list(dict.fromkeys(t.get_id() for pair in equal for t in pair)))
            self._classes_of[key] = hit
        return hit

    def _classes(self, terms, names: dict) -> list:
        """Substitution pairs that put every term the terms' conjunctions set equal to another
        into one representative per class of equal terms: a constant where the class has one,
        else a size symbol, else its first term (out.size(0) == mn and out.size(0) == round_up(mn, 4)
        make all three one). A named quotient whose divisor the path fixes to a constant c is
        its dividend / c (hidden / group_size, taken before the dispatch fixed group_size)."""
        parent = Partition()  # of term ids
        term_of: dict[int, z3.ExprRef] = {}
        find = parent.find

        def join(a: z3.ExprRef, b: z3.ExprRef) -> None:
            for x in (a, b):
                term_of.setdefault(x.get_id(), x)
            parent.join(a.get_id(), b.get_id())

        domains: dict[int, set] = {}
        excluded: dict[int, set] = {}
        symbol_of: dict[int, z3.ExprRef] = {}
        for t in terms:
            for kind, a, b in self._equations(t):
                if kind == "eq":
                    join(a, b)
                elif kind == "in":
                    symbol_of[a.get_id()] = a
                    domains[a.get_id()] = domains.get(a.get_id(), set(b)) & b
                else:
                    excluded.setdefault(a.get_id(), set()).add(b)
        for i, values in domains.items():
            # A dispatch's else branch: group_size is 64 or 128, and not 64.
            left = values - excluded.get(i, set())
            if len(left) == 1:
                join(symbol_of[i], z3.IntVal(left.pop()))
        if not parent:
            return []
        constant = {find(i): term_of[i] for i in parent if z3.is_int_value(term_of[i])}
        for n in names:
            q = self._quotients.get(n)
            if q is not None and q[1].get_id() in parent:
                c = constant.get(find(q[1].get_id()))
                if c is not None and c.as_long() > 0:
                    join(z3.Int(n), z3.simplify(q[0] / c))
        classes: dict[int, list] = {}
        for i in parent:
            classes.setdefault(find(i), []).append(term_of[i])
        out = []
        for members in classes.values():
            rep = min(members, key=lambda m: (not z3.is_int_value(m), not _symbol(m), m.get_id()))
            out += [(m, rep) for m in members if not m.eq(rep)]
        return self._multiples(terms, out)

    def _multiples(self, terms, pairs: list) -> list:
        """``pairs`` with every term the path proves a multiple of a constant c > 1 (k % 128 == 0,
        or k % group_size == 0 once group_size is 128) put as c * (k / c), its class with it: a
        product over k is then c times a product over k / c, the factor the kernel multiplies by
        (row * groups * 128 against rows * k)."""
        scaled: dict[int, tuple] = {}
        for t in terms:
            for kind, *sides in self._equations(t):
                if kind != "eq":
                    continue
                for a, b in (sides, sides[::-1]):
                    if not (z3.is_int_value(b) and b.as_long() == 0 and z3.is_app_of(a, z3.Z3_OP_MOD)):
                        continue
                    # The divisor in its representative (group_size is 128); the remainder itself is
                    # in the class of 0.
                    x, c = (z3.simplify(z3.substitute(u, *pairs)) if pairs else u for u in a.children())
                    if z3.is_int_value(c) and c.as_long() > 1 and not z3.is_int_value(x):
                        scaled.setdefault(x.get_id(), (x, z3.simplify(c * (x / c))))
        if not scaled:
            return pairs
        out = [(m, scaled[rep.get_id()][1] if rep.get_id() in scaled else rep) for m, rep in pairs]
        equated = {m.get_id() for m, _ in pairs}
        return out + [(x, multiple) for i, (x, multiple) in scaled.items() if i not in equated]

    def _names(self, t: z3.ExprRef) -> tuple:
        k = t.get_id()
        hit = self._vars_of.get(k)
        if hit is not None:
            return hit
        res = tuple(dict.fromkeys(v.decl().name() for v in constants(t, left_to_right=True)))
        self._keep.append(t)
        self._vars_of[k] = res
        return res

    def _mentions_product(self, conds) -> bool:
        if not self.product_names:
            return False
        stack, seen = list(conds), set()
        while stack:
            t = stack.pop()
            if t.get_id() in seen:
                continue
            seen.add(t.get_id())
            if z3.is_const(t) and str(t) in self.product_names:
                return True
            stack.extend(t.children())
        return False

    def _check(self, logic: str, pc_terms, conds, path: bool = False) -> bool:
        terms = [t for t in pc_terms if t.get_id() != self._true_id]
        facts = self.facts(terms + list(conds), path)
        if facts is None:
            return False  # nothing more to know than the plain query knew
        return self.refutes(logic, terms + list(conds) + facts)

    def refutes(self, logic: str, terms: list) -> bool:
        """Whether ``terms``, integer terms with their facts already in, are unsatisfiable."""
        query = conjunction(terms)
        self.last_model = None  # of the last question found satisfiable (a witness guess)
        for m in self._models:
            if z3.is_true(m.eval(query, model_completion=True)):
                self.witnessed += 1
                self.last_model = m
                return False
        if logic == "QF_NIA":
            # z3's core solver with its nonlinear module decides most of these questions in a few
            # thousand units where the QF_NIA tactic takes tens of thousands, and some (a product
            # of sizes bounded through a quotient) in 12 thousand where the tactic needs 4.6
            # million; where it gives up (it is the less complete), the tactic is asked.
            r, s = self._ask(z3.Tactic("smt").solver(), query, NONLINEAR_FIRST_RLIMIT)
            if r == z3.unknown:
                r, s = self._ask(z3.SolverFor(logic), query, self.nonlinear_rlimit)
        else:
            r, s = self._ask(z3.SolverFor(logic), query, self.rlimit)
        if r == z3.unsat:
            self.proved += 1
            return True
        if r == z3.sat:
            self._models.insert(0, s.model())
            del self._models[MODELS_KEPT:]
            self.last_model = self._models[0]
        return False

    def _ask(self, s, query, rlimit: int):
        s.set("timeout", self.timeout_ms)
        s.set("rlimit", rlimit)
        # One conjunction: a single call into z3 instead of one per term.
        s.add(query)
        t0 = time.perf_counter()
        r = s.check()
        work.note_query(s)
        self.seconds += time.perf_counter() - t0
        self.queries += 1
        return r, s

    def model_values(self, pc, cond: z3.BoolRef, names: list[str]) -> dict | None:
        """Values of ``names`` in a model of pc ∧ cond in nonlinear integer arithmetic (products
        exact), or None. A guess for a witness, which the bit-vectors then confirm."""
        s = z3.SolverFor("QF_NIA")
        s.set("timeout", self.timeout_ms)
        s.set("rlimit", self.rlimit)
        for c in pc:
            t = self.translate(c, nonlinear=True)
            if not z3.is_true(t):
                s.add(t)
        s.add(cond, *self.definitions)
        s.add(*self.facts(list(s.assertions())))
        t0 = time.perf_counter()
        r = s.check()
        work.note_query(s)
        self.seconds += time.perf_counter() - t0
        self.queries += 1
        if r != z3.sat:
            return None
        m = s.model()
        out = {}
        for name in names:
            v = m.eval(z3.Int(name), model_completion=True)
            if z3.is_int_value(v):
                out[name] = v.as_long()
        return out

    def minimize(self, pc, cond: z3.BoolRef, names: list[str]) -> dict | None:
        """The lexicographically smallest values of ``names`` for which pc ∧ cond holds in integers."""
        opt = z3.Optimize()
        opt.set("timeout", self.timeout_ms)
        opt.set("rlimit", self.rlimit)
        for c in pc:
            t = self.translate(c)
            if not z3.is_true(t):
                opt.add(t)
        opt.add(cond)
        opt.add(*self.facts(list(opt.assertions())))
        for name in names:
            opt.minimize(z3.Int(name))
        t0 = time.perf_counter()
        r = opt.check()
        work.note_query(opt)
        self.seconds += time.perf_counter() - t0
        self.queries += 1
        if r != z3.sat:
            return None
        m = opt.model()
        out = {}
        for name in names:
            v = m.eval(z3.Int(name), model_completion=True)
            if z3.is_int_value(v):
                out[name] = v.as_long()
        return out


def _ordered(p, other_p, q, other_q, c) -> z3.BoolRef:
    """p = c * other_p and q = c * other_q, c >= 0: ordered as the other factors are."""
    return z3.And(z3.Implies(other_p <= other_q, p <= q), z3.Implies(other_q <= other_p, q <= p),
                  z3.Implies(other_p + 1 <= other_q, p + c <= q), z3.Implies(other_q + 1 <= other_p, q + c <= p))


def _pin(t: z3.ExprRef) -> tuple | None:
    """(x, c) when t is x == c for a symbol x and an integer constant c."""
    if not (z3.is_eq(t) and z3.is_int(t.arg(0))):
        return None
    for x, c in ((t.arg(0), t.arg(1)), (t.arg(1), t.arg(0))):
        if _symbol(x) and z3.is_int_value(c):
            return x, c.as_long()
    return None


def _symbol(t: z3.ExprRef) -> bool:
    return z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED


def conjunction(terms: list) -> z3.BoolRef:
    """And(terms) built with one call into z3 (z3py's And checks every argument in Python)."""
    if not terms:
        return z3.BoolVal(True)
    if len(terms) == 1:
        return terms[0]
    ctx = terms[0].ctx
    arr = (z3.Ast * len(terms))(*[t.as_ast() for t in terms])
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(terms), arr), ctx)


_LINEAR: dict[int, tuple] = {}  # term id -> (term, verdict); the term is kept so its id stays its own


def linear(term: z3.ExprRef) -> bool:
    """No product of two non-constants, no division or remainder by a non-constant (memoised:
    the same registered conditions are asked about at every query of a path)."""
    hit = _LINEAR.get(term.get_id())
    if hit is not None:
        return hit[1]
    if len(_LINEAR) > 500_000:
        _LINEAR.clear()
    return _linear(term)


def _linear(term: z3.ExprRef) -> bool:
    # Post-order over the DAG, every sub-term's verdict memoised in _LINEAR: shared sub-terms
    # (the same index expression in many conditions) are walked once.
    stack = [(term, False)]
    while stack:
        t, expanded = stack.pop()
        i = t.get_id()
        if i in _LINEAR:
            continue
        if not z3.is_app(t):
            _LINEAR[i] = (t, True)
            continue
        children = t.children()
        if not expanded:
            stack.append((t, True))
            stack.extend((c, False) for c in children if c.get_id() not in _LINEAR)
            continue
        k = t.decl().kind()
        ok = all(_LINEAR[c.get_id()][1] for c in children)
        if ok and k == z3.Z3_OP_MUL and sum(1 for c in children if not _constant(c)) > 1:
            ok = False
        if ok and k in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD, z3.Z3_OP_DIV, z3.Z3_OP_REM) and not _constant(t.arg(1)):
            ok = False
        _LINEAR[i] = (t, ok)
    return _LINEAR[term.get_id()][1]


_CONSTANT_OPS = (z3.Z3_OP_MUL, z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_UMINUS, z3.Z3_OP_IDIV, z3.Z3_OP_MOD)


def _constant(t: z3.ExprRef) -> bool:
    if z3.is_int_value(t) or z3.is_rational_value(t):
        return True
    return z3.is_app(t) and t.num_args() > 0 and t.decl().kind() in _CONSTANT_OPS and all(_constant(c) for c in t.children())




CURRENT: Lia = Lia()


def use(lia: Lia) -> None:
    global CURRENT
    CURRENT = lia
