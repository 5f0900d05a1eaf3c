// kernelvet shim: TVM-FFI's tensors (FlashInfer's op layer). TensorView and Tensor are tensors as
// at::Tensor is (engine/models/torch.py and tvm_ffi.py model their methods); Optional<T> is an
// optional as std::optional is.
#pragma once
#include <cstdint>
#include <dlpack/dlpack.h>
#include <kernelvet_torch.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/dtype.h>

namespace tvm {
namespace ffi {
using ShapeView = c10::IntArrayRef;
class Tensor;
#define __KV_TVM_FFI_TENSOR_METHODS                        \
  int64_t size(int64_t i) const;                           \
  int64_t stride(int64_t i) const;                         \
  int64_t numel() const;                                   \
  int32_t ndim() const;                                    \
  void* data_ptr() const;                                  \
  DLDataType dtype() const;                                \
  DLDevice device() const;                                 \
  bool IsContiguous() const;                               \
  ShapeView shape() const;                                 \
  ShapeView sizes() const;                                 \
  ShapeView strides() const;                               \
  int64_t byte_offset() const;
class TensorView {
 public:
  TensorView(const Tensor& t);
  __KV_TVM_FFI_TENSOR_METHODS
};
class Tensor {
 public:
  __KV_TVM_FFI_TENSOR_METHODS
  // A tensor an op allocates through its environment's allocator (no body: its memory is unknown).
  template <class Alloc, class ShapeT>
  static Tensor FromEnvAlloc(Alloc alloc, ShapeT shape, DLDataType dtype, DLDevice device);
};
#undef __KV_TVM_FFI_TENSOR_METHODS
template <class T> using Optional = std::optional<T>;
using Shape = c10::IntArrayRef;
}  // namespace ffi
}  // namespace tvm
