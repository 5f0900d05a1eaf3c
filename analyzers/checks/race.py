"""Data races within one launch: on shared memory, two threads of one block, in one barrier
interval, access overlapping bytes of a ``__shared__`` object, at least one of them writing, not
both atomically; on global memory, the same for two threads of one block, and for two threads of
different blocks at any time (no block barrier orders blocks), or, in a cooperative kernel, between
the same two grid barriers: each access carries its grid epoch, the grid barriers passed, which
in a loop moves with the iteration (``engine/threads.py``).

The engine runs one symbolic thread; this check keeps its shared-memory accesses with their path
condition and barrier epoch (engine/threads.py), and when the kernel has run asks, for each pair of
accesses (an access with itself included: two threads at the same statement), whether a second
thread of the same block, renamed apart, reaches the other access in the same interval at an
overlapping byte. Threads of one warp are ordered also by ``__syncwarp``. Two writes of the same
value (every thread storing one constant) are not reported (a benign race, as GPUVerify does).

A race that rests on a havocked loop value is the summary's imprecision (``imprecise-loop``); one
that rests on a value the engine does not compute (another lane's, shared memory contents) is
``needs-values``; a pair the solver cannot decide is ``solver-unknown``: never a finding. An index
tensor may hold any values its binding's range allows, repeated ones too (a histogram's bins): a
race that needs two equal elements is a finding, whose message says so, unless the binding states
the tensor `distinct` (a slot mapping: one cache slot per token). Two atomicAdds of one statement
by two threads return different values (each sees the other's addition or is seen by it), so
slots taken from a counter never collide. Distinct tensors and buffers are assumed not to alias.

An atomic's scope bounds whom it is atomic with: a block-scope one (``atomicAdd_block``,
``cuda::atomic_ref<T, cuda::thread_scope_block>``) only with threads of its block, so two threads of
different blocks reaching the same global bytes through one race. Those accesses are paired across
blocks even where global-memory races are not checked otherwise: a narrowed scope is a claim that
no other block touches the bytes, which the check verifies.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import z3

from ..engine.solver import SolverUnknown
from ..engine.context import UNTRACKED, _vars
from ..engine.loops import LoopRuns
from ..engine.terms import name as const_name
from ..engine.values import EXTENT_ONLY
from ..engine.threads import PRIME, SecondThread, second_thread_witness, small_model, thread_text, warp_of
from ..findings import STATIC_ONLY_BLOCK_SCOPE, Finding, Fix
from .base import Check, depends_on_summary, span_key

SHARED = ("shared", "dynamic_shared")
RACY = SHARED + ("global",)
MAX_PLACES = 64  # statements accessing shared memory in one launch (and as many accessing global memory)
MAX_ALTERNATIVES = 512  # accesses of one statement (paths, unrolled iterations) kept for pairing


@dataclass
class Logged:
    ev: object  # events.Access
    pc: tuple
    epoch: tuple


@dataclass
class Place:
    """Every access one statement made (on several paths, in unrolled iterations): one pair query
    covers them all, a selector choosing which one each thread made."""

    ev: object  # the first access: its span, region, kind
    alts: list
    _terms: tuple | None = None
    selector: object = None  # the z3 selector when there are several accesses

    def one(self, i: int) -> "Place":
        return Place(self.alts[i].ev, [self.alts[i]])

    def terms(self, ctx):
        """(pc, offset, (block, warp) epoch, guard, stored value) of "one of the accesses"."""
        if self._terms is not None:
            return self._terms
        alts = self.alts
        if len(alts) == 1:
            a = alts[0]
            self._terms = (a.pc, a.ev.off.bv, a.epoch, a.ev.guard, value_key(a.ev.value))
            return self._terms
        first = alts[0].pc
        n = _shared_prefix([x.pc for x in alts])
        sel = self.selector = z3.BitVec(ctx.fresh_name("which_access"), 16)
        ctx.symbol(f"which access of `{self.ev.span.text}`", sel, "choice", signed=False)
        # Accesses on one path (an unrolled loop's iterations) share their path's condition: it is
        # stated once for the run of selector values that stands for them.
        rest, i = [], 0
        while i < len(alts):
            j = i
            while j + 1 < len(alts) and alts[j + 1].pc is alts[i].pc:
                j += 1
            suffix = alts[i].pc[n:]
            if suffix:
                which = sel == i if i == j else z3.And(z3.UGE(sel, i), z3.ULE(sel, j))
                rest.append(z3.Implies(which, z3.And(*suffix)))
            i = j + 1
        pc = first[:n] + (z3.ULT(sel, len(alts)), *rest)

        def choose(values):
            out = values[-1]
            for k in range(len(values) - 2, -1, -1):
                if not values[k].eq(out):
                    out = z3.If(sel == k, values[k], out)
            return out

        off = choose([x.ev.off.bv for x in alts])
        epoch = tuple(choose([x.epoch[i] for x in alts]) for i in range(len(alts[0].epoch)))
        guard = None
        if any(x.ev.guard is not None for x in alts):
            guard = choose([x.ev.guard if x.ev.guard is not None else z3.BoolVal(True) for x in alts])
        values = [value_key(x.ev.value) for x in alts]
        value = choose(values) if all(v is not None for v in values) else None
        self._terms = (pc, off, epoch, guard, value)
        return self._terms

    def chosen(self, model, rename=None) -> "Place":
        """The one access a model of a pair query picked."""
        if self.selector is None:
            return self
        sel = self.selector if rename is None else rename(self.selector)
        v = model.eval(sel, model_completion=True)
        i = v.as_long() if z3.is_bv_value(v) else 0
        return self.one(min(i, len(self.alts) - 1))


def _concrete_epochs(place: Place) -> set | None:
    """The (block, warp, grid) epochs of a statement's accesses, when every one is a constant."""
    out = set()
    for x in place.alts:
        pair = tuple(z3.simplify(e) for e in x.epoch)
        if not all(z3.is_bv_value(e) for e in pair):
            return None
        out.add(tuple(e.as_long() for e in pair))
    return out


