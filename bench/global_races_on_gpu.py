"""Whether the races on global memory that the `race` check reports in the fixtures below show on
this GPU. compute-sanitizer's racecheck does not watch global memory, so the only dynamic sign is a
result that is wrong or changes from run to run: each fixture's op is built from its file (torch's
load_inline) and run many times on the same input. The cooperative kernels' results are compared
with a float64 reference computed as the kernel means it (buffers it reads before writing are
filled with NaN before each run); the others' results are counted: a race shows as several.
Needs nvcc, PyTorch and a GPU:

    python bench/global_races_on_gpu.py [--repeat 200] [--only NAME]

tests/fixtures/threads/:
  grid_sync_two_phase_sum.cu                        verified: every run should match
  grid_sum_block_barrier_between_phases.cu          race: block 0 reads partials other blocks may not have written
  grid_sum_partials_cleared_after_sync.cu           race: other blocks clear partials block 0 may still read
  grid_sync_in_loop_smoothing.cu                    verified (two buffers, a grid barrier per step)
  grid_sync_in_loop_smoothing_in_place.cu           race: a block reads its neighbour's element as the neighbour writes it
  grid_sync_in_loop_smoothing_in_place_two_syncs.cu verified (a grid barrier between reads and writes)
  block_rows_staged_through_shared_same_out.cu      race: every block writes its own row to one output row
  head_runs_rows_past_token.cu                      race: two blocks scale the same query elements in place
  program_counts_matches_into_one_global_total.cu   race: every thread adds its count into one total (+=)
  program_counts_matches_one_thread_folds.cu        verified: its twin, thread 0 folds (the reference)

Prints, per fixture, how many runs gave a wrong result (NaN or off by more than the tolerance), or
how many different results the runs gave. The programs (a `main` of their own) are built with
nvcc and run as they are; a racy one's printed result is compared with its correct twin's.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "threads"
SUMS = ("grid_sync_two_phase_sum", "grid_sum_block_barrier_between_phases", "grid_sum_partials_cleared_after_sync")
SMOOTHING = ("grid_sync_in_loop_smoothing", "grid_sync_in_loop_smoothing_in_place",
             "grid_sync_in_loop_smoothing_in_place_two_syncs")
SUM_DECLARATION = "void grid_sum(torch::Tensor& out, torch::Tensor& partials, const torch::Tensor& x);"
SMOOTH_DECLARATION = "void smooth_rows(torch::Tensor& buf, int64_t steps);"
STAGE_DECLARATION = "void stage_rows(torch::Tensor& out, const torch::Tensor& x);"
SCALE_DECLARATION = "void q_scale(torch::Tensor& q, double q_scale);"
STEPS = 8


# A racy program and its correct twin: the twin's output is the reference.
PROGRAMS = (("program_counts_matches_into_one_global_total", "program_counts_matches_one_thread_folds"),)


def _programs(repeat: int, only: str) -> None:
    import subprocess
    import tempfile
    for racy, twin in PROGRAMS:
        if only not in racy and only not in twin:
            continue
        outputs = {}
        with tempfile.TemporaryDirectory() as tmp:
            for name in (racy, twin):
                exe = Path(tmp) / name
                subprocess.run(["nvcc", "-O2", "-o", str(exe), str(FIXTURES / f"{name}.cu")], check=True)
                outputs[name] = [subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.strip()
                                 for _ in range(repeat)]
        want = set(outputs[twin])
        wrong = sum(out not in want for out in outputs[racy])
        print(f"{twin:48} different results: {len(want)} of {repeat} runs ({', '.join(sorted(want))})")
        print(f"{racy:48} wrong results: {wrong} of {repeat}, different results: {len(set(outputs[racy]))} "
              f"({', '.join(sorted(set(outputs[racy]))[:5])})")


def _build(name: str, declaration: str, function: str):
    from torch.utils.cpp_extension import load_inline
    return load_inline(name=name, cpp_sources=[declaration], cuda_sources=[(FIXTURES / f"{name}.cu").read_text()],
                       functions=[function], extra_cuda_cflags=["-O2"])


def _smoothed(start, steps: int, buffers: int):
    """The float64 result the smoothing kernels mean: every step reads the values of the step
    before (two buffers: each step writes the other one; one buffer: in place, reads first)."""
    rows = [r.clone() for r in start]
    for step in range(steps):
        src = rows[step % 2] if buffers == 2 else rows[0]
        new = 0.25 * src[:-2] + 0.5 * src[1:-1] + 0.25 * src[2:]
        dst = rows[(step + 1) % 2] if buffers == 2 else rows[0]
        dst[1:-1] = new
    return rows


def main() -> int:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--only", default="", help="run the fixtures whose name holds this")
    args = ap.parse_args()
    _programs(args.repeat, args.only)
    # A cooperative launch needs every block resident at once: two blocks of 256 threads per SM.
    blocks = min(1024, 2 * torch.cuda.get_device_properties(0).multi_processor_count)
    print(f"{torch.cuda.get_device_name(0)}: {blocks} blocks of 256 threads, {args.repeat} runs each")

    x = torch.randn(blocks * 256, device="cuda", dtype=torch.float32)
    want = x.double().sum().item()
    tolerance = 1e-3 * x.abs().double().sum().item() / math.sqrt(x.numel())
    for name in (n for n in SUMS if args.only in n):
        module = _build(name, SUM_DECLARATION, "grid_sum")
        partials = torch.empty(1024, device="cuda", dtype=torch.float32)
        out = torch.empty(1, device="cuda", dtype=torch.float32)
        wrong = 0
        for _ in range(args.repeat):
            partials.fill_(float("nan"))
            out.fill_(float("nan"))
            module.grid_sum(out, partials, x)
            torch.cuda.synchronize()
            if not abs(out.item() - want) <= tolerance:  # NaN compares false
                wrong += 1
        print(f"{name:48} wrong results: {wrong} of {args.repeat}")

    n = blocks * 256
    start = torch.rand(2, n, dtype=torch.float64)
    for name in (n for n in SMOOTHING if args.only in n):
        module = _build(name, SMOOTH_DECLARATION, "smooth_rows")
        buffers = 2 if name == "grid_sync_in_loop_smoothing" else 1
        want = torch.stack(_smoothed(list(start[:buffers]), STEPS, buffers))
        wrong = 0
        for _ in range(args.repeat):
            buf = start[:buffers].float().cuda().contiguous()
            module.smooth_rows(buf, STEPS)
            torch.cuda.synchronize()
            if not torch.allclose(buf.double().cpu(), want, rtol=1e-5, atol=1e-6):
                wrong += 1
        print(f"{name:48} wrong results: {wrong} of {args.repeat}")

    # Races whose result is one of several: how many different results the runs give.
    if args.only not in "block_rows_staged_through_shared_same_out head_runs_rows_past_token":
        return 0
    stage = _build("block_rows_staged_through_shared_same_out", STAGE_DECLARATION, "stage_rows")
    x = torch.randn(4 * blocks, 256, device="cuda", dtype=torch.float32)
    seen = set()
    for _ in range(args.repeat):
        out = torch.full((256,), float("nan"), device="cuda", dtype=torch.float32)
        stage.stage_rows(out, x)
        torch.cuda.synchronize()
        seen.add(bytes(out.cpu().untyped_storage()))
    print(f"{'block_rows_staged_through_shared_same_out':48} different results: {len(seen)} of {args.repeat} runs")
    scale = _build("head_runs_rows_past_token", SCALE_DECLARATION, "q_scale")
    q0 = torch.randn(8 * blocks, 32, 128, device="cuda", dtype=torch.bfloat16)  # Mistral: 32 heads of 128
    seen = set()
    for _ in range(args.repeat):
        q = q0.clone()
        scale.q_scale(q, 0.5)
        torch.cuda.synchronize()
        seen.add(bytes(q.cpu().untyped_storage()))
    print(f"{'head_runs_rows_past_token':48} different results: {len(seen)} of {args.repeat} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
