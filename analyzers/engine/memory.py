"""Memory: regions, locations, pointer arithmetic, loads and stores.

A pointer is (region, byte offset). Every access emits an event the checks decide on, in bytes and
with the real access size. Locals and parameters are *tracked*: their contents are kept per path at
concrete byte offsets. Global and shared memory are not: loads from them are fresh values, bounded
by the binding's value range for index tensors.
"""
from __future__ import annotations

import z3

from ..kir import nodes as N
from ..kir import types as T
from . import ints, lia
from .events import Access
from .state import State, fresh_value, int_of_bytes, merge_values
from .values import (BoolV, FloatV, IntV, Loc, MultiLoc, MultiPtrV, PtrV, Region, StructV, Val,
                     const_int, widen)

# The size of memory nobody states (an `any` pointer, a command-line string): only a negative
# offset is out of its bounds.
UNCHECKED_SIZE = 1 << 62

# A table read at a symbolic index is its entries' values while they are this few (ggml's block
# sizes: 3); past it, a value no finding may rest on (needs-values): ggml's 27 element sizes as an
# if-chain made host questions about a tensor's strides ones the solver could not finish.
TABLE_VALUES_MAX = 8
SYMBOLIC_SPREAD_MAX = 64  # a symbolic offset into a tracked object is spread over at most this many slots


class PathEnd(Exception):
    """Ends the current path: ``status`` is 'abort' (a failing check, a throw: safe) or 'stuck'
    (an unsupported construct: the instance becomes inconclusive)."""

    def __init__(self, status: str, reason: str = "", span: N.Span | None = None, kind: str = "unsupported"):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.span = span
        self.kind = kind


def unsupported(what: str, span: N.Span | None) -> PathEnd:
    """The path end at a construct the lowerer could not represent. Its reason is 'unsupported',
    so the detail only names the construct ("unsupported: expression ..."), or the compiler's
    error ("unsupported: parse error: ...")."""
    return PathEnd("stuck", what, span)


class ForkNeeded(PathEnd):
    """A conditional picks between two objects that no one value can stand for (two tensors): the
    statement holding it runs again on two paths, one per branch. Where it cannot, the path is stuck."""

    def __init__(self, cond, span: N.Span | None = None):
        super().__init__("stuck", "a conditional whose branches give different kinds of objects", span)
        self.cond = cond


class TableFork(ForkNeeded):
    """A pointer read from a table at an index that may pick entries no one value stands for (the
    functions of a dispatch table): the statement runs once with the first entry the path may
    pick and once without it, until one entry is left."""

    def __init__(self, cond, span: N.Span | None = None):
        super().__init__(cond, span)
        self.reason = "a pointer read from a table whose entries no one value stands for"


def int_size(v: int) -> IntV:
    return const_int(v, T.INT64)


