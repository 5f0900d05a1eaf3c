// kernelvet shim: fp4 (cuda_fp4.h, e2m1). Opaque 4-bit floats, packed in pairs and quads.
#pragma once
#include <kernelvet_cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
typedef unsigned char __nv_fp4_storage_t;
typedef unsigned char __nv_fp4x2_storage_t;
typedef unsigned short __nv_fp4x4_storage_t;
enum __nv_fp4_interpretation_t { __NV_E2M1 };
struct __align__(1) __nv_fp4_e2m1 {
  __nv_fp4_storage_t __x;
  __nv_fp4_e2m1() = default;
  __host__ __device__ explicit __nv_fp4_e2m1(float f);
  __host__ __device__ explicit __nv_fp4_e2m1(__half f);
  __host__ __device__ explicit __nv_fp4_e2m1(__nv_bfloat16 f);
  __host__ __device__ explicit operator float() const;
  __host__ __device__ explicit operator __half() const;
};
struct __align__(1) __nv_fp4x2_e2m1 {
  __nv_fp4x2_storage_t __x;
  __nv_fp4x2_e2m1() = default;
  __host__ __device__ explicit __nv_fp4x2_e2m1(float2 f);
  __host__ __device__ explicit __nv_fp4x2_e2m1(__half2 f);
  __host__ __device__ explicit __nv_fp4x2_e2m1(__nv_bfloat162 f);
  __host__ __device__ explicit operator float2() const;
  __host__ __device__ explicit operator __half2() const;
};
struct __align__(2) __nv_fp4x4_e2m1 {
  __nv_fp4x4_storage_t __x;
  __nv_fp4x4_e2m1() = default;
  __host__ __device__ explicit __nv_fp4x4_e2m1(float4 f);
  __host__ __device__ explicit __nv_fp4x4_e2m1(__half2 lo, __half2 hi);
  __host__ __device__ explicit __nv_fp4x4_e2m1(__nv_bfloat162 lo, __nv_bfloat162 hi);
  __host__ __device__ explicit operator float4() const;
};
__host__ __device__ __nv_fp4_storage_t __nv_cvt_float_to_fp4(float x, __nv_fp4_interpretation_t t, enum cudaRoundMode rounding);
__host__ __device__ __nv_fp4x2_storage_t __nv_cvt_float2_to_fp4x2(float2 x, __nv_fp4_interpretation_t t, enum cudaRoundMode rounding);
__host__ __device__ __nv_fp4x2_storage_t __nv_cvt_halfraw2_to_fp4x2(__half2_raw x, __nv_fp4_interpretation_t t, enum cudaRoundMode rounding);
__host__ __device__ __nv_fp4x2_storage_t __nv_cvt_bfloat16raw2_to_fp4x2(__nv_bfloat162_raw x, __nv_fp4_interpretation_t t, enum cudaRoundMode rounding);
__host__ __device__ __half_raw __nv_cvt_fp4_to_halfraw(__nv_fp4_storage_t x, __nv_fp4_interpretation_t t);
__host__ __device__ __half2_raw __nv_cvt_fp4x2_to_halfraw2(__nv_fp4x2_storage_t x, __nv_fp4_interpretation_t t);
