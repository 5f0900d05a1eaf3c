// Gated activations: out[t, :] = act(input[t, :d]) * input[t, d:], one block per token.
#include <torch/all.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "dispatch_utils.h"
#include "vec_types.cuh"

namespace minivllm {

__device__ __forceinline__ float silu(float x) { return x / (1.0f + __expf(-x)); }

__device__ __forceinline__ float gelu_tanh(float x) {
  const float k = 0.7978845608f;
  return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}

// Whole vectors when d is a multiple of VEC (rows stay 16-byte aligned); elementwise otherwise.
template <typename scalar_t, int VEC>
__global__ void silu_and_mul_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input, const int d) {
  const int64_t token = blockIdx.x;
  const scalar_t* x = input + token * 2 * d;
  const scalar_t* y = x + d;
  scalar_t* o = out + token * d;
  if (d % VEC == 0) {
    using vec = vec_t<scalar_t, VEC>;
    const vec* xv = reinterpret_cast<const vec*>(x);
    const vec* yv = reinterpret_cast<const vec*>(y);
    vec* ov = reinterpret_cast<vec*>(o);
    for (int i = threadIdx.x; i < d / VEC; i += blockDim.x) {
      const vec a = xv[i];
      const vec b = yv[i];
      vec r;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        r.val[j] = static_cast<scalar_t>(silu(static_cast<float>(a.val[j])) * static_cast<float>(b.val[j]));
      }
      ov[i] = r;
    }
  } else {
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
      o[i] = static_cast<scalar_t>(silu(static_cast<float>(x[i])) * static_cast<float>(y[i]));
    }
  }
}

template <typename scalar_t, int VEC>
__global__ void gelu_and_mul_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input, const int d) {
  using vec = vec_t<scalar_t, VEC>;
  const int64_t token = blockIdx.x;
  const vec* xv = reinterpret_cast<const vec*>(input + token * 2 * d);
  const vec* yv = reinterpret_cast<const vec*>(input + token * 2 * d + d);
  vec* ov = reinterpret_cast<vec*>(out + token * d);
  const int num_vec = ceil_div(d, VEC);
  for (int i = threadIdx.x; i < num_vec; i += blockDim.x) {
    const vec a = xv[i];
    const vec b = yv[i];
    vec r;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      r.val[j] = static_cast<scalar_t>(gelu_tanh(static_cast<float>(a.val[j])) * static_cast<float>(b.val[j]));
    }
    ov[i] = r;
  }
}

}  // namespace minivllm

#define LAUNCH_GATED_ACTIVATION(KERNEL)                                                            \
  const int d = input.size(-1) / 2;                                                                \
  const int64_t num_tokens = input.numel() / input.size(-1);                                       \
  dim3 grid(num_tokens);                                                                           \
  dim3 block(std::min(d, 1024));                                                                   \
  const at::cuda::OptionalCUDAGuard device_guard(device_of(input));                               \
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();                                    \
  MV_DISPATCH_FLOATING_TYPES(input.scalar_type(), #KERNEL, [&] {                                   \
    minivllm::KERNEL<scalar_t, 8><<<grid, block, 0, stream>>>(out.data_ptr<scalar_t>(),            \
                                                              input.data_ptr<scalar_t>(), d);      \
  });

void silu_and_mul(torch::Tensor& out, torch::Tensor& input) { LAUNCH_GATED_ACTIVATION(silu_and_mul_kernel) }

void gelu_and_mul(torch::Tensor& out, torch::Tensor& input) { LAUNCH_GATED_ACTIVATION(gelu_and_mul_kernel) }
