"""A launcher that calls a function defined in another .cu file of the repository (DeepSeek-V3's
router GEMM: the op's file declares the launch template, a sibling file defines and explicitly
instantiates it): the op is found, the call is followed into the defining file, and a finding
points at that file's line."""
from __future__ import annotations

import json
from pathlib import Path

from test_cli import kernelvet

HEADER = """
#pragma once
#include <cuda_runtime.h>
#include <cuda_bf16.h>

template <typename T, int kNumTokens, int kNumExperts, int kHiddenDim>
void invoke_router_gemm(float* output, T const* mat_a, T const* mat_b, cudaStream_t stream);

int device_sm_count();
"""

ENTRY = """
#include <torch/all.h>
#include <ATen/cuda/CUDAContext.h>
#include "router_gemm.h"

constexpr int kExperts = 256;
constexpr int kHidden = 7168;

template <int kBegin, int kEnd>
struct TokenUnroller {
  static void run(int num_tokens, float* out, const __nv_bfloat16* a, const __nv_bfloat16* b, cudaStream_t s) {
    if (num_tokens == kBegin) {
      invoke_router_gemm<__nv_bfloat16, kBegin, kExperts, kHidden>(out, a, b, s);
    } else {
      TokenUnroller<kBegin + 1, kEnd>::run(num_tokens, out, a, b, s);
    }
  }
};

template <int kEnd>
struct TokenUnroller<kEnd, kEnd> {
  static void run(int num_tokens, float* out, const __nv_bfloat16* a, const __nv_bfloat16* b, cudaStream_t s) {
    TORCH_CHECK(num_tokens == kEnd, "1 to 4 tokens");
    invoke_router_gemm<__nv_bfloat16, kEnd, kExperts, kHidden>(out, a, b, s);
  }
};

void router_gemm(torch::Tensor& output, const torch::Tensor& mat_a, const torch::Tensor& mat_b) {
  TORCH_CHECK(output.dim() == 2 && mat_a.dim() == 2 && mat_b.dim() == 2);
  const int num_tokens = mat_a.size(0);
  TORCH_CHECK(mat_a.size(1) == kHidden && mat_b.size(0) == kExperts && mat_b.size(1) == kHidden);
  TORCH_CHECK(num_tokens >= 1 && num_tokens <= 4);
  TORCH_CHECK(output.size(0) == num_tokens && output.size(1) == kExperts);
  TORCH_CHECK(mat_a.dtype() == at::kBFloat16 && mat_b.dtype() == at::kBFloat16 && output.dtype() == at::kFloat);
  TORCH_CHECK(device_sm_count() > 0);
  TokenUnroller<1, 4>::run(num_tokens, output.data_ptr<float>(),
                           reinterpret_cast<const __nv_bfloat16*>(mat_a.data_ptr()),
                           reinterpret_cast<const __nv_bfloat16*>(mat_b.data_ptr()),
                           at::cuda::getCurrentCUDAStream());
}
"""

