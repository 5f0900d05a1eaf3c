// kernelvet shim: the header-only part of PyTorch (torch/headeronly/..., and the c10 scalar types
// it defines): ScalarType, the reduced-precision scalar classes, IntArrayRef, STD_TORCH_CHECK and
// the THO_DISPATCH_* macros. Both the classic extension API (kernelvet_torch.h) and the stable ABI
// (kernelvet/torch_stable.h) build on it.
#pragma once
#include <kernelvet_cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>
#include <cstddef>
#include <optional>
#include <initializer_list>
#include <string>
#include <vector>
#include <type_traits>
#include <limits>
#include <utility>
#include <stdexcept>
#include <sstream>
#include <tuple>
#include <array>
#include <map>
#include <unordered_map>
#include <memory>
#include <functional>
#include <algorithm>
#include <numeric>

namespace c10 {
// Numbered as in torch (the engine's models use the same numbers: analyzers/engine/models/torch.py).
enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7,
  ComplexHalf = 8, ComplexFloat = 9, ComplexDouble = 10, Bool = 11, QInt8 = 12, QUInt8 = 13,
  QInt32 = 14, BFloat16 = 15, QUInt4x2 = 16, QUInt2x4 = 17, Bits1x8 = 18, Bits2x4 = 19,
  Bits4x2 = 20, Bits8 = 21, Bits16 = 22, Float8_e5m2 = 23, Float8_e4m3fn = 24,
  Float8_e5m2fnuz = 25, Float8_e4m3fnuz = 26, UInt16 = 27, UInt32 = 28, UInt64 = 29,
  UInt1 = 30, UInt2 = 31, UInt3 = 32, UInt4 = 33, UInt5 = 34, UInt6 = 35, UInt7 = 36,
  Int1 = 37, Int2 = 38, Int3 = 39, Int4 = 40, Int5 = 41, Int6 = 42, Int7 = 43,
  Float8_e8m0fnu = 44, Float4_e2m1fn_x2 = 45, Undefined = 46, NumOptions = 47
};
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, HIP = 6, Meta = 9, PrivateUse1 = 20 };
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kCPU = DeviceType::CPU;
enum class Layout : int8_t { Strided = 0, Sparse = 1, SparseCsr = 2, Mkldnn = 3, Jagged = 8 };
constexpr Layout kStrided = Layout::Strided;
enum class MemoryFormat : int8_t { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

// Reduced-precision scalars: opaque floats to the engine. `from_bits` builds one from its bit
// pattern in constant expressions (numeric_limits below, quantisation bounds in kernels).
#define __KV_FLOAT_CLASS(N, STORAGE, ALIGN)                                   \
  struct alignas(ALIGN) N {                                                   \
    STORAGE x;                                                                \
    struct from_bits_t {};                                                    \
    __host__ __device__ static constexpr from_bits_t from_bits() { return from_bits_t(); } \
    N() = default;                                                            \
    __host__ __device__ constexpr N(STORAGE bits, from_bits_t) : x(bits) {}   \
    __host__ __device__ N(float value);                                       \
    __host__ __device__ operator float() const;                               \
  };
__KV_FLOAT_CLASS(Float8_e4m3fn, uint8_t, 1)
__KV_FLOAT_CLASS(Float8_e5m2, uint8_t, 1)
__KV_FLOAT_CLASS(Float8_e4m3fnuz, uint8_t, 1)
__KV_FLOAT_CLASS(Float8_e5m2fnuz, uint8_t, 1)
__KV_FLOAT_CLASS(Float8_e8m0fnu, uint8_t, 1)
#undef __KV_FLOAT_CLASS
struct alignas(2) Half {
  unsigned short x;
  struct from_bits_t {};
  __host__ __device__ static constexpr from_bits_t from_bits() { return from_bits_t(); }
  Half() = default;
  __host__ __device__ constexpr Half(unsigned short bits, from_bits_t) : x(bits) {}
  __host__ __device__ Half(float value);
  __host__ __device__ Half(const __half& value);
  __host__ __device__ operator float() const;
  __host__ __device__ operator __half() const;
};
struct alignas(2) BFloat16 {
  unsigned short x;
  struct from_bits_t {};
  __host__ __device__ static constexpr from_bits_t from_bits() { return from_bits_t(); }
  BFloat16() = default;
  __host__ __device__ constexpr BFloat16(unsigned short bits, from_bits_t) : x(bits) {}
  __host__ __device__ BFloat16(float value);
  __host__ __device__ BFloat16(const __nv_bfloat16& value);
  __host__ __device__ operator float() const;
  __host__ __device__ operator __nv_bfloat16() const;
};
// Two fp4 (e2m1) values in one byte: storage only, no arithmetic.
struct alignas(1) Float4_e2m1fn_x2 {
  uint8_t val_;
  Float4_e2m1fn_x2() = default;
  __host__ __device__ explicit constexpr Float4_e2m1fn_x2(uint8_t val) : val_(val) {}
  __host__ __device__ uint8_t val() const { return val_; }
};
template <class T> struct complex { T real_, imag_; };
#define __KV_HALF_OPS(T)                                             \
  __host__ __device__ T operator+(const T&, const T&);              \
  __host__ __device__ T operator-(const T&, const T&);              \
  __host__ __device__ T operator*(const T&, const T&);              \
  __host__ __device__ T operator/(const T&, const T&);              \
  __host__ __device__ T operator-(const T&);                        \
  __host__ __device__ T& operator+=(T&, const T&);                  \
  __host__ __device__ T& operator-=(T&, const T&);                  \
  __host__ __device__ T& operator*=(T&, const T&);                  \
  __host__ __device__ T& operator/=(T&, const T&);
__KV_HALF_OPS(Half)
__KV_HALF_OPS(BFloat16)
#undef __KV_HALF_OPS

namespace impl {
template <ScalarType N> struct ScalarTypeToCPPType;
#define __KV_ST2CPP(cpp, name) template <> struct ScalarTypeToCPPType<ScalarType::name> { using type = cpp; };
__KV_ST2CPP(uint8_t, Byte) __KV_ST2CPP(int8_t, Char) __KV_ST2CPP(int16_t, Short) __KV_ST2CPP(int, Int)
__KV_ST2CPP(int64_t, Long) __KV_ST2CPP(c10::Half, Half) __KV_ST2CPP(float, Float) __KV_ST2CPP(double, Double)
__KV_ST2CPP(bool, Bool) __KV_ST2CPP(c10::BFloat16, BFloat16) __KV_ST2CPP(c10::Float8_e5m2, Float8_e5m2)
__KV_ST2CPP(c10::Float8_e4m3fn, Float8_e4m3fn) __KV_ST2CPP(c10::Float8_e4m3fnuz, Float8_e4m3fnuz)
__KV_ST2CPP(c10::Float8_e5m2fnuz, Float8_e5m2fnuz) __KV_ST2CPP(c10::Float8_e8m0fnu, Float8_e8m0fnu)
__KV_ST2CPP(c10::Float4_e2m1fn_x2, Float4_e2m1fn_x2)
__KV_ST2CPP(uint16_t, UInt16) __KV_ST2CPP(uint32_t, UInt32) __KV_ST2CPP(uint64_t, UInt64)
#undef __KV_ST2CPP
template <ScalarType N> using ScalarTypeToCPPTypeT = typename ScalarTypeToCPPType<N>::type;
}  // namespace impl
template <class T> struct CppTypeToScalarType;
#define __KV_CPP2ST(cpp, name) \
  template <> struct CppTypeToScalarType<cpp> : std::integral_constant<ScalarType, ScalarType::name> {};
__KV_CPP2ST(uint8_t, Byte) __KV_CPP2ST(int8_t, Char) __KV_CPP2ST(int16_t, Short) __KV_CPP2ST(int, Int)
__KV_CPP2ST(int64_t, Long) __KV_CPP2ST(c10::Half, Half) __KV_CPP2ST(float, Float) __KV_CPP2ST(double, Double)
__KV_CPP2ST(bool, Bool) __KV_CPP2ST(c10::BFloat16, BFloat16) __KV_CPP2ST(c10::Float8_e5m2, Float8_e5m2)
__KV_CPP2ST(c10::Float8_e4m3fn, Float8_e4m3fn) __KV_CPP2ST(c10::Float8_e4m3fnuz, Float8_e4m3fnuz)
__KV_CPP2ST(c10::Float8_e5m2fnuz, Float8_e5m2fnuz) __KV_CPP2ST(c10::Float8_e8m0fnu, Float8_e8m0fnu)
__KV_CPP2ST(c10::Float4_e2m1fn_x2, Float4_e2m1fn_x2)
__KV_CPP2ST(uint16_t, UInt16) __KV_CPP2ST(uint32_t, UInt32) __KV_CPP2ST(uint64_t, UInt64)
#undef __KV_CPP2ST

// Bytes per element of each dtype: executed by the engine, so a dtype it knows gives a constant.
__host__ __device__ constexpr size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: case ScalarType::QInt8:
    case ScalarType::QUInt8: case ScalarType::QUInt4x2: case ScalarType::QUInt2x4: case ScalarType::Bits1x8:
    case ScalarType::Bits2x4: case ScalarType::Bits4x2: case ScalarType::Bits8: case ScalarType::Float8_e5m2:
    case ScalarType::Float8_e4m3fn: case ScalarType::Float8_e5m2fnuz: case ScalarType::Float8_e4m3fnuz:
    case ScalarType::Float8_e8m0fnu: case ScalarType::Float4_e2m1fn_x2:
      return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: case ScalarType::Bits16:
    case ScalarType::UInt16:
      return 2;
    case ScalarType::Int: case ScalarType::Float: case ScalarType::QInt32: case ScalarType::UInt32:
    case ScalarType::ComplexHalf:
      return 4;
    case ScalarType::Long: case ScalarType::Double: case ScalarType::ComplexFloat: case ScalarType::UInt64:
      return 8;
    case ScalarType::ComplexDouble:
      return 16;
    default:
      return 0;
  }
}
const char* toString(ScalarType t);
__host__ __device__ constexpr bool isFloat8Type(ScalarType t) {
  return t == ScalarType::Float8_e5m2 || t == ScalarType::Float8_e4m3fn || t == ScalarType::Float8_e5m2fnuz ||
         t == ScalarType::Float8_e4m3fnuz || t == ScalarType::Float8_e8m0fnu;
}
__host__ __device__ constexpr bool isReducedFloatingType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 || isFloat8Type(t) || t == ScalarType::Float4_e2m1fn_x2;
}
__host__ __device__ constexpr bool isFloatingType(ScalarType t) {
  return t == ScalarType::Double || t == ScalarType::Float || isReducedFloatingType(t);
}
__host__ __device__ constexpr bool isIntegralType(ScalarType t, bool includeBool) {
  return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Short || t == ScalarType::Int ||
         t == ScalarType::Long || t == ScalarType::UInt16 || t == ScalarType::UInt32 || t == ScalarType::UInt64 ||
         (includeBool && t == ScalarType::Bool);
}

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
  bool equals(IntArrayRef other) const;
};
bool operator==(IntArrayRef a, IntArrayRef b);
bool operator!=(IntArrayRef a, IntArrayRef b);
using SymIntArrayRef = IntArrayRef;
using IntList = IntArrayRef;
}  // namespace c10

