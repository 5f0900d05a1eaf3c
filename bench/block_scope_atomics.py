"""Whether block-scope atomics lose updates on this GPU when blocks share a counter: the race the
`race` check reports for `atomicAdd_block` on global memory (tests/fixtures/threads/
expert_counts_atomic_add_block.cu). compute-sanitizer's racecheck does not watch global memory, so
the only dynamic sign is a wrong count. Needs nvcc and a GPU:

    python bench/block_scope_atomics.py [--repeat 20]

Prints, per kernel (block-scope and device-scope atomics into 1, 8 and 64 counters, from 4,096
blocks of 256 threads, each adding 16 times), the expected total and the smallest and largest total
seen over the runs.
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

SOURCE = r"""
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

template <bool kBlockScope>
__global__ void count(unsigned long long* counters, int num_counters, int adds) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < adds; ++k) {
    unsigned long long* c = &counters[(i + k) % num_counters];
    if (kBlockScope) atomicAdd_block(c, 1ull); else atomicAdd(c, 1ull);
  }
}

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? atoi(argv[1]) : 20;
  const int blocks = 4096, threads = 256, adds = 16;
  unsigned long long* d;
  cudaMalloc(&d, 64 * sizeof(unsigned long long));
  for (int scope = 0; scope < 2; ++scope) {
    for (int n : {1, 8, 64}) {
      unsigned long long lo = ~0ull, hi = 0, want = 1ull * blocks * threads * adds;
      for (int r = 0; r < repeat; ++r) {
        cudaMemset(d, 0, 64 * sizeof(unsigned long long));
        if (scope) count<true><<<blocks, threads>>>(d, n, adds); else count<false><<<blocks, threads>>>(d, n, adds);
        unsigned long long h[64], total = 0;
        cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        for (int j = 0; j < n; ++j) total += h[j];
        lo = total < lo ? total : lo;
        hi = total > hi ? total : hi;
      }
      printf("%-14s counters=%-3d expected=%llu min=%llu max=%llu lost(max)=%llu\n",
             scope ? "atomicAdd_block" : "atomicAdd", n, want, lo, hi, want - lo);
    }
  }
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) { printf("CUDA error: %s\n", cudaGetErrorString(e)); return 1; }
  return 0;
}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "scopes.cu", Path(tmp) / "scopes"
        src.write_text(SOURCE)
        subprocess.run(["nvcc", "-O2", "-arch=native", "-o", str(exe), str(src)], check=True)
        return subprocess.run([str(exe), str(args.repeat)]).returncode


if __name__ == "__main__":
    raise SystemExit(main())
