"""kernelvet record --framework NAME: record the custom-op calls of a framework's own models, one
process per model config, and write one manifest of every op they call."""
from __future__ import annotations

import itertools
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..exitcodes import EXIT_CLEAN, EXIT_USAGE


def run_framework(args, sizes: dict, ranges: dict, values: dict) -> int:
    from ..recorder import RecordError, Recorder
    configs = [Path(c) for c in args.config]
    if args.configs:
        folder = Path(args.configs)
        if not folder.is_dir():
            print(f"kernelvet record: --configs {folder}: not a directory", file=sys.stderr)
            return EXIT_USAGE
        configs += sorted(folder.glob("*.json"))
    if not configs:
        print("kernelvet record: give the models to record (--config FILE or --configs DIR)", file=sys.stderr)
        return EXIT_USAGE
    missing = [str(c) for c in configs if not c.is_file()]
    if missing:
        print(f"kernelvet record: no such config: {', '.join(missing)}", file=sys.stderr)
        return EXIT_USAGE
    if args.base and not Path(args.base).is_file():
        print(f"kernelvet record: --base {args.base}: no such manifest", file=sys.stderr)
        return EXIT_USAGE
    names = list(args.model) + [c.stem for c in configs[len(args.model):]]
    quantize = [None] * len(configs)  # per config: the preset of a quantized variant, None for none
    if getattr(args, "quantize", None):
        from ..recorder.frameworks import quantized_presets
        known = quantized_presets(args.framework)
        presets = [None if q == "none" else q for q in args.quantize.split(",")]
        unknown = [q for q in presets if q is not None and q not in known]
        if unknown:
            print(f"kernelvet record: --quantize {','.join(unknown)}: not a preset of {args.framework} "
                  f"(its presets: none, {', '.join(known)})", file=sys.stderr)
            return EXIT_USAGE
        configs, names, quantize = quantized_variants(
            args.framework, configs, names, presets, Path(args.variants or Path(args.output).parent / "models" / "quantized"))
    schemas = registered_schemas(Path(args.root))
    if not schemas:
        print(f"kernelvet record: no registered ops with a schema under {args.root} (TORCH_LIBRARY blocks)",
              file=sys.stderr)
        return EXIT_USAGE
    dims = list(sizes)
    points = [dict(zip(dims, vs)) for vs in itertools.product(*(sizes[d] for d in dims))]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda cq: record_one(args.framework, cq[0], schemas, points, args.timeout, cq[1]),
                                zip(configs, quantize)))
    rec = Recorder(sorted({k.rpartition("::")[0] for k in schemas}), True)
    recorded, failed, notes = [], [], {}
    for name, config, result in zip(names, configs, results):
        for note in result.get("notes", []):
            notes.setdefault(note, []).append(name)
        if len(result["runs"]) < 2:
            failed.append((name, result["error"] or "fewer than two runs"))
            continue
        recording = rec.start(name, config, dtype=result["dtype"])
        for point, calls in result["runs"]:
            rec.add_run(recording, point, calls)
        recorded.append(name)
        if result["error"]:
            failed.append((name, f"after {len(result['runs'])} of {len(points)} runs: {result['error']}"))
    for name, config, preset in zip(names, configs, quantize):
        if preset is not None and name not in recorded:
            config.unlink(missing_ok=True)  # a variant no model of the manifest points at
    if not recorded:
        for name, why in failed:
            print(f"kernelvet record: {name}: {why}", file=sys.stderr)
        print("kernelvet record: no model could be recorded", file=sys.stderr)
        return EXIT_USAGE
    command = "kernelvet record " + " ".join(_shown(a) for a in sys.argv[2:])
    header = [f"Recorded with the {args.framework} framework's own model classes (meta device, stand-in ops):",
              f"  {command}",
              f"{len(recorded)} of {len(configs)} models recorded."]
    header += [f"Not recorded: {name}: {why}" for name, why in failed]
    header += [f"Note ({len(ms)} models): {note}" for note, ms in sorted(notes.items())]
    base = args.base
    try:
        if base:
            from ..manifest.join import join
            # The recording is written beside the output, so that its config paths hold there too.
            keep = args.keep_recording
            alone = Path(keep) if keep else Path(args.output).resolve().parent / f".{Path(args.output).name}.recorded"
            text = rec.manifest(alone, values=values, ranges=ranges, header=header)
            try:
                text = join(Path(base), alone, Path(args.output),
                            header=[f"Generated: {base} (hand-written, wins where it binds an op for a model) "
                                    f"joined with a recording.", *header])
            finally:
                if not keep:
                    alone.unlink(missing_ok=True)
        else:
            text = rec.manifest(args.output, values=values, ranges=ranges, header=header)
    except RecordError as exc:
        print(f"kernelvet record: {exc}", file=sys.stderr)
        return EXIT_USAGE
    n_ops = text.count("\n  - op: ") + text.count("\n- op: ")
    print(f"kernelvet record: {len(recorded)} of {len(configs)} models recorded in {time.perf_counter() - t0:.1f} s; "
          f"{n_ops} op bindings written to {args.output}")
    for name, why in failed:
        print(f"warning: {name} not recorded: {why}", file=sys.stderr)
    for w in rec.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return EXIT_CLEAN


def quantized_variants(framework: str, configs: list, names: list, presets: list, folder: Path) -> tuple:
    """Each config as a checkpoint of each preset (None: the config as it is): the variant's
    config.json written to ``folder/PRESET/``, where the manifest's models point, named
    ``MODEL@PRESET``. (configs, names, each one's preset)."""
    from ..recorder.frameworks import quantized_config
    out_configs, out_names, out_presets = [], [], []
    for config, name in zip(configs, names):
        for preset in presets:
            out_presets.append(preset)
            if preset is None:
                out_configs.append(config)
                out_names.append(name)
                continue
            variant = folder / preset / config.name
            variant.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(quantized_config(framework, json.loads(config.read_text()), preset), indent=2)
            variant.write_text(text + "\n")
            out_configs.append(variant)
            out_names.append(f"{name}@{preset}")
    return out_configs, out_names, out_presets


def registered_schemas(root: Path) -> dict[str, str]:
    """``namespace::name`` -> schema text of every op registered under ``root``."""
    from analyzers.frontend.registrations import discover
    registry = discover(root)
    return {f"{r.namespace}::{r.name}": r.schema for r in registry.ops if r.schema}


def record_one(framework: str, config: Path, schemas: dict, points: list, timeout: float,
               quantize: str | None = None) -> dict:
    """One model recorded in a process of its own (a framework keeps global state per model);
    ``quantize``: the preset of a quantized variant's config (the GPU and method it is recorded with)."""
    project = Path(__file__).resolve().parent.parent.parent
    with tempfile.TemporaryDirectory(prefix="kernelvet-record-") as tmp:
        request = Path(tmp) / "request.json"
        out = Path(tmp) / "result.pickle"
        request.write_text(json.dumps({"schemas": schemas, "config": str(config.resolve()), "points": points,
                                       "out": str(out), "quantize": quantize}))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(project)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        try:
            proc = subprocess.run([sys.executable, "-m", f"bot.recorder.frameworks.{framework}", str(request)],
                                  env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"runs": [], "error": f"stopped after {timeout:.0f} s", "notes": []}
        try:
            with open(out, "rb") as f:
                return pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError):
            tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
            return {"runs": [], "error": f"the recording process exited with {proc.returncode}: {tail[0][:300]}",
                    "notes": []}


def _shown(arg: str) -> str:
    return arg if arg and all(c.isalnum() or c in "-_=./:,@" for c in arg) else json.dumps(arg)
