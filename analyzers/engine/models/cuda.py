"""CUDA device built-ins: synchronisation, warp collectives, memory intrinsics, atomics, bit tricks,
cub collectives."""
from __future__ import annotations

from contextlib import contextmanager

import z3

from ...kir import types as T
from ...kir.nodes import NEW_CALL as NEW
from ..memory import PathEnd
from ..state import drop_range, fresh_value
from .. import ints, lia
from ..values import EXTENT_ONLY, FloatV, IntV, OpaqueV, PtrV, RefV, StructV, const_int, fresh_int
from ...limits import MAX_SMEM_OPTIN, MAX_THREADS_PER_BLOCK, WARP_SIZE
from ..context import _vars as z3_vars
from ..threads import is_grid_barrier, shuffle_source
from . import model

VOID = OpaqueV("void")
BYTE = T.IntType(8, False, "unsigned char")  # the unit of runtime copies and fills
FUNC_ATTR_MAX_DYNAMIC_SMEM = 8  # cudaFuncAttributeMaxDynamicSharedMemorySize


def fresh_result(interp, call, name: str = "result"):
    ty = T.strip_ref(call.ty)
    if isinstance(ty, T.VoidType):
        return VOID
    v = fresh_value(ty, name, interp.ctx.counter)
    if v is None:
        raise PathEnd("stuck", f"result of {call.name} of type {ty.name}", call.span)
    return v


def untracked_result(interp, call, origin: str, name: str | None = None):
    """A value the engine does not compute (another lane's, a collective's, an atomic's old value):
    any value of its type, remembered so that a finding that depends on it says so instead of
    standing as a bug."""
    v = fresh_result(interp, call, name or call.name)
    interp.ctx.remember_untracked(v, origin, f"`{call.name}` at {call.span.file}:{call.span.line}")
    return v


def untracked_store(interp, st, call, loc, origin: str, name: str) -> None:
    """Store into ``loc`` a value the engine does not compute (a collective's output, a surface
    read), remembered as ``untracked_result`` remembers a returned one."""
    v = fresh_value(T.strip_ref(loc.ty), name, interp.ctx.counter)
    if v is not None:
        interp.ctx.remember_untracked(v, origin, f"`{call.name}` at {call.span.file}:{call.span.line}")
        interp.store(st, loc, v, call.span)


def ranged_int(interp, st, name: str, ty: T.IntType, lo: int, hi: int) -> IntV:
    """A fresh integer of ``ty`` in [lo, hi], the range assumed on the path for the bit-vectors and
    the integers alike (a bit count, a device answer, a result the manifest states)."""
    v = fresh_int(interp.ctx.fresh_name(name), ty, lo, hi)
    term = z3.And(v.bv >= lo, v.bv <= hi) if v.ty.signed else z3.And(z3.UGE(v.bv, lo), z3.ULE(v.bv, hi))
    st.assume(lia.CURRENT.register(term, z3.And(ints.I(v) >= lo, ints.I(v) <= hi)))
    return v


@model("__threadfence", "__threadfence_block", "__threadfence_system", "__nanosleep", "cudaDeviceSynchronize", "__builtin_assume", "__builtin_prefetch",
       "cudaGridDependencySynchronize", "cudaTriggerProgrammaticLaunchCompletion")
def no_effect(interp, st, call, this, args):
    return VOID


@model("__activemask", "clock", "clock64", "__globaltimer", "printf", "__brev", "__byte_perm", "__mulhi", "__umulhi",
       "__mul64hi", "__umul64hi", "__funnelshift_l", "__funnelshift_r", "cub::ShuffleIndex",
       # Address-space conversions and queries: an address, not an access.
       "__cvta_generic_to_shared", "__cvta_generic_to_global", "__cvta_generic_to_constant",
       "__cvta_generic_to_local", "__isShared", "__isGlobal", "__isConstant", "__isLocal")
def any_value(interp, st, call, this, args):
    """A value of the right type, otherwise unconstrained (another thread's value, a timer...)."""
    return untracked_result(interp, call, "lane")


# ---------------------------------------------------------------- barriers and warp primitives


@model("__syncthreads")
def syncthreads(interp, st, call, this, args):
    interp.barrier(st, call.span, "block", call.name)
    return VOID


@model("__syncthreads_count", "__syncthreads_and", "__syncthreads_or")
def syncthreads_reduce(interp, st, call, this, args):
    """A block barrier that also counts (or ands, ors) a predicate over the block."""
    interp.barrier(st, call.span, "block", call.name)
    hi = MAX_THREADS_PER_BLOCK if call.name == "__syncthreads_count" else 1
    v = ranged_int(interp, st, call.name, T.strip_ref(call.ty), 0, hi)
    interp.ctx.remember_untracked(v, "collective", f"`{call.name}` at {call.span.file}:{call.span.line}")
    return v


@model("__syncwarp")
def syncwarp(interp, st, call, this, args):
    interp.warp_sync(st, call, args[0] if args else None)
    interp.barrier(st, call.span, "warp", call.name)
    return VOID


@model("cooperative_groups::grid_group::sync", "cooperative_groups::cluster_group::sync")
def group_barrier(interp, st, call, this, args):
    """A grid-wide barrier (a cooperative launch's ``grid.sync()``) or a cluster's: every thread of
    the grid (of the cluster's blocks) waits there, those of this block included."""
    interp.barrier(st, call.span, "grid" if is_grid_barrier(call.name) else "block", call.name)
    return VOID


@model("__ballot_sync", "__match_any_sync", "__reduce_add_sync", "__reduce_max_sync", "__reduce_min_sync",
       "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync")
def warp_collective(interp, st, call, this, args):
    """A warp collective over the lanes of its mask: the lanes are checked, the value (the other
    lanes' contributions) is not computed."""
    interp.warp_sync(st, call, args[0] if args else None)
    return untracked_result(interp, call, "lane")


@model("__any_sync", "__all_sync")
def warp_vote(interp, st, call, this, args):
    interp.warp_sync(st, call, args[0] if args else None)
    v = ranged_int(interp, st, call.name, T.strip_ref(call.ty), 0, 1) if isinstance(T.strip_ref(call.ty), T.IntType) \
        else fresh_result(interp, call)
    interp.ctx.remember_untracked(v, "lane", f"`{call.name}` at {call.span.file}:{call.span.line}")
    return v


@model("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync")
def shuffle(interp, st, call, this, args):
    """The value another lane holds. When the value is a function of threadIdx.x and of what every
    thread sees alike (a row offset, a lane's index), it is that function at the source lane, so
    ``__shfl_sync(mask, base + lane, 0)`` is the first lane's ``base``; otherwise any value (a value
    the engine does not compute: a finding that needs it is inconclusive)."""
    width = args[3].concrete() if len(args) > 3 and isinstance(args[3], IntV) else WARP_SIZE
    if width is None or width <= 0 or width > WARP_SIZE or width & (width - 1):
        width = None  # not a width the hardware takes: which lane is read is not known
    d = ints.convert(args[2], T.UINT32, call.span).bv if len(args) > 2 and isinstance(args[2], IntV) else None
    source = (d, width) if d is not None and width is not None else None
    interp.warp_sync(st, call, args[0] if args else None, source)
    v = _from_lane(interp, st, call, args[1], source)
    return v if v is not None else untracked_result(interp, call, "lane")


def _from_lane(interp, st, call, value, source):
    threads = interp.ctx.threads
    if threads is None or st.thread is None or source is None or not isinstance(value, IntV):
        return None
    th = st.thread
    tx = th.tid.fields["x"]
    bx, by, bz = (th.block.fields[a] for a in "xyz")
    # The source lane is threadIdx.x - lane + source: true when a warp is one run of threadIdx.x
    # (one-dimensional blocks, or rows a multiple of 32 wide).
    one_dim = by.lo == by.hi == 1 and bz.lo == bz.hi == 1
    if not (one_dim or (bx.concrete() is not None and bx.concrete() % WARP_SIZE == 0)):
        return None
    names = {str(v) for v in z3_vars(value.bv)}
    if any(threads.varies(n, True) for n in names - {str(tx.bv)}):
        return None
    t = tx.bv
    src = shuffle_source(call.name, t, source[0], source[1])
    return IntV(value.ty, z3.substitute(value.bv, (t, src)), value.lo, value.hi)


