// kernelvet shim: fp8. The engine treats these types as opaque 8-bit floats.
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
    __host__ __device__ explicit operator float() const;        \
    __host__ __device__ explicit operator __half() const;       \
  };
__KV_FP8(__nv_fp8_e4m3)
__KV_FP8(__nv_fp8_e5m2)
struct __align__(4) __nv_fp8x4_e4m3 { __nv_fp8x4_storage_t __x; __nv_fp8x4_e4m3() = default; __host__ __device__ explicit __nv_fp8x4_e4m3(float4 f); __host__ __device__ explicit operator float4() const; };
struct __align__(2) __nv_fp8x2_e4m3 { __nv_fp8x2_storage_t __x; __nv_fp8x2_e4m3() = default; __host__ __device__ explicit __nv_fp8x2_e4m3(float2 f); __host__ __device__ explicit operator float2() const; };
__host__ __device__ __nv_fp8_storage_t __nv_cvt_float_to_fp8(float x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(float2 x, __nv_saturation_t sat, __nv_fp8_interpretation_t t);
__host__ __device__ __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t x, __nv_fp8_interpretation_t t);
