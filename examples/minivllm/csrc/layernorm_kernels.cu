// RMSNorm and fused residual-add + RMSNorm, one block per token.
#include <torch/all.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cub/cub.cuh>

#include "dispatch_utils.h"
#include "vec_types.cuh"

namespace minivllm {

constexpr int kMaxBlock = 1024;

__device__ __forceinline__ float block_sum(float value) {
  using BlockReduce = cub::BlockReduce<float, kMaxBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  return BlockReduce(storage).Sum(value, blockDim.x);
}

// Rows are addressed in 64 bits: num_tokens * hidden_size exceeds 2^31 for long prompts.
template <typename scalar_t, int VEC>
__global__ void rms_norm_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input,
                                const scalar_t* __restrict__ weight, const float epsilon,
                                const int hidden_size) {
  __shared__ float s_inv_rms;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * hidden_size;
  const scalar_t* in_row = input + row;

  float sum_sq = 0.0f;
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
    const float x = static_cast<float>(in_row[i]);
    sum_sq += x * x;
  }
  sum_sq = block_sum(sum_sq);
  if (threadIdx.x == 0) {
    s_inv_rms = rsqrtf(sum_sq / hidden_size + epsilon);
  }
  __syncthreads();

  // hidden_size is a multiple of VEC (the launcher checks it), so whole vectors cover the row.
  using vec = vec_t<scalar_t, VEC>;
  const vec* in_vec = reinterpret_cast<const vec*>(in_row);
  const vec* w_vec = reinterpret_cast<const vec*>(weight);
  vec* out_vec = reinterpret_cast<vec*>(out + row);
  for (int i = threadIdx.x; i < hidden_size / VEC; i += blockDim.x) {
    const vec x = in_vec[i];
    const vec w = w_vec[i];
    vec y;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      y.val[j] = static_cast<scalar_t>(static_cast<float>(x.val[j]) * s_inv_rms * static_cast<float>(w.val[j]));
    }
    out_vec[i] = y;
  }
}

template <typename scalar_t, int VEC>
__global__ void fused_add_rms_norm_kernel(scalar_t* __restrict__ input, scalar_t* __restrict__ residual,
                                          const scalar_t* __restrict__ weight, const float epsilon,
                                          const int hidden_size) {
  using vec = vec_t<scalar_t, VEC>;
  __shared__ float s_inv_rms;
  const int vec_hidden_size = hidden_size / VEC;
  vec* input_v = reinterpret_cast<vec*>(input);
  vec* residual_v = reinterpret_cast<vec*>(residual);
  const vec* weight_v = reinterpret_cast<const vec*>(weight);

  float sum_sq = 0.0f;
  for (int idx = threadIdx.x; idx < vec_hidden_size; idx += blockDim.x) {
    const int id = blockIdx.x * vec_hidden_size + idx;
    vec x = input_v[id];
    vec r = residual_v[id];
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      const float z = static_cast<float>(x.val[j]) + static_cast<float>(r.val[j]);
      sum_sq += z * z;
      r.val[j] = static_cast<scalar_t>(z);
    }
    residual_v[id] = r;
  }
  sum_sq = block_sum(sum_sq);
  if (threadIdx.x == 0) {
    s_inv_rms = rsqrtf(sum_sq / hidden_size + epsilon);
  }
  __syncthreads();

  for (int idx = threadIdx.x; idx < vec_hidden_size; idx += blockDim.x) {
    const int id = blockIdx.x * vec_hidden_size + idx;
    const vec r = residual_v[id];
    const vec w = weight_v[idx];
    vec y;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      y.val[j] = static_cast<scalar_t>(static_cast<float>(r.val[j]) * s_inv_rms * static_cast<float>(w.val[j]));
    }
    input_v[id] = y;
  }
}

}  // namespace minivllm

void rms_norm(torch::Tensor& out, torch::Tensor& input, torch::Tensor& weight, double epsilon) {
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous());
  const int hidden_size = input.size(-1);
  const int64_t num_tokens = input.numel() / hidden_size;
  TORCH_CHECK(hidden_size % 8 == 0, "hidden_size must be a multiple of 8");

  dim3 grid(num_tokens);
  dim3 block(std::min(hidden_size, minivllm::kMaxBlock));
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  MV_DISPATCH_FLOATING_TYPES(input.scalar_type(), "rms_norm_kernel", [&] {
    minivllm::rms_norm_kernel<scalar_t, 8><<<grid, block, 0, stream>>>(
        out.data_ptr<scalar_t>(), input.data_ptr<scalar_t>(), weight.data_ptr<scalar_t>(), epsilon, hidden_size);
  });
}

void fused_add_rms_norm(torch::Tensor& input, torch::Tensor& residual, torch::Tensor& weight, double epsilon) {
  const int hidden_size = input.size(-1);
  const int64_t num_tokens = input.numel() / hidden_size;
  TORCH_CHECK(hidden_size % 8 == 0, "hidden_size must be a multiple of 8");

  dim3 grid(num_tokens);
  dim3 block(std::min(hidden_size / 8, minivllm::kMaxBlock));
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  MV_DISPATCH_FLOATING_TYPES(input.scalar_type(), "fused_add_rms_norm_kernel", [&] {
    minivllm::fused_add_rms_norm_kernel<scalar_t, 8><<<grid, block, 0, stream>>>(
        input.data_ptr<scalar_t>(), residual.data_ptr<scalar_t>(), weight.data_ptr<scalar_t>(), epsilon,
        hidden_size);
  });
}
