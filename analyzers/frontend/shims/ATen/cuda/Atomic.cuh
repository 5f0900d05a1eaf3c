// kernelvet shim: ATen's device atomics, written with the modelled CUDA atomics (each reads and
// writes through its pointer).
#pragma once
#include <kernelvet_torch.h>
template <class T> __device__ inline T gpuAtomicAdd(T* address, T val) { return atomicAdd(address, val); }
template <class T> __device__ inline void gpuAtomicAddNoReturn(T* address, T val) { atomicAdd(address, val); }
template <class T> __device__ inline T gpuAtomicMax(T* address, T val) { return atomicMax(address, val); }
template <class T> __device__ inline T gpuAtomicMin(T* address, T val) { return atomicMin(address, val); }
template <class T> __device__ inline T gpuAtomicMul(T* address, T val) { return atomicExch(address, val); }
namespace at {
namespace native {
template <class T, class index_t>
__device__ inline void fastAtomicAdd(T* tensor, index_t index, const index_t numel, T value, bool fast_atomics) {
  atomicAdd(tensor + index, value);
}
}  // namespace native
}  // namespace at
