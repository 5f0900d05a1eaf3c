"""Manifest version 1: models from config files and globs, user dims with ranges, sets and
relations, ops named by their registered name, shorthands, optional arguments checked present and
absent, and model conditions. Expands into the same instances as version 0."""
from __future__ import annotations

import dataclasses
import difflib
import glob
import itertools
from pathlib import Path

from pydantic import ValidationError

from analyzers import binding as B

from . import predicates
from .relations import ABSENT, instance_relations
from .configs import ConfigError, config_attrs, model_fields, read_config_json
from .schema_v1 import KNOWN_KEYS, Manifest

DEFAULT_DIMS = {"batch": (1, 1000), "seq_len": (1, 2_000_000)}
DEFAULT_DERIVED = {"num_tokens": "batch * seq_len"}


def validate(doc, path: Path):
    from . import ManifestError, _pydantic_error, _specific
    try:
        return Manifest.model_validate(doc.data)
    except ValidationError as exc:
        raise ManifestError([_pydantic_error(doc, e, KNOWN_KEYS) for e in _specific(exc.errors())]) from None


def load_models(path: Path, doc, spec: Manifest) -> tuple[list, list[str]]:
    from . import Model, confine, repository_of
    models, errors, seen = [], [], {}
    for i, entry in enumerate(spec.models):
        sources: list[tuple[str | None, dict]] = []
        if entry.config is not None:
            pattern = str(path.parent / entry.config)
            files = sorted(glob.glob(pattern)) if glob.has_magic(entry.config) else [pattern]
            if not files:
                errors.append(f"{doc.pos(('models', i, 'config'))}: models[{i}].config: no file matches '{entry.config}'")
                continue
            if len(files) > 1 and entry.name is not None:
                errors.append(f"{doc.pos(('models', i, 'name'))}: models[{i}]: 'name' names one model, but "
                              f"'{entry.config}' matches {len(files)} files (each is named after its file)")
                continue
            bound = repository_of(path)
            for f in files:
                try:
                    confine(Path(f), bound, f"config '{Path(f).name}'")
                    sources.append((f, read_config_json(Path(f))))
                except ConfigError as exc:
                    errors.append(f"{doc.pos(('models', i, 'config'))}: {exc}")
        else:
            sources.append((None, {}))
        for f, data in sources:
            fields, dtype = model_fields(data) if data else ({}, None)
            fields.update(entry.fields)
            attrs = config_attrs(data) if data else {}
            name = entry.name or (Path(f).stem if f else f"model{i}")
            dtypes = entry.dtypes or ([entry.dtype] if entry.dtype else ([dtype] if dtype else list(spec.dtypes)))
            if name in seen:
                errors.append(f"{doc.pos(('models', i))}: a second model named '{name}' (give it a 'name')")
                continue
            seen[name] = True
            models.append(Model(name, fields, dtypes[0], i, dtypes=dtypes, attrs=attrs, source=f))
    return models, errors


_REGISTRIES: dict = {}  # one discovery per repository and parse set-up, per process


