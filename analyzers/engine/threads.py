"""Threads together: what the race, barrier-divergence and warp-mask checks need beyond the one
symbolic thread (DESIGN.md: "a second one only for race checks").

The engine still runs one symbolic thread per launch. Three facts about that run let the checks
reason about two:

- **Barrier intervals.** Every path carries an *epoch* per scope: the number of block barriers
  (``__syncthreads``, a block ``sync()``, a cub block collective), of warp barriers (those plus
  ``__syncwarp``) and of grid barriers (a grid group's ``sync()``) it has passed, as a term. A loop
  summarised by one symbolic iteration ``k`` whose body passes ``b`` barriers on every path puts
  its body at ``e0 + k*b + j`` and its exit at
  ``e0 + n*b`` (``n`` the exit iteration), so iteration ``k``'s tail and iteration ``k + 1``'s head
  share an interval, as they do on the GPU. Two threads that execute the same barrier sequence
  (which the barrier-divergence check verifies) are in one interval exactly when their epochs are
  equal.
- **Decisions.** Every branch the kernel takes on a symbolic condition (an ``if``, a loop's
  condition) is remembered with the epoch it was taken in: a barrier or a warp primitive reached
  under a decision another thread of the block (or warp) decides the other way is divergent.
- **The second thread.** ``SecondThread`` renames every symbol that may differ between two threads:
  thread (and, across blocks, block) indices, loop iterations, loaded and havocked values, results
  of unknown calls. The op's inputs, the launch configuration and values every thread sees alike
  (a load from an address no thread index reaches, after a barrier) keep their names. A condition
  over the first thread's terms and the renamed second thread's terms is one solver query.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import z3

from ..kir import nodes as N
from ..limits import FULL_MASK, WARP_SIZE
from .context import Symbol, _vars
from .terms import name as const_name
from .events import Barrier, WarpSync
from .values import IntV, const_int
from ..kir import types as T

BLOCK_BARRIERS = frozenset({"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"})
WARP_BARRIERS = frozenset({"__syncwarp"})
# A grid group's sync() (a cooperative launch) waits for every thread of the grid; a cluster's, for
# every thread of its blocks: both are block barriers too.
GRID_BARRIERS = frozenset({"cooperative_groups::grid_group::sync"})
CLUSTER_BARRIERS = frozenset({"cooperative_groups::cluster_group::sync"})
# cub's block collectives synchronise the block inside (their temporary storage is shared memory):
# for barrier intervals and for divergence, each call is a block barrier.
BLOCK_COLLECTIVES = frozenset({
    "cub::BlockReduce::Sum", "cub::BlockReduce::Reduce", "cub::BlockScan::ExclusiveSum",
    "cub::BlockScan::InclusiveSum", "cub::BlockScan::ExclusiveScan", "cub::BlockScan::InclusiveScan",
    *(f"cub::BlockAdjacentDifference::{m}" for m in ("SubtractLeft", "SubtractLeftPartialTile", "SubtractRight",
                                                     "SubtractRightPartialTile")),
    *(f"cub::BlockDiscontinuity::{m}" for m in ("FlagHeads", "FlagTails", "FlagHeadsAndTails"))})
EPOCH_BITS = 64
PRIME = "\u2032"  # the second thread's copy of a symbol: threadIdx.x!3 -> threadIdx.x!3′
SECOND = " (second thread)"
# A two-thread query is several times a one-thread one: a smaller witness is searched with a
# quarter of the work limit, once, and a hard attempt keeps the witness already found.
WITNESS_EFFORT = 0.25


def _epoch(v: int) -> z3.BitVecRef:
    return z3.BitVecVal(v, EPOCH_BITS)


def is_block_barrier(name: str) -> bool:
    from .models import normalize
    return name in BLOCK_BARRIERS or normalize(name) in BLOCK_COLLECTIVES | GRID_BARRIERS | CLUSTER_BARRIERS


def is_grid_barrier(name: str) -> bool:
    from .models import normalize
    return normalize(name) in GRID_BARRIERS


# ---------------------------------------------------------------- barriers per loop iteration


NO_BARRIERS = (0, 0, 0)


def barrier_count(node, functions, _seen: frozenset = frozenset()) -> tuple[int, int, int] | None:
    """(block barriers, warp barriers, grid barriers) that one pass through ``node`` executes, when
    every path through it executes the same number; None when the number depends on the path (a barrier under
    an ``if`` without one on the other side, a loop around a barrier, an early exit past one)."""
    if node is None:
        return NO_BARRIERS
    if isinstance(node, N.If):
        c, t, e = (barrier_count(x, functions, _seen) for x in (node.cond, node.then, node.els))
        i = barrier_count(node.init, functions, _seen)
        if None in (c, t, e, i) or t != e:
            return None
        return _add(_add(i, c), t)
    if isinstance(node, (N.For, N.While, N.DoWhile)):
        inner = [barrier_count(x, functions, _seen) for x in (getattr(node, "cond", None), getattr(node, "inc", None),
                                                               node.body)]
        if any(x != NO_BARRIERS for x in inner):
            return None
        return barrier_count(getattr(node, "init", None), functions, _seen)
    if isinstance(node, N.Switch):
        parts = [barrier_count(x, functions, _seen) for x in (node.cond, *node.stmts)]
        return NO_BARRIERS if all(p == NO_BARRIERS for p in parts) else None
    if isinstance(node, N.Block):
        total = NO_BARRIERS
        for i, s in enumerate(node.stmts):
            n = barrier_count(s, functions, _seen)
            if n is None:
                return None
            if _exits(s) and any(barrier_count(r, functions, _seen) != NO_BARRIERS for r in node.stmts[i + 1:]):
                return None  # a path that leaves here skips the barriers after it
            total = _add(total, n)
        return total
    total = NO_BARRIERS
    if isinstance(node, N.Call):
        if is_block_barrier(node.name):
            total = (1, 1, 1 if is_grid_barrier(node.name) else 0)
        elif node.name in WARP_BARRIERS:
            total = (0, 1, 0)
        elif node.func and node.func not in _seen and len(_seen) < 12:
            fn = functions.get(node.func) if functions is not None else None
            if fn is not None and fn.body is not None:
                n = barrier_count(fn.body, functions, _seen | {node.func})
                if n is None:
                    return None
                if n != NO_BARRIERS and _exits(fn.body) and not _only_final_return(fn.body):
                    return None
                total = n
    for child in N.children(node):
        n = barrier_count(child, functions, _seen)
        if n is None:
            return None
        total = _add(total, n)
    return total


def _add(a, b):
    return tuple(x + y for x, y in zip(a, b))


def _exits(node) -> bool:
    """Whether a statement may leave its block early (return, break, continue)."""
    if isinstance(node, (N.Return, N.Break, N.Continue)):
        return True
    if isinstance(node, (N.For, N.While, N.DoWhile, N.Switch)):
        return _returns(node)
    if isinstance(node, N.Stmt):
        return any(_exits(c) for c in N.children(node) if isinstance(c, N.Stmt))
    return False


def _returns(node) -> bool:
    if isinstance(node, N.Return):
        return True
    return any(_returns(c) for c in N.children(node) if isinstance(c, N.Stmt))


def _only_final_return(body: N.Block) -> bool:
    """A function whose one return is its last statement (a helper returning its result)."""
    stmts = body.stmts
    return bool(stmts) and isinstance(stmts[-1], N.Return) and not any(_exits(s) for s in stmts[:-1])


# ---------------------------------------------------------------- what one launch knows


@dataclass
class Decision:
    term: z3.BoolRef  # the condition as it stands on the path (the branch side taken)
    epoch: tuple  # (block, warp) epoch when it was taken
    span: N.Span
    pair: int  # both sides of one branch share it
    side: bool


@dataclass
class Exit:
    """A path that left the kernel: its conditions, the warp epoch it left at and the warp
    primitives it reached. A lane on it has exited, and a ``_sync`` primitive does not wait for it
    (PTX: "all non-exited threads in membermask")."""

    pc: tuple
    warp_epoch: z3.BitVecRef
    warp_ops: frozenset


@dataclass
class LaunchThreads:
    """The facts of one kernel launch the thread checks read."""

    thread: object  # host.Thread
    uniform: set  # z3 names every thread sees alike: inputs, the launch, uniform loads
    block_ids: set  # z3 names of blockIdx: kept for two threads of one block
    block_uniform: set = field(default_factory=set)  # values alike within a block (shared memory loads)
    warp_barriers: bool = False  # a __syncwarp ran: warp and block epochs may differ
    grid_barriers: bool = False  # a grid group's sync() ran: blocks are ordered too
    decisions: dict = field(default_factory=dict)  # pc term id -> Decision
    # (term id, same block) -> (term, its second thread's copy): renaming is by name, the same for
    # every pair query, and a path's conditions are renamed once, not once per pair.
    renamed: dict = field(default_factory=dict)
    pairs: itertools.count = field(default_factory=lambda: itertools.count(1))
    # Values loaded from global memory at an address threads may not share: z3 name -> (region id,
    # byte offset as an IntV). Two threads loading one address of memory the launch never writes read
    # one value.
    loads: dict = field(default_factory=dict)
    written: set = field(default_factory=set)  # ids of the regions the launch writes
    distinct: set = field(default_factory=set)  # ids of regions whose elements the binding states all different
    nondecreasing: dict = field(default_factory=dict)  # region id -> element size, of nondecreasing tensors
    # An atomicAdd's rank among the threads adding at its statement: z3 name -> (region id, byte
    # offset). Two threads adding at one address have different ranks (SecondThread.distinct_orders).
    orders: dict = field(default_factory=dict)
    depth: int = 0  # the call depth of the kernel's frame: a path that returns from it has exited
    exits: list = field(default_factory=list)  # Exit: the paths that left the kernel

    def varies(self, name: str, same_block: bool) -> bool:
        return name not in self.uniform and not (same_block and (name in self.block_ids or name in self.block_uniform))

    def varying(self, term, same_block: bool = True) -> bool:
        """Whether a term may differ between two threads (of one block)."""
        return any(self.varies(str(v), same_block) for v in _vars(term))

    # ------------------------------------------------------------ thread geometry

    def linear_tid(self, rename=None) -> z3.BitVecRef:
        """threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y, in 32 bits
        (at most 1024 threads)."""
        t, b = self.thread.tid.fields, self.thread.block.fields
        r = rename or (lambda x: x)
        out = r(t["x"].bv)
        # An axis of extent 1 adds nothing (its index is 0): leaving its product out keeps the
        # query free of multiplications by the symbolic block size.
        if not (b["y"].lo == b["y"].hi == 1):
            out = out + r(t["y"].bv) * b["x"].bv
        if not (b["z"].lo == b["z"].hi == 1):
            out = out + r(t["z"].bv) * b["x"].bv * b["y"].bv
        return out

    def other_thread(self, rename) -> z3.BoolRef:
        return z3.Or(*[v.bv != rename(v.bv) for v in self.thread.tid.fields.values()])


class SecondThread:
    """Renames what may differ between two threads; registers each renamed symbol like its
    original (its kind and origin: a finding that rests on the second thread's loaded value is
    judged as one resting on the first's), shown as "(second thread)" in witnesses."""

    def __init__(self, ctx, threads: LaunchThreads, same_block: bool = True):
        self.ctx = ctx
        self.threads = threads
        self.same_block = same_block
        self.names: dict[str, z3.ExprRef] = {}
        self._integers: dict = {}  # term id -> (term, its second thread's copy)
        self._shared_names: dict[str, bool] = {}

    def _renamed(self, v) -> z3.ExprRef:
        name = str(v)
        new = self.names.get(name)
        if new is None:
            new = z3.Const(name + PRIME, v.sort())
            self.names[name] = new
            sym = self.ctx.symbols.get(name)
            if sym is not None:
                deps = tuple(d + PRIME if self.threads.varies(d, self.same_block) else d for d in sym.deps)
                self.ctx.symbols[str(new)] = Symbol(sym.name + SECOND, new, sym.kind, sym.signed, sym.origin, deps)
                for d in sym.deps:
                    dsym = self.ctx.symbols.get(d)
                    if dsym is not None and self.threads.varies(d, self.same_block):
                        self._renamed(dsym.term if z3.is_const(dsym.term) else z3.Const(d, dsym.term.sort()))
            else:
                # Made in the kernel without a name a witness shows (a model's fresh result): a
                # finding that needs it is not decided by the thread indices alone.
                self.ctx.symbols[str(new)] = Symbol(f"a value of the second thread ({name})", new, "load", True,
                                                    ("unknown-call", name, False))
        return new

    def __call__(self, term):
        key = (term.get_id(), self.same_block)
        hit = self.threads.renamed.get(key)
        if hit is not None:
            return hit[1]
        pairs = [(v, self._renamed(v)) for v in _vars(term) if self.threads.varies(str(v), self.same_block)]
        out = z3.substitute(term, *pairs) if pairs else term
        self.threads.renamed[key] = (term, out)
        return out

    @staticmethod
    def _seconds(terms, table: dict):
        """(the first thread's constant, the second's, table entry) for each second-thread copy
        that ``terms`` mention of a constant ``table`` records."""
        seen = set()
        for t in terms:
            for v in _vars(t):
                name = str(v)
                if not name.endswith(PRIME) or name in seen:
                    continue
                seen.add(name)
                entry = table.get(name[:-len(PRIME)])
                if entry is not None:
                    yield z3.Const(name[:-len(PRIME)], v.sort()), v, entry

    def equal_loads(self, terms) -> list:
        """What two threads' loads share: for each value of the second thread that ``terms`` mention
        and that was loaded from memory the launch never writes, "the same address gives the same
        value" (``slot_mapping[token]`` read by every lane of a warp that handles one token)."""
        return [z3.Implies(off.bv == self(off.bv), original == v)
                for original, v, (rid, off) in self._seconds(terms, self.threads.loads)
                if rid not in self.threads.written]

    def _loads_of_both(self, terms, keep) -> tuple[dict, dict]:
        """The values ``terms`` mention that the first thread, and the second, loaded from memory
        the launch never writes, with ``keep(value, region id)``: z3 name -> (value, (region id,
        byte offset as an IntV)), one dict per thread."""
        threads = self.threads
        firsts, seconds = {}, {}
        for t in terms:
            for v in _vars(t):
                name = const_name(v)
                second = name.endswith(PRIME)
                load = threads.loads.get(name[:-len(PRIME)] if second else name)
                if load is None or load[0] in threads.written or not keep(v, load[0]):
                    continue
                (seconds if second else firsts)[name] = (v, load)
        return firsts, seconds

    def distinct_loads(self, terms, regions: set | None = None) -> list:
        """For each value of the first thread and each of the second that ``terms`` mention, loaded
        from one region the launch never writes (of ``regions``; None: any): "different addresses
        give different values", for values not below zero (padding, such as a slot mapping's -1,
        may repeat). True of a tensor the binding states distinct; of any other, the assumption
        under which a race that needs two equal elements disappears."""
        out = []
        firsts, seconds = self._loads_of_both(terms, lambda v, rid: regions is None or rid in regions)
        for u, (rid, off_u) in firsts.values():
            for v, (rid_v, off_v) in seconds.values():
                if rid == rid_v and u.sort() == v.sort():
                    # Negative values mark padding (a slot mapping's -1) and may repeat.
                    out.append(z3.Implies(z3.And(off_u.bv != self(off_v.bv), u >= 0), u != v))
        return out

    def integer_loads(self, terms) -> list:
        """equal_loads, distinct_loads and ordered_loads for integer terms (lia.py), over the load
        values both threads' terms mention: the integer pre-check of a race needs them where a
        split pair asks ``slot == slot'`` of two blocks' slot-mapping entries, or whether two
        blocks' segments of a nondecreasing ``cu_seq_lens`` meet."""
        from . import ints
        out = []
        firsts, seconds = self._loads_of_both(terms, lambda v, rid: z3.is_int(v))
        order = self.threads.nondecreasing
        for u, (rid, at_u) in firsts.values():
            for v, (rid_v, at_v) in seconds.values():
                if rid != rid_v:
                    continue
                off_u, off_v = ints.I(at_u), self.integers(ints.I(at_v))
                out.append(z3.Implies(off_u == off_v, u == v))
                if rid in self.threads.distinct:
                    # Negative values mark padding (a slot mapping's -1) and may repeat.
                    out.append(z3.Implies(z3.And(off_u != off_v, u >= 0), u != v))
                if rid in order and self._whole_element(u, order[rid]) and self._whole_element(v, order[rid]):
                    out += [z3.Implies(off_u <= off_v, u <= v), z3.Implies(off_v <= off_u, v <= u)]
        return out

    def _whole_element(self, v, size: int) -> bool:
        """Whether the integer ``v`` stands for a load of a whole ``size``-byte element."""
        name = const_name(v)
        sym = self.ctx.symbols.get(name[:-len(PRIME)] if name.endswith(PRIME) else name)
        return sym is not None and z3.is_bv(sym.term) and sym.term.size() == 8 * size

    def ordered_loads(self, terms) -> list:
        """For each element of a nondecreasing tensor (cumulative lengths, an ``indptr``) that the
        first thread loads and each the second loads, both mentioned in ``terms``: a lower element
        holds no more ("indptr[b + 1] <= indptr[b']" when b + 1 <= b': two blocks' segments do
        not overlap). Only whole elements (loads of the element's width) count."""
        order, out = self.threads.nondecreasing, []
        if not order:
            return out
        firsts, seconds = self._loads_of_both(
            terms, lambda v, rid: rid in order and z3.is_bv(v) and v.size() == 8 * order[rid])
        for u, (rid, off_u) in firsts.values():
            sym = self.ctx.symbols.get(str(u))
            le = (lambda x, y: x <= y) if sym is None or sym.signed else z3.ULE
            for v, (rid_v, off_v) in seconds.values():
                if rid == rid_v:
                    off_w = self(off_v.bv)
                    out.append(z3.Implies(off_u.bv <= off_w, le(u, v)))
                    out.append(z3.Implies(off_w <= off_u.bv, le(v, u)))
        return out

    def distinct_orders(self, terms) -> list:
        """For each atomicAdd rank of the second thread that ``terms`` mention: where the two
        threads add to the same address, their ranks differ (one of them came first)."""
        return [z3.Implies(off == self(off), original != v)
                for original, v, (_, off) in self._seconds(terms, self.threads.orders)]

    def integers(self, term: z3.ExprRef) -> z3.ExprRef:
        """An integer term (lia.py) of the first thread as the second thread's: every variable
        that may differ between the two renamed, and every auxiliary one (a product, a value the
        integers abstract) unless it is a function of values both threads share (``hidden *
        tokens``), which only weakens what the two threads share."""
        hit = self._integers.get(term.get_id())
        if hit is not None and hit[0].eq(term):
            return hit[1]
        pairs = [(v, z3.Const(const_name(v) + PRIME, v.sort())) for v in _vars(term) if not self._shared(v)]
        out = z3.substitute(term, *pairs) if pairs else term
        self._integers[term.get_id()] = (term, out)
        return out

    def shares(self, term: z3.ExprRef) -> bool:
        """Whether an integer term has one value for both threads."""
        return all(self._shared(v) for v in _vars(term))

    def _shared(self, v, depth: int = 0) -> bool:
        name = const_name(v)
        hit = self._shared_names.get(name)
        if hit is not None:
            return hit
        if name in self.ctx.symbols or name in self.threads.uniform or name in self.threads.block_ids \
                or name in self.threads.block_uniform:
            out = not self.threads.varies(name, self.same_block)
        else:
            parts = self.ctx.lia.stands_for(name) if depth < 8 else None
            out = parts is not None and all(self._shared(u, depth + 1) for t in parts for u in _vars(t))
        if depth == 0:
            self._shared_names[name] = out  # below the top, a cut-off answer is not the name's own
        return out

    def witness(self, model) -> dict:
        """The second thread's indices (and loop iterations the condition mentions)."""
        out = {}
        for sym in self.threads.thread.symbols:
            if not self.threads.varies(str(sym.term), self.same_block):
                continue
            v = model.eval(self(sym.term), model_completion=True)
            out[sym.name + SECOND] = v.as_long() if z3.is_bv_value(v) else str(v)
        return out


def second_thread_witness(ctx, threads: LaunchThreads, rename: SecondThread, model, cond) -> dict:
    """The witness of a two-thread finding: the first thread's (as any finding's), then the
    second's indices and the loop iterations of both."""
    out = ctx.witness(model, cond, threads.thread)
    out.update(rename.witness(model))
    return out


# ---------------------------------------------------------------- the interpreter's part


class ThreadOps:
    """Epochs, decisions and uniform values, kept while a kernel runs; the events the thread checks
    read."""

    def start_threads(self, kst, thread, uniform_terms) -> None:
        names = set(self.ctx.symbols)
        for t in list(kst.pc) + list(uniform_terms):
            names.update(str(v) for v in _vars(t))
        block_ids = {str(v.bv) for v in thread.bid.fields.values()}
        names -= block_ids | {str(v.bv) for v in thread.tid.fields.values()}
        for var, dims in (("blockIdx", thread.bid), ("threadIdx", thread.tid)):
            for axis, v in dims.fields.items():
                self.ctx.symbol(f"{var}.{axis}", v.bv, "thread", False)
        facts = getattr(self, "tensor_facts", None)
        self.ctx.threads = LaunchThreads(thread, names, block_ids,
                                         distinct=facts.distinct_regions() if facts is not None else set(),
                                         nondecreasing=facts.nondecreasing_regions() if facts is not None else {})
        self.ctx.threads.depth = len(kst.stack)
        kst.epoch = (_epoch(0), _epoch(0), _epoch(0))

    def end_threads(self) -> None:
        threads, self.ctx.threads = self.ctx.threads, None
        if threads is None:
            return
        self.ctx.launch_written |= threads.written
        for check in self.ctx.checks:
            check.on_kernel_end(self.ctx, threads)

    def barrier(self, st, span: N.Span, scope: str, name: str = "__syncthreads") -> None:
        """A barrier of ``scope`` (grid, block or warp; a wider one is a barrier of the narrower
        ones too): the checks see where it is reached, then the path enters the next interval."""
        if st.epoch is None:
            return
        if not self._silent:
            ev = Barrier(scope, name, *N.in_user_code(span, self.stack_spans(st)))
            for check in self.ctx.checks:
                check.on_barrier(self.ctx, st, ev)
        block, warp, grid = st.epoch
        st.epoch = (block + 1 if scope in ("block", "grid") else block, warp + 1,
                    grid + 1 if scope == "grid" else grid)
        threads = self.ctx.threads
        if scope == "warp" and threads is not None:
            threads.warp_barriers = True
        if scope == "grid" and threads is not None:
            threads.grid_barriers = True

    def warp_sync(self, st, call, mask, source: tuple | None = None) -> None:
        """A warp primitive with a lane mask (and, for a shuffle, the lane it reads: ``source``, see
        events.WarpSync): the checks see which lanes it names; the path remembers reaching it."""
        if st.epoch is None or self._silent:
            return
        if not isinstance(mask, IntV):
            mask = const_int(FULL_MASK, T.UINT32)
        ev = WarpSync(call.name, mask, *N.in_user_code(call.span, self.stack_spans(st)), source)
        for check in self.ctx.checks:
            check.on_warp_sync(self.ctx, st, ev)
        st.warp_ops = st.warp_ops | {ev.span}

    def is_kernel_frame(self, st) -> bool:
        """Whether a call made from ``st`` is the kernel's own (its returns leave the kernel)."""
        threads = self.ctx.threads
        return threads is not None and st.thread is not None and len(st.stack) == threads.depth

    def note_exits(self, states) -> None:
        """The paths that return from the kernel's frame: their lanes have exited."""
        threads = self.ctx.threads
        for x in states:
            if x.epoch is not None:
                threads.exits.append(Exit(x.pc, x.epoch[1], x.warp_ops))

    def note_decision(self, sides: list, span: N.Span | None) -> None:
        """Both sides of a kernel branch were taken: remember each side's condition."""
        threads = self.ctx.threads
        if threads is None or len(sides) != 2:
            return
        pair = next(threads.pairs)
        for holds, s in sides:
            if s.pc and s.epoch is not None:
                term = s.pc[-1]
                threads.decisions.setdefault(term.get_id(), Decision(term, s.epoch, span or N.NO_SPAN, pair, holds))

    def assume_decision(self, st, term, span: N.Span, pair: int, side: bool, barriers: bool = True,
                        epoch: tuple | None = None) -> None:
        """A loop condition assumed on a summarised iteration (or its negation at the exit). Only a
        loop with barriers inside decides which barriers a thread reaches: a thread that stays in
        a loop without one reaches the barrier after it all the same."""
        st.assume(term)
        threads = self.ctx.threads
        if threads is not None and st.epoch is not None and barriers and not z3.is_true(term):
            threads.decisions.setdefault(term.get_id(), Decision(term, epoch or st.epoch, span, pair, side))

    def new_pair(self) -> int:
        return next(self.ctx.threads.pairs) if self.ctx.threads is not None else 0

    # ------------------------------------------------------------ loops

    def loop_barriers(self, loop, cond, inc, body) -> tuple[int, int, int] | None:
        key = ("barriers", id(loop))
        if key not in self._shapes:
            parts = [barrier_count(x, self.program.functions) for x in (cond, inc, body)]
            self._shapes[key] = None if None in parts else tuple(map(sum, zip(*parts)))
        return self._shapes[key]

    def loop_epochs(self, loop, cond, inc, body, entry, exit_state, k, where: str) -> tuple | None:
        """Epochs of a summarised loop's iteration and exit (see the module's docstring). Returns
        the epoch at which a thread decides to leave: its exit epoch when the iteration it leaves at
        is known, else an unknown one (a divergence resting on it is the summary's imprecision)."""
        if entry.epoch is None:
            return None
        counts = self.loop_barriers(loop, cond, inc, body)
        if counts == NO_BARRIERS:
            return None
        e0 = entry.epoch
        if counts is None:
            # The number of barriers per iteration depends on the path: the interval of an access
            # in the loop is not known, and a race that needs it is the summary's imprecision.
            what = f"barrier interval in loop at {where} (the body passes a different number of barriers on different paths)"
            entry.epoch = tuple(self._epoch_symbol(what, "havoc") for _ in NO_BARRIERS)
            after = tuple(self._epoch_symbol(f"barrier interval after loop at {where}", "uniform") for _ in NO_BARRIERS)
            exit_state.epoch = after
            return entry.epoch
        it = z3.ZeroExt(EPOCH_BITS - k.size(), k) if k is not None else self._iteration(where)
        entry.epoch = tuple(e + it * c for e, c in zip(e0, counts))
        if k is not None and cond is not None:
            exit_state.epoch = entry.epoch  # at the exit, k is the iteration the condition failed at
            return exit_state.epoch
        n = self._epoch_symbol(f"iterations of loop at {where}", "uniform")
        exit_state.epoch = tuple(e + n * c for e, c in zip(e0, counts))
        what = f"iteration at which a thread leaves loop at {where}"
        leave = self._epoch_symbol(what, "havoc")
        return tuple(e + leave * c for e, c in zip(e0, counts))

    def _iteration(self, where: str) -> z3.BitVecRef:
        k = z3.BitVec(self.ctx.fresh_name("iteration"), 40)
        self.ctx.symbol(f"iteration of loop at {where}", k, "loop", signed=False)
        return z3.ZeroExt(EPOCH_BITS - 40, k)

    def _epoch_symbol(self, what: str, kind: str) -> z3.BitVecRef:
        v = z3.BitVec(self.ctx.fresh_name("epoch"), EPOCH_BITS)
        if kind == "uniform":
            if self.ctx.threads is not None:
                self.ctx.threads.uniform.add(str(v))
        else:
            self.ctx.symbol(what, v, kind, signed=False)
        return v

    # ------------------------------------------------------------ values every thread sees alike

    def note_uniform_load(self, st, region, off, value) -> None:
        """A load from an address no thread-dependent value reaches (``s_total`` after a barrier,
        a kernel argument's element 0) gives every thread the same value, and one that only
        blockIdx moves every thread of the block: it is not renamed for the second thread (of the
        block). (If another thread wrote it in the same interval, that is a race the race
        check reports.)"""
        threads = self.ctx.threads
        if threads is None or st.thread is None or not isinstance(value, IntV):
            return
        if region.kind not in ("shared", "dynamic_shared", "global", "constant"):
            return
        shared = region.kind in ("shared", "dynamic_shared")
        if threads.varying(off.bv, same_block=True):
            if not shared and z3.is_const(value.bv):
                threads.loads[str(value.bv)] = (region.id, off)  # SecondThread.equal_loads
            return
        if region.kind != "constant" and threads.varying(st.epoch[0]):
            return  # an interval only some iterations share
        # An address that only the block index moves (a per-block entry of an index tensor, such
        # as `lora_ids[blockIdx.x / 2]`) gives the threads of one block the same value.
        block_only = shared or threads.varying(off.bv, same_block=False)
        if block_only and not shared and z3.is_const(value.bv):
            threads.loads[str(value.bv)] = (region.id, off)  # two blocks' loads: equal_loads, distinct_loads
        (threads.block_uniform if block_only else threads.uniform).update(str(v) for v in _vars(value.bv))


def values_terms(values) -> list:
    """The terms inside some values (integers, pointer offsets, struct fields): what a kernel
    receives from its launch, the same for every thread."""
    from .values import PtrV, StructV
    out: list = []
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, IntV):
            out.append(v.bv)
        elif isinstance(v, PtrV):
            out.append(v.off.bv)
        elif isinstance(v, StructV):
            stack.extend(v.fields.values())
    return out


