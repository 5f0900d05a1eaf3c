// kernelvet shim: PyTorch's stable ABI for extensions (torch/csrc/stable/..., the AOTI C shim).
// torch::stable::Tensor is modelled by the engine as a tensor, like at::Tensor: its methods and the
// ops below are answered by analyzers/engine/models/torch.py under their torch::stable names.
#pragma once
#include <kernelvet/torch_headeronly.h>
#include <string>

// torch/csrc/inductor/aoti_torch/c/shim.h: the C interface underneath.
typedef int32_t AOTITorchError;
#define AOTI_TORCH_SUCCESS 0
#define AOTI_TORCH_FAILURE 1
struct AtenTensorOpaque;
typedef AtenTensorOpaque* AtenTensorHandle;
struct StreamOpaque;
typedef StreamOpaque* StreamHandle;
typedef uint64_t StableIValue;
extern "C" {
AOTITorchError aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);
AOTITorchError aoti_torch_get_device_index(AtenTensorHandle tensor, int32_t* ret_device_index);
AOTITorchError aoti_torch_get_current_device_index(int32_t* ret_device_index);
AOTITorchError torch_get_current_cuda_blas_handle(void** ret_handle);
AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor);
}

namespace torch {
namespace stable {
using DeviceIndex = int32_t;
using c10::DeviceType;
using torch::headeronly::ScalarType;
using torch::headeronly::Layout;
using torch::headeronly::MemoryFormat;
using torch::headeronly::IntHeaderOnlyArrayRef;

class Device {
 public:
  Device(DeviceType type, DeviceIndex index = -1);
  DeviceType type() const;
  DeviceIndex index() const;
  void set_index(DeviceIndex index);
  bool has_index() const;
  bool is_cuda() const;
  bool is_cpu() const;
};
bool operator==(const Device& a, const Device& b);
bool operator!=(const Device& a, const Device& b);

// torch/csrc/stable/tensor.h
class Tensor {
 public:
  Tensor();
  explicit Tensor(AtenTensorHandle handle);
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  AtenTensorHandle get() const;
  void* data_ptr() const;
  void* mutable_data_ptr() const;
  template <typename T> T* mutable_data_ptr() const;
  const void* const_data_ptr() const;
  template <typename T> const T* const_data_ptr() const;
  int64_t dim() const;
  int64_t numel() const;
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  IntHeaderOnlyArrayRef sizes() const;
  IntHeaderOnlyArrayRef strides() const;
  int64_t storage_offset() const;
  size_t element_size() const;
  ScalarType scalar_type() const;
  Device device() const;
  DeviceIndex get_device() const;
  DeviceIndex get_device_index() const;
  Layout layout() const;
  bool is_contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;
  bool is_cuda() const;
  bool is_cpu() const;
  bool defined() const;
  void set_requires_grad(bool requires_grad);
};

// torch/csrc/stable/ops.h
Tensor empty(IntHeaderOnlyArrayRef size, std::optional<ScalarType> dtype = std::nullopt,
             std::optional<Layout> layout = std::nullopt, std::optional<Device> device = std::nullopt,
             std::optional<bool> pin_memory = std::nullopt, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor empty_like(const Tensor& self);
Tensor new_empty(const Tensor& self, IntHeaderOnlyArrayRef size, std::optional<ScalarType> dtype = std::nullopt,
                 std::optional<Layout> layout = std::nullopt, std::optional<Device> device = std::nullopt,
                 std::optional<bool> pin_memory = std::nullopt);
Tensor new_zeros(const Tensor& self, IntHeaderOnlyArrayRef size, std::optional<ScalarType> dtype = std::nullopt,
                 std::optional<Layout> layout = std::nullopt, std::optional<Device> device = std::nullopt,
                 std::optional<bool> pin_memory = std::nullopt);
Tensor full(IntHeaderOnlyArrayRef size, double fill_value, std::optional<ScalarType> dtype = std::nullopt,
            std::optional<Layout> layout = std::nullopt, std::optional<Device> device = std::nullopt,
            std::optional<bool> pin_memory = std::nullopt);
Tensor view(const Tensor& self, IntHeaderOnlyArrayRef size);
Tensor reshape(const Tensor& self, IntHeaderOnlyArrayRef shape);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor contiguous(const Tensor& self, MemoryFormat memory_format = MemoryFormat::Contiguous);
Tensor clone(const Tensor& self);
Tensor to(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt, std::optional<Layout> layout = std::nullopt,
          std::optional<Device> device = std::nullopt, std::optional<bool> pin_memory = std::nullopt,
          bool non_blocking = false, bool copy = false, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor to(const Tensor& self, const Device& device, bool non_blocking = false, bool copy = false);
Tensor narrow(Tensor& self, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor pad(const Tensor& self, IntHeaderOnlyArrayRef pad, const std::string& mode = "constant", double value = 0.0);
Tensor amax(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& self, IntHeaderOnlyArrayRef dims, bool keepdim = false);
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& self, IntHeaderOnlyArrayRef dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor& sum_out(Tensor& out, const Tensor& self, IntHeaderOnlyArrayRef dim, bool keepdim = false,
                std::optional<ScalarType> dtype = std::nullopt);
Tensor subtract(const Tensor& self, const Tensor& other, double alpha = 1.0);
Tensor matmul(const Tensor& self, const Tensor& other);
Tensor fill_(const Tensor& self, double value);
Tensor zero_(Tensor& self);
Tensor copy_(Tensor& self, const Tensor& src, std::optional<bool> non_blocking = std::nullopt);

// torch/csrc/stable/library.h: op registration, kept parseable.
class StableLibrary {
 public:
  StableLibrary& def(const char* schema);
  template <class F> StableLibrary& impl(const char* name, F fn) { return *this; }
};
}  // namespace stable

namespace stable {
namespace accelerator {
using torch::stable::DeviceIndex;
// torch/csrc/stable/accelerator.h
class DeviceGuard {
 public:
  explicit DeviceGuard(DeviceIndex device_index);
  DeviceGuard(const DeviceGuard&) = delete;
  void set_index(DeviceIndex device_index);
};
class Stream {
 public:
  explicit Stream(StreamHandle stream);
  StreamHandle get() const;
  int64_t id() const;
};
Stream getCurrentStream(DeviceIndex device_index);
DeviceIndex getCurrentDeviceIndex();
}  // namespace accelerator
}  // namespace stable
}  // namespace torch

// Registration: a function taking the library object, so op discovery can read it.
#define STABLE_TORCH_LIBRARY(ns, m) void __kernelvet_stable_torch_library_##ns(::torch::stable::StableLibrary& m)
#define STABLE_TORCH_LIBRARY_FRAGMENT(ns, m) \
  void __kernelvet_stable_torch_library_fragment_##ns(::torch::stable::StableLibrary& m)
#define STABLE_TORCH_LIBRARY_IMPL(ns, k, m) \
  void __kernelvet_stable_torch_library_impl_##ns##_##k(::torch::stable::StableLibrary& m)
#define TORCH_BOX(func) (func)

// CUDA error checks of the stable ABI (torch/csrc/stable/macros.h): like C10_CUDA_CHECK.
#define STD_CUDA_CHECK(EXPR) do { (void)(EXPR); } while (0)
#define STD_CUDA_KERNEL_LAUNCH_CHECK() do { } while (0)
