// kernelvet shim: textures and CUDA arrays (texture objects, the legacy texture references, channel
// descriptors). A texture fetch is not a memory access the checks judge: coordinates outside the
// texture are clamped, wrapped, mirrored or read the border colour (its addressing mode), never
// memory past it. Its value is the texture's contents, which the engine does not follow: any value
// of its type (a finding that needs one is inconclusive, needs-values).
#pragma once

enum cudaChannelFormatKind {
  cudaChannelFormatKindSigned = 0,
  cudaChannelFormatKindUnsigned = 1,
  cudaChannelFormatKindFloat = 2,
  cudaChannelFormatKindNone = 3
};
struct cudaChannelFormatDesc {
  int x, y, z, w;
  enum cudaChannelFormatKind f;
};
template <class T> inline cudaChannelFormatDesc cudaCreateChannelDesc() {
  cudaChannelFormatDesc d = {8 * (int)sizeof(T), 0, 0, 0, cudaChannelFormatKindFloat};
  return d;
}
inline cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f) {
  cudaChannelFormatDesc d = {x, y, z, w, f};
  return d;
}

typedef struct cudaArray* cudaArray_t;
typedef const struct cudaArray* cudaArray_const_t;
typedef struct cudaMipmappedArray* cudaMipmappedArray_t;

enum cudaResourceType {
  cudaResourceTypeArray = 0,
  cudaResourceTypeMipmappedArray = 1,
  cudaResourceTypeLinear = 2,
  cudaResourceTypePitch2D = 3
};
enum cudaTextureAddressMode { cudaAddressModeWrap = 0, cudaAddressModeClamp = 1, cudaAddressModeMirror = 2, cudaAddressModeBorder = 3 };
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };

// The runtime's `res` is a union; programs set one member by name, which a struct of them all
// supports as well.
struct cudaResourceDesc {
  enum cudaResourceType resType;
  struct {
    struct { cudaArray_t array; } array;
    struct { cudaMipmappedArray_t mipmap; } mipmap;
    struct { void* devPtr; struct cudaChannelFormatDesc desc; size_t sizeInBytes; } linear;
    struct { void* devPtr; struct cudaChannelFormatDesc desc; size_t width; size_t height; size_t pitchInBytes; } pitch2D;
  } res;
};
struct cudaTextureDesc {
  enum cudaTextureAddressMode addressMode[3];
  enum cudaTextureFilterMode filterMode;
  enum cudaTextureReadMode readMode;
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned int maxAnisotropy;
  enum cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  int disableTrilinearOptimization;
  int seamlessCubemap;
};
struct cudaResourceViewDesc {
  int format;
  size_t width, height, depth;
  unsigned int firstMipmapLevel, lastMipmapLevel, firstLayer, lastLayer;
};

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* pTexObject, const struct cudaResourceDesc* pResDesc,
                                    const struct cudaTextureDesc* pTexDesc,
                                    const struct cudaResourceViewDesc* pResViewDesc);
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject);
// cudaMallocArray flags.
#define cudaArrayDefault 0x00
#define cudaArraySurfaceLoadStore 0x02
cudaError_t cudaMallocArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc, size_t width,
                            size_t height = 0, unsigned int flags = 0);
cudaError_t cudaFreeArray(cudaArray_t array);
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                              cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind);

// Legacy texture references (removed in CUDA 12, still in suites and older programs).
// The attribute makes a texture variable usable in device code, as nvcc's built-in type is.
template <class T, int dim = 1, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct __attribute__((device_builtin_texture_type)) texture {
  int normalized;
  enum cudaTextureFilterMode filterMode;
  enum cudaTextureAddressMode addressMode[3];
  struct cudaChannelFormatDesc channelDesc;
};
template <class T, int dim, enum cudaTextureReadMode mode>
cudaError_t cudaBindTexture(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                            size_t size = ~(size_t)0);
template <class T, int dim, enum cudaTextureReadMode mode>
cudaError_t cudaBindTexture2D(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                              const struct cudaChannelFormatDesc& desc, size_t width, size_t height, size_t pitch);
template <class T, int dim, enum cudaTextureReadMode mode>
cudaError_t cudaBindTextureToArray(const texture<T, dim, mode>& tex, cudaArray_const_t array);
template <class T, int dim, enum cudaTextureReadMode mode>
cudaError_t cudaUnbindTexture(const texture<T, dim, mode>& tex);

// Fetches (modelled: any value of the type; no access is checked).
template <class T> __device__ T tex1Dfetch(cudaTextureObject_t texObject, int x);
template <class T> __device__ T tex1D(cudaTextureObject_t texObject, float x);
template <class T> __device__ T tex2D(cudaTextureObject_t texObject, float x, float y);
template <class T> __device__ T tex3D(cudaTextureObject_t texObject, float x, float y, float z);
template <class T> __device__ T tex1DLayered(cudaTextureObject_t texObject, float x, int layer);
template <class T> __device__ T tex2DLayered(cudaTextureObject_t texObject, float x, float y, int layer);
template <class T, enum cudaTextureReadMode mode> __device__ T tex1Dfetch(texture<T, 1, mode> t, int x);
template <class T, enum cudaTextureReadMode mode> __device__ T tex1D(texture<T, 1, mode> t, float x);
template <class T, enum cudaTextureReadMode mode> __device__ T tex2D(texture<T, 2, mode> t, float x, float y);
template <class T, enum cudaTextureReadMode mode> __device__ T tex3D(texture<T, 3, mode> t, float x, float y, float z);

// Surfaces: reads and writes of a CUDA array through a surface object, x in bytes. Out of range,
// the boundary mode decides: zero or clamp are safe, trap (the default) aborts the kernel. An
// access in trap mode is checked against the CUDA array the object was made over where the
// program allocated it, else inconclusive (engine/models/cuda.py, surface_access); a read is any
// value.
typedef unsigned long long cudaSurfaceObject_t;
enum cudaSurfaceBoundaryMode { cudaBoundaryModeZero = 0, cudaBoundaryModeClamp = 1, cudaBoundaryModeTrap = 2 };
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* pSurfObject, const struct cudaResourceDesc* pResDesc);
cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject);
template <class T> __device__ void surf1Dread(T* data, cudaSurfaceObject_t surfObject, int x,
                                              cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T> __device__ T surf1Dread(cudaSurfaceObject_t surfObject, int x,
                                           cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T> __device__ void surf2Dread(T* data, cudaSurfaceObject_t surfObject, int x, int y,
                                              cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T> __device__ T surf2Dread(cudaSurfaceObject_t surfObject, int x, int y,
                                           cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T> __device__ void surf3Dread(T* data, cudaSurfaceObject_t surfObject, int x, int y, int z,
                                              cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T> __device__ T surf3Dread(cudaSurfaceObject_t surfObject, int x, int y, int z,
                                           cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T> __device__ void surf1Dwrite(T data, cudaSurfaceObject_t surfObject, int x,
                                               cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T> __device__ void surf2Dwrite(T data, cudaSurfaceObject_t surfObject, int x, int y,
                                               cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
template <class T> __device__ void surf3Dwrite(T data, cudaSurfaceObject_t surfObject, int x, int y, int z,
                                               cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
