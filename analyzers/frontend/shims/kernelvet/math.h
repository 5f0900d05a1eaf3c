// kernelvet shim: device math (math_functions.h). Floating-point values are opaque to the engine.
#pragma once

// Single-precision math (floating-point values are opaque to the engine).
#define __KV_F1(name) __host__ __device__ float name(float);
#define __KV_F2(name) __host__ __device__ float name(float, float);
__KV_F1(sqrtf) __KV_F1(rsqrtf) __KV_F1(expf) __KV_F1(exp2f) __KV_F1(exp10f) __KV_F1(expm1f) __KV_F1(logf)
__KV_F1(log2f) __KV_F1(log10f) __KV_F1(log1pf) __KV_F1(sinf) __KV_F1(cosf) __KV_F1(tanf) __KV_F1(tanhf)
__KV_F1(sinhf) __KV_F1(coshf) __KV_F1(asinf) __KV_F1(acosf) __KV_F1(atanf) __KV_F1(erff) __KV_F1(erfcf)
__KV_F1(erfinvf) __KV_F1(fabsf) __KV_F1(floorf) __KV_F1(ceilf) __KV_F1(truncf) __KV_F1(roundf) __KV_F1(rintf)
__KV_F1(nearbyintf) __KV_F1(cbrtf) __KV_F1(rcbrtf) __KV_F1(__expf) __KV_F1(__logf) __KV_F1(__log2f) __KV_F1(__sinf)
__KV_F1(__cosf) __KV_F1(__tanf) __KV_F1(__exp10f) __KV_F1(__frcp_rn) __KV_F1(__fsqrt_rn) __KV_F1(__saturatef)
__KV_F1(normcdff) __KV_F1(lgammaf) __KV_F1(tgammaf)
__KV_F2(fmaxf) __KV_F2(fminf) __KV_F2(powf) __KV_F2(__powf) __KV_F2(fmodf) __KV_F2(atan2f) __KV_F2(copysignf)
__KV_F2(__fdividef) __KV_F2(fdividef) __KV_F2(__fadd_rn) __KV_F2(__fmul_rn) __KV_F2(__fsub_rn) __KV_F2(__fdiv_rn)
__KV_F2(hypotf) __KV_F2(remainderf) __KV_F2(fdimf)
__host__ __device__ float fmaf(float, float, float);
__host__ __device__ float __fmaf_rn(float, float, float);
__host__ __device__ void sincosf(float, float*, float*);
__host__ __device__ void __sincosf(float, float*, float*);
__host__ __device__ int isnan(float);
__host__ __device__ int isinf(float);
__host__ __device__ int isfinite(float);
__host__ __device__ int __float2int_rn(float);
__host__ __device__ int __float2int_rz(float);
__host__ __device__ int __float2int_rd(float);
__host__ __device__ int __float2int_ru(float);
__host__ __device__ unsigned int __float2uint_rn(float);
__host__ __device__ long long __float2ll_rn(float);
__host__ __device__ float __int2float_rn(int);
__host__ __device__ float __uint2float_rn(unsigned int);
__host__ __device__ float __int_as_float(int);
__host__ __device__ int __float_as_int(float);
__host__ __device__ float __uint_as_float(unsigned int);
__host__ __device__ unsigned int __float_as_uint(float);
__host__ __device__ double __longlong_as_double(long long);
__host__ __device__ long long __double_as_longlong(double);
__host__ __device__ float __shfl_float_dummy(float);
__KV_F1(__frsqrt_rn) __KV_F1(__fsqrt_rz) __KV_F1(__frcp_rz) __KV_F1(__frcp_rd) __KV_F1(__frcp_ru) __KV_F1(sinpif)
__KV_F1(cospif) __KV_F1(logbf) __KV_F1(asinhf) __KV_F1(acoshf) __KV_F1(atanhf) __KV_F1(j0f) __KV_F1(y0f)
__KV_F1(erfcinvf) __KV_F1(erfcxf) __KV_F1(normcdfinvf) __KV_F1(__tanhf)
__KV_F2(__fmul_rz) __KV_F2(__fadd_rz) __KV_F2(__fsub_rz) __KV_F2(__fdiv_rz) __KV_F2(__fmul_rd) __KV_F2(__fmul_ru)
__KV_F2(__fadd_rd) __KV_F2(__fadd_ru) __KV_F2(nextafterf)
#undef __KV_F1
#undef __KV_F2
__host__ __device__ float __fmaf_rz(float, float, float);
__host__ __device__ float __fmaf_rd(float, float, float);
__host__ __device__ float __fmaf_ru(float, float, float);
__host__ __device__ float ldexpf(float, int);
__host__ __device__ float scalbnf(float, int);
__host__ __device__ float frexpf(float, int*);
__host__ __device__ float modff(float, float*);
__host__ __device__ int ilogbf(float);
__host__ __device__ long lrintf(float);
__host__ __device__ long long llrintf(float);
__host__ __device__ long lroundf(float);
__host__ __device__ long long llroundf(float);
__host__ __device__ int signbit(float);
__host__ __device__ unsigned int __float2uint_rz(float);
__host__ __device__ unsigned int __float2uint_rd(float);
__host__ __device__ unsigned int __float2uint_ru(float);
__host__ __device__ long long __float2ll_rz(float);
__host__ __device__ long long __float2ll_rd(float);
__host__ __device__ long long __float2ll_ru(float);
__host__ __device__ unsigned long long __float2ull_rn(float);
__host__ __device__ unsigned long long __float2ull_rz(float);
__host__ __device__ float __int2float_rz(int);
__host__ __device__ float __int2float_rd(int);
__host__ __device__ float __int2float_ru(int);
__host__ __device__ float __uint2float_rz(unsigned int);
__host__ __device__ float __ll2float_rn(long long);
__host__ __device__ float __ll2float_rz(long long);
__host__ __device__ float __ull2float_rn(unsigned long long);
__host__ __device__ float __double2float_rn(double);
__host__ __device__ float __double2float_rz(double);
__host__ __device__ int __double2int_rn(double);
__host__ __device__ int __double2int_rz(double);
__host__ __device__ long long __double2ll_rn(double);
__host__ __device__ double __int2double_rn(int);
__host__ __device__ double __ll2double_rn(long long);
__host__ __device__ double __hiloint2double(int hi, int lo);
__host__ __device__ int __double2hiint(double);
__host__ __device__ int __double2loint(double);
__host__ __device__ double __dadd_rn(double, double);
__host__ __device__ double __dmul_rn(double, double);
__host__ __device__ double __fma_rn(double, double, double);
__host__ __device__ double rsqrt(double);
__host__ __device__ double rcbrt(double);
