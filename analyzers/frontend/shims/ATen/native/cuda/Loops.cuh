// kernelvet shim: ATen's elementwise launchers over a TensorIterator, declared (see
// ATen/native/TensorIterator.h): a call is not modelled, and the op is inconclusive there.
#pragma once
#include <kernelvet_torch.h>
#include <ATen/native/TensorIterator.h>

#ifndef GPU_LAMBDA
#define GPU_LAMBDA __host__ __device__
#endif

namespace at {
namespace native {
template <typename func_t> void gpu_kernel(TensorIteratorBase& iter, const func_t& f);
template <typename func_t> void gpu_kernel_with_scalars(TensorIteratorBase& iter, const func_t& f);
template <typename func_t> void gpu_kernel_nocast(TensorIteratorBase& iter, const func_t& f);
}  // namespace native
}  // namespace at
