// kernelvet shim: everything lives in kernelvet_torch.h.
#pragma once
#include <kernelvet_torch.h>