KERNELS = """
#include "router_gemm.h"

template <typename T, int kBlockSize, int VPT, int kNumTokens, int kNumExperts, int kHiddenDim>
__global__ __launch_bounds__(128, 1) void router_gemm_kernel(float* out, T const* mat_a, T const* mat_b) {
  const int n_idx = blockIdx.x;
  const int tid = threadIdx.x;
  constexpr int kPerIteration = VPT * kBlockSize;
  constexpr int kIterations = kHiddenDim / kPerIteration;
  float acc[kNumTokens] = {};
  __shared__ float partial[kNumTokens][kBlockSize / 32];
  const T* b_col = mat_b + n_idx * kHiddenDim;
  for (int ki = 0; ki < kIterations; ki++) {
    const int k_base = ki * kPerIteration + tid * VPT;
    const uint4 b_vec = *reinterpret_cast<const uint4*>(b_col + k_base);
#pragma unroll
    for (int m = 0; m < kNumTokens; m++) {
      const uint4 a_vec = *reinterpret_cast<const uint4*>(mat_a + m * kHiddenDim + k_base);
      acc[m] += __uint_as_float(a_vec.x) * __uint_as_float(b_vec.x);
    }
  }
#pragma unroll
  for (int m = 0; m < kNumTokens; m++) {
    float sum = acc[m];
    sum += __shfl_xor_sync(0xffffffff, sum, 16);
    if (tid % 32 == 0) {
      partial[m][tid / 32] = sum;
    }
  }
  __syncthreads();
  if (tid == 0) {
    for (int m = 0; m < kNumTokens; m++) {
      float total = 0.f;
      for (int w = 0; w < kBlockSize / 32; w++) {
        total += partial[m][w];
      }
      out[m * kNumExperts + n_idx] = total;  // OUT_LINE
    }
  }
}

template <typename T, int kNumTokens, int kNumExperts, int kHiddenDim>
void invoke_router_gemm(float* output, T const* mat_a, T const* mat_b, cudaStream_t stream) {
  constexpr int VPT = 16 / sizeof(T);
  constexpr int kBlockSize = 128;
  cudaLaunchConfig_t config = {};
  config.gridDim = kNumExperts;
  config.blockDim = kBlockSize;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchKernelEx(&config, router_gemm_kernel<T, kBlockSize, VPT, kNumTokens, kNumExperts, kHiddenDim>,
                     output, mat_a, mat_b);
}

template void invoke_router_gemm<__nv_bfloat16, 1, 256, 7168>(float*, __nv_bfloat16 const*, __nv_bfloat16 const*, cudaStream_t);

#define INSTANTIATE(M)                                                                \\
  template void invoke_router_gemm<__nv_bfloat16, M, 256, 7168>(float*, __nv_bfloat16 const*, \\
                                                                __nv_bfloat16 const*, cudaStream_t);
INSTANTIATE(2)
INSTANTIATE(3)
INSTANTIATE(4)
#undef INSTANTIATE
"""

UTILS = """
#include <cuda_runtime.h>

int device_sm_count() {
  int device = 0, count = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
  return count;
}
"""


def _repo(tmp_path, kernels=KERNELS, entry=ENTRY):
    moe = tmp_path / "csrc" / "moe"
    moe.mkdir(parents=True)
    (moe / "router_gemm.h").write_text(HEADER)
    (moe / "router_gemm_entry.cu").write_text(entry)
    (moe / "router_gemm_kernels.cu").write_text(kernels)
    (moe / "device_utils.cu").write_text(UTILS)
    return tmp_path


def _scan(repo) -> dict:
    r = kernelvet("scan", str(repo), "--format", "json", "--no-cache", "--zero-config")
    assert "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)


def _line(text: str, marker: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if marker in line)


def test_an_op_runs_the_kernels_another_file_defines(tmp_path):
    doc = _scan(_repo(tmp_path))
    [inst] = [i for i in doc["instances"] if i["op"] == "router_gemm"]
    assert inst["verdict"] == "verified", inst
    assert any(k.startswith("router_gemm_kernel<__nv_bfloat16, 128, 8, 4, 256, 7168>") for k in inst["kernels"])
    assert not doc["findings"]
    # device_sm_count() ran from its own file (no assumption about a body-less function's result).
    assert not any("device_sm_count" in a for a in inst["assumptions"]), inst["assumptions"]


def test_explicit_instantiations_written_directly_and_through_a_macro():
    from analyzers.frontend.crosstu import explicit_instantiations
    assert explicit_instantiations(KERNELS, "invoke_router_gemm") == [
        "__nv_bfloat16, 1, 256, 7168", "__nv_bfloat16, 2, 256, 7168", "__nv_bfloat16, 3, 256, 7168",
        "__nv_bfloat16, 4, 256, 7168"]
    assert explicit_instantiations(KERNELS, "router_gemm_kernel") == []


def test_a_finding_in_the_defining_file_names_its_line(tmp_path):
    # The op checks the output's rows against one token fewer: the last token's row is written
    # past the end, in the file that defines the kernel.
    entry = ENTRY.replace("output.size(0) == num_tokens &&", "output.size(0) == num_tokens - 1 &&")
    doc = _scan(_repo(tmp_path, entry=entry))
    [inst] = [i for i in doc["instances"] if i["op"] == "router_gemm"]
    assert inst["verdict"] == "bug"
    places = {(f["location"]["file"], f["location"]["line"], f["check"]) for f in doc["findings"]}
    assert places == {("csrc/moe/router_gemm_kernels.cu", _line(KERNELS, "OUT_LINE"), "oob")}


