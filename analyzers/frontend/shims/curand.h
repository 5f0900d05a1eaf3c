// kernelvet shim: cuRAND's host API: opaque generators.
#pragma once
#include <kernelvet_cuda.h>
typedef struct curandGenerator_st* curandGenerator_t;
typedef enum curandStatus { CURAND_STATUS_SUCCESS = 0 } curandStatus_t;
typedef enum curandRngType { CURAND_RNG_PSEUDO_DEFAULT = 100, CURAND_RNG_PSEUDO_XORWOW = 101, CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161 } curandRngType_t;
extern "C" {
curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t rng_type);
curandStatus_t curandDestroyGenerator(curandGenerator_t generator);
curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed);
curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream);
curandStatus_t curandGenerateUniform(curandGenerator_t generator, float* outputPtr, size_t num);
curandStatus_t curandGenerateNormal(curandGenerator_t generator, float* outputPtr, size_t n, float mean, float stddev);
}
