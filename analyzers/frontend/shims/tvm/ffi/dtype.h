// kernelvet shim: DLDataType's comparisons, as TVM-FFI defines them.
#pragma once
#include <dlpack/dlpack.h>

inline bool operator==(const DLDataType& a, const DLDataType& b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(const DLDataType& a, const DLDataType& b) { return !(a == b); }
inline bool operator==(const DLDevice& a, const DLDevice& b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}
inline bool operator!=(const DLDevice& a, const DLDevice& b) { return !(a == b); }