// numeric_limits of the reduced-precision scalars, from their bit patterns.
namespace std {
#define __KV_FLOAT_LIMITS(N, MIN, MAX, LOWEST, EPS, INF, NAN_)                                       \
  template <> class numeric_limits<c10::N> {                                                                \
   public:                                                                                                  \
    static constexpr bool is_specialized = true;                                                            \
    static constexpr bool is_signed = true;                                                                 \
    static constexpr bool is_integer = false;                                                               \
    static constexpr bool has_infinity = INF != 0;                                                          \
    static constexpr bool has_quiet_NaN = true;                                                             \
    __host__ __device__ static constexpr c10::N min() { return c10::N(MIN, c10::N::from_bits()); }          \
    __host__ __device__ static constexpr c10::N max() { return c10::N(MAX, c10::N::from_bits()); }          \
    __host__ __device__ static constexpr c10::N lowest() { return c10::N(LOWEST, c10::N::from_bits()); }    \
    __host__ __device__ static constexpr c10::N epsilon() { return c10::N(EPS, c10::N::from_bits()); }      \
    __host__ __device__ static constexpr c10::N infinity() { return c10::N(INF, c10::N::from_bits()); }     \
    __host__ __device__ static constexpr c10::N quiet_NaN() { return c10::N(NAN_, c10::N::from_bits()); }   \
  };
__KV_FLOAT_LIMITS(Half, 0x0400, 0x7BFF, 0xFBFF, 0x1400, 0x7C00, 0x7E00)
__KV_FLOAT_LIMITS(BFloat16, 0x0080, 0x7F7F, 0xFF7F, 0x3C00, 0x7F80, 0x7FC0)
__KV_FLOAT_LIMITS(Float8_e4m3fn, 0x08, 0x7E, 0xFE, 0x20, 0, 0x7F)
__KV_FLOAT_LIMITS(Float8_e5m2, 0x04, 0x7B, 0xFB, 0x34, 0x7C, 0x7F)
__KV_FLOAT_LIMITS(Float8_e4m3fnuz, 0x08, 0x7F, 0xFF, 0x28, 0, 0x80)
__KV_FLOAT_LIMITS(Float8_e5m2fnuz, 0x04, 0x7F, 0xFF, 0x38, 0, 0x80)
#undef __KV_FLOAT_LIMITS
}  // namespace std

