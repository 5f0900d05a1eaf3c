#pragma once
// Release semantics by default (NDEBUG, as production builds compile); see docs/ARCHITECTURE.md.
#include <kernelvet_cuda.h>
