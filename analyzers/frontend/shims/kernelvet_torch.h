// kernelvet shim: the subset of the PyTorch C++ extension API that kernel launchers use.
// at::Tensor and friends are modelled by the engine; only their interfaces are declared here.
#pragma once
#ifndef KERNELVET_TORCH_H
#define KERNELVET_TORCH_H
#include <kernelvet_cuda.h>
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

namespace c10 {
enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7,
  ComplexHalf = 8, ComplexFloat = 9, ComplexDouble = 10, Bool = 11, QInt8 = 12, QUInt8 = 13,
  QInt32 = 14, BFloat16 = 15, QUInt4x2 = 16, QUInt2x4 = 17, Bits1x8 = 18, Bits2x4 = 19,
  Bits4x2 = 20, Bits8 = 21, Bits16 = 22, Float8_e5m2 = 23, Float8_e4m3fn = 24,
  Float8_e5m2fnuz = 25, Float8_e4m3fnuz = 26, UInt16 = 27, UInt32 = 28, UInt64 = 29,
  Undefined = 44
};
using Layout = int;
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 9 };
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kCPU = DeviceType::CPU;

struct alignas(2) Half {
  unsigned short x;
  Half() = default;
  __host__ __device__ Half(float value);
  __host__ __device__ Half(const __half& value);
  __host__ __device__ operator float() const;
  __host__ __device__ operator __half() const;
};
struct alignas(2) BFloat16 {
  unsigned short x;
  BFloat16() = default;
  __host__ __device__ BFloat16(float value);
  __host__ __device__ BFloat16(const __nv_bfloat16& value);
  __host__ __device__ operator float() const;
  __host__ __device__ operator __nv_bfloat16() const;
};
struct alignas(1) Float8_e4m3fn { unsigned char x; Float8_e4m3fn() = default; __host__ __device__ Float8_e4m3fn(float value); __host__ __device__ operator float() const; };
struct alignas(1) Float8_e5m2 { unsigned char x; Float8_e5m2() = default; __host__ __device__ Float8_e5m2(float value); __host__ __device__ operator float() const; };
struct alignas(1) Float8_e4m3fnuz { unsigned char x; Float8_e4m3fnuz() = default; __host__ __device__ Float8_e4m3fnuz(float value); __host__ __device__ operator float() const; };
template <class T> struct complex { T real_, imag_; };
#define __KV_HALF_OPS(T)                                             \
  __host__ __device__ T operator+(const T&, const T&);              \
  __host__ __device__ T operator-(const T&, const T&);              \
  __host__ __device__ T operator*(const T&, const T&);              \
  __host__ __device__ T operator/(const T&, const T&);              \
  __host__ __device__ T operator-(const T&);                        \
  __host__ __device__ T& operator+=(T&, const T&);                  \
  __host__ __device__ T& operator*=(T&, const T&);
__KV_HALF_OPS(Half)
__KV_HALF_OPS(BFloat16)

namespace impl {
template <ScalarType N> struct ScalarTypeToCPPType;
#define __KV_ST2CPP(cpp, name) template <> struct ScalarTypeToCPPType<ScalarType::name> { using type = cpp; };
__KV_ST2CPP(uint8_t, Byte) __KV_ST2CPP(int8_t, Char) __KV_ST2CPP(int16_t, Short) __KV_ST2CPP(int, Int)
__KV_ST2CPP(int64_t, Long) __KV_ST2CPP(c10::Half, Half) __KV_ST2CPP(float, Float) __KV_ST2CPP(double, Double)
__KV_ST2CPP(bool, Bool) __KV_ST2CPP(c10::BFloat16, BFloat16) __KV_ST2CPP(c10::Float8_e5m2, Float8_e5m2)
__KV_ST2CPP(c10::Float8_e4m3fn, Float8_e4m3fn) __KV_ST2CPP(c10::Float8_e4m3fnuz, Float8_e4m3fnuz)
__KV_ST2CPP(uint16_t, UInt16) __KV_ST2CPP(uint32_t, UInt32) __KV_ST2CPP(uint64_t, UInt64)
template <ScalarType N> using ScalarTypeToCPPTypeT = typename ScalarTypeToCPPType<N>::type;
}  // namespace impl