namespace torch {
namespace headeronly {
using c10::ScalarType;
using c10::DeviceType;
using c10::Layout;
using c10::MemoryFormat;
using c10::Half;
using c10::BFloat16;
using c10::Float8_e4m3fn;
using c10::Float8_e5m2;
using c10::Float8_e4m3fnuz;
using c10::Float8_e5m2fnuz;
using c10::Float8_e8m0fnu;
using c10::Float4_e2m1fn_x2;
using c10::CppTypeToScalarType;
using c10::elementSize;
using c10::toString;
using c10::isFloat8Type;
using c10::isFloatingType;
using c10::isReducedFloatingType;
using c10::isIntegralType;
namespace impl { using c10::impl::ScalarTypeToCPPType; using c10::impl::ScalarTypeToCPPTypeT; }
// The header-only view of an int64_t array: the engine reads it as c10::IntArrayRef.
using IntHeaderOnlyArrayRef = c10::IntArrayRef;
}  // namespace headeronly
}  // namespace torch

namespace kernelvet_detail {
// A failing check throws; the engine ends the path there (the check is an assumption).
[[noreturn]] void check_failed(const char* what);
}

// torch/headeronly/util/Exception.h
// As in torch, a check is an if statement.
#define STD_TORCH_CHECK(cond, ...) if (!(cond)) { ::kernelvet_detail::check_failed(#cond); }
#define STD_TORCH_CHECK_MSG(cond, type, ...) STD_TORCH_CHECK(cond)
#define STD_TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) STD_TORCH_CHECK(cond)
#define TORCH_ERROR_CODE_CHECK(call) do { (void)(call); } while (0)
#define C10_HOST_DEVICE __host__ __device__
#define C10_DEVICE __device__
#define C10_HOST __host__
#define C10_ALWAYS_INLINE inline
#define C10_ALWAYS_INLINE_ATTRIBUTE __attribute__((always_inline))
#define C10_NOINLINE __attribute__((noinline))
#define C10_UNUSED
#define C10_LIKELY(x) (x)
#define C10_UNLIKELY(x) (x)
#define C10_WARP_SIZE 32
#define C10_API
#define TORCH_API
#define C10_LAUNCH_BOUNDS_0 __launch_bounds__(256, 4)
#define C10_LAUNCH_BOUNDS_1(max_threads_per_block) __launch_bounds__(max_threads_per_block)
#define C10_LAUNCH_BOUNDS_2(max_threads_per_block, min_blocks_per_sm) __launch_bounds__(max_threads_per_block, min_blocks_per_sm)
#define C10_RESTRICT __restrict
#define C10_DIAGNOSTIC_PUSH_AND_IGNORED_IF_DEFINED(warning)
#define C10_DIAGNOSTIC_POP()