def shuffle_source(name: str, t, d, width: int):
    """The lane (or threadIdx.x, warps being aligned runs of it) that a shuffle at lane ``t`` reads,
    ``t`` itself where it reads none and returns its own value: ``d`` is the source lane
    (``__shfl_sync``), the delta (``_up``/``_down``) or the lane mask (``_xor``), within segments of
    ``width`` lanes (CUDA programming guide, warp shuffle functions)."""
    seg = t & ~z3.BitVecVal(width - 1, 32)
    pos = t & (width - 1)
    if name == "__shfl_sync":
        return seg | (d & (width - 1))
    if name == "__shfl_up_sync":
        return z3.If(z3.UGE(pos, d), t - d, t)
    if name == "__shfl_down_sync":
        return z3.If(z3.ULT(pos + d, width), t + d, t)
    x = t ^ d
    return z3.If(z3.UGT(x & ~z3.BitVecVal(width - 1, 32), seg), t, x)


def exited(threads: LaunchThreads, rename, place, before: frozenset, epoch) -> z3.BoolRef:
    """That the second thread (``rename``) has left the kernel by the time a lane at warp epoch
    ``epoch`` reaches the warp primitive ``place``, having reached the primitives ``before``: it is
    on an exit path that reached no warp primitive this lane did not (a different shuffle, one it
    would wait at) and passed no barrier this lane has not passed (one it would wait at)."""
    return _leaving(threads, rename, place, before, epoch, later=False)


