"""Execution states: one per path. A state holds the path condition, the call frames, and the
contents of the memory it tracks per thread (locals and parameters). Global and shared memory
contents are not tracked: a load from them is a fresh value (DESIGN.md, semantics 3).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import z3

from ..kir import nodes as N
from ..kir import types as T
from . import ints
from .values import BoolV, FloatV, IntV, MultiPtrV, OpaqueV, PtrV, Region, StructV, Val, const_int, fresh_int

_frame_ids = itertools.count(1)


@dataclass
class Frame:
    id: int
    fn: N.Function | None
    vars: dict  # var id -> Region (the variable's storage)
    parent: int | None = None  # lexical parent for lambdas (captures by reference)
    this: Val | None = None
    call_span: N.Span | None = None
    captured: bool = False  # a closure created here refers to this frame

    def copy(self) -> "Frame":
        return Frame(self.id, self.fn, dict(self.vars), self.parent, self.this, self.call_span, self.captured)


def new_frame_id() -> int:
    return next(_frame_ids)


@dataclass
class State:
    pc: tuple = ()
    frames: dict = field(default_factory=dict)  # frame id -> Frame
    stack: tuple = ()  # frame ids, innermost last
    mem: dict = field(default_factory=dict)  # region id -> {offset: (Type, Val)}
    owned: set = field(default_factory=set)
    status: str = "ok"  # ok | return | break | continue | abort | stuck
    retval: Val | None = None
    thread: object = None  # the kernel thread context while in a kernel
    stuck: tuple | None = None  # (reason, span) when an unsupported construct stopped the path
    depth: int = 0
    epoch: tuple | None = None  # in a kernel: (block, warp) barriers passed (engine/threads.py)
    warp_ops: frozenset = frozenset()  # in a kernel: the warp primitives (their spans) the path reached

    # ------------------------------------------------------------ forking

    def fork(self, cond: z3.BoolRef | None = None) -> "State":
        s = State(
            pc=self.pc if cond is None or z3.is_true(cond) else self.pc + (cond,),
            frames={k: f.copy() for k, f in self.frames.items()},
            stack=self.stack,
            mem=dict(self.mem),
            owned=set(),
            status=self.status,
            retval=self.retval,
            thread=self.thread,
            stuck=self.stuck,
            depth=self.depth,
            epoch=self.epoch,
            warp_ops=self.warp_ops,
        )
        self.owned = set()  # both now share every content dict; whoever writes next copies
        return s

    def assume(self, cond: z3.BoolRef) -> None:
        if not z3.is_true(cond):
            self.pc = self.pc + (cond,)

    # ------------------------------------------------------------ frames

    @property
    def frame(self) -> Frame:
        return self.frames[self.stack[-1]]

    def lookup(self, var_id: int) -> Region | None:
        fid = self.stack[-1] if self.stack else None
        while fid is not None:
            f = self.frames.get(fid)
            if f is None:
                return None
            r = f.vars.get(var_id)
            if r is not None:
                return r
            fid = f.parent
        return None

    # ------------------------------------------------------------ tracked memory

    def content(self, region: Region) -> dict:
        return self.mem.get(region.id, {})

    def write_content(self, region: Region) -> dict:
        d = self.mem.get(region.id)
        if d is None:
            d = {}
            self.mem[region.id] = d
            self.owned.add(region.id)
        elif region.id not in self.owned:
            d = dict(d)
            self.mem[region.id] = d
            self.owned.add(region.id)
        return d

    def clear_content(self, region: Region) -> None:
        self.mem[region.id] = {}
        self.owned.add(region.id)


# ---------------------------------------------------------------- merging


def decided(c: z3.BoolRef) -> bool | None:
    """True or False when ``c`` simplifies to a constant, else None. Only for deciding: the path
    keeps ``c`` itself, whose integer version lia.py knows by identity."""
    s = z3.simplify(c)
    return True if z3.is_true(s) else False if z3.is_false(s) else None


def merge_values(c: z3.BoolRef, a: Val | None, b: Val | None) -> Val | None:
    """ite(c, a, b), or None where the two cannot be one value."""
    if a is b:
        return a
    if a is None or b is None:
        return None
    if isinstance(a, IntV) and isinstance(b, IntV) and a.ty.bits == b.ty.bits:
        return ints.ite(c, a, b)
    if isinstance(a, BoolV) and isinstance(b, BoolV):
        return BoolV(z3.If(c, a.term, b.term))
    if isinstance(a, FloatV) and isinstance(b, FloatV):
        if _same_source(a.source, b.source):
            return a
        return FloatV(a.ty, exact=a.exact if a.exact is not None and a.exact == b.exact else None)
    if isinstance(a, OpaqueV) and isinstance(b, OpaqueV) and a.kind == b.kind and a.ty == b.ty \
            and a.payload is None and b.payload is None:
        return a  # void results, handles: nothing to tell apart
    if isinstance(a, OpaqueV) and isinstance(b, OpaqueV) and a.kind == b.kind == "std" and a.ty == b.ty:
        # the same literal on both sides stays; different literals are one unknown choice again
        return a if a.payload == b.payload else OpaqueV("std", a.ty)
    if isinstance(a, OpaqueV) and isinstance(b, OpaqueV) and a.kind == b.kind == "device":
        return OpaqueV("device", a.ty, z3.If(c, a.payload, b.payload))  # payload: on the host
    if isinstance(a, (PtrV, MultiPtrV)) and isinstance(b, (PtrV, MultiPtrV)):
        return merge_pointers(c, a, b)
    if isinstance(a, StructV) and isinstance(b, StructV) and a.fields.keys() == b.fields.keys():
        fields = {}
        for k in a.fields:
            m = merge_values(c, a.fields[k], b.fields[k])
            if m is None:
                return None
            fields[k] = m
        return StructV(a.ty, fields)
    return None


def _same_source(a: tuple | None, b: tuple | None) -> bool:
    """Two floats known to come from one source (FloatV.source), compared without building terms."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(_same_source(x, y) if isinstance(x, tuple) and isinstance(y, tuple) else
               x.eq(y) if isinstance(x, z3.ExprRef) and isinstance(y, z3.ExprRef) else x == y for x, y in zip(a, b))


