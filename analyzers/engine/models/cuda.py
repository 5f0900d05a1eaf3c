"""CUDA device built-ins: synchronisation, warp collectives, memory intrinsics, atomics, bit tricks,
cub collectives."""
from __future__ import annotations

import z3

from ...kir import types as T
from ..memory import PathEnd
from ..state import fresh_value
from .. import ints, lia
from ..values import FloatV, IntV, OpaqueV, PtrV, RefV, const_int, fresh_int
from . import model

VOID = OpaqueV("void")
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
    _remember(interp, v, origin, f"`{call.name}` at {call.span.file}:{call.span.line}")
    return v


def _remember(interp, v, origin: str, what: str) -> None:
    from ..values import BoolV, StructV
    if isinstance(v, IntV):
        interp.ctx.symbol(f"{what}", v.bv, "load", v.ty.signed, (origin, what, False))
    elif isinstance(v, StructV):
        for f in v.fields.values():
            _remember(interp, f, origin, what)


def bounded(interp, call, lo: int, hi: int, name: str):
    ty = T.strip_ref(call.ty)
    return fresh_int(interp.ctx.fresh_name(name), ty, lo, hi)


def _assume_range(st, v: IntV, lo: int, hi: int) -> IntV:
    term = z3.And(v.bv >= lo, v.bv <= hi) if v.ty.signed else z3.And(z3.UGE(v.bv, lo), z3.ULE(v.bv, hi))
    st.assume(lia.CURRENT.register(term, z3.And(ints.I(v) >= lo, ints.I(v) <= hi)))
    return v


@model("__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "__threadfence_system",
       "__nanosleep", "cudaDeviceSynchronize", "__builtin_assume", "__builtin_prefetch")
def no_effect(interp, st, call, this, args):
    return VOID


@model("__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__all_sync", "__any_sync",
       "__ballot_sync", "__activemask", "__match_any_sync", "clock", "clock64", "__globaltimer",
       "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__reduce_add_sync",
       "__reduce_max_sync", "__reduce_min_sync", "printf", "__brev", "__byte_perm", "__mulhi", "__umulhi",
       "__mul64hi", "__umul64hi", "__funnelshift_l", "__funnelshift_r", "cub::ShuffleIndex")
def any_value(interp, st, call, this, args):
    """A value of the right type, otherwise unconstrained (another thread's value, a timer...)."""
    return untracked_result(interp, call, "lane")


@model("__popc", "__clz", "__ffs")
def bits32(interp, st, call, this, args):
    return _assume_range(st, bounded(interp, call, 0, 32, call.name), 0, 32)


@model("__popcll", "__clzll", "__ffsll")
def bits64(interp, st, call, this, args):
    return _assume_range(st, bounded(interp, call, 0, 64, call.name), 0, 64)


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
    return fresh_result(interp, call, call.name)


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
       "atomicInc", "atomicDec", "atomicCAS", "atomicAdd_block", "atomicAdd_system")
def atomic(interp, st, call, this, args):
    """Read-modify-write through the pointer: both accesses are checked; the old value is unknown."""
    ptr = args[0]
    ty = T.strip_ref(call.ty)
    loc = interp.deref(ptr, ty, call.span)
    old = interp.load(st, loc, call.span)
    interp.store(st, loc, fresh_value(ty, "atomic", interp.ctx.counter) or old, call.span)
    return untracked_result(interp, call, "atomic", "atomic_old")


@model("memcpy", "memset", "memmove", "std::memcpy", "std::memset")
def mem_bytes(interp, st, call, this, args):
    n = args[-1]
    if not isinstance(n, IntV):
        raise PathEnd("stuck", f"{call.name} size", call.span)
    pointers = [a for a in args[:-1] if isinstance(a, PtrV)]
    writes = [True] + ([False] if call.name.endswith(("memcpy", "memmove")) else [])
    for ptr, write in zip(pointers, writes):
        _check_range(interp, st, ptr, n, write, call.span)
        if write and ptr.region.tracked:
            st.clear_content(ptr.region)
    return args[0]


