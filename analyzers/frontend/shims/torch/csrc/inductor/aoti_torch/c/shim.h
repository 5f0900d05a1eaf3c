// kernelvet shim: the AOTI C shim lives in kernelvet/torch_stable.h.
#pragma once
#include <kernelvet/torch_stable.h>
