"""The command line: exit codes, formats, and the example scan with every planted bug reported
with a witness whose arithmetic really triggers it."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "minivllm"
FIXTURES = ROOT / "tests" / "fixtures"
INT_MAX = 2**31 - 1


def kernelvet(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=cwd or ROOT)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory, shared_cache):
    """One scan of the example: its text report on stdout and its JSON report beside it. The
    session's cache (keyed by IR) serves what another test verified first; the checkout stays as
    it is."""
    json_path = tmp_path_factory.mktemp("example") / "report.json"
    r = kernelvet("scan", str(EXAMPLE), "--cache-dir", str(shared_cache), "--json", str(json_path))
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    return r.stdout, json.loads(json_path.read_text())


@pytest.fixture(scope="module")
def example_report(example_run):
    return example_run[1]


def _example_prefix() -> str:
    """Where the example lies below the repository root: every output path starts with it."""
    r = subprocess.run(["git", "-C", str(EXAMPLE), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if r.returncode != 0:
        return ""
    return str(EXAMPLE.resolve().relative_to(Path(r.stdout.strip()).resolve())) + "/"


def by_place(report) -> dict:
    """Findings by (path below the example, line, check); the paths themselves are repository-relative."""
    prefix = _example_prefix()
    assert all(f["location"]["file"].startswith(prefix) for f in report["findings"])
    return {(f["location"]["file"][len(prefix):], f["location"]["line"], f["check"]): f for f in report["findings"]}


def test_paths_are_relative_to_the_repository_root(tmp_path, shared_cache):
    """Scanned from the repository root, the example's SARIF URIs and text paths exist at the root."""
    sarif_path = tmp_path / "k.sarif"
    r = kernelvet("scan", str(EXAMPLE.relative_to(ROOT)), "--sarif", str(sarif_path), "--cache-dir", str(shared_cache))
    assert r.returncode == 1, r.stderr
    top = Path(subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True).stdout.strip() or ROOT)
    doc = json.loads(sarif_path.read_text())
    uris = {res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in doc["runs"][0]["results"]}
    assert uris and all((top / u).is_file() for u in uris), uris
    for line in r.stdout.splitlines():
        if re.match(r"^\S+\.cu:\d+:\d+: ", line):
            assert (top / line.split(":", 1)[0]).is_file(), line


def test_example_reports_exactly_the_planted_bugs(example_report):
    assert set(by_place(example_report)) == {
        ("csrc/layernorm_kernels.cu", 70, "narrowing"),  # 32-bit row offset, first loop
        ("csrc/layernorm_kernels.cu", 88, "narrowing"),  # 32-bit row offset, second loop
        ("csrc/activation_kernels.cu", 56, "misaligned"),  # rows of odd length start off 16 bytes (JAIS only)
        ("csrc/activation_kernels.cu", 57, "oob"),  # vector tail past the row (JAIS only)
        ("csrc/quant_kernels.cu", 37, "oob"),  # missing token guard in the last block
        ("csrc/quant_kernels.cu", 55, "narrowing"),  # int num_elems = input.numel()
    }
    verdicts = {(i["op"], i["verdict"]) for i in example_report["instances"]}
    for op in ("rms_norm", "silu_and_mul", "rotary_embedding", "reshape_and_cache_flash"):
        assert (op, "verified") in verdicts and (op, "bug") not in verdicts
    assert example_report["summary"]["inconclusive"] == 0


