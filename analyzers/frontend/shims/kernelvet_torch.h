// kernelvet shim: the subset of the PyTorch C++ extension API that kernel launchers use.
// at::Tensor and friends are modelled by the engine; only their interfaces are declared here.
#pragma once
#ifndef KERNELVET_TORCH_H
#define KERNELVET_TORCH_H
#include <kernelvet_cuda.h>
#include <kernelvet/torch_headeronly.h>
#include <c10/util/irange.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>
#include <cstddef>
#include <optional>
#include <initializer_list>
#include <string>
#include <vector>
#include <tuple>
#include <type_traits>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <functional>
#include <memory>
#include <map>
#include <iostream>
#include <stdexcept>
#include <cstring>
#include <cstdio>
#include <numeric>
#include <array>
#include <unordered_map>
#include <unordered_set>
#include <set>
#include <sstream>
#include <atomic>
#include <mutex>
#include <variant>
#include <cublas_v2.h>
#include <cuda.h>  // ATen's CUDA headers bring the driver API (and CUDA_VERSION)

namespace c10 {
struct Device {
  Device(DeviceType type, int8_t index = -1);
  Device(const std::string& device_string);
  DeviceType type() const;
  int8_t index() const;
  bool has_index() const;
  void set_index(int8_t index);
  bool is_cuda() const;
  bool is_cpu() const;
  bool is_meta() const;
  std::string str() const;
};
bool operator==(const Device& a, const Device& b);
bool operator!=(const Device& a, const Device& b);
struct TensorOptions {
  TensorOptions();
  TensorOptions(ScalarType dtype);
  TensorOptions dtype(ScalarType dtype) const;
  TensorOptions device(Device device) const;
  TensorOptions device(DeviceType device) const;
  TensorOptions requires_grad(bool value) const;
  TensorOptions layout(Layout layout) const;
  TensorOptions pinned_memory(bool pinned) const;
  TensorOptions memory_format(MemoryFormat format) const;
  ScalarType dtype() const;
};
using ScalarTypeMeta = ScalarType;

class Storage {
 public:
  size_t nbytes() const;
  void* data() const;
  void* mutable_data() const;
};

class Scalar {
 public:
  Scalar(double v);
  Scalar(int64_t v);
  Scalar(int v);
  double toDouble() const;
  float toFloat() const;
  int64_t toLong() const;
};

}  // namespace c10

namespace at {
using c10::BFloat16;
using c10::Device;
using c10::DeviceType;
using c10::Half;
using c10::IntArrayRef;
using c10::ScalarType;
using c10::TensorOptions;
using c10::Scalar;
using c10::MemoryFormat;
using c10::kCUDA;
using c10::kCPU;
using c10::optional;
using c10::Layout;
using c10::Storage;
using c10::elementSize;
using c10::toString;
using c10::isFloatingType;
using c10::isReducedFloatingType;
using c10::isIntegralType;

class Tensor {
 public:
  Tensor();
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  IntArrayRef sizes() const;
  IntArrayRef strides() const;
  int64_t numel() const;
  int64_t dim() const;
  int64_t ndimension() const;
  int64_t element_size() const;
  size_t itemsize() const;
  size_t nbytes() const;
  int64_t storage_offset() const;
  ScalarType scalar_type() const;
  ScalarType dtype() const;
  TensorOptions options() const;
  Device device() const;
  int get_device() const;
  bool defined() const;
  bool is_cuda() const;
  bool is_cpu() const;
  bool is_meta() const;
  bool is_pinned() const;
  Storage storage() const;
  Layout layout() const;
  bool is_contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;
  bool is_same_size(const Tensor& other) const;
  bool is_floating_point() const;
  template <typename T> T* data_ptr() const;
  void* data_ptr() const;
  template <typename T> T* mutable_data_ptr() const;
  void* mutable_data_ptr() const;
  template <typename T> const T* const_data_ptr() const;
  const void* const_data_ptr() const;
  template <typename T> T item() const;
  Scalar item() const;
  Tensor contiguous(MemoryFormat memory_format = MemoryFormat::Contiguous) const;
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef size) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim = 0, int64_t start = 0, int64_t end = 9223372036854775807LL, int64_t step = 1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor t() const;
  Tensor to(ScalarType dtype) const;
  Tensor to(Device device) const;
  Tensor clone() const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor& zero_();
  Tensor& fill_(const Scalar& value);
  Tensor permute(IntArrayRef dims) const;
  Tensor expand(IntArrayRef size) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor sum(int64_t dim, bool keepdim = false) const;
  Tensor view_as(const Tensor& other) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& mul_(const Scalar& other);
  Tensor cpu() const;
  Tensor cuda() const;
  Tensor pin_memory() const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor index(std::initializer_list<int64_t> indices) const;
  bool equal(const Tensor& other) const;
  Tensor operator[](int64_t index) const;
};
using TensorList = const std::vector<Tensor>&;

Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor empty_like(const Tensor& self, TensorOptions options = {});
Tensor zeros_like(const Tensor& self, TensorOptions options = {});
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
// With a deleter (called when the tensor dies, after the launch): the same tensor.
template <class Deleter> Tensor from_blob(void* data, IntArrayRef sizes, Deleter deleter, TensorOptions options = {}) {
  return from_blob(data, sizes, options);
}
template <class Deleter> Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, Deleter deleter, TensorOptions options = {}) {
  return from_blob(data, sizes, strides, options);
}
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {});
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor& sum_out(Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim = false);
inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
inline TensorOptions device(DeviceType d) { return TensorOptions().device(d); }
std::optional<Device> device_of(const Tensor& t);
std::optional<Device> device_of(const std::optional<Tensor>& t);

