// A fixed-width vector of elements, loaded and stored as one aligned access.
#pragma once

#include <cuda_runtime.h>

namespace minivllm {

template <typename T, int N>
struct alignas(sizeof(T) * N) vec_t {
  T val[N];
};

template <typename T>
__host__ __device__ constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

}  // namespace minivllm