class MemoryOps:
    ctx: object
    _regions: int = 0

    # ------------------------------------------------------------ regions

    def new_region(self, kind: str, name: str, size, span: N.Span | None = None, *, tracked: bool = False,
                   elem_size: int = 0, values=None, align: int = 16, note: str = "", unstated: bool = False) -> Region:
        self._regions += 1
        if isinstance(size, int):
            size_bv, lo, hi, size_iv = z3.BitVecVal(size, 64), size, size, z3.IntVal(size)
        else:
            iv = size if size.ty.bits == 64 else ints.convert(size, T.INT64, span or N.NO_SPAN)
            size_bv, lo, hi = iv.bv, max(iv.lo, 0), iv.hi
            size_iv = ints.I(iv) if iv.math is None else None
        region = Region(self._regions, kind, name, size_bv, lo, hi, span, elem_size, tracked, note, values, align, size_iv,
                        unstated)
        if tracked:
            self._tracked[region.id] = region  # what a path never wrote there: unwritten_value
        return region

    def local_region(self, ty: T.Type, name: str, span: N.Span | None, kind: str = "local", align: int = 0) -> Region:
        """A local object; ``align``: what its declaration asks beyond its type's (alignas)."""
        return self.new_region(kind, name, max(ty.size, 0), span, tracked=True, elem_size=_elem_size(ty),
                               align=max(ty.align, align, 1))

    # ------------------------------------------------------------ pointers

    def ptr_add(self, p, idx: IntV, span: N.Span, stack=(), subtract: bool = False):
        if isinstance(p, MultiPtrV):
            return MultiPtrV(tuple((c, self.ptr_add(q, idx, span, stack, subtract)) for c, q in p.alts), p.pointee)
        size = max(T.strip_ref(p.pointee).size, 1) if not isinstance(p.pointee, T.VoidType) else 1
        i64 = index_to_int64(idx, span, stack)
        scaled = ints.arith("*", i64, int_size(size), T.INT64, span, stack)
        off = ints.arith("-" if subtract else "+", p.off, scaled, T.INT64, span, stack)
        return PtrV(p.region, off, p.pointee)

    def deref(self, p, ty: T.Type, span: N.Span):
        if isinstance(p, MultiPtrV):
            return MultiLoc(tuple((c, Loc(q.region, q.off, ty)) for c, q in p.alts), ty)
        if not isinstance(p, PtrV):
            what = {"FuncV": "a function", "OpaqueV": "an opaque handle", "IntV": "an integer", "FloatV": "a float",
                    "StructV": "a struct", "ClosureV": "a lambda"}.get(type(p).__name__, type(p).__name__)
            raise PathEnd("stuck", f"dereference of {what}, not of a pointer the engine follows", span)
        return Loc(p.region, p.off, ty)

    def field_loc(self, loc, name: str, span: N.Span, member_ty: T.Type | None = None):
        if isinstance(loc, MultiLoc):
            return MultiLoc(tuple((c, self.field_loc(sub, name, span, member_ty)) for c, sub in loc.alts), loc.ty)
        st = T.strip_ref(loc.ty)
        if isinstance(st, T.FloatType) and member_ty is not None and T.strip_ref(member_ty).size == st.size:
            # The raw storage of a half / bf16 / fp8 value (x.__x): its bits, which are unknown.
            return Loc(loc.region, loc.off, T.strip_ref(member_ty))
        if isinstance(st, T.StructType):
            f = st.field(name)
            if f is not None:
                off = ints.arith("+", loc.off, int_size(f.offset), T.INT64, span) if f.offset else loc.off
                return Loc(loc.region, off, f.type)
        raise PathEnd("stuck", f"member {name} of {st.name}", span)

    # ------------------------------------------------------------ loads and stores

    def emit_access(self, st: State, loc: Loc, size: int, write: bool, span: N.Span, guard=None, value=None,
                    copy_end: str = "") -> None:
        region = loc.region
        within = getattr(loc, "within", None)
        if region.tracked and region.kind in ("local", "param"):
            c = loc.off.concrete()
            sz = region.size_concrete
            need = min(T.strip_ref(loc.ty).align, 16)
            if c is not None and sz is not None and 0 <= c and c + size <= sz and _inside(within, c, size) \
                    and (region.kind == "param" or (c % max(need, 1) == 0 and need <= region.align)):
                return
        vec = isinstance(T.strip_ref(loc.ty), T.StructType) and size in (8, 16) and region.kind != "param"
        if write and self.ctx.threads is not None:
            self.ctx.threads.written.add(region.id)  # its loads may differ between threads (equal_loads)
        span, stack = N.in_user_code(span, self.stack_spans(st))
        ev = Access(region, loc.off, size, write, span, stack, guard, vec, T.strip_ref(loc.ty).align,
                    within, self.atomic_access, value, self.atomic_scope if self.atomic_access else "", copy_end)
        for check in self.ctx.checks:
            check.on_access(self.ctx, st, ev)

    def load(self, st: State, loc, span: N.Span) -> Val:
        if isinstance(loc, MultiLoc):
            value = None
            for c, sub in self._live_alternatives(st, loc, False, span):
                guarded = st.fork(c)
                v = self._load_one(guarded, sub, span, c)
                st.pc = st.pc + guarded.pc[len(st.pc) + 1:]  # keep the value constraints of the load
                value = v if value is None else (merge_values(c, v, value) or v)
            return value
        return self._load_one(st, loc, span, None)

    def _live_alternatives(self, st: State, loc: MultiLoc, write: bool, span: N.Span) -> list:
        """The alternatives of a pointer that may name several objects, less the null ones: a null
        alternative is checked (null-deref, under its condition) and the path goes on where it does
        not hold, as after any reported access. All null: the path ends."""
        live = []
        for c, sub in loc.alts:
            if sub.region.kind == "null":
                self.emit_access(st, sub, max(T.strip_ref(sub.ty).size, 1), write, span, c)
                st.assume(z3.Not(c))
            else:
                live.append((c, sub))
        if not live:
            raise PathEnd("abort", "null dereference", span, kind="null")
        return live

    def _load_one(self, st: State, loc: Loc, span: N.Span, guard) -> Val:
        ty = T.strip_ref(loc.ty)
        size = ty.size
        if loc.region.kind == "null" or size > 0:
            self.emit_access(st, loc, max(size, 1), False, span, guard)
        if loc.region.kind == "null":
            raise PathEnd("abort", "null dereference", span, kind="null")
        if loc.region.tracked:
            return self._load_tracked(st, loc.region, loc.off, ty, span)
        v = self._load_untracked(st, loc.region, ty, span, loc.off)
        if isinstance(v, FloatV):
            v = FloatV(v.ty, ("mem", loc.region.id, loc.off.bv, self._owner(st, loc.region)))
        self.facts_on_load(st, loc.region, loc.off, v, span)
        if st.epoch is not None:
            self.note_uniform_load(st, loc.region, loc.off, v)
        return v

    @staticmethod
    def _owner(st: State, region) -> tuple:
        """Whose copy of ``region`` a load reads: each block has its own shared memory and each
        thread its own locals, so the same offset there is the same bytes only for the same block
        (thread): their indices, as terms; () for memory every thread shares."""
        if st.thread is None or region.kind not in ("shared", "dynamic_shared", "local"):
            return ()
        ids = [st.thread.bid] + ([st.thread.tid] if region.kind == "local" else [])
        return tuple(v.bv for group in ids for v in group.fields.values())

    def store(self, st: State, loc, value: Val, span: N.Span) -> None:
        if isinstance(loc, MultiLoc):
            for c, sub in self._live_alternatives(st, loc, True, span):
                if sub.region.tracked:
                    old = self._load_tracked(st, sub.region, sub.off, sub.ty, span)
                    self.emit_access(st, sub, max(T.strip_ref(sub.ty).size, 1), True, span, c)
                    self._store_tracked(st, sub.region, sub.off, sub.ty, merge_values(c, value, old) or value, span)
                else:
                    self.emit_access(st, sub, max(T.strip_ref(sub.ty).size, 1), True, span, c, value)
            return
        ty = T.strip_ref(loc.ty)
        self.emit_access(st, loc, max(ty.size, 1), True, span, value=value)
        if loc.region.kind == "null":
            raise PathEnd("abort", "null dereference", span, kind="null")
        if loc.region.tracked:
            self._store_tracked(st, loc.region, loc.off, ty, value, span)

    # ------------------------------------------------------------ tracked contents

    def _load_tracked(self, st: State, region: Region, off: IntV, ty: T.Type, span: N.Span) -> Val:
        content = st.content(region)
        c = off.concrete()
        if c is not None:
            v = self._read_at(content, c, ty, region, span)
            if region.id in self.ctx.copied_in and c not in content:
                # Bytes a copy wrote hold one value, whatever reads them (uninitialized ones may not).
                self._write_at(st.write_content(region), c, ty, v)
            return v
        modulus, rest = _aligned_residue(off, ty)
        slots = self._slots(region, off, ty)  # every multiple of the value's size the offset may take
        few = slots is not None
        if slots is None and modulus > 1:
            # Too many for that, but the offset's residue is known (`traits[type].size`: 24 modulo
            # the entry's 56 bytes): the slots of that residue only.
            slots = self._slots(region, off, ty, modulus, rest)
        elif slots is not None and modulus > 1:
            slots = [k for k in slots if (k - rest) % modulus == 0]
        if slots is None:
            return self._spread_value(ty, region, span)
        if isinstance(ty, T.PtrType) and _is_handle(ty.pointee):
            return self._handle(ty)  # a stream or event from a table (`streams[device][0]`): opaque alike
        if isinstance(ty, T.PtrType):
            return self._pointer_entry(st, content, region, off, ty, slots, span)
        # Slots holding the same value are one branch: ggml's 39 block sizes are 3 values.
        groups: list[tuple[list[int], Val]] = []
        for k in slots:
            v = self._read_at(content, k, ty, region, span)
            same = next((g for g in groups if _same_value(g[1], v)), None)
            if same is None:
                groups.append(([k], v))
            else:
                same[0].append(k)
        if not groups or (not few and len(groups) > TABLE_VALUES_MAX):
            return self._spread_value(ty, region, span)
        # With the residue known, an offset in bounds is one of the slots (out of bounds is the
        # bounds check's, and the path goes on as if in bounds): the last group is the default.
        # Else an offset between slots reads a value the engine does not resolve. A fresh default
        # made every size computed from a table read (ggml_nbytes) a value of any range, and
        # findings rested on it.
        aligned = modulus > 1
        value = groups[-1][1] if aligned else self._spread_value(ty, region, span)
        for ks, v in reversed(groups if not aligned else groups[:-1]):
            value = merge_values(z3.Or(*[off.bv == k for k in ks]), v, value) or value
        return value

    def _spread_value(self, ty: T.Type, region: Region, span: N.Span) -> Val:
        """What a read at an offset the engine does not pin to a slot gets (too many slots, or one
        between them): any value, and one a finding may not rest on (needs-values), as a table's
        entry it stands for is not that value."""
        v = self._fresh(ty, f"{region.name}[?]", span)
        self.ctx.remember_untracked(v, "spread", f"`{region.name}` at {span.file}:{span.line}")
        return v

    def _pointer_entry(self, st: State, content: dict, region: Region, off: IntV, ty: T.Type, slots: list,
                       span: N.Span) -> Val:
        """A pointer (a function's among them) read from a tracked table at an index the path does
        not fix: one value where the entries the path may pick merge into one (pointers into one
        object), else a fork per entry (``TableFork``). Entries are pruned in bit-vectors: the
        integers do not see the index's equalities, and a fork must fix one entry more each time."""
        at = ints.I(off)  # the linear integers first: they rule most entries out in milliseconds
        live = [k for k in slots if not self.ctx.lia.unsat(st.pc, at == k, nonlinear=False)
                and self.ctx.solver.feasible(list(st.pc) + [off.bv == k])]
        if not live:
            return self._fresh(ty, f"{region.name}[?]", span)
        values = [self._read_at(content, k, ty, region, span) for k in live]
        value = values[-1]
        for k, v in zip(reversed(live[:-1]), reversed(values[:-1])):
            value = merge_values(off.bv == k, v, value)
            if value is None:
                raise TableFork(off.bv == live[0], span)
        return value

    def _store_tracked(self, st: State, region: Region, off: IntV, ty: T.Type, value: Val, span: N.Span) -> None:
        c = off.concrete()
        if c is not None:
            self._write_at(st.write_content(region), c, ty, value)
            return
        slots = self._slots(region, off, ty, *_aligned_residue(off, ty))
        if slots is None:
            self.forget_content(st, region, span)
            return
        content = st.write_content(region)
        for k in slots:
            old = self._read_at(content, k, ty, region, span)
            self._write_at(content, k, ty, merge_values(off.bv == k, value, old) or value)

    def forget_content(self, st: State, region: Region, span: N.Span) -> None:
        """``region`` written with bytes the engine does not know (memset, a copy, a store at an index
        spread too wide, a summarised loop): what a later read finds there is a value the engine
        does not compute (a finding resting on it needs values), not an uninitialized one."""
        st.clear_content(region)
        self.ctx.overwritten.setdefault(region.id, f"what the write at {span.file}:{span.line} left in `{region.name}`")

    def lost_content(self, rid: int) -> None:
        """Two paths joined with values of different types at one place of a tracked object."""
        region = self._tracked.get(rid)
        if region is not None:
            self.ctx.overwritten.setdefault(rid, f"what two paths left in `{region.name}` as values of two types")

    def _slots(self, region: Region, off: IntV, ty: T.Type, modulus: int = 1, rest: int = 0) -> list[int] | None:
        """The offsets in bounds that ``off`` may take: those ``rest`` modulo ``modulus`` where the
        offset's residue is known (ints.residue), else the multiples of the value's size."""
        size = region.size_concrete
        step = max(ty.size, 1)
        if size is None:
            return None
        lo = max(0, off.lo)
        hi = min(size - step, off.hi)
        if hi < lo:
            return []
        if modulus > 1:
            step = modulus
            start = lo + (rest - lo) % modulus
        else:
            start = lo + (-lo % step)
        if (hi - start) // step + 1 > SYMBOLIC_SPREAD_MAX:
            return None
        return list(range(start, hi + 1, step))

    def _read_at(self, content: dict, off: int, ty: T.Type, region: Region, span: N.Span) -> Val:
        if isinstance(ty, T.StructType):
            return StructV(ty, {f.name: self._read_at(content, off + f.offset, f.type, region, span) for f in ty.fields})
        if isinstance(ty, T.ArrayType) and ty.count:
            es = ty.elem.size
            return StructV(ty, {i: self._read_at(content, off + i * es, ty.elem, region, span) for i in range(ty.count)})
        entry = content.get(off)
        if entry is not None:
            ety, v = entry
            if _compatible(ety, ty):
                return _reinterpret(v, ty)
        part = self._bytes_of_int(content, off, ty)
        if part is not None:
            return part
        whole = int_of_bytes(content, off, ty)
        if whole is not None:
            return whole
        end = off + max(ty.size, 1)
        # Bytes written as a value of another type (a word added to as a __half2) hold bits the
        # engine does not follow: written, so not an uninitialized read.
        written = any(o < end and o + max(t.size, 1) > off for o, (t, _) in content.items())
        v = self.unwritten_value(region.id, ty, written)
        return v if v is not None else self._fresh(ty, region.name, span)

    def unwritten_value(self, rid: int, ty: T.Type, written: bool = False) -> Val | None:
        """What a tracked object holds where this path never wrote: any value (uninitialized), a
        loop value where a summarised loop may have written it; None for untracked memory. ``written``:
        bytes of a value of another type are there (its bits, not an uninitialized value)."""
        region = self._tracked.get(rid)
        if region is None:
            return None
        v = fresh_value(ty, region.name, self.ctx.counter)
        copy = self.ctx.copied_in.get(rid)
        if copy is not None:
            self.ctx.remember_untracked(v, "copy", copy)  # what the device held (models/cuda.py)
            return v
        summary = self.ctx.loop_written.get(rid)
        if summary is not None and isinstance(v, IntV):
            self.ctx.symbol(summary, v.bv, "havoc", v.ty.signed)
        elif rid in self.ctx.overwritten:
            self.ctx.remember_untracked(v, "overwritten", self.ctx.overwritten[rid])
        elif isinstance(v, IntV) and region.kind == "local" and not written:
            # Bytes of a local variable no path wrote: an uninitialized read. A finding resting on
            # the value says so (checks/base.py): the hardware's value is whatever was there.
            self.ctx.symbol(f"{region.name} (uninitialized)", v.bv, "uninit", v.ty.signed, ("local", region.name, False))
        return v

    @staticmethod
    def _bytes_of_int(content: dict, off: int, ty: T.Type) -> Val | None:
        """Some bytes of a wider integer read as a narrower one (``((uint8_t*)&word)[k]``): its bits,
        little-endian, as the GPU and the host lay them out."""
        if not isinstance(ty, T.IntType):
            return None
        for start, (ety, v) in content.items():
            if start <= off and isinstance(ety, T.IntType) and isinstance(v, IntV) and ety.size > ty.size \
                    and off + ty.size <= start + ety.size:
                lo_bit = 8 * (off - start)
                bv = z3.Extract(lo_bit + ty.bits - 1, lo_bit, v.bv)
                return ints._abstract(ty, bv, ty.min, ty.max)
        return None

    def _write_at(self, content: dict, off: int, ty: T.Type, value: Val) -> None:
        if isinstance(value, StructV) and isinstance(ty, (T.StructType, T.ArrayType)):
            if isinstance(ty, T.StructType):
                for f in ty.fields:
                    if f.name in value.fields:
                        self._write_at(content, off + f.offset, f.type, value.fields[f.name])
            else:
                for i in range(ty.count or 0):
                    if i in value.fields:
                        self._write_at(content, off + i * ty.elem.size, ty.elem, value.fields[i])
            return
        size = max(ty.size, 1)
        for k in [k for k in content if k != off and k < off + size and k + max(content[k][0].size, 1) > off]:
            del content[k]  # a store over part of another value: that value is no longer known
        content[off] = (ty, value)

    # ------------------------------------------------------------ fresh values

    def _fresh(self, ty: T.Type, name: str, span: N.Span) -> Val:
        v = fresh_value(ty, name, self.ctx.counter)
        if v is None:
            if isinstance(ty, T.PtrType) and _is_handle(ty.pointee):
                return self._handle(ty)
            if isinstance(ty, T.PtrType):
                raise PathEnd("stuck", f"a pointer read from memory the engine does not track ({name})", span)
            raise PathEnd("stuck", f"a value of type {ty.name} read from untracked memory", span)
        return v

    def _handle(self, ty: T.PtrType) -> PtrV:
        """A handle (a pointer to a struct no header defines: cudaStream_t, cublasHandle_t,
        cudaEvent_t) read from memory the engine does not track (a context's stream table): code
        cannot dereference it, only compare it and pass it to the library, so it is one object per
        handle type, of no bytes."""
        key = ("handle", ty.pointee.name)
        region = self._statics.get(key)
        if region is None:
            region = self._statics[key] = self.new_region("host", f"a {ty.pointee.name} handle", 0, None, align=1,
                                                          note="handle")
        return PtrV(region, const_int(0, T.INT64), ty.pointee)

    def _load_untracked(self, st: State, region: Region, ty: T.Type, span: N.Span, off=None) -> Val:
        if region.note == "from-integer":
            return self._load_foreign(st, region, ty, span, off)
        if region.note == "argv" and isinstance(ty, T.PtrType):
            # A command-line string: its content and length are the user's.
            string = self.new_region("host", f"a string of {region.name}", UNCHECKED_SIZE, span, align=1,
                                     note="unchecked")
            return PtrV(string, const_int(0, T.INT64), ty.pointee)
        return self._bound_loaded(st, region, self._fresh(ty, region.name, span), span, off)

    def _load_foreign(self, st: State, region: Region, ty: T.Type, span: N.Span, off=None) -> Val:
        """A read of memory a pointer made from an integer points to (an object another call made,
        a peer's buffer): any value, never the op's input (a finding that needs it is
        ``needs-values``); a pointer stored there points to memory nobody sized too. In host code
        (one thread, nothing else writes it meanwhile) a field read twice is one value."""
        c = off.concrete() if off is not None else None
        host = st.thread is None and c is not None
        if host:
            known = st.content(region).get(c)
            if known is not None and known[0] == ty:
                return known[1]
        if isinstance(ty, T.PtrType):
            v = self.pointer_from_integer(ty, span)
        else:
            v = self._bound_loaded(st, region, self._fresh(ty, region.name, span), span, off)
        if host:
            st.write_content(region)[c] = (ty, v)
        return v

    def _bound_loaded(self, st: State, region: Region, v: Val, span: N.Span, off=None) -> Val:
        """Register a loaded value for witnesses and bound it by the binding's value range.
        ``off``: where it was loaded (a whole element of the region), so that a reproducer can put
        the witness's value at that element."""
        if isinstance(v, StructV):
            return StructV(v.ty, {k: self._bound_loaded(st, region, f, span) for k, f in v.fields.items()})
        if not isinstance(v, IntV):
            return v
        if off is not None and region.elem_size and v.ty.size == region.elem_size:
            self.ctx.load_offsets[str(v.bv)] = (off.bv, region.elem_size)
        # Memory the op allocated, or that an earlier launch of it wrote, holds what that kernel
        # wrote, which is not carried from one launch to the next; a binding's values state a
        # tensor at the op's entry only.
        written = region.id in self.ctx.launch_written
        kind = "scratch" if region.kind == "global" and (region.note == "allocated" or written) else \
            "symbol" if region.note == "symbol" else "foreign" if region.note == "from-integer" else \
            "unstated" if region.unstated else region.kind
        stated = region.values is not None and not written
        self.ctx.symbol(f"{region.name}[...] loaded at {span.file}:{span.line}", v.bv, "load", v.ty.signed,
                        (kind, region.name, stated))
        if not stated:
            return v
        lo, hi = region.values
        x = widen(v.bv, v.ty.signed, 64)
        st.assume(lia.CURRENT.register(z3.And(x >= lo.bv, x <= hi.bv),
                                       z3.And(ints.I(v) >= ints.I(lo), ints.I(v) <= ints.I(hi))))
        return IntV(v.ty, v.bv, max(v.lo, lo.lo), min(v.hi, hi.hi), v.math, v.sites, None, ints.I(v))