def test_a_specialization_the_other_file_never_instantiates_is_not_guessed(tmp_path):
    # Without the explicit instantiation for 4 tokens no definition can be linked: that path's
    # call stays unknown (inconclusive), never verified.
    kernels = KERNELS.replace("INSTANTIATE(4)", "")
    assert kernels != KERNELS
    doc = _scan(_repo(tmp_path, kernels=kernels))
    [inst] = [i for i in doc["instances"] if i["op"] == "router_gemm"]
    assert inst["verdict"] == "inconclusive"
    assert any("invoke_router_gemm" in i["detail"] for i in inst["inconclusive"])


def _cached_scan(repo, cache) -> dict:
    r = kernelvet("scan", str(repo), "--format", "json", "--cache-dir", str(cache), "--zero-config")
    assert "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)


def test_a_change_to_the_defining_file_alone_is_verified_again_not_taken_from_the_cache(tmp_path):
    # The op's file and the headers it includes are untouched; only the file whose kernel it runs
    # changes (its store moves one row down: past the output for the last token).
    repo, cache = _repo(tmp_path / "repo"), tmp_path / "cache"
    assert _cached_scan(repo, cache)["findings"] == []
    kernels = repo / "csrc" / "moe" / "router_gemm_kernels.cu"
    kernels.write_text(KERNELS.replace("out[m * kNumExperts + n_idx] = total;", "out[(m + 1) * kNumExperts + n_idx] = total;"))
    doc = _cached_scan(repo, cache)
    places = {(f["location"]["file"], f["location"]["line"], f["check"]) for f in doc["findings"]}
    assert places == {("csrc/moe/router_gemm_kernels.cu", _line(KERNELS, "OUT_LINE"), "oob")}
    # Unchanged again: the cache answers, with the finding.
    again = _cached_scan(repo, cache)
    assert {(f["location"]["file"], f["location"]["line"], f["check"]) for f in again["findings"]} == places


MANIFEST = """
version: 0
models:
  - config: models/DeepseekV3ForCausalLM.json
    name: deepseek-v3
ops:
  - name: router_gemm
    file: csrc/moe/router_gemm_entry.cu
    args:
      output: {shape: [num_tokens, 256], dtype: float32}
      mat_a: {shape: [num_tokens, 7168], dtype: bfloat16}
      mat_b: {shape: [256, 7168], dtype: bfloat16}
"""


def _impact_after(tmp_path, path: str, text: str) -> dict:
    """The impact decision and reasons for router_gemm after one file of the repository changes."""
    import shutil

    from analyzers.api import Workspace
    from bot.diff import from_git
    from bot.impact import BaseTree, analyse
    from bot.manifest import load
    from gitrepo import commit_all, git

    repo = _repo(tmp_path / "repo")
    (repo / "models").mkdir()
    shutil.copy(Path(__file__).parent / "fixtures" / "models" / "DeepseekV3ForCausalLM.json", repo / "models")
    (repo / "kernelvet.yaml").write_text(MANIFEST)
    (repo / "csrc" / "moe" / "topk_utils.cu").write_text("int clamp_topk(int k) {\n  return k < 1 ? 1 : k;\n}\n")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "base")
    (repo / path).write_text(text)
    commit_all(repo, "change")
    manifest = load(repo / "kernelvet.yaml")
    tree = BaseTree(repo, git(repo, "rev-parse", "main~1"))
    try:
        imp = analyse(repo, manifest, from_git(repo, "main~1"), Workspace(repo), tree)
    finally:
        tree.close()
    [op] = [o for o in imp.ops if o.name == "router_gemm"]
    return {"decision": op.decision, "reasons": op.reasons}


def test_a_pull_request_changing_only_the_defining_file_verifies_the_op_that_runs_it(tmp_path):
    bug = KERNELS.replace("out[m * kNumExperts + n_idx] = total;", "out[(m + 1) * kNumExperts + n_idx] = total;")
    got = _impact_after(tmp_path, "csrc/moe/router_gemm_kernels.cu", bug)
    assert got["decision"] == "verify", got
    assert any(r.startswith("csrc/moe/router_gemm_kernels.cu changed (it defines a function") for r in got["reasons"])


