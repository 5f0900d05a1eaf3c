"""Per-instance analysis context: solver, checks, symbols for witnesses, findings and budgets."""
from __future__ import annotations

from dataclasses import dataclass, field

import z3

from ..findings import Finding, Inconclusive, gib
from ..kir import nodes as N
from ..limits import WITNESS_MEMORY_GIB
from . import lia, replay
from .solver import Solver, SolverUnknown
from .terms import constants
from .work import Meter
from .values import Counter, IntV, StructV


# Values the engine takes as unconstrained because they come from other threads or from code it
# does not interpret: a finding that needs one is inconclusive, never a bug on its own.
UNTRACKED = {"lane": "a value from another lane of the warp", "collective": "the result of a block or warp collective",
             "atomic": "the old value of an atomic", "asm": "the output of inline assembly",
             "unknown-call": "the result of a function with no body or model",
             "input": "a value the program reads at run time (the clock, a file, the console)",
             "symbol": "the contents of a __constant__ or __device__ variable, which the host sets at run time",
             "float": "a floating-point value",
             "texture": "the contents of a texture, which the engine does not follow",
             "random": "a random number the program draws at run time (curand)",
             "foreign": "memory a pointer made from an integer points to (an object another call made)",
             "copy": "bytes a runtime copy brought from device memory",
             "overwritten": "bytes a copy, a fill or a store wrote that the engine does not follow",
             "spread": "an entry read at an offset the engine does not resolve to one of the object's slots"}


class BudgetExceeded(Exception):
    pass


@dataclass
class Options:
    time_budget_s: float = 60.0  # counted in work (work.py): about that many seconds of one idle core
    query_timeout_ms: int = 10_000
    query_rlimit: int = 10_000_000  # z3 resource units per bit-vector query (deterministic)
    unroll_max: int = 16
    max_paths: int = 64
    max_call_depth: int = 24
    minimal_witness: bool = True
    # A kernel whose analysis ran out the budget is skipped in a follow-up run of the instance, so
    # the launches after it (other paths, other kernels) still get a verdict. How many such runs.
    follow_ups: int = 2
    skip_kernels: frozenset = frozenset()  # kernel functions (keys) a follow-up run does not enter
    # Inputs fixed for a replay (replay.py): (z3 name, bits or 0 for a boolean, value).
    pins: tuple = ()
    # Results the manifest states for repository functions: (name, min, max); such calls are not followed.
    returns: tuple = ()
    # GPU memory (bytes) a witness's tensors may take: a failing input that fits is preferred, so a
    # reproducer can run it (limits.WITNESS_MEMORY_GIB). 0: no bound.
    witness_memory_bytes: int = int(WITNESS_MEMORY_GIB * (1 << 30))
    # Races on global memory (checks/race.py), within a block and across blocks. None: on for an op
    # with a binding, off in zero-config, where index tensors' contents and strides are unknown and
    # nearly every scatter could race through a repeated index or overlapping rows.
    global_races: bool | None = None
    # Record the op's call at small valid sizes in the result (InstanceResult.control_call).
    control_call: bool = False


@dataclass
class Symbol:
    name: str  # as shown in a witness
    term: z3.ExprRef
    kind: str  # user | derived | dtype | thread | loop | load | havoc | host | stated (the manifest's `returns`) | uninit | field (of a struct read through a pointer argument: named where a finding needs it)
    signed: bool = True
    origin: tuple = ()  # loads: (region kind, region name, has a bound value range)
    deps: tuple = ()  # z3 names of the symbols it was computed from (a loop counter: its start and bound)


