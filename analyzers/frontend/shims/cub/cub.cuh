// kernelvet shim: the cub block/warp collectives kernels use. Results are values of the right type
// (modelled by the engine); TempStorage has the size class of cub's so shared-memory budgets hold.
#pragma once
#include <kernelvet_cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <limits>
namespace cub {
struct Sum { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const { return a + b; } };
struct Max { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
struct Min { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const { return b < a ? b : a; } };
template <class K, class V> struct KeyValuePair { K key; V value; };
struct ArgMax { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const; };
struct ArgMin { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const; };
enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY, BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };
enum BlockLoadAlgorithm { BLOCK_LOAD_DIRECT, BLOCK_LOAD_VECTORIZE, BLOCK_LOAD_TRANSPOSE, BLOCK_LOAD_WARP_TRANSPOSE };

template <typename T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce {
 public:
  struct TempStorage { T warp_aggregates[(BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z + 31) / 32 + 1]; };
  __device__ BlockReduce(TempStorage& temp_storage);
  __device__ T Sum(T input);
  __device__ T Sum(T input, int num_valid);
  template <int N> __device__ T Sum(T (&inputs)[N]);
  template <class Op> __device__ T Reduce(T input, Op reduction_op);
  template <class Op> __device__ T Reduce(T input, Op reduction_op, int num_valid);
};

template <typename T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpReduce {
 public:
  struct TempStorage { T reduce[LOGICAL_WARP_THREADS]; };
  __device__ WarpReduce(TempStorage& temp_storage);
  __device__ T Sum(T input);
  __device__ T Sum(T input, int valid_items);
  template <class Op> __device__ T Reduce(T input, Op reduction_op);
  template <class Op> __device__ T Reduce(T input, Op reduction_op, int valid_items);
};

template <typename T, int BLOCK_DIM_X, BlockScanAlgorithm ALGORITHM = BLOCK_SCAN_RAKING,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockScan {
 public:
  struct TempStorage { T scan[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z + 32]; };
  __device__ BlockScan(TempStorage& temp_storage);
  __device__ void ExclusiveSum(T input, T& output);
  __device__ void ExclusiveSum(T input, T& output, T& block_aggregate);
  __device__ void InclusiveSum(T input, T& output);
  __device__ void InclusiveSum(T input, T& output, T& block_aggregate);
  template <class Op> __device__ void ExclusiveScan(T input, T& output, T initial, Op op);
  template <class Op> __device__ void InclusiveScan(T input, T& output, Op op);
};

template <typename T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpScan {
 public:
  struct TempStorage { T scan[LOGICAL_WARP_THREADS]; };
  __device__ WarpScan(TempStorage& temp_storage);
  __device__ void ExclusiveSum(T input, T& output);
  __device__ void InclusiveSum(T input, T& output);
};

template <class T> __device__ T ShuffleIndex(T input, int src_lane, unsigned int member_mask);
__device__ unsigned int LaneId();
__device__ unsigned int WarpId();
template <class T> __host__ __device__ constexpr T DivideAndRoundUp(T n, T d) { return (n + d - 1) / d; }
}  // namespace cub