const char* toString(ScalarType t);
size_t elementSize(ScalarType t);
bool isFloatingType(ScalarType t);
bool isReducedFloatingType(ScalarType t);

template <class T> using optional = std::optional<T>;
using std::nullopt;
using std::nullopt_t;

class IntArrayRef {
 public:
  IntArrayRef();
  IntArrayRef(std::initializer_list<int64_t> values);
  IntArrayRef(const std::vector<int64_t>& values);
  IntArrayRef(const int64_t& value);
  IntArrayRef(const int64_t* data, size_t length);
  size_t size() const;
  const int64_t* data() const;
  int64_t operator[](size_t i) const;
  int64_t front() const;
  int64_t back() const;
  const int64_t* begin() const;
  const int64_t* end() const;
  bool empty() const;
  std::vector<int64_t> vec() const;
};
using SymIntArrayRef = IntArrayRef;
using IntList = IntArrayRef;

struct Device {
  Device(DeviceType type, int8_t index = -1);
  DeviceType type() const;
  int8_t index() const;
  bool is_cuda() const;
};
struct TensorOptions {
  TensorOptions();
  TensorOptions(ScalarType dtype);
  TensorOptions dtype(ScalarType dtype) const;
  TensorOptions device(Device device) const;
  TensorOptions device(DeviceType device) const;
  TensorOptions requires_grad(bool value) const;
  ScalarType dtype() const;
};
using ScalarTypeMeta = ScalarType;

class Scalar {
 public:
  Scalar(double v);
  Scalar(int64_t v);
  Scalar(int v);
  double toDouble() const;
  float toFloat() const;
  int64_t toLong() const;
};

enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast };
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
  Tensor operator[](int64_t index) const;
};
using TensorList = const std::vector<Tensor>&;

Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor empty_like(const Tensor& self, TensorOptions options = {});
Tensor zeros_like(const Tensor& self, TensorOptions options = {});
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {});
std::optional<Device> device_of(const Tensor& t);
std::optional<Device> device_of(const std::optional<Tensor>& t);

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
struct CUDAGuard { explicit CUDAGuard(Device device); explicit CUDAGuard(int8_t index); };
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
using at::kByte; using at::kChar; using at::kShort; using at::kInt; using at::kLong; using at::kHalf;
using at::kFloat; using at::kDouble; using at::kBool; using at::kBFloat16; using at::kFloat8_e4m3fn;
using at::kFloat8_e5m2; using at::kFloat8_e4m3fnuz; using at::kUInt8; using at::kInt8; using at::kInt32;
using at::kInt64; using at::kFloat16; using at::kFloat32; using at::kCUDA; using at::kCPU;
template <class T> using optional = std::optional<T>;
using Dtype = at::ScalarType;
namespace stable { using Tensor = at::Tensor; }

class Library {
 public:
  template <class... A> Library& def(A&&... args);
  template <class... A> Library& impl(A&&... args);
};
class CppFunction {};
template <class F> CppFunction dispatch(c10::DeviceType type, F&& f);
}  // namespace torch

namespace pybind11 {
class module_ {
 public:
  template <class... A> module_& def(A&&... args);
};
using module = module_;
template <class... A> struct arg { arg(A...); };
}  // namespace pybind11
namespace py = pybind11;

namespace kernelvet_detail {
// A failing TORCH_CHECK throws; the engine ends the path there (the check is an assumption).
[[noreturn]] void check_failed(const char* what);
}

#define TORCH_CHECK(cond, ...) do { if (!(cond)) ::kernelvet_detail::check_failed(#cond); } while (0)
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
#define C10_LIKELY(x) (x)
#define C10_UNLIKELY(x) (x)
#define C10_HOST_DEVICE __host__ __device__
#define C10_DEVICE __device__
#define C10_HOST __host__
#define C10_ALWAYS_INLINE inline
#define C10_UNUSED
#define C10_WARP_SIZE 32
#define C10_LAUNCH_BOUNDS_1(max_threads_per_block) __launch_bounds__(max_threads_per_block)
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
