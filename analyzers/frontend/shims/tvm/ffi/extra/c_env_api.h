// kernelvet shim: the stream TVM-FFI's environment gives a device (modelled as the current stream).
#pragma once
#include <cstdint>
extern "C" void* TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);