// torch/headeronly/core/Dispatch.h: one case per dtype; each case binds the type alias and calls
// the lambda, as torch does.
#define THO_PRIVATE_CASE_TYPE_USING_HINT(enum_type, HINT, ...)  \
  case enum_type: {                                             \
    using HINT = ::c10::impl::ScalarTypeToCPPTypeT<enum_type>;  \
    return __VA_ARGS__();                                       \
  }
#define THO_DISPATCH_CASE(enum_type, ...) THO_PRIVATE_CASE_TYPE_USING_HINT(enum_type, scalar_t, __VA_ARGS__)
#define THO_DISPATCH_SWITCH(TYPE, NAME, ...)                            \
  [&] {                                                                 \
    const ::c10::ScalarType _st = ::kernelvet_detail::scalar_type(TYPE); \
    switch (_st) {                                                      \
      __VA_ARGS__                                                       \
      default:                                                          \
        ::kernelvet_detail::check_failed(NAME);                         \
    }                                                                   \
  }()
#define THO_DISPATCH_CASE_FLOATING_TYPES(...) \
  THO_DISPATCH_CASE(::c10::ScalarType::Double, __VA_ARGS__) THO_DISPATCH_CASE(::c10::ScalarType::Float, __VA_ARGS__)
#define THO_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) THO_DISPATCH_SWITCH(TYPE, NAME, THO_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))
#define THO_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(...) \
  THO_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) THO_DISPATCH_CASE(::c10::ScalarType::Half, __VA_ARGS__)
