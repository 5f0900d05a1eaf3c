// Writes each token's key and value into the paged KV cache, at the slot the scheduler gave it.
// Cache layout: [num_blocks, block_size, num_kv_heads, head_size].
#include <torch/all.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "dispatch_utils.h"

namespace minivllm {

template <typename scalar_t>
__global__ void reshape_and_cache_flash_kernel(const scalar_t* __restrict__ key, const scalar_t* __restrict__ value,
                                               scalar_t* __restrict__ key_cache, scalar_t* __restrict__ value_cache,
                                               const int64_t* __restrict__ slot_mapping, const int64_t block_stride,
                                               const int64_t key_stride, const int64_t value_stride,
                                               const int num_heads, const int head_size, const int block_size) {
  const int64_t token_idx = blockIdx.x;
  const int64_t slot_idx = slot_mapping[token_idx];
  if (slot_idx < 0) {
    return;  // a padding token: nothing to cache
  }
  const int64_t block_idx = slot_idx / block_size;
  const int64_t block_offset = slot_idx % block_size;
  const int n = num_heads * head_size;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const int64_t tgt = block_idx * block_stride + block_offset * n + i;
    key_cache[tgt] = key[token_idx * key_stride + i];
    value_cache[tgt] = value[token_idx * value_stride + i];
  }
}

}  // namespace minivllm

void reshape_and_cache_flash(torch::Tensor& key, torch::Tensor& value, torch::Tensor& key_cache,
                             torch::Tensor& value_cache, torch::Tensor& slot_mapping) {
  const int64_t num_tokens = slot_mapping.size(0);
  const int num_heads = key.size(1);
  const int head_size = key.size(2);
  const int block_size = key_cache.size(1);
  TORCH_CHECK(key_cache.size(2) == num_heads && key_cache.size(3) == head_size, "cache layout mismatch");

  dim3 grid(num_tokens);
  dim3 block(std::min(num_heads * head_size, 512));
  const at::cuda::OptionalCUDAGuard device_guard(device_of(key));
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  MV_DISPATCH_FLOATING_TYPES(key.scalar_type(), "reshape_and_cache_flash", [&] {
    minivllm::reshape_and_cache_flash_kernel<scalar_t><<<grid, block, 0, stream>>>(
        key.data_ptr<scalar_t>(), value.data_ptr<scalar_t>(), key_cache.data_ptr<scalar_t>(),
        value_cache.data_ptr<scalar_t>(), slot_mapping.data_ptr<int64_t>(), key_cache.stride(0), key.stride(0),
        value.stride(0), num_heads, head_size, block_size);
  });
}
