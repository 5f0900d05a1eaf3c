// kernelvet shim: the torch version the shims follow.
#pragma once
#define TORCH_VERSION_MAJOR 2
#define TORCH_VERSION_MINOR 10
#define TORCH_VERSION_PATCH 0
#define TORCH_VERSION "2.10.0"