#define THO_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  THO_DISPATCH_SWITCH(TYPE, NAME, THO_DISPATCH_CASE_FLOATING_TYPES_AND_HALF(__VA_ARGS__))
#define THO_DISPATCH_CASE_FLOATING_TYPES_AND2(T1, T2, ...) \
  THO_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) THO_DISPATCH_CASE(T1, __VA_ARGS__) THO_DISPATCH_CASE(T2, __VA_ARGS__)
#define THO_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...) \
  THO_DISPATCH_SWITCH(TYPE, NAME, THO_DISPATCH_CASE_FLOATING_TYPES_AND2(T1, T2, __VA_ARGS__))
#define THO_DISPATCH_CASE_REDUCED_FLOATING_TYPES(...) \
  THO_DISPATCH_CASE(::c10::ScalarType::Half, __VA_ARGS__) THO_DISPATCH_CASE(::c10::ScalarType::BFloat16, __VA_ARGS__)
#define THO_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...) \
  THO_DISPATCH_SWITCH(TYPE, NAME, THO_DISPATCH_CASE_REDUCED_FLOATING_TYPES(__VA_ARGS__))
#define THO_DISPATCH_CASE_INTEGRAL_TYPES(...)                                                           \
  THO_DISPATCH_CASE(::c10::ScalarType::Byte, __VA_ARGS__) THO_DISPATCH_CASE(::c10::ScalarType::Char, __VA_ARGS__) \
  THO_DISPATCH_CASE(::c10::ScalarType::Int, __VA_ARGS__) THO_DISPATCH_CASE(::c10::ScalarType::Long, __VA_ARGS__)  \
  THO_DISPATCH_CASE(::c10::ScalarType::Short, __VA_ARGS__)
#define THO_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) THO_DISPATCH_SWITCH(TYPE, NAME, THO_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__))

namespace kernelvet_detail {
__host__ __device__ inline c10::ScalarType scalar_type(c10::ScalarType s) { return s; }
}  // namespace kernelvet_detail
