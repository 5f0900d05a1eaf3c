"""kernelvet record -- CMD: run a PyTorch program at several input sizes and write manifest bindings
of the custom ops it calls."""
from __future__ import annotations

import argparse
import itertools
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..exitcodes import EXIT_CLEAN, EXIT_USAGE

# The adapters under bot/recorder/frameworks/, named here: importing the recorder needs torch, which
# the other commands never load.
FRAMEWORKS = ("vllm",)

EPILOG = """The program reads the sizes of each run with bot.recorder.sizes(batch=..., seq_len=...) and,
with --config, the model's config path with bot.recorder.config_path(). Example:

  kernelvet record --size batch=1,2,3 --size seq_len=5,8 --config models/mistral.json \\
      --values positions=0:max_position_embeddings-1 -o recorded.yaml -- python run_model.py

With --framework, no program is given: the framework's own model classes run each --config (or
every config.json of --configs DIR) on the meta device, with the ops registered in --root defined
from their schemas (run it in the framework's recording environment: docs/recording.md):

  kernelvet record --framework vllm --root ../vllm --configs manifests/models -o manifests/vllm-recorded.yaml
"""


def register(sub) -> None:
    p = sub.add_parser("record", help="record custom-op calls of a PyTorch program and write manifest bindings",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    p.add_argument("--size", action="append", default=[], metavar="DIM=V1,V2,...",
                   help="values of a user dim, one run per point of the grid (default: batch=1,2,3 seq_len=5,8,13: three values tell a line from a curve)")
    p.add_argument("--range", action="append", default=[], metavar="DIM=MIN:MAX",
                   help="the range users can reach for a dim other than batch and seq_len")
    p.add_argument("--config", action="append", default=[], help="a model's config.json (repeatable: one model each)")
    p.add_argument("--model", action="append", default=[], help="the model's name (one per --config)")
    p.add_argument("--namespace", action="append", default=[], help="record only ops of this namespace (repeatable)")
    p.add_argument("--values", action="append", default=[], metavar="ARG=LO:HI[:distinct]",
                   help="the range of an index tensor's elements (ARG or OP.ARG; expressions allowed); "
                        "':distinct': no two elements >= 0 are equal (a slot mapping)")
    p.add_argument("--no-execute", action="store_true", help="record ops that return nothing without running them")
    p.add_argument("--framework", choices=FRAMEWORKS, help="run the models with this framework's own classes (no program)")
    p.add_argument("--root", default=".", help="with --framework: the repository whose registered ops are recorded")
    p.add_argument("--configs", help="with --framework: a directory of config.json files, one model each")
    p.add_argument("--base", help="with --framework: a hand-written manifest the recording joins (it wins where it "
                                  "binds an op for a model): the output is both in one manifest")
    p.add_argument("--keep-recording", metavar="PATH", help="with --base: also write the recording alone here, so "
                   "that `kernelvet manifest join` can join it again after the hand-written manifest changes")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="with --framework: models recorded at once")
    p.add_argument("--timeout", type=float, default=900.0, help="with --framework: seconds one model may take")
    p.add_argument("--quantize", metavar="PRESET,...", help="with --framework: record each model as quantized "
                   "checkpoints of these presets too (vllm: gptq-marlin, gptq-machete; 'none': "
                   "the config as it is), named MODEL@PRESET")
    p.add_argument("--variants", metavar="DIR", help="with --quantize: where the quantized variants' config.json "
                   "files are written (default: models/quantized/ beside the output)")
    p.add_argument("--output", "-o", required=True, help="the manifest to write")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- the program to run")
    p.set_defaults(func=run)


def _value_range(text: str) -> list:
    """LO:HI or LO:HI:distinct (recorder.DISTINCT) as [LO, HI] or [LO, HI, DISTINCT]."""
    from ..recorder import DISTINCT
    lo, _, rest = text.partition(":")
    hi, _, flag = rest.partition(":")
    if not lo or not hi or flag not in ("", DISTINCT):
        raise ValueError(f"--values: '{text}' is not LO:HI or LO:HI:{DISTINCT}")
    return [lo, hi] + ([DISTINCT] if flag else [])