def test_a_comment_in_the_defining_file_or_an_unrelated_sibling_verifies_nothing(tmp_path):
    # A comment: the op's IR, the linked definition's included, is the same as the base's.
    got = _impact_after(tmp_path / "a", "csrc/moe/router_gemm_kernels.cu", "// router GEMM kernels\n" + KERNELS)
    assert got["decision"] == "unchanged", got
    # A sibling source file that defines nothing the op's file or headers name: not even hashed.
    got = _impact_after(tmp_path / "b", "csrc/moe/topk_utils.cu", "int clamp_topk(int k) {\n  return k < 2 ? 2 : k;\n}\n")
    assert got == {"decision": "unaffected", "reasons": []}


# A C library laid out as llama.cpp's ggml is: its header in include/, its C source in src/, the CUDA
# backend in src/cuda/. The op calls the library's helpers (defined in the C file, found by the
# header's name) and asserts through its [[noreturn]] abort helper, whose body formats a message
# from its variadic arguments.
LIB_HEADER = """
#pragma once
#include <stdint.h>
#include <stdbool.h>
#define TL_MAX_DIMS 4
#ifdef __cplusplus
#define TL_NORETURN [[noreturn]]
extern "C" {
#else
#define TL_NORETURN _Noreturn
#endif
struct tl_tensor {
  int64_t ne[TL_MAX_DIMS];
  size_t nb[TL_MAX_DIMS];
  void* data;
};
int64_t tl_nelements(const struct tl_tensor* t);
bool tl_is_contiguous(const struct tl_tensor* t);
TL_NORETURN void tl_abort(const char* file, int line, const char* fmt, ...);
#define TL_ASSERT(x) do { if (!(x)) tl_abort(__FILE__, __LINE__, "TL_ASSERT(%s) failed", #x); } while (0)
#ifdef __cplusplus
}
#endif
"""

LIB_SOURCE = """
#include "tensorlib.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int64_t tl_nelements(const struct tl_tensor* t) {
  return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

bool tl_is_contiguous(const struct tl_tensor* t) {
  return t->nb[0] == sizeof(float) && t->nb[1] == t->nb[0] * t->ne[0] && t->nb[2] == t->nb[1] * t->ne[1] &&
         t->nb[3] == t->nb[2] * t->ne[2];
}

void tl_abort(const char* file, int line, const char* fmt, ...) {
  fprintf(stderr, "%s:%d: ", file, line);
  va_list args;
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  abort();
}
"""

LIB_OP = """
#include <cuda_runtime.h>
#include "tensorlib.h"

static __global__ void scale_f32(const float* x, float* dst, const float scale, const int64_t k) {
  const int64_t i = (int64_t)blockDim.x * blockIdx.x + threadIdx.x;
  if (i >= k) {  // GUARD
    return;
  }
  dst[i] = scale * x[i];  // ACCESS
}

void tl_cuda_scale(const struct tl_tensor* src, struct tl_tensor* dst, float scale) {
  TL_ASSERT(tl_is_contiguous(src) && tl_is_contiguous(dst));
  TL_ASSERT(tl_nelements(dst) == tl_nelements(src));
  const int64_t k = tl_nelements(src);
  scale_f32<<<(k + 255) / 256, 256>>>((const float*)src->data, (float*)dst->data, scale, k);
}
"""


def _library(tmp_path, op=LIB_OP):
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "tensorlib.h").write_text(LIB_HEADER)
    (tmp_path / "src" / "cuda").mkdir(parents=True)
    (tmp_path / "src" / "tensorlib.c").write_text(LIB_SOURCE)
    (tmp_path / "src" / "cuda" / "scale.cu").write_text(op)
    return tmp_path


