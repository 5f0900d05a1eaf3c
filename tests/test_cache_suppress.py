"""The result cache (reuse, relocation after an edit that moves lines, damaged entries, kernelvet's
own version in the key), suppressions, baselines, shards and merge."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path


import bot.cache
from bot.cache import ResultCache
from bot.manifest import load
from bot.scan import scan, shard_of
from bot.manifest import expand
from bot.suppress import apply
from gitrepo import EXAMPLE, kernelvet

BUGGY = """\
#include <torch/all.h>
__global__ void k(float* x, int h, int n) {
  // one row per block
  for (int i = threadIdx.x; i < h; i += blockDim.x) {
    x[blockIdx.x * h + i] = 0.f;
  }
}
void op(torch::Tensor& x) { k<<<x.size(0), 256>>>(x.data_ptr<float>(), x.size(1), x.size(0)); }
"""


def tiny_repo(path: Path, kernel: str = BUGGY) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "k.cu").write_text(kernel)
    (path / "kernelvet.yaml").write_text(textwrap.dedent("""
        version: 0
        models: [{name: m, fields: {hidden_size: 4096}, dtype: float32},
                 {name: m2, fields: {hidden_size: 8192}, dtype: float32}]
        ops:
          - name: op
            file: k.cu
            args: {x: {shape: [num_tokens, hidden_size]}}
        """))
    return path


def run(repo: Path, cache: ResultCache | None, baseline=None):
    report = scan(repo, load(repo / "kernelvet.yaml"), jobs=1, cache=cache)
    apply(report, baseline)
    return report


def places(report):
    return [(m.check, m.location.file, m.location.line, m.location.col) for m in report.findings]


def test_second_run_is_answered_by_the_cache(tmp_path):
    repo = tiny_repo(tmp_path / "r")
    cache = ResultCache(tmp_path / "c")
    cold = run(repo, cache)
    assert cold.findings and cold.cache_hits == 0
    warm = run(repo, ResultCache(tmp_path / "c"))
    assert warm.cache_hits == len(warm.instances) == len(cold.instances)
    assert places(warm) == places(cold)
    assert [m.finding.witness for m in warm.findings] == [m.finding.witness for m in cold.findings]
    assert (tmp_path / "c" / ".gitignore").read_text().endswith("*\n")


def test_lines_moved_by_a_comment_are_relocated(tmp_path):
    repo = tiny_repo(tmp_path / "r")
    cold = run(repo, ResultCache(tmp_path / "c"))
    (repo / "k.cu").write_text("// a licence header\n// of two lines\n" + BUGGY)
    warm = run(repo, ResultCache(tmp_path / "c"))
    assert warm.cache_hits == len(warm.instances)  # the IR did not change
    assert [(c, f, line + 2, col) for c, f, line, col in places(cold)] == places(warm)
    fresh = run(repo, None)  # what verifying again says
    assert places(fresh) == places(warm)
    loops = [k for m in warm.findings for k in m.finding.witness if "(loop at" in k]
    assert loops and all("k.cu:6)" in k for k in loops)  # the loop moved from line 4 to 6


def test_a_changed_referenced_line_is_a_miss(tmp_path):
    repo = tiny_repo(tmp_path / "r")
    run(repo, ResultCache(tmp_path / "c"))
    # The IR is the same, but the finding's line changed its text: the entry cannot be relocated.
    (repo / "k.cu").write_text(BUGGY.replace("x[blockIdx.x * h + i] = 0.f;", "x[blockIdx.x * h + i] = 0.f;  // row"))
    again = run(repo, ResultCache(tmp_path / "c"))
    assert again.cache_hits == 0 and again.findings


def test_damaged_entries_and_another_kernelvet_are_misses(tmp_path, monkeypatch):
    repo = tiny_repo(tmp_path / "r")
    cold = run(repo, ResultCache(tmp_path / "c"))
    entries = sorted((tmp_path / "c" / "v1").glob("*/*.json"))
    assert len(entries) == len(cold.instances)
    entries[0].write_text(entries[0].read_text()[:40])  # a write cut short
    again = run(repo, ResultCache(tmp_path / "c"))
    assert again.cache_hits == len(cold.instances) - 1 and places(again) == places(cold)
    monkeypatch.setattr(bot.cache, "_DIGEST", ["another build of kernelvet"])
    assert run(repo, ResultCache(tmp_path / "c")).cache_hits == 0


def test_warm_scan_of_the_example_is_a_fraction_of_the_cold_one(tmp_path, shared_cache):
    """Not a timing test (bench/bench_cache.py measures): nothing is verified again."""
    repo = tmp_path / "ex"
    import shutil
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".kernelvet-cache"))
    first = kernelvet("scan", str(repo), "--cache-dir", str(shared_cache), "--format", "json", cwd=repo)
    second = kernelvet("scan", str(repo), "--cache-dir", str(shared_cache), "--format", "json", cwd=repo)
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert b["summary"]["cached"] == b["summary"]["instances"] == 46
    assert [f["location"] for f in a["findings"]] == [f["location"] for f in b["findings"]]


# ---------------------------------------------------------------- suppressions and baselines


def test_inline_suppression_needs_a_reason(tmp_path):
    line = "    x[blockIdx.x * h + i] = 0.f;"
    repo = tiny_repo(tmp_path / "a", BUGGY.replace(line, line + "  // kernelvet: ignore[overflow] rows < 65536"))
    report = run(repo, None)
    assert report.findings and report.active == [] and report.exit_code == 0
    assert report.findings[0].suppressed == "rows < 65536"
    repo = tiny_repo(tmp_path / "b", BUGGY.replace(line, "    // kernelvet: ignore[overflow]\n" + line))
    report = run(repo, None)
    assert report.active and report.exit_code == 1
    assert report.problems == ["k.cu:5: kernelvet: ignore[overflow] has no reason: the finding is reported"]
    repo = tiny_repo(tmp_path / "c", BUGGY.replace(line, line + "  // kernelvet: ignore[oob] wrong check"))
    assert run(repo, None).active


def test_suppressed_findings_in_text_and_sarif(tmp_path):
    line = "    x[blockIdx.x * h + i] = 0.f;"
    repo = tiny_repo(tmp_path / "a", BUGGY.replace(line, "    // kernelvet: ignore[*] capped upstream\n" + line))
    r = kernelvet("scan", str(repo), "--no-cache", "--sarif", str(tmp_path / "s.sarif"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "k.cu:6:" in r.stdout and "suppressed at k.cu:5: capped upstream" in r.stdout
    result = json.loads((tmp_path / "s.sarif").read_text())["runs"][0]["results"][0]
    assert result["suppressions"] == [{"kind": "inSource", "status": "accepted", "justification": "capped upstream"}]


def test_baseline_adopts_a_repository_and_catches_new_findings(tmp_path):
    repo = tiny_repo(tmp_path / "r")
    base = tmp_path / "r" / ".kernelvet-baseline.json"
    r = kernelvet("scan", str(repo), "--no-cache", "--write-baseline", str(base), cwd=tmp_path)
    assert r.returncode == 0 and json.loads(base.read_text())["findings"]
    n = len(json.loads(base.read_text())["findings"])
    assert f"wrote {n} finding" in r.stderr and "report them as baselined" in r.stderr and "exit 0 here" in r.stderr
    r = kernelvet("scan", str(repo), "--no-cache", "--format", "json", cwd=tmp_path)  # found at the root
    data = json.loads(r.stdout)
    assert r.returncode == 0 and data["summary"]["findings"] == 0 and data["summary"]["baselined"] >= 1
    # Lines move and a new bug appears: only the new one fails.
    (repo / "k.cu").write_text("// moved\n" + BUGGY.replace(
        "void op(", "__global__ void k2(float* y, int h) { y[blockIdx.x * h + threadIdx.x] = 1.f; }\nvoid op(").replace(
        "x.size(1), x.size(0)); }", "x.size(1), x.size(0)); k2<<<x.size(0), 256>>>(x.data_ptr<float>(), x.size(1)); }"))
    r = kernelvet("scan", str(repo), "--no-cache", "--format", "json", cwd=tmp_path)
    data = json.loads(r.stdout)
    assert r.returncode == 1
    new = [f for f in data["findings"] if f["status"] == "new"]
    assert new and all("y[" in (f["access"] or f["location"])["text"] or "k2" in " ".join(f["kernels"]) for f in new)
    assert any(f["status"] == "baselined" for f in data["findings"])


def test_a_malformed_baseline_is_a_usage_error(tmp_path):
    repo = tiny_repo(tmp_path / "r")
    (repo / "b.json").write_text('{"schema": "kernelvet.baseline/1", "findings": [}')
    r = kernelvet("scan", str(repo), "--no-cache", "--baseline", str(repo / "b.json"), cwd=tmp_path)
    assert r.returncode == 2 and "b.json:1:" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------- shards and merge


def test_shards_partition_the_instances_by_file():
    manifest = load(EXAMPLE / "kernelvet.yaml")
    planned = expand(manifest)
    per_file: dict = {}
    for p in planned:
        per_file[p.file] = per_file.get(p.file, 0) + 1
    for n in (1, 2, 3, 4, 7):
        parts = [shard_of(planned, i, n) for i in range(1, n + 1)]
        assert sorted(id(p) for part in parts for p in part) == sorted(id(p) for p in planned)
        # Whole files, but for a file with more than a shard's fair share of instances, split.
        whole = {f for f, c in per_file.items() if c <= len(planned) / n}
        files = [{p.file for p in part} & whole for part in parts]
        assert all(not (a & b) for i, a in enumerate(files) for b in files[i + 1:])
        assert [len(x) for x in parts] == [len(shard_of(planned, i, n)) for i in range(1, n + 1)]
        sizes = [len(x) for x in parts]
        assert max(sizes) - min(sizes) <= max(c for f, c in per_file.items() if f in whole)


def test_shards_balanced_by_a_previous_runs_costs():
    """With the costs of a previous run, the costliest file gets a shard of its own; instances the
    previous run did not have cost the median of those it had; the split is still a partition."""
    from bot.scan import cost_key
    planned = expand(load(EXAMPLE / "kernelvet.yaml"))
    files = sorted({p.file for p in planned})
    heavy = files[-1]
    costs = {cost_key(p): (1_000_000 if p.file == heavy else 10) for p in planned if p.file != files[0]}
    parts = [shard_of(planned, i, 2, costs) for i in (1, 2)]
    assert sorted(id(p) for part in parts for p in part) == sorted(id(p) for p in planned)
    # The heavy file costs more than half the run: its instances are spread over both shards, the
    # rest of the files fill in around them.
    heavy_counts = [sum(p.file == heavy for p in part) for part in parts]
    assert all(heavy_counts) and sum(heavy_counts) == sum(p.file == heavy for p in planned)
    light = [{p.file for p in part} - {heavy} for part in parts]
    assert not (light[0] & light[1])
    # Within a shard's fair share it stays whole.
    parts = [shard_of(planned, i, 2, {k: (v if v > 10 else 400_000) for k, v in costs.items()}) for i in (1, 2)]
    assert sorted(sum(p.file == heavy for p in part) for part in parts)[0] == 0


def test_merged_shards_equal_the_full_scan(tmp_path, shared_cache):
    c = ["--cache-dir", str(shared_cache)]
    full = json.loads(kernelvet("scan", str(EXAMPLE), *c, "--format", "json", cwd=tmp_path).stdout)
    for i in (1, 2, 3):
        r = kernelvet("scan", str(EXAMPLE), *c, "--shard", f"{i}/3", "--results", str(tmp_path / f"s{i}.json"),
                      "--format", "json", cwd=tmp_path)
        assert r.returncode in (0, 1), r.stderr
    shards = [str(tmp_path / f"s{i}.json") for i in (1, 2, 3)]
    r = kernelvet("merge", *shards, "--root", str(EXAMPLE), "--format", "json", cwd=tmp_path)
    merged = json.loads(r.stdout)
    assert r.returncode == 1
    assert [(f["check"], f["location"], f["models"]) for f in merged["findings"]] == \
           [(f["check"], f["location"], f["models"]) for f in full["findings"]]
    assert merged["summary"]["instances"] == full["summary"]["instances"]
    r = kernelvet("merge", *shards[:2], "--root", str(EXAMPLE), cwd=tmp_path)
    assert r.returncode == 2 and "cover" in r.stderr and "of 46 instances" in r.stderr
    r = kernelvet("merge", shards[0], shards[0], *shards[1:], "--root", str(EXAMPLE), cwd=tmp_path)
    assert r.returncode == 2 and "overlap" in r.stderr
    r = kernelvet("scan", str(EXAMPLE), "--shard", "4/3", cwd=tmp_path)
    assert r.returncode == 2 and "--shard 4/3" in r.stderr
    # Split again by what each instance cost in those results: still every instance exactly once.
    for i in (1, 2, 3):
        r = kernelvet("scan", str(EXAMPLE), *c, "--shard", f"{i}/3", "--balance", *shards, "--results",
                      str(tmp_path / f"b{i}.json"), "--format", "json", cwd=tmp_path)
        assert r.returncode in (0, 1), r.stderr
    balanced = [str(tmp_path / f"b{i}.json") for i in (1, 2, 3)]
    r = kernelvet("merge", *balanced, "--root", str(EXAMPLE), "--format", "json", cwd=tmp_path)
    assert r.returncode == 1 and json.loads(r.stdout)["summary"]["instances"] == full["summary"]["instances"]
    r = kernelvet("scan", str(EXAMPLE), *c, "--shard", "1/3", "--balance", str(tmp_path / "gone.json"), cwd=tmp_path)
    assert r.returncode in (0, 1) and "split by instance count" in r.stderr
    (tmp_path / "bad.json").write_text("{")
    r = kernelvet("scan", str(EXAMPLE), *c, "--shard", "1/3", "--balance", str(tmp_path / "bad.json"), cwd=tmp_path)
    assert r.returncode == 2 and "bad.json:1:2: not valid JSON" in r.stderr and "Traceback" not in r.stderr


def test_a_full_scan_baseline_holds_in_a_partial_run(tmp_path, shared_cache):
    """A pull request verifies only some ops; the baseline of the full scan still matches."""
    from gitrepo import commit_all, edit, example_repo, git
    repo = example_repo(tmp_path / "repo")
    c = ["--cache-dir", str(shared_cache)]
    r = kernelvet("scan", ".", *c, "--write-baseline", ".kernelvet-baseline.json", cwd=repo)
    assert r.returncode == 0, r.stderr
    git(repo, "checkout", "-qb", "topic")
    edit(repo, "csrc/quant_kernels.cu", "dim3 block(256);\n  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));\n"
         "  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();\n  MV_DISPATCH_FLOATING_TYPES(input.scalar_type(), "
         "\"static_scaled_int8_quant\"",
         "dim3 threads(256);\n  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));\n"
         "  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();\n  MV_DISPATCH_FLOATING_TYPES(input.scalar_type(), "
         "\"static_scaled_int8_quant\"")
    edit(repo, "csrc/quant_kernels.cu", "<<<grid, block, 0, stream>>>(\n        out.data_ptr<int8_t>(), input",
         "<<<grid, threads, 0, stream>>>(\n        out.data_ptr<int8_t>(), input")
    commit_all(repo, "rename")
    r = kernelvet("diff", "main", *c, "--format", "json", cwd=repo)
    data = json.loads(r.stdout)
    assert {i["op"] for i in data["instances"]} == {"static_scaled_int8_quant"}
    assert [f["status"] for f in data["findings"]] == ["baselined"] and r.returncode == 0
