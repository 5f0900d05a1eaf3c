// kernelvet shim: cooperative groups live in cooperative_groups.h.
#pragma once
#include <cooperative_groups/reduce.h>
