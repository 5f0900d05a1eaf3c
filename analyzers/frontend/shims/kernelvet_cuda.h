// kernelvet shim: the CUDA language surface, force-included in every translation unit as nvcc does
// with cuda_runtime.h. Declarations only where the engine models the function; bodies where plain
// C++ says what the function does.
//
// What nvcc's implicit cuda_runtime.h makes visible is visible here too, split by topic:
//   kernelvet/types.h     dim3, the built-in variables, vector types
//   kernelvet/runtime.h   the runtime API (host): errors, memory, streams, events, devices, launches
//   kernelvet/device.h    device intrinsics: synchronisation, warp collectives, loads, atomics, bits
//   kernelvet/math.h      single- and double-precision device math
// and the C library headers nvcc pulls in (stddef, stdint, stdlib, string, math, limits) with
// the std:: pieces they bring along (std::min/max, std::abs).
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
#define __CUDA_ALIGN__(n) __align__(n)  // host_defines.h: the same attribute under CUDA's own name
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __grid_constant__
#define __cudart_builtin__
#define __device_builtin__
#define __CUDACC__ 1
#define __NVCC__ 1
#define __CUDACC_RTC_INT128__ 1
#define CUDART_VERSION 12090
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 9
#define __CUDACC_VER_BUILD__ 0
#define CUDART_CB

// The C library as nvcc's headers bring it: fixed-width integers, size_t, EXIT_*, memcpy, math,
// and time() (crt/common_functions.h includes <time.h>: `srand(time(NULL))` compiles without it).
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// BSD/glibc names nvcc code relies on (glibc's <sys/types.h> through <stdlib.h>).
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned long ulong;

#include <kernelvet/types.h>
#include <kernelvet/runtime.h>
#include <kernelvet/device.h>
#include <kernelvet/texture.h>
#include <kernelvet/math.h>

#ifndef assert
#ifdef NDEBUG
#define assert(cond) ((void)0)
#else
extern "C" __host__ __device__ void __assert_fail(const char*, const char*, unsigned int, const char*);
#define assert(cond) ((cond) ? (void)0 : __assert_fail(#cond, __FILE__, __LINE__, __func__))
#endif
#endif

extern "C" __host__ __device__ int printf(const char* fmt, ...);

// <cmath> and <cstdlib> as nvcc's math_functions.h includes them (std::abs, std::min, std::max...).
#include <cmath>
#include <cstdlib>
#include <new>
#endif  // KERNELVET_CUDA_H
#include <kernelvet/gpuverify_annotations.h>
