// kernelvet shim: the CUDA language surface (force-included in every translation unit, as nvcc
// does with cuda_runtime.h). Declarations only where the engine models the function; bodies where
// plain C++ says what the function does.
#pragma once
#ifndef KERNELVET_CUDA_H
#define KERNELVET_CUDA_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __grid_constant__
#define __CUDACC__ 1
#define __NVCC__ 1
#define CUDART_VERSION 12040
#define CUDA_VERSION 12040
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 4

typedef __SIZE_TYPE__ size_t;

struct uint3;
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(const uint3& v);
};

extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 } cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributePreferredSharedMemoryCarveout = 9 };
enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97, cudaDevAttrMultiProcessorCount = 16, cudaDevAttrMaxSharedMemoryPerBlock = 8 };
struct cudaDeviceProp { int multiProcessorCount; size_t sharedMemPerBlock; size_t sharedMemPerBlockOptin; int maxThreadsPerBlock; int major; int minor; int warpSize; };

extern "C" int cudaConfigureCall(dim3 gridSize, dim3 blockSize, size_t sharedSize = 0, cudaStream_t stream = 0);
extern "C" int __cudaPushCallConfiguration(dim3 gridSize, dim3 blockSize, size_t sharedMem = 0, cudaStream_t stream = 0);

// Runtime API (host). Memory functions are modelled by the engine.
extern "C" {
cudaError_t cudaMalloc(void** devPtr, size_t size);
cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags = 1);
cudaError_t cudaMallocHost(void** ptr, size_t size);
cudaError_t cudaFree(void* devPtr);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream = 0);
cudaError_t cudaMemset(void* devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream = 0);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream);
}
template <class T>
inline cudaError_t cudaMalloc(T** devPtr, size_t size) { return ::cudaMalloc((void**)(void*)devPtr, size); }
template <class T>
inline cudaError_t cudaFuncSetAttribute(T* entry, cudaFuncAttribute attr, int value) { return ::cudaFuncSetAttribute((const void*)entry, attr, value); }

// Vector types.
#define __KV_VEC1(T, N, A) struct __align__(A) N##1 { T x; };
#define __KV_VEC2(T, N, A) struct __align__(A) N##2 { T x, y; };
#define __KV_VEC3(T, N) struct N##3 { T x, y, z; };
#define __KV_VEC4(T, N, A) struct __align__(A) N##4 { T x, y, z, w; };
#define __KV_VECS(T, N, S)                                                  \
  __KV_VEC1(T, N, S) __KV_VEC2(T, N, 2 * S) __KV_VEC3(T, N) __KV_VEC4(T, N, 4 * S) \
  __host__ __device__ inline N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; } \
  __host__ __device__ inline N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; } \
  __host__ __device__ inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
__KV_VECS(char, char, 1)
__KV_VECS(unsigned char, uchar, 1)
__KV_VECS(short, short, 2)
__KV_VECS(unsigned short, ushort, 2)
__KV_VECS(int, int, 4)
__KV_VECS(unsigned int, uint, 4)
__KV_VECS(float, float, 4)
__KV_VEC2(long long, longlong, 16)
__KV_VEC2(unsigned long long, ulonglong, 16)
__KV_VEC2(double, double, 16)
struct __align__(16) longlong4 { long long x, y, z, w; };
struct __align__(16) double4 { double x, y, z, w; };
__host__ __device__ inline double2 make_double2(double x, double y) { double2 r; r.x = x; r.y = y; return r; }

// Synchronisation and warp primitives (modelled).
__device__ void __syncthreads(void);
__device__ int __syncthreads_count(int predicate);
__device__ int __syncthreads_and(int predicate);
__device__ int __syncthreads_or(int predicate);
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
__device__ void __threadfence(void);
__device__ void __threadfence_block(void);
__device__ void __threadfence_system(void);
__device__ void __nanosleep(unsigned int ns);
__device__ long long clock64(void);
__device__ long long clock(void);
__device__ unsigned long long __globaltimer(void);
__device__ void __trap(void);
__device__ unsigned int __activemask(void);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
__device__ int __all_sync(unsigned int mask, int predicate);
__device__ int __any_sync(unsigned int mask, int predicate);
__device__ unsigned int __match_any_sync(unsigned int mask, int value);
template <class T> __device__ T __shfl_sync(unsigned int mask, T var, int srcLane, int width = 32);
template <class T> __device__ T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32);
template <class T> __device__ T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned int mask, T var, int laneMask, int width = 32);
template <class T> __device__ T __reduce_add_sync(unsigned int mask, T value);
template <class T> __device__ T __reduce_max_sync(unsigned int mask, T value);
template <class T> __device__ T __reduce_min_sync(unsigned int mask, T value);