def _aligned_residue(off: IntV, ty: T.Type) -> tuple[int, int]:
    """The offset's residue (ints.residue) where it puts every value of ``ty`` it may name on a
    multiple of the value's size, as table entries' members are; else (1, 0): nothing known."""
    modulus, rest = ints.residue(off)
    step = max(T.strip_ref(ty).size, 1)
    return (modulus, rest) if modulus > 1 and modulus % step == 0 and rest % step == 0 else (1, 0)


def _same_value(a: Val, b: Val) -> bool:
    """Two integers known to be one value (the same term)."""
    return isinstance(a, IntV) and isinstance(b, IntV) and a.ty == b.ty and a.math is None and b.math is None \
        and a.bv.eq(b.bv)


def index_to_int64(idx: IntV, span: N.Span, stack=()) -> IntV:
    """The value C uses in pointer arithmetic: the index's own value, as a 64-bit signed offset."""
    if idx.ty.bits == 64:
        if idx.hi <= T.INT64.max:
            return IntV(T.INT64, idx.bv, idx.lo, idx.hi, idx.math, idx.sites, None, ints.I(idx))
        return IntV(T.INT64, idx.bv, T.INT64.min, T.INT64.max, idx.math, idx.sites, None,
                    lia.CURRENT.bounded(idx.bv, T.INT64.min, T.INT64.max))
    return ints.convert(idx, T.INT64, span, stack)