def _check_range(interp, st, ptr: PtrV, n: IntV, write: bool, span) -> None:
    """Bytes [p, p+n) are accessed: check the first and the last."""
    from ..memory import index_to_int64
    from ..values import Loc
    byte = T.IntType(8, False, "unsigned char")
    c = n.concrete()
    if c == 0:
        return
    interp.emit_access(st, Loc(ptr.region, ptr.off, byte), 1, write, span)
    last = interp.ptr_add(PtrV(ptr.region, ptr.off, byte), index_to_int64(n, span), span)
    last = interp.ptr_add(last, const_int(1, T.INT64), span, subtract=True)
    guard = None if c is not None else z3.UGT(n.bv, 0) if not n.ty.signed else n.bv > 0
    interp.emit_access(st, Loc(last.region, last.off, byte), 1, write, span, guard)


@model("sincosf", "__sincosf", "sincos")
def sincos(interp, st, call, this, args):
    for ptr in args[1:3]:
        loc = interp.deref(ptr, T.FLOAT, call.span)
        interp.store(st, loc, FloatV(T.FLOAT), call.span)
    return VOID


# ---------------------------------------------------------------- cub collectives


@model("cub::BlockReduce::BlockReduce", "cub::WarpReduce::WarpReduce", "cub::BlockScan::BlockScan",
       "cub::WarpScan::WarpScan")
def cub_ctor(interp, st, call, this, args):
    return VOID


@model("cub::BlockReduce::Sum", "cub::BlockReduce::Reduce", "cub::WarpReduce::Sum", "cub::WarpReduce::Reduce")
def cub_reduce(interp, st, call, this, args):
    return untracked_result(interp, call, "collective", "reduction")


@model("cub::BlockScan::ExclusiveSum", "cub::BlockScan::InclusiveSum", "cub::BlockScan::ExclusiveScan",
       "cub::BlockScan::InclusiveScan", "cub::WarpScan::ExclusiveSum", "cub::WarpScan::InclusiveSum")
def cub_scan(interp, st, call, this, args):
    for a in args[1:]:
        if isinstance(a, RefV):
            ty = T.strip_ref(a.loc.ty)
            v = fresh_value(ty, "scan", interp.ctx.counter)
            if v is not None:
                _remember(interp, v, "collective", f"`{call.name}` at {call.span.file}:{call.span.line}")
                interp.store(st, a.loc, v, call.span)
    return VOID


# ---------------------------------------------------------------- runtime API (plain CUDA host code)


@model("cudaMalloc", "cudaMallocManaged", "cudaMallocHost", "cudaMallocAsync", "cudaHostAlloc", "malloc",
       "std::malloc", "cudaMallocFromPoolAsync")
def device_alloc(interp, st, call, this, args):
    """A new object of the requested size, stored through the out-pointer (or returned by malloc):
    plain CUDA host code is an op whose buffer sizes come from its allocations."""
    from ..events import Sink
    returns = call.name in ("malloc", "std::malloc")
    size = args[0] if returns else args[1]
    if not isinstance(size, IntV):
        raise PathEnd("stuck", f"{call.name} of a size that is not an integer", call.span)
    size64 = ints.convert(size, T.INT64, call.span) if size.ty.bits != 64 or size.ty.signed is False else size
    if size.math is not None:
        interp.emit_sink(st, Sink(size, "alloc", call.span, interp.stack_spans(st), f"the size of the {call.name}"))
    kind = "host" if call.name in ("malloc", "std::malloc", "cudaMallocHost", "cudaHostAlloc") else "global"
    out = None if returns else args[0]
    # Named after the variable that receives it (cudaMalloc(&d_x, ...) allocates d_x).
    name = out.region.name if isinstance(out, PtrV) and out.region.kind in ("local", "param") else \
        f"{call.name} at line {call.span.line}"
    region = interp.new_region(kind, name, size64, call.span, align=256)
    if returns:
        return PtrV(region, const_int(0, T.INT64), T.VOID)
    if isinstance(out, PtrV):
        slot_ty = out.pointee if isinstance(out.pointee, T.PtrType) else T.PtrType(T.VOID)
        interp.store(st, interp.deref(out, slot_ty, call.span), PtrV(region, const_int(0, T.INT64), slot_ty.pointee),
                     call.span)
    return const_int(0, T.strip_ref(call.ty)) if isinstance(T.strip_ref(call.ty), T.IntType) else VOID