def merge_pointers(c: z3.BoolRef, a, b):
    if isinstance(a, PtrV) and isinstance(b, PtrV) and a.region is b.region:
        return PtrV(a.region, ints.ite(c, a.off, b.off), a.pointee)
    alts: list = []
    for cond, side in ((c, a), (z3.Not(c), b)):
        for sub_cond, p in (side.alts if isinstance(side, MultiPtrV) else ((z3.BoolVal(True), side),)):
            g = z3.And(cond, sub_cond) if not z3.is_true(sub_cond) else cond
            for i, (gc, q) in enumerate(alts):
                if q.region is p.region:
                    alts[i] = (z3.Or(gc, g), PtrV(p.region, ints.ite(g, p.off, q.off), p.pointee))
                    break
            else:
                alts.append((g, p))
    if len(alts) == 1:
        return alts[0][1]
    return MultiPtrV(tuple(alts), a.pointee)


def _split_pc(a: tuple, b: tuple) -> tuple[tuple, tuple, tuple]:
    n = 0
    for x, y in zip(a, b):
        if x is not y and not x.eq(y):
            break
        n += 1
    return a[:n], a[n:], b[n:]


def try_merge(a: State, b: State) -> State | None:
    """One state standing for both paths, or None when they cannot be joined (different call
    stacks, or a pointer into different objects)."""
    if a.status != b.status or a.stack != b.stack or a.thread is not b.thread or a.status not in ("ok", "break", "continue", "return"):
        return None
    prefix, ra, rb = _split_pc(a.pc, b.pc)
    ca = z3.And(*ra) if ra else z3.BoolVal(True)
    cb = z3.And(*rb) if rb else z3.BoolVal(True)
    frames = {}
    for fid in a.stack:
        fa, fb = a.frames[fid], b.frames[fid]
        shared = {k: v for k, v in fa.vars.items() if fb.vars.get(k) is v}
        f = fa.copy()
        f.vars = shared
        frames[fid] = f
    for fid, f in a.frames.items():
        if fid not in frames and fid in b.frames:
            frames[fid] = f
    mem = {}
    owned = set()
    for rid in set(a.mem) | set(b.mem):
        da, db = a.mem.get(rid), b.mem.get(rid)
        if da is db:
            mem[rid] = da
            continue
        owned.add(rid)
        merged = _join_contents(rid, ca, da or {}, db or {}, apart=True)
        if merged is None:
            return None  # two different objects (tensors, closures): keep the paths apart
        mem[rid] = merged
    retval = a.retval
    if a.status == "return":
        retval = merge_values(ca, a.retval, b.retval)
        if retval is None and (a.retval is not None or b.retval is not None):
            return None
    pc = prefix + ((z3.Or(ca, cb),) if ra or rb else ())
    epoch = a.epoch
    if a.epoch is not b.epoch and a.epoch is not None and b.epoch is not None:
        epoch = tuple(x if x.eq(y) else z3.If(ca, x, y) for x, y in zip(a.epoch, b.epoch))
    return State(pc, frames, a.stack, mem, owned, a.status, retval, a.thread, None, a.depth, epoch,
                 a.warp_ops | b.warp_ops)


# What a tracked object holds where a path never wrote it (the interpreter's answer: an
# uninitialized value, or a loop value where a summarised loop may have written it); None for
# memory whose contents are not tracked. Set per analysis, like lia.CURRENT.
UNWRITTEN = None


# Called with a region id where a join could keep no value for bytes both paths wrote (values of
# two types at one place): what is read there is then a value the engine does not compute.
LOST = None


def use_unwritten(fn, lost=None) -> None:
    global UNWRITTEN, LOST
    UNWRITTEN, LOST = fn, lost


def drop_range(content: dict, start: int, n: int) -> None:
    """Forget the values that overlap bytes [start, start + n) of an object's contents."""
    for off, (ty, _) in list(content.items()):
        if off < start + n and off + max(T.strip_ref(ty).size, 1) > start:
            del content[off]