def test_a_library_helper_defined_in_the_c_source_named_after_its_header_is_run(tmp_path):
    """tl_nelements and tl_is_contiguous have no body in the op's translation unit: they are taken
    from src/tensorlib.c (named after include/tensorlib.h), and the failed assertion's call of the
    [[noreturn]] tl_abort ends the path as abort() would, without running its va_list body."""
    doc = _scan(_library(tmp_path))
    [inst] = [i for i in doc["instances"] if i["op"] == "tl_cuda_scale"]
    assert inst["verdict"] == "verified", inst
    assert any(k.startswith("scale_f32") for k in inst["kernels"])
    assert not doc["findings"]


def test_a_bug_past_the_library_helpers_is_found(tmp_path):
    """The same op with the thread's index in 32 bits: the helpers run, so the launch is reached,
    and past 2^31 elements (a size tl_nelements computes) the index wraps. (The tensors' `data`
    points to memory of a size nobody states, so only what the index itself does is checked.)"""
    # Without the contiguity assertion: zero-config ranges a shape member's elements (`nb` as `ne`)
    # to 2^15 each, so `nb[3] == nb[2] * ne[2]` would bound the tensor below 2^28 elements.
    op = LIB_OP.replace("const int64_t i = (int64_t)blockDim.x * blockIdx.x + threadIdx.x;",
                        "const int i = blockDim.x * blockIdx.x + threadIdx.x;  // INDEX") \
        .replace("  TL_ASSERT(tl_is_contiguous(src) && tl_is_contiguous(dst));\n", "")
    doc = _scan(_library(tmp_path, op))
    [inst] = [i for i in doc["instances"] if i["op"] == "tl_cuda_scale"]
    assert inst["verdict"] == "bug", inst
    places = {(f["location"]["file"], f["location"]["line"], f["check"]) for f in doc["findings"]}
    assert places == {("src/cuda/scale.cu", _line(op, "INDEX"), "narrowing")}


def test_two_translation_units_that_link_each_other_answer_without_recursing():
    """ggml-cuda.cu runs mmq.cu's launcher, which calls a function defined back in ggml-cuda.cu:
    the two programs link each other. A lookup walks the links once each (it recursed without end
    and planning the op failed with RecursionError); a function pending in the other unit is
    lowered when asked for."""
    from analyzers.kir import nodes as N

    lowered = []
    a, b = N.Program(path="a.cu"), N.Program(path="b.cu")
    b.functions.loader = lambda key: (lowered.append(key), dict.__setitem__(b.functions, key, "fn " + key))
    b.functions.pending["helper"] = False
    a.link(b)
    b.link(a)
    assert "missing" not in a.functions and a.functions.get("missing") is None
    assert "missing" not in a.globals and a.globals.get("missing") is None
    assert "helper" in a.functions and a.functions["helper"] == "fn helper" and lowered == ["helper"]
    dict.__setitem__(a.globals, "g", "global of a")
    assert b.globals["g"] == "global of a"


# A torch op in a library laid out as ggml is, whose launcher sizes its grid with a helper that the
# library's header declares and its C source (named after the header, in another directory)
# defines: a pull request that changes only that C source must verify the op again.
ROUND_HEADER = """
#pragma once
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
int64_t tl_blocks_for(int64_t n, int64_t per_block);
#ifdef __cplusplus
}
#endif
"""

ROUND_SOURCE = """
#include "tensorlib.h"

int64_t tl_blocks_for(int64_t n, int64_t per_block) {
  return (n + per_block - 1) / per_block;
}
"""

ROUND_OP = """
#include <torch/all.h>
#include <ATen/cuda/CUDAContext.h>
#include "tensorlib.h"

__global__ void fill_kernel(float* __restrict__ out, const int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.f;
}

void fill_ones(torch::Tensor& out) {
  const int64_t n = out.numel();
  fill_kernel<<<tl_blocks_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(out.data_ptr<float>(), n);
}
"""

ROUND_MANIFEST = """
version: 0
models:
  - name: m
    fields: {hidden_size: 4096}
ops:
  - name: fill_ones
    file: src/cuda/fill.cu
    args:
      out: {shape: [num_tokens, hidden_size], dtype: float32}
"""