def test_row_offset_witness_wraps(example_report):
    f = by_place(example_report)[("csrc/layernorm_kernels.cu", 70, "narrowing")]
    w = f["witness"]
    vec_hidden = w["model.hidden_size"] // 8
    idx = next(v for k, v in w.items() if k.startswith("idx"))
    assert w["blockIdx.x"] < w["num_tokens"] and idx < vec_hidden
    assert w["blockIdx.x"] * vec_hidden + idx > INT_MAX  # the int the value is stored in cannot hold it
    assert "qwen2-0.5b" not in f["models"]  # 896 / 8 * 9M tokens stays below 2^31
    assert w["num_tokens"] == -(-INT_MAX // vec_hidden) + (1 if (INT_MAX + 1) % vec_hidden == 0 else 0)  # the smallest


def test_vector_tail_witness_reads_past_the_tensor(example_report):
    f = by_place(example_report)[("csrc/activation_kernels.cu", 57, "oob")]
    w = f["witness"]
    assert f["models"] == ["jais-13b"]
    d = w["model.intermediate_size"]
    i = next(v for k, v in w.items() if k.startswith("i (loop"))
    token = w["blockIdx.x"]
    first = (token * 2 * d + d + i * 8) * 4  # byte offset of y's vector i (8 floats)
    assert first + 32 > w["num_tokens"] * 2 * d * 4


def test_misaligned_witness_starts_a_row_off_16_bytes(example_report):
    f = by_place(example_report)[("csrc/activation_kernels.cu", 56, "misaligned")]
    w = f["witness"]
    assert f["models"] == ["jais-13b"]
    d = w["model.intermediate_size"]
    i = next(v for k, v in w.items() if k.startswith("i (loop"))
    elem = {"float32": 4, "float16": 2, "bfloat16": 2}[w["dtype"]]
    assert w["blockIdx.x"] < w["num_tokens"]
    assert ((w["blockIdx.x"] * 2 * d + i * 8) * elem) % 16 != 0  # the address of x's vector i
    assert {r["line"] for r in f["related"]} >= {57}


def test_token_guard_witness_runs_past_the_last_token(example_report):
    f = by_place(example_report)[("csrc/quant_kernels.cu", 37, "oob")]
    w = f["witness"]
    assert w["blockIdx.x"] * 4 + w["threadIdx.y"] >= w["num_tokens"]
    assert {r["line"] for r in f["related"]} >= {45, 48}


def test_launcher_numel_witness_exceeds_int(example_report):
    f = by_place(example_report)[("csrc/quant_kernels.cu", 55, "narrowing")]
    w = f["witness"]
    assert w["num_tokens"] * w["model.hidden_size"] > INT_MAX
    assert (w["num_tokens"] - 1) * w["model.hidden_size"] <= INT_MAX  # the smallest such input
    assert f["fix"]["replacement_line"].strip() == "const int64_t num_elems = input.numel();"


def test_text_format_names_place_check_and_witness(example_run):
    text = example_run[0]
    assert "csrc/quant_kernels.cu:55:25: narrowing: conversion of `input.numel()` from long to int" in text
    assert "witness: batch=" in text and "instances:" in text


def make_repo(tmp_path: Path, kernel: str, manifest_extra: str = "") -> Path:
    (tmp_path / "k.cu").write_text(textwrap.dedent(kernel))
    (tmp_path / "kernelvet.yaml").write_text(textwrap.dedent(f"""
        version: 0
        models: [{{name: m, fields: {{hidden_size: 4096}}, dtype: float32}}]
        ops:
          - name: op
            file: k.cu
            args: {{x: {{shape: [num_tokens, hidden_size]}}}}
        {manifest_extra}
        """))
    return tmp_path


CLEAN = """
    #include <torch/all.h>
    __global__ void k(float* x, int h) {
      for (int i = threadIdx.x; i < h; i += blockDim.x) x[static_cast<int64_t>(blockIdx.x) * h + i] = 0.f;
    }
    void op(torch::Tensor& x) { k<<<x.size(0), 256>>>(x.data_ptr<float>(), x.size(1)); }
"""


def test_clean_repository_exits_0(tmp_path):
    r = kernelvet("scan", str(make_repo(tmp_path, CLEAN)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 verified" in r.stdout


def test_root_alone_names_the_directory_scanned(tmp_path):
    """`--root DIR` with no paths scans DIR, not the current directory; a root that is no
    directory is a usage error."""
    repo = make_repo(tmp_path, CLEAN)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = kernelvet("scan", "--root", str(repo), cwd=elsewhere)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 verified" in r.stdout
    r = kernelvet("scan", "--root", str(tmp_path / "nowhere"))
    assert r.returncode == 2 and "--root" in r.stderr and "no such directory" in r.stderr
    assert "Traceback" not in r.stderr


def test_unsupported_construct_exits_3_with_location(tmp_path):
    kernel = CLEAN.replace("x[static_cast<int64_t>(blockIdx.x) * h + i] = 0.f;",
                           "x[static_cast<int64_t>(blockIdx.x) * h + i] = 0.f; goto done; done:;")
    r = kernelvet("scan", str(make_repo(tmp_path, kernel)))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "inconclusive: op" in r.stdout and "k.cu:4:" in r.stdout


def test_bad_manifest_exits_2_with_file_line(tmp_path):
    repo = make_repo(tmp_path, CLEAN)
    (repo / "kernelvet.yaml").write_text("version: 0\nmodels: []\nops:\n  - name: op\n    fil: k.cu\n")
    r = kernelvet("scan", str(repo))
    assert r.returncode == 2
    assert "kernelvet.yaml:5:5: ops[0].fil: unknown key 'fil' (did you mean 'file'?)" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_missing_manifest_and_missing_launcher(tmp_path):
    r = kernelvet("scan", str(tmp_path))
    assert r.returncode == 2 and "nothing to verify" in r.stderr
    repo = make_repo(tmp_path, CLEAN.replace("void op(", "void other_op("))
    r = kernelvet("scan", str(repo))
    assert r.returncode == 2  # a configuration error at the manifest's line, not an inconclusive op
    assert "kernelvet.yaml:5:5: ops[0] (op): no function named 'op' in k.cu or the headers it includes" in r.stderr
    assert "(did you mean 'other_op'?)" in r.stderr


def test_without_a_manifest_every_op_runs_in_zero_config_mode(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "saxpy.cu").write_text((FIXTURES / "host" / "saxpy_missing_guard.cu").read_text())
    r = kernelvet("scan", str(repo), "--format", "json")
    assert r.returncode == 1, r.stderr
    assert "zero-config mode" in r.stderr
    doc = json.loads(r.stdout)
    [finding] = doc["findings"]
    assert finding["check"] == "oob" and finding["zero_config"] and finding["location"]["line"] == 14
    # The witness is a real failing thread: the last block reads past the 1,000,000 floats of d_x.
    w = finding["witness"]
    assert (w["blockIdx.x"] * 256 + w["threadIdx.x"]) * 4 >= 4_000_000


def test_zero_config_splits_a_dispatch_per_case(tmp_path):
    """One instance per quantization type, and one for the rest (which the op refuses safely); the
    broken case is the one the finding's witness names."""
    from analyzers.api import Workspace
    for name, broken in (("dispatch_on_quant_type.cu", None), ("dispatch_on_quant_type_wrong_check.cu", 12)):
        repo = tmp_path / name
        repo.mkdir()
        (repo / "q.cu").write_text((FIXTURES / "host" / name).read_text())
        ws = Workspace(repo)
        labels = [label for label, _ in ws.zero_config(ws.op("q.cu", "dequantize_rows"))]
        assert labels == ["type=2", "type=3", "type=8", "type=12", "type another value"]
        doc = json.loads(kernelvet("scan", str(repo), "--format", "json", "--no-cache").stdout)
        [inst] = doc["instances"]  # the variants are folded into the op's one result
        assert inst["verdict"] == ("verified" if broken is None else "bug") and not inst["inconclusive"]
        assert [f["witness"]["type"] for f in doc["findings"]] == ([] if broken is None else [broken])


def test_zero_config_splits_a_dispatch_on_a_dimension(tmp_path):
    """A switch on a dimension read into a local (num_experts = gating.size(-1)) splits the op per
    case, named by its dim; the fallback's bug is found in the instance for the other values."""
    from analyzers.api import Workspace
    for name, broken in (("dispatch_on_expert_count.cu", False), ("dispatch_on_expert_count_short_workspace.cu", True)):
        repo = tmp_path / name
        repo.mkdir()
        (repo / "t.cu").write_text((FIXTURES / "host" / name).read_text())
        ws = Workspace(repo)
        labels = [label for label, _ in ws.zero_config(ws.op("t.cu", "topk_sigmoid_rows"))]
        assert labels == ["gating.size(1)=8", "gating.size(1)=64", "gating.size(1)=256", "gating.size(1) another value"]
        doc = json.loads(kernelvet("scan", str(repo), "--format", "json", "--no-cache").stdout)
        experts = {f["witness"]["gating.size(1)"] for f in doc["findings"]}
        assert (experts and not experts & {8, 64, 256}) if broken else not doc["findings"]


def test_zero_config_splits_on_a_flag_the_host_branches_on(tmp_path):
    """One instance per value of a flag the launcher branches on, each reaching its own kernel
    alone; the finding's witness says which way the flag went."""
    from analyzers.api import Workspace
    for name, broken in (("flag_picks_launch_path.cu", False), ("flag_picks_launch_path_plain_overread.cu", True)):
        repo = tmp_path / name
        repo.mkdir()
        (repo / "g.cu").write_text((FIXTURES / "host" / name).read_text())
        ws = Workspace(repo)
        op = ws.op("g.cu", "dequant_gemm_prep")
        variants = ws.zero_config(op)
        assert [label for label, _ in variants] == ["use_exllama=true", "use_exllama=false"]
        reached = [ws.verify(op, inst).kernels for _, inst in variants]
        assert reached == [["dequant_exllama_kernel<4>"], ["dequant_plain_kernel"]]
        doc = json.loads(kernelvet("scan", str(repo), "--format", "json", "--no-cache").stdout)
        assert [f["witness"]["use_exllama"] for f in doc["findings"]] == ([False] if broken else [])


CASES_AND_FLAG = """
#include <torch/all.h>
__global__ void scale_rows_kernel(float* x, int n, int bits, bool round) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = round ? x[i] * bits : x[i] + bits;
}
void scale_rows(torch::Tensor& x, int64_t bits, bool round) {
  const int n = x.numel();
  if (round) {
    TORCH_CHECK(n > 0);
  }
  switch (bits) {
    case 2: case 3: case 4: case 8:
      scale_rows_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n, bits, round);
      break;
    default:
      TORCH_CHECK(false, "bits");
  }
}
"""


def test_zero_config_caps_instances_and_still_covers_each_case_and_flag(tmp_path):
    """A dispatch (4 cases and the rest) times a flag is 10 instances; under a cap of 6 the op still
    runs every case and both flag values."""
    from analyzers import zeroconfig
    from analyzers.api import Workspace
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "s.cu").write_text(CASES_AND_FLAG)
    ws = Workspace(repo)
    op = ws.op("s.cu", "scale_rows")
    assert len(ws.zero_config(op)) == 10
    labels = [label for label, _ in ws.zero_config(op, zeroconfig.Limits(max_instances=6))]
    assert len(labels) == 6
    for case in ("bits=2", "bits=3", "bits=4", "bits=8", "bits another value", "round=true", "round=false"):
        assert any(case in label.split(", ") for label in labels), (case, labels)


def test_a_file_that_does_not_parse_still_yields_a_verdict(tmp_path):
    repo = make_repo(tmp_path, CLEAN.replace("void op(", "void op(undeclared_type t, "))
    r = kernelvet("scan", str(repo))
    assert r.returncode in (2, 3) and "Traceback" not in r.stderr


def test_version():
    r = kernelvet("--version")
    assert r.returncode == 0 and r.stdout.startswith("kernelvet ")