def _inside(within, c: int, size: int) -> bool:
    """A concrete access inside the sub-array it indexes (True when there is none)."""
    if within is None:
        return True
    lo = within[0].concrete()
    return lo is not None and lo <= c and c + size <= lo + within[1] * within[2]


def _elem_size(ty: T.Type) -> int:
    if isinstance(ty, T.ArrayType):
        return _elem_size(ty.elem)
    return max(ty.size, 1)


def _compatible(a: T.Type, b: T.Type) -> bool:
    if isinstance(a, T.RefType) or isinstance(b, T.RefType):
        return isinstance(a, T.RefType) and isinstance(b, T.RefType)
    if isinstance(a, T.IntType) and isinstance(b, T.IntType):
        return a.bits == b.bits
    if isinstance(a, T.FloatType) and isinstance(b, T.FloatType):
        return a.bits == b.bits
    if isinstance(a, T.PtrType) and isinstance(b, T.PtrType):
        return True
    if isinstance(a, T.BoolType) and isinstance(b, T.BoolType):
        return True
    if isinstance(a, (T.OpaqueType, T.ClosureType)) and isinstance(b, (T.OpaqueType, T.ClosureType)):
        return True
    return a == b


def _reinterpret(v: Val, ty: T.Type) -> Val:
    if isinstance(v, IntV) and isinstance(ty, T.IntType) and v.ty.signed != ty.signed:
        if ty.min <= v.lo and v.hi <= ty.max:
            return IntV(ty, v.bv, v.lo, v.hi, v.math, v.sites, None, ints.I(v))
        return IntV(ty, v.bv, ty.min, ty.max, iv=lia.CURRENT.bounded(v.bv, ty.min, ty.max))
    if isinstance(v, PtrV) and isinstance(ty, T.PtrType):
        return PtrV(v.region, v.off, ty.pointee)
    return v


__all__ = ["MemoryOps", "PathEnd", "index_to_int64", "int_size", "BoolV", "FloatV"]


def _is_handle(ty: T.Type) -> bool:
    """A struct declared and never defined (``struct CUstream_st;``): what a library's handle points to."""
    return isinstance(ty, T.StructType) and not ty.fields and ty.size == 0
