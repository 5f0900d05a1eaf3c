// kernelvet shim: the header-only part of torch lives in kernelvet/torch_headeronly.h.
#pragma once
#include <kernelvet/torch_headeronly.h>