// Memory access intrinsics (modelled: they read through their pointer).
template <class T> __device__ T __ldg(const T* ptr);
template <class T> __device__ T __ldcg(const T* ptr);
template <class T> __device__ T __ldca(const T* ptr);
template <class T> __device__ T __ldcs(const T* ptr);
template <class T> __device__ T __ldlu(const T* ptr);
template <class T> __device__ T __ldcv(const T* ptr);
template <class T> __device__ void __stcg(T* ptr, T value);
template <class T> __device__ void __stcs(T* ptr, T value);
template <class T> __device__ void __stwt(T* ptr, T value);

// Atomics (modelled: they read and write through their pointer; the old value is unknown).
template <class T> __device__ T atomicAdd(T* address, T val);
template <class T> __device__ T atomicSub(T* address, T val);
template <class T> __device__ T atomicExch(T* address, T val);
template <class T> __device__ T atomicMin(T* address, T val);
template <class T> __device__ T atomicMax(T* address, T val);
template <class T> __device__ T atomicAnd(T* address, T val);
template <class T> __device__ T atomicOr(T* address, T val);
template <class T> __device__ T atomicXor(T* address, T val);
template <class T> __device__ T atomicInc(T* address, T val);
template <class T> __device__ T atomicDec(T* address, T val);
template <class T> __device__ T atomicCAS(T* address, T compare, T val);
template <class T> __device__ T atomicAdd_block(T* address, T val);
template <class T> __device__ T atomicAdd_system(T* address, T val);

// Integer intrinsics: results are values of their type; the engine knows their ranges.
__device__ int __popc(unsigned int x);
__device__ int __popcll(unsigned long long x);
__device__ int __clz(int x);
__device__ int __clzll(long long x);
__device__ int __ffs(int x);
__device__ int __ffsll(long long x);
__device__ unsigned int __brev(unsigned int x);
__device__ unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s);
__device__ int __mul24(int x, int y);
__device__ unsigned int __umul24(unsigned int x, unsigned int y);
__device__ int __mulhi(int x, int y);
__device__ unsigned int __umulhi(unsigned int x, unsigned int y);
__device__ long long __mul64hi(long long x, long long y);
__device__ unsigned long long __umul64hi(unsigned long long x, unsigned long long y);
__device__ unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift);
__device__ unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift);
__device__ unsigned int __lane_id(void);

// CUDA's global integer min/max overloads.
__host__ __device__ inline int min(int a, int b) { return a < b ? a : b; }
__host__ __device__ inline int max(int a, int b) { return a > b ? a : b; }
__host__ __device__ inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
__host__ __device__ inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
__host__ __device__ inline unsigned int min(int a, unsigned int b) { return min((unsigned int)a, b); }
__host__ __device__ inline unsigned int min(unsigned int a, int b) { return min(a, (unsigned int)b); }
__host__ __device__ inline unsigned int max(int a, unsigned int b) { return max((unsigned int)a, b); }
__host__ __device__ inline unsigned int max(unsigned int a, int b) { return max(a, (unsigned int)b); }
__host__ __device__ inline long long min(long long a, long long b) { return a < b ? a : b; }
__host__ __device__ inline long long max(long long a, long long b) { return a > b ? a : b; }
__host__ __device__ inline long min(long a, long b) { return a < b ? a : b; }
__host__ __device__ inline long max(long a, long b) { return a > b ? a : b; }
__host__ __device__ inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
__host__ __device__ inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
__host__ __device__ inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
__host__ __device__ inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
__host__ __device__ float min(float a, float b);
__host__ __device__ float max(float a, float b);
__host__ __device__ double min(double a, double b);
__host__ __device__ double max(double a, double b);

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

#ifndef assert
#ifdef NDEBUG
#define assert(cond) ((void)0)
#else
extern "C" __host__ __device__ void __assert_fail(const char*, const char*, unsigned int, const char*);
#define assert(cond) ((cond) ? (void)0 : __assert_fail(#cond, __FILE__, __LINE__, __func__))
#endif
#endif

extern "C" __host__ __device__ int printf(const char* fmt, ...);
#endif  // KERNELVET_CUDA_H
