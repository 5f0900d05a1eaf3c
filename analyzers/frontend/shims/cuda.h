// kernelvet shim: the CUDA driver API (cuda.h): opaque handles, the types and enumerators
// inference code names, and host functions as declarations.
#pragma once
#include <kernelvet_cuda.h>

// The toolkit version is defined here, not by the runtime headers nvcc includes implicitly.
#define CUDA_VERSION 12090

typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef unsigned long long cuuint64_t;
typedef unsigned int cuuint32_t;

typedef enum CUpointer_attribute_enum {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
  CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
  CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
  CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
  CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
  CU_POINTER_ATTRIBUTE_MAPPED = 13,
} CUpointer_attribute;

typedef enum CUmemAllocationType_enum { CU_MEM_ALLOCATION_TYPE_INVALID = 0, CU_MEM_ALLOCATION_TYPE_PINNED = 1 } CUmemAllocationType;
typedef enum CUmemLocationType_enum { CU_MEM_LOCATION_TYPE_INVALID = 0, CU_MEM_LOCATION_TYPE_DEVICE = 1, CU_MEM_LOCATION_TYPE_HOST = 2 } CUmemLocationType;
typedef enum CUmemAllocationHandleType_enum {
  CU_MEM_HANDLE_TYPE_NONE = 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1, CU_MEM_HANDLE_TYPE_FABRIC = 8
} CUmemAllocationHandleType;
typedef enum CUmemAccess_flags_enum {
  CU_MEM_ACCESS_FLAGS_PROT_NONE = 0, CU_MEM_ACCESS_FLAGS_PROT_READ = 1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
} CUmemAccess_flags;
typedef enum CUmemAllocationGranularity_flags_enum {
  CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1
} CUmemAllocationGranularity_flags;
#define CU_MEM_ALLOCATION_COMP_NONE 0x0
#define CU_MEM_ALLOCATION_COMP_GENERIC 0x1
typedef struct CUmemLocation_st { CUmemLocationType type; int id; } CUmemLocation;
typedef struct CUmemAllocationProp_st {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct { unsigned char compressionType; unsigned char gpuDirectRDMACapable; unsigned short usage; unsigned char reserved[4]; } allocFlags;
} CUmemAllocationProp;
typedef struct CUmemAccessDesc_st { CUmemLocation location; CUmemAccess_flags flags; } CUmemAccessDesc;

typedef enum CUmemcpySrcAccessOrder_enum {
  CU_MEMCPY_SRC_ACCESS_ORDER_INVALID = 0, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM = 1,
  CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL = 2, CU_MEMCPY_SRC_ACCESS_ORDER_ANY = 3
} CUmemcpySrcAccessOrder;
typedef struct CUmemcpyAttributes_st {
  CUmemcpySrcAccessOrder srcAccessOrder;
  CUmemLocation srcLocHint;
  CUmemLocation dstLocHint;
  unsigned int flags;
} CUmemcpyAttributes;

typedef enum CUdriverProcAddress_flags_enum {
  CU_GET_PROC_ADDRESS_DEFAULT = 0, CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2
} CUdriverProcAddress_flags;
typedef enum CUdriverProcAddressQueryResult_enum {
  CU_GET_PROC_ADDRESS_SUCCESS = 0, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} CUdriverProcAddressQueryResult;

typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128,
} CUdevice_attribute;

extern "C" {
CUresult cuInit(unsigned int flags);
CUresult cuGetErrorString(CUresult error, const char** pStr);
CUresult cuGetErrorName(CUresult error, const char** pStr);
CUresult cuDriverGetVersion(int* driverVersion);
CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetCount(int* count);
CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult cuCtxGetCurrent(CUcontext* pctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxGetDevice(CUdevice* device);
CUresult cuCtxSynchronize(void);
CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr);
CUresult cuMemAlloc(CUdeviceptr* dptr, size_t bytesize);
CUresult cuMemFree(CUdeviceptr dptr);
CUresult cuMemGetInfo(size_t* free, size_t* total);
CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count);
CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop, CUmemAllocationGranularity_flags option);
CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle, CUmemAllocationHandleType handleType, unsigned long long flags);
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle, CUmemAllocationHandleType shHandleType);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
CUresult cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count, CUmemcpyAttributes* attrs,
                            size_t* attrsIdxs, size_t numAttrs, size_t* failIdx, CUstream hStream);
CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* symbolStatus);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra);
}

// ESBMC-GPU's verification harness (its regression suite's cuda.h declares these): each launches
// the kernel with the given grid and block (numbers or dim3s) and passes the rest through.
// Declared here so that programs written for it reach their kernels; the ESBMC_ prefix is that
// tool's own.
#define KERNELVET_ESBMC_LAUNCH(name)                                                              \
  template <typename Kernel, typename Grid, typename Block, typename... Args>                     \
  void name(Kernel kernel, Grid blocks, Block threads, Args... args) {                            \
    kernel<<<blocks, threads>>>(args...);                                                         \
  }
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_c)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_f)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_four)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_fuintint)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_fuintt)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_i)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_intt)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_three_args_iuull)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_u)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_ui)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_with_three_args)
KERNELVET_ESBMC_LAUNCH(ESBMC_verify_kernel_with_two_args)
#undef KERNELVET_ESBMC_LAUNCH
