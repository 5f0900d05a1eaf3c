// kernelvet shim: DLPack's data types and devices, as TVM-FFI tensors describe themselves.
#pragma once
#include <cstdint>

typedef enum {
  kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLOpenCL = 4, kDLVulkan = 7, kDLMetal = 8, kDLVPI = 9,
  kDLROCM = 10, kDLROCMHost = 11, kDLExtDev = 12, kDLCUDAManaged = 13, kDLOneAPI = 14, kDLWebGPU = 15,
  kDLHexagon = 16, kDLMAIA = 17,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

// The codes engine/models/tvm_ffi.py maps torch's dtypes to (kept equal by tests/test_tvm_ffi.py).
typedef enum {
  kDLInt = 0U, kDLUInt = 1U, kDLFloat = 2U, kDLOpaqueHandle = 3U, kDLBfloat = 4U, kDLComplex = 5U, kDLBool = 6U,
  kDLFloat8_e3m4 = 7U, kDLFloat8_e4m3 = 8U, kDLFloat8_e4m3b11fnuz = 9U, kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U, kDLFloat8_e5m2 = 12U, kDLFloat8_e5m2fnuz = 13U, kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U, kDLFloat6_e3m2fn = 16U, kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
