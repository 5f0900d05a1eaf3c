// kernelvet shim: TVM-FFI's CUDA device guard (one GPU: nothing to follow).
#pragma once
#include <cstdint>
namespace tvm {
namespace ffi {
struct CUDADeviceGuard {
  explicit CUDADeviceGuard(int32_t device_id) {}
};
}  // namespace ffi
}  // namespace tvm
