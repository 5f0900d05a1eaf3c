// int8 quantization: with a static scale over the whole tensor, and with a dynamic scale per token.
#include <torch/all.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "dispatch_utils.h"
#include "vec_types.cuh"

namespace minivllm {

__device__ __forceinline__ int8_t to_int8(float x) {
  const float r = fminf(fmaxf(rintf(x), -128.0f), 127.0f);
  return static_cast<int8_t>(r);
}

template <typename scalar_t>
__global__ void static_scaled_int8_quant_kernel(int8_t* __restrict__ out, const scalar_t* __restrict__ input,
                                                const float* __restrict__ scale, const int num_elems) {
  const float inv_scale = 1.0f / scale[0];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < num_elems; i += stride) {
    out[i] = to_int8(static_cast<float>(input[i]) * inv_scale);
  }
}

constexpr int kTokensPerBlock = 4;

// Block (32, kTokensPerBlock): one warp per token, threadIdx.y picks one of the block's tokens.
template <typename scalar_t>
__global__ void dynamic_per_token_int8_quant_kernel(int8_t* __restrict__ out, float* __restrict__ scales,
                                                    const scalar_t* __restrict__ input, const int hidden_size,
                                                    const int64_t num_tokens) {
  const int64_t token = static_cast<int64_t>(blockIdx.x) * kTokensPerBlock + threadIdx.y;
  const scalar_t* row = input + token * hidden_size;
  float amax = 0.0f;
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
    amax = fmaxf(amax, fabsf(static_cast<float>(row[i])));
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  }
  const float scale = amax / 127.0f;
  if (threadIdx.x == 0) {
    scales[token] = scale;
  }
  for (int i = threadIdx.x; i < hidden_size; i += blockDim.x) {
    out[token * hidden_size + i] = to_int8(static_cast<float>(row[i]) / scale);
  }
}

}  // namespace minivllm

void static_scaled_int8_quant(torch::Tensor& out, torch::Tensor& input, torch::Tensor& scale) {
  const int num_elems = input.numel();
  dim3 grid(minivllm::ceil_div(num_elems, 256));
  dim3 block(256);
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  MV_DISPATCH_FLOATING_TYPES(input.scalar_type(), "static_scaled_int8_quant", [&] {
    minivllm::static_scaled_int8_quant_kernel<scalar_t><<<grid, block, 0, stream>>>(
        out.data_ptr<int8_t>(), input.data_ptr<scalar_t>(), scale.data_ptr<float>(), num_elems);
  });
}

void dynamic_per_token_int8_quant(torch::Tensor& out, torch::Tensor& scales, torch::Tensor& input) {
  const int hidden_size = input.size(-1);
  const int64_t num_tokens = input.numel() / hidden_size;
  dim3 grid(minivllm::ceil_div<int64_t>(num_tokens, minivllm::kTokensPerBlock));
  dim3 block(32, minivllm::kTokensPerBlock);
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  MV_DISPATCH_FLOATING_TYPES(input.scalar_type(), "dynamic_per_token_int8_quant", [&] {
    minivllm::dynamic_per_token_int8_quant_kernel<scalar_t><<<grid, block, 0, stream>>>(
        out.data_ptr<int8_t>(), scales.data_ptr<float>(), input.data_ptr<scalar_t>(), hidden_size, num_tokens);
  });
}
