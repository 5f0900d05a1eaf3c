// kernelvet shim: cooperative groups. Ranks and sizes are written in terms of threadIdx/blockIdx
// so the engine computes them; synchronisation and shuffles go to the modelled intrinsics.
#pragma once
#include <kernelvet_cuda.h>

namespace cooperative_groups {
namespace __kv {
__device__ inline unsigned int block_size() { return blockDim.x * blockDim.y * blockDim.z; }
__device__ inline unsigned int block_rank() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
__device__ inline unsigned long long grid_blocks() { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
__device__ inline unsigned long long grid_block_rank() {
  return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
}
}  // namespace __kv

class thread_group {
 public:
  __device__ void sync() const { __syncthreads(); }
  __device__ unsigned long long size() const { return __kv::block_size(); }
  __device__ unsigned long long num_threads() const { return __kv::block_size(); }
  __device__ unsigned long long thread_rank() const { return __kv::block_rank(); }
};

class thread_block : public thread_group {
 public:
  __device__ void sync() const { __syncthreads(); }
  __device__ unsigned int size() const { return __kv::block_size(); }
  __device__ unsigned int num_threads() const { return __kv::block_size(); }
  __device__ unsigned int thread_rank() const { return __kv::block_rank(); }
  __device__ dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  __device__ dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  __device__ dim3 group_dim() const { return blockDim; }
  __device__ dim3 dim_threads() const { return blockDim; }
};
__device__ inline thread_block this_thread_block() { return thread_block(); }

class grid_group {
 public:
  __device__ void sync() const;  // a grid-wide barrier (cooperative launch)
  __device__ bool is_valid() const;
  __device__ unsigned long long size() const { return __kv::grid_blocks() * __kv::block_size(); }
  __device__ unsigned long long num_threads() const { return __kv::grid_blocks() * __kv::block_size(); }
  __device__ unsigned long long thread_rank() const { return __kv::grid_block_rank() * __kv::block_size() + __kv::block_rank(); }
  __device__ unsigned long long num_blocks() const { return __kv::grid_blocks(); }
  __device__ unsigned long long block_rank() const { return __kv::grid_block_rank(); }
  __device__ dim3 group_dim() const { return gridDim; }
  __device__ dim3 dim_blocks() const { return gridDim; }
  __device__ dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
};
__device__ inline grid_group this_grid() { return grid_group(); }

// Thread block clusters (sm_90). The cluster's shape is not part of a launch the engine sees: ranks
// within it are any value below its size.
class cluster_group {
 public:
  __device__ void sync() const;
  __device__ void barrier_arrive() const;
  __device__ void barrier_wait() const;
  __device__ bool is_valid() const;
  __device__ unsigned int block_rank() const;
  __device__ unsigned int num_blocks() const;
  __device__ unsigned int thread_rank() const;
  __device__ unsigned int num_threads() const;
  __device__ dim3 block_index() const;
  __device__ dim3 dim_blocks() const;
  __device__ unsigned int query_shared_rank(const void* addr) const;
  // Another block's copy of a shared variable has the same layout: the engine checks accesses
  // through the returned pointer against this block's copy.
  template <class T> __device__ T* map_shared_rank(T* addr, unsigned int rank) const { return addr; }
};
__device__ inline cluster_group this_cluster() { return cluster_group(); }

// A tile of Size threads of the block (Size a power of two, at most 32 for warp-level operations).
template <unsigned int Size, class ParentT = void> class thread_block_tile;
template <unsigned int Size> class thread_block_tile<Size, void> {
 public:
  static constexpr unsigned int num_threads_v = Size;
  __device__ void sync() const { __syncwarp(); }
  __device__ static constexpr unsigned int size() { return Size; }
  __device__ static constexpr unsigned int num_threads() { return Size; }
  __device__ unsigned int thread_rank() const { return __kv::block_rank() % Size; }
  __device__ unsigned int meta_group_rank() const { return __kv::block_rank() / Size; }
  __device__ unsigned int meta_group_size() const { return (__kv::block_size() + Size - 1) / Size; }
  template <class T> __device__ T shfl(T var, int srcRank) const { return __shfl_sync(0xffffffffu, var, srcRank, Size); }
  template <class T> __device__ T shfl_down(T var, unsigned int delta) const { return __shfl_down_sync(0xffffffffu, var, delta, Size); }
  template <class T> __device__ T shfl_up(T var, unsigned int delta) const { return __shfl_up_sync(0xffffffffu, var, delta, Size); }
  template <class T> __device__ T shfl_xor(T var, unsigned int laneMask) const { return __shfl_xor_sync(0xffffffffu, var, laneMask, Size); }
  __device__ int any(int predicate) const { return __any_sync(0xffffffffu, predicate); }
  __device__ int all(int predicate) const { return __all_sync(0xffffffffu, predicate); }
  __device__ unsigned int ballot(int predicate) const { return __ballot_sync(0xffffffffu, predicate); }
  template <class T> __device__ unsigned int match_any(T value) const { return __match_any_sync(0xffffffffu, value); }
};
template <unsigned int Size, class ParentT> class thread_block_tile : public thread_block_tile<Size, void> {};

template <unsigned int Size, class ParentT>
__device__ thread_block_tile<Size, ParentT> tiled_partition(const ParentT& parent) { return thread_block_tile<Size, ParentT>(); }
__device__ thread_group tiled_partition(const thread_group& parent, unsigned int tilesz);

class coalesced_group : public thread_group {
 public:
  __device__ void sync() const { __syncwarp(); }
  __device__ unsigned int size() const;
  __device__ unsigned int num_threads() const;
  __device__ unsigned int thread_rank() const;
  template <class T> __device__ T shfl(T var, int srcRank) const { return __shfl_sync(__activemask(), var, srcRank); }
};
__device__ coalesced_group coalesced_threads();

template <class Group> __device__ void sync(const Group& g) { g.sync(); }
template <class Group> __device__ unsigned long long thread_rank(const Group& g) { return g.thread_rank(); }
template <class Group> __device__ unsigned long long group_size(const Group& g) { return g.size(); }
}  // namespace cooperative_groups
