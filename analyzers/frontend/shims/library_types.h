// kernelvet shim: library types live with the runtime API (kernelvet/runtime.h).
#pragma once
#include <kernelvet_cuda.h>