def int_of_bytes(content: dict, off: int, ty: T.Type) -> Val | None:
    """A wider integer read where single bytes were stored (a memset of a local table): its bytes,
    little-endian."""
    if not isinstance(ty, T.IntType) or ty.size <= 1:
        return None
    parts = []
    for k in range(off, off + ty.size):
        entry = content.get(k)
        if entry is None or not isinstance(entry[1], IntV) or entry[0].size != 1:
            return None
        parts.append(entry[1].bv)
    bv = z3.simplify(z3.Concat(*reversed(parts)))
    if z3.is_bv_value(bv):
        return const_int(bv.as_signed_long() if ty.signed else bv.as_long(), ty)
    return ints.truncated(ty, bv, ty.min, ty.max)


def _join_contents(rid: int, c: z3.BoolRef, da: dict, db: dict, apart: bool) -> dict | None:
    """One object's contents where ``c`` picks ``da`` and its negation ``db``. Two values that
    cannot be one (two tensors): None when ``apart`` (the paths stay apart), else the value is
    dropped."""
    merged = {}
    end = 0  # where the last value joined ends: a byte before it belongs to that value
    for off in sorted(da.keys() & db.keys()):
        if off < end:
            continue
        joined = _join_entry(rid, off, da, db)
        if joined is None:
            continue
        ty, va, vb = joined
        m = merge_values(c, va, vb)
        if m is None:
            if apart:
                return None
            continue
        merged[off] = (ty, m)
        end = off + max(ty.size, 1)
    _merge_one_sided(merged, rid, c, da, db)
    return merged


def _join_entry(rid: int, off: int, da: dict, db: dict):
    """The two paths' values at ``off`` in one type, for a join: a wider integer one path wrote
    against the bytes the other wrote (a memset) reads those bytes as that integer. None, and the
    region's loss reported, where they cannot be put in one type."""
    (ta, va), (tb, vb) = da[off], db[off]
    if ta == tb or ta.size == tb.size:
        return ta, va, vb
    if ta.size > tb.size and (w := int_of_bytes(db, off, ta)) is not None:
        return ta, va, w
    if tb.size > ta.size and (w := int_of_bytes(da, off, tb)) is not None:
        return tb, w, vb
    if LOST is not None:
        LOST(rid)
    return None


def _merge_one_sided(merged: dict, rid: int, c: z3.BoolRef, da: dict, db: dict) -> None:
    """Entries only one path wrote: ite(c, written, what the other path holds there), so that a
    later read under the writing path's condition still sees the written value (dropping the entry
    made it an unknown value on both paths, and a finding on it a false alarm)."""
    if UNWRITTEN is None:
        return
    for off in da.keys() ^ db.keys():
        if any(o < off < o + max(t.size, 1) for o, (t, _) in merged.items()):
            continue  # overlaps a value both paths hold
        ty, v = da[off] if off in da else db[off]
        other = UNWRITTEN(rid, ty)
        if other is None:
            continue
        m = merge_values(c, v, other) if off in da else merge_values(c, other, v)
        if m is not None:
            merged[off] = (ty, m)


def merge_all(states: list[State], limit: int = 64) -> list[State]:
    """Join the states that can be joined; keep the others apart."""
    if len(states) <= 1:
        return states
    out: list[State] = []
    for s in states:
        for i, o in enumerate(out):
            m = try_merge(o, s)
            if m is not None:
                out[i] = m
                break
        else:
            out.append(s)
    return out


def fresh_value(ty: T.Type, name: str, counter) -> Val:
    """An unconstrained value of ``ty`` (floats are opaque)."""
    ty = T.strip_ref(ty)
    if isinstance(ty, T.IntType):
        return fresh_int(f"{name}!{counter()}", ty)
    if isinstance(ty, T.BoolType):
        return BoolV(z3.Bool(f"{name}!{counter()}"))
    if isinstance(ty, T.FloatType):
        return FloatV(ty)
    if isinstance(ty, T.StructType):
        fields = {f.name: fresh_value(f.type, f"{name}.{f.name}", counter) for f in ty.fields}
        return StructV(ty, {k: v for k, v in fields.items() if v is not None})
    if isinstance(ty, T.ArrayType) and ty.count is not None and ty.count <= 256:
        elems = {i: fresh_value(ty.elem, f"{name}[{i}]", counter) for i in range(ty.count)}
        return StructV(ty, {k: v for k, v in elems.items() if v is not None})
    return None


def absorb(st: State, sub: State, cond: z3.BoolRef) -> None:
    """Fold a guarded sub-evaluation back into ``st``: what ``sub`` changed holds under ``cond``."""
    extra = sub.pc[len(st.pc) + 1:]
    st.warp_ops = st.warp_ops | sub.warp_ops
    if extra:
        st.pc = st.pc + (z3.Implies(cond, z3.And(*extra)),)
    for rid, d in sub.mem.items():
        base = st.mem.get(rid)
        if d is base:
            continue
        st.mem[rid] = _join_contents(rid, cond, d, base or {}, apart=False)
        st.owned.add(rid)
    for fid, f in sub.frames.items():
        if fid not in st.frames:
            st.frames[fid] = f
