"""Whether the races between blocks that the `race` check reports in the cooperative grid-sum
fixtures show on this GPU. compute-sanitizer's racecheck does not watch global memory, so the
only dynamic sign is a wrong result: each fixture's op is built from its file (torch's
load_inline), run many times on the same input with the partials filled with NaN before each
run, and its sum compared with a float64 reference. Needs nvcc, PyTorch and a GPU:

    python bench/grid_sum_races_on_gpu.py [--repeat 200]

tests/fixtures/threads/:
  grid_sync_two_phase_sum.cu                 verified: every run should match
  grid_sum_block_barrier_between_phases.cu   race: block 0 reads partials other blocks may not have written
  grid_sum_partials_cleared_after_sync.cu    race: other blocks clear partials block 0 may still read

Prints, per fixture, how many runs gave a wrong sum (NaN or off by more than the tolerance).
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "threads"
NAMES = ("grid_sync_two_phase_sum", "grid_sum_block_barrier_between_phases", "grid_sum_partials_cleared_after_sync")
DECLARATION = "void grid_sum(torch::Tensor& out, torch::Tensor& partials, const torch::Tensor& x);"


def main() -> int:
    import torch
    from torch.utils.cpp_extension import load_inline

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    # A cooperative launch needs every block resident at once: two blocks of 256 threads per SM.
    blocks = min(1024, 2 * torch.cuda.get_device_properties(0).multi_processor_count)
    x = torch.randn(blocks * 256, device="cuda", dtype=torch.float32)
    want = x.double().sum().item()
    tolerance = 1e-3 * x.abs().double().sum().item() / math.sqrt(x.numel())
    print(f"{torch.cuda.get_device_name(0)}: {blocks} blocks of 256 threads, {args.repeat} runs each")
    for name in NAMES:
        module = load_inline(name=name, cpp_sources=[DECLARATION], cuda_sources=[(FIXTURES / f"{name}.cu").read_text()],
                             functions=["grid_sum"], extra_cuda_cflags=["-O2"])
        partials = torch.empty(1024, device="cuda", dtype=torch.float32)
        out = torch.empty(1, device="cuda", dtype=torch.float32)
        wrong = 0
        for _ in range(args.repeat):
            partials.fill_(float("nan"))
            out.fill_(float("nan"))
            module.grid_sum(out, partials, x)
            torch.cuda.synchronize()
            got = out.item()
            if not abs(got - want) <= tolerance:  # NaN compares false
                wrong += 1
        print(f"{name:42} wrong sums: {wrong} of {args.repeat}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
