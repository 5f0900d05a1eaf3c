"""kernelvet's vLLM manifests against Model2Kernel's recorded vLLM inputs, op by op.

Model2Kernel publishes, per vLLM op, the argument shapes it recorded from 161 models
(``exp/vllm/input/<op>.json``: one entry per distinct configuration, dims in ``s`` and ``b``). For
each of its ops this prints: whether each kernelvet manifest binds it, how many models it binds it
for, and the configurations both sides know (a configuration: the dtype and, per tensor argument,
its dims that do not grow with the batch or sequence, in argument order).

    python bench/model2kernel_compare.py --model2kernel PATH \\
        --manifest manifests/vllm-recorded.yaml --manifest manifests/vllm.yaml [--root VLLM]

PATH is a checkout of Model2Kernel/Model2Kernel or its bare git directory. Nothing of it is copied.
With ``--root`` (a vLLM checkout), the ``in VLLM`` column says whether that vLLM still registers
the op (Model2Kernel recorded the vLLM of May 2025; ops have been removed and renamed since), and
the totals count the ops it registers apart.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analyzers import binding as B  # noqa: E402
from bot.manifest import load  # noqa: E402
from bot.manifest.v1 import op_models  # noqa: E402

INPUTS = "exp/vllm/input"
POINTS = ({"batch": 1, "seq_len": 1}, {"batch": 3, "seq_len": 7})  # two points tell a constant dim


def model2kernel_ops(path: Path) -> dict[str, list]:
    """op -> entries, from a checkout or a bare git directory."""
    folder = path / INPUTS
    if folder.is_dir():
        return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}
    git = ["git", "--git-dir", str(path)]
    names = subprocess.run(git + ["ls-tree", "--name-only", f"HEAD:{INPUTS}"], capture_output=True, text=True,
                           check=True).stdout.split()
    out = {}
    for n in names:
        shown = subprocess.run(git + ["show", f"HEAD:{INPUTS}/{n}"], capture_output=True, text=True)
        if shown.returncode == 0:
            out[Path(n).stem] = json.loads(shown.stdout)
        else:  # a partial copy may lack its largest files: the op is listed as unread
            out[Path(n).stem] = None
    return out


def m2k_signature(entry: dict) -> tuple:
    dtype = None
    dims = []
    for a in entry.get("args", []):
        if a.get("type") != "torch.Tensor":
            continue
        dtype = dtype or a.get("dtype", "").replace("torch.", "")
        dims.append(tuple(d if isinstance(d, int) else "*" for d in a.get("shape", [])))
    return dtype, tuple(dims)


def manifest_ops(path: Path) -> dict[str, list]:
    """op -> [(model, signature)] of every model a binding of the op names."""
    loaded = load(path)  # the models as a scan sees them: fields, dtype, which ops bind them
    doc = yaml.safe_load(path.read_text())
    chosen = {d: spec["values"][0] for d, spec in (doc.get("user_dims") or {}).items()
              if isinstance(spec, dict) and spec.get("values")}
    ranged = {d: spec.get("min", 1) for d, spec in (doc.get("user_dims") or {}).items()
              if isinstance(spec, dict) and "min" in spec}
    out: dict[str, list] = {}
    for i, op in enumerate(doc.get("ops", [])):
        key = op.get("op") or op.get("kernel")
        for m in op_models(loaded, i):
            sig = _signature(op.get("args") or {}, m.fields, m.dtype, {**ranged, **chosen})
            if sig is not None:
                out.setdefault(key, []).append((m.name, sig))
    return out


def _signature(args: dict, fields: dict, model_dtype: str | None, dims: dict):
    tensors = []
    dtype = None
    for spec in args.values():
        shape = spec if isinstance(spec, list) else spec.get("shape") if isinstance(spec, dict) else None
        if shape is None:
            continue
        if isinstance(spec, dict) and spec.get("dtype") and dtype is None and not tensors:
            dtype = spec["dtype"]
        values = []
        for point in POINTS:
            env = {**fields, **dims, **point, "num_tokens": point["batch"] * point["seq_len"]}
            try:
                row = []
                for d in shape:
                    e = B.substitute(B.parse_expr(d), env)
                    row.append(e.value if isinstance(e, B.Num) else None)
            except (B.ExprError, KeyError, TypeError, ValueError, ZeroDivisionError):
                return None
            values.append(row)
        tensors.append(tuple(a if a == b and a is not None else "*" for a, b in zip(*values)))
    return (dtype or model_dtype or "").replace("torch.", ""), tuple(tensors)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model2kernel", required=True, type=Path)
    ap.add_argument("--manifest", action="append", required=True, type=Path)
    ap.add_argument("--root", type=Path, help="the vLLM checkout the manifests are for: which ops it registers")
    args = ap.parse_args(argv)
    theirs = model2kernel_ops(args.model2kernel)
    ours = {p: manifest_ops(p) for p in args.manifest}
    heads = [p.stem for p in args.manifest]
    registered = None
    if args.root is not None:
        from analyzers.frontend.registrations import discover
        registered = {r.name for r in discover(args.root).ops}
    print(f"{'op':34} {'M2K configs':>11} " + (f"{'in VLLM':>8} " if registered is not None else "")
          + " ".join(f"{h + ' models':>22} {'shared':>6}" for h in heads))
    bound = {h: 0 for h in heads}
    more = {h: 0 for h in heads}
    unbound_present: dict[str, list] = {h: [] for h in heads}
    for op, entries in sorted(theirs.items()):
        sigs = {m2k_signature(e) for e in entries or []}
        row = f"{op:34} {len(sigs) if entries is not None else 'unread':>11} "
        if registered is not None:
            row += f"{'yes' if op in registered else 'gone':>8} "
            for h, p in zip(heads, args.manifest):
                if op in registered and not ours[p].get(op):
                    unbound_present[h].append(op)
        for h, p in zip(heads, args.manifest):
            mine = ours[p].get(op, [])
            models = {m for m, _ in mine}
            shared = sigs & {s for _, s in mine}
            bound[h] += bool(mine)
            more[h] += len({s for _, s in mine}) >= len(sigs) and bool(mine)
            row += f"{len(models) if mine else '-':>22} {len(shared) if mine else '':>6}"
        print(row)
    print(f"\n{len(theirs)} Model2Kernel ops. " + "; ".join(
        f"{h}: {bound[h]} bound, {more[h]} with at least as many configurations" for h in heads))
    if registered is not None:
        gone = sorted(op for op in theirs if op not in registered)
        print(f"{len(gone)} of them are not registered by {args.root}: {', '.join(gone)}")
        for h in heads:
            print(f"{h}: registered there and not bound ({len(unbound_present[h])}): {', '.join(unbound_present[h])}")
    for h, p in zip(heads, args.manifest):
        extra = sorted(k for k in set(ours[p]) - set(theirs) if k)
        print(f"{h}: {len(extra)} ops Model2Kernel does not record: {', '.join(extra)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
