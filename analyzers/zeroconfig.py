"""Zero-config instances: how to run an op that no manifest binds.

Every tensor dimension becomes a symbolic dim within default ranges, integer scalars get a default
range, dtypes stay symbols the op's own code decides (a dispatch switch forks on them,
``data_ptr<T>()`` pins them), and what the launcher checks (``TORCH_CHECK(a.size(0) ==
b.size(0))``) constrains the rest as the engine runs it. What the launcher never looks at is its
caller's contract: a tensor whose shape the op never reads is checked for negative offsets only.

The rank of each tensor comes from how the op's host code uses it (``x.size(2)``, ``x.size(-1)``,
``x.dim() == 3``), followed through the host functions it is passed to.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from . import binding as B
from .kir import nodes as N
from .kir import types as T

# Methods that read a tensor's shape: a tensor used with any of them has a shape the op relies on.
SHAPE_METHODS = {"size", "sizes", "stride", "strides", "numel", "dim", "ndimension", "view", "reshape", "flatten",
                 "nbytes", "sym_size", "is_same_size", "size_or", "expand", "narrow", "select", "slice", "split",
                 "chunk", "unflatten", "transpose", "permute"}
# Calls that return the same tensor (or its optional payload): uses through them are uses of it.
SAME_TENSOR = {"value", "operator*", "operator->", "contiguous", "value_or", "get"}


@dataclass
class Limits:
    """Default ranges of zero-config dims, documented in docs/manifest.md."""

    max_leading_dim: int = 9_000_000  # tokens, sequences, blocks: the default cap of batch * seq_len
    max_dim: int = 262_144  # hidden sizes, heads * head_dim, vocabularies
    max_numel: int = 1 << 35  # elements of one tensor (64 GiB of 2-byte elements)
    scalar_lo: int = 0
    scalar_hi: int = 65_536
    max_instances: int = 12  # per op: dispatch cases x flag values x optionals, covered (see _cover)


@dataclass
class TensorUse:
    rank: int = 0
    fixed_rank: int | None = None  # from x.dim() == k
    stated: set = field(default_factory=set)  # ranks a check states (x.dim() == k, CHECK_SHAPE of k sizes)
    unit_stride: int | None = None  # from x.stride(k) == 1: dim k is the innermost (column-major)
    inspected: bool = False
    ids: set = field(default_factory=set)


def tensor_kind(ty: T.Type) -> str | None:
    """"tensor", "optional" (an optional tensor), or None (optionals of numbers included)."""
    if optional_number(ty) is not None:
        return None
    kind = getattr(T.strip_ref(ty), "kind", None)
    return kind if kind in ("tensor", "optional") else None


def optional_number(ty: T.Type) -> T.Type | None:
    """The number type of an optional number (``std::optional<int64_t>``), else None."""
    return getattr(T.strip_ref(ty), "payload", None)


def tensor_uses(program: N.Program, fn: N.Function) -> dict[str, TensorUse]:
    """For each tensor parameter of ``fn``: the rank its uses need and whether its shape is read."""
    uses: dict[str, TensorUse] = {}
    owner: dict[int, TensorUse] = {}
    for p in fn.params:
        if tensor_kind(p.ty):
            u = uses[p.name] = TensorUse(ids={p.id})
            owner[p.id] = u
    # Host code only: kernels cannot read a tensor's shape, and stay unlowered until launched.
    if hasattr(program.functions, "load"):
        program.functions.load(lambda key, is_kernel: not is_kernel)
    host = _host_functions(program)
    _propagate(program, host, owner, lambda ty: bool(tensor_kind(ty)), through_copies=True)
    for use in uses.values():
        use.ids.update(v for v, u in owner.items() if u is use)
    same_rank: list = []  # (use, use): a.sizes() == b.sizes(), a.is_same_size(b)
    shape_vars: dict = {}  # id of a variable holding x.sizes() -> x's use
    rank_vars: dict = {}  # id of a variable holding x.dim() -> x's use

    def rank_of(e):
        """The tensor whose rank ``e`` is: ``x.dim()`` or a variable initialised with it."""
        e = _strip(e)
        if isinstance(e, N.Call) and e.this is not None and e.name.rsplit("::", 1)[-1] in ("dim", "ndimension"):
            return owner.get(_root_var(e.this))
        return rank_vars.get(e.decl.id) if isinstance(e, N.Var) else None

    def shape_of(e):
        """The tensor whose shape ``e`` is: ``x.sizes()`` or a variable initialised with it."""
        e = _strip(e)
        if isinstance(e, N.Call) and e.name.rsplit("::", 1)[-1] in ("sizes", "strides") and e.this is not None:
            return owner.get(_root_var(e.this))
        if isinstance(e, N.Var):
            return shape_vars.get(e.decl.id)
        return None

    for f in host:
        for node in _walk(f.body):
            if isinstance(node, N.Decl) and node.init is not None:
                u = shape_of(node.init)
                if u is not None:
                    shape_vars[node.var.id] = u
                    u.inspected = True
                r = rank_of(node.init)
                if r is not None:
                    rank_vars[node.var.id] = r
            if isinstance(node, N.Switch) and rank_of(node.cond) is not None:
                # A dispatch on the rank (vLLM's VLLM_DISPATCH_RANK234: `switch (num_dims)`, num_dims =
                # x.dim()): each case is a rank the op accepts.
                u = rank_of(node.cond)
                u.inspected = True
                u.stated.update(v for v, _ in node.labels if v is not None and v >= 1)
                continue
            pair = _same_shape_pair(node)
            if pair is not None:
                a, b = (owner.get(_root_var(x)) for x in pair)
                if a is not None and b is not None:
                    same_rank.append((a, b))
            listed = _shape_listed(node, shape_of)
            if listed is not None:
                # CHECK_SHAPE(x, a, b, c): x.sizes() == IntArrayRef({a, b, c}) needs three dims (at
                # least: another branch may list fewer for another layout).
                listed[0].inspected = True
                listed[0].rank = max(listed[0].rank, listed[1])
                listed[0].stated.add(listed[1])
                continue
            if isinstance(node, N.Call) and node.this is not None and node.name.endswith("operator[]") \
                    and tensor_kind(node.this.ty):
                # x[i][j]: as many dims as indexes
                depth, base = 0, node
                while isinstance(base, N.Call) and base.this is not None and base.name.endswith("operator[]") \
                        and tensor_kind(base.this.ty):
                    depth, base = depth + 1, _strip(base.this)
                u = owner.get(_root_var(base))
                if u is not None:
                    u.inspected = True
                    u.rank = max(u.rank, depth)
                continue
            if isinstance(node, N.Call) and node.this is not None and node.name.endswith("operator[]"):
                # x.sizes()[2], or shape[2] of `auto shape = x.sizes()`
                if node.args:
                    u = shape_of(node.this)
                    k = _int_literal(node.args[0])
                    if u is not None and k is not None:
                        u.rank = max(u.rank, k + 1)
                continue
            if isinstance(node, N.Call) and node.this is not None:
                u = owner.get(_root_var(node.this))
                method = node.name.rsplit("::", 1)[-1]
                if u is None or method not in SHAPE_METHODS:
                    continue
                u.inspected = True
                if method in ("size", "stride", "sym_size") and node.args:
                    k = _int_literal(node.args[0])
                    if k is not None:
                        # size(-1) names the last of at least two dims (rows of hidden elements).
                        u.rank = max(u.rank, k + 1 if k >= 0 else 1 - k)
                elif method == "flatten":
                    # x.flatten(2, -1): dims 2.. exist (a smaller x raises)
                    ks = [k for k in (_int_literal(a) for a in node.args) if k is not None and k >= 0]
                    if ks:
                        u.rank = max(u.rank, max(ks) + 1)
            elif isinstance(node, N.Binary) and node.op == "==":
                for a, b in ((node.lhs, node.rhs), (node.rhs, node.lhs)):
                    call = _strip(a)
                    if isinstance(call, N.Call) and call.this is not None and (
                            call.name.rsplit("::", 1)[-1] in ("dim", "ndimension")
                            or call.name.rsplit("::", 1)[-1] == "size" and not call.args and shape_of(call.this)):
                        # x.dim() == 3, or shape.size() == 3 of `auto shape = x.sizes()`
                        u = owner.get(_root_var(call.this)) or shape_of(call.this)
                        k = _int_literal(b)
                        if u is not None and k is not None:
                            u.fixed_rank = k
                            u.stated.add(k)
                    elif isinstance(call, N.Var) and rank_of(call) is not None and _int_literal(b) is not None:
                        rank_of(call).stated.add(_int_literal(b))  # `num_dims == 3` of num_dims = x.dim()
                    elif isinstance(call, N.Call) and call.this is not None and call.args \
                            and call.name.rsplit("::", 1)[-1] == "stride" and _int_literal(b) == 1:
                        # STD_TORCH_CHECK(mat_b.stride(0) == 1, "mat_b must be column major")
                        u = owner.get(_root_var(call.this))
                        k = _int_literal(call.args[0])
                        if u is not None and k is not None and k >= 0:
                            u.unit_stride = k
            elif isinstance(node, N.Index):
                # x.sizes()[2]
                u = shape_of(node.base)
                if u is not None:
                    k = _int_literal(node.index)
                    if u is not None and k is not None:
                        u.rank = max(u.rank, k + 1)
    # Tensors the launcher requires to have one shape have one rank.
    for _ in range(len(same_rank)):
        for a, b in same_rank:
            a.inspected = b.inspected = True
            a.rank = b.rank = max(a.rank, b.rank)
            fixed = a.fixed_rank if a.fixed_rank is not None else b.fixed_rank
            a.fixed_rank = b.fixed_rank = fixed
            a.stated |= b.stated
            b.stated |= a.stated
    return uses


def rank_choices(uses: dict[str, TensorUse]) -> list[dict[str, int]]:
    """The ranks to try for tensors whose checks state several (``varlen ? CHECK_SHAPE(x, d, t) :
    CHECK_SHAPE(x, b, d, t)``: a layout chosen by an optional argument): tensors stating the same
    ranks follow one layout choice (mamba's `u` and `delta`), so each choice gives one rank to all of
    them; groups stating different ranks multiply. ``[{}]`` when no tensor has a choice."""
    groups: dict[frozenset, list[str]] = {}
    for name, u in uses.items():
        if len(u.stated) >= 2:
            groups.setdefault(frozenset(u.stated), []).append(name)
    choices: list[dict[str, int]] = [{}]
    for ranks, names in groups.items():
        choices = [dict(c, **{n: r for n in names}) for c in choices for r in sorted(ranks)]
    return choices


def _shape_listed(node, shape_of):
    """(x's use, k) for ``x.sizes() == IntArrayRef({d0, ..., dk-1})`` (either side), else None."""
    if not (isinstance(node, N.Call) and node.this is None and node.name.endswith("operator==") and len(node.args) == 2):
        return None
    for a, b in (node.args, node.args[::-1]):
        u = shape_of(a)
        b = _strip(b)
        if u is not None and isinstance(b, N.Construct) and len(b.args) == 1 and isinstance(_strip(b.args[0]), N.InitList):
            return u, len(_strip(b.args[0]).elems)
    return None


def _same_shape_pair(node):
    """The two tensors of ``a.sizes() == b.sizes()`` (or ``!=``, ``equals``) and ``a.is_same_size(b)``."""
    if not isinstance(node, N.Call):
        return None
    method = node.name.rsplit("::", 1)[-1]
    if method == "is_same_size" and node.this is not None and node.args:
        return node.this, node.args[0]
    if method in ("operator==", "operator!=", "equals"):
        sides = ([node.this] if node.this is not None else []) + list(node.args)
        calls = [_strip(x) for x in sides]
        if len(calls) == 2 and all(isinstance(c, N.Call) and c.this is not None
                                   and c.name.rsplit("::", 1)[-1] == "sizes" for c in calls):
            return calls[0].this, calls[1].this
    return None


def instances(program: N.Program, fn: N.Function, file: str, limits: Limits | None = None) -> list[tuple[str, B.Instance]]:
    """The zero-config instances of an op: all optional tensors present, and (when it has any) all
    absent. Each comes with a readable label."""
    limits = limits or Limits()
    uses = tensor_uses(program, fn)
    optional = [p for p in fn.params if tensor_kind(p.ty) == "optional" or optional_number(p.ty) is not None]
    variants = [("", False)] + ([("optionals absent", True)] if optional else [])
    # A scalar the launcher dispatches on with a switch (a quantization type): one instance per
    # case, each with its own time budget, as a manifest would bind one value per op.
    compared = compared_constants(program, fn, uses)
    scalar, cases = dispatch_choice(compared)
    # Parameters compared with a negative constant (group_size == -1) reach it.
    sentinels = {name: min(v) for name, v in compared.items() if min(v) < 0}
    choices = [(None, "")] if scalar is None else \
        [((v, v), f"{scalar}={v}") for v in cases] + [(None, f"{scalar} another value")]
    # A flag the host code branches on (`if (use_exllama)`) picks whole launch paths: one instance
    # per value, so each path gets its own budget. At most two flags: four times the instances.
    flags = branched_flags(program, fn)[:2]
    settings = [dict(zip(flags, values)) for values in itertools.product((True, False), repeat=len(flags))]
    integer_params = {p.name for p in _integer_params(fn)}
    zero_meant = compared_with_zero(program, fn)
    struct_fields = tuple(n for n in struct_int_fields(fn) if n not in zero_meant)
    out = []
    combos = _cover(list(itertools.product(variants, choices, settings, rank_choices(uses))), limits.max_instances)
    optional_tensors = {p.name for p in fn.params if tensor_kind(p.ty) == "optional"}
    seen_ranks = set()
    for (label, absent), (pinned, what), flag_values, ranks in combos:
        if absent:
            # An absent optional tensor has no rank: its rank choices are one instance.
            ranks = {n: r for n, r in ranks.items() if n not in optional_tensors}
            key = (label, pinned, tuple(sorted(flag_values.items())), tuple(sorted(ranks.items())))
            if key in seen_ranks:
                continue
            seen_ranks.add(key)
        args, dims, constraints = [], [], []
        for p in fn.params:
            arg = _argument(p, uses, limits, dims, constraints, absent, sentinels, ranks.get(p.name))
            if p.name in flag_values:
                arg = B.ScalarArg(B.Num(int(flag_values[p.name])))
            if arg is not None:
                args.append((p.name, arg))
        if scalar is not None and pinned is not None \
                and not any(d.name == scalar and d.lo <= pinned[0] <= d.hi for d in dims):
            continue  # a case the argument never takes (`num_experts != 0` of a dimension >= 1)
        if scalar is not None:
            dims = [B.UserDim(d.name, *pinned) if d.name == scalar and pinned else d for d in dims]
            if pinned is None:
                constraints += [B.Compare("!=", B.Name(scalar), B.Num(v)) for v in cases]
        # A rank of one layout is a valid call only on the paths that check that layout: the op may
        # refuse every input with it (the other layout's instance runs those paths).
        rank_text = ", ".join(f"{n} with {r} dims" for n, r in ranks.items())
        reject = ", ".join(x for x in (what if scalar is not None and pinned is None else "", rank_text) if x)
        if reject and label:
            reject += f" ({label})"
        scalars = tuple(d.name for d in dims if d.name in integer_params and d.name not in zero_meant and d.lo <= 0)
        scalars += struct_fields
        inst = B.Instance(fn.display, file, tuple(args), tuple(dims), (), tuple(constraints), "any",
                          zero_config=True, may_reject=reject, contract_scalars=scalars)
        flag_text = ", ".join(f"{k}={'true' if v else 'false'}" for k, v in flag_values.items())
        out.append((", ".join(x for x in (what, flag_text, rank_text, label) if x), inst))
    return out


def _cover(combos: list[tuple], cap: int) -> list[tuple]:
    """At most ``cap`` of the combinations (variant, dispatch case, flag values), chosen so that
    every value of each factor is in one of them: the first combination of each new value, then
    the rest in order up to the cap."""
    if len(combos) <= cap:
        return combos
    keys = [tuple(repr(x) for x in c) for c in combos]
    seen: list[set] = [set() for _ in keys[0]]
    picked = []
    for i, k in enumerate(keys):
        if any(v not in seen[j] for j, v in enumerate(k)):
            picked.append(i)
            for j, v in enumerate(k):
                seen[j].add(v)
    picked += [i for i in range(len(combos)) if i not in picked][:max(0, cap - len(picked))]
    return [combos[i] for i in sorted(picked)]


def branched_flags(program: N.Program, fn: N.Function) -> list[str]:
    """The boolean parameters of ``fn`` that its host code branches on (an ``if`` or a conditional
    whose condition is the flag, negated or joined by ``&&``/``||``), directly or in a helper it is
    passed to, in parameter order. A flag only passed to a kernel is not one: the kernel's own
    branch is explored under the symbol."""
    alias = {p.id: p.name for p in fn.params if isinstance(T.strip_ref(p.ty), T.BoolType)}
    if not alias:
        return []
    host = _host_functions(program)
    _propagate(program, host, alias, lambda ty: isinstance(T.strip_ref(ty), T.BoolType), through_copies=True)
    found = set()
    for f in host:
        for node in _walk(f.body):
            if isinstance(node, (N.If, N.Cond)):
                stack = [node.cond]
                while stack:
                    c = _strip(stack.pop())
                    if isinstance(c, N.Unary) and c.op == "!":
                        stack.append(c.operand)
                    elif isinstance(c, N.Binary) and c.op in ("&&", "||"):
                        stack += [c.lhs, c.rhs]
                    elif _root_var(c) in alias:
                        found.add(alias[_root_var(c)])
    return [p.name for p in fn.params if p.name in found]


def compared_constants(program: N.Program, fn: N.Function, uses: dict | None = None) -> dict:
    """What each integer parameter of ``fn`` is switched on or compared with (``==``/``!=``) in its
    host code, directly or passed on to a helper: name -> constants. A dimension read into a local
    (``num_experts = gating.size(-1)``, then ``switch (num_experts)``) counts too, named as its dim
    (``gating.size(1)``)."""
    alias = {p.id: p.name for p in fn.params if isinstance(T.strip_ref(p.ty), T.IntType)}
    host = _host_functions(program)
    dims = {}  # var id of a tensor (or an alias of one) -> (its parameter's name, its rank)
    for name, use in (uses or {}).items():
        rank = use.fixed_rank if use.fixed_rank is not None else max(use.rank, 1)
        dims.update((i, (name, rank)) for i in use.ids)
    for f in host if dims else ():
        for node in _walk(f.body):
            if isinstance(node, N.Decl) and node.init is not None and isinstance(T.strip_ref(node.var.ty), T.IntType):
                call = _strip(node.init)
                if isinstance(call, N.Call) and call.this is not None and call.args \
                        and call.name.rsplit("::", 1)[-1] == "size" and _root_var(call.this) in dims:
                    name, rank = dims[_root_var(call.this)]
                    k = _int_literal(call.args[0])
                    if k is not None and -rank <= k < rank:
                        alias[node.var.id] = f"{name}.size({k % rank})"
    if not alias:
        return {}
    _propagate(program, host, alias, lambda ty: isinstance(T.strip_ref(ty), T.IntType))
    seen: dict = {}
    for f in host:
        for node in _walk(f.body):
            if isinstance(node, N.Switch) and _root_var(node.cond) in alias:
                # A switch whose cases are not constants the front end knows (only a default, or
                # labels from a header it could not read) compares with nothing.
                labels = {v for v, _ in node.labels if v is not None}
                if labels:
                    seen.setdefault(alias[_root_var(node.cond)], set()).update(labels)
            elif isinstance(node, N.Binary) and node.op in ("==", "!="):
                for a, b in ((node.lhs, node.rhs), (node.rhs, node.lhs)):
                    k = _int_literal(b)
                    if _root_var(a) in alias and k is not None:
                        seen.setdefault(alias[_root_var(a)], set()).add(k)
    return seen


def compared_with_zero(program: N.Program, fn: N.Function) -> set[str]:
    """The integer parameters whose 0 the host code gives a meaning: compared with 0 (``n == 0``,
    ``n > 0``, ``n < 1``, ``n >= 1``) or tested for truth (``if (!n)``), directly or in a helper it
    is passed to. A finding that needs one of them at 0 is the op's own (engine/contract.py)."""
    alias = {p.id: p.name for p in _integer_params(fn)}
    # The integer fields of a struct taken by value (`g.nodes`), through copies of it (`d_g = g`).
    structs = {p.id: p.name for p in fn.params if isinstance(T.strip_ref(p.ty), T.StructType)}
    if not alias and not structs:
        return set()
    host = _host_functions(program)
    _propagate(program, host, alias, lambda ty: isinstance(T.strip_ref(ty), T.IntType))
    _propagate(program, host, structs, lambda ty: isinstance(T.strip_ref(ty), T.StructType), through_copies=True)

    def named(e) -> str | None:
        root = _root_var(e)
        if root in alias:
            return alias[root]
        path = []
        e = _strip(e)
        while isinstance(e, N.Member) and not e.arrow:
            path.append(e.field)
            e = _strip(e.base)
        root = e.decl.id if isinstance(e, N.Var) and path else None
        return ".".join([structs[root], *reversed(path)]) if root in structs else None

    zero_bound = {"==": (0,), "!=": (0,), "<": (0, 1), "<=": (0,), ">": (0,), ">=": (0, 1)}
    found = set()
    for f in host:
        for node in _walk(f.body):
            if isinstance(node, N.Binary) and node.op in zero_bound:
                for a, b in ((node.lhs, node.rhs), (node.rhs, node.lhs)):
                    if _int_literal(b) in zero_bound[node.op]:
                        found.add(named(a))
            elif isinstance(node, N.Unary) and node.op == "!":
                found.add(named(node.operand))
            elif isinstance(node, (N.If, N.Cond)):
                found.add(named(node.cond))
    found.discard(None)
    return found


def struct_int_fields(fn: N.Function) -> list[str]:
    """``g.nodes``, ``p.sizes.rows``: the integer fields of the structs ``fn`` takes by value, which
    zero-config ranges as integer arguments (engine/host.py) and asks the zero guarantee of."""
    out: list[str] = []

    def walk(prefix: str, ty) -> None:
        for f in ty.fields:
            fty = T.strip_ref(f.type)
            if isinstance(fty, T.IntType):
                out.append(f"{prefix}.{f.name}")
            elif isinstance(fty, T.StructType):
                walk(f"{prefix}.{f.name}", fty)

    for p in fn.params:
        if isinstance(T.strip_ref(p.ty), T.StructType):
            walk(p.name, T.strip_ref(p.ty))
    return out


def _integer_params(fn: N.Function) -> list:
    """The integer parameters of ``fn``, optional integers included."""
    return [p for p in fn.params if isinstance(T.strip_ref(p.ty), T.IntType)
            or isinstance(optional_number(p.ty), T.IntType)]


def dispatch_choice(compared: dict) -> tuple[str | None, list]:
    """The integer the host code dispatches on (a switch, an if-chain of ``bit == 4``) and its
    constants: the one compared with the most (at least three, at most 64); (None, []) if none."""
    best: tuple[str | None, list] = (None, [])
    for name, values in sorted(compared.items()):
        if 3 <= len(values) <= 64 and len(values) > len(best[1]):
            best = (name, sorted(values))
    return best


def _argument(p: N.VarDecl, uses, limits: Limits, dims: list, constraints: list, absent: bool,
              sentinels: dict | None = None, rank: int | None = None):
    kind = tensor_kind(p.ty)
    ty = T.strip_ref(p.ty)
    if kind == "optional" and absent:
        return B.AbsentArg()
    payload = optional_number(ty)
    if payload is not None:
        # An optional number: present with any value (as the number would be), absent with the
        # optional tensors.
        if absent:
            return B.AbsentArg()
        ty = payload
    if kind:
        u = uses.get(p.name, TensorUse())
        if rank is None:
            # A rank a check states wins over the largest one read (`n >= 4 ? x.stride(-4) : 0`).
            rank = u.fixed_rank if u.fixed_rank is not None else next(iter(u.stated)) if len(u.stated) == 1 \
                else max(u.rank, 1)
        shape = []
        # A tensor whose rank nothing in the op reveals (read through numel() or data_ptr() only)
        # may be a flat view of any shape: one dimension of up to the element bound, not a row count.
        flat = u.rank == 0 and u.fixed_rank is None and not u.stated and rank == 1
        for i in range(rank):
            name = f"{p.name}.size({i})"
            hi = limits.max_numel if flat else limits.max_leading_dim if i == 0 else limits.max_dim
            dims.append(B.UserDim(name, 1, hi))
            shape.append(B.Name(name))
        # The element bound on every prefix of the dims, not only on the whole product: each
        # product then multiplies a value within the bound by one dim, and no 64-bit product wraps
        # (seven dims of 2^18 would wrap to 0 and pass a bound written on the whole product).
        total = shape[0]
        for d in shape[1:]:
            total = B.BinOp("*", total, d)
            constraints.append(B.Compare("<=", total, B.Num(limits.max_numel)))
        return B.TensorArg(tuple(shape), B.LAZY_DTYPE, _strides(shape, u.unit_stride), unchecked=not u.inspected,
                           device="any")
    if isinstance(ty, T.BoolType) or isinstance(ty, T.FloatType):
        return B.ScalarArg(None, isinstance(ty, T.FloatType))
    if isinstance(ty, T.IntType):
        lo, hi = max(min(limits.scalar_lo, (sentinels or {}).get(p.name, 0)), ty.min), min(limits.scalar_hi, ty.max)
        lo, hi = enum_bounds(ty, lo, hi)
        dims.append(B.UserDim(p.name, lo, hi))
        return B.ScalarArg(B.Name(p.name))
    if isinstance(ty, T.PtrType):
        return B.BufferArg()
    return None


def enum_bounds(ty: T.IntType, lo: int, hi: int) -> tuple[int, int]:
    """An enum's default range is its enumerators' (a tensor's `ggml_type`: 0 to 38, not a size up
    to 65,536): the code that sets such a value names one of them. Other integers keep [lo, hi]."""
    if ty.enum_range is None:
        return lo, hi
    return max(ty.enum_range[0], ty.min), min(ty.enum_range[1], ty.max)


def _strides(shape: list, innermost: int | None) -> tuple | None:
    """Contiguous (None), or the layout whose innermost dimension is the one the launcher requires a
    unit stride of (a column-major matrix); the other dimensions keep their order outside it."""
    if innermost is None or innermost >= len(shape) - 1:
        return None
    strides: list = [None] * len(shape)
    strides[innermost] = B.Num(1)
    acc = shape[innermost]
    for d in reversed(range(len(shape))):
        if d != innermost:
            strides[d] = acc
            acc = B.BinOp("*", acc, shape[d])
    return tuple(strides)


def _host_functions(program: N.Program) -> list:
    return [f for f in program.functions.values() if f.kind not in ("kernel", "device")]


def _propagate(program: N.Program, host: list, alias: dict, accepts, through_copies: bool = False) -> None:
    """Grow ``alias`` (var id -> what it stands for): passing a variable on to a helper makes the
    callee's parameter stand for the same thing, and so (``through_copies``) does a local copy."""
    for _ in range(4):
        grew = False
        for f in host:
            for node in _walk(f.body):
                pairs = []
                if isinstance(node, N.Call) and node.func in program.functions:
                    pairs = [(a, p) for a, p in zip(node.args, program.functions[node.func].params)]
                elif through_copies and isinstance(node, N.Decl) and node.init is not None:
                    pairs = [(node.init, node.var)]
                elif through_copies and isinstance(node, N.Call) and node.name.endswith("::operator=") \
                        and node.args and isinstance(_strip(node.this), N.Var):
                    pairs = [(node.args[0], _strip(node.this).decl)]  # `z = z_.value();` of `at::Tensor z;`
                for a, p in pairs:
                    root = _root_var(a)
                    if root in alias and p.id not in alias and accepts(p.ty):
                        alias[p.id] = alias[root]
                        grew = True
        if not grew:
            break


def _strip(e):
    while True:
        if isinstance(e, (N.Cast, N.Deref, N.AddrOf)):
            e = e.operand
        elif isinstance(e, N.Construct) and len(e.args) == 1 and tensor_kind(e.ty) and tensor_kind(e.args[0].ty):
            e = e.args[0]  # a tensor passed by value: the copy is the same tensor
        elif isinstance(e, N.Construct) and len(e.args) == 1 and isinstance(T.strip_ref(e.ty), T.StructType) \
                and T.strip_ref(e.args[0].ty) == T.strip_ref(e.ty):
            e = e.args[0]  # a struct's copy (`Graph d_g = g`): its fields are the same values
        else:
            return e


def _root_var(e) -> int | None:
    e = _strip(e)
    while isinstance(e, N.Call) and e.this is not None and e.name.rsplit("::", 1)[-1] in SAME_TENSOR:
        e = _strip(e.this)
    return e.decl.id if isinstance(e, N.Var) else None


def _int_literal(e) -> int | None:
    return N.int_literal(e, _strip)


def _walk(node):
    if node is None:
        return
    # Pre-order, in source order: a declaration (``auto shape = x.sizes()``) is seen before its uses.
    stack = [node]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(N.children(x)))
