// kernelvet shim: GPUVerify's annotation functions (its tool includes them in every file), so kernels written
// for GPUVerify parse; engine/models/gpuverify.py says what each means to kernelvet.
#pragma once
__host__ __device__ void __requires(bool);
__host__ __device__ void __ensures(bool);
__host__ __device__ void __assume(bool);
__host__ __device__ void __axiom(bool);
__host__ __device__ void __invariant(bool);
__host__ __device__ void __global_invariant(bool);
__host__ __device__ void __function_wide_invariant(bool);
__host__ __device__ void __candidate_invariant(bool);
__host__ __device__ void __assert(bool);
__host__ __device__ void __global_assert(bool);
__host__ __device__ bool __enabled();
__host__ __device__ bool __implies(bool, bool);
__host__ __device__ bool __read(const void*);
__host__ __device__ bool __write(const void*);
__host__ __device__ bool __no_read(const void*);
__host__ __device__ bool __no_write(const void*);
__host__ __device__ bool __uniform_bool(bool);
__host__ __device__ bool __distinct_bool(bool);
__host__ __device__ bool __uniform_int(int);
__host__ __device__ bool __distinct_int(int);
__host__ __device__ int __other_int(int);
__host__ __device__ bool __other_bool(bool);
__host__ __device__ bool __same_group();
__host__ __device__ bool __same_block();
__host__ __device__ bool __same_warp();