struct DeviceGuard { explicit DeviceGuard(Device device); void set_index(int8_t index); };
struct OptionalDeviceGuard { OptionalDeviceGuard(); explicit OptionalDeviceGuard(std::optional<Device> device); };
namespace cuda {
class CUDAStream {
 public:
  operator cudaStream_t() const;
  cudaStream_t stream() const;
};
CUDAStream getCurrentCUDAStream(int8_t device_index = -1);
CUDAStream getStreamFromPool(bool isHighPriority = false, int8_t device = -1);
cudaDeviceProp* getCurrentDeviceProperties();
cudaDeviceProp* getDeviceProperties(int64_t device);
int current_device();
struct CUDAGuard { explicit CUDAGuard(Device device); explicit CUDAGuard(int8_t index); void set_index(int8_t index); };
cublasHandle_t getCurrentCUDABlasHandle();
struct OptionalCUDAGuard { OptionalCUDAGuard(); explicit OptionalCUDAGuard(std::optional<Device> device); explicit OptionalCUDAGuard(Device device); void set_index(int8_t index); };
}  // namespace cuda

namespace detail {
inline ScalarType scalar_type(ScalarType s) { return s; }
}  // namespace detail
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat8_e4m3fn = ScalarType::Float8_e4m3fn;
constexpr ScalarType kFloat8_e5m2 = ScalarType::Float8_e5m2;
constexpr ScalarType kFloat8_e4m3fnuz = ScalarType::Float8_e4m3fnuz;
constexpr ScalarType kUInt8 = ScalarType::Byte;
constexpr ScalarType kInt8 = ScalarType::Char;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kFloat32 = ScalarType::Float;
}  // namespace at

namespace c10 {
namespace cuda {
using at::cuda::CUDAGuard;
using at::cuda::CUDAStream;
using at::cuda::OptionalCUDAGuard;
using at::cuda::getCurrentCUDAStream;
using at::cuda::current_device;
}  // namespace cuda
using at::Tensor;
}  // namespace c10

namespace torch {
using at::Tensor;
using at::TensorList;
using at::ScalarType;
using at::IntArrayRef;
using at::TensorOptions;
using at::Device;
using at::Scalar;
using at::empty;
using at::zeros;
using at::ones;
using at::empty_like;
using at::zeros_like;
using at::empty_strided;
using at::from_blob;
using at::full;
using at::arange;
using at::cat;
using at::stack;
using at::dtype;
using at::device;
using at::Layout;
using at::MemoryFormat;
using at::DeviceType;
using at::kByte; using at::kChar; using at::kShort; using at::kInt; using at::kLong; using at::kHalf;
using at::kFloat; using at::kDouble; using at::kBool; using at::kBFloat16; using at::kFloat8_e4m3fn;
using at::kFloat8_e5m2; using at::kFloat8_e4m3fnuz; using at::kUInt8; using at::kInt8; using at::kInt32;
using at::kInt64; using at::kFloat16; using at::kFloat32; using at::kCUDA; using at::kCPU;
template <class T> using optional = std::optional<T>;
using Dtype = at::ScalarType;

class Library {
 public:
  template <class... A> Library& def(A&&... args) { return *this; }
  template <class... A> Library& impl(A&&... args) { return *this; }
};
class CppFunction {};
template <class F> CppFunction dispatch(c10::DeviceType type, F&& f);
}  // namespace torch

// ATen/Dispatch.h's global helper (dispatch macros of extensions call ::detail::scalar_type).
namespace detail {
inline at::ScalarType scalar_type(at::ScalarType s) { return s; }
}  // namespace detail

namespace pybind11 {
class module_ {
 public:
  template <class... A> module_& def(A&&... args) { return *this; }
};
using module = module_;
template <class... A> struct arg { arg(A...); };
}  // namespace pybind11
namespace py = pybind11;

