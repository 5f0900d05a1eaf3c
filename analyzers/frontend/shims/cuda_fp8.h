// kernelvet shim: fp8 (cuda_fp8.h). The engine treats the scalar types as opaque 8-bit floats; the
// x2/x4 types are their packed pairs and quads.
#pragma once
#include <kernelvet_cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE };
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };
#define __KV_FP8(N)                                             \
  struct __align__(1) N {                                       \
    __nv_fp8_storage_t __x;                                     \
    N() = default;                                              \
    __host__ __device__ explicit N(float f);                    \
    __host__ __device__ explicit N(double f);                   \
    __host__ __device__ explicit N(__half f);                   \
    __host__ __device__ explicit N(__nv_bfloat16 f);            \
    __host__ __device__ explicit N(int i);                      \
    __host__ __device__ explicit N(unsigned int i);             \
    __host__ __device__ explicit N(long long i);                \
    __host__ __device__ explicit operator float() const;        \
    __host__ __device__ explicit operator double() const;       \
    __host__ __device__ explicit operator __half() const;       \
    __host__ __device__ explicit operator __nv_bfloat16() const; \
    __host__ __device__ explicit operator bool() const;         \
  };
__KV_FP8(__nv_fp8_e4m3)
__KV_FP8(__nv_fp8_e5m2)
#undef __KV_FP8
#define __KV_FP8X2(N)                                                  \
  struct __align__(2) N {                                              \
    __nv_fp8x2_storage_t __x;                                          \
    N() = default;                                                     \
    __host__ __device__ explicit N(float2 f);                          \
    __host__ __device__ explicit N(double2 f);                         \
    __host__ __device__ explicit N(__half2 f);                         \
    __host__ __device__ explicit N(__nv_bfloat162 f);                  \
    __host__ __device__ explicit operator float2() const;              \
    __host__ __device__ explicit operator __half2() const;             \
  };
__KV_FP8X2(__nv_fp8x2_e4m3)
__KV_FP8X2(__nv_fp8x2_e5m2)
#undef __KV_FP8X2
#define __KV_FP8X4(N)                                                            \
  struct __align__(4) N {                                                        \
    __nv_fp8x4_storage_t __x;                                                    \
    N() = default;                                                               \
    __host__ __device__ explicit N(float4 f);                                    \
    __host__ __device__ explicit N(double4 f);                                   \
    __host__ __device__ explicit N(__half2 lo, __half2 hi);                      \
    __host__ __device__ explicit N(__nv_bfloat162 lo, __nv_bfloat162 hi);        \
    __host__ __device__ explicit operator float4() const;                        \
  };
__KV_FP8X4(__nv_fp8x4_e4m3)
__KV_FP8X4(__nv_fp8x4_e5m2)
#undef __KV_FP8X4

// E8M0 scale factors (an exponent only), CUDA 12.8.
struct __align__(1) __nv_fp8_e8m0 {
  __nv_fp8_storage_t __x;
  __nv_fp8_e8m0() = default;
  __host__ __device__ explicit __nv_fp8_e8m0(float f);
  __host__ __device__ explicit __nv_fp8_e8m0(double f);
  __host__ __device__ explicit operator float() const;
};
struct __align__(2) __nv_fp8x2_e8m0 { __nv_fp8x2_storage_t __x; };
struct __align__(4) __nv_fp8x4_e8m0 { __nv_fp8x4_storage_t __x; };

__host__ __device__ __nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(float2 x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_double_to_fp8(double x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(double2 x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(__half_raw x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(__half2_raw x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8x2_storage_t __nv_cvt_bfloat16raw2_to_fp8x2(__nv_bfloat162_raw x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t x, __nv_fp8_interpretation_t t);
__host__ __device__ __half2_raw __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t x, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_float_to_e8m0(float x, __nv_saturation_t sat, enum cudaRoundMode rounding);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_double_to_e8m0(double x, __nv_saturation_t sat, enum cudaRoundMode rounding);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_e8m0(__nv_bfloat16_raw x, __nv_saturation_t sat, enum cudaRoundMode rounding);
__host__ __device__ __nv_bfloat16_raw __nv_cvt_e8m0_to_bf16raw(__nv_fp8_storage_t x);
