// kernelvet shim: ESBMC-GPU's harness header (call_kernel.h). Its suite's programs include it first
// and rely on what its library brings along: the runtime, the ESBMC_verify_kernel launches (declared
// in cuda.h) and curand.
#pragma once
#include <cuda.h>
#include <curand_kernel.h>
