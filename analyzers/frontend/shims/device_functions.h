// kernelvet shim: everything lives in kernelvet_cuda.h (force-included).
#pragma once
#include <kernelvet_cuda.h>
