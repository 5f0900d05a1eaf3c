// kernelvet shim: TVM-FFI's function export. The exported function is an op like any host
// function that reaches a launch; the export itself does nothing kernelvet follows.
#pragma once
#include <tvm/ffi/container/tensor.h>
#define TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, func) static_assert(true, #name)
