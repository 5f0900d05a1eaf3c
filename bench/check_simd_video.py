"""Whether kernelvet's model of the SIMD video intrinsics (``__vcmpne4``, ``__vsubss2``, ``__vsadu4``...,
engine/models/cuda.py ``simd_video``) computes what the GPU computes. Two steps, as the fixture
reproducers take:

    python bench/check_simd_video.py plan [--out DIR] [--words 256]   # here: the model's answers
    python bench/check_simd_video.py run  [--out DIR]                 # on a machine with nvcc and a GPU

``plan`` writes a CUDA program that applies every modelled intrinsic to the same pseudo-random words
(edge words included: 0, all ones, each lane's sign bit) and the model's results for them, evaluated
with z3; ``run`` (plain Python, no z3) compiles and runs the program and prints, per intrinsic, the
number of words where the GPU and the model differ.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _words(count: int) -> list[tuple[int, int]]:
    rng = random.Random(2026)
    edges = [0, 0xFFFFFFFF, 0x80808080, 0x80008000, 0x7F7F7F7F, 0x7FFF7FFF, 0x01010101, 0x00FF00FF]
    pairs = [(a, b) for a in edges for b in edges]
    while len(pairs) < count:
        pairs.append((rng.getrandbits(32), rng.getrandbits(32)))
    return pairs[:count]


def plan(out: Path, count: int) -> int:
    sys.path.insert(0, str(ROOT))
    import z3

    from analyzers.engine.models.cuda import _SIMD_NAMES, simd_result, simd_unary

    pairs = _words(count)
    expected = {name: [simd_result(name, [z3.BitVecVal(a, 32)] + ([] if simd_unary(name) else [z3.BitVecVal(b, 32)]))
                       .as_long() for a, b in pairs] for name in _SIMD_NAMES}
    calls = "\n".join(f"  out[{k} * n + j] = {name}(a[j]{'' if simd_unary(name) else ', b[j]'});"
                      for k, name in enumerate(_SIMD_NAMES))
    source = f"""#include <cstdio>
#include <cuda_runtime.h>
__global__ void apply(unsigned int* out, const unsigned int* a, const unsigned int* b, int n) {{
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
{calls}
}}
int main() {{
  const int n = {len(pairs)}, k = {len(_SIMD_NAMES)};
  unsigned int ha[n], hb[n];
  FILE* f = fopen("words.txt", "r");
  for (int j = 0; j < n; ++j) {{ if (fscanf(f, "%u %u", &ha[j], &hb[j]) != 2) return 2; }}
  fclose(f);
  unsigned int *a, *b, *out;
  cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&out, (size_t)n * k * 4);
  cudaMemcpy(a, ha, n * 4, cudaMemcpyHostToDevice); cudaMemcpy(b, hb, n * 4, cudaMemcpyHostToDevice);
  apply<<<(n + 127) / 128, 128>>>(out, a, b, n);
  static unsigned int h[{len(pairs) * len(_SIMD_NAMES)}];
  if (cudaMemcpy(h, out, (size_t)n * k * 4, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
  for (int i = 0; i < n * k; ++i) printf("%u\\n", h[i]);
  return 0;
}}
"""
    out.mkdir(parents=True, exist_ok=True)
    (out / "simd.cu").write_text(source)
    (out / "words.txt").write_text("".join(f"{a} {b}\n" for a, b in pairs))
    (out / "expected.json").write_text(json.dumps({"names": _SIMD_NAMES, "words": pairs, "expected": expected}))
    print(f"{len(_SIMD_NAMES)} intrinsics x {len(pairs)} word pairs in {out}")
    return 0


def run(out: Path) -> int:
    spec = json.loads((out / "expected.json").read_text())
    subprocess.run(["nvcc", "-O1", "-o", "simd", "simd.cu"], cwd=out, check=True)
    got = [int(x) for x in subprocess.run(["./simd"], cwd=out, check=True, capture_output=True, text=True).stdout.split()]
    n, bad = len(spec["words"]), 0
    for k, name in enumerate(spec["names"]):
        gpu = got[k * n:(k + 1) * n]
        differ = [j for j in range(n) if gpu[j] != spec["expected"][name][j]]
        bad += bool(differ)
        if differ:
            a, b = spec["words"][differ[0]]
            print(f"{name:14} differs on {len(differ)} of {n}: a={a:#010x} b={b:#010x} gpu={gpu[differ[0]]:#010x} "
                  f"model={spec['expected'][name][differ[0]]:#010x}")
    print(f"{len(spec['names']) - bad} of {len(spec['names'])} intrinsics agree with the GPU on all {n} word pairs")
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("step", choices=["plan", "run"])
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "simd-video")
    p.add_argument("--words", type=int, default=256)
    a = p.parse_args()
    return plan(a.out, a.words) if a.step == "plan" else run(a.out)


if __name__ == "__main__":
    sys.exit(main())
