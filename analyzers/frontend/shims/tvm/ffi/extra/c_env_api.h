// kernelvet shim: the stream TVM-FFI's environment gives a device (modelled as the current stream).
#pragma once
#include <cstdint>
extern "C" void* TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);
// The environment's tensor allocator (a workspace an op allocates): no body, so the memory of a
// tensor it makes is one whose size the engine does not know.
struct DLTensor;
extern "C" int TVMFFIEnvTensorAlloc(DLTensor* prototype, void** out);
