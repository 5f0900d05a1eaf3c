"""z3 queries with per-query work limits, a result cache, and witnesses with the smallest user sizes.

A query's limit is counted in z3's resource units (``rlimit``), so a verdict is the same on a busy
CI runner and on an idle laptop; the wall-clock timeout only backs it up. What each query spent
counts against the instance's budget (work.py)."""
from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field

import z3

from . import work
from .partition import Partition
from .terms import constants


# Products and quotients of two symbolic terms: what makes a bit-vector query slow (z3 blasts each
# into a multiplier circuit). Path conditions of grid-stride loops carry several such terms.
_NONLINEAR = {z3.Z3_OP_BMUL, z3.Z3_OP_BUDIV, z3.Z3_OP_BSDIV, z3.Z3_OP_BUREM, z3.Z3_OP_BSREM, z3.Z3_OP_BSMOD,
              z3.Z3_OP_BUDIV_I, z3.Z3_OP_BSDIV_I, z3.Z3_OP_BUREM_I, z3.Z3_OP_BSREM_I, z3.Z3_OP_BSMOD_I}
# The relaxed query's share of the work limit: it either answers at once or is not worth waiting for.
RELAXED_SHARE = 0.01


# Answers of bit-vector queries, remembered for the process: the dtype forks of one kernel, the
# follow-up and replay runs of one instance, and the instances of one op ask many of the same
# queries. A query in a context of its own is a function of its terms, its limit and its seeds
# (z3 hash-conses terms, so the same terms have the same ids while they live; the entry keeps
# them alive), and a remembered answer charges the work it cost (work.charge): verdicts are those
# of asking again, in any order.
_ANSWERS: OrderedDict = OrderedDict()
MAX_ANSWERS = 4096


def forget_answers() -> None:
    """Drop the remembered answers (a test that measures a query's own work asks it afresh)."""
    _ANSWERS.clear()


# The renamed queries live in a z3 context of their own: new terms in the process's context shift
# the numbering of every term built after them, which steers the integer tier's searches (a
# llama.cpp op's contract finding became solver-unknown that way).
_NAMES_CONTEXT = z3.Context()


def _canonical(constraints: list) -> tuple:
    """The query with its constants renamed ``q!0, q!1, ...`` in the order a left-to-right walk
    meets them (in ``_NAMES_CONTEXT``), and those constants in that order (in the process's
    context): two queries alike up to names are one term there."""
    query = z3.And(*constraints) if len(constraints) != 1 else constraints[0]
    query = query.translate(_NAMES_CONTEXT)
    found = constants(query, left_to_right=True)
    renamed = z3.substitute(query, *[(c, z3.Const(f"q!{i}", c.sort())) for i, c in enumerate(found)]) \
        if found else query
    main = z3.main_ctx()
    names = [z3.Const(c.decl().name(), c.sort().translate(main)) for c in found]
    return renamed, names


def _model_under(model: z3.ModelRef, names: list, renamed: list) -> z3.ModelRef:
    """``model``'s values of ``names`` given to ``renamed`` (the same query's constants under
    other names, in the same order), as a model of the process's context."""
    out = z3.Model()
    for c, other in zip(names, renamed):
        v = model.eval(c, model_completion=False)
        if z3.is_bv_value(v) or z3.is_true(v) or z3.is_false(v):
            out.update_value(other.decl(), v)
    return out


