// kernelvet shim: the vector arithmetic of the CUDA samples' helper_math.h (operators on float2/3/4,
// int2/3/4 and uint2/3/4 and their scalars, dot, length, normalize, clamp, lerp, the make_ forms
// that widen and narrow), for programs that include it without shipping a copy. A repository's own
// helper_math.h is found first. Written for kernelvet: the same names, kernelvet's own code.
#pragma once
#include <kernelvet_cuda.h>

#define __KV_HM_F __host__ __device__ inline

#define __KV_HM_BIN2(V, S, OP)                                                                              \
  __KV_HM_F V operator OP(V a, V b) { return make_##V(a.x OP b.x, a.y OP b.y); }                             \
  __KV_HM_F V operator OP(V a, S b) { return make_##V(a.x OP b, a.y OP b); }                                 \
  __KV_HM_F V operator OP(S a, V b) { return make_##V(a OP b.x, a OP b.y); }                                 \
  __KV_HM_F void operator OP##=(V& a, V b) { a.x OP##= b.x; a.y OP##= b.y; }                                 \
  __KV_HM_F void operator OP##=(V& a, S b) { a.x OP##= b; a.y OP##= b; }
#define __KV_HM_BIN3(V, S, OP)                                                                              \
  __KV_HM_F V operator OP(V a, V b) { return make_##V(a.x OP b.x, a.y OP b.y, a.z OP b.z); }                 \
  __KV_HM_F V operator OP(V a, S b) { return make_##V(a.x OP b, a.y OP b, a.z OP b); }                       \
  __KV_HM_F V operator OP(S a, V b) { return make_##V(a OP b.x, a OP b.y, a OP b.z); }                       \
  __KV_HM_F void operator OP##=(V& a, V b) { a.x OP##= b.x; a.y OP##= b.y; a.z OP##= b.z; }                  \
  __KV_HM_F void operator OP##=(V& a, S b) { a.x OP##= b; a.y OP##= b; a.z OP##= b; }
#define __KV_HM_BIN4(V, S, OP)                                                                              \
  __KV_HM_F V operator OP(V a, V b) { return make_##V(a.x OP b.x, a.y OP b.y, a.z OP b.z, a.w OP b.w); }     \
  __KV_HM_F V operator OP(V a, S b) { return make_##V(a.x OP b, a.y OP b, a.z OP b, a.w OP b); }             \
  __KV_HM_F V operator OP(S a, V b) { return make_##V(a OP b.x, a OP b.y, a OP b.z, a OP b.w); }             \
  __KV_HM_F void operator OP##=(V& a, V b) { a.x OP##= b.x; a.y OP##= b.y; a.z OP##= b.z; a.w OP##= b.w; }   \
  __KV_HM_F void operator OP##=(V& a, S b) { a.x OP##= b; a.y OP##= b; a.z OP##= b; a.w OP##= b; }

#define __KV_HM_ALL(T, N)                                                                                   \
  __KV_HM_BIN2(N##2, T, +) __KV_HM_BIN2(N##2, T, -) __KV_HM_BIN2(N##2, T, *) __KV_HM_BIN2(N##2, T, /)        \
  __KV_HM_BIN3(N##3, T, +) __KV_HM_BIN3(N##3, T, -) __KV_HM_BIN3(N##3, T, *) __KV_HM_BIN3(N##3, T, /)        \
  __KV_HM_BIN4(N##4, T, +) __KV_HM_BIN4(N##4, T, -) __KV_HM_BIN4(N##4, T, *) __KV_HM_BIN4(N##4, T, /)        \
  __KV_HM_F N##2 make_##N##2(T s) { return make_##N##2(s, s); }                                              \
  __KV_HM_F N##3 make_##N##3(T s) { return make_##N##3(s, s, s); }                                           \
  __KV_HM_F N##4 make_##N##4(T s) { return make_##N##4(s, s, s, s); }                                        \
  __KV_HM_F N##3 make_##N##3(N##4 a) { return make_##N##3(a.x, a.y, a.z); }                                  \
  __KV_HM_F N##3 make_##N##3(N##2 a, T z) { return make_##N##3(a.x, a.y, z); }                               \
  __KV_HM_F N##4 make_##N##4(N##3 a, T w) { return make_##N##4(a.x, a.y, a.z, w); }                          \
  __KV_HM_F N##2 make_##N##2(N##3 a) { return make_##N##2(a.x, a.y); }                                       \
  __KV_HM_F T dot(N##2 a, N##2 b) { return a.x * b.x + a.y * b.y; }                                          \
  __KV_HM_F T dot(N##3 a, N##3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }                              \
  __KV_HM_F T dot(N##4 a, N##4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }

__KV_HM_ALL(float, float)
__KV_HM_ALL(int, int)
__KV_HM_ALL(unsigned int, uint)

__KV_HM_F float2 operator-(float2 a) { return make_float2(-a.x, -a.y); }
__KV_HM_F float3 operator-(float3 a) { return make_float3(-a.x, -a.y, -a.z); }
__KV_HM_F float4 operator-(float4 a) { return make_float4(-a.x, -a.y, -a.z, -a.w); }
__KV_HM_F float3 cross(float3 a, float3 b) {
  return make_float3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
__KV_HM_F float length(float2 v) { return sqrtf(dot(v, v)); }
__KV_HM_F float length(float3 v) { return sqrtf(dot(v, v)); }
__KV_HM_F float length(float4 v) { return sqrtf(dot(v, v)); }
__KV_HM_F float2 normalize(float2 v) { return v * rsqrtf(dot(v, v)); }
__KV_HM_F float3 normalize(float3 v) { return v * rsqrtf(dot(v, v)); }
__KV_HM_F float4 normalize(float4 v) { return v * rsqrtf(dot(v, v)); }
__KV_HM_F float lerp(float a, float b, float t) { return a + t * (b - a); }
__KV_HM_F float3 lerp(float3 a, float3 b, float t) { return a + t * (b - a); }
__KV_HM_F float clamp(float f, float a, float b) { return fmaxf(a, fminf(f, b)); }
__KV_HM_F int clamp(int f, int a, int b) { return max(a, min(f, b)); }
__KV_HM_F float3 clamp(float3 v, float a, float b) { return make_float3(clamp(v.x, a, b), clamp(v.y, a, b), clamp(v.z, a, b)); }
__KV_HM_F float3 fminf(float3 a, float3 b) { return make_float3(fminf(a.x, b.x), fminf(a.y, b.y), fminf(a.z, b.z)); }
__KV_HM_F float3 fmaxf(float3 a, float3 b) { return make_float3(fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z)); }

#undef __KV_HM_ALL
#undef __KV_HM_BIN2
#undef __KV_HM_BIN3
#undef __KV_HM_BIN4
#undef __KV_HM_F
