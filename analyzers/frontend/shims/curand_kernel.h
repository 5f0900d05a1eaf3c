// kernelvet shim: cuRAND's device API. Generated numbers are any value of their type.
#pragma once
#include <kernelvet_cuda.h>
struct curandStateXORWOW { unsigned int d, v[5]; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
typedef struct curandStateXORWOW curandState_t;
typedef struct curandStateXORWOW curandState;
struct curandStatePhilox4_32_10 { uint4 ctr; uint4 output; uint2 key; unsigned int STATE; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;
#define __KV_CURAND(State)                                                                                   \
  __device__ void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset, State* state); \
  __device__ unsigned int curand(State* state);                                                              \
  __device__ float curand_uniform(State* state);                                                             \
  __device__ double curand_uniform_double(State* state);                                                     \
  __device__ float curand_normal(State* state);                                                              \
  __device__ double curand_normal_double(State* state);                                                      \
  __device__ float2 curand_normal2(State* state);                                                            \
  __device__ float curand_log_normal(State* state, float mean, float stddev);                               \
  __device__ unsigned int curand_poisson(State* state, double lambda);
__KV_CURAND(curandStateXORWOW)
__KV_CURAND(curandStatePhilox4_32_10)
#undef __KV_CURAND
__device__ float4 curand_uniform4(curandStatePhilox4_32_10* state);
__device__ float4 curand_normal4(curandStatePhilox4_32_10* state);
__device__ uint4 curand4(curandStatePhilox4_32_10* state);