def waits_at_barrier(threads: LaunchThreads, rename, place, before: frozenset, epoch) -> z3.BoolRef:
    """That the second thread, reaching no other warp primitive, is on its way to a barrier the lane
    at ``place`` has not passed: it waits there while the primitive waits for it (a hang)."""
    return _leaving(threads, rename, place, before, epoch, later=True)


def _leaving(threads: LaunchThreads, rename, place, before: frozenset, epoch, later: bool) -> z3.BoolRef:
    reached = before | {place}
    out = []
    for x in threads.exits:
        if not x.warp_ops <= reached:
            continue
        when = z3.simplify(z3.UGT(rename(x.warp_epoch), epoch) if later else z3.ULE(rename(x.warp_epoch), epoch))
        if z3.is_false(when):
            continue
        out.append(z3.And(*[rename(t) for t in x.pc], when))
    return z3.Or(*out) if out else z3.BoolVal(False)


def warp_of(threads: LaunchThreads, rename=None):
    return z3.UDiv(threads.linear_tid(rename), WARP_SIZE)


def lane_of(threads: LaunchThreads, rename=None):
    return z3.URem(threads.linear_tid(rename), WARP_SIZE)


# ---------------------------------------------------------------- divergence


@dataclass
class Divergence:
    """A decision on the path to a barrier or warp primitive that a second thread takes the other
    way, at the same epoch: ``model`` shows both threads."""

    decision: Decision
    model: object
    rename: SecondThread
    cond: z3.BoolRef  # what the witness rests on (the decision on both threads, the peer relation)
    constraints: list  # the whole query (for a smaller witness)