class SolverUnknown(Exception):
    """z3 answered unknown (timeout or incompleteness) for a query that decides a verdict."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class SolverStats:
    queries: int = 0
    cached: int = 0
    seconds: float = 0.0
    unknown: int = 0


@dataclass
class Solver:
    timeout_ms: int = 10_000
    rlimit: int = 10_000_000  # about 10 s of bit-vector search on an idle core
    attempts: int = 2  # searches with distinct seeds before a query is unknown
    stats: SolverStats = field(default_factory=SolverStats)
    # The instance's work meter (work.Meter): a query's rlimit never runs past the units left, nor
    # its wall-clock timeout past the CPU safety net.
    meter: object = None

    def __post_init__(self):
        self._cache: dict[int, bool] = {}
        self._last_unknown = "unknown"
        self._shape: dict[int, tuple[bool, bool, object]] = {}  # term id -> (has a variable, nonlinear, term)
        self._vars: dict[int, tuple[frozenset, object]] = {}  # term id -> (its variables' names, term)
        self._decided: dict[tuple, tuple] = {}  # a renamed query's key -> this run's decided answer (_check)

    def _split(self, constraints: list) -> tuple[list, list]:
        """The constraints that share variables with the question (the last one), directly or
        through others, and the rest: independent of the question, they are satisfiable or not on
        their own, and a model of each part is a model of the whole. Each part is asked on its own
        (the rest, the same for many questions of a path, mostly from memory): a question about a
        lane no longer pays for the products an unrelated size carries. Constraints with no
        variable go with the question."""
        if len(constraints) < 2:
            return constraints, []
        sets = [self._variables(c) for c in constraints]
        reach = set(sets[-1])
        core = [False] * len(constraints)
        core[-1] = True
        changed = True
        while changed:
            changed = False
            for i, vs in enumerate(sets):
                if not core[i] and (not vs or not reach.isdisjoint(vs)):
                    core[i] = True
                    if not vs <= reach:
                        reach |= vs
                        changed = True
        return ([c for c, keep in zip(constraints, core) if keep],
                [c for c, keep in zip(constraints, core) if not keep])

    def _groups(self, constraints: list) -> list[list]:
        """The constraints in groups that share no variable with each other (each in the order
        given): each group satisfiable or not on its own, a model of each a model of the whole."""
        names = Partition()
        sets = [self._variables(c) for c in constraints]
        for vs in sets:
            first = None
            for v in vs:
                names.add(v)
                if first is None:
                    first = v
                else:
                    names.join(v, first)
        groups: dict = {}
        for c, vs in zip(constraints, sets):
            groups.setdefault(names.find(next(iter(vs))) if vs else None, []).append(c)
        return list(groups.values())

    def _rest(self, rest: list, ask) -> list:
        """``ask`` of the rest of a query as one (the same for many questions of a path: mostly
        from memory); where the solver gives up on it, of each group of it that shares no
        variable with the others (llama.cpp's `count_equal`: three tensors' shape facts, 145
        constraints, past the work limit together, small apart). Returns ask's answers, one per
        part asked."""
        try:
            return [ask(rest)]
        except SolverUnknown:
            groups = self._groups(rest)
            if len(groups) < 2:
                raise
        return [ask(group) for group in groups]

    def _nonlinear(self, e) -> bool:
        """Whether ``e`` multiplies or divides two terms that both hold a variable (memoised per
        term; the term is kept so that its id is not reused while it is remembered)."""
        todo = [e]
        while todo:
            t = todo[-1]
            k = t.get_id()
            if k in self._shape:
                todo.pop()
                continue
            if t.num_args() == 0:
                todo.pop()
                self._shape[k] = (z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED, False, t)
                continue
            kids = t.children()
            missing = [c for c in kids if c.get_id() not in self._shape]
            if missing:
                todo.extend(missing)
                continue
            todo.pop()
            shapes = [self._shape[c.get_id()] for c in kids]
            var = any(sh[0] for sh in shapes)
            nonlinear = any(sh[1] for sh in shapes) or (
                t.decl().kind() in _NONLINEAR and sum(1 for sh in shapes if sh[0]) >= 2)
            self._shape[k] = (var, nonlinear, t)
        return self._shape[e.get_id()][1]

    def _variables(self, e) -> frozenset:
        """The names of the uninterpreted constants ``e`` mentions (terms.constants, remembered per
        term with the term kept alive)."""
        hit = self._vars.get(e.get_id())
        if hit is None:
            hit = self._vars[e.get_id()] = (frozenset(v.decl().name() for v in constants(e)), e)
        return hit[0]

    def _relaxed(self, constraints: list):
        """The constraints asked without the nonlinear ones among them (the question, last, is always
        kept): ``False`` when that is unsatisfiable (dropping constraints only adds models, so this
        is a proof), a model when the relaxed model happens to satisfy the dropped ones too (a model
        of the whole), else None and the full query decides. A question about lanes or slots
        rarely needs the products a grid-stride loop's bounds carry, and those products are what
        made such a query take seconds or run out of work."""
        if len(constraints) < 2:
            return None
        kept, dropped = [], []
        for c in constraints[:-1]:
            (dropped if self._nonlinear(c) else kept).append(c)
        if not dropped:
            return None  # the relaxed query is the query
        kept.append(constraints[-1])
        r, model = self._check(kept, attempts=1, rlimit=max(1, int(self.rlimit * RELAXED_SHARE)))
        if r == z3.unsat:
            return False
        if model is not None and all(z3.is_true(model.eval(c, model_completion=True)) for c in dropped):
            return model
        return None

    def _limit(self, rlimit: int | None) -> int:
        """A query's work limit: its own, never past the units the instance has left."""
        limit = rlimit or self.rlimit
        if self.meter is not None:
            limit = min(limit, max(1_000, self.meter.remaining_units()))
        return limit

    def _new(self, seed: int = 0, rlimit: int | None = None, context: z3.Context | None = None):
        # A fresh solver per query: after push/pop z3 leaves its bit-blasting pipeline for the
        # incremental core, which is several times slower on these queries.
        s = z3.Tactic("qfbv", ctx=context).solver()
        timeout = max(self.timeout_ms, 60_000)  # a safety net: the rlimit decides
        if self.meter is not None:
            timeout = min(timeout, max(50, int(self.meter.safety_seconds_left() * 1000) + 50))
        s.set("timeout", timeout)
        s.set("rlimit", self._limit(rlimit))
        s.set("random_seed", seed)
        return s

    def _check(self, constraints, attempts: int | None = None, rlimit: int | None = None) \
            -> tuple[z3.CheckSatResult, z3.ModelRef | None]:
        # The SAT search's cost is heavy-tailed: the same query, its terms numbered differently
        # (what ran before it in the process), takes from one to several times its median work.
        # One more search with another seed makes a verdict near the limit far less a matter of luck.
        # Each query in a z3 context of its own: in the process's context, the numbering of its
        # terms (what ran before it: other instances, other tests) steers the SAT search, so one
        # query took from one to several times its median work, and a verdict near the limit
        # depended on the process's history. Translated, the query is numbered by itself alone.
        attempts = attempts or self.attempts
        limit = self._limit(rlimit)
        key = (tuple(c.get_id() for c in constraints), attempts, limit)
        known = _ANSWERS.get(key)
        if known is not None:
            _ANSWERS.move_to_end(key)
            return self._remembered(known)
        # The same question up to names (each dtype fork of a kernel names its loop counters and
        # loads afresh, and asks its race and bounds questions again): a decided answer of this
        # run holds for it, with the witness's values under its own names. Only decided answers:
        # asked, the renamed query would get the same one or run out of its limit, so no verdict
        # gets worse; and only this run's (one instance, its forks in a fixed order), so a verdict
        # never depends on which instances a process ran before.
        renamed, names = _canonical(constraints)
        renamed_key = (renamed.get_id(), attempts, limit)
        decided = self._decided.get(renamed_key)
        if decided is not None:
            r, first_model, first_names, units, _ = decided
            model = _model_under(first_model, first_names, names) if r == z3.sat else None
            # Not into the process's table: another run asking these very terms asks z3.
            return self._remembered((r, model, units, None, tuple(constraints)))
        context = z3.Context()
        query = z3.And(*constraints).translate(context) if len(constraints) != 1 else constraints[0].translate(context)
        units = 0
        for seed in range(attempts):
            s = self._new(seed, rlimit, context)
            s.add(query)
            t = time.perf_counter()
            r = s.check()
            units += work.note_query(s, own_context=True)
            self.stats.seconds += time.perf_counter() - t
            self.stats.queries += 1
            if r != z3.unknown:
                break
        why = None
        if r == z3.unknown:
            why = s.reason_unknown() or "unknown"
            self._last_unknown = "its work limit was reached" if why in ("canceled", "timeout") or "resource" in why \
                else why
        model = s.model().translate(z3.main_ctx()) if r == z3.sat else None
        if why != "timeout" and why != "canceled":  # the wall clock's answers are the machine's, not the query's
            _ANSWERS[key] = (r, model, units, self._last_unknown, tuple(constraints))
            if len(_ANSWERS) > MAX_ANSWERS:
                _ANSWERS.popitem(last=False)
        if r != z3.unknown:
            # The witness's values are read when a renamed copy asks (terms built only then).
            self._decided[renamed_key] = (r, model, names, units, renamed)
        return r, model

    def _remembered(self, known: tuple) -> tuple:
        r, model, units, why, _ = known
        work.charge(units)
        self.stats.cached += 1
        if r == z3.unknown:
            self._last_unknown = why
        return r, model

    def feasible(self, constraints: list, strict: bool = False) -> bool:
        """Whether the constraints can hold. An unknown answer counts as feasible (exploring a path
        too many is sound) unless ``strict``, where it raises."""
        simplified = [c for c in constraints if not z3.is_true(c)]
        if any(z3.is_false(c) for c in simplified):
            return False
        if not simplified:
            return True
        key = hash(tuple(c.get_id() for c in simplified))
        if key in self._cache:
            self.stats.cached += 1
            return self._cache[key]
        core, rest = self._split(simplified)
        r, _ = self._check(core)
        if r == z3.sat and rest:
            def decided(part):
                answer, _ = self._check(part)
                if answer == z3.unknown:
                    raise SolverUnknown(self._last_unknown)
                return answer
            try:
                answers = self._rest(rest, decided)
                r = z3.unsat if z3.unsat in answers else z3.sat
            except SolverUnknown:
                r = z3.unknown
        if r == z3.unknown:
            self.stats.unknown += 1
            if strict:
                raise SolverUnknown(self._last_unknown)
            return True
        self._cache[key] = r == z3.sat
        return r == z3.sat

    def model(self, constraints: list, effort: float = 1.0) -> z3.ModelRef | None:
        """A model of the constraints, None when unsatisfiable; raises SolverUnknown otherwise.
        An ``effort`` below 1 is one search with that share of the work limit: for a smaller
        witness, where a hard query is given up rather than paid for twice."""
        simplified = [c for c in constraints if not z3.is_true(c)]
        if any(z3.is_false(c) for c in simplified):
            return None
        core, rest = self._split(simplified)
        model = self._model_of(core, effort)
        if model is None or not rest:
            return model
        others = self._rest(rest, lambda part: self._model_of(part, 1.0))
        if any(other is None for other in others):
            return None
        model = model.translate(model.ctx)  # a copy: the remembered answer stays as it was asked
        for other in others:
            for d in other.decls():
                model.update_value(d, other[d])
        return model

    def _model_of(self, simplified: list, effort: float) -> z3.ModelRef | None:
        # Deciding queries only: a witness search (effort below 1) asks near-copies of a query
        # already answered, where the relaxed search mostly finds a model the dropped constraints
        # reject (on the example: 12% more solver work with it, 6% less without).
        relaxed = self._relaxed(simplified) if effort >= 1.0 else None
        if relaxed is False:
            return None
        if relaxed is not None:
            return relaxed
        if effort < 1.0:
            r, model = self._check(simplified, attempts=1, rlimit=max(1, int(self.rlimit * effort)))
        else:
            r, model = self._check(simplified)
        if r == z3.unknown:
            self.stats.unknown += 1
            raise SolverUnknown(self._last_unknown)
        return model if r == z3.sat else None
