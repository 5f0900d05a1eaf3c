// kernelvet shim: device intrinsics (device_functions.h, sm_*_intrinsics.h, sm_*_atomic_functions.h).
// The engine models most of them by name (analyzers/engine/models/cuda.py); the rest return any
// value of their type.
#pragma once

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
__host__ __device__ long clock(void);
__device__ unsigned long long __globaltimer(void);
__device__ void __trap(void);
__device__ void __brkpt(void);
// Programmatic dependent launch (sm_90): wait for the preceding kernel / let the next one start.
__device__ void cudaGridDependencySynchronize(void);
__device__ void cudaTriggerProgrammaticLaunchCompletion(void);
__device__ unsigned int __activemask(void);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
__device__ int __all_sync(unsigned int mask, int predicate);
__device__ int __any_sync(unsigned int mask, int predicate);
template <class T> __device__ T __shfl_sync(unsigned int mask, T var, int srcLane, int width = 32);
template <class T> __device__ T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32);
template <class T> __device__ T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned int mask, T var, int laneMask, int width = 32);
template <class T> __device__ T __reduce_add_sync(unsigned int mask, T value);
template <class T> __device__ T __reduce_max_sync(unsigned int mask, T value);
template <class T> __device__ T __reduce_min_sync(unsigned int mask, T value);
__device__ unsigned int __reduce_and_sync(unsigned int mask, unsigned int value);
__device__ unsigned int __reduce_or_sync(unsigned int mask, unsigned int value);
__device__ unsigned int __reduce_xor_sync(unsigned int mask, unsigned int value);
template <class T> __device__ unsigned int __match_any_sync(unsigned int mask, T value);
template <class T> __device__ unsigned int __match_all_sync(unsigned int mask, T value, int* pred);

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
template <class T> __device__ void __stwb(T* ptr, T value);

// Address-space conversions: a generic pointer as a shared/global address and back.
__device__ size_t __cvta_generic_to_shared(const void* ptr);
__device__ size_t __cvta_generic_to_global(const void* ptr);
__device__ size_t __cvta_generic_to_constant(const void* ptr);
__device__ size_t __cvta_generic_to_local(const void* ptr);
__device__ void* __cvta_shared_to_generic(size_t rawbits);
__device__ void* __cvta_global_to_generic(size_t rawbits);
__device__ unsigned int __isShared(const void* ptr);
__device__ unsigned int __isGlobal(const void* ptr);
__device__ unsigned int __isConstant(const void* ptr);
__device__ unsigned int __isLocal(const void* ptr);

// Atomics (modelled: they read and write through their pointer; the old value is unknown). The
// non-template overloads are CUDA's (they take arguments by conversion); the templates accept any
// other element type exactly.
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
// The _block (atomic among the threads of one block) and _system variants of each, with the same
// overloads as the device-scope one.
#define __KV_ATOMIC_SCOPES(name)                                           \
  template <class T> __device__ T name##_block(T* address, T val);        \
  template <class T> __device__ T name##_system(T* address, T val);
__KV_ATOMIC_SCOPES(atomicAdd) __KV_ATOMIC_SCOPES(atomicSub) __KV_ATOMIC_SCOPES(atomicExch)
__KV_ATOMIC_SCOPES(atomicMin) __KV_ATOMIC_SCOPES(atomicMax) __KV_ATOMIC_SCOPES(atomicAnd)
__KV_ATOMIC_SCOPES(atomicOr) __KV_ATOMIC_SCOPES(atomicXor) __KV_ATOMIC_SCOPES(atomicInc)
__KV_ATOMIC_SCOPES(atomicDec)
#undef __KV_ATOMIC_SCOPES
template <class T> __device__ T atomicCAS_block(T* address, T compare, T val);
template <class T> __device__ T atomicCAS_system(T* address, T compare, T val);
#define __KV_ATOMIC(name, T) \
  __device__ T name(T* address, T val); __device__ T name##_block(T* address, T val); \
  __device__ T name##_system(T* address, T val);
#define __KV_ATOMIC_INTS(name) \
  __KV_ATOMIC(name, int) __KV_ATOMIC(name, unsigned int) __KV_ATOMIC(name, unsigned long long)