// As in torch, a check is an if statement (code may leave out the semicolon after one).
#define TORCH_CHECK(cond, ...) if (!(cond)) { ::kernelvet_detail::check_failed(#cond); }
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond)
#define TORCH_INTERNAL_ASSERT_DEBUG_ONLY(cond, ...) do { } while (0)
#define TORCH_CHECK_EQ(a, b) TORCH_CHECK((a) == (b))
#define TORCH_CHECK_NE(a, b) TORCH_CHECK((a) != (b))
#define TORCH_CHECK_LE(a, b) TORCH_CHECK((a) <= (b))
#define TORCH_CHECK_LT(a, b) TORCH_CHECK((a) < (b))
#define TORCH_CHECK_GE(a, b) TORCH_CHECK((a) >= (b))
#define TORCH_CHECK_GT(a, b) TORCH_CHECK((a) > (b))
#define TORCH_CHECK_VALUE(cond, ...) TORCH_CHECK(cond)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) TORCH_CHECK(cond)
#define TORCH_WARN(...) do { } while (0)
#define TORCH_WARN_ONCE(...) do { } while (0)
#define AT_ERROR(...) ::kernelvet_detail::check_failed("AT_ERROR")
#define C10_CUDA_CHECK(expr) do { (void)(expr); } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() do { } while (0)
#define AT_CUDA_CHECK(expr) do { (void)(expr); } while (0)
#define TORCH_EXTENSION_NAME _C

// Dispatch: one case per dtype; each case binds the type alias and calls the lambda, as torch does.
#define AT_PRIVATE_CASE_TYPE_USING_HINT(enum_type, HINT, ...) \
  case enum_type: {                                           \
    using HINT = ::c10::impl::ScalarTypeToCPPTypeT<enum_type>; \
    return __VA_ARGS__();                                     \
  }
#define AT_DISPATCH_CASE(enum_type, ...) AT_PRIVATE_CASE_TYPE_USING_HINT(enum_type, scalar_t, __VA_ARGS__)
#define AT_DISPATCH_SWITCH(TYPE, NAME, ...)                          \
  [&] {                                                              \
    const ::at::ScalarType _st = ::at::detail::scalar_type(TYPE);     \
    switch (_st) {                                                   \
      __VA_ARGS__                                                    \
      default:                                                       \
        ::kernelvet_detail::check_failed(NAME);                      \
    }                                                                \
  }()
#define AT_DISPATCH_CASE_FLOATING_TYPES(...) \
  AT_DISPATCH_CASE(::at::ScalarType::Double, __VA_ARGS__) AT_DISPATCH_CASE(::at::ScalarType::Float, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(...) \
  AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(::at::ScalarType::Half, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(__VA_ARGS__))
#define AT_DISPATCH_CASE_FLOATING_TYPES_AND2(T1, T2, ...) \
  AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(T1, __VA_ARGS__) AT_DISPATCH_CASE(T2, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES_AND2(T1, T2, __VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES_AND(T1, TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) AT_DISPATCH_CASE(T1, __VA_ARGS__))
#define AT_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE(::at::ScalarType::Half, __VA_ARGS__) AT_DISPATCH_CASE(::at::ScalarType::BFloat16, __VA_ARGS__))
#define AT_DISPATCH_CASE_INTEGRAL_TYPES(...)                                                  \
  AT_DISPATCH_CASE(::at::ScalarType::Byte, __VA_ARGS__) AT_DISPATCH_CASE(::at::ScalarType::Char, __VA_ARGS__) \
  AT_DISPATCH_CASE(::at::ScalarType::Int, __VA_ARGS__) AT_DISPATCH_CASE(::at::ScalarType::Long, __VA_ARGS__)  \
  AT_DISPATCH_CASE(::at::ScalarType::Short, __VA_ARGS__)
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))
#define AT_DISPATCH_ALL_TYPES_AND2(T1, T2, TYPE, NAME, ...)                                                \
  AT_DISPATCH_SWITCH(TYPE, NAME, AT_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__) AT_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) \
                     AT_DISPATCH_CASE(T1, __VA_ARGS__) AT_DISPATCH_CASE(T2, __VA_ARGS__))

// Op registration: kept parseable so op discovery can read it.
#define TORCH_LIBRARY(ns, m) void __kernelvet_torch_library_##ns(::torch::Library& m)
#define TORCH_LIBRARY_FRAGMENT(ns, m) void __kernelvet_torch_library_fragment_##ns(::torch::Library& m)
#define TORCH_LIBRARY_IMPL(ns, k, m) void __kernelvet_torch_library_impl_##ns##_##k(::torch::Library& m)
#define PYBIND11_MODULE(name, m) void __kernelvet_pybind11_module_##name(::pybind11::module_& m)
#endif  // KERNELVET_TORCH_H
