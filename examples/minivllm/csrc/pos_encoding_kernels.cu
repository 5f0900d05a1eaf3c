// Rotary embedding (NeoX layout) applied in place to query and key, one block per token.
#include <torch/all.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "dispatch_utils.h"

namespace minivllm {

template <typename scalar_t>
__device__ __forceinline__ void rotate_pair(scalar_t* __restrict__ head, const scalar_t* __restrict__ cos_ptr,
                                            const scalar_t* __restrict__ sin_ptr, const int rot,
                                            const int embed_dim) {
  const int x_index = rot;
  const int y_index = embed_dim + rot;
  const float c = static_cast<float>(cos_ptr[x_index]);
  const float s = static_cast<float>(sin_ptr[x_index]);
  const float x = static_cast<float>(head[x_index]);
  const float y = static_cast<float>(head[y_index]);
  head[x_index] = static_cast<scalar_t>(x * c - y * s);
  head[y_index] = static_cast<scalar_t>(y * c + x * s);
}

template <typename scalar_t>
__global__ void rotary_embedding_kernel(const int64_t* __restrict__ positions, scalar_t* __restrict__ query,
                                        scalar_t* __restrict__ key, const scalar_t* __restrict__ cos_sin_cache,
                                        const int rot_dim, const int64_t query_stride, const int64_t key_stride,
                                        const int num_heads, const int num_kv_heads, const int head_size) {
  const int token_idx = blockIdx.x;
  const int64_t pos = positions[token_idx];
  const scalar_t* cache_ptr = cos_sin_cache + pos * rot_dim;
  const int embed_dim = rot_dim / 2;
  const scalar_t* cos_ptr = cache_ptr;
  const scalar_t* sin_ptr = cache_ptr + embed_dim;

  const int nq = num_heads * embed_dim;
  for (int i = threadIdx.x; i < nq; i += blockDim.x) {
    const int head = i / embed_dim;
    const int64_t offset = token_idx * query_stride + head * head_size;
    rotate_pair(query + offset, cos_ptr, sin_ptr, i % embed_dim, embed_dim);
  }
  const int nk = num_kv_heads * embed_dim;
  for (int i = threadIdx.x; i < nk; i += blockDim.x) {
    const int head = i / embed_dim;
    const int64_t offset = token_idx * key_stride + head * head_size;
    rotate_pair(key + offset, cos_ptr, sin_ptr, i % embed_dim, embed_dim);
  }
}

}  // namespace minivllm

void rotary_embedding(torch::Tensor& positions, torch::Tensor& query, torch::Tensor& key, int64_t head_size,
                      torch::Tensor& cos_sin_cache) {
  const int64_t num_tokens = positions.numel();
  const int rot_dim = cos_sin_cache.size(1);
  const int num_heads = query.size(-1) / head_size;
  const int num_kv_heads = key.size(-1) / head_size;
  TORCH_CHECK(rot_dim <= head_size, "rotary dimension larger than the head");

  dim3 grid(num_tokens);
  dim3 block(std::min<int64_t>(num_heads * rot_dim / 2, 512));
  const at::cuda::OptionalCUDAGuard device_guard(device_of(query));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  MV_DISPATCH_FLOATING_TYPES(query.scalar_type(), "rotary_embedding", [&] {
    minivllm::rotary_embedding_kernel<scalar_t><<<grid, block, 0, stream>>>(
        positions.data_ptr<int64_t>(), query.data_ptr<scalar_t>(), key.data_ptr<scalar_t>(),
        cos_sin_cache.data_ptr<scalar_t>(), rot_dim, query.stride(0), key.stride(0), num_heads, num_kv_heads,
        head_size);
  });
}