def diverging(ctx, threads: LaunchThreads, pc: tuple, peer, skip=frozenset(), asked: set | None = None,
              same_block: bool = True) -> Divergence | None:
    """The first decision of ``pc`` (taken by this thread on its way here) that another thread of
    the same block (of the grid: ``same_block`` False), related to this one by ``peer(rename)``
    (the same warp, a lane of a mask),
    takes the other way at the same epoch. Decisions every thread takes alike are skipped without a
    query, and so are those in ``skip`` ((pair, side): the other side reaches the same place too)
    and those already in ``asked`` (the same place reached again on a longer path, an unrolled
    iteration: asked once per place). Raises SolverUnknown when a query cannot be decided."""
    for i, t in enumerate(pc):
        d = threads.decisions.get(t.get_id())
        if d is None or not d.term.eq(t) or (d.pair, d.side) in skip or not threads.varying(t, same_block):
            continue
        if asked is not None:
            if (d.pair, d.side) in asked:
                continue
            asked.add((d.pair, d.side))
        rename = SecondThread(ctx, threads, same_block)
        other = threads.other_thread(rename) if same_block else z3.Or(
            *[v.bv != rename(v.bv) for v in (*threads.thread.tid.fields.values(), *threads.thread.bid.fields.values())])
        cond = z3.And(t, rename(z3.Not(t)), d.epoch[0] == rename(d.epoch[0]), d.epoch[1] == rename(d.epoch[1]),
                      other, *peer(rename))
        ctx.tick()
        constraints = list(pc) + [rename(x) for x in pc[:i]] + [cond]
        # Only the loads the two sides' condition reads: facts for every load of the path cost
        # more solver time than the answers they change.
        constraints += rename.equal_loads([cond])
        model = ctx.solver.model(constraints)
        if model is not None:
            return Divergence(d, model, rename, cond, constraints)
    return None