def _apart(a: Place, b: Place) -> bool:
    """Two statements always a barrier apart: no block epoch and no warp epoch in common (the
    accesses of a tree reduction's steps). Decided on constants, without a query."""
    ea, eb = _concrete_epochs(a), _concrete_epochs(b)
    if ea is None or eb is None:
        return False
    return not ({e[0] for e in ea} & {e[0] for e in eb}) and not ({e[1] for e in ea} & {e[1] for e in eb})


OWNER_BITS = 6 * 32  # a block's and a thread's indices: whose copy of shared or local memory


def value_key(v) -> z3.BitVecRef | None:
    """A term equal for two stored values when they are the same value: an integer's bits (tagged
    by width), a float's source (the same memory bytes, the same literal, the same integer
    converted); None when nothing is known. Distinct tags keep kinds apart. The same offset of
    shared memory is the same bytes only within one block (of a local array, within one thread):
    such a source carries the block's (and thread's) indices above the 64 bits of the rest."""
    key = _value_key(v)
    if key is None:
        return None
    owner = v.source[3] if isinstance(getattr(v, "source", None), tuple) and v.source[0] == "mem" \
        and len(v.source) > 3 else ()
    if not owner:
        return z3.ZeroExt(OWNER_BITS, key)
    parts = [z3.Extract(31, 0, t) if t.size() >= 32 else z3.ZeroExt(32 - t.size(), t) for t in owner]
    parts += [z3.BitVecVal(0, 32)] * (OWNER_BITS // 32 - len(parts))
    return z3.Concat(*parts, key)


def _value_key(v) -> z3.BitVecRef | None:
    from ..engine.values import FloatV, IntV
    if isinstance(v, IntV):
        return z3.BitVecVal(v.ty.bits << 56, 64) + z3.ZeroExt(64 - v.ty.bits, v.bv)
    if isinstance(v, FloatV) and v.source is not None:
        kind = v.source[0]
        if kind == "mem":
            return z3.BitVecVal((0xA0 | (v.source[1] & 0xF)) << 56 | (v.source[1] >> 4) << 48, 64) + v.source[2]
        if kind == "lit":
            # A digest, not hash(): terms must not depend on Python's per-process string hashing.
            digest = int.from_bytes(hashlib.blake2b(v.source[1].encode(), digest_size=6).digest(), "big")
            return z3.BitVecVal(0xB0 << 56 | digest, 64)
        if kind == "int":
            bits = v.source[1]
            return z3.BitVecVal(0xC0 << 56, 64) + z3.ZeroExt(64 - bits.size(), bits)
    return None


def global_races(ctx) -> bool:
    """Whether races on global memory are checked: as the options say, else for ops with a binding
    (zero-config knows no index tensor's contents and no stride, so a race there would rest on them)
    and for self-contained ones (a program: its buffers are its own allocations, and what it reads
    from a file or the device is a value a finding may not rest on)."""
    on = ctx.options.global_races
    return (not ctx.zero_config or ctx.self_contained) if on is None else on


class RaceCheck(Check):
    id = "race"

    def __init__(self):
        self.places: dict = {}
        self.dropped = 0

    def on_access(self, ctx, st, ev) -> None:
        if st.epoch is None or ctx.threads is None or ev.region.kind not in RACY or ev.region.note == EXTENT_ONLY:
            return
        if ev.region.kind == "global" and not global_races(ctx) and ev.scope != "block":
            return
        key = (span_key(ev.span), ev.write, ev.atomic, ev.region.id)
        place = self.places.get(key)
        if place is None:
            shared = ev.region.kind in SHARED  # each kind of memory has its own budget of statements
            if sum((p.ev.region.kind in SHARED) == shared for p in self.places.values()) >= MAX_PLACES:
                self.dropped += 1
                return
            place = self.places[key] = Place(ev, [])
        if len(place.alts) >= MAX_ALTERNATIVES:
            self.dropped += 1
            return
        place.alts.append(Logged(ev, st.pc, st.epoch))

    def on_kernel_end(self, ctx, threads) -> None:
        places, self.places = list(self.places.values()), {}
        self.accesses = IntegerAccesses(ctx)
        dropped, self.dropped = self.dropped, 0
        if dropped:
            ctx.stuck("path-explosion", f"{dropped} shared- or global-memory accesses of the kernel past the first "
                      f"{MAX_ALTERNATIVES} of a statement (or {MAX_PLACES} statements) were not checked for races", None)
        reported: set = set()
        for i, a in enumerate(places):
            for b in places[i:]:
                if not (a.ev.write or b.ev.write) or a.ev.region is not b.ev.region:
                    continue
                key = ("race", ctx.kernel, *sorted((span_key(a.ev.span), span_key(b.ev.span))))
                if key in reported or key in ctx.reported:
                    continue
                # Global memory: two threads of one block, then two of different blocks.
                for cross in (False, True) if a.ev.region.kind == "global" else (False,):
                    if _atomic_for_both(a.ev, b.ev, cross):
                        continue
                    if self._pair(ctx, threads, a, b, key, cross):
                        reported.add(key)
                        break

    def _pair(self, ctx, threads, a: Place, b: Place, key, cross: bool = False) -> bool:
        if not cross and _apart(a, b):
            return False
        if a.ev.region.kind == "global" and _index_error_at(ctx, a, b):
            # An index past its row (`i <= d`) reaches the next row's elements: the race is the
            # same index error the oob or overflow finding at the access already reports.
            return False
        found = self._query(ctx, threads, a, b, cross)
        if found is None:
            return False
        if found == "unknown":
            return True
        model, rename, cond, constraints = found
        if a.selector is not None or b.selector is not None:
            # The two accesses the model picked: their own condition, which the model satisfies
            # (the selectors chose them), judged and shown without the other accesses' symbols.
            a, b = a.chosen(model), b.chosen(model, rename)
            rename, cond, constraints = self._condition(ctx, threads, a, b, cross)
        ctx.mark(key)
        ea, eb = a.ev, b.ev
        summary = depends_on_summary(ctx, cond, model)
        if summary is not None:
            ctx.stuck("imprecise-loop", f"a possible race between `{ea.span.text}` and `{eb.span.text}` on "
                      f"`{ea.region.name}` depends on {summary}, which the loop summary cannot bound", eb.span)
            return True
        why = ctx.value_dependence(ctx.loads_in(cond)) or _reached_through_untracked(ctx, threads, a, b)
        if why is not None:
            ctx.stuck("needs-values", f"a possible race between `{ea.span.text}` and `{eb.span.text}` on "
                      f"`{ea.region.name}` {why}{_needs_repeats(ctx, rename, cond, model)}", eb.span)
            return True
        # A small witness only for a finding that stands (minimising costs a few queries).
        prefer = None if cross else [warp_of(threads) != warp_of(threads, rename)]
        ctx.report(_finding(ctx, threads, a, b, rename, small_model(ctx, threads, constraints, model, prefer), cond,
                            cross))
        return True

    def _query(self, ctx, threads, a: Place, b: Place, cross: bool = False):
        """A model of two threads of one block making accesses of ``a`` and ``b`` that race: (model,
        the second thread's renaming, the pair's condition, the whole query); None when there is
        none; "unknown" when the solver could not tell (recorded as inconclusive)."""
        hint = None
        if a.ev.region.kind == "global":
            apart, hint, as_runs = _apart_in_integers(ctx, threads, a, b, cross, self.accesses)
            if apart:
                return None
        rename, cond, constraints = self._condition(ctx, threads, a, b, cross)
        if hint is not None:
            # The split pair's integer model as a guess: with both threads' indices pinned, the
            # bit-vector question is nearly concrete (and more so with the accesses each thread
            # makes at the model's values chosen). A model of it is one of the whole question.
            pins = _pins(hint, constraints, _index_names(threads))
            for choice in (*self.accesses.choices(a, b, hint, rename, as_runs), []):
                ctx.tick()
                try:
                    model = ctx.solver.model(constraints + pins + choice)
                except SolverUnknown:
                    model = None
                if model is not None:
                    return model, rename, cond, constraints
        ctx.tick()
        try:
            model = ctx.solver.model(constraints)
        except SolverUnknown as exc:
            ctx.stuck("solver-unknown", f"whether `{a.ev.span.text}` and `{b.ev.span.text}` race could not be "
                      f"decided ({exc.reason})", b.ev.span)
            return "unknown"
        if model is None:
            return None
        return model, rename, cond, constraints

    @staticmethod
    def _condition(ctx, threads, a: Place, b: Place, cross: bool = False):
        """(the second thread's renaming, the pair's race condition, the whole query). Renaming is
        by name, so two conditions built for one pair speak of the same second thread. ``cross``:
        the second thread is in another block (global memory), which no barrier orders."""
        rename = SecondThread(ctx, threads, same_block=not cross)
        ea, eb = a.ev, b.ev
        pc_a, off_a, epoch_a, guard_a, value_a = a.terms(ctx)
        pc_b, off_b, epoch_b, guard_b, value_b = b.terms(ctx)
        off_b = rename(off_b)
        overlap = z3.And(off_a < off_b + eb.size, off_b < off_a + ea.size)
        if ea.region.kind == "global":
            # Accesses inside the tensor: one past its end is the oob check's finding, not a race.
            size = ea.region.size
            overlap = z3.And(overlap, off_a >= 0, off_a + ea.size <= size, off_b >= 0, off_b + eb.size <= size)
        if cross:
            parts = [overlap, z3.Or(*[v.bv != rename(v.bv) for v in threads.thread.bid.fields.values()])]
            if threads.grid_barriers:
                # A grid barrier orders blocks: two threads of different blocks race only between
                # the same two grid barriers (every thread passes the same ones, which the
                # barrier-divergence check asks of a grid barrier).
                parts.append(epoch_a[2] == rename(epoch_b[2]))
        else:
            interval = epoch_a[0] == rename(epoch_b[0])
            if threads.warp_barriers:
                # Threads of one warp are also ordered by __syncwarp (without one, the two epochs agree).
                same_warp = warp_of(threads) == warp_of(threads, rename)
                interval = z3.If(same_warp, epoch_a[1] == rename(epoch_b[1]), interval)
            parts = [overlap, interval, threads.other_thread(rename)]
        if guard_a is not None:
            parts.append(guard_a)
        if guard_b is not None:
            parts.append(rename(guard_b))
        if ea.write and eb.write and value_a is not None and value_b is not None:
            parts.append(value_a != rename(value_b))  # the same value written by both: benign
        cond = z3.And(*parts)
        constraints = list(pc_a) + [rename(t) for t in pc_b] + [cond]
        # A nondecreasing tensor's order bounds the segments the two threads' paths pick (the
        # loads sit in the path conditions more often than in the race's own condition).
        return rename, cond, constraints + rename.equal_loads([cond]) + rename.distinct_loads(
            [cond], threads.distinct) + rename.distinct_orders([cond]) + rename.ordered_loads(constraints)


# Values one thread gets from what the others hold (a collective's output, another lane's value,
# an atomic's old value): the engine takes each thread's as independent, which real runs are not.
# A thread's own untracked values (a float test on its input, an unknown function of it) are not
# among them: inputs can make each thread's come out either way.
SHARED_OUTCOMES = ("collective", "lane", "atomic")


def _reached_through_untracked(ctx, threads, a: "Place", b: "Place") -> str | None:
    """Why a race's two threads may not both reach their accesses in a real run: a branch on the
    way decides on a value the engine does not compute (a collective's output, another lane's
    value), which the witness would choose for both threads at once. cub's discontinuity flags
    let only a segment's first element store its id: two threads storing one id is a pair no real
    run makes. The race then rests on that value."""
    decisions = [t for p in (a, b) for t in p.terms(ctx)[0] if t.get_id() in threads.decisions]
    for kind, name, _ in ctx.loads_in(z3.And(*decisions)) if decisions else []:
        if kind in SHARED_OUTCOMES:
            return f"is reached through a branch on {UNTRACKED[kind]} ({name}), which the engine does not compute"
    return None


def _atomic_for_both(a, b, cross: bool) -> bool:
    """Whether two accesses are atomic with respect to each other: both atomics, and for threads
    of different blocks, neither of block scope."""
    return a.atomic and b.atomic and not (cross and "block" in (a.scope, b.scope))


def _needs_repeats(ctx, rename, cond, model) -> str:
    """What the race found in ``model`` rests on when it needs two elements of an index tensor to
    hold the same value (two tokens of one cache slot): said, with the binding that rules it out."""
    repeats = sorted({_load_tensor(ctx, t) for t in rename.distinct_loads([cond])
                      if z3.is_false(model.eval(t, model_completion=True))} - {None})
    if not repeats:
        return ""
    return (f". It needs two elements of {', '.join(f'`{n}`' for n in repeats)} to hold the same value: if they "
            "never do, state `distinct: true` in the binding")


def _load_tensor(ctx, fact) -> str | None:
    """The tensor a distinct_loads fact is about (its first loaded value's origin)."""
    for v in _vars(fact):
        sym = ctx.symbols.get(str(v))
        if sym is not None and sym.kind == "load" and sym.origin:
            return sym.origin[1]
    return None


def _index_error_at(ctx, a: Place, b: Place) -> bool:
    """Whether an oob, overflow or narrowing finding of this kernel is at the statement of either
    access (its line), or rests on a loop counter either access's offset moves with: `dst[i] =
    src[i]` with `i` past the row reads past `src` and writes the next row's `dst`, one index error
    (a vector loop whose count is rounded up reads past the input at one statement and writes
    the next row at another). The race is the same error, reported once; fixed, a rerun checks it."""
    lines = {(a.ev.span.file, a.ev.span.line), (b.ev.span.file, b.ev.span.line)}
    errors = [f for f in ctx.findings.values()
              if f.check in ("oob", "overflow", "narrowing") and f.kernel == ctx.kernel]
    if any(((f.access or f.location).file, (f.access or f.location).line) in lines for f in errors):
        return True
    if not errors:
        return False
    counters = set()
    for place in (a, b):
        for alt in place.alts:
            for v in _vars(alt.ev.off.bv):
                sym = ctx.symbols.get(const_name(v))
                if sym is not None and sym.kind == "loop":
                    counters.add(sym.name)
    return any(counters & f.witness.keys() for f in errors)


MAX_INTEGER_PAIRS = 16  # access pairs of two statements tried in integers before the bit-vector query


@dataclass
class IntAccess:
    """Accesses of one statement as the integer pre-check sees them: an offset (lia.py's terms) and
    a size, on a path. Accesses at offsets a constant apart (an unrolled vector's elements) are one
    range over them all, on the path they share; ``split`` keeps each one for the radix split
    (engine/radix.py: their common polynomial, and each one's path, shift and size)."""

    off: z3.ArithRef
    size: int
    pc: tuple
    split: object  # radix.Access, or None where the offset is no polynomial


def _shared_prefix(pcs: list) -> int:
    """How many leading conditions every path of ``pcs`` shares (the same terms)."""
    first, n = pcs[0], 0
    while n < len(first) and all(len(pc) > n and pc[n] is first[n] for pc in pcs):
        n += 1
    return n


def _common_conditions(pcs: list) -> tuple:
    """The conditions (the same terms) that every path of ``pcs`` holds, in the first one's order:
    what each of them implies, beyond their shared prefix where they branched and met again (an
    earlier unrolled iteration's exit on each)."""
    distinct = list({id(pc): pc for pc in pcs}.values())
    first = distinct[0]
    if len(distinct) == 1:
        return tuple(first)
    common = set.intersection(*({id(c) for c in pc} for pc in distinct[1:]))
    return tuple(c for c in first if id(c) in common)


@dataclass
class _Case:
    """An access on one side of a condition both threads share: its path with the condition."""

    pc: tuple
    ev: object


def _uniform_cases(lia, alt, off, shares, literals: dict, depth: int = 0) -> list:
    """(alt, off) as its cases on the conditions of ``If`` terms that both threads share (a flag
    argument choosing a cache layout, merged into one offset): each case's offset without the
    ``If``, its path with the condition. Two threads take the same side, so no pair mixes them.
    ``literals``: condition id -> its two sides, one object each for every access (the paths'
    shared prefix compares by identity)."""
    if depth < 2:
        for t in _ites(off):
            cond = t.arg(0)
            if cond.get_id() not in literals:
                bv = lia.source(cond)
                literals[cond.get_id()] = None if bv is None or not shares(cond) else (bv, z3.Not(bv))
            sides = literals[cond.get_id()]
            if sides is None:
                continue
            out = []
            ites = [u for u in _ites(off) if u.arg(0).eq(cond)]
            for branch, literal in zip((1, 2), sides):
                # Each If on the condition replaced by its side, the rest of the term as it was
                # (simplifying would rewrite a remainder's `x - y * q` the radix split looks for).
                case = z3.substitute(off, *[(u, u.arg(branch)) for u in ites])
                out += _uniform_cases(lia, _Case((literal,) + tuple(alt.pc), alt.ev), case, shares, literals,
                                      depth + 1)
            return out
    return [(alt, off)]


_ITES: dict = {}  # term id -> (term, its If terms): an offset is walked once, not once per pair


def _ites(t: z3.ExprRef) -> list:
    """The integer ``If`` terms inside ``t``, outermost first."""
    hit = _ITES.get(t.get_id())
    if hit is not None and hit[0].eq(t):
        return hit[1]
    out, todo, seen = [], [t], set()
    while todo:
        u = todo.pop()
        if u.get_id() in seen:
            continue
        seen.add(u.get_id())
        if z3.is_app_of(u, z3.Z3_OP_ITE) and u.sort() == z3.IntSort():
            out.append(u)
        todo.extend(u.children())
    if len(_ITES) > 50_000:
        _ITES.clear()
    _ITES[t.get_id()] = (t, out)
    return out


def _integer_accesses(polys, place: Place, shares, literals: dict, merge: bool = False,
                      runs=None) -> list[IntAccess]:
    """``runs``: an engine.loops.LoopRuns, to read accesses made in different runs of one
    summarised loop as accesses of one run (their offsets then differ by constants)."""
    from ..engine import ints, radix
    cases: dict = {}  # the uniform conditions' sides an access is on -> its groups
    for alt0 in place.alts:
        off0 = ints.I(alt0.ev.off)
        one = runs.one_run(alt0.pc, off0) if runs is not None else None
        if one is not None:
            alt0, off0 = Logged(alt0.ev, one[0], alt0.epoch), one[1]
        for alt, off in _uniform_cases(polys.lia, alt0, off0, shares, literals):
            poly = polys.of(off)
            key = frozenset((m, c) for m, c in poly.items() if m) if poly is not None else ("alone", id(alt))
            side = tuple(id(c) for c in alt.pc[:len(alt.pc) - len(alt0.pc)])
            cases.setdefault(side, {}).setdefault(key, []).append((alt, off, poly.get((), 0) if poly is not None else 0))
    def access(members: list, poly, off=None) -> IntAccess:
        """One range over ``members`` ((alt, offset, constant part)), their common polynomial
        ``poly`` (None: no polynomial); ``off``: the start's term (default: from ``poly``)."""
        lo = min(c for _, _, c in members)
        hi = max(c + alt.ev.size for alt, _, c in members)
        split = None if poly is None else radix.Access(poly, tuple((tuple(x.pc), k, x.ev.size) for x, _, k in members))
        if off is None:
            off = polys.term(radix.add(poly, {(): lo}))
        return IntAccess(off, hi - lo, _common_conditions([x.pc for x, _, _ in members]), split)

    out = []
    for groups in cases.values():
        progression = _progression(polys, [k for k in groups if "alone" not in k]) if merge else None
        if progression is not None:
            poly, keys = progression
            out.append(access([m for k in keys for m in groups.pop(k)], poly))
        for key, members in groups.items():
            lo = min(c for _, _, c in members)
            _, off, c = members[0]
            # The first member's own term (lia's products kept), moved to the range's start.
            out.append(access(members, None if "alone" in key else dict(key), off - c + lo if c != lo else off))
    return out


def _progression(polys, keys: list):
    """Polynomials that differ only in one monomial's coefficient (an unrolled loop's
    ``dst[i * block_size]``, ``block_size`` a size) as one: ``common + (c0 + d * J) * m``, ``J`` a
    new variable over the steps. It stands for more offsets than the accesses reach, which a proof
    may do; it keeps their pairs with another statement's one query, not one per unrolled step
    (asked only past MAX_INTEGER_PAIRS: one access per step splits more often). (poly, keys merged),
    or None."""
    if len(keys) < 2:
        return None
    for m in dict.fromkeys(m for k in keys for m, _ in k):
        commons = {frozenset((x, c) for x, c in k if x != m) for k in keys}
        if len(commons) != 1:
            continue
        cs = [dict(k).get(m, 0) for k in keys]
        c0 = min(cs)
        d = math.gcd(*(c - c0 for c in cs))
        step = polys.atom(polys.lia.fresh("step", 0, (max(cs) - c0) // d))
        poly = dict(next(iter(commons)))
        if c0:
            poly[m] = c0
        poly[tuple(sorted(m + next(iter(step))))] = d
        return poly, keys
    return None


class IntegerAccesses:
    """The integer pre-check's reading of each statement's accesses, made once per kernel for all
    the pairs it is in: as they are (attempt 0), with an unrolled loop's steps merged (1), and
    with the runs of a summarised loop read as one run (2)."""

    def __init__(self, ctx):
        from ..engine import radix
        self.polys = radix.Polynomials(ctx.lia)
        self.runs = LoopRuns(ctx)
        self.literals: dict = {}  # (cross, condition id) -> its two sides
        self.made: dict = {}
        self.offsets: dict = {}  # (place id, read as one run) -> each access's integer offset

    def choices(self, a: Place, b: Place, model, rename, as_runs: bool, limit: int = 4) -> list:
        """For statements with several accesses: up to ``limit`` choices of one access for each
        thread (their selectors' values) that overlap at an integer model's values, as
        constraints; the model's values for other accesses' symbols are a guess (its own
        default), which the bit-vector question then checks. ``as_runs``: the model speaks of the
        accesses read as one run of their loops."""
        from ..engine import ints
        if a.selector is None and b.selector is None:
            return []

        def offsets(place: Place, second: bool) -> list:
            key = (id(place), as_runs)
            if key not in self.offsets:
                terms = [ints.I(alt.ev.off) for alt in place.alts]
                if as_runs:
                    ones = [self.runs.one_run(alt.pc, off) for alt, off in zip(place.alts, terms)]
                    terms = [off if one is None else one[1] for off, one in zip(terms, ones)]
                self.offsets[key] = terms
            out = []
            for alt, off in zip(place.alts, self.offsets[key]):
                v = model.eval(rename.integers(off) if second else off, model_completion=True)
                out.append((v.as_long(), alt.ev.size) if z3.is_int_value(v) else None)
            return out

        out = []
        for i, x in enumerate(offsets(a, False)):
            for j, y in enumerate(offsets(b, True)):
                if x is not None and y is not None and x[0] < y[0] + y[1] and y[0] < x[0] + x[1]:
                    choice = [] if a.selector is None else [a.selector == i]
                    out.append(choice + ([] if b.selector is None else [rename(b.selector) == j]))
                    if len(out) >= limit:
                        return out
        return out

    def of(self, place: Place, cross: bool, shares, attempt: int = 0) -> list:
        key = (id(place), cross, attempt)
        if key not in self.made:
            literals = self.literals.setdefault(cross, {})
            self.made[key] = _integer_accesses(self.polys, place, shares, literals, merge=attempt > 0,
                                               runs=self.runs if attempt > 1 else None)
        return self.made[key]


def _apart_in_integers(ctx, threads, a: Place, b: Place, cross: bool, accesses: IntegerAccesses) -> tuple:
    """(apart, hint, as_runs): whether no two threads (of different blocks with ``cross``, else of one block) reach
    overlapping bytes at ``a`` and ``b`` at all, barriers aside, proved in integer arithmetic
    (lia.py: unsatisfiable there, so in the program). Global offsets such as ``row * hidden + col``
    are easy in integers and a hard bit-vector query for two threads; split by their radix
    (engine/radix.py), most are linear. ``hint``: where the split pair is satisfiable, its model,
    a guess at a witness for the bit-vector question; ``as_runs``: whether the accesses were read
    as one run of their loops (IntegerAccesses, attempt 2) for it."""
    from ..engine import radix
    from ..engine.lia import linear
    lia, rename = ctx.lia, SecondThread(ctx, threads, same_block=not cross)
    polys = accesses.polys
    reading = 0  # IntegerAccesses' attempt
    xs, ys = accesses.of(a, cross, rename.shares), accesses.of(b, cross, rename.shares)
    while len(xs) * len(ys) > MAX_INTEGER_PAIRS and reading < 2:
        # Too many pairs: an unrolled loop with a symbolic stride (its steps as one access each),
        # then accesses in different runs of one summarised loop (a vector loop inside unrolled
        # head loops) as accesses of one run, a constant apart.
        reading += 1
        xs, ys = accesses.of(a, cross, rename.shares, reading), accesses.of(b, cross, rename.shares, reading)
    as_runs = reading == 2
    if len(xs) * len(ys) > MAX_INTEGER_PAIRS:
        return False, None, as_runs
    ids = threads.thread.bid if cross else threads.thread.tid
    other = z3.Or(*[x != rename.integers(x) for x in (z3.Int(str(v.bv)) for v in ids.fields.values())])

    def query(x: IntAccess, y: IntAccess, nonlinear: bool, overlaps) -> list:
        first = [t for t in (lia.translate(c, nonlinear) for c in x.pc) if not z3.is_true(t)]
        second = [t for t in (lia.translate(c, nonlinear) for c in y.pc) if not z3.is_true(t)]
        first += lia.facts(first + [t >= 0 for t, _, _, _ in overlaps])
        second += lia.facts(second + [t >= 0 for _, _, t, _ in overlaps])
        out = first + [rename.integers(t) for t in second] + [other]
        for oa, sa, ob, sb in overlaps:
            ob = rename.integers(ob)
            out += [oa < ob + sb, ob < oa + sa]
        out += rename.integer_loads(out)
        if nonlinear:
            # The products and quotients exact (col * tokens, a grid-stride loop's k * stride).
            names = {const_name(v) for t in out for v in _vars(t)}
            defined = [(const_name(d.arg(0)), d) for d in lia.definitions]
            out += [d for n, d in defined if n in names]
            out += [rename.integers(d) for n, d in defined if n + PRIME in names]
        return out

    def refuted(terms: list) -> bool:
        ctx.tick()
        return lia.refutes("QF_LIA" if all(linear(t) for t in terms) else "QF_NIA", terms)

    bounds: dict = {}

    def bounded(members, rest, base) -> bool:
        r, m = polys.term(rest), polys.term(base)
        # Members on one path need only their lowest start and highest end in range.
        ends: dict = {}
        for pc, shift, size in members:
            lo, hi = ends.get(id(pc), (pc, shift, shift + size))[1:]
            ends[id(pc)] = (pc, min(lo, shift), max(hi, shift + size))
        for pc, lo, hi in ends.values():
            key = (pc, lo, hi, r.get_id(), m.get_id())
            if key not in bounds:
                ctx.tick()
                bounds[key] = lia.unsat(list(pc), z3.Or(r + lo < 0, r + hi > m), nonlinear=True)
            if not bounds[key]:
                return False
        return True

    defined: dict = {}

    def with_definitions(x: IntAccess):
        """x's polynomial with the variables its path defines (a loop's counter) read as their
        definitions: once per access, whatever it is paired with."""
        if id(x) not in defined:
            poly = polys.of(polys.term(x.split.poly), radix.definitions(lia, x.pc))
            defined[id(x)] = None if poly is None else radix.Access(poly, x.split.members)
        return defined[id(x)]

    def split(x: IntAccess, y: IntAccess):
        if x.split is None or y.split is None:
            return None
        sx, sy = with_definitions(x), with_definitions(y)
        if sx is None or sy is None:
            return None
        parts = radix.split(polys, sx, sy, rename.shares, bounded)
        if parts is None:
            return None
        terms = as_terms(parts)
        return terms + pulled_back(terms, x, y)

    def as_terms(parts: list) -> list:
        return [(polys.term(p), s, polys.term(q), t) for p, s, q, t in parts]

    def pulled_back(terms: list, x: IntAccess, y: IntAccess) -> list:
        """Where the split leaves equal quotients and remainders of one variable by constants
        (``row / 128``, ``row % 32``, ``(row / 32) % 4`` of a swizzled layout) that together make the
        variable equal, the variable's own equality, split again with the path's definitions (a
        grid-stride ``row == blockIdx.x + k * gridDim.x``): implied, so the question is the same, and
        it says what the atoms alone hide."""
        equal: dict = {}  # base id -> (base, the atoms of it the split equates)
        for a, s, b, t in terms:
            base = radix.base_of(a) if s == t == 1 and a.eq(b) else None
            if base is not None:
                equal.setdefault(base.get_id(), (base, []))[1].append(a)
        out = []
        for base, atoms in equal.values():
            if not refuted([a == rename.integers(a) for a in atoms] + [base != rename.integers(base)]):
                continue
            sides = []
            for acc in (x, y):
                poly = polys.of(base, radix.definitions(lia, acc.pc))
                sides.append(None if poly is None else radix.Access(poly, radix.units(acc.split.members)))
            more = radix.split(polys, *sides, rename.shares, bounded) if None not in sides else None
            out += [(base, 1, base, 1)] if more is None else as_terms(more)
        return out

    for x in xs:
        for y in ys:
            whole = [(x.off, x.size, y.off, y.size)]
            if refuted(query(x, y, False, whole)):
                continue
            parts = split(x, y)
            if parts is not None:
                if refuted(query(x, y, False, parts)):
                    continue
                hint = lia.last_model
                if refuted(query(x, y, True, parts)):
                    continue
                return False, lia.last_model if lia.last_model is not None else hint, as_runs
            if not refuted(query(x, y, True, whole)):
                return False, None, as_runs
    return True, None, as_runs


def _index_names(threads) -> set:
    """The names of both threads' block and thread indices."""
    names = {str(v.bv) for ids in (threads.thread.tid, threads.thread.bid) for v in ids.fields.values()}
    return names | {n + PRIME for n in names}


def _pins(model, constraints, names: set) -> list:
    """The bit-vector variables of ``constraints`` named in ``names`` at their values in an integer
    model (lia.py names an integer after its bit-vector variable). The sizes are left to the
    bit-vector solver: the linear model may have broken a product it abstracts."""
    pins = []
    for v in {str(v): v for t in constraints for v in _vars(t) if z3.is_bv(v) and str(v) in names}.values():
        value = model.eval(z3.Int(str(v)), model_completion=False)
        if z3.is_int_value(value):
            pins.append(v == z3.BitVecVal(value.as_long() % (1 << v.size()), v.size()))
    return pins


def _one_warp(threads, rename, model) -> bool:
    """Whether the witness's two threads are lanes of one warp."""
    same = model.eval(warp_of(threads) == warp_of(threads, rename), model_completion=True)
    return z3.is_true(same)


def _finding(ctx, threads, a: Place, b: Place, rename, model, cond, cross: bool = False) -> Finding:
    # The later access in the source is where the barrier goes; the other one is related.
    first, second = (a, b) if (a.ev.span.line, a.ev.span.col) <= (b.ev.span.line, b.ev.span.col) else (b, a)
    t_first = thread_text(threads, model, None if first is a else rename)
    t_second = thread_text(threads, model, rename if second is b else None)
    fa, sb = first.ev, second.ev

    def what(ev) -> str:
        atomic = "block-scope atomic " if ev.scope == "block" else "atomic " if ev.atomic else ""
        return atomic + ("write" if ev.write else "read")

    region = fa.region
    kind = {"dynamic_shared": "dynamic shared memory", "shared": "shared memory"}.get(region.kind, "global memory")
    if cross:
        where = (f"at `{fa.span.text}` ({what(fa)}" + (f" and {what(sb)})" if what(sb) != what(fa) else ")")
                 if fa.span == sb.span else
                 f"at `{fa.span.text}` ({what(fa)}, line {fa.span.line}) and `{sb.span.text}` ({what(sb)}, line "
                 f"{sb.span.line})")
        if "block" in (fa.scope, sb.scope):
            msg = (f"data race on global memory `{region.name}`: threads of different blocks ({t_first} and "
                   f"{t_second}) access the same bytes {where}; a block-scope atomic is atomic only among the "
                   f"threads of its own block, so one block's update can be lost (static-only: "
                   f"{STATIC_ONLY_BLOCK_SCOPE})")
            fix = Fix(sb.span, None, "use a device-scope atomic (`atomicAdd` rather than `atomicAdd_block`, "
                      "`cuda::thread_scope_device`), or give each block its own elements")
        else:
            if threads.grid_barriers:
                msg = (f"data race on global memory `{region.name}`: threads of different blocks ({t_first} and "
                       f"{t_second}) access the same bytes {where} between the same two grid barriers; a block "
                       f"barrier does not order blocks")
                fix = Fix(sb.span, None, "put a grid barrier (`grid.sync()`) between the two accesses, or give each "
                          "block its own elements")
            else:
                msg = (f"data race on global memory `{region.name}`: threads of different blocks ({t_first} and "
                       f"{t_second}) access the same bytes {where}; no barrier orders blocks within a launch")
                fix = Fix(sb.span, None, "give each block its own elements, or make the update atomic (or split "
                          "the kernel in two launches)")
    elif fa.span == sb.span:
        both = what(fa) if what(fa) == what(sb) else f"{what(fa)} and {what(sb)}"
        msg = (f"data race on {kind} `{region.name}`: two threads of one block access the same bytes at "
               f"`{fa.span.text}` ({both}) with no barrier between them ({t_first} and {t_second})")
        fix = Fix(sb.span, None, "let one thread write (or give each thread its own element), or make the "
                  "update atomic")
    else:
        msg = (f"data race on {kind} `{region.name}`: `{fa.span.text}` ({what(fa)}, line {fa.span.line}) by "
               f"{t_first} and `{sb.span.text}` ({what(sb)}, line {sb.span.line}) by {t_second}, threads of "
               f"one block, in the same barrier interval")
        fix = Fix(sb.span, None, f"a `__syncthreads()` between line {fa.span.line} and line {sb.span.line} that "
                  "every thread of the block reaches (or `__syncwarp()` when both threads are always in one warp)")
    if not cross and _one_warp(threads, rename, model):
        msg += ("; both threads are in one warp: since Volta (sm_70) a warp's lanes are not guaranteed to run "
                "in lockstep, so warp-synchronous code needs `__syncwarp()` between the two accesses")
    msg += _needs_repeats(ctx, rename, cond, model)
    if region.kind == "global":
        msg += (". compute-sanitizer's racecheck watches shared memory only: a race on global memory shows as "
                "results that change from run to run")
    witness = second_thread_witness(ctx, threads, rename, model, cond)
    return Finding(check="race", message=msg, location=sb.span, op=ctx.op, kernel=ctx.kernel, witness=witness,
                   expression=sb.span, access=fa.span, trace=list(sb.stack), fix=fix,
                   related=[fa.span] if fa.span != sb.span else [], value_sources=ctx.loads_in(cond),
                   static_only=STATIC_ONLY_BLOCK_SCOPE if cross and "block" in (fa.scope, sb.scope) else "")