@model("__popc", "__clz", "__ffs")
def bits32(interp, st, call, this, args):
    return ranged_int(interp, st, call.name, T.strip_ref(call.ty), 0, 32)


@model("__popcll", "__clzll", "__ffsll")
def bits64(interp, st, call, this, args):
    return ranged_int(interp, st, call.name, T.strip_ref(call.ty), 0, 64)


@model("__lane_id", "cub::LaneId")
def lane_id(interp, st, call, this, args):
    thread = st.thread
    if thread is None:
        raise PathEnd("stuck", "lane id outside a kernel", call.span)
    tx = thread.tid.fields["x"]
    return IntV(T.UINT32, z3.URem(tx.bv, 32), 0, 31, iv=ints.I(tx) % 32)


@model("cub::WarpId")
def warp_id(interp, st, call, this, args):
    thread = st.thread
    tx = thread.tid.fields["x"]
    return IntV(T.UINT32, z3.UDiv(tx.bv, 32), 0, 31, iv=ints.I(tx) / 32)


@model("__mul24", "__umul24")
def mul24(interp, st, call, this, args):
    """The low 32 bits of the product of the operands' low 24 bits, sign-extended for __mul24. When
    both operands fit in 24 bits (threadIdx.x, a block size) it is the ordinary 32-bit product, wrap
    sites included; an operand that may not fit is its low 24 bits, exactly as the hardware
    truncates it, so a finding that rests on the truncation is real."""
    signed = call.name == "__mul24"
    ty = T.INT32 if signed else T.UINT32
    lo24, hi24 = (-(1 << 23), (1 << 23) - 1) if signed else (0, (1 << 24) - 1)
    stack = interp.stack_spans(st)
    ops = []
    for a in args[:2]:
        if not isinstance(a, IntV):
            return fresh_result(interp, call, call.name)
        a = ints.convert(a, ty, call.span, stack)
        if not (lo24 <= a.lo and a.hi <= hi24):
            bits = (z3.SignExt if signed else z3.ZeroExt)(8, z3.Extract(23, 0, a.bv))
            a = ints.truncated(ty, bits, lo24, hi24)
        ops.append(a)
    return ints.arith("*", ops[0], ops[1], ty, call.span, stack)


# SIMD video intrinsics: one operation on each halfword (suffix 2) or byte (suffix 4) of 32 bits.
_SIMD_OPS = ("add", "sub", "addss", "subss", "addus", "subus", "maxs", "maxu", "mins", "minu", "absdiffs",
             "absdiffu", "sads", "sadu", "abs", "absss", "neg", "negss")
_SIMD_PREDICATES = ("eq", "ne", "ges", "geu", "gts", "gtu", "les", "leu", "lts", "ltu")
_SIMD_NAMES = [f"__v{op}{n}" for op in _SIMD_OPS + tuple(f"{k}{p}" for k in ("cmp", "set") for p in _SIMD_PREDICATES)
               for n in (2, 4)]


def _simd_lane(op: str, a, b, w: int):
    """One lane's result (``w`` bits) of a SIMD video operation, as CUDA's math API defines it."""
    smin, smax, umax = -(1 << (w - 1)), (1 << (w - 1)) - 1, (1 << w) - 1

    def clamp_signed(x):  # x: w + 1 bits, signed
        low = z3.If(x < smin, z3.BitVecVal(smin, w + 1), x)
        return z3.Extract(w - 1, 0, z3.If(x > smax, z3.BitVecVal(smax, w + 1), low))

    if op in ("add", "sub"):
        return a + b if op == "add" else a - b
    if op in ("addss", "subss"):
        x, y = z3.SignExt(1, a), z3.SignExt(1, b)
        return clamp_signed(x + y if op == "addss" else x - y)
    if op == "addus":
        x = z3.ZeroExt(1, a) + z3.ZeroExt(1, b)
        return z3.Extract(w - 1, 0, z3.If(z3.UGT(x, umax), z3.BitVecVal(umax, w + 1), x))
    if op == "subus":
        return z3.If(z3.ULT(a, b), z3.BitVecVal(0, w), a - b)
    if op in ("maxs", "maxu", "mins", "minu"):
        greater = a >= b if op[-1] == "s" else z3.UGE(a, b)
        return z3.If(greater, a, b) if op.startswith("max") else z3.If(greater, b, a)
    if op in ("absdiffs", "absdiffu", "sads", "sadu"):
        greater = a >= b if op[-1] == "s" else z3.UGE(a, b)
        return z3.If(greater, a - b, b - a)  # |a - b| < 2^w: exact as w unsigned bits
    if op in ("abs", "absss", "neg", "negss"):
        mag = -a if op.startswith("neg") else z3.If(a < 0, -a, a)
        return z3.If(a == smin, z3.BitVecVal(smax, w), mag) if op.endswith("ss") else mag
    kind, pred = op[:3], op[3:]
    holds = {"eq": a == b, "ne": a != b, "ges": a >= b, "geu": z3.UGE(a, b), "gts": a > b, "gtu": z3.UGT(a, b),
             "les": a <= b, "leu": z3.ULE(a, b), "lts": a < b, "ltu": z3.ULT(a, b)}[pred]
    return z3.If(holds, z3.BitVecVal(umax if kind == "cmp" else 1, w), z3.BitVecVal(0, w))