def _impact_of_library_change(tmp_path, text: str) -> dict:
    from analyzers.api import Workspace
    from bot.diff import from_git
    from bot.impact import BaseTree, analyse
    from bot.manifest import load
    from gitrepo import commit_all, git

    repo = tmp_path / "repo"
    (repo / "include").mkdir(parents=True)
    (repo / "src" / "cuda").mkdir(parents=True)
    (repo / "include" / "tensorlib.h").write_text(ROUND_HEADER)
    (repo / "src" / "tensorlib.c").write_text(ROUND_SOURCE)
    (repo / "src" / "cuda" / "fill.cu").write_text(ROUND_OP)
    (repo / "kernelvet.yaml").write_text(ROUND_MANIFEST)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "base")
    (repo / "src" / "tensorlib.c").write_text(text)
    commit_all(repo, "change")
    tree = BaseTree(repo, git(repo, "rev-parse", "main~1"))
    try:
        imp = analyse(repo, load(repo / "kernelvet.yaml"), from_git(repo, "main~1"), Workspace(repo), tree)
    finally:
        tree.close()
    [op] = [o for o in imp.ops if o.name == "fill_ones"]
    return {"decision": op.decision, "reasons": op.reasons}


def test_a_pull_request_changing_only_the_c_source_named_after_a_header_verifies_the_op(tmp_path):
    got = _impact_of_library_change(tmp_path / "a", ROUND_SOURCE.replace("(n + per_block - 1) / per_block",
                                                                        "n / per_block"))
    assert got["decision"] == "verify", got
    assert any(r.startswith("src/tensorlib.c changed (it defines a function") for r in got["reasons"]), got
    # A comment there: the op's IR, the linked definition's included, is the base's.
    got = _impact_of_library_change(tmp_path / "b", "// tensor library\n" + ROUND_SOURCE)
    assert got["decision"] == "unchanged", got


TABLE_HEADER = """
#pragma once
#include <stddef.h>
enum q_type { Q_F32 = 0, Q_F16 = 1, Q_I8 = 2, Q_Q8_0 = 3, Q_COUNT };
#ifdef __cplusplus
extern "C" {
#endif
size_t q_type_size(enum q_type t);
#ifdef __cplusplus
}
#endif
"""

# The table in C as ggml writes its type traits: entries by enum index, out of order, one left out
# (zero), members by name.
TABLE_SOURCE = """
#include "qtypes.h"
struct q_traits { const char * name; size_t type_size; };
static const struct q_traits traits[Q_COUNT] = {
    [Q_Q8_0] = {.type_size = 34, .name = "q8_0"},
    [Q_F32] = {.name = "f32", .type_size = 4},
    [Q_F16] = {.name = "f16", .type_size = 2},
};
size_t q_type_size(enum q_type t) { return traits[t].type_size; }
"""

TABLE_OP = """
#include <cuda_runtime.h>
#include "qtypes.h"
__global__ void fill_words(int* out) { out[threadIdx.x] = 0; }  // ACCESS
void fill_block(void) {
  int* out = nullptr;
  cudaMalloc((void**)&out, 8 * q_type_size(Q_Q8_0));
  fill_words<<<1, 64>>>(out);
}
"""


def test_a_c_table_with_designators_out_of_order_holds_each_entry_at_its_index(tmp_path):
    """q_type_size(Q_Q8_0) is 34: 272 bytes hold the 64 words the kernel writes (verified). The
    entry left out of the table (Q_I8) is zero: an allocation sized by it holds nothing."""
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "qtypes.h").write_text(TABLE_HEADER)
    (tmp_path / "src" / "cuda").mkdir(parents=True)
    (tmp_path / "src" / "qtypes.c").write_text(TABLE_SOURCE)
    (tmp_path / "src" / "cuda" / "fill.cu").write_text(TABLE_OP)
    [inst] = [i for i in _scan(tmp_path)["instances"] if i["op"] == "fill_block"]
    assert inst["verdict"] == "verified", inst
    (tmp_path / "src" / "cuda" / "fill.cu").write_text(TABLE_OP.replace("Q_Q8_0", "Q_I8"))
    doc = _scan(tmp_path)
    [inst] = [i for i in doc["instances"] if i["op"] == "fill_block"]
    assert inst["verdict"] == "bug", inst
    assert {(f["check"], f["location"]["line"]) for f in doc["findings"]} == {("oob", _line(TABLE_OP, "ACCESS"))}
