"""kernelvet manifest check | show | add-model | ops: write and keep a manifest right."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ..exitcodes import EXIT_CLEAN, EXIT_USAGE


def register(sub) -> None:
    p = sub.add_parser("manifest", help="validate a manifest, show its instances, add a model, list registered ops",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    msub = p.add_subparsers(dest="manifest_command")

    def common(q, root_help="the repository the manifest describes (default: the manifest's folder)"):
        q.add_argument("manifest", nargs="?", help="the manifest (default: kernelvet.yaml in --root or .)")
        q.add_argument("--root", help=root_help)

    q = msub.add_parser("check", help="validate the manifest and every instance it expands to")
    common(q)
    q.set_defaults(func=check)

    q = msub.add_parser("show", help="the instances (op x model x dtype) after deduplication")
    common(q)
    q.add_argument("--op", action="append", help="only this op (repeatable)")
    q.add_argument("--format", choices=("text", "json"), default="text")
    q.set_defaults(func=show)

    q = msub.add_parser("add-model", help="add a model from its Hugging Face config.json")
    q.add_argument("config", help="the model's config.json")
    q.add_argument("--manifest", help="the manifest to add it to (default: ./kernelvet.yaml)")
    q.add_argument("--root", help="the repository (default: the manifest's folder)")
    q.add_argument("--name", help="the model's name (default: the config's file or folder name)")
    q.add_argument("--dtype", help="verify it with this dtype instead of the config's torch_dtype")
    q.add_argument("--copy-to", help="copy the config into this folder (relative to the manifest) and refer to the copy")
    q.add_argument("--force", action="store_true", help="add it even if some op cannot be expanded for it")
    q.set_defaults(func=add_model)

    q = msub.add_parser("ops", help="registered ops of the repository, their launchers, and which have no binding")
    q.add_argument("root", nargs="?", default=".", help="the repository (default: .)")
    q.add_argument("--manifest", help="the manifest whose bindings to compare (default: ROOT/kernelvet.yaml)")
    q.add_argument("--format", choices=("text", "json"), default="text")
    q.set_defaults(func=ops)

    q = msub.add_parser("from-gpuverify", help="a manifest binding the bare kernels of GPUVerify test files "
                        "(their //--blockDim= --gridDim= headers)")
    q.add_argument("files", nargs="+", help="GPUVerify .cu files, inside --root (relative to the working directory "
                   "or to --root)")
    q.add_argument("--root", default=".", help="the repository the files are in (default: .)")
    q.add_argument("-o", "--output", help="write the manifest here (default: standard output)")
    q.set_defaults(func=from_gpuverify)

    q = msub.add_parser("join", help="a hand-written manifest joined with a recorded one (kernelvet record): the "
                        "hand-written one wins where it binds an op for a model")
    q.add_argument("base", help="the hand-written manifest")
    q.add_argument("recording", help="the recorded manifest (kernelvet record --keep-recording)")
    q.add_argument("-o", "--output", required=True, help="the joined manifest to write")
    q.set_defaults(func=join)
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), EXIT_USAGE)[1])


def join(args) -> int:
    import yaml
    from ..manifest import ManifestError
    from ..manifest.join import join as join_manifests
    recording = Path(args.recording)
    if not recording.is_file():
        print(f"kernelvet: {args.recording}: no such manifest", file=sys.stderr)
        return EXIT_USAGE
    header = [line[2:] for line in _leading_comments(recording.read_text())]
    try:
        text = join_manifests(Path(args.base), recording, Path(args.output),
                              header=[f"Generated: kernelvet manifest join {args.base} {args.recording}", *header])
    except ManifestError as exc:
        for line in exc.errors:
            print(line, file=sys.stderr)
        return EXIT_USAGE
    except (yaml.YAMLError, KeyError, TypeError, AttributeError) as exc:
        print(f"kernelvet: {args.recording}: not a recorded manifest ({type(exc).__name__}: {exc})", file=sys.stderr)
        return EXIT_USAGE
    print(f"kernelvet: {args.output}: {text.count(chr(10) + '- op: ')} op entries")
    return 0


def _leading_comments(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if not line.startswith("# "):
            break
        out.append(line)
    return out


def from_gpuverify(args) -> int:
    import yaml
    from ..manifest.gpuverify import HeaderError, manifest_for
    root = Path(args.root).resolve()
    files = []
    for f in args.files:
        path = Path(f)
        if not path.is_absolute() and not path.exists():
            path = root / f  # relative to the repository rather than to the working directory
        path = path.resolve()
        if not path.is_relative_to(root):
            print(f"kernelvet: {f}: not inside the repository ({args.root})", file=sys.stderr)
            return EXIT_USAGE
        if not path.is_file():
            print(f"kernelvet: {f}: no such file", file=sys.stderr)
            return EXIT_USAGE
        files.append(path)
    try:
        doc, notes = manifest_for(files, root)
    except HeaderError as exc:
        print(f"kernelvet: {exc}", file=sys.stderr)
        return EXIT_USAGE
    text = "# Bare-kernel bindings from GPUVerify headers (kernelvet manifest from-gpuverify).\n" + \
        "".join(f"# {n}\n" for n in notes) + yaml.safe_dump(doc, sort_keys=False)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return EXIT_CLEAN


def _paths(args) -> tuple[Path | None, Path | None]:
    from ..manifest import find_manifest
    root = Path(args.root) if getattr(args, "root", None) else None
    path = Path(args.manifest) if getattr(args, "manifest", None) else find_manifest(root or Path("."))
    if path is None:
        print(f"kernelvet: no manifest: {(root or Path('.')).resolve()} has no kernelvet.yaml (name one)", file=sys.stderr)
        return None, None
    return path, (root or path.parent)


def _load_and_expand(args):
    from ..manifest import ManifestError, expand, load
    path, root = _paths(args)
    if path is None:
        return None
    try:
        lm = load(path)
        planned = expand(lm, root=root)
        from ..manifest.targets import check_targets
        problems = check_targets(lm, planned, root) + _coverage(lm, root)
    except ManifestError as exc:
        for e in exc.errors:
            print(e, file=sys.stderr)
        return None
    if problems:
        for e in problems:
            print(e, file=sys.stderr)
        return None
    return lm, planned


def _coverage(lm, root) -> list[str]:
    """Ops named by their registered name: every tensor the schema requires needs a binding."""
    if getattr(lm.spec, "version", 0) != 1:
        return []
    from ..manifest.v1 import _Resolver
    resolver = _Resolver(lm, root)
    out = []
    for oi, op in enumerate(lm.spec.ops):
        if op.op is None:
            continue
        try:
            reg = resolver.resolve(op.op)
        except LookupError:
            continue
        bound = {reg.arg_names().get(k, k) for k in op.args} | set(op.args)
        for sname, stype, param in zip(reg.schema_args, reg.schema_types, reg.params or reg.schema_args):
            if stype.startswith("Tensor") and "?" not in stype and "[]" not in stype and sname not in bound \
                    and param not in bound:
                out.append(f"{lm.pos('ops', oi, 'args')}: ops[{oi}] ({op.display}): no binding for tensor argument "
                           f"'{sname}' ({stype}); give its shape, e.g. {sname}: [num_tokens, hidden_size]")
    return out


def check(args) -> int:
    got = _load_and_expand(args)
    if got is None:
        return EXIT_USAGE
    lm, planned = got
    combos = sum(len(p.models) for p in planned)
    ops = {p.op_index for p in planned}
    print(f"{lm.path}: valid (version {lm.spec.version}): {len(lm.models)} models, {len(lm.spec.ops)} ops; "
          f"{combos} op x model x dtype combinations verify as {len(planned)} instances")
    idle = [op.display for i, op in enumerate(lm.spec.ops) if i not in ops]
    if idle:
        print(f"note: no model uses {', '.join(idle)}")
    return EXIT_CLEAN


def show(args) -> int:
    from analyzers import binding as B
    got = _load_and_expand(args)
    if got is None:
        return EXIT_USAGE
    lm, planned = got
    if args.op:
        planned = [p for p in planned if p.op_name in args.op or lm.spec.ops[p.op_index].op in args.op
                   or p.op_name.split("(")[0] in args.op]
    rows = [_describe(p, B) for p in planned]
    if args.format == "json":
        print(json.dumps({"manifest": str(lm.path), "instances": rows}, indent=2))
        return EXIT_CLEAN
    for p, r in zip(planned, rows):
        print(f"{r['op']} [{r['dtype']}]  {r['file']}: {r['launcher']}")
        print(f"  models: {', '.join(r['models'])}")
        for name, a in r["args"].items():
            print(f"  {name}: {a}")
        if r["dims"]:
            print(f"  user dims: {'; '.join(r['dims'])}")
        for n, e in r["derived"].items():
            print(f"  {n} = {e}")
        for c in r["constraints"]:
            print(f"  assume {c}")
    combos = sum(len(p.models) for p in planned)
    print(f"{len(planned)} instances for {combos} op x model x dtype combinations")
    return EXIT_CLEAN


def _describe(p, B) -> dict:
    def text(e):
        t = B.to_text(e)
        return t[1:-1] if t.startswith("(") and t.endswith(")") else t

    def describe(a) -> str:
        if isinstance(a, B.TensorArg):
            s = f"[{', '.join(text(e) for e in a.shape)}] {a.dtype}"
            if a.strides is not None:
                s += f", strides [{', '.join(text(e) for e in a.strides)}]"
            if a.values is not None:
                s += f", values in [{text(a.values[0])}, {text(a.values[1])}]"
        elif isinstance(a, B.BufferArg):
            s = "memory of unknown size" if a.size is None else f"buffer of {text(a.size)} bytes"
            if a.values is not None:
                s += f", values in [{text(a.values[0])}, {text(a.values[1])}]"
        elif isinstance(a, B.AbsentArg):
            s = "absent (None)"
        elif isinstance(a, B.StringArg):
            s = f'"{a.text}"'
        elif isinstance(a, B.StructArg):
            inner = ", ".join(describe(m) if a.array else f"{k}: {describe(m)}" for k, m in a.members)
            s = f"[{inner}]" if a.array else f"{{{inner}}}"
        else:
            s = "any value of its type" if a.value is None else text(a.value)
        return s

    args = {name: describe(a) for name, a in p.instance.args}
    dims = [f"{d.name} in {{{', '.join(map(str, d.values))}}}" if d.values else f"{d.name} in [{d.lo}, {d.hi}]"
            for d in p.instance.dims]
    return {"op": p.op_name, "dtype": p.instance.dtype, "file": p.file, "launcher": p.launcher, "models": p.models,
            "args": args, "dims": dims, "derived": {n: text(e) for n, e in p.instance.derived},
            "constraints": [text(c) for c in p.instance.constraints],
            "model_fields": dict(p.instance.model_fields)}


def add_model(args) -> int:
    from ..manifest import ManifestError, expand, load
    from ..manifest.configs import ConfigError, read_config_json
    from ..manifest.yamlpos import YamlDoc
    path = Path(args.manifest) if args.manifest else Path("kernelvet.yaml")
    config = Path(args.config)
    try:
        data = read_config_json(config)
        lm = load(path)
    except ConfigError as exc:
        print(f"kernelvet: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ManifestError as exc:
        for e in exc.errors:
            print(e, file=sys.stderr)
        return EXIT_USAGE
    name = args.name or _model_name(config, data)
    if any(m.name == name for m in lm.models):
        print(f"kernelvet: {path} already has a model named '{name}' (give another with --name)", file=sys.stderr)
        return EXIT_USAGE
    target = config
    if args.copy_to:
        folder = path.parent / args.copy_to
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / (f"{name}.json" if config.name == "config.json" else config.name)
        if target.resolve() != config.resolve():
            shutil.copyfile(config, target)
    rel = _relative(target, path.parent)
    entry = {"config": rel}
    if args.name or Path(rel).stem != name:
        entry["name"] = name
    if args.dtype:
        entry["dtype"] = args.dtype
    new_text = _insert_model(path.read_text(), YamlDoc(path, path.read_text()), entry)
    if new_text is None:
        print(f"kernelvet: {path}: 'models' is not a list this command can extend; add the model by hand:\n"
              f"  - {_flow(entry)}", file=sys.stderr)
        return EXIT_USAGE
    trial = path.with_name(f".{path.name}.add-model")
    trial.write_text(new_text)
    try:
        tlm = load(trial)
        planned = expand(tlm, root=Path(args.root) if args.root else path.parent)
    except ManifestError as exc:
        mine = [e.replace(str(trial), str(path)) for e in exc.errors]
        if not args.force:
            print(f"kernelvet: adding '{name}' would break the manifest ({len(mine)} problems); nothing was written:",
                  file=sys.stderr)
            for e in mine:
                print(e, file=sys.stderr)
            print("give the missing fields with 'fields:', restrict the ops' 'models', or use --force", file=sys.stderr)
            trial.unlink()
            return EXIT_USAGE
        planned = []
    trial.unlink()
    path.write_text(new_text)
    ops = sorted({p.op_name for p in planned if name in p.models})
    print(f"{path}: added model '{name}' ({rel}); {len(ops)} ops will be verified for it"
          + (f": {', '.join(ops)}" if ops else ""))
    return EXIT_CLEAN


def _model_name(config: Path, data: dict) -> str:
    if config.name != "config.json":
        return config.stem
    path_name = str(data.get("_name_or_path") or "").rstrip("/").rsplit("/", 1)[-1]
    return path_name or config.resolve().parent.name


def _relative(p: Path, base: Path) -> str:
    import os
    return os.path.relpath(p.resolve(), base.resolve())


def _flow(entry: dict) -> str:
    return "{" + ", ".join(f"{k}: {json.dumps(v) if any(c in str(v) for c in ':{}[],#') else v}"
                           for k, v in entry.items()) + "}"


def _insert_model(text: str, doc, entry: dict) -> str | None:
    """The manifest with one more item at the end of its block-style 'models' list (comments and
    layout kept)."""
    import yaml
    root = doc.root
    if not isinstance(root, yaml.MappingNode):
        return None
    for k, v in root.value:
        if k.value == "models" and isinstance(v, yaml.SequenceNode) and not v.flow_style and v.value:
            lines = text.splitlines(keepends=True)
            first = v.value[0]
            indent = " " * (first.start_mark.column - 2)
            end_line = v.value[-1].end_mark.line  # the line after the last item's end
            if v.value[-1].end_mark.column == 0:
                at = end_line
            else:
                at = end_line + 1
            # The item's end mark runs up to the next key: step back over the blank lines and the
            # comment block that documents that key, so the new item follows the last one.
            while at > 0 and (lines[at - 1].strip() == "" or lines[at - 1].lstrip().startswith("#")):
                at -= 1
            lines.insert(at, f"{indent}- {_flow(entry)}\n")
            return "".join(lines)
    return None


def ops(args) -> int:
    from analyzers.frontend.registrations import discover
    from ..manifest import ManifestError, find_manifest, load
    root = Path(args.root)
    if not root.is_dir():
        print(f"kernelvet: {root}: not a directory", file=sys.stderr)
        return EXIT_USAGE
    mpath = Path(args.manifest) if args.manifest else find_manifest(root)
    lm = None
    if mpath is not None:
        try:
            lm = load(mpath)
        except ManifestError as exc:
            for e in exc.errors:
                print(e, file=sys.stderr)
            return EXIT_USAGE
    spec = lm.spec if lm else None
    reg = discover(root, spec.include_dirs if spec else (), dict(spec.defines) if spec else {},
                   spec.arch if spec else "sm_80")
    bound_names, bound_places = set(), set()
    for op in (spec.ops if spec else []):
        if getattr(op, "op", None):
            bound_names.add(op.op.rpartition("::")[2])
        if op.file:
            bound_places.add((op.file, op.launcher or op.name))
    rows = []
    for r in reg.ops:
        plain = (r.function or "").rsplit("::", 1)[-1]
        bound = r.name in bound_names or (r.file, plain) in bound_places or (r.file, r.function) in bound_places
        rows.append({"op": r.name, "namespace": r.namespace, "function": r.function, "file": r.file,
                     "registered_at": f"{r.registered_at[0]}:{r.registered_at[1]}", "schema": r.schema,
                     "bound": bound, "note": r.note})
    if args.format == "json":
        print(json.dumps({"root": str(root), "manifest": str(mpath) if mpath else None, "ops": rows,
                          "problems": reg.problems}, indent=2))
        return EXIT_CLEAN
    width = max((len(f"{r['namespace']}::{r['op']}") for r in rows), default=10)
    for r in rows:
        where = f"{r['file']}: {r['function']}" if r["file"] else f"({r['note']})"
        print(f"{'bound  ' if r['bound'] else 'unbound'}  {r['namespace'] + '::' + r['op']:<{width}}  {where}")
    n_bound = sum(r["bound"] for r in rows)
    print(f"{len(rows)} registered ops: {n_bound} bound by {mpath if mpath else 'no manifest'}, "
          f"{len(rows) - n_bound} without a binding")
    for pr in reg.problems:
        print(f"note: {pr}", file=sys.stderr)
    return EXIT_CLEAN