@dataclass
class Context:
    op: str
    options: Options = field(default_factory=Options)
    checks: list = field(default_factory=list)
    model_fields: tuple = ()
    dtype: str = ""
    zero_config: bool = False
    # A program (`main`) or a host function of numbers only: every buffer it touches is one it
    # allocates, so nothing the op is given could make its accesses overlap (checks/race.py).
    self_contained: bool = False

    def __post_init__(self):
        self.meter = Meter(self.options.time_budget_s)
        self.solver = Solver(self.options.query_timeout_ms, self.options.query_rlimit,
                             meter=self.meter)
        self.lia = lia.Lia()
        lia.use(self.lia)
        self.counter = Counter()
        self.findings: dict[tuple, Finding] = {}
        self.inconclusive: list[Inconclusive] = []
        self.assumptions: list[str] = []
        self.symbols: dict[str, Symbol] = {}  # z3 name -> Symbol
        self.lazy_dtypes: dict = {}  # z3 name of a zero-config dtype symbol -> (code, element size)
        # Ids of the regions an earlier kernel launch of the op wrote (on any path): their binding's
        # `values` describe them at the op's entry, not any more.
        self.launch_written: set = set()
        # Where the op made pointers from integers (source texts): memory a reproducer cannot make.
        self.foreign_pointers: list[str] = []
        self.string_choices: dict = {}  # a host string compared with literals -> its choice (an IntV)
        self.string_codes: dict = {}  # a string literal -> its code among the choices
        self.string_names: set = set()  # the witness names of those choices (shown as the literal chosen)
        self.user_terms: list[z3.ExprRef] = []
        self.dim_order: list[tuple[str, z3.ExprRef]] = []  # what a witness minimises, in priority order
        self.dim_lo: dict[str, int] = {}
        self.kernel: str | None = None
        self.kernels: list[str] = []
        # Host functions the op called that have neither a body nor a model (name, span): where no
        # kernel is reached, one of them may be the launcher, in a file the scan did not parse.
        self.host_calls_without_body: list[tuple[str, N.Span]] = []
        self.reported: set[tuple] = set()
        self.aborts: list[tuple] = []
        self.witnesses: list[tuple] = []  # (kernel, object, failure condition, in integers or None, finding, model) of reported accesses
        # The in-bounds assumptions paths go on with after a report (checks/oob.py), by term id
        # (the terms kept so that their ids stay theirs).
        self.continued: dict[int, z3.BoolRef] = {}
        # Zero-config contract findings (contract.py): each default dim's (symbol, upper bound), the
        # integer arguments among them, the caller's tensors, and the path's set-up conjuncts.
        self.contract_dims: dict[str, tuple] = {}
        self.scalar_dims: set[str] = set()
        self.contract_scalars: set[str] = set()
        self.caller_tensors: set[str] = set()
        self.state_fields: dict[str, object] = {}  # zero-config: each struct argument's integer field (path -> value)
        self.shape_fields: dict[str, object] = {}  # zero-config: each shape-member element of a pointed struct
        self.setup_ids: set[int] = set()
        self.term_names: dict[int, set] = {}
        self.contract_questions: list[tuple] = []  # contract.ask_later, answered by contract.settle
        self.paths = 0
        self._guided = None  # the last witness found at the integers' minimum
        # Kernels by function key: two overloads of a template can print alike (f<float> and
        # f<float> with one more parameter), and a follow-up run must skip only the slow one.
        self.kernel_key: str | None = None  # the running kernel's function
        self.kernel_names: dict[str, str] = {}  # function key -> display name
        self.timed_out_in: str | None = None  # the function of the kernel running when the budget ran out
        self.kernel_units: dict[str, int] = {}  # work spent in each kernel's analysis (work.py), by function
        self.loop_written: dict[int, str] = {}  # region id -> the loop summary that may have written it
        # Tracked host objects a runtime copy wrote (region id -> the call): what they hold there is
        # what the device held, which the engine does not compute.
        self.copied_in: dict[int, str] = {}
        # Tracked objects some path wrote with bytes the engine does not know (region id -> where:
        # memory.forget_content): a read there where no value is kept needs the program's values,
        # and is not an uninitialized read.
        self.overwritten: dict[int, str] = {}
        # CUDA arrays a program allocated with a known element size (region id -> the regions that
        # stand for a row and, for a 2-D array, a column: models/cuda.py, _new_array), and the
        # surface objects made over them (the object's z3 name -> the array's region): what a
        # trap-mode surface access or a copy into the array is checked against.
        self.cuda_arrays: dict[int, tuple] = {}
        self.surface_arrays: dict[str, object] = {}
        self.replay_pins: list = []  # (rank, inputs) of findings a loop summary could not settle
        self.pin_terms = replay.pin_terms(self.options.pins)  # [(constant, value)] of a replay
        self.threads = None  # the running launch's facts for the thread checks (threads.LaunchThreads)
        self.device_regions: list = []  # the op's GPU tensors and buffers: what a reproducer allocates
        self.memory_notes: dict[tuple, str] = {}  # a witness's sizes -> what fitting it in memory changed
        self.load_offsets: dict[str, tuple] = {}  # z3 name of a loaded value -> (byte offset, element size)

    # ------------------------------------------------------------ budgets

    def over_budget(self) -> bool:
        return self.meter.spent()

    def tick(self) -> None:
        """One engine step (a statement, a query built); ends the run once the budget is spent."""
        self.meter.step()
        if self.over_budget():
            self.timed_out_in = self.kernel_key or self.heaviest_kernel()
            raise BudgetExceeded()

    def heaviest_kernel(self) -> str | None:
        """The kernel that took at least half the budget, when it ran out in host code after it:
        a follow-up run that skips that kernel has the time for the rest."""
        if not self.kernel_units:
            return None
        name, spent = max(self.kernel_units.items(), key=lambda kv: kv[1])
        return name if spent >= self.meter.budget_units / 2 else None

    # ------------------------------------------------------------ symbols

    def symbol(self, display: str, term: z3.ExprRef, kind: str, signed: bool = True, origin: tuple = (),
               deps: tuple = ()) -> z3.ExprRef:
        # Symbols are found again by the name of their z3 constant (witness extraction, summaries).
        key = str(term) if z3.is_const(term) or kind not in ("user", "field") else str(_vars(term)[0])
        self.symbols[key] = Symbol(display, term, kind, signed, origin, deps)
        return term

    def note_replay(self, model, rank: int = 0) -> None:
        """Keep the inputs (sizes, scalars, dtypes, device answers) of a finding a loop summary
        could not settle, for a run with them fixed (replay.py)."""
        if self.options.pins or model is None or len(self.replay_pins) >= replay.MAX_REPLAYS * 4:
            return
        pins = replay.pins_from(model, [(key, sym) for key, sym in self.symbols.items()
                                        if sym.kind in replay.INPUT_KINDS])
        if pins and all(p != pins for _, p in self.replay_pins):
            self.replay_pins.append((rank, pins))

    def remember_untracked(self, v, origin: str, what: str) -> None:
        """Register a value the engine does not compute (a collective's output, an atomic's old
        value, bytes copied from the device): a finding that needs it is ``needs-values``."""
        if isinstance(v, IntV):
            self.symbol(what, v.bv, "load", v.ty.signed, (origin, what, False))
        elif isinstance(v, StructV):
            for f in v.fields.values():
                self.remember_untracked(f, origin, what)

    def symbols_behind(self, cond) -> list[Symbol]:
        """The symbols a condition mentions, and those they were computed from (a loop counter
        stands on its start and bound: a value loaded there is a value the condition needs)."""
        out, seen = [], set()
        stack = [str(v) for v in _vars(cond)] if cond is not None else []
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            sym = self.symbols.get(key)
            if sym is not None:
                out.append(sym)
                stack.extend(sym.deps)
        return out

    def fresh_name(self, base: str) -> str:
        return f"{base}!{self.counter()}"

    # ------------------------------------------------------------ results

    def note(self, text: str) -> None:
        if text not in self.assumptions:
            self.assumptions.append(text)

    def stuck(self, reason: str, detail: str, span: N.Span | None) -> None:
        if not detail:
            return
        for inc in self.inconclusive:
            if inc.reason == reason and inc.detail == detail and inc.span == span:
                return
        self.inconclusive.append(Inconclusive(reason, detail, span, self.kernel))

    def aborted(self, reason: str, span: N.Span) -> None:
        """A path that ended at a failing check (TORCH_CHECK, a dtype check of data_ptr<T>())."""
        if (reason, span) not in self.aborts:
            self.aborts.append((reason, span))

    def report(self, finding: Finding) -> None:
        why = self.value_dependence(finding.value_sources)
        if why is not None:
            self.stuck("needs-values", f"a possible {finding.check} at `{finding.location.text}` {why}", finding.location)
            return
        # The precision rule, for every check at once: a witness that needs a value a loop summary
        # made up (a havocked variable) is the summary's imprecision, never a bug. Checks say so
        # first with their own words; this catches any that does not.
        havocked = {sym.name for sym in self.symbols.values() if sym.kind == "havoc"}
        made_up = next((name for name in finding.witness if name in havocked), None)
        if made_up is not None:
            self.stuck("imprecise-loop", f"a possible {finding.check} at `{finding.location.text}` depends on "
                       f"{made_up}, which the loop summary cannot bound", finding.location)
            return
        key = finding.key()
        if key not in self.findings:
            note = self.memory_notes.get(self.sizes_key(finding.witness))
            if note:
                finding.message = f"{finding.message.rstrip('.')}. {note}"
            self.findings[key] = finding

    def value_dependence(self, value_sources: list) -> str | None:
        """Why a finding cannot stand on its own, if it depends on loaded values that are not
        inputs with a contract: values the kernel keeps in shared memory (which the engine does not
        track), or, in zero-config mode, values of an input no binding bounds. ``value_sources``:
        the finding's (``loads_in`` its condition)."""
        for kind, name, bounded in value_sources:
            if kind in ("shared", "dynamic_shared"):
                return f"depends on a value loaded from shared memory `{name}`, which the engine does not track"
            if kind == "scratch":
                return (f"depends on values an earlier kernel of the op wrote into `{name}`, which the engine "
                        "does not carry from one launch to the next")
            if kind == "unstated":
                return (f"depends on the values of `{name}`, which the binding says were not observed (state "
                        "their range in the manifest's `values`)")
            if kind in UNTRACKED:
                return f"depends on {UNTRACKED[kind]} ({name}), which the engine does not compute"
            if self.zero_config and kind == "global" and not bounded:
                return (f"depends on the values of `{name}`, which no binding bounds (give its range in the "
                        "manifest's `values`)")
        return None

    def guard_sources(self, pc, cond, model=None) -> list[tuple]:
        """The origins of values the engine does not compute (or no binding bounds) that a branch
        on the path decides on, where the branch also constrains what the failure is about, and
        the failure needs them to be more than 0 or 1: `if (i < count) a[i]` with `count` read
        back from the device, or returned by a function with no body, fails only for a large
        `count`, so the failure rests on it as much as if the index held it. One that fails with
        such values at 0 or 1 (`if (t >= seq_start) x[b * n + t]`, past `x` from the second
        sequence on) needs nothing unusual of them, and branches that share nothing with the
        failure do not count. ``model``: the finding's witness, whose sizes the question keeps
        (with every size fixed, products of sizes are constants and the question is easy)."""
        if cond is None:
            return []
        failing = {str(v) for v in _vars(cond)}
        origins: list[tuple] = []
        terms: dict[int, z3.ExprRef] = {}  # id -> the symbol's term
        # Reported accesses taken as in bounds are not branches: what they mention decides nothing.
        pc = [t for t in pc if t.get_id() not in self.continued]
        for t in pc:
            if t.get_id() in self.setup_ids or not failing & {str(v) for v in _vars(t)}:
                continue
            for sym in self.symbols_behind(t):
                if sym.kind != "load" or not sym.origin or self.value_dependence([sym.origin]) is None:
                    continue
                if sym.origin not in origins:
                    origins.append(sym.origin)
                terms.setdefault(sym.term.get_id(), sym.term)
        if not origins:
            return []
        # Numbers only: a float comparison's outcome (a Bool) is 0 or 1 already.
        small = [z3.Or(u == 0, u == 1) for u in terms.values() if z3.is_bv(u) or z3.is_arith(u)]
        sizes = [term == model.eval(term, model_completion=True) for _, term in self.dim_order] if model is not None else []
        try:
            if self.solver.model(list(pc) + [cond] + small + sizes) is not None:
                return []
        except SolverUnknown:
            pass  # undecided: the failure is not shown to stand without them
        return origins

    def loads_in(self, cond) -> list[tuple]:
        """The origins of the loaded values a condition mentions."""
        if cond is None:
            return []
        out = []
        for sym in self.symbols_behind(cond):
            if sym.kind == "load" and sym.origin and sym.origin not in out:
                out.append(sym.origin)
        return out

    def already(self, key: tuple) -> bool:
        return key in self.reported

    def mark(self, key: tuple) -> None:
        self.reported.add(key)

    # ------------------------------------------------------------ queries

    def feasible(self, pc, cond: z3.BoolRef | None = None) -> bool:
        """Whether a path may be taken: unless the integers refute it, it is explored. Exploring a
        path too many is sound (a finding still needs a bit-vector witness) and far cheaper than
        asking the bit-vectors at every branch."""
        if cond is not None and z3.is_false(cond):
            return False
        return not self.lia.unsat(pc, *([self.lia.translate(cond)] if cond is not None else []), nonlinear=False)

    def excluded(self, pc, *int_conds) -> bool:
        """True when the integers prove that pc ∧ int_conds cannot hold."""
        return self.lia.unsat(pc, *int_conds)

    def find_model(self, pc: tuple, cond: z3.BoolRef, span: N.Span | None, cond_int: z3.BoolRef | None = None,
                   sharper: z3.BoolRef | None = None):
        """A model of pc ∧ cond, None if infeasible. An unknown answer becomes an inconclusive
        reason at ``span``. With ``cond_int`` (the condition in integers), the sizes of an integer
        model are tried first: with every size fixed, products of sizes are constants and the
        bit-vector query is easy, where the open one may not be. ``sharper``: a stronger integer
        condition whose guesses are tried when ``cond_int``'s fail in bit-vectors (the integers
        may miss part of ``cond``); it only steers the search, the bit-vectors decide."""
        self.tick()  # one statement may ask many near-limit queries: the budget holds between them
        if self.pin_terms and z3.is_false(replay.decide(cond, self.pin_terms)):
            return None  # a replay's path holds its inputs fixed: where they decide the condition, no query
        if cond_int is not None and len(self.dim_order) > 1:
            names = [name for name, _ in self.dim_order]
            asked = None  # the constants the question names, once a guess for every size fails
            for condition in (cond_int, sharper):
                if condition is None:
                    continue
                partly = True
                # The linear minimum first (a small witness), then an exact nonlinear model.
                for guess in (self.lia.minimize, self.lia.model_values):
                    values = guess(pc, condition, names)
                    if not values:
                        continue
                    fixed = [term == values[name] for name, term in self.dim_order if name in values]
                    guided = self._try_model(list(pc) + [cond] + fixed)
                    if guided is not None:
                        if guess == self.lia.minimize and condition is cond_int:
                            self._guided = guided  # minimal() has nothing to add
                        return guided
                    # The integers may not see every constraint on the other sizes (a byte stride
                    # equal to an element size read from a table): the sizes the question names
                    # fixed alone, once per condition, the bit-vectors choosing the rest, where
                    # products of the fixed sizes are constants.
                    if not partly:
                        continue
                    asked = asked if asked is not None else {c.get_id() for c in constants(cond)}
                    own = [term == values[name] for name, term in self.dim_order
                           if name in values and any(c.get_id() in asked for c in constants(term))]
                    if own and len(own) < len(fixed):
                        partly = False
                        guided = self._try_model(list(pc) + [cond] + own, effort=0.5)
                        if guided is not None:
                            return guided
        try:
            return self.solver.model(list(pc) + [cond])
        except SolverUnknown as exc:
            self.stuck("solver-unknown", f"the solver could not decide a check ({exc.reason})", span)
            return None

    def minimal(self, pc: tuple, cond: z3.BoolRef, cond_int: z3.BoolRef | None, model):
        """A witness with the smallest sizes: "fails from 1,048,577 tokens" is what a maintainer can
        act on; among those, one whose tensors fit a GPU (``witness_memory_bytes``) when the
        smallest does not, so that a reproducer can run it."""
        return self._fit_memory(pc, cond, cond_int, self._smallest(pc, cond, cond_int, model))

    def device_bytes(self, model) -> int:
        """GPU memory the op's tensors take at ``model``'s sizes."""
        return sum(model.eval(r.size, model_completion=True).as_long() for r in self.device_regions)

    def _fit_memory(self, pc: tuple, cond: z3.BoolRef, cond_int: z3.BoolRef | None, model):
        """``model`` when its tensors fit the memory bound; else the smallest failing sizes that fit,
        if any (minimised as ``_smallest`` does, under the bound). Either way the finding says so
        (``memory_notes``): a maintainer learns why the witness is not the smallest input."""
        bound = self.options.witness_memory_bytes
        if not (bound and self.device_regions and self.options.minimal_witness) or model is None:
            return model
        need = self.device_bytes(model)
        if need <= bound:
            return model
        # 72 bits: a sum of 64-bit sizes cannot wrap.
        fits = z3.ULE(z3.Sum([z3.ZeroExt(8, r.size) for r in self.device_regions]), z3.BitVecVal(bound, 72))
        constraints = list(pc) + [cond, fits]
        better = None
        sizes = [r.size_iv for r in self.device_regions]
        if cond_int is not None and self.dim_order and None not in sizes:
            values = self.lia.minimize(pc, z3.And(cond_int, z3.Sum(sizes) <= bound),
                                       [name for name, _ in self.dim_order])
            if values:
                better = self._try_model(constraints + [term == values[name] for name, term in self.dim_order
                                                        if name in values])
        if better is None and not self.over_budget():
            better = self._try_model(constraints)
            if better is not None and self.dim_order:
                better = self._bisect(constraints, {}, better, steps=16, effort=0.5)
                first = self.dim_order[0][1]
                better = self._shrink_parts(constraints, [first == better.eval(first, model_completion=True)], better)
        if better is None:
            self._memory_note(model, f"No failing input found fits {gib(bound)} of GPU memory (this one needs "
                                     f"{gib(need)}): a reproducer cannot run it on such a card.")
            return model
        self._memory_note(better, f"The smallest failing sizes need {gib(need)} of GPU memory; this witness, "
                                  f"the smallest found within {gib(bound)}, needs {gib(self.device_bytes(better))}.")
        return better

    def sizes_key(self, values) -> tuple:
        """The user and derived sizes of a witness (a model, or a witness dict): what identifies
        the input a finding's note is about."""
        kinds = ("user", "derived", "stated")
        if isinstance(values, dict):
            return tuple((s.name, values.get(s.name)) for s in self.symbols.values() if s.kind in kinds)
        return tuple((s.name, _value(values, s)) for s in self.symbols.values() if s.kind in kinds)

    def _memory_note(self, model, note: str) -> None:
        self.memory_notes[self.sizes_key(model)] = note

    def _smallest(self, pc: tuple, cond: z3.BoolRef, cond_int: z3.BoolRef | None, model):
        """The smallest sizes: minimised in integers (fast), then checked in bit-vectors: integers
        admit every real behaviour, so when the bit-vectors agree, the minimum is the true one.
        Otherwise ``model`` stays."""
        if not (self.options.minimal_witness and self.dim_order) or cond_int is None:
            return model
        if model is self._guided:
            return model  # already the integers' lexicographic minimum, confirmed in bit-vectors
        # Every size at once: the integers' lexicographic minimum (num_tokens, then batch, ...),
        # checked once in bit-vectors. Most of the time they agree and nothing else is asked.
        values = self.lia.minimize(pc, cond_int, [name for name, _ in self.dim_order])
        if values:
            fixed = [term == values[name] for name, term in self.dim_order if name in values]
            better = self._try_model(list(pc) + [cond] + fixed)
            if better is not None or self.zero_config:
                return better or model
        values = self.lia.minimize(pc, cond_int, [name for name, _ in self.dim_order[:1]])
        if not values:
            return model
        fixed = [term == values[name] for name, term in self.dim_order if name in values]
        better = self._try_model(list(pc) + [cond] + fixed)
        if better is None:
            return self._bisect(list(pc) + [cond], values, model)
        return self._shrink_parts(list(pc) + [cond], fixed, better)

    def _shrink_parts(self, constraints: list, fixed: list, better):
        """The first size fixed, the others as small as they can be, in order (batch=1, seq_len=N)."""
        for name, term in self.dim_order[1:]:
            lo = self.dim_lo.get(name)
            if lo is None:
                continue
            hi = better.eval(term, model_completion=True).as_long()
            if lo < hi and not self.over_budget():
                # Most often the size is already as small as it can be (the first one fixes it): one
                # query says so, where the search would spend all its steps proving it.
                trial = self._try_model(constraints + fixed + [z3.ULT(term, hi)])
                if trial is None:
                    lo = hi
                else:
                    better, hi = trial, trial.eval(term, model_completion=True).as_long()
            for _ in range(8):
                if lo >= hi or self.over_budget():
                    break  # out of budget: the witness found so far stands
                mid = lo if hi - lo <= 1 else (lo + hi) // 2
                trial = self._try_model(constraints + fixed + [z3.ULE(term, mid)])
                if trial is None:
                    lo = mid + 1
                else:
                    better, hi = trial, trial.eval(term, model_completion=True).as_long()
            fixed.append(term == better.eval(term, model_completion=True))
        return better

    def _try_model(self, constraints, effort: float = 1.0):
        try:
            return self.solver.model(constraints, effort)
        except SolverUnknown:
            return None

    def _bisect(self, constraints: list, values: dict, model, steps: int = 12, effort: float = 1.0):
        """The path adds conditions the integers did not see: search the first size between the
        integer minimum (a lower bound) and the model's value."""
        name, term = self.dim_order[0]
        lo = values.get(name, 0)
        hi = model.eval(term, model_completion=True).as_long()
        best = model
        for _ in range(steps):
            if lo >= hi or self.over_budget():
                break
            mid = (lo + hi) // 2
            try:
                m = self.solver.model(constraints + [z3.ULE(term, mid)], effort)
            except SolverUnknown:
                break  # the solver gives up below here: not a proof that nothing smaller fails
            if m is None:
                lo = mid + 1
            else:
                best, hi = m, m.eval(term, model_completion=True).as_long()
        return best

    def witness_loads(self, witness: dict) -> dict[str, list]:
        """The values a witness shows loaded, by the memory they were loaded from (a load's origin
        names its region: the argument's name for an argument's memory)."""
        out: dict[str, list] = {}
        for sym in self.symbols.values():
            value = witness.get(sym.name)
            if sym.kind == "load" and sym.origin and isinstance(value, int) and not isinstance(value, bool):
                values = out.setdefault(sym.origin[1], [])
                if value not in values:
                    values.append(value)
        return out

    def load_elements(self, model: z3.ModelRef, cond: z3.ExprRef | None) -> dict[str, list]:
        """Where the loads a failing condition needs read, and what: memory name -> [[element
        index, value], ...], so that a reproducer puts each value where the kernel reads it."""
        out: dict[str, list] = {}
        if cond is None:
            return out
        for sym in self.symbols_behind(cond):
            where = self.load_offsets.get(str(sym.term))
            if sym.kind != "load" or not sym.origin or where is None:
                continue
            off = model.eval(where[0], model_completion=True)
            value = _value(model, sym)
            if not z3.is_bv_value(off) or isinstance(value, bool) or not isinstance(value, int):
                continue
            off = off.as_signed_long()
            if off < 0 or off % where[1]:
                continue
            cells = out.setdefault(sym.origin[1], [])
            if all(index != off // where[1] for index, _ in cells):
                cells.append([off // where[1], value])
        return out

    def witness(self, model: z3.ModelRef, cond: z3.ExprRef | None, thread) -> dict:
        """Values of every symbol that matters: user dims, model fields, dtype, thread, loop
        iterations and loaded values that the failing condition mentions."""
        out: dict = {}
        for sym in self.symbols.values():
            if sym.kind in ("user", "derived", "stated"):
                out[sym.name] = _value(model, sym)
            elif sym.kind == "dtype":
                from .models.torch import SCALAR_NAMES
                code = _value(model, sym)
                out[sym.name] = SCALAR_NAMES.get(code, code)
        for name, value in self.model_fields:
            out[f"model.{name}"] = value
        if self.dtype and self.dtype != "any":
            out["dtype"] = self.dtype
        if thread is not None:
            for sym in thread.symbols:
                out[sym.name] = _value(model, sym)
        if cond is not None:
            # What the condition mentions, and what those were computed from: a loop counter
            # past a bound stands on the length loaded for it, which a reproducer must load too.
            behind = {id(sym) for sym in self.symbols_behind(cond)}
            for sym in self.symbols.values():  # in the order they arose
                if id(sym) in behind and sym.kind in ("loop", "load", "havoc", "host", "uninit", "field") and sym.name not in out:
                    out[sym.name] = _value(model, sym)
        for name in self.string_names & out.keys():
            out[name] = self.string_text(out[name])
        return out

    def string_text(self, code) -> str:
        """A string compared with literals, as a witness shows it: the literal it equals (quoted), or
        "a string other than" the literals compared with."""
        for literal, c in self.string_codes.items():
            if c == code:
                return literal
        return "a string other than " + ", ".join(self.string_codes)


def _value(model: z3.ModelRef, sym: Symbol):
    v = model.eval(sym.term, model_completion=True)
    if z3.is_bv_value(v):
        return v.as_signed_long() if sym.signed else v.as_long()
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    return str(v)


def _vars(e: z3.ExprRef) -> list:
    return constants(e)
