// kernelvet shim: cuBLAS lives in cublas_v2.h.
#pragma once
#include <cublas_v2.h>
