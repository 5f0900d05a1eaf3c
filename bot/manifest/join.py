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
    from . import ManifestError, load
    from .v1 import op_models
    loaded = load(Path(base_path))  # validated, with every model's fields
    recorded = load(Path(recorded_path))
    for path, lm in ((base_path, loaded), (recorded_path, recorded)):
        if lm.doc.data.get("version") != 1:
            raise ManifestError([f"{path}: a version 1 manifest is needed to join"])
    base = yaml.safe_load(Path(base_path).read_text())
    rec = yaml.safe_load(Path(recorded_path).read_text())
    out_dir = Path(out_path).resolve().parent
    # The base's model entries as written (a config may be a pattern), their paths made relative
    # to the output; the loaded models say which config each model read and what it is named.
    models = [dict(m, config=os.path.relpath((Path(base_path).resolve().parent / m["config"]).resolve(), out_dir))
              if m.get("config") else dict(m) for m in base.get("models") or []]
    by_content = {_digest(Path(m.source)): m.name for m in loaded.models if m.source}
    base_names = {m.name for m in loaded.models}
    fields_of = {m.name: m.fields for m in loaded.models}
    rename: dict[str, str] = {}
    for m in recorded.models:
        same_as = by_content.get(_digest(Path(m.source))) if m.source else None
        if same_as is not None:
            rename[m.name] = same_as
            continue
        name = m.name if m.name not in base_names else f"{m.name}-recorded"
        rename[m.name] = name
        fields_of[name] = m.fields
        entry = dict(rec["models"][m.index], name=name)
        if m.source:
            entry["config"] = os.path.relpath(Path(m.source).resolve(), out_dir)
        models.append(entry)

    user_dims = dict(base.get("user_dims") or {})
    recorded_dims = rec.get("user_dims") or {}
    # The base's bindings stay with the base's models: a binding for every model, or for those a
    # condition selects, was written against those configs' fields.
    ops = [dict(op, models=[m.name for m in op_models(loaded, i)]) for i, op in enumerate(base.get("ops") or [])]
    for i, op in enumerate(rec.get("ops") or []):
        name = op["op"]
        covered = {m for entry in ops if entry.get("op") == name for m in entry["models"]}
        names = [rename[m.name] for m in op_models(recorded, i)]
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


CONTENTS = ("values", "distinct")
DIMS = {"batch", "seq_len", "num_tokens"}


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
