// kernelvet shim: dim3, the built-in variables and the vector types (vector_types.h).
#pragma once

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

// Vector types: N1..N4 with CUDA's alignments, and make_N1..make_N4.
#define __KV_VEC1(T, N, A) struct __align__(A) N##1 { T x; };
#define __KV_VEC2(T, N, A) struct __align__(A) N##2 { T x, y; };
#define __KV_VEC3(T, N) struct N##3 { T x, y, z; };
#define __KV_VEC4(T, N, A) struct __align__(A) N##4 { T x, y, z, w; };
#define __KV_MAKE(T, N)                                                                                   \
  __host__ __device__ inline N##1 make_##N##1(T x) { N##1 r; r.x = x; return r; }                         \
  __host__ __device__ inline N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }            \
  __host__ __device__ inline N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; } \
  __host__ __device__ inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
#define __KV_VECS(T, N, S) __KV_VEC1(T, N, S) __KV_VEC2(T, N, 2 * S) __KV_VEC3(T, N) __KV_VEC4(T, N, 4 * S) __KV_MAKE(T, N)
__KV_VECS(char, char, 1)
__KV_VECS(unsigned char, uchar, 1)
__KV_VECS(short, short, 2)
__KV_VECS(unsigned short, ushort, 2)
__KV_VECS(int, int, 4)
__KV_VECS(unsigned int, uint, 4)
__KV_VECS(float, float, 4)
// 64-bit element types: the 4-vectors are 16-byte aligned (CUDA 12's long4/double4).
__KV_VEC1(long, long, 8) __KV_VEC2(long, long, 16) __KV_VEC3(long, long) __KV_VEC4(long, long, 16) __KV_MAKE(long, long)
__KV_VEC1(unsigned long, ulong, 8) __KV_VEC2(unsigned long, ulong, 16) __KV_VEC3(unsigned long, ulong)
__KV_VEC4(unsigned long, ulong, 16) __KV_MAKE(unsigned long, ulong)
__KV_VEC1(long long, longlong, 8) __KV_VEC2(long long, longlong, 16) __KV_VEC3(long long, longlong)
__KV_VEC4(long long, longlong, 16) __KV_MAKE(long long, longlong)
__KV_VEC1(unsigned long long, ulonglong, 8) __KV_VEC2(unsigned long long, ulonglong, 16)
__KV_VEC3(unsigned long long, ulonglong) __KV_VEC4(unsigned long long, ulonglong, 16) __KV_MAKE(unsigned long long, ulonglong)
__KV_VEC1(double, double, 8) __KV_VEC2(double, double, 16) __KV_VEC3(double, double) __KV_VEC4(double, double, 16)
__KV_MAKE(double, double)
#undef __KV_VEC1
#undef __KV_VEC2
#undef __KV_VEC3
#undef __KV_VEC4
#undef __KV_MAKE
#undef __KV_VECS

