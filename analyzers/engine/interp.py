"""The interpreter, assembled from its parts, and ``analyze``: one instance in, one verdict out."""
from __future__ import annotations

import time
from dataclasses import replace

from .. import binding as B
from ..findings import Inconclusive, InstanceResult, verdict_of
from ..kir import nodes as N
from ..kir import types as T
from . import contract, replay
from .calls import CallOps
from .context import BudgetExceeded, Context, Options
from .exprs import ExprOps
from .host import BindingError, HostOps
from .invariants import InvariantOps
from .loops import LoopOps
from .memory import MemoryOps, PathEnd
from .models.std import is_string_class
from .relations import FactOps
from .state import use_unwritten
from .stmts import StmtOps
from .threads import ThreadOps


class Interpreter(MemoryOps, ExprOps, StmtOps, LoopOps, InvariantOps, CallOps, HostOps, FactOps, ThreadOps):
    def __init__(self, program: N.Program, ctx: Context):
        self.program = program
        self.ctx = ctx
        self._regions = 0
        self._tracked: dict = {}  # region id -> Region, for the objects whose contents are tracked
        self._silent = False  # inside an invariant search's pass through a loop body
        use_unwritten(self.unwritten_value, self.lost_content)
        self._statics: dict = {}
        self._shapes: dict = {}
        self.null_region = self.new_region("null", "nullptr", 0)
        self.cast_pointee = None  # (untyped data_ptr() call, element type) of the cast being evaluated
        self.atomic_access = False  # inside an atomic's read-modify-write
        self.atomic_scope = ""  # and its scope, where narrower than the device ("block")
        self.loop_depth = 0  # loops around the statement running (an atomic in one may run many times)


Interpreter._rv = dict(ExprOps._rv)
Interpreter._rv.update({N.Call: CallOps.ev_call, N.Construct: CallOps.ev_construct, N.Launch: HostOps.ev_launch})
Interpreter._stmt = dict(StmtOps._stmt)
Interpreter._stmt.update(LoopOps._loop_stmts)


def analyze(program: N.Program, fn: N.Function, inst: B.Instance, checks: list, options: Options | None = None,
            name: str = "", models: list[str] | None = None) -> InstanceResult:
    """Verify one instance: run the op ``fn`` with the instance's arguments and every kernel it
    launches, and collect what the checks find.

    When the budget runs out inside a kernel, the instance runs again (``options.follow_ups``
    times at most, each with the full budget) without entering that kernel: the other launches, on
    every path, still get their verdict, and the kernel that took the time alone is inconclusive.
    Skipping it changes nothing else: what a kernel writes is never carried to later launches."""
    options = options or Options()
    result, ctx = _analyze_once(program, fn, inst, checks, options, name, models)
    stuck_in, pins = ctx.timed_out_in, ctx.replay_pins
    skipped: list[str] = []
    names = dict(ctx.kernel_names)
    while stuck_in is not None and len(skipped) < options.follow_ups:
        skipped.append(stuck_in)
        again = replace(options, skip_kernels=frozenset(skipped))
        follow_up, fctx = _analyze_once(program, fn, inst, [type(c)() for c in checks], again, name, models)
        _merge_follow_up(result, follow_up, names.get(stuck_in, stuck_in))
        names.update(fctx.kernel_names)
        stuck_in, pins = fctx.timed_out_in, pins + fctx.replay_pins
    # Inputs fixed, the loops a summary could not settle run concretely (replay.py).
    imprecise = replay.imprecise_places(result)
    for _, fixed in sorted(pins, key=lambda rp: rp[0])[:replay.MAX_REPLAYS]:
        if not any(i.reason == "imprecise-loop" for i in result.inconclusive):
            break
        again = replace(options, pins=fixed, follow_ups=0, skip_kernels=frozenset(skipped))
        replayed, rctx = _analyze_once(program, fn, inst, [type(c)() for c in checks], again, name, models)
        replay.settle(result, replayed, rctx.symbols, fixed)
        if imprecise and imprecise <= replay.imprecise_places(replayed):
            break  # no loop ran concretely with the inputs fixed: other input values will not make them
    return result


