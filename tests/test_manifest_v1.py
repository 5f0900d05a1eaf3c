"""Manifest version 1: the same instances as version 0 for the example, shorthands, op names
resolved through registrations, set-valued dims, optional arguments both ways, model conditions,
and errors a user can act on."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from analyzers import binding as B
from analyzers.frontend.registrations import discover
from bot.manifest import ManifestError, expand, load

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "minivllm"
V1 = ROOT / "tests" / "fixtures" / "manifests" / "minivllm_v1.yaml"
MODELS = EXAMPLE / "models"


def test_v1_example_expands_to_exactly_the_v0_instances():
    v0 = expand(load(EXAMPLE / "kernelvet.yaml"), root=EXAMPLE)
    v1 = expand(load(V1), root=EXAMPLE)
    assert {(p.op_name, p.file, p.launcher, p.instance, tuple(p.models)) for p in v0} == \
           {(p.op_name, p.file, p.launcher, p.instance, tuple(p.models)) for p in v1}


def manifest(tmp_path: Path, ops: str, extra: str = "") -> Path:
    p = tmp_path / "kernelvet.yaml"
    p.write_text(f"version: 1\nmodels:\n  - {MODELS}/*.json\n{extra}\nops:\n" + textwrap.indent(textwrap.dedent(ops), "  "))
    return p


def errors(path: Path, root: Path = EXAMPLE) -> list[str]:
    with pytest.raises(ManifestError) as exc:
        expand(load(path), root=root)
    return exc.value.errors


def test_sets_optional_arguments_and_conditions(tmp_path):
    p = manifest(tmp_path, """
        - op: reshape_and_cache_flash
          models: has max_position_embeddings and num_key_value_heads < 8
          args:
            key: [num_tokens, num_key_value_heads, head_dim]
            value: {shape: [num_tokens, num_key_value_heads, head_dim], optional: true}
            key_cache: [num_blocks, block_size, num_key_value_heads, head_dim]
            value_cache: [num_blocks, block_size, num_key_value_heads, head_dim]
            slot_mapping: {shape: [num_tokens], dtype: int64, values: [-1, num_blocks * block_size - 1]}
        """, "user_dims:\n  num_blocks: {min: 1, max: 64}\n  block_size: {values: [32, 16]}")
    planned = expand(load(p), root=EXAMPLE)
    assert {m for q in planned for m in q.models} == {"Qwen2ForCausalLM"}  # kv heads 2; the others have 8 or more
    assert sorted(q.op_name for q in planned) == ["reshape_and_cache_flash", "reshape_and_cache_flash(value=None)"]
    dims = {d.name: d for d in planned[0].instance.dims}
    assert dims["block_size"] == B.UserDim("block_size", 16, 32, (16, 32))
    absent = next(q for q in planned if "None" in q.op_name)
    assert isinstance(absent.instance.arg("value"), B.AbsentArg)


def test_user_dim_bounds_from_model_fields(tmp_path):
    p = manifest(tmp_path, """
        - op: rms_norm
          models: has max_position_embeddings
          args: {out: [seq_len, hidden_size], input: [seq_len, hidden_size], weight: [hidden_size], epsilon: 1e-6}
        """, "user_dims:\n  seq_len: {min: 1, max: max_position_embeddings}")
    his = {q.models[0]: q.instance.dims[0].hi for q in expand(load(p), root=EXAMPLE)}
    assert his["Phi3ForCausalLM"] == 4096 and his["MistralForCausalLM"] == 32768


@pytest.mark.parametrize("ops, line, words", [
    ("- op: rms_nrom\n  args: {out: [1]}\n", 6, "no op named 'rms_nrom' is registered"),
    ("- op: rms_norm\n  args: {outt: [1], input: [1], weight: [1]}\n", 7, "the launcher has no argument 'outt' (did you mean 'out'?)"),
    ("- op: rms_norm\n  args:\n    out: [num_tokens, ceil_div(hidden_size, 8)]\n", 8, "quote an expression that has a comma"),
    ("- op: rms_norm\n  models: has(\n", 7, "cannot parse model condition"),
    ("- op: rms_norm\n  args: {out: {dtype: int8}}\n", 7, "a tensor needs a 'shape'"),
])
def test_errors_name_line_and_fix(tmp_path, ops, line, words):
    errs = errors(manifest(tmp_path, ops)) if "dtype: int8" not in ops else pytest.raises(ManifestError, load, manifest(tmp_path, ops)).value.errors
    assert any(f"kernelvet.yaml:{line}:" in e and words in e for e in errs), errs


def test_registrations_map_schema_names_to_launchers(tmp_path):
    (tmp_path / "csrc" / "cpu").mkdir(parents=True)
    (tmp_path / "csrc" / "ops.h").write_text("#include <torch/all.h>\nvoid scale_rows(torch::Tensor& out, double s);\n")
    body = "void scale_rows(torch::Tensor& out, double s) { %s }\n"
    (tmp_path / "csrc" / "cpu" / "scale.cpp").write_text('#include "../ops.h"\n' + body % "")
    (tmp_path / "csrc" / "scale.cu").write_text('#include "ops.h"\n' + body % "/* cuda */")
    (tmp_path / "csrc" / "bindings.cpp").write_text(textwrap.dedent("""\
        #include <torch/library.h>
        #include "ops.h"
        #define EXPAND(NAME, M) TORCH_LIBRARY(NAME, M)
        EXPAND(TORCH_EXTENSION_NAME, ops) {
          ops.def("scale_rows(Tensor! result,"
                  " float scale) -> ()");
          ops.impl("scale_rows", torch::kCUDA, &scale_rows);
        }
        """))
    (tmp_path / "csrc" / "cpu" / "bindings.cpp").write_text(textwrap.dedent("""\
        #include <torch/library.h>
        #include "../ops.h"
        TORCH_LIBRARY(_C, ops) {
          ops.def("scale_rows() -> ()");
          ops.impl("scale_rows", torch::kCPU, &scale_rows);
        }
        """))
    reg = discover(tmp_path)
    [r] = reg.find("scale_rows")
    assert r.file == "csrc/scale.cu" and r.function == "scale_rows"  # the CUDA build's, not the CPU backend's
    assert r.arg_names() == {"result": "out", "scale": "s"}
    assert r.registered_at == ("csrc/bindings.cpp", 5)


def test_stable_abi_registrations_are_ops(tmp_path):
    # The stable ABI's headers define STABLE_TORCH_LIBRARY_* themselves: schema in a fragment,
    # implementation in an impl block through TORCH_BOX, as vLLM's libtorch_stable bindings do.
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "ops.h").write_text(textwrap.dedent("""\
        #include <torch/csrc/stable/tensor.h>
        torch::stable::Tensor permute_cols(torch::stable::Tensor const& A, torch::stable::Tensor const& perm);
        """))
    (tmp_path / "csrc" / "permute.cu").write_text(textwrap.dedent("""\
        #include "ops.h"
        torch::stable::Tensor permute_cols(torch::stable::Tensor const& a, torch::stable::Tensor const& p) { return a; }
        """))
    (tmp_path / "csrc" / "bindings.cpp").write_text(textwrap.dedent("""\
        #include <torch/csrc/stable/library.h>
        #include "ops.h"
        STABLE_TORCH_LIBRARY_FRAGMENT(_C, ops) {
          ops.def("permute_cols(Tensor A, Tensor perm) -> Tensor");
        }
        STABLE_TORCH_LIBRARY_IMPL(_C, CUDA, ops) {
          ops.impl("permute_cols", TORCH_BOX(&permute_cols));
        }
        """))
    reg = discover(tmp_path)
    [r] = reg.find("_C::permute_cols")
    assert (r.function, r.file, r.dispatch_key) == ("permute_cols", "csrc/permute.cu", "CUDA")
    assert r.arg_names() == {"A": "a", "perm": "p"} and r.registered_at == ("csrc/bindings.cpp", 4)


def test_manifest_commands(tmp_path):
    def kv(*args):
        return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=ROOT)
    r = kv("manifest", "check", str(V1), "--root", str(EXAMPLE))
    assert r.returncode == 0 and "46 op x model x dtype combinations verify as 46 instances" in r.stdout
    r = kv("manifest", "ops", str(EXAMPLE))
    assert r.returncode == 0 and "8 registered ops: 8 bound" in r.stdout
    m = tmp_path / "kernelvet.yaml"
    m.write_text((EXAMPLE / "kernelvet.yaml").read_text().replace("config: models/", f"config: {MODELS}/"))
    r = kv("manifest", "add-model", str(ROOT / "manifests" / "models" / "Qwen3ForCausalLM.json"), "--manifest", str(m),
           "--name", "qwen3-8b")
    assert r.returncode == 0, r.stderr
    assert "# kernelvet manifest of minivllm" in m.read_text() and "name: qwen3-8b" in m.read_text()
    # Right after the last model, not between the comment block and the key it documents.
    lines = m.read_text().splitlines()
    added = next(i for i, ln in enumerate(lines) if "qwen3-8b" in ln)
    assert "name: phi3-mini" in lines[added - 1] and lines[added + 1].strip() == ""
    assert lines[added + 2].startswith("# What users control")
    assert "qwen3-8b" in {x for p in expand(load(m), root=EXAMPLE) for x in p.models}
    r = kv("manifest", "add-model", str(ROOT / "manifests" / "models" / "GPT2LMHeadModel.json"), "--manifest", str(m))
    assert r.returncode == 2 and "intermediate_size" in r.stderr and "nothing was written" in r.stderr


KERNEL = """
#include <torch/all.h>
__global__ void k(const int* table, float* out, int64_t block_size) {
  out[threadIdx.x] = (float)table[block_size % 16];
}
void op(torch::Tensor& table, torch::Tensor& out, int64_t block_size) {
  k<<<1, 32>>>(table.data_ptr<int>(), out.data_ptr<float>(), block_size);
}
"""


@pytest.mark.parametrize("dim, code", [("{values: [16, 32, 64]}", 0), ("{min: 16, max: 64}", 1)])
def test_a_set_valued_dim_is_only_its_values(tmp_path, dim, code):
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "kernelvet.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        models: [{{name: m, fields: {{hidden_size: 64}}, dtype: float32}}]
        user_dims: {{block_size: {dim}}}
        ops:
          - {{name: op, file: k.cu, args: {{table: {{shape: [1], dtype: int32}}, out: [32], block_size: block_size}}}}
        """))
    r = subprocess.run([sys.executable, "-m", "bot.cli", "scan", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == code, r.stdout + r.stderr


def test_stated_returns_reach_the_engine_and_bad_ranges_are_errors(tmp_path):
    from bot.scan import options_for
    ops = "- op: rms_norm\n  args: {out: [num_tokens, hidden_size], input: [num_tokens, hidden_size], weight: [hidden_size]}\n"
    good = manifest(tmp_path, ops, "returns:\n  get_device_attribute: {min: 1, max: 1024}")
    assert options_for(load(good)).returns == (("get_device_attribute", 1, 1024),)
    bad = manifest(tmp_path, ops, "returns:\n  get_device_attribute: {min: 1024, max: 1}")
    errs = pytest.raises(ManifestError, load, bad).value.errors
    assert any("kernelvet.yaml:5:" in e and "min 1024 is above max 1" in e for e in errs), errs


def test_a_string_argument_takes_the_value_the_caller_passes(tmp_path):
    fixtures = ROOT / "tests" / "fixtures"
    op = """
        - file: host/cache_dtype_bound_fp8_layout.cu
          launcher: store_kv_cache
          args:
            key: [num_tokens, num_key_value_heads, head_dim]
            key_cache: {shape: [num_blocks, block_size, num_key_value_heads, head_dim], dtype: uint8}
            slot_mapping: {shape: [num_tokens], dtype: int64, values: [-1, num_blocks * block_size - 1]}
            kv_cache_dtype: %s
        """
    dims = "user_dims:\n  num_blocks: {min: 1, max: 64}\n  block_size: {values: [16, 32]}"
    planned = expand(load(manifest(tmp_path, op % "{string: fp8}", dims)), root=fixtures)
    assert planned and all(q.instance.arg("kv_cache_dtype") == B.StringArg("fp8") for q in planned)
    errs = errors(manifest(tmp_path, op % "{string: fp8, value: 1}", dims), fixtures)
    assert any("give one of 'value', 'string'" in e for e in errs), errs


RELATED_OP = """
    - file: relations/row_ranges_ordered.cu
      launcher: top_k_per_row
      args:
        logits: {shape: [num_rows, max_row_len], dtype: float32}
        row_starts: {shape: [num_rows], dtype: int32, values: [0, max_row_len]%s}
        row_ends: {shape: [num_rows], dtype: %s, values: [0, max_row_len]}
        indices: {shape: [num_rows, 2048], dtype: int32}
        top_k: 2048
      relations: [%s]
    """
RELATED_DIMS = "user_dims:\n  num_rows: {min: 1, max: 1024}\n  max_row_len: {min: 1, max: 65536}"


def test_relations_reach_the_instance_over_launcher_parameters(tmp_path):
    fixtures = ROOT / "tests" / "fixtures"
    text = RELATED_OP % (", nondecreasing: true", "int32", '"row_starts[i] <= row_ends[i]", "row_ends[i - 1] <= row_starts[i]"')
    planned = expand(load(manifest(tmp_path, text, RELATED_DIMS)), root=fixtures)
    assert planned
    for q in planned:
        inst = q.instance
        assert [B.to_text(r) for r in inst.relations] == ["row_starts[i] <= row_ends[i]",
                                                          "row_ends[i - 1] <= row_starts[i]"]
        assert inst.arg("row_starts").nondecreasing and not inst.arg("row_ends").nondecreasing


@pytest.mark.parametrize("relation, row_ends_dtype, flag, words", [
    ('"row_starts[i] <= top_k"', "int32", "", "'top_k' is not a user dim"),
    ('"logits[i] <= row_ends[i]"', "int32", "", "'logits' has 2 dimensions"),
    ('"row_starts[i] <= row_ends[i]"', "float32", "", "'row_ends' holds float32"),
    ('"row_starts[2 * i] <= row_ends[i]"', "int32", "", "an index is 'i', 'i + c' or 'i - c'"),
    ('"row_starts[i] <= i"', "int32", "", "uses 'i' outside a subscript"),
    ('"num_rows <= max_row_len"', "int32", "", "names no tensor element"),
    ('"row_starts[i] + row_ends[i]"', "int32", "", "a relation is a comparison"),
    ('"row_starts[i] <= rows_ends[i]"', "int32", "", "'rows_ends', which is not a tensor argument"),
    ('"row_starts[i] <= row_ends[i]"', "int32", ", nondecreasing: yes please", "nondecreasing"),
])
def test_relation_mistakes_are_errors_at_their_line(tmp_path, relation, row_ends_dtype, flag, words):
    fixtures = ROOT / "tests" / "fixtures"
    path = manifest(tmp_path, RELATED_OP % (flag, row_ends_dtype, relation), RELATED_DIMS)
    errs = errors(path, fixtures)
    assert any(words in e and e.startswith(f"{path}:") for e in errs), errs


def test_nondecreasing_is_for_one_dimension(tmp_path):
    fixtures = ROOT / "tests" / "fixtures"
    text = (RELATED_OP % ("", "int32", '"row_starts[i] <= row_ends[i]"')).replace(
        "indices: {shape: [num_rows, 2048], dtype: int32}", "indices: {shape: [num_rows, 2048], dtype: int32, nondecreasing: true}")
    errs = errors(manifest(tmp_path, text, RELATED_DIMS), fixtures)
    assert any("'nondecreasing' is for a 1-D tensor (this one has 2 dimensions)" in e for e in errs), errs


def _kernel_library(root: Path) -> None:
    (root / "lib").mkdir()
    (root / "lib" / "scale.cu").write_text(textwrap.dedent("""\
        template <typename T, int VEC>
        __global__ void scale_rows(T* out, const T* in, float s, int n) {
          int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
          if (i + VEC <= n) for (int j = 0; j < VEC; ++j) out[i + j] = in[i + j] * s;
        }
        __global__ void fill(int* out, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i <= n) out[i] = 0;
        }
        """))
    (root / "lib" / "copy.cu").write_text("__global__ void fill(float* out, int n) {}\n")


def _bare(tmp_path: Path, ops: str) -> Path:
    p = tmp_path / "kernelvet.yaml"
    p.write_text("version: 1\nmodels: []\nuser_dims:\n  n: {min: 1, max: 1000000}\nops:\n"
                 + textwrap.indent(textwrap.dedent(ops), "  "))
    return p


def test_a_bare_kernel_is_bound_by_name_with_its_launch_and_buffers(tmp_path):
    _kernel_library(tmp_path)
    p = _bare(tmp_path, """
        - kernel: scale_rows<float, 4>
          launch: {grid: "ceil_div(n, 1024)", block: 256}
          args:
            out: {elements: n, dtype: float32}
            in: {bytes: n * 4, values: [0, 7]}
            s: any
            n: n
        """)
    (planned,) = expand(load(p), root=tmp_path)
    assert (planned.file, planned.launcher, planned.models) == ("lib/scale.cu", "kernel:scale_rows<float, 4>",
                                                                ["(no model)"])
    inst = planned.instance
    assert inst.arg("out") == B.BufferArg(B.parse_expr("n * 4"), 4, None)
    assert inst.arg("in").elem_size == 0 and inst.arg("in").values == (B.Num(0), B.Num(7))
    launch = [inst.arg(n).value for n in B.LAUNCH_ARGS]
    assert launch == [B.parse_expr("ceil_div(n, 1024)"), B.Num(1), B.Num(1), B.Num(256), B.Num(1), B.Num(1), B.Num(0)]


def test_bare_kernels_are_verified_and_the_launch_reads_as_the_kernels_line(tmp_path):
    from bot.scan import scan
    _kernel_library(tmp_path)
    p = _bare(tmp_path, """
        - kernel: scale_rows<float, 4>
          launch: {grid: "ceil_div(n, 1024)", block: 256}
          args: {out: {elements: n, dtype: float32}, in: {elements: n, dtype: float32}, s: any, n: n}
        - kernel: fill
          file: lib/scale.cu
          launch: {grid: "ceil_div(n, 128)", block: 128}
          args: {out: {elements: n, dtype: int32}, n: n}
        - kernel: fill
          name: fill_wide
          file: lib/scale.cu
          launch: {grid: 1, block: 2048}
          args: {out: {elements: n, dtype: int32}, n: n}
        """)
    report = scan(tmp_path, load(p), jobs=1)
    verdicts = {r.planned.op_name: r.result.verdict for r in report.instances}
    assert verdicts == {"scale_rows<float, 4>": "verified", "fill": "bug", "fill_wide": "bug"}
    found = sorted((f.check, f.finding.location.line) for f in report.findings)
    # The write at i == n is past the buffer; the block of 2048 threads is the launch's finding, at
    # the kernel's definition (line 6): the launch the manifest states has no line of its own.
    assert found == [("launch-config", 6), ("oob", 8)], found


@pytest.mark.parametrize("ops, words", [
    ("- kernel: scale_rows<float, 4>\n  args: {n: n}\n", "needs both 'kernel' (its name) and 'launch'"),
    ("- kernel: fill\n  launch: {grid: 1, block: 32}\n", "2 files define a __global__ function 'fill'"),
    ("- kernel: nothing_here\n  launch: {grid: 1, block: 32}\n", "no .cu or .cuh file of the repository defines"),
    ("- kernel: fill\n  file: lib/scale.cu\n  launch: {grid: 1, block: 32}\n  args: {out: {elements: n}}\n",
     "'elements' needs a 'dtype'"),
    ("- kernel: fill\n  op: fill\n  launch: {grid: 1, block: 32}\n", "cannot also have 'op'"),
    ("- kernel: fill\n  file: lib/scale.cu\n  launch: {grid: [1, 1, 1, 1], block: 32}\n", "grid"),
])
def test_bare_kernel_mistakes_are_errors(tmp_path, ops, words):
    _kernel_library(tmp_path)
    p = _bare(tmp_path, ops)
    try:
        expand(load(p), root=tmp_path)
    except ManifestError as exc:
        assert any(words in e for e in exc.errors), exc.errors
    else:
        pytest.fail("no error")


GPUVERIFY_RACE = """\
//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=1 --no-inline
__global__ void reduce(int* out, int* in) {
  __shared__ int s[64];
  unsigned t = threadIdx.x;
  s[t] = in[t];
  for (unsigned d = 32; d > 0; d >>= 1) {
    if (t < d) s[t] += s[t + d];
  }
  if (t == 0) *out = s[0];
}
"""


def test_gpuverify_headers_become_bare_kernel_bindings(tmp_path):
    from bot.scan import scan
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "race.cu").write_text(GPUVERIFY_RACE)
    clean = GPUVERIFY_RACE.replace("//xfail:BOOGIE_ERROR", "//pass").replace("--blockDim=64", "--blockDim=[64,1]")
    clean = clean.replace("  s[t] = in[t];\n", "  s[t] = in[t];\n  __syncthreads();\n")
    clean = clean.replace("s[t + d];\n", "s[t + d];\n    __syncthreads();\n")
    (tmp_path / "suite" / "clean.cu").write_text(clean)
    out = tmp_path / "kernelvet.yaml"
    r = subprocess.run([sys.executable, "-m", "bot.cli", "manifest", "from-gpuverify", "suite/race.cu", "suite/clean.cu",
                        "--root", str(tmp_path), "-o", str(out)], cwd=ROOT, capture_output=True, text=True)
    r2 = subprocess.run([sys.executable, "-m", "bot.cli", "manifest", "from-gpuverify", "suite/race.cu", "-o",
                         str(tmp_path / "x.yaml")], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and r2.returncode == 0, r.stderr + r2.stderr
    text = out.read_text()
    assert "# suite/race.cu: flags with no binding counterpart: --no-inline" in text
    planned = expand(load(out), root=tmp_path)
    launch = {p.op_name: [p.instance.arg(n).value for n in B.LAUNCH_ARGS[:6]] for p in planned}
    assert launch == {"race:reduce": [B.Num(1), B.Num(1), B.Num(1), B.Num(64), B.Num(1), B.Num(1)],
                      "clean:reduce": [B.Num(1), B.Num(1), B.Num(1), B.Num(64), B.Num(1), B.Num(1)]}
    report = scan(tmp_path, load(out), jobs=1)
    assert {r.planned.op_name: r.result.verdict for r in report.instances} == \
        {"race:reduce": "bug", "clean:reduce": "verified"}
    assert {f.check for f in report.findings} == {"race"}


def test_a_gpuverify_file_without_a_launch_is_a_usage_error(tmp_path):
    (tmp_path / "k.cu").write_text("//pass\n//--gridDim=4\n__global__ void k(int* a) {}\n")
    r = subprocess.run([sys.executable, "-m", "bot.cli", "manifest", "from-gpuverify", "k.cu", "--root", str(tmp_path)],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 2 and "k.cu:2: the header gives no --blockDim" in r.stderr and "Traceback" not in r.stderr


GGML_FIXTURE = ROOT / "tests" / "fixtures" / "host" / "ggml_tensor_bound_next_column_row_end.cu"
GGML_HEADER = GGML_FIXTURE.parent / "ggml_tensor_common.cuh"


def _ggml_op(tmp_path: Path, dst: str) -> Path:
    (tmp_path / "ops").mkdir(exist_ok=True)
    (tmp_path / "ops" / "smooth.cu").write_text(GGML_FIXTURE.read_text())
    (tmp_path / "ops" / GGML_HEADER.name).write_text(GGML_HEADER.read_text())
    p = tmp_path / "kernelvet.yaml"
    p.write_text("version: 1\nmodels: [{name: m, fields: {hidden: 64}}]\ndtypes: [float32]\n"
                 "user_dims:\n  tokens: {min: 1, max: 1000}\nops:\n"
                 "  - file: ops/smooth.cu\n    launcher: ggml_cuda_op_smooth_cols\n    args:\n      dst:\n"
                 + textwrap.indent(textwrap.dedent(dst), "        "))
    return p


def test_a_struct_reached_through_a_pointer_is_bound_member_by_member(tmp_path):
    p = _ggml_op(tmp_path, """\
        fields:
          ne: [hidden, tokens, 1, 1]
          data: {elements: hidden * tokens, dtype: float32}
          src: [{fields: {ne: [hidden, tokens, 1, 1], data: {elements: hidden * tokens, dtype: float32}}}, absent]
          type: any
        """)
    (planned,) = expand(load(p), root=tmp_path)
    dst = dict(planned.instance.arg("dst").members)
    assert [m.value for _, m in dst["ne"].members] == [B.Num(64), B.Name("tokens"), B.Num(1), B.Num(1)]
    assert dst["ne"].array and dst["data"] == B.BufferArg(B.parse_expr("64 * tokens * 4"), 4, None)
    (src0, src1) = dict(dst["src"].members).values()
    assert isinstance(src0, B.StructArg) and isinstance(src1, B.AbsentArg) and dst["type"] == B.ScalarArg(None)
    assert [d.name for d in planned.instance.dims] == ["tokens"]  # the dims the members use are kept


@pytest.mark.parametrize("dst, words", [
    ("fields: {shape: [1, 2]}", "has no member 'shape'; its members: type, ne, nb, op_params, flags, src, data, name"),
    ("fields: {ne: [1, 2, 3, 4, 5]}", "'dst.ne' of ggml_cuda_op_smooth_cols has 4 entries; the binding gives 5"),
    ("fields: {ne: {fields: {x: 1}}}", "is an array (long[4]): give its entries as a list"),
    ("fields: {type: absent}", "'dst.type' of ggml_cuda_op_smooth_cols is not a pointer"),
])
def test_a_struct_binding_that_does_not_fit_the_struct_says_where(tmp_path, dst, words):
    from bot.scan import scan
    p = _ggml_op(tmp_path, dst)
    (result,) = [r.result for r in scan(tmp_path, load(p), jobs=1).instances]
    assert result.verdict == "inconclusive"
    (why,) = [i.reason for i in result.inconclusive]
    assert why == "binding-error" and words in result.inconclusive[0].detail, result.inconclusive[0].detail


@pytest.mark.parametrize("dst, words", [
    ("fields: {ne: {value: 1, dtype: float32}}", "'dtype' and 'values' describe a pointer member's memory"),
    ("fields: {data: {elements: 4}}", "'elements' needs a 'dtype'"),
    ("{fields: {ne: [1]}, shape: [1]}", "a struct ('fields') cannot also have 'shape'"),
    ("fields: {data: {elements: 4, dtype: float32, bytes: 16}}", "as 'elements' (with 'dtype') or as 'bytes', not both"),
    ("fields: {data: {value: 1, absent: true}}", "a member is one of: a value, 'items'"),
])
def test_struct_binding_mistakes_are_errors_at_their_line(tmp_path, dst, words):
    p = _ggml_op(tmp_path, dst)
    errs = pytest.raises(ManifestError, load, p).value.errors
    assert any("kernelvet.yaml:" in e and words in e for e in errs), errs


@pytest.mark.parametrize("name", ["vllm.yaml", "vllm-recorded.yaml", "llama.cpp.yaml"])
def test_shipped_manifests_are_valid(name):
    assert load(ROOT / "manifests" / name).spec.ops


def test_the_llama_cpp_manifest_binds_each_op_for_each_model(tmp_path):
    """The shipped llama.cpp manifest against stand-in files with its launchers' signatures: every
    op gets the node's and its source's shapes from each model, and the device from a dim."""
    import yaml
    shipped = ROOT / "manifests" / "llama.cpp.yaml"
    code = GGML_FIXTURE.read_text()
    launcher = code[code.index("void ggml_cuda_op_smooth_cols"):]
    files: dict[str, list[str]] = {}
    for op in yaml.safe_load(shipped.read_text())["ops"]:
        files.setdefault(op["file"], []).append(op["launcher"])
    for rel, names in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(code + "".join(launcher.replace("ggml_cuda_op_smooth_cols", n)
                                                   for n in dict.fromkeys(names)))
        (tmp_path / rel).with_name(GGML_HEADER.name).write_text(GGML_HEADER.read_text())
    manifest = tmp_path / "kernelvet.yaml"
    manifest.write_text(shipped.read_text().replace("models/", str(ROOT / "manifests" / "models") + "/"))
    planned = expand(load(manifest), root=tmp_path)
    assert {p.launcher for p in planned} == {n for names in files.values() for n in names} > {
        "ggml_cuda_op_rms_norm", "ggml_cuda_op_silu", "ggml_cuda_op_scale"}
    rms = [p for p in planned if p.launcher == "ggml_cuda_op_rms_norm"]
    assert sum(len(p.models) for p in rms) == 8 and {p.instance.dtype for p in rms} == {"float32"}
    dst = dict(rms[0].instance.arg("dst").members)
    (src0,) = [m for _, m in dst["src"].members]
    hidden = dict(rms[0].instance.model_fields)["hidden_size"]
    assert dict(src0.members)["data"].size == B.parse_expr(f"{hidden} * n_tokens * 4")
    assert rms[0].instance.arg("ctx") == B.StructArg((("device", B.ScalarArg(B.Name("device"))),))
    f16 = [p for p in planned if p.op_name == "ggml_cuda_op_silu(f16)"]
    assert {p.instance.dtype for p in f16} == {"float16"} and dict(f16[0].instance.arg("dst").members)["type"] == \
        B.ScalarArg(B.Num(1))
