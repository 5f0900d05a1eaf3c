// kernelvet shim: the profiler API lives with the runtime API (kernelvet/runtime.h).
#pragma once
#include <kernelvet_cuda.h>
