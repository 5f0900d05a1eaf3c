// kernelvet shim: the stable ABI lives in kernelvet/torch_stable.h.
#pragma once
#include <kernelvet/torch_stable.h>