def thread_text(threads: LaunchThreads, model, rename=None) -> str:
    """threadIdx (and blockIdx where the grid has several blocks) of one thread, as a reader writes them."""
    parts = []
    for var, dims in (("threadIdx", threads.thread.tid.fields), ("blockIdx", threads.thread.bid.fields)):
        bounds = threads.thread.block.fields if var == "threadIdx" else threads.thread.grid.fields
        axes = [a for a in "xyz" if not (bounds[a].lo == bounds[a].hi == 1)]
        if not axes and var == "blockIdx":
            continue
        axes = axes or ["x"]
        vals = []
        for a in axes:
            term = dims[a].bv if rename is None else rename(dims[a].bv)
            v = model.eval(term, model_completion=True)
            vals.append(str(v.as_long()) if z3.is_bv_value(v) else "?")
        parts.append(f"{var}.{''.join(axes)}=({', '.join(vals)})" if len(axes) > 1 else f"{var}.{axes[0]}={vals[0]}")
    return " ".join(parts)


def small_model(ctx, threads: LaunchThreads, constraints: list, model, prefer: list | None = None):
    """A witness a maintainer can run: every size at its smallest and block 0 when the finding
    holds there (a race in one block rarely needs a large input), else the smallest first size.
    ``prefer``: conditions the witness should meet (two threads in different warps, whose race a
    sanitizer sees where one warp's accesses run in program order): kept while it shrinks when the
    model meets them, else sought first, at the smallest sizes and then at any."""
    dims = [(term, ctx.dim_lo[name]) for name, term in ctx.dim_order if name in ctx.dim_lo]
    blocks = [v.bv == 0 for v in threads.thread.bid.fields.values()]
    smallest = [t == lo for t, lo in dims] + blocks
    if prefer and not all(z3.is_true(model.eval(c, model_completion=True)) for c in prefer):
        # The model at hand does not meet them (two lanes of one warp): sought first, once.
        better = ctx._try_model(constraints + smallest + prefer, WITNESS_EFFORT)
        if better is None and not ctx.over_budget():
            # Larger sizes may be what puts the two threads in different warps (more live rows).
            better = ctx._try_model(constraints + blocks + prefer, WITNESS_EFFORT)
            if better is not None and ctx.dim_order:
                better = ctx._bisect(constraints + blocks + prefer, {}, better, steps=6, effort=WITNESS_EFFORT)
        if better is not None:
            return better
    elif prefer:
        constraints = constraints + prefer  # kept while the witness shrinks
    for fixed in (smallest, [t == lo for t, lo in dims]):
        if not fixed or ctx.over_budget():
            continue
        better = ctx._try_model(constraints + fixed, WITNESS_EFFORT)
        if better is not None:
            return better
    if blocks and not ctx.over_budget():
        # The smallest sizes launch too few blocks for the finding (two blocks racing on global
        # memory): block 0 at larger sizes, the sizes then bisected.
        better = ctx._try_model(constraints + blocks, WITNESS_EFFORT)
        if better is not None:
            constraints, model = constraints + blocks, better
    return ctx._bisect(constraints, {}, model, steps=6, effort=WITNESS_EFFORT) if ctx.dim_order else model