def _pairs(items: list[str], sep: str, what: str) -> dict:
    out = {}
    for item in items:
        key, eq, rest = item.partition("=")
        if not eq or sep not in rest and sep == ":":
            raise ValueError(f"{what} '{item}': expected NAME={'LO:HI' if sep == ':' else 'V1,V2,...'}")
        out[key.strip()] = rest
    return out


def run(args) -> int:
    from ..recorder import ENV_CONFIG, ENV_POINT, RecordError, Recorder
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.framework and command:
        print("kernelvet record: --framework runs the framework's models; give no program", file=sys.stderr)
        return EXIT_USAGE
    if not command and not args.framework:
        print("kernelvet record: give the program after --, e.g. -- python run_model.py", file=sys.stderr)
        return EXIT_USAGE
    try:
        sizes = {k: [int(x) for x in v.split(",")] for k, v in _pairs(args.size, ",", "--size").items()}
        ranges = {k: tuple(int(x) for x in v.split(":", 1)) for k, v in _pairs(args.range, ":", "--range").items()}
        values = {k: _value_range(v) for k, v in _pairs(args.values, ":", "--values").items()}
    except ValueError as exc:
        print(f"kernelvet record: {exc}", file=sys.stderr)
        return EXIT_USAGE
    sizes = sizes or {"batch": [1, 2, 3], "seq_len": [5, 8, 13]}
    if args.model and len(args.model) != len(args.config):
        print("kernelvet record: give one --model per --config", file=sys.stderr)
        return EXIT_USAGE
    if args.framework:
        from .record_framework import run_framework
        return run_framework(args, sizes, ranges, values)
    configs = args.config or [None]
    names = args.model or [Path(c).stem if c else "model" for c in configs]
    boot = Path(__file__).resolve().parent.parent / "recorder" / "boot"
    project = Path(__file__).resolve().parent.parent.parent
    rec = Recorder(args.namespace or None, not args.no_execute)
    t0 = time.perf_counter()
    runs = 0
    for config, name in zip(configs, names):
        recording = rec.start(name, config)
        dims = list(sizes)
        for point_values in itertools.product(*(sizes[d] for d in dims)):
            point = dict(zip(dims, point_values))
            with tempfile.NamedTemporaryFile(suffix=".calls", delete=False) as tmp:
                out = tmp.name
            env = dict(os.environ, KERNELVET_RECORD_OUT=out, KERNELVET_RECORD_NAMESPACES=",".join(args.namespace),
                       KERNELVET_RECORD_EXECUTE="0" if args.no_execute else "1", **{ENV_POINT: json.dumps(point)})
            if config:
                env[ENV_CONFIG] = str(Path(config).resolve())
            env["PYTHONPATH"] = os.pathsep.join([str(boot), str(project)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
            proc = subprocess.run(command, env=env)
            try:
                if proc.returncode != 0:
                    print(f"kernelvet record: the program exited with {proc.returncode} at {point} "
                          f"(model '{name}')", file=sys.stderr)
                    return EXIT_USAGE
                with open(out, "rb") as f:
                    calls = pickle.load(f)
            except (OSError, EOFError, pickle.UnpicklingError):
                print(f"kernelvet record: no calls came back from the run at {point}: is the program a Python "
                      f"process that imports torch?", file=sys.stderr)
                return EXIT_USAGE
            finally:
                Path(out).unlink(missing_ok=True)
            rec.add_run(recording, point, calls)
            runs += 1
    try:
        text = rec.manifest(args.output, values=values, ranges=ranges)
    except RecordError as exc:
        print(f"kernelvet record: {exc}", file=sys.stderr)
        return EXIT_USAGE
    n_ops = text.count("\n  - op: ")
    print(f"kernelvet record: {runs} runs in {time.perf_counter() - t0:.1f} s; {n_ops} op bindings written to "
          f"{args.output}")
    for w in rec.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return EXIT_CLEAN
