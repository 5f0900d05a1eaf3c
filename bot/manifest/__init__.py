"""Loading a manifest (errors with file:line) and expanding it into instances to verify.

An instance is (op, binding, model, dtype) with the model's fields substituted. Instances that are
identical after substitution are verified once and stand for every model that produced them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import difflib

import yaml
from pydantic import ValidationError

from analyzers import binding as B

from .configs import ConfigError, read_config
from .relations import ABSENT, instance_relations
from . import schema
from .schema import Manifest, ModelEntry, ScalarArg, StringArg, TensorArg
from .yamlpos import YamlDoc

MANIFEST_NAMES = ("kernelvet.yaml", ".kernelvet.yaml", "kernelvet.yml")
_KNOWN_KEYS = sorted({f for cls in (schema.Manifest, schema.ModelEntry, schema.TensorArg, schema.ScalarArg, schema.StringArg, schema.OpSpec,
                                    schema.DimRange, schema.Options) for f in cls.model_fields})


class ManifestError(Exception):
    """Every problem found in a manifest, each as 'file:line:col: what is wrong'."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass
class Model:
    name: str
    fields: dict
    dtype: str | None
    index: int
    dtypes: list | None = None  # version 1: every dtype the model is verified with
    attrs: dict = field(default_factory=dict)  # every scalar of the config, by dotted name (for conditions)
    source: str | None = None  # the config file

    def lookup(self, name: str):
        """A field (aliases and derived fields included), else any config entry; a marker if absent."""
        if name in self.fields:
            return self.fields[name]
        if name in self.attrs:
            return self.attrs[name]
        from .predicates import missing
        return missing()


@dataclass
class Planned:
    """One instance to verify, and the models it stands for."""

    op_index: int
    op_name: str
    file: str
    launcher: str
    instance: B.Instance | None  # None: zero-config, built from the op itself
    models: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        if self.instance is None:
            return f"{self.op_name} (zero-config)"
        return f"{self.op_name} [{self.instance.dtype}] for {', '.join(self.models)}"


@dataclass
class LoadedManifest:
    path: Path
    doc: YamlDoc
    spec: Manifest
    models: list[Model]

    def pos(self, *loc) -> str:
        return str(self.doc.pos(tuple(loc)))


def find_manifest(root: Path) -> Path | None:
    for name in MANIFEST_NAMES:
        p = root / name
        if p.is_file():
            return p
    return None


MAX_NESTING = 64  # levels of YAML mappings and lists: a manifest needs six


def load(path: Path) -> LoadedManifest:
    """The manifest at ``path``, validated; ManifestError with file:line:col for every problem."""
    try:
        return _load(Path(path))
    except RecursionError:
        raise ManifestError([f"{path}: nested more than {MAX_NESTING} levels deep: not a manifest"]) from None