def simd_result(name: str, words: list) -> z3.BitVecRef:
    """The 32-bit result of the SIMD video intrinsic ``name`` on 32-bit ``words`` (one for the
    unary ones), lane by lane; the sums of absolute differences add their lanes into one number."""
    op, w = name[3:-1], 16 if name.endswith("2") else 8
    lanes = [_simd_lane(op, z3.Extract(i * w + w - 1, i * w, words[0]),
                        z3.Extract(i * w + w - 1, i * w, words[1]) if len(words) > 1 else None, w)
             for i in range(32 // w)]
    if op in ("sads", "sadu"):
        return z3.simplify(sum((z3.ZeroExt(32 - w, x) for x in lanes[1:]), z3.ZeroExt(32 - w, lanes[0])))
    return z3.simplify(z3.Concat(*reversed(lanes)))


def simd_max(name: str) -> int:
    """The largest result of the intrinsic: a sum of absolute differences adds its lanes' (two
    halfwords up to 65,535 each, or four bytes up to 255); the others are any 32-bit word."""
    if name[3:-1] in ("sads", "sadu"):
        w = 16 if name.endswith("2") else 8
        return (32 // w) * ((1 << w) - 1)
    return (1 << 32) - 1


def simd_unary(name: str) -> bool:
    return name[3:-1] in ("abs", "absss", "neg", "negss")


@model(*_SIMD_NAMES)
def simd_video(interp, st, call, this, args):
    """``__vcmpne4``, ``__vsubss2``, ``__vsadu4``...: exact (bench/check_simd_video.py compares them
    with a GPU)."""
    arity = 1 if simd_unary(call.name) else 2
    if len(args) < arity or not all(isinstance(a, IntV) for a in args[:arity]):
        return fresh_result(interp, call, call.name)
    stack = interp.stack_spans(st)
    words = [ints.convert(a, T.UINT32, call.span, stack).bv for a in args[:arity]]
    return IntV(T.UINT32, simd_result(call.name, words), 0, simd_max(call.name))


def _load_through(interp, st, ptr, call):
    if not isinstance(ptr, PtrV) and not hasattr(ptr, "alts"):
        raise PathEnd("stuck", f"{call.name} on a non-pointer", call.span)
    pointee = T.strip_ref(call.ty)
    return interp.load(st, interp.deref(ptr, pointee, call.span), call.span)


@model("__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv")
def ldg(interp, st, call, this, args):
    return _load_through(interp, st, args[0], call)


@model("__stcg", "__stcs", "__stwt")
def stcg(interp, st, call, this, args):
    ptr, value = args[0], args[1]
    interp.store(st, interp.deref(ptr, T.strip_ref(call.param_types[1]) if len(call.param_types) > 1 else T.VOID, call.span),
                 value, call.span)
    return VOID


@model("atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicAnd", "atomicOr", "atomicXor",
       "atomicInc", "atomicDec", "atomicCAS",
       *(f"atomic{op}_{scope}" for op in ("Add", "Sub", "Exch", "Min", "Max", "And", "Or", "Xor", "Inc", "Dec", "CAS")
         for scope in ("block", "system")))
def atomic(interp, st, call, this, args):
    """Read-modify-write through the pointer: both accesses are checked (as atomic: two atomics
    never race, unless one is block-scoped and the other thread is in another block). The old
    value of an ``atomicAdd`` of a constant to a counter whose initial contents the binding states
    is counted (``_counted``); other old values are unknown."""
    ptr = args[0]
    ty = T.strip_ref(call.ty)
    loc = interp.deref(ptr, ty, call.span)
    with _atomic_access(interp, "block" if call.name.endswith("_block") else ""):
        old = interp.load(st, loc, call.span)
        interp.store(st, loc, fresh_value(ty, "atomic", interp.ctx.counter) or old, call.span)
    counted = _counted(interp, st, call, loc, args, old)
    return counted if counted is not None else untracked_result(interp, call, "atomic", "atomic_old")


@contextmanager
def _atomic_access(interp, scope: str):
    """The accesses made inside are an atomic's, of ``scope`` ("block", or "" for the device or
    the system: atomic for every thread of the launch)."""
    interp.atomic_access, interp.atomic_scope = True, scope
    try:
        yield
    finally:
        interp.atomic_access, interp.atomic_scope = False, ""


def _scope_arg(args, i: int) -> str:
    """The scope a libcu++ shim passes (cuda::thread_scope: 2 is the block)."""
    v = args[i] if len(args) > i else None
    return "block" if isinstance(v, IntV) and v.concrete() == 2 else ""


@model("__kv_atomic_load")
def atomic_load(interp, st, call, this, args):
    """An atomic load (``cuda::atomic_ref::load``, <cuda/atomic>): an atomic read through the
    pointer (checked for bounds; never a race with another atomic of a scope that covers both
    threads). Its value is unknown: another thread may have written the location since."""
    ty = T.strip_ref(call.ty)
    with _atomic_access(interp, _scope_arg(args, 1)):
        interp.load(st, interp.deref(args[0], ty, call.span), call.span)
    return untracked_result(interp, call, "atomic", "atomic_load")


@model("__kv_atomic_store")
def atomic_store(interp, st, call, this, args):
    """An atomic store (``cuda::atomic_ref::store``): an atomic write of the value."""
    ty = T.strip_ref(call.param_types[1]) if len(call.param_types) > 1 else T.strip_ref(call.ty)
    with _atomic_access(interp, _scope_arg(args, 2)):
        interp.store(st, interp.deref(args[0], ty, call.span), args[1], call.span)
    return VOID


def _counted(interp, st, call, loc, args, initial):
    """``atomicAdd(&counter, V)`` returns what the counter held (``initial``, in the binding's
    range, or the start a kernel gives a shared counter before a barrier: engine/counters.py) plus
    V for every thread that added before: ``initial + V*j``, j below the number of threads that
    may run it (of the grid for a global counter, of the block for a shared one). The bound needs
    one addition per thread (not in a loop; the kernel's only integer atomicAdd) and the exact
    range a global counter's binding states; the largest j is reached (a finding on it is a
    bug) only when every thread of the grid adds to the same counter (no branch on a thread's own
    values before it). Otherwise the value keeps its sound range but stays an atomic's unknown
    old value."""
    threads, th = interp.ctx.threads, st.thread
    if not call.name.startswith("atomicAdd") or len(args) < 2 or threads is None or th is None:
        return None
    sites = interp.kernel_add_sites()
    if sites.per_path > 1:
        # A thread may add twice, here and at another site, to the same counter (the engine
        # cannot tell which counter each site adds to): what this one returns is not counted.
        return None
    ty, inc = T.strip_ref(call.ty), args[1]
    region = getattr(loc, "region", None)
    if not isinstance(ty, T.IntType) or not isinstance(inc, IntV) or not isinstance(initial, IntV) or region is None:
        return None
    # A global counter the binding starts counts every thread of the grid; a shared one the kernel
    # starts before a barrier (counters.py), the threads of its block.
    shared = _started_shared_counter(th, region)
    if shared is not None and shared.min_threads and not _block_has(interp, st, th, shared.min_threads):
        return None  # the start covers the first min_threads elements only, and the block may be smaller
    if shared is not None:
        initial = const_int(shared.value, ty)
    elif region.kind != "global" or region.values is None or region.id in interp.ctx.launch_written:
        # (A counter an earlier launch added to no longer holds what the binding states.)
        return None
    step = inc.concrete()
    if step is None or step < 0:
        return None
    dims = [*([] if shared is not None else th.grid.fields.values()), *th.block.fields.values()]
    most = 1
    for d in dims:
        most *= max(d.hi, 1)
    if interp.loop_depth > 0 or step * most > (1 << 62) or sites.per_path_loops > 1 \
            or (sites.total > 1 and sites.steps != {step}):
        # Threads may add more than once (a site in a loop), or by another step at an exclusive
        # site: the count of additions before this one is not a number of threads. What stays is
        # that no addition lowers the counter, when none adds a negative or unknown amount.
        if sites.total > 1 and any(k is None or k < 0 for k in sites.steps):
            return None
        v = fresh_result(interp, call, "atomic_old")
        lo = initial.lo
        term = v.bv >= lo if ty.signed else z3.UGE(v.bv, lo) if lo >= 0 else z3.BoolVal(True)
        st.assume(lia.CURRENT.register(term, ints.I(v) >= lo))
        interp.ctx.remember_untracked(v, "atomic", f"`{call.name}` at {call.span.file}:{call.span.line}")
        return v
    what = f"threads that added to `{region.name}` before this one (`{call.name}` at {call.span.file}:{call.span.line})"
    j = fresh_int(interp.ctx.fresh_name("order"), T.INT64, 0, most - 1)
    total = z3.BitVecVal(1, 64)
    for d in dims:
        total = total * z3.ZeroExt(64 - d.ty.bits, d.bv)
    st.assume(lia.CURRENT.register(z3.And(j.bv >= 0, z3.ULT(j.bv, total)), ints.I(j) >= 0))
    reaches_all = not threads.varying(loc.off.bv, same_block=False) and not any(
        t.get_id() in threads.decisions and threads.varying(t, same_block=shared is not None) for t in st.pc)
    origin = "atomic-count" if reaches_all else "atomic"
    interp.ctx.symbol(what, j.bv, "load", True, (origin, what, reaches_all))
    threads.orders[str(j.bv)] = (region.id, loc.off.bv)
    wide = z3.SignExt(64 - ty.bits, initial.bv) if ty.signed else z3.ZeroExt(64 - ty.bits, initial.bv)
    # The counter wraps as the machine's does when more threads add than its type holds.
    value = z3.Extract(ty.bits - 1, 0, wide + step * j.bv)
    if initial.hi + step * (most - 1) > ty.max:
        return IntV(ty, value, ty.min, ty.max)
    return IntV(ty, value, initial.lo, initial.hi + step * (most - 1), iv=ints.I(initial) + step * ints.I(j))


def _block_has(interp, st, th, n: int) -> bool:
    """Whether the path implies blocks of at least ``n`` threads in x."""
    x = th.block.fields["x"]
    return interp.ctx.excluded(st.pc, ints.I(x) < n)


def _started_shared_counter(th, region):
    """The start (counters.Start) of a ``__shared__`` counter, or array of counters, the kernel
    starts before a barrier, if ``region`` is one (engine/counters.py)."""
    if region.kind != "shared":
        return None
    for vid, start in th.counters.items():
        if th.shared.get(vid) is region:
            return start
    return None


@model("memcpy", "memset", "memmove", "std::memcpy", "std::memset", "__builtin_memcpy", "__builtin_memset",
       "__builtin_memmove")
def mem_bytes(interp, st, call, this, args):
    n = args[-1]
    if not isinstance(n, IntV):
        raise PathEnd("stuck", f"{call.name} size", call.span)
    pointers = [a for a in args[:-1] if isinstance(a, PtrV)]
    copies = call.name.endswith(("memcpy", "memmove"))
    writes = [True] + ([False] if copies else [])
    for ptr, write in zip(pointers, writes):
        _check_range(interp, st, ptr, n, write, call.span)
    if pointers and pointers[0].region.tracked:
        dst = pointers[0]
        if copies:
            kept = len(pointers) == 2 and _copy_tracked(interp, st, dst, pointers[1], n)
        else:
            kept = _fill_tracked(interp, st, dst, args[1], n)
        if not kept:
            interp.forget_content(st, dst.region, call.span)
    return args[0]


FILL_MAX_BYTES = 4096  # a memset of a tracked object is kept byte by byte up to this size


def _fill_tracked(interp, st, dst: PtrV, value, n: IntV) -> bool:
    """memset of a tracked object at an offset and a size the path fixes: each byte holds the
    value's low 8 bits (memory._read_at assembles wider values from them: a table cleared with
    zeros reads as zeros)."""
    d, count = dst.off.concrete(), n.concrete()
    if d is None or count is None or count > FILL_MAX_BYTES or not isinstance(value, IntV):
        return False
    byte = IntV(T.UINT8, z3.Extract(7, 0, value.bv), 0, 255)
    c = byte.concrete()
    if c is not None:
        byte = const_int(c, T.UINT8)
    content = st.write_content(dst.region)
    drop_range(content, d, count)
    for k in range(d, d + count):
        content[k] = (T.UINT8, byte)
    return True


def _copy_tracked(interp, st, dst: PtrV, src: PtrV, n: IntV) -> bool:
    """memcpy between two tracked objects at offsets and a size the path fixes: the values the
    source holds in the range move to the destination (a register table copied from another keeps
    its indices); bytes the source never wrote stay unwritten there. False where the engine cannot
    say what the copy leaves (the source's unknown contents, a range it does not fix)."""
    d, s, count = dst.off.concrete(), src.off.concrete(), n.concrete()
    ctx = interp.ctx
    if d is None or s is None or count is None or not src.region.tracked or any(
            src.region.id in known for known in (ctx.overwritten, ctx.copied_in, ctx.loop_written)):
        return False
    moved = [(off - s + d, entry) for off, entry in st.content(src.region).items()
             if s <= off and off + max(T.strip_ref(entry[0]).size, 1) <= s + count]
    content = st.write_content(dst.region)
    drop_range(content, d, count)
    content.update(moved)
    return True


def _check_range(interp, st, ptr: PtrV, n: IntV, write: bool, span, runtime: bool = False) -> None:
    """Bytes [p, p+n) are accessed: check the first and the last. ``runtime``: a CUDA runtime copy
    or fill, which the runtime checks against the allocation it starts in (checks/oob.py says
    what a sanitizer can see of it)."""
    from ..memory import index_to_int64
    from ..values import Loc
    c = n.concrete()
    if c == 0:
        return
    # A copy of no bytes touches nothing: neither end is accessed unless the count is positive.
    # Compared as the program would (ints.compare): the integers then know the guard too.
    guard = None if c is not None else ints.compare(">", n, const_int(0, n.ty)).term
    interp.emit_access(st, Loc(ptr.region, ptr.off, BYTE), 1, write, span, guard, copy_end="first" if runtime else "")
    last = interp.ptr_add(PtrV(ptr.region, ptr.off, BYTE), index_to_int64(n, span), span)
    last = interp.ptr_add(last, const_int(1, T.INT64), span, subtract=True)
    interp.emit_access(st, Loc(last.region, last.off, BYTE), 1, write, span, guard, copy_end="last" if runtime else "")


@model("sincosf", "__sincosf", "sincos")
def sincos(interp, st, call, this, args):
    for ptr in args[1:3]:
        loc = interp.deref(ptr, T.FLOAT, call.span)
        interp.store(st, loc, FloatV(T.FLOAT), call.span)
    return VOID


# ---------------------------------------------------------------- cub collectives


@model("cub::BlockReduce::BlockReduce", "cub::WarpReduce::WarpReduce", "cub::BlockScan::BlockScan",
       "cub::WarpScan::WarpScan", "cub::BlockAdjacentDifference::BlockAdjacentDifference",
       "cub::BlockDiscontinuity::BlockDiscontinuity")
def cub_ctor(interp, st, call, this, args):
    return VOID


@model("cub::BlockReduce::Sum", "cub::BlockReduce::Reduce", "cub::WarpReduce::Sum", "cub::WarpReduce::Reduce")
def cub_reduce(interp, st, call, this, args):
    _cub_barrier(interp, st, call)
    return untracked_result(interp, call, "collective", "reduction")


def _cub_barrier(interp, st, call) -> None:
    """A cub block collective synchronises the block inside: every thread must reach it, and it
    ends a barrier interval (its temporary storage is race-free by construction)."""
    from ..threads import is_block_barrier
    if is_block_barrier(call.name):
        interp.barrier(st, call.span, "block", call.name)


@model("cub::BlockScan::ExclusiveSum", "cub::BlockScan::InclusiveSum", "cub::BlockScan::ExclusiveScan",
       "cub::BlockScan::InclusiveScan", "cub::WarpScan::ExclusiveSum", "cub::WarpScan::InclusiveSum")
def cub_scan(interp, st, call, this, args):
    _cub_barrier(interp, st, call)
    for a in args[1:]:
        if isinstance(a, RefV):
            untracked_store(interp, st, call, a.loc, "collective", "scan")
    return VOID


# Which arguments each neighbour collective writes: the output items or the flags.
_NEIGHBOUR_OUTPUTS = {"SubtractLeft": (1,), "SubtractLeftPartialTile": (1,), "SubtractRight": (1,),
                      "SubtractRightPartialTile": (1,), "FlagHeads": (0,), "FlagTails": (0,),
                      "FlagHeadsAndTails": (0, 1)}


@model(*(f"cub::BlockAdjacentDifference::{m}" for m in _NEIGHBOUR_OUTPUTS if m.startswith("Subtract")),
       *(f"cub::BlockDiscontinuity::{m}" for m in _NEIGHBOUR_OUTPUTS if m.startswith("Flag")))
def cub_neighbours(interp, st, call, this, args):
    """Differences or flags between each item and its neighbour (another thread's item at a tile's
    edge): a block barrier, and outputs the engine does not compute."""
    _cub_barrier(interp, st, call)
    for i in _NEIGHBOUR_OUTPUTS[call.name.rsplit("::", 1)[-1]]:
        a = args[i] if i < len(args) else None
        if isinstance(a, RefV):
            untracked_store(interp, st, call, a.loc, "collective", "neighbours")
    return VOID


# ---------------------------------------------------------------- runtime API (plain CUDA host code)


RETURNING_ALLOCATORS = ("malloc", "std::malloc", NEW)  # host allocations that return the pointer


@model("cudaMalloc", "cudaMallocManaged", "cudaMallocHost", "cudaMallocAsync", "cudaHostAlloc",
       "cudaMallocFromPoolAsync", *RETURNING_ALLOCATORS)
def device_alloc(interp, st, call, this, args):
    """A new object of the requested size, stored through the out-pointer (or returned by malloc):
    plain CUDA host code is an op whose buffer sizes come from its allocations."""
    from ..events import Sink
    returns = call.name in RETURNING_ALLOCATORS
    size = args[0] if returns else args[1]
    if not isinstance(size, IntV):
        raise PathEnd("stuck", f"{call.name} of a size that is not an integer", call.span)
    size64 = ints.convert(size, T.INT64, call.span) if size.ty.bits != 64 or size.ty.signed is False else size
    if size.math is not None:
        interp.emit_sink(st, Sink(size, "alloc", call.span, interp.stack_spans(st), f"the size of the {call.name}"))
    kind = "host" if call.name in RETURNING_ALLOCATORS + ("cudaMallocHost", "cudaHostAlloc") else "global"
    out = None if returns else args[0]
    # Named after the variable that receives it (cudaMalloc(&d_x, ...) allocates d_x).
    name = out.region.name if isinstance(out, PtrV) and out.region.kind in ("local", "param") else \
        f"{'new' if call.name == NEW else call.name} at line {call.span.line}"
    region = interp.new_region(kind, name, size64, call.span, align=256, note="allocated" if kind == "global" else "")
    if returns:
        return PtrV(region, const_int(0, T.INT64), T.VOID)
    if isinstance(out, PtrV):
        slot_ty = out.pointee if isinstance(out.pointee, T.PtrType) else T.PtrType(T.VOID)
        interp.store(st, interp.deref(out, slot_ty, call.span), PtrV(region, const_int(0, T.INT64), slot_ty.pointee),
                     call.span)
    return const_int(0, T.strip_ref(call.ty)) if isinstance(T.strip_ref(call.ty), T.IntType) else VOID


@model("cudaMemcpy", "cudaMemcpyAsync", "cudaMemset", "cudaMemsetAsync")
def device_copy(interp, st, call, this, args):
    """Copies and fills access ``count`` bytes of each buffer: both ends are checked. What a copy
    writes into a host object the engine tracks is what the source held, which it does not
    compute (device memory): those bytes are any value, and a finding that needs one is
    ``needs-values`` (before, the object kept its old contents: a count read back from the device
    into `int h = 0` stayed 0)."""
    count = args[2]
    if not isinstance(count, IntV):
        raise PathEnd("stuck", f"{call.name} with a size that is not an integer", call.span)
    return _copy(interp, st, call, args[0], args[1] if call.name.startswith("cudaMemcpy") else None, count)


@model("cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbolAsync")
def symbol_copy(interp, st, call, this, args):
    """Copies into or out of a `__constant__` / `__device__` variable, ``offset`` bytes into it:
    both buffers' ranges are checked (a range past the variable is the runtime's
    `cudaErrorInvalidValue`: the copy does not happen). A variable copied into holds what the
    host sent (the front end drops its initializer); a host object copied into, as for cudaMemcpy."""
    to_symbol = "ToSymbol" in call.name
    count = args[2] if len(args) > 2 else None
    if not isinstance(count, IntV):
        raise PathEnd("stuck", f"{call.name} with a size that is not an integer", call.span)
    offset = args[3] if len(args) > 3 and isinstance(args[3], IntV) else const_int(0, T.UINT64)
    symbol = args[0] if to_symbol else args[1]
    if isinstance(symbol, PtrV):
        from ..memory import index_to_int64
        symbol = interp.ptr_add(PtrV(symbol.region, symbol.off, BYTE), index_to_int64(offset, call.span), call.span)
    dst, src = (symbol, args[1]) if to_symbol else (args[0], symbol)
    return _copy(interp, st, call, dst, src, count)


def _copy(interp, st, call, dst, src, count: IntV):
    """``count`` bytes from ``src`` (None: a fill) to ``dst``, both ranges checked."""
    if isinstance(dst, PtrV):
        _check_range(interp, st, dst, count, True, call.span, runtime=True)
    if isinstance(src, PtrV):
        _check_range(interp, st, src, count, False, call.span, runtime=True)
    if src is not None and isinstance(dst, PtrV) and dst.region.tracked:
        _copied_in(interp, st, call, dst, count)
    return const_int(0, T.strip_ref(call.ty)) if isinstance(T.strip_ref(call.ty), T.IntType) else VOID


def _copied_in(interp, st, call, dst: PtrV, count: IntV) -> None:
    """The bytes a copy wrote into a tracked object hold values the engine does not compute: the
    object's contents there are dropped (all of them where the range is not known), and what is
    read there afterwards is such a value (memory.unwritten_value)."""
    region, start, n = dst.region, dst.off.concrete(), count.concrete()
    if start is None or n is None:
        interp.forget_content(st, region, call.span)
    else:
        drop_range(st.write_content(region), start, n)
    interp.ctx.copied_in[region.id] = f"`{call.name}` at {call.span.file}:{call.span.line}"


@model("cudaFree", "cudaFreeHost", "cudaFreeAsync", "free", "std::free", "cudaDeviceSynchronize",
       "cudaDestroyTextureObject", "cudaDestroySurfaceObject", "cudaFreeArray", "cudaBindTexture", "cudaBindTexture2D", "cudaBindTextureToArray",
       "cudaUnbindTexture",
       "cudaStreamSynchronize", "cudaGetLastError", "cudaPeekAtLastError", "cudaDeviceReset", "cudaSetDevice",
       "cudaStreamCreate", "cudaStreamDestroy", "cudaEventCreate", "cudaEventRecord", "cudaEventSynchronize",
       "cudaEventDestroy", "cudaEventElapsedTime")
def runtime_status(interp, st, call, this, args):
    """Runtime calls that touch no buffer the checks follow: success (lifetimes are not checked)."""
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


@model("cudaGetErrorString", "cudaGetErrorName")
def error_string(interp, st, call, this, args):
    """The runtime's text for an error code: a constant string the program prints (opaque to the
    engine; it is only passed to the C library)."""
    return OpaqueV("error string", T.strip_ref(call.ty))


@model("curand_init")
def curand_init(interp, st, call, this, args):
    """A generator's state set up in place: the state object (often one element of a per-thread
    array) is written whole."""
    _random_state(interp, st, call, args[3] if len(args) > 3 else None, read=False)
    return VOID


@model("curand", "curand_uniform", "curand_uniform_double", "curand_normal", "curand_normal_double", "curand_normal2",
       "curand_log_normal", "curand_poisson", "curand_uniform4", "curand_normal4", "curand4")
def curand_draw(interp, st, call, this, args):
    """A draw reads and advances the generator's state; the number is one the program gets at run
    time (a finding that needs a particular one is inconclusive, needs-values)."""
    _random_state(interp, st, call, args[0] if args else None, read=True)
    return untracked_result(interp, call, "random", "random number")


def _random_state(interp, st, call, ptr, read: bool) -> None:
    if not isinstance(ptr, PtrV):
        raise PathEnd("stuck", f"{call.name} of a state that is not a pointer", call.span)
    loc = interp.deref(ptr, ptr.pointee, call.span)
    if read:
        interp.load(st, loc, call.span)
    value = fresh_value(ptr.pointee, f"state of {call.name}", interp.ctx.counter)
    if value is None:
        raise PathEnd("stuck", f"{call.name} of a state of type {ptr.pointee.name}", call.span)
    interp.store(st, loc, value, call.span)


@model("tex1Dfetch", "tex1D", "tex2D", "tex3D", "tex1DLayered", "tex2DLayered")
def texture_fetch(interp, st, call, this, args):
    """A texture fetch: coordinates outside the texture are clamped, wrapped or read the border
    (its addressing mode), so no memory is accessed past it; the value is the texture's contents."""
    return untracked_result(interp, call, "texture")


SURFACE_TRAP = 2  # cudaBoundaryModeTrap, the default: an access out of range aborts the kernel


@model("surf1Dread", "surf2Dread", "surf3Dread", "surf1Dwrite", "surf2Dwrite", "surf3Dwrite")
def surface_access(interp, st, call, this, args):
    """A surface read or write. In zero or clamp mode an access out of range is harmless (a read
    gives any value); in trap mode (the default) it aborts the kernel: where the object was made
    over a CUDA array the program allocated (its width, height and element size known), the access
    is checked against the array, x in bytes within a row, y within the rows; otherwise the engine
    cannot rule it out: inconclusive at the access, and the path goes on."""
    dims, write = int(call.name[4]), call.name.endswith("write")
    out_pointer = not write and isinstance(T.strip_ref(call.ty), T.VoidType)  # surf2Dread(&v, obj, x, y)
    first = 1 if write or out_pointer else 0
    fixed = first + 1 + dims
    mode = args[fixed] if len(args) > fixed else None
    mode = SURFACE_TRAP if mode is None else mode.concrete() if isinstance(mode, IntV) else None
    if mode is None or mode == SURFACE_TRAP:
        array = _surface_array(interp, args[first] if len(args) > first else None, dims)
        if array is not None:
            _surface_range(interp, st, call, array, args[first + 1:fixed], write)
        else:
            interp.ctx.stuck("unsupported", f"`{call.name}` in trap mode aborts the kernel when its coordinates leave "
                             "the surface, and this surface was not made over a CUDA array the program allocated "
                             "(`cudaMallocArray` then `cudaCreateSurfaceObject`), so its extent is not known; pass "
                             "cudaBoundaryModeZero or cudaBoundaryModeClamp if out-of-range accesses are expected",
                             call.span)
    if write:
        return VOID
    if not out_pointer:
        return untracked_result(interp, call, "texture")
    ptr = args[0]
    if isinstance(ptr, PtrV):
        untracked_store(interp, st, call, interp.deref(ptr, ptr.pointee, call.span), "texture", "surface value")
    return VOID


def _surface_array(interp, obj, dims: int):
    """The extents of the CUDA array a surface object was made over, when the program allocated it
    with a known element size and it has ``dims`` dimensions (a 1-D access of a 2-D array is not
    judged)."""
    if not isinstance(obj, IntV):
        return None
    array = interp.ctx.surface_arrays.get(str(obj.bv))
    if array is None:
        return None
    extents = interp.ctx.cuda_arrays[array.id]
    return extents if dims == len(extents) else None


def _surface_range(interp, st, call, extents: tuple, coords: list, write: bool) -> None:
    """A trap-mode surface access of ``sizeof(T)`` bytes at byte ``x`` of row ``y``: x is checked
    against a row of the array, y against a column (``y * elem`` bytes into it), each an access
    of a region that stands for that extent only, so that both questions stay linear where the
    array's storage, ``y * row bytes + x``, would multiply two sizes."""
    from ..memory import index_to_int64
    from ..values import Loc
    data = T.strip_ref(call.args[0].ty) if write or isinstance(T.strip_ref(call.ty), T.VoidType) else \
        T.strip_ref(call.ty)
    if not write and isinstance(data, T.PtrType):
        data = data.pointee  # surf2Dread(&v, obj, x, y)
    if not all(isinstance(c, IntV) for c in coords):
        raise PathEnd("stuck", f"{call.name} with coordinates that are not integers", call.span)
    row = extents[0]
    interp.emit_access(st, Loc(row, index_to_int64(coords[0], call.span), data), max(data.size, 1), write, call.span)
    for column, y in zip(extents[1:], coords[1:]):
        elem = column.elem_size
        at = ints.arith("*", index_to_int64(y, call.span), const_int(elem, T.INT64), T.INT64, call.span)
        interp.emit_access(st, Loc(column, at, T.IntType(8 * elem, False, f"uint{8 * elem}_t")), elem, write,
                           call.span)


def _channel_bytes(interp, st, call, desc) -> int | None:
    """Bytes per element of a channel format descriptor (the bits of its four channels)."""
    if not isinstance(desc, PtrV) or not isinstance(desc.pointee, T.StructType):
        return None
    loc = interp.deref(desc, desc.pointee, call.span)
    bits = 0
    for name in ("x", "y", "z", "w"):
        v = interp.load(st, interp.field_loc(loc, name, call.span), call.span)
        c = v.concrete() if isinstance(v, IntV) else None
        if c is None or c < 0:
            return None
        bits += c
    return bits // 8 if bits > 0 and bits % 8 == 0 else None


@model("cudaCreateTextureObject", "cudaMallocArray", "cudaCreateSurfaceObject")
def texture_handle(interp, st, call, this, args):
    """A texture object or a CUDA array written through the out-pointer: a handle the program only
    passes back to the runtime and to fetches (the descriptors it reads are the program's own). A
    CUDA array of a known element size is as large as it was asked to be, and a surface object
    made over one remembers it, so that trap-mode accesses are checked against its extent."""
    out = args[0]
    if isinstance(out, PtrV):
        slot = out.pointee
        if isinstance(slot, T.IntType):
            value = fresh_int(interp.ctx.fresh_name("surface object" if "Surface" in call.name else "texture object"),
                              slot)
            array = _described_array(interp, st, call, args[1]) if call.name == "cudaCreateSurfaceObject" \
                and len(args) > 1 else None
            if array is not None:
                interp.ctx.surface_arrays[str(value.bv)] = array
        else:
            value = PtrV(_new_array(interp, st, call, args), const_int(0, T.INT64), T.VOID)
        interp.store(st, interp.deref(out, slot, call.span), value, call.span)
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


def _new_array(interp, st, call, args):
    """A CUDA array: storage only the runtime, the fetches and the surfaces see, ``width`` (and
    ``height`` rows of it, 0 for a 1-D array) elements of the descriptor's size. Where the size is
    known, its extents are kept as a row and a column (``EXTENT_ONLY`` regions) for the surfaces."""
    name = f"CUDA array at line {call.span.line}"
    region = interp.new_region("global", name, const_int(1, T.INT64), call.span, align=256)
    elem = _channel_bytes(interp, st, call, args[1]) if len(args) > 2 else None
    width = args[2] if len(args) > 2 and isinstance(args[2], IntV) else None
    height = args[3] if len(args) > 3 and isinstance(args[3], IntV) else const_int(0, T.UINT64)
    if elem is None or width is None or not isinstance(height, IntV):
        return region
    extents = [width] if height.concrete() == 0 else [width, height]
    interp.ctx.cuda_arrays[region.id] = tuple(
        interp.new_region("global", f"{what} of the {name}", ints.arith("*", ints.convert(n, T.INT64, call.span),
                                                                        const_int(elem, T.INT64), T.INT64, call.span),
                          call.span, elem_size=elem, align=elem, note=EXTENT_ONLY)
        for what, n in zip(("a row", "a column"), extents))
    return region


def _described_array(interp, st, call, desc):
    """The CUDA array a resource descriptor names (``resType`` is ``cudaResourceTypeArray``), when
    the program allocated it here."""
    if not isinstance(desc, PtrV) or not isinstance(desc.pointee, T.StructType):
        return None
    loc = interp.deref(desc, desc.pointee, call.span)
    kind = interp.load(st, interp.field_loc(loc, "resType", call.span), call.span)
    if not isinstance(kind, IntV) or kind.concrete() != 0:
        return None
    res = interp.field_loc(loc, "res", call.span)
    array = interp.load(st, interp.field_loc(interp.field_loc(res, "array", call.span), "array", call.span),
                        call.span)
    if isinstance(array, PtrV) and array.region.id in interp.ctx.cuda_arrays:
        return array.region
    return None


@model("cudaMemcpyToArray", "cudaMemcpy2DToArray")
def copy_to_array(interp, st, call, this, args):
    """Copies into a CUDA array read their source: ``count`` bytes, or ``height`` rows of ``width``
    bytes ``spitch`` apart. Where the array's extents are known (``_new_array``), the copy also
    stays inside it: ``width`` bytes from byte ``wOffset`` of a row, ``height`` rows from row
    ``hOffset`` (``count`` bytes of the one row of a 1-D array)."""
    src = args[3]
    extents = interp.ctx.cuda_arrays.get(args[0].region.id) if isinstance(args[0], PtrV) else None
    offsets = [ints.convert(a, T.UINT64, call.span) if isinstance(a, IntV) else None for a in args[1:3]]
    if call.name == "cudaMemcpyToArray":
        n = args[4]
        if not isinstance(n, IntV):
            raise PathEnd("stuck", f"{call.name} with a size that is not an integer", call.span)
        if extents is not None and len(extents) == 1 and None not in offsets:
            _array_range(interp, st, extents[0], offsets[0], n, call.span)
    else:
        spitch, width, height = (ints.convert(a, T.UINT64, call.span) if isinstance(a, IntV) else None
                                 for a in args[4:7])
        if None in (spitch, width, height):
            raise PathEnd("stuck", f"{call.name} with sizes that are not integers", call.span)
        bv = z3.If(height.bv == 0, z3.BitVecVal(0, 64), (height.bv - 1) * spitch.bv + width.bv)
        n = IntV(T.UINT64, bv, 0, (1 << 64) - 1)
        if extents is not None and len(extents) == 2 and None not in offsets:
            _array_range(interp, st, extents[0], offsets[0], width, call.span)
            elem = extents[1].elem_size
            rows = ints.arith("*", height, const_int(elem, T.UINT64), T.UINT64, call.span)
            first = ints.arith("*", offsets[1], const_int(elem, T.UINT64), T.UINT64, call.span)
            _array_range(interp, st, extents[1], first, rows, call.span)
    if isinstance(src, PtrV):
        _check_range(interp, st, src, n, False, call.span, runtime=True)
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


def _array_range(interp, st, extent, start: IntV, n: IntV, span) -> None:
    """``n`` bytes written from byte ``start`` of a CUDA array's row (or column) extent."""
    from ..memory import index_to_int64
    at = interp.ptr_add(PtrV(extent, const_int(0, T.INT64), BYTE), index_to_int64(start, span), span)
    _check_range(interp, st, at, n, True, span, runtime=True)


# cudaDeviceAttr values and the range each takes on the GPUs CUDA 12 supports (sm_50 .. sm_120).
# Each with the cudaDeviceProp field that holds the same answer.
DEVICE_ATTRIBUTES = {
    1: ("maxThreadsPerBlock", 1024, 1024),  # cudaDevAttrMaxThreadsPerBlock
    8: ("sharedMemPerBlock", 49152, 49152),  # cudaDevAttrMaxSharedMemoryPerBlock
    10: ("warpSize", 32, 32),  # cudaDevAttrWarpSize
    16: ("multiProcessorCount", 1, 1024),  # cudaDevAttrMultiProcessorCount
    39: ("maxThreadsPerMultiProcessor", 1024, 2048),  # cudaDevAttrMaxThreadsPerMultiProcessor
    75: ("major", 5, 12),  # cudaDevAttrComputeCapabilityMajor
    76: ("minor", 0, 9),  # cudaDevAttrComputeCapabilityMinor
    81: ("sharedMemPerMultiprocessor", 65536, 233472),  # cudaDevAttrMaxSharedMemoryPerMultiprocessor
    97: ("sharedMemPerBlockOptin", 49152, 232448),  # cudaDevAttrMaxSharedMemoryPerBlockOptin
    106: ("maxBlocksPerMultiProcessor", 16, 32),  # cudaDevAttrMaxBlocksPerMultiprocessor
}
DEVICE_ATTRIBUTE_RANGES = {attr: (lo, hi) for attr, (_, lo, hi) in DEVICE_ATTRIBUTES.items()}
DEVICE_PROPERTY_RANGES = {name: (lo, hi) for name, lo, hi in DEVICE_ATTRIBUTES.values()}


@model("cudaDeviceGetAttribute", "cudaGetDevice", "cudaGetDeviceCount", "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
       "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cuDeviceGetAttribute")
def runtime_query(interp, st, call, this, args):
    """Device queries written through an int pointer. Attributes with a known range take it (SM
    counts, shared-memory limits); any other answer is positive and unconstrained, and a finding
    that needs a particular one is inconclusive (needs-values). The device index is 0."""
    out = args[0]
    if isinstance(out, PtrV):
        ty = out.pointee if isinstance(out.pointee, T.IntType) else T.INT32
        lo = 0 if call.name.startswith(("cudaGetDevice", "cudaOccupancy")) and call.name != "cudaGetDeviceCount" else 1
        hi = 0 if call.name == "cudaGetDevice" else (1 << 20)
        attr = args[1].concrete() if call.name.endswith("GetAttribute") and isinstance(args[1], IntV) else None
        known = attr in DEVICE_ATTRIBUTE_RANGES or call.name in ("cudaGetDevice", "cudaGetDeviceCount")
        if attr in DEVICE_ATTRIBUTE_RANGES:
            lo, hi = DEVICE_ATTRIBUTE_RANGES[attr]
        v = ranged_int(interp, st, call.name, ty, lo, hi)
        what = f"`{call.name}` at {call.span.file}:{call.span.line}"
        if known:
            interp.ctx.symbol(what, v.bv, "host", ty.signed)
        else:
            interp.ctx.remember_untracked(v, "unknown-call", what)
        interp.store(st, interp.deref(out, ty, call.span), v, call.span)
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


@model("cudaGetDeviceProperties", "cudaFuncGetAttributes")
def properties_out(interp, st, call, this, args):
    """The structure is written whole (launchers of the stable ABI ask the runtime where classic
    ones read at::cuda::getCurrentDeviceProperties()). A device property with a known range takes
    it, as cudaDeviceGetAttribute's answer does (SM count, threads per SM); any other field is a
    value the engine does not compute (a finding that needs one is needs-values)."""
    ptr = args[0]
    ty = ptr.pointee if isinstance(ptr, PtrV) else T.VOID
    value = fresh_value(ty, "properties", interp.ctx.counter)
    if value is None:
        raise PathEnd("stuck", f"{call.name} into a {ty.name}", call.span)
    what = f"`{call.name}` at {call.span.file}:{call.span.line}"
    if call.name == "cudaGetDeviceProperties" and isinstance(value, StructV):
        fields = dict(value.fields)
        for path, v in value.leaves("prop"):
            name = path[len("prop."):]
            if name in DEVICE_PROPERTY_RANGES and isinstance(v, IntV):
                lo, hi = DEVICE_PROPERTY_RANGES[name]
                fields[name] = ranged_int(interp, st, path, v.ty, lo, hi)
                interp.ctx.symbol(f"{name} from {what}", fields[name].bv, "host", v.ty.signed)
            elif isinstance(v, IntV):  # maxGridSize[1] too, not only the top-level fields
                interp.ctx.remember_untracked(v, "unknown-call", f"`{name}` from {what}")
        value = StructV(value.ty, fields)
    interp.store(st, interp.deref(ptr, ty, call.span), value, call.span)
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


@model("cudaFuncSetAttribute", "cudaFuncSetCacheConfig", "cudaFuncSetSharedMemConfig", "cudaStreamWaitEvent",
       "cudaLaunchHostFunc", "cudaProfilerStart", "cudaProfilerStop")
def runtime_setting(interp, st, call, this, args):
    if call.name == "cudaFuncSetAttribute" and len(args) >= 3 and isinstance(args[1], IntV) \
            and args[1].concrete() == FUNC_ATTR_MAX_DYNAMIC_SMEM:
        # The kernel opts in to more dynamic shared memory than the default 48 KiB.
        value = args[2].concrete() if isinstance(args[2], IntV) else None
        interp.ctx.smem_limit = min(value, MAX_SMEM_OPTIN) if value is not None else MAX_SMEM_OPTIN
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


# ---------------------------------------------------------------- launches through the runtime API


@model("cudaLaunchKernel", "cudaLaunchCooperativeKernel")
def launch_kernel(interp, st, call, this, args):
    """``cudaLaunchKernel(func, grid, block, args, sharedMem, stream)``: the launch ``<<<grid, block,
    sharedMem, stream>>>`` of ``func`` with the arguments ``*(P_i*)args[i]``. It is run as that launch
    (the same events, checks and symbolic thread); the grid, block, size and stream expressions are
    evaluated once more for it (they are plain values in launchers)."""
    if len(call.args) < 4:
        raise PathEnd("stuck", f"{call.name} without an argument array", call.span)
    smem = call.args[4] if len(call.args) > 4 else None
    stream = call.args[5] if len(call.args) > 5 else None
    return _launch_from_array(interp, st, call, args[0] if args else None, call.args[3],
                              (call.args[1], call.args[2], smem, stream))


@model("cudaLaunchKernelExC")
def launch_kernel_ex_c(interp, st, call, this, args):
    """``cudaLaunchKernelExC(&config, func, args)`` (the C form the templated cudaLaunchKernelEx
    wraps, written out where the kernel is chosen through a `void*`): the launch of ``func`` with
    the configuration's grid, block, dynamic shared memory and stream, and its arguments read from
    the array as for cudaLaunchKernel. The attributes change scheduling, not the launch."""
    from ...kir import nodes as N
    if len(call.args) < 3:
        raise PathEnd("stuck", f"{call.name} without an argument array", call.span)
    config = call.args[0]
    cfg_type = T.strip_ref(config.ty)
    cfg_type = cfg_type.pointee if isinstance(cfg_type, T.PtrType) else None
    fields = [cfg_type.field(n) if isinstance(cfg_type, T.StructType) else None for n in N.LAUNCH_CONFIG_FIELDS]
    if None in fields:
        raise PathEnd("stuck", f"{call.name} with a configuration the engine cannot read", call.span)
    dims = tuple(N.Member(config, f.name, True, f.type, span=call.span) for f in fields)
    return _launch_from_array(interp, st, call, args[1], call.args[2], dims)


def _launch_from_array(interp, st, call, func, argv, dims: tuple):
    """The launch of the kernel ``func`` names, with ``dims`` (grid, block, dynamic shared memory,
    stream expressions) and the kernel's arguments ``*(P_i*)argv[i]``."""
    from ...kir import nodes as N
    from ..values import FuncV
    if not isinstance(func, FuncV) or func.key is None or func.key not in interp.program.functions:
        raise PathEnd("stuck", f"{call.name} of a kernel the engine cannot name", call.span)
    kernel = interp.program.functions[func.key]
    if kernel.kind != "kernel":
        raise PathEnd("stuck", f"{call.name} of {kernel.display}, which is not a __global__ function", call.span)
    void_ptr = T.PtrType(T.VOID)
    kernel_args = []
    for i, p in enumerate(kernel.params):
        slot = N.Index(argv, N.IntLit(i, T.INT64, span=argv.span), void_ptr, span=argv.span)
        ty = T.strip_ref(p.ty)
        kernel_args.append(N.Deref(N.Cast("static", slot, T.PtrType(ty), span=argv.span), ty, span=argv.span))
    launch = N.Launch(kernel.key, kernel.display, *dims, tuple(kernel_args), span=call.span)
    interp.ev_launch(launch, st)
    return const_int(0, T.strip_ref(call.ty)) if isinstance(T.strip_ref(call.ty), T.IntType) else VOID


# ---------------------------------------------------------------- cuBLAS (column-major GEMMs)

CUBLAS_OP_N = 0
# cudaDataType values cuBLAS GEMMs take, and their element sizes in bytes.
CUDA_DATA_TYPE_SIZES = {0: 4, 1: 8, 2: 2, 3: 1, 8: 1, 10: 4, 14: 2, 28: 1, 29: 1}


@model("cublasCreate", "cublasDestroy", "cublasSetStream", "cublasSetMathMode", "cublasSetPointerMode",
       "cublasSetWorkspace")
def cublas_status(interp, st, call, this, args):
    """Handle set-up: success. A workspace is cuBLAS's own scratch, whose size it checks itself."""
    ty = T.strip_ref(call.ty)
    if call.name == "cublasCreate" and isinstance(args[0], PtrV):
        interp.store(st, interp.deref(args[0], args[0].pointee, call.span), OpaqueV("handle", args[0].pointee), call.span)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


def _op_is_n(v, call) -> bool:
    c = v.concrete() if isinstance(v, IntV) else None
    if c is None:
        raise PathEnd("stuck", f"{call.name} with a transpose flag the engine cannot read", call.span)
    return c == CUBLAS_OP_N


def _matrix_access(interp, st, ptr, rows: IntV, cols: IntV, ld: IntV, esize: int, write: bool, call,
                   stride=None, batch=None) -> None:
    """A column-major ``rows x cols`` matrix with leading dimension ``ld`` (and ``batch`` of them
    ``stride`` elements apart): its first and its last element are accessed."""
    from ..memory import index_to_int64
    from ..values import Loc
    if not isinstance(ptr, PtrV):
        return
    span = call.span
    wide = [ints.convert(x, T.INT64, span) if x.ty != T.INT64 else x for x in (rows, cols, ld)]
    one = const_int(1, T.INT64)
    # last = (cols - 1) * ld + rows - 1 (+ (batch - 1) * stride): exact in 64 bits for 32-bit inputs.
    last = ints.arith("+", ints.arith("*", ints.arith("-", wide[1], one, T.INT64, span), wide[2], T.INT64, span),
                      ints.arith("-", wide[0], one, T.INT64, span), T.INT64, span)
    if stride is not None and batch is not None:
        b = ints.convert(batch, T.INT64, span) if batch.ty != T.INT64 else batch
        s = ints.convert(stride, T.INT64, span) if stride.ty != T.INT64 else stride
        last = ints.arith("+", last, ints.arith("*", ints.arith("-", b, one, T.INT64, span), s, T.INT64, span),
                          T.INT64, span)
    elem = T.IntType(esize * 8, False, f"cublas element of {esize} bytes") if esize in (1, 2, 4, 8) else None
    if elem is None:
        raise PathEnd("stuck", f"{call.name} with elements of {esize} bytes", span)
    base = PtrV(ptr.region, ptr.off, elem)
    empty = [x.bv == 0 for x in (rows, cols)] + ([batch.bv == 0] if batch is not None else [])
    guard = z3.Not(z3.Or(*empty))
    interp.emit_access(st, Loc(base.region, base.off, elem), esize, write, span, guard)
    end = interp.ptr_add(base, index_to_int64(last, span), span)
    interp.emit_access(st, Loc(end.region, end.off, elem), esize, write, span, guard)


@model("cublasSgemm", "cublasHgemm", "cublasGemmEx", "cublasGemmStridedBatchedEx")
def cublas_gemm(interp, st, call, this, args):
    """C (m x n) = op(A) (m x k) * op(B) (k x n), column-major: A is ``lda x k`` (``lda x m``
    transposed), B ``ldb x n`` (``ldb x k``), C ``ldc x n``. Checks the extent of each matrix."""
    ta, tb, m, n, k = args[1:6]
    if not all(isinstance(x, IntV) for x in (m, n, k)):
        raise PathEnd("stuck", f"{call.name} with sizes the engine cannot read", call.span)
    if call.name in ("cublasSgemm", "cublasHgemm"):
        a, lda, b, ldb, c, ldc = args[7], args[8], args[9], args[10], args[12], args[13]
        sizes = [a.pointee.size if isinstance(a, PtrV) else 4] * 3
        strides = batch = None
    else:
        strided = call.name == "cublasGemmStridedBatchedEx"
        i = 7
        a, atype, lda = args[i], args[i + 1], args[i + 2]
        i += 4 if strided else 3
        b, btype, ldb = args[i], args[i + 1], args[i + 2]
        i += 5 if strided else 4  # B, its type, ldb, (strideB), beta
        c, ctype, ldc = args[i], args[i + 1], args[i + 2]
        sizes = []
        for t in (atype, btype, ctype):
            code = t.concrete() if isinstance(t, IntV) else None
            if code not in CUDA_DATA_TYPE_SIZES:
                raise PathEnd("stuck", f"{call.name} with a data type the engine cannot read", call.span)
            sizes.append(CUDA_DATA_TYPE_SIZES[code])
        strides = (args[10], args[15], args[20]) if strided else None
        batch = args[21] if strided else None
    sa, sb, sc = strides if strides else (None, None, None)
    a_rows, a_cols = (m, k) if _op_is_n(ta, call) else (k, m)
    b_rows, b_cols = (k, n) if _op_is_n(tb, call) else (n, k)
    # k == 0 reads nothing of A and B (C is scaled by beta).
    if k.concrete() != 0:
        _matrix_access(interp, st, a, a_rows, a_cols, lda, sizes[0], False, call, sa, batch)
        _matrix_access(interp, st, b, b_rows, b_cols, ldb, sizes[1], False, call, sb, batch)
    _matrix_access(interp, st, c, m, n, ldc, sizes[2], True, call, sc, batch)
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID
