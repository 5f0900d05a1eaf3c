// kernelvet shim: everything lives in kernelvet_cuda.h (force-included).
#pragma once
#include <kernelvet_cuda.h>
#define CUDART_INF_F __int_as_float(0x7f800000)
#define CUDART_NAN_F __int_as_float(0x7fffffff)
#define CUDART_PI_F 3.141592654f
#define CUDART_INF __longlong_as_double(0x7ff0000000000000ULL)
