"""Runs each finding of a kernelvet JSON report of minivllm on a GPU, at its witness sizes.

    python gpu/confirm_witnesses.py REPORT.json [--small | --large]

Builds the ops with torch's extension loader (nvcc, -lineinfo). --small runs the findings whose
witness fits in a few megabytes (run the script under compute-sanitizer to see the invalid access);
--large runs those that need more than 2^31 elements, and reports the CUDA error or the wrong
result they cause. Not a CI test: it needs a GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import torch
from torch.utils.cpp_extension import load

HERE = Path(__file__).resolve().parent.parent
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def build():
    srcs = [HERE / "csrc" / f for f in ("layernorm_kernels.cu", "activation_kernels.cu", "quant_kernels.cu",
                                         "pos_encoding_kernels.cu", "cache_kernels.cu", "torch_bindings.cpp")]
    return load("minivllm_ops", [str(s) for s in srcs], extra_cuda_cflags=["-O2", "-lineinfo"],
                extra_include_paths=[str(HERE / "csrc")], verbose=False)


def run(ops, f) -> str:
    w = f["witness"]
    dtype = DTYPES[w["dtype"]]
    n = w["num_tokens"]
    dev = "cuda"
    line = f["location"]["line"]
    src = f["location"]["file"]
    if src.endswith("quant_kernels.cu") and line == 37:  # missing token guard
        h = w["model.hidden_size"]
        x = torch.randn(n, h, dtype=dtype, device=dev)
        out = torch.empty(n, h, dtype=torch.int8, device=dev)
        scales = torch.empty(n, 1, dtype=torch.float32, device=dev)
        ops.dynamic_per_token_int8_quant(out, scales, x)
    elif src.endswith("activation_kernels.cu"):  # vector tail past the last row
        d = w["model.intermediate_size"]
        x = torch.randn(n, 2 * d, dtype=dtype, device=dev)
        out = torch.empty(n, d, dtype=dtype, device=dev)
        ops.gelu_and_mul(out, x)
    elif src.endswith("quant_kernels.cu") and line == 55:  # int num_elems = numel()
        h = w["model.hidden_size"]
        x = torch.ones(n, h, dtype=dtype, device=dev)
        out = torch.zeros(n, h, dtype=torch.int8, device=dev)
        scale = torch.ones(1, dtype=torch.float32, device=dev)
        ops.static_scaled_int8_quant(out, x, scale)
        torch.cuda.synchronize()
        written = int((out != 0).sum().item())  # every input is 1.0: every output should be 1
        return f"{written} of {out.numel()} outputs written (the launch's grid came from the wrapped count)"
    elif src.endswith("layernorm_kernels.cu"):  # 32-bit row offset
        h = w["model.hidden_size"]
        x = torch.ones(n, h, dtype=dtype, device=dev)
        r = torch.ones(n, h, dtype=dtype, device=dev)
        weight = torch.ones(h, dtype=dtype, device=dev)
        ops.fused_add_rms_norm(x, r, weight, 1e-6)
    else:
        return "no runner for this finding"
    torch.cuda.synchronize()
    return "ran without a CUDA error (run under compute-sanitizer to see invalid accesses)"


def control(ops) -> int:
    """Correct ops on Mistral-7B shapes (hidden 4096, intermediate 14336): no invalid access."""
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(37, 4096, dtype=dt, device=dev)
    ops.rms_norm(torch.empty_like(x), x, torch.ones(4096, dtype=dt, device=dev), 1e-6)
    g = torch.randn(37, 2 * 14336, dtype=dt, device=dev)
    ops.silu_and_mul(torch.empty(37, 14336, dtype=dt, device=dev), g)
    ops.gelu_and_mul(torch.empty(37, 14336, dtype=dt, device=dev), g)
    j = torch.randn(3, 2 * 13653, dtype=torch.float32, device=dev)  # JAIS: the scalar path of silu
    ops.silu_and_mul(torch.empty(3, 13653, dtype=torch.float32, device=dev), j)
    torch.cuda.synchronize()
    print("control: rms_norm, silu_and_mul (mistral, jais), gelu_and_mul (mistral) ran", flush=True)
    return 0


def needs_bytes(f) -> int:
    w = f["witness"]
    width = w.get("model.hidden_size") or w.get("model.intermediate_size") or 1
    return w["num_tokens"] * width * 4


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--only", help="FILE:LINE of one finding (a fault poisons the CUDA context)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--control", action="store_true", help="run correct ops at realistic sizes instead")
    ap.add_argument("--one-token-fewer", action="store_true", help="the witness minus one token: must run clean")
    args = ap.parse_args()
    findings = json.loads(Path(args.report).read_text())["findings"]
    ops = build()
    if args.build_only:
        return 0
    if args.control:
        return control(ops)
    for f in findings:
        if args.only and not f"{f['location']['file']}:{f['location']['line']}".endswith(args.only):
            continue
        small = needs_bytes(f) < (1 << 28)
        if (args.small and not small) or (args.large and small):
            continue
        if args.one_token_fewer:
            f["witness"]["num_tokens"] -= 1
        where = f"{f['location']['file']}:{f['location']['line']} {f['check']}"
        print(f"== {where}: witness {f['witness']}", flush=True)
        try:
            print(f"   -> {run(ops, f)}", flush=True)
        except RuntimeError as exc:  # a CUDA fault surfaces here
            first = next((ln for ln in str(exc).splitlines() if "error" in ln.lower()), str(exc).splitlines()[0])
            print(f"   -> CUDA error: {first}", flush=True)
            return 0 if args.large else 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")
    sys.exit(main())