def _merge_follow_up(result: InstanceResult, follow_up: InstanceResult, skipped: str) -> None:
    """Fold a follow-up run into the result: the budget that ran out is the skipped kernel's alone."""
    for inc in result.inconclusive:
        if inc.reason == "timeout" and inc.kernel is None:
            inc.kernel = skipped
            inc.detail = (inc.detail.replace("the instance ran past", f"the analysis of {skipped} ran past", 1)
                          + " (the op's other launches ran in a follow-up run that skipped it)")
    keys = {f.key(): f for f in result.findings}
    for f in follow_up.findings:
        if f.key() in keys:
            first = keys[f.key()]
            first.related += [r for r in f.related if r not in first.related and r != first.location]
        else:
            result.findings.append(f)
            keys[f.key()] = f
    seen = {(i.reason, i.detail, i.span, i.kernel) for i in result.inconclusive}
    result.inconclusive += [i for i in follow_up.inconclusive if (i.reason, i.detail, i.span, i.kernel) not in seen]
    result.assumptions += [a for a in follow_up.assumptions if a not in result.assumptions]
    result.kernels += [k for k in follow_up.kernels if k not in result.kernels]
    result.seconds += follow_up.seconds
    result.work += follow_up.work
    result.queries += follow_up.queries
    result.verdict = verdict_of(result.findings, result.inconclusive)


def _analyze_once(program: N.Program, fn: N.Function, inst: B.Instance, checks: list, options: Options,
                  name: str, models: list[str] | None) -> tuple[InstanceResult, Context]:
    t0 = time.perf_counter()
    ctx = Context(fn.display, options, checks, inst.model_fields, inst.dtype, inst.zero_config,
                  self_contained=fn.kind == "host" and (fn.name == "main" or all(
                      isinstance(T.strip_ref(p.ty), (T.IntType, T.FloatType, T.BoolType)) for p in fn.params)))
    interp = Interpreter(program, ctx)
    result = InstanceResult(fn.display, name or fn.display, list(models or []), inst.dtype, "verified")
    try:
        st = interp.setup(fn, inst)
        for fact in replay.pinned_inputs(ctx.pin_terms, ctx.lia):
            st.assume(fact)
        ctx.setup_ids = {t.get_id() for t in st.pc}
        if not ctx.feasible(st.pc):
            ctx.stuck("binding-infeasible", "the binding's constraints admit no input size", fn.span)
        else:
            end = interp.exec_block(fn.body.stmts if fn.body else (), [st])
            refused = end and all(s.status == "abort" for s in end) and not ctx.findings
            if refused and inst.may_reject:
                ctx.note(f"the op refuses every input with {inst.may_reject} (each path ends at a failing check)")
                result.refused = True
            elif refused:
                # The checks reached last are the ones the paths that got furthest failed: they say
                # what the binding lacks (the first ones are usually dtype forks refused at once).
                why = "; ".join(f"{r} at {sp.file}:{sp.line}" for r, sp in ctx.aborts[-3:]) or "a failing check"
                ctx.stuck("binding-infeasible", f"every path of the op fails a check for this binding ({why}): "
                          "the binding does not describe a valid call", fn.span)
    except BindingError as exc:
        ctx.stuck("binding-error", str(exc), fn.span)
    except BudgetExceeded:
        ctx.stuck("timeout", f"the instance ran past {ctx.meter.why_spent()}", None)
    except PathEnd as pe:
        if pe.status == "stuck":
            ctx.stuck(pe.kind, pe.reason, pe.span)
    except RecursionError:
        ctx.stuck("unsupported", "nesting too deep for the engine", None)
    _no_kernel_reached(ctx, result)
    contract.settle(ctx)
    result.findings = list(ctx.findings.values())
    params = tuple((p.name, _param_kind(p.ty)) for p in fn.params)
    layouts = {p.name: struct_members(_struct_of(p.ty), p.name) for p in fn.params if _struct_of(p.ty) is not None}
    for f in result.findings:
        f.models = list(models or [])
        f.dtypes = [inst.dtype]
        f.zero_config = inst.zero_config
        f.call = B.concrete_call(inst, f.witness, ctx.witness_loads(f.witness), fn.name, fn.span.line, params,
                                 f.load_elements, layouts)
        if ctx.foreign_pointers:
            f.call["foreign_pointers"] = list(ctx.foreign_pointers)
    if options.control_call:
        sizes = B.sample_sizes(inst)
        if sizes is not None:
            result.control_call = B.concrete_call(inst, dict(sizes, dtype=inst.dtype), {}, fn.name, fn.span.line,
                                                  params, layouts=layouts)
    result.inconclusive = list(ctx.inconclusive)
    result.assumptions = list(ctx.assumptions)
    result.kernels = list(ctx.kernels)
    result.verdict = verdict_of(result.findings, result.inconclusive)
    result.seconds = time.perf_counter() - t0
    result.queries = ctx.solver.stats.queries
    result.work = ctx.meter.units()
    return result, ctx


