"""Shared-memory counters a kernel starts before a barrier.

    __shared__ int s_count;
    if (threadIdx.x == 0) s_count = 0;
    __syncthreads();
    ...
    const int slot = atomicAdd(&s_count, 1);

The engine runs one thread and does not track shared-memory contents, so the old value such an
``atomicAdd`` returns would be unknown. Read off the kernel's body instead: when the counter's only
plain store is one constant, made at the top level of the kernel (or under ``threadIdx.x == 0``,
which some thread of every block takes) before a block barrier that every path reaches, and after
that barrier the counter is only read and advanced by one ``atomicAdd`` of a non-negative constant,
then every thread that adds finds it at that constant plus what the threads before it added
(models/cuda._counted counts them). Anything else (a second store, a store in a loop or a branch
on other values, an exit before the barrier, the address passed elsewhere, a second ``atomicAdd``
site) leaves the old value unknown, as before.

An array of counters (one per expert, per bucket) is started the same way when one statement
fills every element with one constant before the barrier:

    for (int e = threadIdx.x; e < kExperts; e += blockDim.x) s_count[e] = 0;   // any block size
    if (threadIdx.x == 0) for (int e = 0; e < kExperts; ++e) s_count[e] = 0;
    if (threadIdx.x < kExperts) s_count[threadIdx.x] = 0;   // only with blockDim.x >= kExperts

and afterwards its elements are only read and advanced by ``atomicAdd(&s_count[e], k)``. The last
form starts every element only when the block has as many threads as the array has elements:
``Start.min_threads``, which models/cuda._counted asks the path to imply.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..kir import nodes as N
from ..kir import types as T
from .threads import _returns, is_block_barrier


@dataclass(frozen=True)
class AddSites:
    """The integer ``atomicAdd`` calls of one pass through a kernel (a call to a function counts
    that function's): how many one path may make, counting a site inside a loop once (``per_path``)
    and as unbounded (``per_path_loops``), and the constant steps they add (None: one is not a
    constant). A counted old value (models/cuda._counted) needs every thread to add at most once,
    by the same step: the engine cannot tell which counter each site adds to."""

    per_path: int
    per_path_loops: int
    steps: frozenset
    total: int = 0  # sites in all, each once (one site: its step is the one its call passes)


UNBOUNDED = 2  # a site in a loop may add any number of times: "more than once" is all that matters


def atomic_add_sites(kernel: N.Function, functions) -> AddSites:
    """Additions along the path that makes the most: branches of an ``if`` or a ``?:`` are
    alternatives (a thread takes one), so exclusive sites (`keep ? atomicAdd(&n_keep, 1) :
    atomicAdd(&n_drop, 1)`) make one addition; floating-point additions (sums, histograms of
    weights) never reach an integer counter."""
    memo: dict[str, tuple] = {}
    steps: set = set()

    def sites(fn, seen: frozenset) -> tuple:
        if fn.key not in memo:
            memo[fn.key] = count(fn.body, seen) if fn.body is not None else (0, 0, 0)
        return memo[fn.key]

    def total(parts) -> tuple:
        """Sites one after the other: each count adds up."""
        return tuple(map(sum, zip((0, 0, 0), *parts)))

    def count(node, seen: frozenset) -> tuple:
        """(per_path, per_path_loops, total) of ``node``, as AddSites has them."""
        if node is None:
            return 0, 0, 0
        if isinstance(node, N.Cond) and _one_addition(node):
            # `block ? atomicAdd_block(p, v) : atomicAdd(p, v)` (the libcu++ shim): one addition.
            steps.add(N.int_literal(N.uncast(node.then).args[1], N.uncast))
            return total([(1, 1, 1), *(count(a, seen) for a in node.then.args)])
        if isinstance(node, (N.If, N.Cond)):
            then, els = count(node.then, seen), count(node.els, seen)
            before = total(count(c, seen) for c in (getattr(node, "init", None), node.cond))
            return total([before, (max(then[0], els[0]), max(then[1], els[1]), then[2] + els[2])])
        if isinstance(node, (N.For, N.While, N.DoWhile)):
            path, path_loops, n = total(count(c, seen) for c in N.children(node))
            return path, UNBOUNDED if path_loops else 0, n
        own = (0, 0, 0)
        if isinstance(node, N.Call):
            if _integer_add(node):
                own = (1, 1, 1)
                steps.add(N.int_literal(node.args[1], N.uncast) if len(node.args) > 1 else None)
            elif node.func and node.func not in seen and node.func in functions:
                own = sites(functions[node.func], seen | {node.func})
        return total([own, *(count(c, seen) for c in N.children(node))])

    once, unbounded, n = sites(kernel, frozenset({kernel.key}))
    return AddSites(once, unbounded, frozenset(steps), n)


def _integer_add(call) -> bool:
    return isinstance(call, N.Call) and call.name.startswith("atomicAdd") and isinstance(T.strip_ref(call.ty), T.IntType)


def _one_addition(cond: N.Cond) -> bool:
    """Both sides add the same operand to the same address, at two scopes."""
    a, b = N.uncast(cond.then), N.uncast(cond.els)
    return _integer_add(a) and _integer_add(b) and len(a.args) == len(b.args) == 2 \
        and all(_same_operand(x, y) for x, y in zip(a.args, b.args))


def _same_operand(a, b) -> bool:
    a, b = N.uncast(a), N.uncast(b)
    if isinstance(a, N.Var) and isinstance(b, N.Var):
        return a.decl.id == b.decl.id
    if isinstance(a, N.Member) and isinstance(b, N.Member):
        return a.field == b.field and a.arrow == b.arrow and _same_operand(a.base, b.base)
    if isinstance(a, N.This) and isinstance(b, N.This):
        return True
    la, lb = N.int_literal(a, N.uncast), N.int_literal(b, N.uncast)
    return la is not None and la == lb


@dataclass(frozen=True)
class Start:
    """What a started counter holds when the first thread adds to it."""

    value: int
    # The block must have at least this many threads in x for every element to be started (the
    # ``if (threadIdx.x < N) s[threadIdx.x] = c`` form); 0: any block.
    min_threads: int = 0


def started_counters(kernel: N.Function) -> dict[int, Start]:
    """The ``__shared__`` integer counters (and arrays of them) of ``kernel`` whose start is known."""
    body = kernel.body
    if body is None:
        return {}
    stmts = body.stmts
    out: dict[int, Start] = {}
    for s in stmts:
        if not (isinstance(s, N.Decl) and s.var.storage == "shared"):
            continue
        var = s.var
        if isinstance(var.ty, T.IntType):
            start = _start(stmts, var.id, lambda stmt, value: Start(value) if _stores_once(stmt) else None)
        elif isinstance(var.ty, T.ArrayType) and isinstance(var.ty.elem, T.IntType) and var.ty.count:
            start = _start(stmts, var.id, lambda stmt, _, n=var.ty.count, vid=var.id: _fills(stmt, vid, n))
        else:
            continue
        if start is not None:
            out[var.id] = start
    return out


def _start(stmts: tuple, vid: int, starts) -> Start | None:
    """The start of counter ``vid`` when one statement stores it before a barrier every thread
    reaches (``starts(stmt, the constant stored)``: the Start that statement gives, or None), and
    only additions and reads follow that barrier."""
    stores, adds = [], []
    for i, s in enumerate(stmts):
        for kind, value in _uses(s, vid):
            if kind in ("other", "element"):  # "element": an element of an element (not a counter array)
                return None
            if kind == "store":
                stores.append((i, value))
            elif kind == "add":
                adds.append(i)
    if len(stores) != 1 or len(adds) != 1 or stores[0][1] is None:
        return None
    at, value = stores[0]
    start = starts(stmts[at], value)
    if start is None:
        return None
    barrier = next((j for j in range(at + 1, len(stmts)) if _is_barrier_stmt(stmts[j])), None)
    if barrier is None or adds[0] <= barrier:
        return None
    if any(_returns(s) for s in stmts[:barrier]):
        return None  # a thread that leaves before the barrier may be the one that stores
    return start


def _uses(stmt, vid: int):
    """(kind, value) of every use of the variable in ``stmt``: "store" (``v = constant``; value None
    when the right side is not a constant), "add" (``atomicAdd(&v, k)``, k >= 0), "read", or "other"
    (a write of another kind, the address taken for anything but that atomicAdd)."""
    stack = [(stmt, None, None)]
    while stack:
        node, parent, grandparent = stack.pop()
        if isinstance(node, N.Var) and node.decl.id == vid:
            kind, value = _use(parent, node)
            # An element: used as the variable itself would be (stored, read), or decayed to a
            # pointer (passed on: "other").
            yield _use(grandparent, parent) if kind == "element" else (kind, value)
            continue
        if isinstance(node, N.Call) and _is_counting_add(node, vid):
            yield ("add", None)
            stack.extend((c, node, parent) for c in node.args[1:])
            target = N.uncast(N.uncast(node.args[0]).operand)
            if isinstance(target, N.Index):
                stack.append((target.index, target, node))  # the element an array counter adds to
            continue
        if isinstance(node, N.Cast):
            stack.append((node.operand, parent, grandparent))  # an array's decay to a pointer, a read's conversion
            continue
        stack.extend((c, node, parent) for c in N.children(node))


def _use(parent, var) -> tuple:
    if isinstance(parent, N.Index) and N.uncast(parent.base) is var:
        return ("element", None)  # an array's element: _uses looks at what is done with it
    if isinstance(parent, N.Assign) and N.uncast(parent.lhs) is var:
        if parent.op != "=":
            return ("other", None)
        return ("store", N.int_literal(parent.rhs, N.uncast))
    if isinstance(parent, (N.IncDec, N.AddrOf)):
        return ("other", None)
    if isinstance(parent, N.Call) and any(isinstance(t, T.RefType) and not t.const for t in parent.param_types):
        return ("other", None)  # bound to a non-const reference parameter: the callee may write it
    return ("read", None)


def _is_counting_add(call: N.Call, vid: int) -> bool:
    """``atomicAdd(&v, k)`` or, for an array, ``atomicAdd(&v[e], k)``, k a constant >= 0."""
    if call.name not in ("atomicAdd", "atomicAdd_block") or len(call.args) != 2:
        return False
    target = N.uncast(call.args[0])
    if not isinstance(target, N.AddrOf):
        return False
    counter = N.uncast(target.operand)
    if isinstance(counter, N.Index):
        counter = N.uncast(counter.base)
    if not (isinstance(counter, N.Var) and counter.decl.id == vid):
        return False
    step = N.int_literal(call.args[1], N.uncast)
    return step is not None and step >= 0


def _stores_once(stmt) -> bool:
    """The store is the statement itself, or the whole of an ``if`` that some thread of every block
    takes (``threadIdx.x == 0``), with no ``else``."""
    if isinstance(stmt, N.ExprStmt):
        return True
    if isinstance(stmt, N.If) and stmt.els is None and stmt.init is None and _first_thread(stmt.cond):
        then = stmt.then
        if isinstance(then, N.Block) and len(then.stmts) == 1:
            then = then.stmts[0]
        return isinstance(then, N.ExprStmt)
    return False


def _fills(stmt, vid: int, n: int) -> Start | None:
    """The start of every element of an ``n``-element array ``vid`` that ``stmt`` fills with one
    constant: a block-stride loop over [0, K) (any block), a loop over [0, K) that one thread or
    every thread runs, or ``threadIdx.x < K`` storing at ``threadIdx.x`` (blocks of >= n threads);
    K >= n (a larger K writes past the end, which the bounds checks report)."""
    if isinstance(stmt, N.If) and stmt.els is None and stmt.init is None:
        then = _only(stmt.then)
        if _first_thread(stmt.cond) and isinstance(then, N.For):
            return _fill_loop(then, vid, n, block_stride=False)
        k = _below_thread_index(stmt.cond)
        value = _element_store(then, vid, _thread_index)
        if k is not None and k >= n and value is not None:
            return Start(value, min_threads=n)
        return None
    if isinstance(stmt, N.For):
        return _fill_loop(stmt, vid, n, block_stride=True) or _fill_loop(stmt, vid, n, block_stride=False)
    return None


def _fill_loop(loop: N.For, vid: int, n: int, block_stride: bool) -> Start | None:
    """``for (int i = threadIdx.x; i < K; i += blockDim.x) v[i] = c`` (``block_stride``) or
    ``for (int i = 0; i < K; ++i) v[i] = c``."""
    init = loop.init
    if not (isinstance(init, N.Decl) and init.init is not None and isinstance(init.var.ty, T.IntType)):
        return None
    i = init.var.id
    first = N.uncast(init.init)
    if not (_thread_index(first, "x") if block_stride else N.int_literal(first, N.uncast) == 0):
        return None
    cond = N.uncast(loop.cond) if loop.cond is not None else None
    if not (isinstance(cond, N.Binary) and cond.op == "<" and _is_var(cond.lhs, i)):
        return None
    k = N.int_literal(cond.rhs, N.uncast)
    if k is None or k < n or not _steps(loop.inc, i, block_stride):
        return None
    value = _element_store(_only(loop.body), vid, lambda e: _is_var(e, i))
    return Start(value) if value is not None else None


def _steps(inc, i: int, block_stride: bool) -> bool:
    """``i += blockDim.x`` (``block_stride``), else ``++i`` / ``i++`` / ``i += 1``."""
    inc = N.uncast(inc) if inc is not None else None
    if isinstance(inc, N.IncDec):
        return not block_stride and inc.op == "++" and _is_var(inc.operand, i)
    if not (isinstance(inc, N.Assign) and inc.op == "+=" and _is_var(inc.lhs, i)):
        return False
    step = N.uncast(inc.rhs)
    if block_stride:
        return isinstance(step, N.Member) and isinstance(N.uncast(step.base), N.Global) \
            and N.uncast(step.base).name == "blockDim" and step.field == "x"
    return N.int_literal(step, N.uncast) == 1


def _element_store(stmt, vid: int, index_ok) -> int | None:
    """c, when ``stmt`` is ``v[index] = c`` with ``index_ok(index)``."""
    if not isinstance(stmt, N.ExprStmt):
        return None
    e = N.uncast(stmt.expr)
    if not (isinstance(e, N.Assign) and e.op == "=" and isinstance(N.uncast(e.lhs), N.Index)):
        return None
    lhs = N.uncast(e.lhs)
    if not (_is_var(lhs.base, vid) and index_ok(N.uncast(lhs.index))):
        return None
    return N.int_literal(e.rhs, N.uncast)


def _below_thread_index(cond) -> int | None:
    """K of ``threadIdx.x < K``."""
    cond = N.uncast(cond)
    if isinstance(cond, N.Binary) and cond.op == "<" and _thread_index(N.uncast(cond.lhs), "x"):
        return N.int_literal(cond.rhs, N.uncast)
    return None


def _only(stmt):
    """The one statement of a block, or the statement."""
    if isinstance(stmt, N.Block) and len(stmt.stmts) == 1:
        return stmt.stmts[0]
    return stmt


def _is_var(e, vid: int) -> bool:
    e = N.uncast(e)
    return isinstance(e, N.Var) and e.decl.id == vid


def _first_thread(cond) -> bool:
    """``threadIdx.x == 0`` (and ``&&`` of such for y and z): a condition thread (0, 0, 0) meets."""
    cond = N.uncast(cond)
    if isinstance(cond, N.Binary) and cond.op == "&&":
        return _first_thread(cond.lhs) and _first_thread(cond.rhs)
    if not (isinstance(cond, N.Binary) and cond.op == "=="):
        return False
    sides = (N.uncast(cond.lhs), N.uncast(cond.rhs))
    return any(N.int_literal(a, N.uncast) == 0 and _thread_index(b) for a, b in (sides, sides[::-1]))


def _thread_index(e, axis: str | None = None) -> bool:
    return isinstance(e, N.Member) and isinstance(N.uncast(e.base), N.Global) and N.uncast(e.base).name == "threadIdx" \
        and (axis is None or e.field == axis)


def _is_barrier_stmt(stmt) -> bool:
    if not isinstance(stmt, N.ExprStmt):
        return False
    call = N.uncast(stmt.expr)
    return isinstance(call, N.Call) and is_block_barrier(call.name)
