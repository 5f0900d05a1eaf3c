"""The shim headers stand in for the CUDA toolkit, torch (classic and stable ABI) and the C++ library:
snippets written the way inference code is written parse without errors, and their launchers are
found."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from analyzers.frontend import discover
from analyzers.frontend.parse import ParseConfig, parse_file

SNIPPETS = {
    # nvcc's implicit cuda_runtime.h brings the fixed-width integers, size_t, EXIT_FAILURE, the math
    # constants and std::min/max; `uint` is glibc's.
    "prelude_without_includes": ("""
        __global__ void scale(float* out, const float* in, uint n, int64_t stride) {
          const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) out[i * stride] = in[i] * static_cast<float>(M_SQRT1_2);
        }
        void launch(float* out, const float* in, uint n, int64_t stride, cudaStream_t stream) {
          const uint8_t unused = 0;
          const size_t blocks = std::max<size_t>(1, (n + 255) / 256);
          int devices = 0;
          if (cudaGetDeviceCount(&devices) != cudaSuccess) exit(EXIT_FAILURE);
          scale<<<blocks, 256, 0, stream>>>(out, in, n, stride);
        }
        """, ["launch"]),
    # The stable ABI: torch::stable::Tensor, ops, the accelerator guard, the AOTI stream, header-only
    # ScalarType, STD_TORCH_CHECK, THO dispatch and op registration.
    "stable_abi_launcher": ("""
        #include <torch/csrc/stable/library.h>
        #include <torch/csrc/stable/tensor.h>
        #include <torch/csrc/stable/ops.h>
        #include <torch/csrc/stable/accelerator.h>
        #include <torch/csrc/inductor/aoti_torch/c/shim.h>
        #include <torch/headeronly/core/ScalarType.h>
        #include <torch/headeronly/core/Dispatch.h>
        #include <torch/headeronly/util/Exception.h>
        #include <torch/headeronly/util/BFloat16.h>
        #include <torch/headeronly/util/Half.h>

        template <typename scalar_t>
        __global__ void silu_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ in, int64_t d) {
          const int64_t token = blockIdx.x;
          for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
            const float x = static_cast<float>(in[token * d + j]);
            out[token * d + j] = static_cast<scalar_t>(x / (1.f + __expf(-x)));
          }
        }

        torch::stable::Tensor silu(const torch::stable::Tensor& input) {
          STD_TORCH_CHECK(input.is_contiguous(), "input must be contiguous");
          STD_TORCH_CHECK_NOT_IMPLEMENTED(input.dim() == 2, "2-d only");
          const int32_t device = input.get_device_index();
          const torch::stable::accelerator::DeviceGuard guard(device);
          void* stream_ptr = nullptr;
          TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(device, &stream_ptr));
          const cudaStream_t stream = reinterpret_cast<cudaStream_t>(stream_ptr);
          const int64_t d = input.size(-1);
          const torch::stable::Tensor rows = torch::stable::reshape(input, {-1, d});
          torch::stable::Tensor out = torch::stable::empty_like(rows);
          torch::stable::Tensor scratch =
              torch::stable::empty({rows.size(0)}, torch::headeronly::ScalarType::Float, std::nullopt, input.device());
          THO_DISPATCH_SWITCH(input.scalar_type(), "silu",
              THO_DISPATCH_CASE(torch::headeronly::ScalarType::Half, [&] {
                silu_kernel<scalar_t><<<rows.size(0), 256, 0, stream>>>(
                    out.mutable_data_ptr<scalar_t>(), rows.const_data_ptr<scalar_t>(), d);
              })
              THO_DISPATCH_CASE(torch::headeronly::ScalarType::BFloat16, [&] {
                silu_kernel<scalar_t><<<rows.size(0), 256, 0, stream>>>(
                    out.mutable_data_ptr<scalar_t>(), rows.const_data_ptr<scalar_t>(), d);
              }));
          return out;
        }

        STABLE_TORCH_LIBRARY_IMPL(_C, CUDA, m) { m.impl("silu", TORCH_BOX(&silu)); }
        """, ["silu"]),
    # cooperative_groups: tiles, ranks, a reduction with cg::plus and cg::greater.
    "cooperative_groups_reduction": ("""
        #include <cooperative_groups.h>
        #include <cooperative_groups/reduce.h>
        namespace cg = cooperative_groups;

        template <int kThreads>
        __global__ void row_stats(float* __restrict__ sums, float* __restrict__ maxes,
                                  const float* __restrict__ x, int n) {
          __shared__ float partial[kThreads / 32];
          cg::thread_block block = cg::this_thread_block();
          cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
          float v = block.thread_rank() < n ? x[blockIdx.x * n + block.thread_rank()] : 0.f;
          const float s = cg::reduce(warp, v, cg::plus<float>());
          const float m = cg::reduce(warp, v, cg::greater<float>());
          if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = s;
          block.sync();
          if (block.thread_rank() == 0) { sums[blockIdx.x] = partial[0]; maxes[blockIdx.x] = m; }
        }

        void launch_row_stats(float* sums, float* maxes, const float* x, int rows, int n, cudaStream_t s) {
          row_stats<256><<<rows, 256, 0, s>>>(sums, maxes, x, n);
        }
        """, ["launch_row_stats"]),
    # Programmatic dependent launch through cudaLaunchKernelEx, with the kernel named directly and
    # through a pointer variable.
    "launch_kernel_ex": ("""
        __global__ void add_one(int* p, int n) {
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
          cudaGridDependencySynchronize();
        #endif
          const int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) p[i] += 1;
        }

        void launch_direct(int* p, int n, cudaStream_t stream) {
          cudaLaunchConfig_t config = {};
          config.gridDim = dim3((n + 127) / 128);
          config.blockDim = dim3(128);
          config.dynamicSmemBytes = 0;
          config.stream = stream;
          cudaLaunchAttribute attrs[1];
          attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
          attrs[0].val.programmaticStreamSerializationAllowed = 1;
          config.attrs = attrs;
          config.numAttrs = 1;
          cudaLaunchKernelEx(&config, add_one, p, n);
        }

        void launch_through_pointer(int* p, int n, cudaStream_t stream) {
          cudaLaunchConfig_t config;
          config.gridDim = (n + 127) / 128;
          config.blockDim = 128;
          config.dynamicSmemBytes = 0;
          config.stream = stream;
          config.attrs = nullptr;
          config.numAttrs = 0;
          auto* kernel = &add_one;
          if (cudaLaunchKernelEx(&config, kernel, p, n) != cudaSuccess) abort();
        }
        """, ["launch_direct", "launch_through_pointer"]),
    # The classic extension API with the pieces real launchers use beyond tensors.
    # What SGLang, FlashInfer and ggml-cuda files include and write: smart pointers compared with
    # nullptr, c10::irange, libcu++'s <cuda/cmath>, nv_half, the SIMD video intrinsics.
    "inference_repository_idioms": ("""
        #include <torch/all.h>
        #include <ATen/cuda/CUDAContext.h>
        #include <c10/util/irange.h>
        #include <cuda/cmath>
        #include <cuda/functional>
        #include <cuda/std/optional>
        #include <cuda_fp16.h>
        #include <memory>

        struct Plan { int blocks; };

        __global__ void count_nonzero(unsigned int* out, const unsigned int* packed, const nv_half* w, int n) {
          const int i = blockIdx.x * blockDim.x + threadIdx.x;
          cuda::std::optional<unsigned int> cap = cuda::std::nullopt;
          if (i < n) out[i] = cuda::maximum<unsigned int>{}(cap.value_or(0u),
              __vsadu4(__vsetne4(packed[i], 0u), 0u) + __vcmpne4(packed[i], 0u) + __vabsss2(packed[i]));
        }

        void launch(torch::Tensor& out, const torch::Tensor& packed, const torch::Tensor& w) {
          static std::unique_ptr<Plan> plan;
          std::shared_ptr<Plan> shared;
          if (plan == nullptr || nullptr != shared || !plan) { plan = std::make_unique<Plan>(); }
          for (const auto d : c10::irange(packed.dim())) { TORCH_CHECK(packed.size(d) == out.size(d)); }
          for (const auto d : at::irange(1, packed.dim())) { TORCH_CHECK(packed.size(d) > 0); }
          const int n = packed.numel();
          count_nonzero<<<cuda::ceil_div(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
              reinterpret_cast<unsigned int*>(out.data_ptr()), reinterpret_cast<const unsigned int*>(packed.data_ptr()),
              reinterpret_cast<const nv_half*>(w.data_ptr()), cuda::round_up(n, 4) - cuda::round_down(n, 4) + n);
        }
        """, ["launch"]),
    "classic_extension_extras": ("""
        #include <torch/all.h>
        #include <ATen/cuda/CUDAContext.h>
        #include <ATen/cuda/Atomic.cuh>
        #include <c10/cuda/CUDAGuard.h>
        #include <cub/cub.cuh>
        #include <cub/device/device_radix_sort.cuh>
        #include <cuda_fp8.h>
        #include <cuda/std/limits>
        #include <cuda/std/functional>
        #include <numeric>
        #include <tuple>

        __global__ void count_experts(int* counts, const int* ids, int n) {
          const int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) gpuAtomicAdd(&counts[ids[i]], 1);
          const float inf = cuda::std::numeric_limits<float>::infinity();
          (void)inf;
        }

        __global__ void to_fp8(__nv_fp8_e4m3* out, const __nv_bfloat16* in, int n) {
          const int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) {
            out[i] = __nv_fp8_e4m3(__bfloat162float(in[i]));
            const __nv_fp8x2_e4m3 pair(make_float2(1.f, 2.f));
            (void)pair;
            const int dot = __dp4a(0x01010101, 0x02020202, 0);
            (void)dot;
          }
        }

        void count(torch::Tensor& counts, const torch::Tensor& ids) {
          const at::cuda::OptionalCUDAGuard guard(device_of(ids));
          TORCH_CHECK(counts.device() == ids.device(), "same device")
          const int n = ids.numel();
          const int align = std::gcd(n, 8);
          const auto [blocks, threads] = std::make_tuple((n + 255) / 256, 256);
          (void)align;
          std::optional<int> limit = std::nullopt;
          (void)limit;
          count_experts<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
              counts.data_ptr<int>(), ids.data_ptr<int>(), n);
        }
        """, ["count"]),
    # FlashInfer's utilities: a pack type aligned with CUDA's own macro, a workspace carved with
    # std::align, trait checks on its policies, a finite-and-normal test, the cluster-size query.
    "flashinfer_utilities": ("""
        #include <cmath>
        #include <memory>
        #include <type_traits>
        #include <cuda_runtime.h>
        template <typename T, int N> struct PackType;
        template <typename T> struct PackType<T, 1> {
          struct __CUDA_ALIGN__(std::alignment_of_v<T>) type { T array[1]; };
        };
        struct Policy { int block; };
        static_assert(std::is_copy_constructible_v<Policy> && std::is_move_constructible_v<Policy>);
        __global__ void halve(float* x, int n) {
          const int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n && std::isnormal(x[i])) x[i] *= 0.5f;
        }
        void run(float* x, int n, void* workspace, size_t bytes, cudaStream_t stream) {
          void* p = workspace;
          size_t space = bytes;
          (void)std::align(16, 64, p, space);
          cudaLaunchConfig_t config = {};
          int cluster = 0;
          cudaOccupancyMaxPotentialClusterSize(&cluster, (const void*)halve, &config);
          PackType<float, 1>::type one{};
          (void)one;
          halve<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
        }
        """, ["run"]),
    # A block reduction of each thread's several items with a functor (FlashInfer's sampling:
    # the last valid index of a tile, `BlockReduce<int, ...>.Reduce(valid_index, MaxReduceOp{})`).
    "cub_reduce_items_with_functor": ("""
        #include <cub/cub.cuh>
        #include <cuda/functional>
        template <int BLOCK_THREADS, int VEC_SIZE>
        __global__ void last_valid(const float* __restrict__ probs, int* __restrict__ out, int d) {
          using BlockReduce = cub::BlockReduce<int, BLOCK_THREADS>;
          __shared__ typename BlockReduce::TempStorage storage;
          int valid_index[VEC_SIZE];
          for (int j = 0; j < VEC_SIZE; ++j) {
            const int i = threadIdx.x * VEC_SIZE + j;
            valid_index[j] = i < d && probs[i] > 0.f ? i : -1;
          }
          const int last = BlockReduce(storage).Reduce(valid_index, cuda::maximum<>{});
          if (threadIdx.x == 0) *out = last;
        }
        void find_last_valid(const float* probs, int* out, int d, cudaStream_t stream) {
          last_valid<256, 4><<<1, 256, 0, stream>>>(probs, out, d);
        }
        """, ["find_last_valid"]),
    # A member template called on a dependent object or class without the `template` keyword,
    # which nvcc accepts and clang does not (FlashInfer's sampling kernels and vector casts):
    # parsed as if it were written.
    "member_template_call_without_keyword": ("""
        #include <cstdint>
        #include <cub/cub.cuh>
        struct BoolDiffOp {
          __device__ bool operator()(const bool& a, const bool& b) const { return a != b; }
        };
        template <typename T, typename S> struct vec_cast {
          template <uint32_t N> __device__ static void cast(T* dst, const S* src) {
            for (uint32_t j = 0; j < N; ++j) dst[j] = static_cast<T>(src[j]);
          }
        };
        template <typename T, typename S, uint32_t N> __device__ void cast_from(T* dst, const S* src) {
          vec_cast<T, S>::cast<N>(dst, src);
        }
        template <uint32_t BLOCK_THREADS, uint32_t VEC_SIZE>
        __global__ void flag_changes(const bool* __restrict__ in, bool* __restrict__ out) {
          __shared__ typename cub::BlockAdjacentDifference<bool, BLOCK_THREADS>::TempStorage storage;
          bool items[VEC_SIZE], flags[VEC_SIZE];
          bool loaded[VEC_SIZE];
          for (uint32_t j = 0; j < VEC_SIZE; ++j) loaded[j] = in[threadIdx.x * VEC_SIZE + j];
          cast_from<bool, bool, VEC_SIZE>(items, loaded);
          cub::BlockAdjacentDifference<bool, BLOCK_THREADS>(storage)
              .SubtractLeft<VEC_SIZE>(items, flags, BoolDiffOp());
          for (uint32_t j = 0; j < VEC_SIZE; ++j) out[threadIdx.x * VEC_SIZE + j] = flags[j];
        }
        void flag(const bool* in, bool* out, cudaStream_t stream) {
          flag_changes<128, 4><<<1, 128, 0, stream>>>(in, out);
        }
        """, ["flag"]),
}


def _parse(tmp_path: Path, name: str, source: str):
    path = tmp_path / f"{name}.cu"
    path.write_text(textwrap.dedent(source))
    return parse_file(path, ParseConfig(tmp_path)), path


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_parses_and_its_launchers_are_found(name, tmp_path):
    source, expected = SNIPPETS[name]
    parsed, path = _parse(tmp_path, name, source)
    errors = [f"{e.file}:{e.line}:{e.col}: {e.message}" for e in parsed.errors]
    assert not errors, "\n".join(errors)
    assert not [n for n in parsed.graph.notes if n.why == "missing"], "an include resolved nowhere"
    found = sorted(c.spelling for c in discover.launchers(parsed.tu, path))
    assert found == sorted(expected)


def test_launch_kernel_ex_names_its_kernel(tmp_path):
    """cudaLaunchKernelEx's kernel is resolved when it is named, or held in a variable never
    reassigned; a kernel chosen at run time is not guessed."""
    source = """
        __global__ void k1(int* p) { p[threadIdx.x] = 1; }
        __global__ void k2(int* p) { p[threadIdx.x] = 2; }
        void named(int* p, cudaLaunchConfig_t* c) { cudaLaunchKernelEx(c, k1, p); }
        void variable(int* p, cudaLaunchConfig_t* c) { auto* k = &k2; cudaLaunchKernelEx(c, k, p); }
        void chosen(int* p, cudaLaunchConfig_t* c, bool second) {
          auto* k = &k1;
          if (second) k = &k2;
          cudaLaunchKernelEx(c, k, p);
        }
        """
    parsed, path = _parse(tmp_path, "chosen", source)
    assert not parsed.errors
    kernels = {}
    for fn in discover.launchers(parsed.tu, path):
        for node in fn.walk_preorder():
            if discover.is_launch_ex(node):
                k = discover.launched_kernel(list(node.get_arguments())[1])
                kernels[fn.spelling] = k.spelling if k is not None else None
    assert kernels == {"named": "k1", "variable": "k2", "chosen": None}


def test_rocm_branches_are_harmless(tmp_path):
    """HIP headers included under USE_ROCM resolve nowhere (they are stubbed) and are never read."""
    source = """
        #ifdef USE_ROCM
          #include <hip/hip_runtime.h>
          #include <hipcub/hipcub.hpp>
        #else
          #include <cub/cub.cuh>
        #endif
        __global__ void k(float* p) { p[threadIdx.x] = 0.f; }
        void launch(float* p) { k<<<1, 32>>>(p); }
        """
    parsed, path = _parse(tmp_path, "rocm", source)
    assert not parsed.errors
    assert [c.spelling for c in discover.launchers(parsed.tu, path)] == ["launch"]


# An error inside a shim is not in the user's file, so nothing else would show it, while every
# program including the header silently loses what the broken declaration declared.
HEADERS = ("cuda_runtime.h", "cuda.h", "call_kernel.h", "curand_kernel.h", "cooperative_groups.h",
           "cub/cub.cuh", "helper_math.h", "cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "torch/all.h",
           "ATen/cuda/CUDAContext.h", "stdio.h", "stdlib.h", "string.h", "time.h", "sys/time.h", "math.h",
           "assert.h", "vector", "algorithm", "cstdio", "cstdlib", "cmath", "cstring", "ctime")


def test_the_shim_headers_parse_without_errors(tmp_path):
    parsed, _ = _parse(tmp_path, "all_headers", "".join(f"#include <{h}>\n" for h in HEADERS) + "int main() { return 0; }\n")
    assert not parsed.errors, [f"{e.file}:{e.line}: {e.message}" for e in parsed.errors]


def test_a_call_without_a_body_is_an_assumption_only_where_its_result_can_matter(tmp_path):
    """A float result (a float2 too) is opaque to the engine whatever its source: no note. An integer
    result is any value of its type, and the instance says so."""
    from analyzers.api import Workspace

    (tmp_path / "k.cu").write_text(textwrap.dedent("""
        #include <cuda_fp16.h>
        __device__ int bucket_of(int token);
        __global__ void widen(const __half2* __restrict__ in, float2* __restrict__ out, int* __restrict__ ids,
                              const int n) {
          const int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) {
            out[i] = __half22float2(in[i]);
            ids[i] = bucket_of(i);
          }
        }
        void widen_launch(const __half2* in, float2* out, int* ids, const int n, cudaStream_t stream) {
          if (n > 0) widen<<<(n + 255) / 256, 256, 0, stream>>>(in, out, ids, n);
        }
        """))
    ws = Workspace(tmp_path)
    [name] = ws.entry_points("k.cu")
    result = ws.verify_zero_config(ws.op("k.cu", name))
    assert any(a.startswith("bucket_of has no body") for a in result.assumptions), result.assumptions
    assert not any("__half22float2" in a for a in result.assumptions), result.assumptions