def _no_kernel_reached(ctx: Context, result: InstanceResult) -> None:
    """An op whose paths launch no kernel was checked in its host code only. Where it called a
    host function the scan has no body for, that function may be its launcher (defined in a file
    the scan did not parse): the kernels it launches are unverified, so the instance cannot be
    `verified`. Without such a call the op is host-only, which the assumptions say."""
    if ctx.kernels or ctx.inconclusive or ctx.findings or result.refused:
        return
    if ctx.host_calls_without_body:
        name, span = ctx.host_calls_without_body[0]
        more = len(ctx.host_calls_without_body) - 1
        ctx.stuck("unsupported", f"no kernel was reached: the op calls `{name}`" + (f" (and {more} more)" if more else "")
                  + ", which has no body in the scanned files and may launch its kernels; list the file "
                  "that defines it in the op's entry (or its includes) to verify them", span)
    else:
        ctx.note("no path of the op launches a kernel: its host code alone was checked")


def _struct_of(ty) -> T.StructType | None:
    """The struct a parameter takes, by value or through a pointer (a ggml op's `dst`)."""
    ty = T.strip_ref(ty)
    if isinstance(ty, T.PtrType):
        ty = T.strip_ref(ty.pointee)
    return ty if isinstance(ty, T.StructType) and ty.fields else None


def _is_stream(ty) -> bool:
    """A CUDA stream (`cudaStream_t`: a pointer to the runtime's CUstream_st)."""
    return isinstance(ty, T.PtrType) and "CUstream_st" in T.strip_ref(ty.pointee).name


def _param_kind(ty) -> str:
    """How a reproducer passes a parameter the binding leaves out (binding.concrete_call)."""
    ty = T.strip_ref(ty)
    ty = getattr(ty, "payload", None) or ty  # an optional number the binding leaves out is taken present
    if isinstance(ty, (T.IntType, T.BoolType)):
        return "int"
    if _is_stream(ty):
        return "stream"
    if isinstance(ty, T.StructType):
        return "struct"
    if _struct_of(ty) is not None:
        return "struct-pointer"
    if is_string_class(ty):
        return "string"
    return "float" if isinstance(ty, T.FloatType) else "other"


def struct_members(ty: T.StructType, name: str, depth: int = 0) -> list[dict]:
    """The members a reproducer sets in a struct taken by value (binding.concrete_call), as paths
    the witness names them by (``g.nodes``, ``p.dims.0``): each number or flag (``scalar``), each
    pointer (``pointer``, with its element's size: memory a harness allocates, as the engine gave
    it memory of a size nobody states), each CUDA stream (``stream``: the default one), and each
    member a harness cannot make (``other``: a pointer to a struct, a union, a class of the
    library)."""
    out = []
    for f in ty.fields:
        fty, path = T.strip_ref(f.type), f"{name}.{f.name}"
        if isinstance(fty, (T.IntType, T.BoolType, T.FloatType)):
            out.append({"path": path, "kind": "scalar", "float": isinstance(fty, T.FloatType)})
        elif _is_stream(fty):
            out.append({"path": path, "kind": "stream"})  # null: the default stream
        elif isinstance(fty, T.PtrType) and not isinstance(T.strip_ref(fty.pointee), (T.StructType, T.OpaqueType,
                                                                                         T.PtrType)):
            out.append({"path": path, "kind": "pointer", "elem_size": max(T.strip_ref(fty.pointee).size, 1)})
        elif isinstance(fty, T.StructType) and depth < 4:
            out.extend(struct_members(fty, path, depth + 1))
        elif isinstance(fty, T.ArrayType) and fty.count and fty.count <= 64 and depth < 4:
            elem = T.StructType(fields=tuple(T.Field(str(i), fty.elem, 0) for i in range(fty.count)))
            out.extend(struct_members(elem, path, depth + 1))
        else:
            out.append({"path": path, "kind": "other", "type": fty.name})
    return out


__all__ = ["Interpreter", "analyze", "Options", "Inconclusive"]
