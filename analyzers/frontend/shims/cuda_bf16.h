// kernelvet shim: bfloat16. The engine treats these types as opaque 16-bit floats.
#pragma once
#include <kernelvet_cuda.h>
#include <cuda_fp16.h>
struct __align__(2) __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __host__ __device__ __nv_bfloat16(float f);
  __host__ __device__ __nv_bfloat16(double f);
  __host__ __device__ __nv_bfloat16(int i);
  __host__ __device__ operator float() const;
  __host__ __device__ __nv_bfloat16& operator=(float f);
  __host__ __device__ __nv_bfloat16& operator+=(const __nv_bfloat16& o);
};
struct __align__(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  __host__ __device__ __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
struct __nv_bfloat16_raw { unsigned short x; };
__host__ __device__ __nv_bfloat16 operator+(const __nv_bfloat16&, const __nv_bfloat16&);
__host__ __device__ __nv_bfloat16 operator-(const __nv_bfloat16&, const __nv_bfloat16&);
__host__ __device__ __nv_bfloat16 operator*(const __nv_bfloat16&, const __nv_bfloat16&);
__host__ __device__ __nv_bfloat16 operator/(const __nv_bfloat16&, const __nv_bfloat16&);
__host__ __device__ __nv_bfloat16 operator-(const __nv_bfloat16&);
__host__ __device__ bool operator<(const __nv_bfloat16&, const __nv_bfloat16&);
__host__ __device__ bool operator>(const __nv_bfloat16&, const __nv_bfloat16&);
__host__ __device__ __nv_bfloat162 operator+(const __nv_bfloat162&, const __nv_bfloat162&);
__host__ __device__ __nv_bfloat162 operator*(const __nv_bfloat162&, const __nv_bfloat162&);
__host__ __device__ __nv_bfloat16 __float2bfloat16(float);
__host__ __device__ __nv_bfloat16 __float2bfloat16_rn(float);
__host__ __device__ float __bfloat162float(__nv_bfloat16);
__host__ __device__ __nv_bfloat162 __float2bfloat162_rn(float);
__host__ __device__ __nv_bfloat162 __floats2bfloat162_rn(float, float);
__host__ __device__ __nv_bfloat162 __halves2bfloat162(__nv_bfloat16, __nv_bfloat16);
__host__ __device__ __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16);
__host__ __device__ float2 __bfloat1622float2(__nv_bfloat162);
__host__ __device__ __nv_bfloat162 __float22bfloat162_rn(float2);
__host__ __device__ float __low2float(__nv_bfloat162);
__host__ __device__ float __high2float(__nv_bfloat162);
__host__ __device__ __nv_bfloat16 __low2bfloat16(__nv_bfloat162);
__host__ __device__ __nv_bfloat16 __high2bfloat16(__nv_bfloat162);
__host__ __device__ __nv_bfloat16 __hadd(__nv_bfloat16, __nv_bfloat16);
__host__ __device__ __nv_bfloat16 __hmul(__nv_bfloat16, __nv_bfloat16);
__host__ __device__ __nv_bfloat16 __hsub(__nv_bfloat16, __nv_bfloat16);
__host__ __device__ __nv_bfloat16 __hfma(__nv_bfloat16, __nv_bfloat16, __nv_bfloat16);
__host__ __device__ __nv_bfloat16 __hmax(__nv_bfloat16, __nv_bfloat16);
__host__ __device__ __nv_bfloat16 __hmin(__nv_bfloat16, __nv_bfloat16);
__host__ __device__ __nv_bfloat16 __hneg(__nv_bfloat16);
__host__ __device__ __nv_bfloat162 __hadd2(__nv_bfloat162, __nv_bfloat162);
__host__ __device__ __nv_bfloat162 __hmul2(__nv_bfloat162, __nv_bfloat162);
__host__ __device__ __nv_bfloat162 __hfma2(__nv_bfloat162, __nv_bfloat162, __nv_bfloat162);
__host__ __device__ __nv_bfloat162 __hmax2(__nv_bfloat162, __nv_bfloat162);
__host__ __device__ short __bfloat16_as_short(__nv_bfloat16);
__host__ __device__ unsigned short __bfloat16_as_ushort(__nv_bfloat16);
__host__ __device__ __nv_bfloat16 __ushort_as_bfloat16(unsigned short);