class _Resolver:
    """Registered op names -> (file, launcher, schema-to-parameter names), discovered once per root."""

    def __init__(self, lm, root: Path | None):
        self.lm = lm
        self.root = Path(root) if root is not None else lm.path.parent
        self._registry = None

    @property
    def registry(self):
        if self._registry is None:
            spec = self.lm.spec
            key = (str(self.root.resolve()), tuple(spec.include_dirs), tuple(sorted(spec.defines.items())), spec.arch)
            if key not in _REGISTRIES:
                from analyzers.frontend.registrations import discover
                _REGISTRIES[key] = discover(self.root, spec.include_dirs, dict(spec.defines), spec.arch)
            self._registry = _REGISTRIES[key]
        return self._registry

    def resolve(self, name: str):
        found = self.registry.find(name)
        if not found:
            known = sorted({r.name for r in self.registry.ops})
            near = difflib.get_close_matches(name.rpartition("::")[2], known, n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise LookupError(f"no op named '{name}' is registered in {self.root} ({len(known)} registered ops; "
                              f"`kernelvet manifest ops` lists them){hint}")
        implemented = [r for r in found if r.function]
        if len({r.function for r in implemented}) > 1:
            names = ", ".join(f"{r.namespace}::{r.name}" for r in implemented)
            raise LookupError(f"'{name}' is registered more than once ({names}): write it as namespace::name")
        if not implemented:
            raise LookupError(f"op '{name}' is registered ({found[0].registered_at[0]}:{found[0].registered_at[1]}) "
                              f"but {found[0].note}")
        reg = implemented[0]
        if reg.file is None:
            raise LookupError(f"op '{name}' is implemented by {reg.function}, but {reg.note}")
        return reg


def expand(lm, only_files: set[str] | None = None, root: Path | None = None) -> list:
    from . import ManifestError, Planned
    spec: Manifest = lm.spec
    errors: list[str] = []

    def parse(text, *loc):
        try:
            return B.parse_expr(text)
        except B.ExprError as exc:
            errors.append(f"{lm.pos(*loc)}: {exc}")
            return None

    dims_text = {n: {"min": lo, "max": hi, "values": None} for n, (lo, hi) in DEFAULT_DIMS.items()}
    for n, d in spec.user_dims.items():
        dims_text[n] = {"min": d.min, "max": d.max, "values": d.values}
    dim_exprs = {n: ({k: (parse(v, "user_dims", n, k) if v is not None and k != "values" else v)
                      for k, v in d.items()}) for n, d in dims_text.items()}
    derived_text = {**DEFAULT_DERIVED, **spec.derived}
    derived = [(n, parse(t, "derived", n)) for n, t in derived_text.items()]
    constraints = [(parse(t, "constraints", i), ("constraints", i)) for i, t in enumerate(spec.constraints)]
    if spec.max_num_batched_tokens is not None and "num_tokens" in derived_text:
        # Written over what num_tokens is made of (batch * seq_len <= cap): it then binds every op
        # that uses those dims, and reads as version 0's default constraint.
        cap = B.Compare("<=", B.Name("num_tokens"), B.Num(spec.max_num_batched_tokens))
        made_of = dict((n, e) for n, e in derived if e is not None)
        constraints.append((B.substitute(cap, made_of), ("max_num_batched_tokens",)))
    user_names = set(dims_text) | set(derived_text)
    resolver = _Resolver(lm, root)
    by_name = {m.name: m for m in lm.models}
    planned: dict = {}
    for oi, op in enumerate(spec.ops):
        target = _target(lm, oi, op, resolver, errors)
        if target is None:
            continue
        file, launcher, rename, params = target
        if only_files is not None and file not in only_files:
            continue
        models = _models(lm, oi, op, by_name, errors)
        arg_names = _arg_names(lm, oi, op, rename, params, errors)
        optional = [n for n, a in op.args.items() if a.optional]
        if len(optional) > MAX_OPTIONAL:
            errors.append(f"{lm.pos('ops', oi, 'args')}: ops[{oi}] ({op.display}): {len(optional)} optional arguments "
                          f"would be verified in {2 ** len(optional):,} present/absent combinations; at most "
                          f"{MAX_OPTIONAL} ({2 ** MAX_OPTIONAL}) per op: bind the others as present or absent")
            continue
        for m in models:
            dims = _dims(lm, m, dim_exprs, errors)
            if dims is None:
                continue
            cons = []
            for c, loc in constraints:
                if c is None:
                    continue
                try:
                    cons.append(B.substitute(c, m.fields))
                except B.ExprError as exc:
                    errors.append(f"{lm.pos(*loc)}: {exc} (model '{m.name}')")
            der = tuple((n, B.substitute(e, m.fields)) for n, e in derived if e is not None)
            for absent in _variants(optional):
                for dt in op.dtypes or m.dtypes or [m.dtype]:
                    try:
                        inst = _instance(lm, oi, m, dt, dims, der, tuple(cons), user_names, file, launcher,
                                         arg_names, absent)
                    except _ArgError as exc:
                        errors.append(str(exc))
                        continue
                    problems = B.instance_problems(inst)
                    if problems:
                        errors += [f"{lm.pos('ops', oi)}: ops[{oi}] ({op.display}): {p}" for p in problems]
                        continue
                    name = op.display + (f"({', '.join(f'{a}=None' for a in absent)})" if absent else "")
                    key = (oi, absent, _dedup_key(inst))
                    if key not in planned:
                        planned[key] = Planned(oi, name, file, launcher, inst)
                    if m.name not in planned[key].models:
                        planned[key].models.append(m.name)
    if errors:
        raise ManifestError(sorted(set(errors), key=errors.index))
    return list(planned.values())


class _ArgError(Exception):
    pass


def _dedup_key(inst: B.Instance) -> B.Instance:
    """Floating-point arguments are opaque to the engine (rms_norm_eps 1e-5 or 1e-6 verify alike):
    instances that differ only there are one. Fields used only by them do not split either."""
    floats = {n for n, a in inst.args if isinstance(a, B.ScalarArg) and a.is_float}
    if not floats:
        return inst
    args = tuple((n, B.ScalarArg(None, True) if n in floats else a) for n, a in inst.args)
    kept = set()
    for _, a in args:
        for e in _exprs_of(a):
            kept |= B.names(e)
    for e in inst.relations:
        kept |= B.names(e)
    return dataclasses.replace(inst, args=args, model_fields=tuple(
        (n, v) for n, v in inst.model_fields if n in kept or not isinstance(v, float)))


def _exprs_of(a):
    from . import _exprs
    return _exprs(a)


def _target(lm, oi, op, resolver, errors):
    """(file, launcher, schema name -> parameter name, parameter names or None)."""
    if op.kernel is not None:
        file = op.file or _kernel_file(lm, oi, op, resolver.root, errors)
        return None if file is None else (file, B.KERNEL_OP + op.kernel, {}, None)
    if op.op is None:
        return op.file, op.launcher or op.name, {}, None
    try:
        reg = resolver.resolve(op.op)
    except LookupError as exc:
        errors.append(f"{lm.pos('ops', oi, 'op')}: ops[{oi}] ({op.display}): {exc}")
        return None
    file = op.file or reg.file
    launcher = op.launcher or reg.function
    return file, launcher, reg.arg_names(), reg.params if reg.params else None


GLOBAL_DEF = r"__global__[^;{{}}]*?\b{name}\s*\("


def _kernel_file(lm, oi, op, root, errors) -> str | None:
    """The file that defines a bare kernel named without 'file': the one CUDA file of the
    repository with a ``__global__`` definition of that name."""
    import re
    from .targets import repository_sources
    plain = B.kernel_name(op.kernel)
    where = f"{lm.pos('ops', oi, 'kernel')}: ops[{oi}] ({op.display})"
    if root is None:
        errors.append(f"{where}: give the kernel's 'file' (no repository to search)")
        return None
    pattern = re.compile(GLOBAL_DEF.format(name=re.escape(plain)), re.S)
    found = []
    for rel in repository_sources(Path(root)):
        path = Path(root) / rel
        if path.suffix not in (".cu", ".cuh") or not path.resolve().is_relative_to(Path(root).resolve()):
            continue
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if pattern.search(text):
            found.append(rel)
    if len(found) == 1:
        return found[0]
    if not found:
        errors.append(f"{where}: no .cu or .cuh file of the repository defines a __global__ function "
                      f"'{plain}'; give its 'file'")
    else:
        errors.append(f"{where}: {len(found)} files define a __global__ function '{plain}' "
                      f"({', '.join(found[:3])}{', ...' if len(found) > 3 else ''}); give its 'file'")
    return None


def op_models(lm, oi: int) -> list:
    """The models op ``oi`` of a loaded manifest binds: its list, the models its condition selects,
    or all of them (mistakes in the entry are `manifest check`'s to report)."""
    return _models(lm, oi, lm.spec.ops[oi], {m.name: m for m in lm.models}, [])


def _models(lm, oi, op, by_name, errors):
    if op.kernel is not None and not lm.models:
        # A kernel library serves no model: its bare kernels run once per top-level dtype.
        from . import Model
        return [Model("(no model)", {}, lm.spec.dtypes[0], -1, dtypes=list(lm.spec.dtypes))]
    if isinstance(op.models, list):
        out = []
        for j, name in enumerate(op.models):
            if name not in by_name:
                near = difflib.get_close_matches(name, list(by_name), n=1, cutoff=0.6)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                errors.append(f"{lm.pos('ops', oi, 'models', j)}: ops[{oi}] ({op.display}): no model named '{name}'{hint}")
            else:
                out.append(by_name[name])
        return out
    if op.models.strip() == "all":
        return list(lm.models)
    try:
        test = predicates.compile_predicate(op.models)
    except predicates.PredicateError as exc:
        errors.append(f"{lm.pos('ops', oi, 'models')}: ops[{oi}] ({op.display}): {exc}")
        return []
    return [m for m in lm.models if test(m.lookup)]


def _arg_names(lm, oi, op, rename: dict, params, errors) -> dict:
    """Manifest argument key -> launcher parameter name; unknown keys are errors when the
    launcher's parameters are known."""
    out = {}
    for key in op.args:
        name = rename.get(key, key)
        if params is not None and name not in params:
            choices = list(params) + [k for k in rename if k not in params]
            near = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            errors.append(f"{lm.pos('ops', oi, 'args', key)}: ops[{oi}] ({op.display}): the launcher has no "
                          f"argument '{key}'{hint}; its arguments: {', '.join(params)}")
            continue
        out[key] = name
    return out


def _dims(lm, m, dim_exprs, errors):
    out = []
    for n, d in dim_exprs.items():
        if d["values"] is not None:
            vals = tuple(sorted(set(d["values"])))
            out.append(B.UserDim(n, vals[0], vals[-1], vals))
            continue
        bounds = []
        for k in ("min", "max"):
            e = d[k]
            if e is None:
                return None
            try:
                v = B.substitute(e, m.fields)
            except B.ExprError as exc:
                errors.append(f"{lm.pos('user_dims', n, k)}: {exc} (model '{m.name}')")
                return None
            if not isinstance(v, B.Num) or not float(v.value).is_integer():
                missing = ", ".join(sorted(B.names(v))) if not isinstance(v, B.Num) else str(v.value)
                errors.append(f"{lm.pos('user_dims', n, k)}: user_dims.{n}.{k} must be an integer for model "
                              f"'{m.name}' ({missing} is not a field of it)")
                return None
            bounds.append(int(v.value))
        if bounds[0] > bounds[1]:
            errors.append(f"{lm.pos('user_dims', n)}: user_dims.{n}: min {bounds[0]} is above max {bounds[1]} "
                          f"for model '{m.name}'")
            return None
        out.append(B.UserDim(n, bounds[0], bounds[1]))
    return tuple(out)


MAX_OPTIONAL = 8  # 256 present/absent combinations of an op's optional tensors


def _variants(optional: list[str]):
    """Every present/absent combination of the optional arguments: () first (all present)."""
    for k in range(len(optional) + 1):
        yield from itertools.combinations(optional, k)


def _instance(lm, oi, m, dtype, dims, derived, constraints, user_names, file, launcher, arg_names, absent):
    op = lm.spec.ops[oi]
    raw_args = (lm.doc.data.get("ops") or [])[oi].get("args") or {}
    used: set[str] = set()
    # dtype_size: bytes of the instance's dtype (a cache laid out in 16-byte vectors: 16 // dtype_size)
    env = {**m.fields, "dtype_size": B.DTYPE_SIZES[dtype]}

    def expr(value, key, *loc):
        shorthand = not isinstance(raw_args.get(key), dict)
        where = lm.pos("ops", oi, "args", key, *(loc[1:] if shorthand and loc[:1] == ("shape",) else
                                                 (() if shorthand else loc)))
        return checked(value, where)

    def checked(value, where):
        try:
            e = B.parse_expr(value)
        except B.ExprError as exc:
            raise _ArgError(f"{where}: {exc}") from None
        for name in B.names(e):
            if name in env:
                used.add(name)
            elif name not in user_names:
                near = difflib.get_close_matches(name, list(m.fields) + sorted(user_names), n=1, cutoff=0.75)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                raise _ArgError(f"{where}: ops[{oi}] ({op.display}): '{name}' is not a user dim, a derived dim or a "
                                f"field of model '{m.name}'{hint}")
        try:
            return B.substitute(e, env)
        except B.ExprError as exc:
            raise _ArgError(f"{where}: {exc} (model '{m.name}')") from None

    def buffer(spec, key, *loc):
        """A raw pointer's memory (an argument's or a struct member's: the same keys)."""
        if spec.bytes is not None:
            size, esize = expr(spec.bytes, key, *loc, "bytes"), 0
        else:
            esize = B.DTYPE_SIZES[spec.dtype]
            size = B.BinOp("*", expr(spec.elements, key, *loc, "elements"), B.Num(esize))
        values = None if spec.values is None else tuple(
            expr(v, key, *loc, "values", i) for i, v in enumerate(spec.values))
        return B.BufferArg(size, esize, values)

    def scalar(value, key, *loc):
        v = expr(value, key, *loc)
        return B.ScalarArg(v, isinstance(v, B.Num) and isinstance(v.value, float))

    def member(spec, key, *loc):
        """A struct member's binding (schema_v1.Member), as the engine reads it."""
        if spec.items is not None:
            return B.StructArg(tuple((i, member(m, key, *loc, i)) for i, m in enumerate(spec.items)), array=True)
        if spec.fields is not None:
            return B.StructArg(tuple((n, member(m, key, *loc, "fields", n)) for n, m in spec.fields.items()))
        if spec.absent:
            return B.AbsentArg()
        if spec.elements is not None or spec.bytes is not None:
            return buffer(spec, key, *loc)
        return B.ScalarArg(None) if spec.any else scalar(spec.value, key, *loc)

    args = []
    for key, spec in op.args.items():
        if key not in arg_names:
            continue
        name = arg_names[key]
        if spec.fields is not None:
            args.append((name, B.StructArg(tuple((n, member(m, key, "fields", n)) for n, m in spec.fields.items()))))
        elif spec.absent or key in absent:
            args.append((name, B.AbsentArg()))
        elif spec.is_buffer:
            args.append((name, buffer(spec, key)))
        elif spec.is_tensor:
            shape = tuple(expr(s, key, "shape", i) for i, s in enumerate(spec.shape))
            strides = None if spec.strides is None else tuple(
                expr(s, key, "strides", i) for i, s in enumerate(spec.strides))
            values = None if spec.values is None else tuple(
                expr(s, key, "values", i) for i, s in enumerate(spec.values))
            args.append((name, B.TensorArg(shape, spec.dtype or dtype, strides, values, device=spec.device or "cuda",
                                           nondecreasing=spec.nondecreasing, distinct=spec.distinct,
                                           unknown_values=spec.unknown_values)))
        elif spec.string is not None:
            args.append((name, B.StringArg(spec.string)))
        elif spec.any or spec.value is None:
            args.append((name, B.ScalarArg(None)))
        else:
            args.append((name, scalar(spec.value, key, "value")))
    if op.launch is not None:
        # The launch configuration: arguments of the launcher kernelvet appends (B.LAUNCH_ARGS).
        extents = [(op.launch.grid, "grid"), (op.launch.block, "block")]
        for (values, key), names in zip(extents, (B.LAUNCH_ARGS[:3], B.LAUNCH_ARGS[3:6])):
            for i, n in enumerate(names):
                v = values[i] if i < len(values) else 1
                at = lm.pos("ops", oi, "launch", key, *((i,) if i < len(values) else ()))
                args.append((n, B.ScalarArg(checked(v, at))))
        args.append((B.LAUNCH_ARGS[6], B.ScalarArg(checked(op.launch.shared_bytes,
                                                           lm.pos("ops", oi, "launch", "shared_bytes")))))
    try:
        relations = instance_relations(
            op.relations, lambda k: lm.pos("ops", oi, "relations", k), f"ops[{oi}] ({op.display})",
            {k: ABSENT if a.absent else len(a.shape) if a.is_tensor else None for k, a in op.args.items()}, dict(args),
            arg_names, env, used, user_names, m.name)
    except ValueError as exc:
        raise _ArgError(str(exc)) from None
    fields = tuple(sorted((n, env[n]) for n in used))
    dims, derived, constraints = _relevant(args, dims, derived, constraints, relations)
    return B.Instance(launcher, file, tuple(args), dims, derived, constraints, dtype, fields, relations=relations)


def _relevant(args, dims, derived, constraints, relations=()):
    """The user dims the arguments use (through derived dims too), the derived dims defined by
    them, and the constraints over those: `num_tokens <= cap` applies to an op that uses batch
    and seq_len."""
    from . import _exprs
    names: set[str] = set()
    for _, a in args:
        for e in _exprs(a):
            names |= B.names(e)
    for e in relations:
        names |= B.names(e)
    defs = dict(derived)
    todo = list(names)
    while todo:
        n = todo.pop()
        if n in defs:
            for x in B.names(defs[n]) - names:
                names.add(x)
                todo.append(x)
    grew = True
    while grew:  # derived dims made of used names are available to constraints
        grew = False
        for n, e in derived:
            if n not in names and B.names(e) and B.names(e) <= names:
                names.add(n)
                grew = True
    constraints = tuple(c for c in constraints if B.names(c) and B.names(c) <= names)
    derived = tuple((n, e) for n, e in derived if n in names)
    dims = tuple(d for d in dims if d.name in names)
    return dims, derived, constraints
