"""The host side of an instance: user dims and bound arguments, kernel launches with one symbolic
thread each (blockIdx in [0, gridDim), threadIdx in [0, blockDim)), CUDA built-in variables,
shared memory."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import z3

from .. import binding as B
from ..limits import MAX_ARGC, DEFAULT_SMEM, MAX_BLOCK, MAX_GRID, MAX_THREADS_PER_BLOCK
from ..kir import nodes as N
from ..kir import types as T
from ..zeroconfig import Limits, enum_bounds
from . import ints, lia
from .context import Symbol
from .counters import atomic_add_sites, started_counters
from .events import LaunchEvent, Sink
from .memory import UNCHECKED_SIZE, PathEnd
from .models.cuda import ranged_int
from .models.std import is_string_class, string_holding
from .state import Frame, State, fresh_value, new_frame_id
from .threads import values_terms
from .relations import TensorFacts
from .values import BoolV, FloatV, FuncV, IntV, LazyDtype, OpaqueV, OptionalV, PtrV, Region, StructV, TensorV, const_int

UINT = T.UINT32


def _record_name(spelling: str) -> str:
    """``const struct ggml_tensor`` and ``ggml_tensor`` name one record."""
    words = [w for w in spelling.split() if w not in ("const", "volatile", "struct", "class", "union")]
    return " ".join(words)

# How deep a struct read through a pointer argument is followed: `dst->src[0]` is an object of its
# own, `dst->src[0]->src[0]` memory of a size nobody states (the engine does not model a graph).
POINTED_DEPTH = 1
SHAPE_MEMBER_MAX = 8  # integer array members up to this length are bounded as a shape (_shape_members)
DIM3 = T.StructType("dim3", (T.Field("x", UINT, 0), T.Field("y", UINT, 4), T.Field("z", UINT, 8)), 12, 4)
UINT3 = T.StructType("uint3", DIM3.fields, 12, 4)

@dataclass
class Thread:
    kernel: str
    grid: StructV
    block: StructV
    bid: StructV
    tid: StructV
    symbols: list
    dyn_smem: Region
    shared: dict = field(default_factory=dict)
    counters: dict = field(default_factory=dict)  # started shared counters (counters.py): var id -> counters.Start


class HostOps:
    # ------------------------------------------------------------ instance set-up

    def setup(self, fn: N.Function, inst: B.Instance) -> State:
        st = State()
        self.dims: dict[str, IntV] = {}
        self.tensor_facts = TensorFacts.of(inst)
        user_order: list = []
        derived_order: list = []
        for d in inst.dims:
            bv = narrow_symbol(d.name, d.lo, d.hi)
            self.ctx.symbol(d.name, bv, "user")
            self.ctx.user_terms.append(bv)
            st.assume(z3.And(bv >= d.lo, bv <= d.hi))
            iv = lia.CURRENT.var(d.name, d.lo, d.hi)
            if d.values is not None:
                # A dim from a set (block_size in {16, 32, 64}): one of them, for both layers.
                st.assume(lia.CURRENT.register(z3.Or(*[bv == v for v in d.values]), z3.Or(*[iv == v for v in d.values])))
            self.dims[d.name] = IntV(T.INT64, bv, d.lo, d.hi, iv=iv)
            user_order.append((d.name, bv))
            self.ctx.dim_lo[d.name] = d.lo
        for name, expr in inst.derived:
            v = self.sym_int(expr, fn.span)
            # Its own symbol, tied by an equation: checks that only need num_tokens then never have
            # to reason through the product batch * seq_len.
            sym = narrow_symbol(name, max(v.lo, 0), max(v.hi, 0)) if v.lo >= 0 else z3.BitVec(name, 64)
            iv = lia.CURRENT.var(name, v.lo, v.hi)
            st.assume(lia.CURRENT.define(sym == v.bv, iv == ints.I(v)))
            v = IntV(T.INT64, sym, v.lo, v.hi, iv=iv)
            self.dims[name] = v
            self.ctx.symbol(name, sym, "derived")
            if v.lo != v.hi:
                derived_order.append((name, sym))
        # Smallest total first (num_tokens), then the dims that make it up.
        self.ctx.dim_order = derived_order + user_order
        defs = [(e, name) for name, e in inst.derived]
        for c in inst.constraints:
            term = self.sym_bool(c, fn.span)
            folded = _fold_defs(c, defs)
            if folded != c:
                # batch * seq_len <= 9000000 is num_tokens <= 9000000: linear, for the integers.
                lia.CURRENT.register(term, lia.CURRENT.translate(self.sym_bool(folded, fn.span)))
            st.assume(term)
        if inst.zero_config:
            self.ctx.contract_dims = {d.name: self.dims[d.name] for d in inst.dims if d.values is None}
            self.ctx.scalar_dims = {n for n in inst.contract_scalars if n in self.ctx.contract_dims}
            self.ctx.contract_scalars = set(inst.contract_scalars)  # with a by-value struct's fields
            self.ctx.caller_tensors = {name for name, a in inst.args if isinstance(a, B.TensorArg)}
        frame = Frame(new_frame_id(), fn, {}, None, None, None)
        st.frames[frame.id] = frame
        st.stack = (frame.id,)
        command_line = self.command_line(fn, inst, st)
        for p in fn.params:
            arg = inst.arg(p.name)
            value = command_line[p.id] if p.id in command_line else self.bind_param(p, arg, st, fn)
            region = self.local_region(p.ty if not isinstance(p.ty, T.RefType) else T.strip_ref(p.ty), p.name, p.span, "param")
            frame.vars[p.id] = region
            self._write_at(st.write_content(region), 0, T.strip_ref(p.ty), value)
        # References to the arguments bind to the argument objects themselves.
        for p in fn.params:
            if isinstance(p.ty, T.RefType):
                frame.vars[p.id] = self._ref_slot(frame.vars[p.id], p, st)
        return st

    def _ref_slot(self, target: Region, p: N.VarDecl, st: State) -> Region:
        from .values import Loc, RefV
        slot = self.local_region(T.PtrType(T.VOID), p.name, p.span, "param")
        self._write_at(st.write_content(slot), 0, p.ty, RefV(Loc(target, const_int(0, T.INT64), T.strip_ref(p.ty))))
        return slot

    def command_line(self, fn: N.Function, inst: B.Instance, st: State) -> dict:
        """A program's ``main(int argc, char** argv)`` that no binding gives values: argc strings of
        unknown content and length, argv[argc] the null pointer after them (C 5.1.2.2.1). An
        index into argv is checked against argc; after ``if (argc < 3) return``, argv[2] is in
        bounds. Reading a string is reading memory of unknown size (negative offsets checked)."""
        if fn.name != "main" or len(fn.params) < 2:
            return {}
        argc_p, argv_p = fn.params[0], fn.params[1]
        argv_ty = T.strip_ref(argv_p.ty)
        if not (isinstance(argc_p.ty, T.IntType) and isinstance(argv_ty, T.PtrType)
                and isinstance(argv_ty.pointee, T.PtrType)):
            return {}
        bound = inst.arg(argv_p.name)
        if isinstance(bound, B.BufferArg) and bound.size is not None:
            return {}  # a binding that states argv's size wins
        argc = self.bind_param(argc_p, inst.arg(argc_p.name), st, fn)
        if not isinstance(argc, IntV):
            return {}
        st.assume(lia.CURRENT.register(z3.And(argc.bv >= 1, argc.bv <= MAX_ARGC),
                                       z3.And(ints.I(argc) >= 1, ints.I(argc) <= MAX_ARGC)))
        argc = IntV(argc.ty, argc.bv, max(argc.lo, 1), min(argc.hi, MAX_ARGC), iv=ints.I(argc))
        slots = ints.arith("+", ints.convert(argc, T.INT64, argc_p.span), const_int(1, T.INT64), T.INT64, argc_p.span)
        nbytes = ints.arith("*", slots, const_int(8, T.INT64), T.INT64, argc_p.span)
        region = self.new_region("host", argv_p.name, nbytes, argv_p.span, align=8, note="argv")
        self.ctx.note(f"'{argv_p.name}' holds '{argc_p.name}' command-line strings of unknown content")
        return {argc_p.id: argc, argv_p.id: PtrV(region, const_int(0, T.INT64), argv_ty.pointee)}

    def bind_param(self, p: N.VarDecl, arg, st: State, fn: N.Function):
        ty = T.strip_ref(p.ty)
        kind = getattr(ty, "kind", None)
        if kind == "tensor":
            if not isinstance(arg, B.TensorArg):
                raise BindingError(f"argument '{p.name}' of {fn.display} is a tensor: the binding must give its shape")
            if arg.optional:
                raise BindingError(f"argument '{p.name}' of {fn.display} is not an optional tensor: 'optional' needs "
                                   "std::optional<Tensor>")
            return self.make_tensor(p.name, arg, st, p.span)
        if kind == "optional" and ty.payload is not None:
            # An optional number: absent, or present with the value the binding gives (any value
            # of its type when unbound, as the number itself would be).
            if isinstance(arg, B.AbsentArg):
                return OptionalV(None, p.name)
            if arg is None or isinstance(arg, B.ScalarArg):
                return OptionalV(self.bind_param(replace(p, ty=ty.payload), arg, st, fn), p.name)
            raise BindingError(f"argument '{p.name}' of {fn.display} is an optional {ty.payload.name}: give a "
                               "value expression or 'absent'")
        if kind == "optional":
            if arg is None or isinstance(arg, B.AbsentArg):
                return OptionalV(None, p.name)
            if isinstance(arg, B.TensorArg):
                present = None
                if arg.optional:  # present or absent: both are explored, under a symbol of the witness
                    present = self.ctx.symbol(f"{p.name}.has_value()", z3.Bool(self.ctx.fresh_name(f"{p.name}_present")), "user")
                return OptionalV(self.make_tensor(p.name, arg, st, p.span), p.name, present)
            raise BindingError(f"argument '{p.name}' of {fn.display} is an optional tensor: give a shape or 'absent'")
        if isinstance(ty, (T.IntType, T.BoolType)):
            if isinstance(arg, B.ScalarArg) and arg.value is not None:
                v = self.sym_int(arg.value, p.span)
                if isinstance(ty, T.BoolType):
                    # A named symbol equal to the value: the witness says which way the flag went.
                    flag = self.ctx.symbol(p.name, z3.Bool(self.ctx.fresh_name(p.name)), "user")
                    st.assume(lia.CURRENT.register(flag == (v.bv != 0),
                                                   lia.CURRENT.translate(flag) == (ints.I(v) != 0)))
                    return BoolV(flag)
                # Python ints reach C++ through the op's schema (int64) or pybind11, which rejects values
                # that do not fit: the argument is in range of the parameter's type.
                x = v.bv
                st.assume(lia.CURRENT.register(z3.And(x >= ty.min, x <= ty.max) if ty.bits < 64 or ty.signed else x >= 0,
                                               z3.And(ints.I(v) >= ty.min, ints.I(v) <= ty.max)))
                bv = z3.Extract(ty.bits - 1, 0, x) if ty.bits < 64 else x
                return IntV(ty, bv, max(v.lo, ty.min), min(v.hi, ty.max), iv=ints.I(v))
            if arg is None or (isinstance(arg, B.ScalarArg) and arg.value is None):
                v = fresh_value(ty, p.name, self.ctx.counter)
                if isinstance(v, IntV):
                    self.ctx.symbol(p.name, v.bv, "user", ty.signed)
                    self.ctx.note(f"argument '{p.name}' is unbound: any value of {ty.name}")
                elif isinstance(v, BoolV):
                    self.ctx.symbol(p.name, v.term, "user")
                return v
            raise BindingError(f"argument '{p.name}' of {fn.display} is a scalar: give a value expression")
        if isinstance(arg, B.StringArg):
            if not is_string_class(ty):
                raise BindingError(f"argument '{p.name}' of {fn.display} is not a string ({ty.name}): 'string' "
                                   "binds std::string arguments")
            # As if made from that literal: comparisons with literals answer, a dispatch runs one case.
            return string_holding(ty, f'"{arg.text}"')
        if isinstance(arg, B.StructArg):
            return self.bound_struct(p, arg, st, fn)
        if isinstance(ty, T.FloatType):
            return FloatV(ty)
        if isinstance(ty, T.PtrType) and isinstance(arg, B.BufferArg) and arg.size is not None:
            # An allocation the binding states (a bare kernel's buffer): checked as a tensor's storage.
            nbytes = self.sym_int(arg.size, p.span)
            st.assume(lia.CURRENT.register(nbytes.bv >= 0, ints.I(nbytes) >= 0))
            values = None
            if arg.values is not None:
                values = (self.sym_int(arg.values[0], p.span), self.sym_int(arg.values[1], p.span))
            region = self.new_region("global", p.name, nbytes, p.span, elem_size=arg.elem_size, values=values,
                                     align=256)
            self.ctx.device_regions.append(region)
            return PtrV(region, const_int(0, T.INT64), ty.pointee)
        pointee = T.strip_ref(ty.pointee) if isinstance(ty, T.PtrType) else None
        if isinstance(pointee, T.StructType) and pointee.fields and isinstance(arg, B.BufferArg) and arg.size is None:
            # A struct the op reads through a pointer (llama.cpp's `ggml_tensor * dst`).
            ptr, pointers = self.pointed_struct(p.name, pointee, st, p.span, "global" if fn.kind == "kernel" else "host",
                                                fn.key)
            self.ctx.note(f"'{p.name}' points to a {pointee.name} of any contents" + (
                f" (integer fields in [0, {Limits().scalar_hi:,}], as integer arguments, an enum's in its enumerators' "
                f"range; an integer array member of "
                f"up to {SHAPE_MEMBER_MAX} elements is a shape: each element at least 1 and small enough that no "
                f"product of them wraps, at most 2^(62/n) for n elements (32,768 for four: a stride or a "
                f"dimension past it is not explored), every prefix product at most {Limits().max_numel:,})"
                if self.ctx.zero_config else "")
                + (f"; its pointer members {', '.join(pointers)} point to memory of a size nobody states: accesses "
                   "through them are checked for negative offsets only" if pointers else ""))
            return ptr
        if isinstance(ty, T.PtrType) and (isinstance(arg, B.BufferArg) or (
                isinstance(arg, B.ScalarArg) and arg.value is None and fn.name == B.KERNEL_LAUNCHER)):
            # A pointer a bare kernel's binding leaves `any` (a GPUVerify header's kernels): memory
            # of a size nobody states.
            self.ctx.note(f"'{p.name}' points to memory the op does not allocate: accesses through it are checked "
                          "for negative offsets only")
            region = self.new_region("global", p.name, UNCHECKED_SIZE, p.span, align=256, note="unchecked")
            return PtrV(region, const_int(0, T.INT64), ty.pointee)
        if isinstance(ty, T.PtrType):
            raise BindingError(f"argument '{p.name}' of {fn.display} is a raw pointer: bind the op that owns the tensor, "
                               "or give the allocation ({elements: n, dtype: float32} or {bytes: n})")
        if isinstance(ty, T.StructType) and (arg is None or (isinstance(arg, B.ScalarArg) and arg.value is None)):
            # A struct passed by value (a graph's sizes and arrays): any contents, each field one
            # value for the whole call (read twice, it is the same value, as a copy's field is).
            v = fresh_value(ty, p.name, self.ctx.counter)
            if isinstance(v, StructV):
                if self.ctx.zero_config:
                    self._default_ranges(p.name, v, st)
                    # Sizes like an integer argument's: a witness minimises them after the op's
                    # own (a smoothing's read before row 0 at 1 x 1, not at 40,961 x 58,728).
                    self.ctx.dim_order.extend((str(x.bv), x.bv) for _, x in v.leaves(p.name)
                                              if isinstance(x, IntV) and z3.is_const(x.bv))
                self._name_fields(p.name, v)
                pointers = self._point_members(p.name, ty, v, p.span)
                ranged = f" (integer fields in [0, {Limits().scalar_hi:,}], as integer arguments)" \
                    if self.ctx.zero_config else ""
                self.ctx.note(f"argument '{p.name}' is unbound: any value of {ty.name}{ranged}" + (
                    f" (its pointer members {', '.join(pointers)} point to memory of a size nobody states: accesses "
                    "through them are checked for negative offsets only)" if pointers else ""))
                return v
        return OpaqueV("argument", ty)

    def bound_struct(self, p: N.VarDecl, arg: B.StructArg, st: State, fn: N.Function):
        """A struct the binding describes member by member (``fields``), taken through a pointer
        (llama.cpp's ``ggml_tensor * dst``: an object of its own) or by value. A member the binding
        names is bound as an argument of the member's type would be (a number, a pointer's memory,
        a struct, an array's entries); one it leaves out is any value, as in an unbound struct, its
        pointer members memory of a size nobody states (a pointer to a struct: an object of any
        contents, as in zero-config)."""
        ty = T.strip_ref(p.ty)
        pointee = T.strip_ref(ty.pointee) if isinstance(ty, T.PtrType) else None
        sty = pointee if isinstance(pointee, T.StructType) else ty
        if not isinstance(sty, T.StructType) or not sty.fields or arg.array:
            raise BindingError(f"argument '{p.name}' of {fn.display} is {ty.name}, not a struct or a pointer to one: "
                               "'fields' describes a struct")
        v = fresh_value(sty, p.name, self.ctx.counter)
        if not isinstance(v, StructV):
            v = StructV(sty, {})
        self._bind_members(p, p.name, sty, v, arg, st, fn)
        for path, x in v.leaves(p.name):
            if isinstance(x, IntV) and x.ty.size > 1 and z3.is_const(x.bv):
                self.ctx.symbol(path, x.bv, "field", x.ty.signed)  # a member the binding leaves any value
        kind = "global" if fn.kind == "kernel" else "host"
        pointers = self._point_members(p.name, sty, v, p.span, st, kind, 0, fn.key, bound=arg)
        if pointers:
            self.ctx.note(f"'{p.name}': the pointer members {', '.join(pointers)} are not in the binding: they point "
                          "to memory of a size nobody states (accesses checked for negative offsets only)")
        if pointee is None:
            return v
        region = self.new_region(kind, p.name, max(sty.size, 1), p.span, tracked=True, align=max(sty.align, 1))
        self._write_at(st.write_content(region), 0, sty, v)
        return PtrV(region, const_int(0, T.INT64), sty)

    def _bind_members(self, p: N.VarDecl, path: str, ty, v: StructV, arg: B.StructArg, st: State,
                      fn: N.Function, outer: T.StructType | None = None) -> None:
        """Set the members (or an array's entries) ``arg`` names in ``v``, an object of ``ty``
        (``outer``: the struct an array member belongs to)."""
        outer = ty if isinstance(ty, T.StructType) else outer
        if isinstance(ty, T.ArrayType):
            if not arg.array:
                raise BindingError(f"'{path}' of {fn.display} is an array ({ty.name}): give its entries as a list")
            if ty.count is not None and len(arg.members) > ty.count:
                raise BindingError(f"'{path}' of {fn.display} has {ty.count} entries; the binding gives "
                                   f"{len(arg.members)}")
            types = {i: ty.elem for i, _ in arg.members}
        else:
            if arg.array:
                raise BindingError(f"'{path}' of {fn.display} is a {ty.name}, not an array: give its members by name")
            types = {f.name: f.type for f in ty.fields}
        for key, a in arg.members:
            if key not in types:
                raise BindingError(f"'{path}' of {fn.display} ({ty.name}) has no member '{key}'; its members: "
                                   f"{', '.join(types)}")
            mty, mpath = T.strip_ref(types[key]), f"{path}.{key}"
            target = T.strip_ref(mty.pointee) if isinstance(mty, T.PtrType) else None
            if isinstance(target, T.OpaqueType) and target.kind == "recursive" and outer is not None and \
                    _record_name(target.name) == _record_name(outer.name):
                mty = T.PtrType(outer)  # `struct ggml_tensor * src[...]` inside ggml_tensor
            if isinstance(a, B.ScalarArg) and a.value is None:
                continue  # any value: as made
            if isinstance(a, B.StructArg) and not (isinstance(mty, T.PtrType) and not a.array):
                inner = v.fields.get(key)
                if not isinstance(inner, StructV):
                    inner = v.fields[key] = StructV(mty, {})
                self._bind_members(p, mpath, mty, inner, a, st, fn, outer)
            elif isinstance(a, B.AbsentArg):
                if not isinstance(mty, T.PtrType):
                    raise BindingError(f"'{mpath}' of {fn.display} is not a pointer ({mty.name}): 'absent' is a null "
                                       "pointer")
                v.fields[key] = self.null_ptr(mty, p.span, f"`{mpath}`")
            else:
                v.fields[key] = self.bind_param(replace(p, name=mpath, ty=mty), a, st, fn)

    def pointed_struct(self, name: str, sty: T.StructType, st: State, span: N.Span, kind: str, root: str,
                       depth: int = 0) -> tuple:
        """An object of ``sty`` that a pointer argument points to, and the paths of its pointer
        members that point to memory of unstated size. Its fields are any values, each one value for
        the call (zero-config: integer fields ranged as integer arguments), named in the witness
        where a finding needs them; pointer members to structs point to such objects in turn, to a
        depth of POINTED_DEPTH (``dst->src[0]->ne[0]``), other pointer members to memory of a size
        nobody states. Character arrays (a tensor's name) stay unnamed and unranged. ``root``: the
        op, whose code decides which entries of a pointer array are objects."""
        v = fresh_value(sty, name, self.ctx.counter)
        if not isinstance(v, StructV):
            v = StructV(sty, {})
        if self.ctx.zero_config:
            shapes = self._shape_members(name, sty, v, st, span)
            self._default_ranges(name, v, st, min_size=2, skip=shapes)
        for path, x in v.leaves(name):
            if isinstance(x, IntV) and x.ty.size > 1:
                self.ctx.symbol(path, x.bv, "field", x.ty.signed)
        pointers = self._point_members(name, sty, v, span, st, kind, depth, root)
        region = self.new_region(kind, name, max(sty.size, 1), span, tracked=True, align=max(sty.align, 1))
        self._write_at(st.write_content(region), 0, sty, v)
        return PtrV(region, const_int(0, T.INT64), sty), pointers

    def _shape_members(self, name: str, sty: T.StructType, v: StructV, st: State, span: N.Span) -> set[str]:
        """Zero-config: a short integer array member of a pointed struct (a tensor's ``ne[4]``, its
        ``nb[4]``) is a shape, as a tensor's dims are: its elements are at least 1, in a range in
        which no product of them wraps in 63 bits (2^15 each for four: exact for the integers too,
        where a product that may wrap is a value they do not follow), every prefix product is at
        most a tensor's element bound, and they are sizes a witness is minimised in. Returns the
        names of those members."""
        limits = Limits()
        shapes = set()
        for f in sty.fields:
            fty = T.strip_ref(f.type)
            arr = v.fields.get(f.name)
            if not (isinstance(fty, T.ArrayType) and isinstance(fty.elem, T.IntType) and fty.elem.size >= 4
                    and 2 <= (fty.count or 0) <= SHAPE_MEMBER_MAX and isinstance(arr, StructV)):
                continue
            hi = min(limits.scalar_hi, 1 << (62 // fty.count), fty.elem.max)
            shapes.add(f.name)
            elems = []
            for i in range(fty.count):
                # Narrow bit-vectors, as a tensor's dims are: the solver's multipliers for their
                # products shrink to the bits the range needs.
                dim = self.ctx.fresh_name(f"{name}.{f.name}.{i}")
                bv = narrow_symbol(dim, 1, hi, fty.elem.bits)
                x = IntV(fty.elem, bv, 1, hi, iv=lia.CURRENT.var(dim, 1, hi))
                st.assume(lia.CURRENT.register(z3.And(z3.UGE(bv, 1), z3.ULE(bv, hi)),
                                               z3.And(ints.I(x) >= 1, ints.I(x) <= hi)))
                arr.fields[i] = x
                elems.append(x)
                self.ctx.shape_fields[f"{name}.{f.name}.{i}"] = x
                self.ctx.dim_order.append((dim, bv))  # by the integers' name of it (lia.minimize)
                self.ctx.dim_lo[dim] = 1
            # The products as the program computes them (`ne[0] * ne[1] * ...`, left to right): the
            # same terms, so a check on them sees the bound as a plain fact.
            product = elems[0]
            for x in elems[1:]:
                product = ints.arith("*", product, x, fty.elem, span)
                st.assume(lia.CURRENT.register(z3.ULE(product.bv, limits.max_numel), ints.I(product) <= limits.max_numel))
        return shapes

    def _default_ranges(self, name: str, v: StructV, st: State, min_size: int = 1, skip=()) -> None:
        """Zero-config: the integer fields of a by-value struct take the default range of an integer
        argument (a graph's node count is a size like any other), not any value of their type, and
        a finding that needs one at 0, which the op never rules out, is a contract finding as it
        is for an integer argument (engine/contract.py)."""
        limits = Limits()
        for field_name, x in list(v.fields.items()):
            path = f"{name}.{field_name}"
            if field_name in skip:
                continue  # ranged already (a pointed struct's shape: _shape_members)
            if isinstance(x, StructV):
                self._default_ranges(path, x, st, min_size)
            elif isinstance(x, IntV) and (x.ty.size >= min_size or x.ty.enum_range is not None):
                lo, hi = max(limits.scalar_lo, x.ty.min), min(limits.scalar_hi, x.ty.max)  # a short's too
                lo, hi = enum_bounds(x.ty, lo, hi)
                v.fields[field_name] = ranged = ranged_int(self, st, path, x.ty, lo, hi)
                self.ctx.state_fields[path] = ranged
                if path in self.ctx.contract_scalars:
                    self.ctx.contract_dims[path] = ranged
                    self.ctx.scalar_dims.add(path)

    def _point_members(self, name: str, ty: T.StructType, v: StructV, span: N.Span, st: State | None = None,
                       kind: str = "", depth: int = POINTED_DEPTH, root: str = "",
                       bound: B.StructArg | None = None) -> list[str]:
        """Pointer members of a by-value argument (a graph's arrays, a params struct's buffers):
        each points to memory of its own whose size nobody states, as an `any` pointer of a bare
        kernel does; a launcher that allocates device arrays into a copy's members replaces them.
        Of a pointed object (``pointed_struct``, below its depth limit), a member pointing to a
        struct, or an array of such members (``src[GGML_MAX_SRC]``), points to an object of its own."""
        named = []

        def member(path: str, pty: T.PtrType):
            target = T.strip_ref(pty.pointee)
            if isinstance(target, T.OpaqueType) and target.kind == "recursive" and _record_name(target.name) == \
                    _record_name(ty.name):
                target = ty  # `struct ggml_tensor * src[...]` inside ggml_tensor: the type being mapped then
            if st is not None and depth < POINTED_DEPTH and isinstance(target, T.StructType) and target.fields:
                ptr, inner = self.pointed_struct(path, target, st, span, kind, root, depth + 1)
                named.extend(inner)
                return ptr
            return self._unstated(path, pty, span, named)

        def entry(path: str, i: int, pty: T.PtrType, used: set | None):
            # An object for an entry the op reads by a constant index (all where one is variable).
            at = f"{path}[{i}]"
            return member(at, pty) if used is None or i in used else self._unstated(at, pty, span, named)

        given = dict(bound.members) if bound is not None else {}
        for f in ty.fields:
            fty = T.strip_ref(f.type)
            path = f"{name}.{f.name}"
            binding = given.get(f.name)
            if binding is not None and not (isinstance(binding, B.ScalarArg) and binding.value is None):
                if isinstance(binding, B.StructArg) and isinstance(fty, T.StructType):
                    named += self._point_members(path, fty, v.fields[f.name], span, st, kind, depth, root, binding)
                elif isinstance(binding, B.StructArg) and isinstance(fty, T.ArrayType) and \
                        isinstance(T.strip_ref(fty.elem), T.PtrType):
                    # Entries the binding leaves out: as unbound ones (below), the given ones kept.
                    entries, used = dict(binding.members), self._constant_entries(root, f.name)
                    for i in range(fty.count or 0):
                        if i not in entries or isinstance(entries[i], B.ScalarArg) and entries[i].value is None:
                            v.fields[f.name].fields[i] = entry(path, i, T.strip_ref(fty.elem), used)
                continue  # bound: _bind_members made it
            if isinstance(fty, T.PtrType):
                v.fields[f.name] = member(path, fty)
            elif isinstance(fty, T.ArrayType) and isinstance(T.strip_ref(fty.elem), T.PtrType) and fty.count \
                    and st is not None and fty.count <= 64:
                # Objects for the entries the op reads (`dst->src[0]`, `dst->src[1]`): a tensor's
                # ten sources, each a shape in every query, made every check pay for the unused ones.
                used = self._constant_entries(root, f.name)
                v.fields[f.name] = StructV(fty, {i: entry(path, i, T.strip_ref(fty.elem), used)
                                                 for i in range(fty.count)})
            elif isinstance(fty, T.StructType) and isinstance(v.fields.get(f.name), StructV):
                named += self._point_members(path, fty, v.fields[f.name], span, st, kind, depth, root)
        return named

    def _unstated(self, path: str, pty: T.PtrType, span: N.Span, named: list) -> PtrV:
        """A pointer member to memory of a size nobody states."""
        region = self.new_region("global", path, UNCHECKED_SIZE, span, align=256, note="unchecked")
        named.append(path)
        return PtrV(region, const_int(0, T.INT64), pty.pointee)

    def _constant_entries(self, root: str, field_name: str) -> set | None:
        """The entries of an array member named ``field_name`` that the op ``root`` and what it
        calls index with a constant (``src[0]``, ``src[1]``); None where one is indexed by a
        variable (every entry may be read)."""
        key = ("entries", root, field_name)
        if key in self._statics:
            return self._statics[key]
        used: set | None = set()
        seen, todo = set(), [root]
        while todo and used is not None:
            fkey = todo.pop()
            f = self.program.functions.get(fkey)
            if fkey in seen or f is None:
                continue
            seen.add(fkey)
            todo.extend(self.program.callees(f))
            stack = [f.body] if f.body is not None else []
            while stack:
                x = stack.pop()
                if isinstance(x, N.Index) and isinstance(N.uncast(x.base), N.Member) and N.uncast(x.base).field == field_name:
                    k = N.int_literal(x.index, N.uncast)
                    if k is None:
                        used = None
                        break
                    used.add(k)
                stack.extend(N.children(x))
        self._statics[key] = used
        return used

    def _name_fields(self, name: str, v: StructV) -> None:
        """The integer and flag fields of a by-value argument, as sizes of the witness."""
        for path, x in v.leaves(name):
            if isinstance(x, IntV):
                self.ctx.symbol(path, x.bv, "user", x.ty.signed)
            else:
                self.ctx.symbol(path, x.term, "user")

    def make_tensor(self, name: str, arg: B.TensorArg, st: State, span: N.Span) -> TensorV:
        dims = tuple(self.sym_int(e, span) for e in arg.shape)
        for d in dims:
            st.assume(lia.CURRENT.register(d.bv >= 0, ints.I(d) >= 0))
        lazy = arg.dtype == B.LAZY_DTYPE
        size = None if lazy else B.DTYPE_SIZES.get(arg.dtype)
        if size is None and not lazy:
            raise BindingError(f"tensor '{name}': unknown dtype {arg.dtype!r}")
        note = "unchecked" if arg.unchecked else ""
        if arg.strides is not None:
            strides = tuple(self.sym_int(e, span) for e in arg.strides)
            # The elements a strided view can reach: 1 + sum((dim - 1) * stride).
            extent = const_int(1, T.INT64)
            for d, s in zip(dims, strides):
                dm1 = ints.arith("-", d, const_int(1, T.INT64), T.INT64, span)
                extent = ints.arith("+", extent, ints.arith("*", dm1, s, T.INT64, span), T.INT64, span)
            note = "strided"
        else:
            from .models.torch import contiguous_strides
            strides = contiguous_strides(dims, span)
            extent = const_int(1, T.INT64)
            for d in dims:
                extent = ints.arith("*", extent, d, T.INT64, span)
        values = None
        if arg.values is not None:
            values = (self.sym_int(arg.values[0], span), self.sym_int(arg.values[1], span))
        if arg.unchecked:
            self.ctx.note(f"the op never reads the shape of '{name}': its size is its caller's contract, so accesses "
                          "to it are checked for negative offsets only")
        cpu = None
        if arg.device == "cpu":
            cpu = z3.BoolVal(True)
        elif arg.device == "any":  # the launcher's checks decide (TORCH_CHECK(x.is_cpu()))
            cpu = self.ctx.symbol(f"{name}.is_cpu()", z3.Bool(self.ctx.fresh_name(f"{name}_cpu")), "user")
        on_gpu = arg.device != "cpu" and not arg.unchecked  # what a reproducer allocates on the card
        if not lazy:
            region = self.storage_region(name, extent, size, span, values, note,
                                         unstated=arg.unknown_values and values is None)
            self.tensor_facts.track(region, name, size)
            if on_gpu:
                self.ctx.device_regions.append(region)
            return TensorV(name, dims, strides, arg.dtype, region, cpu=cpu)
        code, esize = self.dtype_symbol(name, st)
        lazy_dtype = LazyDtype(code, esize, extent)
        nbytes = UNCHECKED_SIZE if arg.unchecked else ints.arith("*", extent, esize, T.INT64, span)
        placeholder = self.new_region("global", name, nbytes, span, values=values, align=256, note=note)
        if on_gpu:
            self.ctx.device_regions.append(placeholder)
        return TensorV(name, dims, strides, B.LAZY_DTYPE, placeholder, lazy=lazy_dtype, cpu=cpu)

    def storage_region(self, name: str, extent: IntV, esize: int, span: N.Span, values=None, note: str = "",
                       unstated: bool = False) -> Region:
        if note == "unchecked":
            return self.new_region("global", name, UNCHECKED_SIZE, span, elem_size=esize, values=values, align=256,
                                   note=note, unstated=unstated)
        nbytes = ints.arith("*", extent, const_int(esize, T.INT64), T.INT64, span)
        return self.new_region("global", name, nbytes, span, elem_size=esize, values=values, align=256, note=note,
                               unstated=unstated)

    def dtype_symbol(self, name: str, st: State) -> tuple[IntV, IntV]:
        """The dtype of a zero-config tensor as a c10::ScalarType symbol, and its element size."""
        from .models.torch import SCALAR_NAMES, SCALAR_TYPES
        codes = sorted(set(SCALAR_TYPES.values()))
        code_name = self.ctx.fresh_name(f"dtype({name})")
        code = z3.BitVec(code_name, 8)
        code_iv = lia.CURRENT.var(code_name, codes[0], codes[-1])
        esize_name = self.ctx.fresh_name(f"element_size({name})")
        esize = z3.BitVec(esize_name, 64)
        esize_iv = lia.CURRENT.var(esize_name, 1, 8)
        sizes = {c: B.DTYPE_SIZES[SCALAR_NAMES[c]] for c in codes}
        st.assume(lia.CURRENT.register(z3.Or(*[code == c for c in codes]), z3.Or(*[code_iv == c for c in codes])))
        for c in codes:
            st.assume(lia.CURRENT.register(z3.Implies(code == c, esize == sizes[c]),
                                           z3.Implies(code_iv == c, esize_iv == sizes[c])))
        st.assume(lia.CURRENT.register(z3.Or(*[esize == k for k in (1, 2, 4, 8)]),
                                       z3.Or(*[esize_iv == k for k in (1, 2, 4, 8)])))
        self.ctx.symbol(f"dtype({name})", code, "dtype")
        ty = T.IntType(8, True, "c10::ScalarType")
        out = IntV(ty, code, codes[0], codes[-1], iv=code_iv), IntV(T.INT64, esize, 1, 8, iv=esize_iv)
        self.ctx.lazy_dtypes[code_name] = out  # a tensor allocated with this dtype shares it
        return out

    # ------------------------------------------------------------ binding expressions

    def sym_int(self, e, span: N.Span, elems: dict | None = None) -> IntV:
        """A binding expression's value; ``elems``: the loaded values of a relation's elements."""
        if isinstance(e, B.Num):
            if isinstance(e.value, float) and not e.value.is_integer():
                raise BindingError(f"expected an integer, got {e.value}")
            return const_int(int(e.value), T.INT64)
        if isinstance(e, B.Elem):
            return elems[e]
        if isinstance(e, B.Name):
            if e.name in self.dims:
                return self.dims[e.name]
            raise BindingError(f"unknown name '{e.name}' (not a user dim, derived dim or model field)")
        if isinstance(e, B.Neg):
            return ints.negate(self.sym_int(e.operand, span, elems), span)
        if isinstance(e, B.BinOp):
            a, b = self.sym_int(e.left, span, elems), self.sym_int(e.right, span, elems)
            if e.op == "**":
                if a.concrete() is None or b.concrete() is None:
                    raise BindingError(f"'**' needs constant operands in {B.to_text(e)}")
                return const_int(a.concrete() ** b.concrete(), T.INT64)
            op = {"//": "/"}.get(e.op, e.op)
            return ints.arith(op, a, b, T.INT64, span)
        if isinstance(e, B.Func):
            args = [self.sym_int(a, span, elems) for a in e.args]
            if e.name in ("min", "max"):
                acc = args[0]
                for a in args[1:]:
                    c = ints.compare("<" if e.name == "min" else ">", a, acc).term
                    acc = ints.ite(c, a, acc)
                return acc
            one = const_int(1, T.INT64)
            a, b = args
            q = ints.arith("/", ints.arith("-", ints.arith("+", a, b, T.INT64, span), one, T.INT64, span), b, T.INT64, span)
            return ints.arith("*", q, b, T.INT64, span) if e.name == "round_up" else q
        raise BindingError(f"expected an integer expression, got {B.to_text(e)}")

    def sym_bool(self, e, span: N.Span, elems: dict | None = None) -> z3.BoolRef:
        if isinstance(e, B.Compare):
            return ints.compare(e.op, self.sym_int(e.left, span, elems), self.sym_int(e.right, span, elems)).term
        if isinstance(e, B.BoolOp):
            parts = [self.sym_bool(v, span, elems) for v in e.values]
            return z3.And(*parts) if e.op == "and" else z3.Or(*parts)
        raise BindingError(f"expected a condition, got {B.to_text(e)}")

    # ------------------------------------------------------------ launches

    def ev_launch(self, e: N.Launch, st: State):
        grid = self.dim3(self.eval(e.grid, st), e.grid.span, st)
        block = self.dim3(self.eval(e.block, st), e.block.span, st)
        smem = self.eval(e.smem, st) if e.smem is not None else const_int(0, T.SIZE_T)
        if e.stream is not None:
            self.eval(e.stream, st)
        if not isinstance(smem, IntV):
            raise PathEnd("stuck", "dynamic shared memory size that is not an integer", e.span)
        args = [self.eval(a, st) for a in e.args]
        stack = self.stack_spans(st)
        what = f"the launch of {e.name}"
        for part, dim in (("grid", grid), ("block", block)):
            for axis in "xyz":
                v = dim.fields[axis]
                if v.math is not None:
                    self.emit_sink(st, Sink(v, "launch-dim", _arg_span(e, part), stack, f"{part}.{axis} of {what}"))
        if smem.math is not None:
            self.emit_sink(st, Sink(smem, "shared-size", e.smem.span if e.smem is not None else e.span, stack,
                                    f"the dynamic shared memory size of {what}"))
        kernel = self.program.functions.get(e.kernel) if e.kernel else None
        if e.target is not None:
            fn = self.eval(e.target, st)
            if not isinstance(fn, FuncV) or fn.key not in self.program.functions:
                raise PathEnd("stuck", f"launch through `{e.name}`, a kernel pointer the engine cannot follow", e.span)
            kernel = self.program.functions[fn.key]
            e = N.Launch(fn.key, kernel.display, e.grid, e.block, e.smem, e.stream, e.args, span=e.span)
        event = LaunchEvent(e.name, tuple(grid.fields[a] for a in "xyz"), tuple(block.fields[a] for a in "xyz"),
                            smem, e.span, stack, kernel.max_threads if kernel is not None else None)
        for check in self.ctx.checks:
            check.on_launch(self.ctx, st, event)
        if kernel is None:
            raise PathEnd("stuck", f"kernel {e.name} has no body in this translation unit", e.span)
        self.run_kernel(kernel, e, st, grid, block, smem, args)
        return OpaqueV("void")

    def dim3(self, v, span: N.Span, st: State) -> StructV:
        if isinstance(v, StructV) and set(v.fields) >= {"x", "y", "z"}:
            return v
        if isinstance(v, IntV):
            return StructV(DIM3, {"x": ints.convert(v, UINT, span, self.stack_spans(st)),
                                  "y": const_int(1, UINT), "z": const_int(1, UINT)})
        raise PathEnd("stuck", "a launch dimension the engine cannot read", span)

    def run_kernel(self, kernel: N.Function, e: N.Launch, host: State, grid: StructV, block: StructV,
                   smem: IntV, args: list) -> None:
        if e.kernel in self.ctx.options.skip_kernels:
            return  # a follow-up run: this kernel's analysis ran out the budget before
        kst = host.fork()
        # Threads run only under a valid configuration (invalid ones are the launch check's business).
        refined = {}
        for name, dim, limits, lo in (("grid", grid, MAX_GRID, 1), ("block", block, MAX_BLOCK, 1)):
            fields = {}
            for axis, limit in zip("xyz", limits):
                v = dim.fields[axis]
                machine = ints.machine_int(v)
                kst.assume(lia.CURRENT.register(z3.And(z3.UGE(v.bv, lo), z3.ULE(v.bv, limit)),
                                                z3.And(machine >= lo, machine <= limit)))
                fields[axis] = IntV(UINT, v.bv, max(v.lo, lo), max(min(v.hi, limit), lo), v.math, v.sites, None,
                                    ints.I(v))
            refined[name] = StructV(DIM3, fields)
        b = refined["block"].fields
        machine = {a: ints.machine_int(v) for a, v in b.items()}
        max_threads = min(kernel.max_threads or MAX_THREADS_PER_BLOCK, MAX_THREADS_PER_BLOCK)
        kst.assume(lia.CURRENT.register(
            z3.ULE(z3.ZeroExt(32, b["x"].bv) * z3.ZeroExt(32, b["y"].bv) * z3.ZeroExt(32, b["z"].bv), max_threads),
            machine["x"] * machine["y"] * machine["z"] <= max_threads))
        # Nor does a launch that asks for more dynamic shared memory than the kernel may have.
        limit = getattr(self.ctx, "smem_limit", DEFAULT_SMEM)
        wide = z3.ZeroExt(64 - smem.ty.bits, smem.bv) if smem.ty.bits < 64 else smem.bv
        kst.assume(lia.CURRENT.register(z3.ULE(wide, limit), ints.machine_int(smem) <= limit))
        if not self.ctx.feasible(kst.pc):
            return  # no valid launch: the launch check reports it
        symbols = []
        tid, bid = {}, {}
        for axis in "xyz":
            for store, var, dim in ((bid, "blockIdx", refined["grid"]), (tid, "threadIdx", refined["block"])):
                bound = dim.fields[axis]
                name = self.ctx.fresh_name(f"{var}.{axis}")
                bv = z3.BitVec(name, 32)
                iv = lia.CURRENT.var(name, 0, max(bound.hi - 1, 0))
                bound_iv = ints.machine_int(bound)
                kst.assume(lia.CURRENT.register(z3.ULT(bv, bound.bv), iv < bound_iv))
                store[axis] = IntV(UINT, bv, 0, max(bound.hi - 1, 0), iv=iv)
                if not (bound.lo == bound.hi == 1):
                    symbols.append(Symbol(f"{var}.{axis}", bv, "thread", False))
        dyn = self.new_region("dynamic_shared", f"dynamic shared memory of {e.name}", smem, e.span, align=16)
        thread = Thread(e.name, refined["grid"], refined["block"], StructV(UINT3, bid), StructV(UINT3, tid),
                        symbols, dyn, counters=started_counters(kernel))
        kst.thread = thread
        self.start_threads(kst, thread, values_terms([*args, refined["grid"], refined["block"], smem]))
        previous, previous_key = self.ctx.kernel, self.ctx.kernel_key
        self.ctx.kernel, self.ctx.kernel_key = e.name, e.kernel
        self.ctx.kernel_names[e.kernel] = e.name
        if e.name not in self.ctx.kernels:
            self.ctx.kernels.append(e.name)
        started = self.ctx.meter.units()
        try:
            frame_stack = kst.stack
            self.invoke(kernel, kst, None, args, e.span)
            kst.stack = frame_stack
            self.end_threads()
        except PathEnd as pe:
            if pe.status == "stuck":
                self.ctx.stuck(pe.kind, pe.reason, pe.span)
            self.end_threads()  # what the paths that ran logged is still decided
        finally:
            self.ctx.threads = None
            self.ctx.kernel, self.ctx.kernel_key = previous, previous_key
            spent = self.ctx.kernel_units
            spent[e.kernel] = spent.get(e.kernel, 0) + self.ctx.meter.units() - started

    def builtin_var(self, name: str, st: State, span: N.Span) -> StructV:
        th = st.thread
        if th is None:
            raise PathEnd("stuck", f"{name} in host code", span)
        if name == "threadIdx":
            return th.tid
        if name == "blockIdx":
            return th.bid
        if name == "blockDim":
            return th.block
        if name == "gridDim":
            return th.grid
        return const_int(32, T.INT32)

    # ------------------------------------------------------------ storage of declarations

    def decl_region(self, v: N.VarDecl, st: State) -> Region:
        if v.storage == "shared":
            th = st.thread
            if th is None:
                raise PathEnd("stuck", f"__shared__ {v.name} outside a kernel", v.span)
            if v.id not in th.shared:
                th.shared[v.id] = self.new_region("shared", v.name, max(v.ty.size, 0), v.span,
                                                  align=max(v.ty.align, v.align, 16))
            return th.shared[v.id]
        if v.storage == "extern_shared":
            th = st.thread
            if th is None:
                raise PathEnd("stuck", f"extern __shared__ {v.name} outside a kernel", v.span)
            return th.dyn_smem
        if v.storage in ("static", "constant", "global"):
            return self.static_region(v) or self.new_region("global", v.name, max(v.ty.size, 0), v.span)
        if isinstance(v.ty, T.RefType):
            return self.local_region(T.PtrType(T.VOID), v.name, v.span)
        return self.local_region(v.ty, v.name, v.span, align=v.align)

    def kernel_add_sites(self) -> int:
        """The integer atomicAdd calls one pass through the running kernel may make (counters.py),
        counted once per kernel when a counted atomic first asks."""
        key = ("add_sites", self.ctx.kernel_key)
        if key not in self._statics:
            self._statics[key] = atomic_add_sites(self.program.functions[self.ctx.kernel_key], self.program.functions)
        return self._statics[key]

    def static_region(self, v: N.VarDecl) -> Region | None:
        if v.storage not in ("static", "constant", "global"):
            return None
        key = ("static", v.id)
        if key not in self._statics:
            kind = "constant" if v.storage == "constant" else "global"
            # A const static holds what its one initialization stored (see ex_decl).
            tracked = v.storage == "static" and v.const
            self._statics[key] = self.new_region(kind, v.name, max(v.ty.size, 0), v.span, tracked=tracked,
                                                 align=max(v.ty.align, v.align, 1) if tracked else max(v.align, 16))
        return self._statics[key]

    def global_loc(self, e: N.Global, st: State):
        from .values import Loc
        decl = self.program.globals.get(e.name)
        if decl is None:
            raise PathEnd("stuck", f"global {e.name}", e.span)
        key = ("global", e.name)
        if key not in self._statics:
            if decl.storage in ("shared", "extern_shared"):
                return Loc(self.decl_region(decl, st), const_int(0, T.INT64), decl.ty)
            kind = {"constant": "constant"}.get(decl.storage, "global" if st.thread is not None else "host")
            is_tensor = getattr(decl.ty, "kind", None) == "tensor"
            # A variable with an initializer that nothing copies over or writes (frontend/mutated.py)
            # holds it, const or not; any other holds what the program put there at run time
            # ("symbol": a finding resting on it needs its values).
            initialized = self._initialized(decl, e.name)
            self._statics[key] = self.new_region(kind, e.name, max(decl.ty.size, 0), e.span,
                                                 tracked=is_tensor or initialized,
                                                 note="" if is_tensor or initialized else "symbol")
        region = self._statics[key]
        if region.tracked and not st.content(region) and self._initialized(decl, e.name):
            init = self.program.global_inits[e.name]
            self._store_tracked(st, region, const_int(0, T.INT64), decl.ty,
                                self.coerce(self.eval(init, st), decl.ty, e.span, st), e.span)
        if region.tracked and getattr(decl.ty, "kind", None) == "tensor" and 0 not in st.content(region):
            # A tensor kept between calls (a static workspace): whatever an earlier call left; the
            # launcher's own checks (numel() < needed: reallocate) decide the rest.
            from .models.torch import kept_tensor
            self._write_at(st.write_content(region), 0, decl.ty, kept_tensor(self, st, e.name, e.span))
        return Loc(region, const_int(0, T.INT64), decl.ty)

    def _initialized(self, decl: N.VarDecl, name: str) -> bool:
        return name in self.program.global_inits and getattr(decl.ty, "kind", None) != "tensor"

    def region_base(self, region: Region, st: State) -> z3.BitVecRef:
        """The address of an object: positive and aligned as its allocator aligns it."""
        key = ("base", region.id)
        if key not in self._statics:
            name = self.ctx.fresh_name(f"address_of_{region.name}")
            base = z3.BitVec(name, 64)
            base_iv = lia.CURRENT.var(name, 1, (1 << 48) - 1)
            constraint = lia.CURRENT.register(z3.And(z3.UGT(base, 0), z3.URem(base, region.align) == 0, z3.ULT(base, 1 << 48)),
                                              base_iv % region.align == 0)
            self._statics[key] = (base, constraint, base_iv)
            self._statics[("address", name)] = region
        base, constraint, _ = self._statics[key]
        if not any(c is constraint for c in st.pc):
            st.assume(constraint)
        return base

    def region_of_address(self, bv: z3.BitVecRef) -> Region | None:
        """The one object whose address an integer was computed from (``(uintptr_t)p + 15 & ~15``),
        or None when it names no address or several."""
        from .context import _vars
        found = {self._statics.get(("address", v.decl().name())) for v in _vars(bv)} - {None}
        return found.pop() if len(found) == 1 else None

    def region_base_int(self, region: Region):
        return self._statics[("base", region.id)][2]

    # ------------------------------------------------------------ events

    def stack_spans(self, st: State) -> tuple:
        return tuple(st.frames[f].call_span for f in st.stack if f in st.frames and st.frames[f].call_span is not None)

    def emit_sink(self, st: State, sink: Sink) -> None:
        for check in self.ctx.checks:
            check.on_sink(self.ctx, st, sink)


def _fold_defs(e, defs):
    """``e`` with every sub-expression that is a derived dim's definition replaced by its name."""
    for d, name in defs:
        if e == d:
            return B.Name(name)
    if isinstance(e, B.BinOp):
        return B.BinOp(e.op, _fold_defs(e.left, defs), _fold_defs(e.right, defs))
    if isinstance(e, B.Compare):
        return B.Compare(e.op, _fold_defs(e.left, defs), _fold_defs(e.right, defs))
    if isinstance(e, B.BoolOp):
        return B.BoolOp(e.op, tuple(_fold_defs(v, defs) for v in e.values))
    if isinstance(e, B.Neg):
        return B.Neg(_fold_defs(e.operand, defs))
    if isinstance(e, B.Func):
        return B.Func(e.name, tuple(_fold_defs(a, defs) for a in e.args))
    return e


def narrow_symbol(name: str, lo: int, hi: int, width: int = 64) -> z3.BitVecRef:
    """A ``width``-bit value that needs only the bits of its range: the solver's multipliers shrink
    to the width the range needs (a 2,000,000 bound needs 21 bits, not 64)."""
    if lo >= 0:
        bits = max(hi.bit_length(), 1)
        return z3.ZeroExt(width - bits, z3.BitVec(name, bits)) if bits < width else z3.BitVec(name, width)
    bits = max(hi.bit_length(), (-lo).bit_length()) + 1
    return z3.SignExt(width - bits, z3.BitVec(name, bits)) if bits < width else z3.BitVec(name, width)


class BindingError(Exception):
    """The binding does not fit the launcher (a missing shape, an unknown name)."""


def _arg_span(e: N.Launch, part: str) -> N.Span:
    return (e.grid if part == "grid" else e.block).span