@model("cudaMemcpy", "cudaMemcpyAsync", "cudaMemset", "cudaMemsetAsync")
def device_copy(interp, st, call, this, args):
    """Copies and fills access ``count`` bytes of each buffer: both ends are checked."""
    count = args[2]
    if not isinstance(count, IntV):
        raise PathEnd("stuck", f"{call.name} with a size that is not an integer", call.span)
    if isinstance(args[0], PtrV):
        _check_range(interp, st, args[0], count, True, call.span)
    if call.name.startswith("cudaMemcpy") and isinstance(args[1], PtrV):
        _check_range(interp, st, args[1], count, False, call.span)
    return const_int(0, T.strip_ref(call.ty)) if isinstance(T.strip_ref(call.ty), T.IntType) else VOID


@model("cudaFree", "cudaFreeHost", "cudaFreeAsync", "free", "std::free", "cudaDeviceSynchronize",
       "cudaStreamSynchronize", "cudaGetLastError", "cudaPeekAtLastError", "cudaDeviceReset", "cudaSetDevice",
       "cudaStreamCreate", "cudaStreamDestroy", "cudaEventCreate", "cudaEventRecord", "cudaEventSynchronize",
       "cudaEventDestroy", "cudaEventElapsedTime")
def runtime_status(interp, st, call, this, args):
    """Runtime calls that touch no buffer the checks follow: success (lifetimes are not checked)."""
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


@model("cudaDeviceGetAttribute", "cudaGetDevice", "cudaGetDeviceCount", "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
       "cuDeviceGetAttribute")
def runtime_query(interp, st, call, this, args):
    """Device queries written through an int pointer: a positive value (SM counts, shared memory
    limits, occupancy), unconstrained otherwise. The device index is 0."""
    out = args[0]
    if isinstance(out, PtrV):
        ty = out.pointee if isinstance(out.pointee, T.IntType) else T.INT32
        lo = 0 if call.name in ("cudaGetDevice", "cudaOccupancyMaxActiveBlocksPerMultiprocessor") else 1
        hi = 0 if call.name == "cudaGetDevice" else (1 << 20)
        v = _assume_range(st, fresh_int(interp.ctx.fresh_name(call.name), ty, lo, hi), lo, hi)
        interp.ctx.symbol(f"`{call.name}` at {call.span.file}:{call.span.line}", v.bv, "host", ty.signed)
        interp.store(st, interp.deref(out, ty, call.span), v, call.span)
    ty = T.strip_ref(call.ty)
    return const_int(0, ty) if isinstance(ty, T.IntType) else VOID


@model("cudaFuncSetAttribute", "cudaFuncSetCacheConfig", "cudaFuncSetSharedMemConfig", "cudaStreamWaitEvent",
       "cudaLaunchHostFunc", "cudaProfilerStart", "cudaProfilerStop")
def runtime_setting(interp, st, call, this, args):
    if call.name == "cudaFuncSetAttribute" and len(args) >= 3 and isinstance(args[1], IntV) \
            and args[1].concrete() == FUNC_ATTR_MAX_DYNAMIC_SMEM:
        # The kernel opts in to more dynamic shared memory than the default 48 KiB.
        from ...checks.launch import MAX_SMEM_OPTIN
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
    from ...kir import nodes as N
    from ..values import FuncV
    func = args[0] if args else None
    if not isinstance(func, FuncV) or func.key is None or func.key not in interp.program.functions:
        raise PathEnd("stuck", f"{call.name} of a kernel the engine cannot name", call.span)
    kernel = interp.program.functions[func.key]
    if kernel.kind != "kernel":
        raise PathEnd("stuck", f"{call.name} of {kernel.display}, which is not a __global__ function", call.span)
    if len(call.args) < 4:
        raise PathEnd("stuck", f"{call.name} without an argument array", call.span)
    argv = call.args[3]
    void_ptr = T.PtrType(T.VOID)
    kernel_args = []
    for i, p in enumerate(kernel.params):
        slot = N.Index(argv, N.IntLit(i, T.INT64, span=argv.span), void_ptr, span=argv.span)
        ty = T.strip_ref(p.ty)
        kernel_args.append(N.Deref(N.Cast("static", slot, T.PtrType(ty), span=argv.span), ty, span=argv.span))
    smem = call.args[4] if len(call.args) > 4 else None
    stream = call.args[5] if len(call.args) > 5 else None
    launch = N.Launch(kernel.key, kernel.display, call.args[1], call.args[2], smem, stream, tuple(kernel_args),
                      span=call.span)
    interp.ev_launch(launch, st)
    return const_int(0, T.strip_ref(call.ty)) if isinstance(T.strip_ref(call.ty), T.IntType) else VOID
