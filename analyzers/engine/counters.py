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
"""
from __future__ import annotations

from ..kir import nodes as N
from ..kir import types as T
from .threads import _returns, is_block_barrier


def atomic_add_sites(kernel: N.Function, functions) -> int:
    """How many integer ``atomicAdd`` calls one pass through ``kernel`` may make, loops aside (a
    call to a function counts that function's sites): a counted old value (models/cuda._counted)
    needs the counter's to be the only one, as the engine cannot tell which counter each adds to.
    Floating-point additions (sums, histograms of weights) never reach an integer counter."""
    memo: dict[str, int] = {}

    def sites(fn, seen: frozenset) -> int:
        if fn.key not in memo:
            memo[fn.key] = count(fn.body, seen) if fn.body is not None else 0
        return memo[fn.key]

    def count(node, seen: frozenset) -> int:
        if isinstance(node, N.Cond) and _one_addition(node):
            # `block ? atomicAdd_block(p, v) : atomicAdd(p, v)` (the libcu++ shim): one addition.
            return 1 + sum(count(a, seen) for a in node.then.args)
        n = 0
        if isinstance(node, N.Call):
            if _integer_add(node):
                n = 1
            elif node.func and node.func not in seen and node.func in functions:
                n = sites(functions[node.func], seen | {node.func})
        return n + sum(count(c, seen) for c in N.children(node))

    return sites(kernel, frozenset({kernel.key}))


def _integer_add(call) -> bool:
    return isinstance(call, N.Call) and call.name.startswith("atomicAdd") and isinstance(T.strip_ref(call.ty), T.IntType)


def _one_addition(cond: N.Cond) -> bool:
    """Both sides add the same operand to the same address, at two scopes."""
    a, b = _strip(cond.then), _strip(cond.els)
    return _integer_add(a) and _integer_add(b) and len(a.args) == len(b.args) == 2 \
        and all(_same_operand(x, y) for x, y in zip(a.args, b.args))


def _same_operand(a, b) -> bool:
    a, b = _strip(a), _strip(b)
    if isinstance(a, N.Var) and isinstance(b, N.Var):
        return a.decl.id == b.decl.id
    if isinstance(a, N.Member) and isinstance(b, N.Member):
        return a.field == b.field and a.arrow == b.arrow and _same_operand(a.base, b.base)
    if isinstance(a, N.This) and isinstance(b, N.This):
        return True
    la, lb = N.int_literal(a, _strip), N.int_literal(b, _strip)
    return la is not None and la == lb


def started_counters(kernel: N.Function) -> dict[int, int]:
    """The ``__shared__`` integer counters of ``kernel`` whose start is known: variable id -> value."""
    body = kernel.body
    if body is None:
        return {}
    stmts = body.stmts
    counters = [s.var for s in stmts if isinstance(s, N.Decl) and s.var.storage == "shared"
                and isinstance(s.var.ty, T.IntType)]
    out: dict[int, int] = {}
    for var in counters:
        start = _start(stmts, var.id)
        if start is not None:
            out[var.id] = start
    return out


def _start(stmts: tuple, vid: int) -> int | None:
    stores, adds = [], []
    for i, s in enumerate(stmts):
        for kind, value in _uses(s, vid):
            if kind == "other":
                return None
            if kind == "store":
                stores.append((i, value))
            elif kind == "add":
                adds.append(i)
    if len(stores) != 1 or len(adds) != 1 or stores[0][1] is None:
        return None
    at, value = stores[0]
    if not _stores_once(stmts[at]):
        return None
    barrier = next((j for j in range(at + 1, len(stmts)) if _is_barrier_stmt(stmts[j])), None)
    if barrier is None or adds[0] <= barrier:
        return None
    if any(_returns(s) for s in stmts[:barrier]):
        return None  # a thread that leaves before the barrier may be the one that stores
    return value


def _uses(stmt, vid: int):
    """(kind, value) of every use of the variable in ``stmt``: "store" (``v = constant``; value None
    when the right side is not a constant), "add" (``atomicAdd(&v, k)``, k >= 0), "read", or "other"
    (a write of another kind, the address taken for anything but that atomicAdd)."""
    stack = [(stmt, None)]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, N.Var) and node.decl.id == vid:
            yield _use(parent, node)
            continue
        if isinstance(node, N.Call) and _is_counting_add(node, vid):
            yield ("add", None)
            stack.extend((c, node) for c in node.args[1:])
            continue
        stack.extend((c, node) for c in N.children(node))


def _use(parent, var) -> tuple:
    if isinstance(parent, N.Assign) and parent.lhs is var:
        if parent.op != "=":
            return ("other", None)
        return ("store", N.int_literal(parent.rhs, _strip))
    if isinstance(parent, (N.IncDec, N.AddrOf)):
        return ("other", None)
    if isinstance(parent, N.Call) and any(isinstance(t, T.RefType) and not t.const for t in parent.param_types):
        return ("other", None)  # bound to a non-const reference parameter: the callee may write it
    return ("read", None)


def _is_counting_add(call: N.Call, vid: int) -> bool:
    if call.name not in ("atomicAdd", "atomicAdd_block") or len(call.args) != 2:
        return False
    target = _strip(call.args[0])
    if not (isinstance(target, N.AddrOf) and isinstance(_strip(target.operand), N.Var)
            and _strip(target.operand).decl.id == vid):
        return False
    step = N.int_literal(call.args[1], _strip)
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


def _first_thread(cond) -> bool:
    """``threadIdx.x == 0`` (and ``&&`` of such for y and z): a condition thread (0, 0, 0) meets."""
    cond = _strip(cond)
    if isinstance(cond, N.Binary) and cond.op == "&&":
        return _first_thread(cond.lhs) and _first_thread(cond.rhs)
    if not (isinstance(cond, N.Binary) and cond.op == "=="):
        return False
    sides = (_strip(cond.lhs), _strip(cond.rhs))
    return any(N.int_literal(a, _strip) == 0 and _thread_index(b) for a, b in (sides, sides[::-1]))


def _thread_index(e) -> bool:
    return isinstance(e, N.Member) and isinstance(_strip(e.base), N.Global) and _strip(e.base).name == "threadIdx"


def _is_barrier_stmt(stmt) -> bool:
    if not isinstance(stmt, N.ExprStmt):
        return False
    call = _strip(stmt.expr)
    return isinstance(call, N.Call) and is_block_barrier(call.name)


def _strip(e):
    while isinstance(e, N.Cast):
        e = e.operand
    return e
