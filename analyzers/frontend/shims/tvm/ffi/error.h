// kernelvet shim: TVM-FFI's checks. A failing TVM_FFI_ICHECK ends the path as a failing
// TORCH_CHECK does; what is streamed into the message is not evaluated.
#pragma once
#include <kernelvet_torch.h>

namespace kernelvet_detail {
struct tvm_check_message {
  template <class T> tvm_check_message& operator<<(const T&) { return *this; }
};
inline tvm_check_message tvm_check_failed(const char* what) {
  check_failed(what);
  return tvm_check_message();
}
}  // namespace kernelvet_detail

// Each check ends in a string literal, as TVM-FFI's own (`<< "Check failed: ..."`), so code that
// follows one with a bare literal (`TVM_FFI_ICHECK_EQ(a, b) #x " must be ..."`) compiles here too.
#define TVM_FFI_ICHECK(cond) if (cond) {} else ::kernelvet_detail::tvm_check_failed(#cond) << ""
#define TVM_FFI_CHECK(cond, kind) TVM_FFI_ICHECK(cond)
#define TVM_FFI_ICHECK_EQ(a, b) TVM_FFI_ICHECK((a) == (b))
#define TVM_FFI_ICHECK_NE(a, b) TVM_FFI_ICHECK((a) != (b))
#define TVM_FFI_ICHECK_LT(a, b) TVM_FFI_ICHECK((a) < (b))
#define TVM_FFI_ICHECK_LE(a, b) TVM_FFI_ICHECK((a) <= (b))
#define TVM_FFI_ICHECK_GT(a, b) TVM_FFI_ICHECK((a) > (b))
#define TVM_FFI_ICHECK_GE(a, b) TVM_FFI_ICHECK((a) >= (b))
#define TVM_FFI_THROW(kind) ::kernelvet_detail::tvm_check_failed(#kind)
#define TVM_FFI_LOG_AND_THROW(kind) ::kernelvet_detail::tvm_check_failed(#kind)