def _nesting(text: str) -> int:
    """How deep YAML flow and block collections nest, counted without parsing (a parser that
    recurses must not meet a thousand levels)."""
    depth = best = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    indents = [len(ln) - len(ln.lstrip(" ")) for ln in text.splitlines()
               if ln.strip() and not ln.lstrip().startswith("#")]
    return max(best, max(indents, default=0) // 2)


def _load(path: Path) -> LoadedManifest:
    try:
        text = YamlDoc.read_text(path)
        if _nesting(text) > MAX_NESTING:
            raise ManifestError([f"{path}:1:1: nested more than {MAX_NESTING} levels deep: not a manifest"])
        doc = YamlDoc(path, text)
    except FileNotFoundError:
        raise ManifestError([f"{path}: no such manifest"]) from None
    except IsADirectoryError:
        raise ManifestError([f"{path}: a directory, not a manifest file"]) from None
    except UnicodeError as exc:
        raise ManifestError([str(exc)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ManifestError([f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}"]) from None
    if not isinstance(doc.data, dict):
        raise ManifestError([f"{path}:1:1: a manifest is a mapping with 'version', 'models' and 'ops'"])
    if dups := doc.duplicate_keys():
        raise ManifestError(dups)
    if doc.data.get("version") == 1:
        from . import v1
        spec = v1.validate(doc, path)
        models, errors = v1.load_models(path, doc, spec)
        if errors:
            raise ManifestError(errors)
        return LoadedManifest(path, doc, spec, models)
    if doc.data.get("version") not in (0, None) and isinstance(doc.data.get("version"), int):
        raise ManifestError([f"{doc.pos(('version',))}: version: unknown manifest version {doc.data['version']} "
                             f"(this kernelvet reads versions 0 and 1)"])
    try:
        spec = Manifest.model_validate(doc.data)
    except ValidationError as exc:
        raise ManifestError([_pydantic_error(doc, e) for e in _specific(exc.errors())]) from None
    errors: list[str] = []
    models = []
    seen: set[str] = set()
    bound = repository_of(path)
    for i, entry in enumerate(spec.models):
        try:
            m = _model(path, entry, i, bound)
        except ConfigError as exc:
            errors.append(f"{doc.pos(('models', i, 'config'))}: {exc}")
            continue
        if m.name in seen:
            errors.append(f"{doc.pos(('models', i))}: a second model named '{m.name}' (give it a 'name')")
        seen.add(m.name)
        models.append(m)
    if errors:
        raise ManifestError(errors)
    return LoadedManifest(path, doc, spec, models)


def repository_of(manifest_path: Path) -> Path | None:
    """The git repository the manifest lies in: the files and configs it names must lie in it too
    (a pull request's manifest must not make kernelvet read, and echo, a file from elsewhere)."""
    import subprocess
    r = subprocess.run(["git", "-C", str(Path(manifest_path).resolve().parent), "rev-parse", "--show-toplevel"],
                       capture_output=True, text=True)
    return Path(r.stdout.strip()).resolve() if r.returncode == 0 and r.stdout.strip() else None


def confine(p: Path, bound: Path | None, what: str) -> None:
    """Raise ConfigError when ``p`` (symlinks followed) leaves ``bound``; the path is not shown."""
    if bound is not None and not Path(p).resolve().is_relative_to(bound):
        raise ConfigError(f"{what} is outside the repository (an absolute path, '..', or a symlink that leaves "
                          "it): only files inside the repository are read")


def _model(manifest_path: Path, entry: ModelEntry, index: int, bound: Path | None = None) -> Model:
    fields: dict = {}
    dtype = None
    name = entry.name
    cfg = None
    if entry.config is not None:
        cfg = (manifest_path.parent / entry.config)
        confine(cfg, bound, f"config '{Path(entry.config).name}'")
        fields, dtype = read_config(cfg)
        name = name or Path(entry.config).stem
    fields.update(entry.fields)
    return Model(name or f"model{index}", fields, entry.dtype or dtype, index,
                 source=str(cfg) if cfg is not None else None)


def _specific(errors: list[dict]) -> list[dict]:
    """For a value that matches no member of a union (tensor | scalar | 'absent'), keep the errors
    of the member the value was meant to be (the deepest ones), not every alternative."""
    def path(e):
        return tuple(x for x in e["loc"] if not (isinstance(x, str) and (x[:1].isupper() or x.startswith(("literal[", "function-")))))
    out = []
    for e in errors:
        p = path(e)
        deeper = any(path(o)[:len(p)] == p and len(path(o)) > len(p) for o in errors if o is not e)
        if deeper and e["type"] in ("literal_error", "model_type", "dict_type", "missing", "extra_forbidden"):
            continue
        # A key one member does not know but another does ('shape' for a scalar): not the mistake.
        if e["type"] == "extra_forbidden" and any(path(o) == p and o["type"] != "extra_forbidden" for o in errors):
            continue
        # A key one member requires where the value is plainly another member ('string' for a
        # tensor whose shape is wrong): not the mistake either.
        if e["type"] == "missing" and any(path(o)[:-1] == p[:-1] and o["type"] not in ("missing", "extra_forbidden")
                                          for o in errors):
            continue
        out.append(e)
    seen, unique = set(), []
    for e in out:
        key = (path(e), e["msg"])
        if key not in seen:
            seen.add(key)
            unique.append(e)
    return unique


def _pydantic_error(doc: YamlDoc, e: dict, known: list[str] = _KNOWN_KEYS) -> str:
    # pydantic adds union member names (e.g. 'TensorArg') and literal tags into loc: keep the path.
    loc = tuple(x for x in e["loc"] if not (isinstance(x, str) and (x[:1].isupper() or x.startswith(("literal[", "function-")))))
    where = doc.pos(loc)
    path = _dotted(loc)
    msg = e["msg"]
    if e["type"] == "missing":
        msg = f"'{loc[-1]}' is required" if loc else msg
    elif e["type"] == "extra_forbidden":
        msg = f"unknown key '{loc[-1]}'"
        # A key valid elsewhere in the manifest is not a typo of itself.
        near = [k for k in difflib.get_close_matches(str(loc[-1]), known, n=2, cutoff=0.75) if k != loc[-1]]
        if near:
            msg += f" (did you mean '{near[0]}'?)"
        elif str(loc[-1]) in known:
            msg += " here"
    return f"{where}: {path}: {msg}" if path else f"{where}: {msg}"


def _dotted(loc: tuple) -> str:
    out = ""
    for x in loc:
        out += f"[{x}]" if isinstance(x, int) else (f".{x}" if out else str(x))
    return out


# ---------------------------------------------------------------- expansion


def expand(lm: LoadedManifest, only_files: set[str] | None = None, root: Path | None = None) -> list[Planned]:
    """The unique instances of every op (restricted to ops in ``only_files`` when given). ``root``:
    the repository, where version 1 finds ops named by their registered name (default: the
    manifest's folder)."""
    if lm.spec.version == 1:
        from . import v1
        return v1.expand(lm, only_files, root)
    spec = lm.spec
    errors: list[str] = []
    dims = tuple(B.UserDim(n, r.min, r.max) for n, r in spec.user_dims.items())
    derived = []
    for n, text in spec.derived.items():
        try:
            derived.append((n, B.parse_expr(text)))
        except B.ExprError as exc:
            errors.append(f"{lm.pos('derived', n)}: {exc}")
    constraints = []
    for i, text in enumerate(spec.constraints):
        try:
            constraints.append(B.parse_expr(text))
        except B.ExprError as exc:
            errors.append(f"{lm.pos('constraints', i)}: {exc}")
    user_names = {d.name for d in dims} | {n for n, _ in derived}
    by_name = {m.name: m for m in lm.models}
    planned: dict = {}
    for oi, op in enumerate(spec.ops):
        if only_files is not None and op.file not in only_files:
            continue
        if op.models == "all":
            models = lm.models
        else:
            models = []
            for j, name in enumerate(op.models):
                if name not in by_name:
                    errors.append(f"{lm.pos('ops', oi, 'models', j)}: ops[{oi}] ({op.name}): no model named '{name}'")
                else:
                    models.append(by_name[name])
        for m in models:
            dtypes = op.dtypes or ([m.dtype] if m.dtype else list(spec.dtypes))
            for dt in dtypes:
                try:
                    inst = _instance(lm, oi, m, dt, dims, tuple(derived), tuple(constraints), user_names)
                except _ArgError as exc:
                    errors.append(str(exc))
                    continue
                problems = B.instance_problems(inst)
                if problems:
                    errors += [f"{lm.pos('ops', oi)}: ops[{oi}] ({op.name}): {p}" for p in problems]
                    continue
                key = (oi, inst)
                if key not in planned:
                    planned[key] = Planned(oi, op.name, op.file, op.launcher or op.name, inst)
                planned[key].models.append(m.name)
    if errors:
        raise ManifestError(sorted(set(errors), key=errors.index))
    return list(planned.values())


class _ArgError(Exception):
    pass


def _instance(lm: LoadedManifest, oi: int, m: Model, dtype: str, dims, derived, constraints, user_names) -> B.Instance:
    op = lm.spec.ops[oi]
    used: set[str] = set()

    def expr(value, *loc):
        try:
            e = B.parse_expr(value)
        except B.ExprError as exc:
            raise _ArgError(f"{lm.pos('ops', oi, *loc)}: {exc}") from None
        for name in B.names(e):
            if name in m.fields:
                used.add(name)
            elif name not in user_names:
                raise _ArgError(f"{lm.pos('ops', oi, *loc)}: ops[{oi}] ({op.name}): '{name}' is not a user dim, a derived "
                                f"dim or a field of model '{m.name}'")
        try:
            return B.substitute(e, m.fields)
        except B.ExprError as exc:
            raise _ArgError(f"{lm.pos('ops', oi, *loc)}: {exc} (model '{m.name}')") from None

    args = []
    for name, spec in op.args.items():
        if spec == "absent":
            args.append((name, B.AbsentArg()))
        elif isinstance(spec, TensorArg):
            shape = tuple(expr(s, "args", name, "shape", i) for i, s in enumerate(spec.shape))
            strides = None if spec.strides is None else tuple(
                expr(s, "args", name, "strides", i) for i, s in enumerate(spec.strides))
            values = None if spec.values is None else tuple(
                expr(s, "args", name, "values", i) for i, s in enumerate(spec.values))
            args.append((name, B.TensorArg(shape, spec.dtype or dtype, strides, values, optional=spec.optional,
                                                   device=spec.device, nondecreasing=spec.nondecreasing,
                                                   distinct=spec.distinct, unknown_values=spec.unknown_values)))
        elif isinstance(spec, StringArg):
            args.append((name, B.StringArg(spec.string)))
        elif isinstance(spec, ScalarArg):
            if spec.value is None:
                args.append((name, B.ScalarArg(None)))
            else:
                v = expr(spec.value, "args", name, "value")
                args.append((name, B.ScalarArg(v, isinstance(v, B.Num) and isinstance(v.value, float))))
    try:
        relations = instance_relations(
            op.relations, lambda k: lm.pos("ops", oi, "relations", k), f"ops[{oi}] ({op.name})",
            {n: ABSENT if a == "absent" else len(a.shape) if isinstance(a, TensorArg) else None
             for n, a in op.args.items()}, dict(args),
            {n: n for n in op.args}, m.fields, used, user_names, m.name)
    except ValueError as exc:
        raise _ArgError(str(exc)) from None
    fields = tuple(sorted((n, m.fields[n]) for n in used))
    dims, derived, constraints = _relevant(args, dims, derived, constraints, relations)
    return B.Instance(op.launcher or op.name, op.file, tuple(args), dims, derived, constraints, dtype, fields,
                      relations=relations)


def _relevant(args, dims, derived, constraints, relations=()):
    """Only the user dims an op's arguments and relations use (through derived dims too), and the
    constraints on them: witnesses then list what matters, and the solver has less to carry."""
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
            for m in B.names(defs[n]) - names:
                names.add(m)
                todo.append(m)
    dims = tuple(d for d in dims if d.name in names)
    derived = tuple((n, e) for n, e in derived if n in names)
    constraints = tuple(c for c in constraints if B.names(c) <= names and B.names(c))
    return dims, derived, constraints


def _exprs(a):
    if isinstance(a, B.TensorArg):
        yield from a.shape
        yield from a.strides or ()
        yield from a.values or ()
    elif isinstance(a, B.ScalarArg) and a.value is not None:
        yield a.value
    elif isinstance(a, B.BufferArg):
        if a.size is not None:
            yield a.size
        yield from a.values or ()
    elif isinstance(a, B.StructArg):
        for _, m in a.members:
            yield from _exprs(m)
