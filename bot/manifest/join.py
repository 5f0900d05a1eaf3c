"""A recorded manifest joined to a hand-written base: the base says more where it binds an op (index
ranges, user dims the recording cannot see, ops a run never reaches), the recording says for
which more models. The result is one version 1 manifest:

- the base's settings (defines, include directories, user dims, derived dims, returns, options);
- the base's models, then the recorded models whose config is not already one of the base's (by
  content: the same config under two paths is one model, named as the base names it);
- the base's ops, as written;
- each recorded binding, for its models that the base's binding of the same op does not already
  cover (all of them where the base does not bind the op). What the base states about an
  argument's contents (``values``, ``distinct``: ``positions`` lie in ``[0, max_position_embeddings
  - 1]``) is a fact about the op, which no meta-device run observes: a recorded tensor argument of
  the same name that states none takes the base's.

A number the recording made a user dim (a size the framework chose per input) keeps its name
unless the base has a user dim of that name, which means something else: then it is named after
its op (``moe_align_block_size_block_size``).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import yaml

from analyzers import binding as B

SETTINGS = ("include_dirs", "defines", "arch", "dtypes", "max_num_batched_tokens", "constraints", "derived",
            "returns", "options")


def join(base_path: Path, recorded_path: Path, out_path: Path, header: list[str] = ()) -> str:
    """Write the joined manifest to ``out_path``; returns its text."""
    from . import load
    loaded = load(Path(base_path))  # validated, with every model's fields
    base = yaml.safe_load(Path(base_path).read_text())
    rec = yaml.safe_load(Path(recorded_path).read_text())
    out_dir = Path(out_path).resolve().parent

    def config_of(doc_path: Path, entry: dict) -> Path:
        return (Path(doc_path).resolve().parent / entry["config"]).resolve()

    base_models = base.get("models") or []
    by_content = {_digest(config_of(base_path, m)): m["name"] for m in base_models if m.get("config")}
    base_names = [m["name"] for m in base_models]
    rename: dict[str, str] = {}
    models = [dict(m, config=_rel(config_of(base_path, m), out_dir)) if m.get("config") else dict(m)
              for m in base_models]
    fields_of = {m.name: m.fields for m in loaded.models}
    for m in rec.get("models") or []:
        fields_of[m["name"]] = _fields(config_of(recorded_path, m), m) if m.get("config") else dict(m.get("fields") or {})
        known = by_content.get(_digest(config_of(recorded_path, m))) if m.get("config") else None
        if known is not None:
            rename[m["name"]] = known
            fields_of[known] = fields_of.get(known) or fields_of[m["name"]]
            continue
        name = m["name"] if m["name"] not in base_names else f"{m['name']}-recorded"
        rename[m["name"]] = name
        fields_of[name] = fields_of[m["name"]]
        models.append(dict(m, name=name, config=_rel(config_of(recorded_path, m), out_dir)))

    user_dims = dict(base.get("user_dims") or {})
    recorded_dims = rec.get("user_dims") or {}
    # The base's bindings stay with the base's models: a binding for every model, or for those a
    # condition selects, was written against those configs' fields.
    ops = [dict(op, models=_base_models(op, loaded)) for op in base.get("ops") or []]
    for op in rec.get("ops") or []:
        name = op["op"]
        covered = {m for entry in ops if entry.get("op") == name for m in entry["models"]}
        names = [rename[m] for m in (op.get("models") or [m["name"] for m in rec.get("models") or []])]
        names = [n for n in names if n not in covered]
        if not names:
            continue
        args = op.get("args") or {}
        renames = {}
        for dim in sorted(_dims_used(args) & set(recorded_dims)):
            if dim in user_dims and user_dims[dim] != recorded_dims[dim]:
                renames[dim] = f"{name}_{dim}"
            user_dims[renames.get(dim, dim)] = recorded_dims[dim]
        known = [set(fields_of[n]) | set(user_dims) | set(base.get("derived") or {}) | DIMS for n in names]
        args = _with_base_contents(_renamed(args, renames), ops, name, known)
        ops.append({"op": name, "models": names, "args": args})

    doc = {"version": 1}
    doc.update({k: base[k] for k in SETTINGS if k in base})
    doc["models"] = models
    if user_dims:
        doc["user_dims"] = user_dims
    doc["ops"] = ops
    text = "".join(f"# {h}\n" for h in header) + yaml.safe_dump(doc, sort_keys=False, width=120)
    Path(out_path).write_text(text)
    return text


def _base_models(entry: dict, loaded) -> list[str]:
    """The names of the base's models an op entry binds: its list, the models its condition
    selects, or all of them."""
    from .predicates import compile_predicate
    listed = entry.get("models")
    if isinstance(listed, list):
        return list(listed)
    if isinstance(listed, str):
        holds = compile_predicate(listed)
        return [m.name for m in loaded.models if holds(m.lookup)]
    return [m.name for m in loaded.models]


CONTENTS = ("values", "distinct")
DIMS = {"batch", "seq_len", "num_tokens"}


def _fields(config: Path, entry: dict) -> dict:
    from .configs import model_fields, read_config_json
    fields, _ = model_fields(read_config_json(config))
    fields.update(entry.get("fields") or {})
    return fields


def _with_base_contents(args: dict, base_ops: list, op: str, known: list[set]) -> dict:
    """``args`` with the contents the base states for arguments of the same name, where every
    name those statements use is known for every model of the binding."""
    stated: dict = {}
    for entry in base_ops:
        if entry.get("op") != op:
            continue
        for arg, spec in (entry.get("args") or {}).items():
            if isinstance(spec, dict):
                for key in CONTENTS:
                    if key in spec:
                        stated.setdefault(arg, {}).setdefault(key, spec[key])
    out = {}
    for arg, spec in args.items():
        if arg in stated and (isinstance(spec, dict) and "shape" in spec or isinstance(spec, list)):
            spec = {"shape": spec} if isinstance(spec, list) else dict(spec)
            for key, value in stated[arg].items():
                used = _dims_used({"x": {"values": value}}) if key == "values" else set()
                if all(used <= k for k in known):
                    spec.setdefault(key, value)
                    if key == "values":
                        spec.pop("unknown_values", None)  # the base states them
        out[arg] = spec
    return out


def _dims_used(args: dict) -> set[str]:
    out: set[str] = set()
    for spec in args.values():
        for text in _texts(spec):
            try:
                out |= B.names(B.parse_expr(text))
            except B.ExprError:
                continue
    return out


def _texts(spec):
    if isinstance(spec, (str, int, float)) and not isinstance(spec, bool):
        yield str(spec)
    elif isinstance(spec, list):
        for x in spec:
            yield from _texts(x)
    elif isinstance(spec, dict):
        for k in ("shape", "strides", "values"):
            if k in spec:
                yield from _texts(spec[k])


def _renamed(args: dict, renames: dict[str, str]):
    if not renames:
        return args

    def one(x):
        if isinstance(x, str):
            return B.to_text(B.substitute(B.parse_expr(x), {k: B.Name(v) for k, v in renames.items()}))
        if isinstance(x, list):
            return [one(v) for v in x]
        if isinstance(x, dict):
            return {k: one(v) if k in ("shape", "strides", "values") else v for k, v in x.items()}
        return x
    return {k: one(v) for k, v in args.items()}


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return f"missing:{path}"


def _rel(path: Path, start: Path) -> str:
    return os.path.relpath(path, start)
