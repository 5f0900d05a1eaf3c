"""How kernelvet's cost grows with the number of models an op serves and with the size of its
kernels, on a real repository with a manifest (vLLM with manifests/vllm.yaml).

    python bench/growth.py VLLM_CHECKOUT [--manifest manifests/vllm.yaml] [--ops A,B,...]
                           [--models 1,4,16,0] [--time-budget S]

For each op, the instances of the first k models that call it (k from ``--models``; 0: all of
them) are verified in a fresh process, so that nothing one run learned (the process's remembered
solver answers, the parsed file) serves another: the CPU seconds of that process are the cost of
verifying the op for k models from scratch. The first table gives them per op and k, with the
instances the k models make (models whose constants coincide share an instance) and the cost
of one more instance. The second relates an op's size (KIR statements in the kernels and device
functions it reaches) to its median CPU seconds per instance, at the largest k.
"""
from __future__ import annotations

import argparse
import dataclasses
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_OPS = "rms_norm,fused_add_rms_norm,silu_and_mul,rotary_embedding,reshape_and_cache_flash"


def _statements(node) -> int:
    """KIR statements under a node (a rough instruction count)."""
    from analyzers.kir import nodes as N
    count, todo = 0, [node]
    while todo:
        n = todo.pop()
        if isinstance(n, N.Stmt):
            count += 1
        if dataclasses.is_dataclass(n):
            for f in dataclasses.fields(n):
                v = getattr(n, f.name)
                if isinstance(v, (list, tuple)):
                    todo.extend(x for x in v if dataclasses.is_dataclass(x))
                elif dataclasses.is_dataclass(v) and not isinstance(v, type):
                    todo.append(v)
    return count


def _run(root: str, planned: list, options, send) -> None:
    """In a child process: verify the planned instances of one op; send CPU seconds and sizes."""
    from analyzers.api import Workspace
    t0 = time.process_time()
    spec = planned[0][3]
    ws = Workspace(Path(root), spec.include_dirs, spec.defines, spec.arch)
    op = ws.op(planned[0][0], planned[0][1])
    verdicts, seconds, reasons = [], [], []
    for _, _, inst, _ in planned:
        t = time.process_time()
        result = ws.verify(op, inst, options)
        verdicts.append(result.verdict)
        reasons += [f"{i.reason}: {i.detail}" for i in result.inconclusive[:1]]
        seconds.append(time.process_time() - t)
    size = sum(_statements(f.body) for f in op.program.functions.values()
               if f.kind in ("kernel", "device", "hostdevice") and f.body is not None)
    send.send({"cpu": time.process_time() - t0, "per_instance": seconds, "verdicts": verdicts, "size": size,
               "reasons": reasons})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="a checkout of vLLM (its csrc/)")
    ap.add_argument("--manifest", default=str(ROOT / "manifests" / "vllm.yaml"))
    ap.add_argument("--ops", default=DEFAULT_OPS, help=f"comma-separated op names (default {DEFAULT_OPS})")
    ap.add_argument("--models", default="1,4,16,0", help="numbers of models to verify each op for (0: all)")
    ap.add_argument("--time-budget", type=float, default=60.0)
    args = ap.parse_args()
    from bot.manifest import expand, load
    from bot.scan import options_for
    root = Path(args.path).resolve()
    manifest = load(Path(args.manifest))
    options = options_for(manifest, args.time_budget)
    spec = manifest.spec  # include directories, defines, arch
    wanted = [o.strip() for o in args.ops.split(",") if o.strip()]
    by_op: dict = {}
    for p in expand(manifest, None, root):
        name = p.launcher.rsplit("::", 1)[-1]
        if p.op_name in wanted or name in wanted:
            by_op.setdefault(p.op_name if p.op_name in wanted else name, []).append(p)
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    rows, sizes = [], []
    for op in wanted:
        plans = by_op.get(op, [])
        if not plans:
            print(f"{op}: not in the manifest", file=sys.stderr)
            continue
        order = []  # models in the order they first appear
        for p in plans:
            order += [m for m in p.models if m not in order]
        last = None
        for k in [int(x) for x in args.models.split(",")]:
            k = len(order) if k <= 0 or k > len(order) else k
            if k == last:
                continue
            last, keep = k, set(order[:k])
            chosen = [(p.file, p.launcher, p.instance, spec) for p in plans if keep & set(p.models)]
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_run, args=(str(root), chosen, options, send))
            proc.start()
            got = recv.recv() if recv.poll(3600) else None
            proc.join()
            if got is None:
                print(f"{op} k={k}: no result", file=sys.stderr)
                continue
            rows.append((op, k, len(chosen), got["cpu"], got["per_instance"], got["verdicts"]))
            print(f"  {op:28s} {k:3d} models {len(chosen):4d} instances {got['cpu']:8.1f} CPU s", flush=True)
            for reason in sorted(set(got["reasons"]))[:3]:
                print(f"      inconclusive: {reason[:160]}", flush=True)
            if k == len(order):
                sizes.append((op, got["size"], statistics.median(got["per_instance"]), len(chosen)))
    print("\nCost against the number of models (fresh process per row; CPU seconds)")
    print(f"{'op':28s} {'models':>6s} {'instances':>9s} {'CPU s':>8s} {'s/instance':>10s} {'verdicts'}")
    for op, k, n, cpu, per, verdicts in rows:
        counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
        print(f"{op:28s} {k:6d} {n:9d} {cpu:8.1f} {cpu / max(n, 1):10.2f} "
              + ", ".join(f"{v} {c}" for v, c in counts.items()))
    print("\nCost against kernel size (all models)")
    print(f"{'op':28s} {'statements':>10s} {'instances':>9s} {'median s/instance':>17s}")
    for op, size, median, n in sorted(sizes, key=lambda r: r[1]):
        print(f"{op:28s} {size:10d} {n:9d} {median:17.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
