"""PR mode on a one-kernel change of the example repository, with a warm cache (the base branch's
scan restored, as actions/cache does): the whole `kernelvet action` command in mode pr, against a
local fake of the GitHub API, from process start to the posted review.

    python bench/bench_pr.py [--repeat R]

Budget (issue "the bot"): under 5 s on 2 cores.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from actionrun import pull_request_event, run_action  # noqa: E402
from fake_github import FakeGitHub  # noqa: E402
from gitrepo import commit_all, edit, example_repo, git, kernelvet, pr_files  # noqa: E402

CHANGES = {
    "gelu_and_mul kernel (activation_kernels.cu)": (
        "csrc/activation_kernels.cu", "const vec b = yv[i];\n    vec r;\n#pragma unroll\n    for (int j = 0; j < VEC; ++j) {\n"
        "      r.val[j] = static_cast<scalar_t>(gelu_tanh(static_cast<float>(a.val[j])) * static_cast<float>(b.val[j]));",
        "const vec g = yv[i];\n    vec r;\n#pragma unroll\n    for (int j = 0; j < VEC; ++j) {\n"
        "      r.val[j] = static_cast<scalar_t>(gelu_tanh(static_cast<float>(a.val[j])) * static_cast<float>(g.val[j]));"),
    "static_scaled_int8_quant launcher fix (quant_kernels.cu)": (
        "csrc/quant_kernels.cu", "const int num_elems = input.numel();\n  dim3 grid(minivllm::ceil_div(num_elems, 256));",
        "const int64_t num_elems = input.numel();\n  dim3 grid(minivllm::ceil_div<int64_t>(num_elems, 256));"),
    "fused_add_rms_norm kernel fix (layernorm_kernels.cu)": (
        "csrc/layernorm_kernels.cu", "const int id = blockIdx.x * vec_hidden_size + idx;\n    vec x = input_v[id];",
        "const int64_t id = static_cast<int64_t>(blockIdx.x) * vec_hidden_size + idx;\n    vec x = input_v[id];"),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base_repo = example_repo(tmp / "base")
        cache = tmp / "cache"
        t = time.perf_counter()
        kernelvet("scan", ".", "--cache-dir", str(cache), cwd=base_repo)  # the base branch's nightly scan
        print(f"base scan filling the cache: {time.perf_counter() - t:.1f} s")
        print(f"{'one-kernel change':60} {'median s':>9}  runs")
        for name, (file, old, new) in CHANGES.items():
            times = []
            for k in range(args.repeat):
                repo = tmp / f"r{len(times)}-{abs(hash(name))}"
                shutil.copytree(base_repo, repo)
                shutil.copytree(cache, repo / ".kernelvet-cache")  # actions/cache restores it
                base = git(repo, "rev-parse", "HEAD")
                edit(repo, file, old, new)
                head = commit_all(repo, "change")
                with FakeGitHub("acme/minivllm", "tok") as fake:
                    fake.add_pull(1, head, base, pr_files(repo, base, head))
                    event = pull_request_event("acme/minivllm", 1, head, base)
                    t = time.perf_counter()
                    run = run_action(repo, tmp / f"run-{k}-{abs(hash(name))}", fake.url, event, "pull_request",
                                     {"mode": "pr"}, {"github.token": "tok"})
                    times.append(time.perf_counter() - t)
                    if run.returncode not in (0, 1) or not fake.pulls[1].reviews:
                        raise SystemExit(run.stdout + run.stderr)
                shutil.rmtree(repo)
            print(f"{name:60} {statistics.median(times):9.2f}  {', '.join(f'{x:.2f}' for x in times)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