__KV_ATOMIC_INTS(atomicAdd) __KV_ATOMIC(atomicAdd, float) __KV_ATOMIC(atomicAdd, double)
__KV_ATOMIC(atomicAdd, float2) __KV_ATOMIC(atomicAdd, float4)
__KV_ATOMIC(atomicSub, int) __KV_ATOMIC(atomicSub, unsigned int)
__KV_ATOMIC_INTS(atomicExch) __KV_ATOMIC(atomicExch, float)
__KV_ATOMIC_INTS(atomicMin) __KV_ATOMIC(atomicMin, long long)
__KV_ATOMIC_INTS(atomicMax) __KV_ATOMIC(atomicMax, long long)
__KV_ATOMIC_INTS(atomicAnd) __KV_ATOMIC_INTS(atomicOr) __KV_ATOMIC_INTS(atomicXor)
__KV_ATOMIC(atomicInc, unsigned int) __KV_ATOMIC(atomicDec, unsigned int)
#undef __KV_ATOMIC_INTS
#undef __KV_ATOMIC
__device__ int atomicCAS(int* address, int compare, int val);
__device__ unsigned int atomicCAS(unsigned int* address, unsigned int compare, unsigned int val);
__device__ unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare, unsigned long long val);
__device__ unsigned short atomicCAS(unsigned short* address, unsigned short compare, unsigned short val);

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
__device__ unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift);
__device__ unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift);
__device__ unsigned int __lane_id(void);
__device__ int __dp4a(int srcA, int srcB, int c);
__device__ unsigned int __dp4a(unsigned int srcA, unsigned int srcB, unsigned int c);
__device__ int __dp4a(char4 srcA, char4 srcB, int c);
__device__ unsigned int __dp4a(uchar4 srcA, uchar4 srcB, unsigned int c);
__device__ int __dp2a_lo(int srcA, int srcB, int c);
__device__ unsigned int __dp2a_lo(unsigned int srcA, unsigned int srcB, unsigned int c);
__device__ int __dp2a_hi(int srcA, int srcB, int c);
__device__ unsigned int __dp2a_hi(unsigned int srcA, unsigned int srcB, unsigned int c);
__device__ unsigned int __sad(int x, int y, unsigned int z);
__device__ unsigned int __usad(unsigned int x, unsigned int y, unsigned int z);
__device__ int __hadd(int x, int y);
__device__ unsigned int __uhadd(unsigned int x, unsigned int y);
__device__ int __rhadd(int x, int y);
__device__ unsigned int __urhadd(unsigned int x, unsigned int y);
__device__ unsigned long long __brevll(unsigned long long x);
__device__ unsigned int __fns(unsigned int mask, unsigned int base, int offset);
// SIMD video intrinsics on packed halfwords (2) and bytes (4), as CUDA declares them; modelled
// exactly in engine/models/cuda.py (simd_video), the rounded averages aside.
#define __KV_SIMD2(name) __device__ unsigned int name(unsigned int a, unsigned int b);
#define __KV_SIMD1(name) __device__ unsigned int name(unsigned int a);
__KV_SIMD2(__vadd2) __KV_SIMD2(__vadd4) __KV_SIMD2(__vsub2) __KV_SIMD2(__vsub4) __KV_SIMD2(__vaddss2)
__KV_SIMD2(__vaddss4) __KV_SIMD2(__vsubss2) __KV_SIMD2(__vsubss4) __KV_SIMD2(__vaddus2) __KV_SIMD2(__vaddus4)
__KV_SIMD2(__vsubus2) __KV_SIMD2(__vsubus4) __KV_SIMD2(__vmaxs2) __KV_SIMD2(__vmaxs4) __KV_SIMD2(__vmaxu2)
__KV_SIMD2(__vmaxu4) __KV_SIMD2(__vmins2) __KV_SIMD2(__vmins4) __KV_SIMD2(__vminu2) __KV_SIMD2(__vminu4)
__KV_SIMD2(__vabsdiffs2) __KV_SIMD2(__vabsdiffs4) __KV_SIMD2(__vabsdiffu2) __KV_SIMD2(__vabsdiffu4) __KV_SIMD2(__vavgs2)
__KV_SIMD2(__vavgs4) __KV_SIMD2(__vavgu2) __KV_SIMD2(__vavgu4) __KV_SIMD2(__vhaddu2) __KV_SIMD2(__vhaddu4)
__KV_SIMD2(__vsads2) __KV_SIMD2(__vsads4) __KV_SIMD2(__vsadu2) __KV_SIMD2(__vsadu4) __KV_SIMD2(__vcmpeq2)
__KV_SIMD2(__vcmpeq4) __KV_SIMD2(__vcmpne2) __KV_SIMD2(__vcmpne4) __KV_SIMD2(__vcmpges2) __KV_SIMD2(__vcmpges4)
__KV_SIMD2(__vcmpgeu2) __KV_SIMD2(__vcmpgeu4) __KV_SIMD2(__vcmpgts2) __KV_SIMD2(__vcmpgts4) __KV_SIMD2(__vcmpgtu2)
__KV_SIMD2(__vcmpgtu4) __KV_SIMD2(__vcmples2) __KV_SIMD2(__vcmples4) __KV_SIMD2(__vcmpleu2) __KV_SIMD2(__vcmpleu4)
__KV_SIMD2(__vcmplts2) __KV_SIMD2(__vcmplts4) __KV_SIMD2(__vcmpltu2) __KV_SIMD2(__vcmpltu4) __KV_SIMD2(__vseteq2)
__KV_SIMD2(__vseteq4) __KV_SIMD2(__vsetne2) __KV_SIMD2(__vsetne4) __KV_SIMD2(__vsetges2) __KV_SIMD2(__vsetges4)
__KV_SIMD2(__vsetgeu2) __KV_SIMD2(__vsetgeu4) __KV_SIMD2(__vsetgts2) __KV_SIMD2(__vsetgts4) __KV_SIMD2(__vsetgtu2)
__KV_SIMD2(__vsetgtu4) __KV_SIMD2(__vsetles2) __KV_SIMD2(__vsetles4) __KV_SIMD2(__vsetleu2) __KV_SIMD2(__vsetleu4)
__KV_SIMD2(__vsetlts2) __KV_SIMD2(__vsetlts4) __KV_SIMD2(__vsetltu2) __KV_SIMD2(__vsetltu4)
__KV_SIMD1(__vabs2) __KV_SIMD1(__vabs4) __KV_SIMD1(__vabsss2) __KV_SIMD1(__vabsss4) __KV_SIMD1(__vneg2) __KV_SIMD1(__vneg4) __KV_SIMD1(__vnegss2) __KV_SIMD1(__vnegss4)
#undef __KV_SIMD2
#undef __KV_SIMD1

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
// Mixed integer arguments (min(int, int64_t), as host launchers write with a numel()): nvcc accepts
// them and computes in the common type; an exact template stands for its larger overload set.
template <typename A, typename B>
__host__ __device__ inline auto min(A a, B b) -> decltype(a < b ? a : b) { return a < b ? a : b; }
template <typename A, typename B>
__host__ __device__ inline auto max(A a, B b) -> decltype(a > b ? a : b) { return a > b ? a : b; }
