// kernelvet shim: the cub block/warp collectives kernels use. Results are values of the right type
// (modelled by the engine); TempStorage has the size class of cub's so shared-memory budgets hold.
#pragma once
#include <kernelvet_cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <limits>
#include <type_traits>
namespace cub {
// Temporary storage is raw bytes of the size and alignment of its items (cub's Uninitialized<>),
// so a __shared__ TempStorage of a class type has no constructor to run.
template <class T, int N> struct __KvRawStorage { alignas(alignof(T)) unsigned char bytes[sizeof(T) * N]; };
struct Sum { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const { return a + b; } };
struct Max { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
struct Min { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const { return b < a ? b : a; } };
template <class K, class V> struct KeyValuePair { K key; V value; };
struct ArgMax { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const; };
struct ArgMin { template <class T> __host__ __device__ T operator()(const T& a, const T& b) const; };
enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY, BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };
enum BlockLoadAlgorithm { BLOCK_LOAD_DIRECT, BLOCK_LOAD_STRIPED, BLOCK_LOAD_VECTORIZE, BLOCK_LOAD_TRANSPOSE, BLOCK_LOAD_WARP_TRANSPOSE, BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED };
enum BlockStoreAlgorithm { BLOCK_STORE_DIRECT, BLOCK_STORE_STRIPED, BLOCK_STORE_VECTORIZE, BLOCK_STORE_TRANSPOSE, BLOCK_STORE_WARP_TRANSPOSE, BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED };
struct NullType {};

template <typename T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce {
 public:
  struct TempStorage : __KvRawStorage<T, (BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z + 31) / 32 + 1> {};
  __device__ BlockReduce(TempStorage& temp_storage);
  __device__ T Sum(T input);
  __device__ T Sum(T input, int num_valid);
  template <int N> __device__ T Sum(T (&inputs)[N]);
  template <class Op> __device__ T Reduce(T input, Op reduction_op);
  template <class Op> __device__ T Reduce(T input, Op reduction_op, int num_valid);
  template <int N, class Op> __device__ T Reduce(T (&inputs)[N], Op reduction_op);
};

template <typename T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpReduce {
 public:
  struct TempStorage : __KvRawStorage<T, LOGICAL_WARP_THREADS> {};
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
  struct TempStorage : __KvRawStorage<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z + 32> {};
  __device__ BlockScan(TempStorage& temp_storage);
  __device__ void ExclusiveSum(T input, T& output);
  __device__ void ExclusiveSum(T input, T& output, T& block_aggregate);
  __device__ void InclusiveSum(T input, T& output);
  __device__ void InclusiveSum(T input, T& output, T& block_aggregate);
  template <class Op> __device__ void ExclusiveScan(T input, T& output, T initial, Op op);
  template <class Op> __device__ void InclusiveScan(T input, T& output, Op op);
  template <class Op> __device__ void InclusiveScan(T input, T& output, Op op, T& block_aggregate);
  template <class Op, class PrefixOp> __device__ void InclusiveScan(T input, T& output, Op op, PrefixOp& prefix_op);
  template <class Op, class PrefixOp> __device__ void ExclusiveScan(T input, T& output, Op op, PrefixOp& prefix_op);
  template <class PrefixOp> __device__ void ExclusiveSum(T input, T& output, PrefixOp& prefix_op);
  template <class PrefixOp> __device__ void InclusiveSum(T input, T& output, PrefixOp& prefix_op);
  template <int N, class Op> __device__ void InclusiveScan(T (&input)[N], T (&output)[N], Op op);
  template <int N, class Op> __device__ void InclusiveScan(T (&input)[N], T (&output)[N], Op op, T& block_aggregate);
  template <int N, class Op, class PrefixOp> __device__ void InclusiveScan(T (&input)[N], T (&output)[N], Op op, PrefixOp& prefix_op);
  template <int N, class Op> __device__ void ExclusiveScan(T (&input)[N], T (&output)[N], T initial, Op op);
  template <int N, class Op, class PrefixOp> __device__ void ExclusiveScan(T (&input)[N], T (&output)[N], Op op, PrefixOp& prefix_op);
  template <int N> __device__ void ExclusiveSum(T (&input)[N], T (&output)[N]);
  template <int N> __device__ void InclusiveSum(T (&input)[N], T (&output)[N]);
  template <int N> __device__ void ExclusiveSum(T (&input)[N], T (&output)[N], T& block_aggregate);
  template <int N> __device__ void InclusiveSum(T (&input)[N], T (&output)[N], T& block_aggregate);
};

// Differences and flags between each item and its neighbour in a blocked arrangement (the block
// synchronises inside; the results are values the engine does not compute).
template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockAdjacentDifference {
 public:
  struct TempStorage : __KvRawStorage<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z> {};
  __device__ BlockAdjacentDifference(TempStorage& temp_storage);
  template <int N, class OutputT, class Op> __device__ void SubtractLeft(T (&input)[N], OutputT (&output)[N], Op op);
  template <int N, class OutputT, class Op>
  __device__ void SubtractLeft(T (&input)[N], OutputT (&output)[N], Op op, T tile_predecessor_item);
  template <int N, class OutputT, class Op>
  __device__ void SubtractLeftPartialTile(T (&input)[N], OutputT (&output)[N], Op op, int valid_items);
  template <int N, class OutputT, class Op>
  __device__ void SubtractLeftPartialTile(T (&input)[N], OutputT (&output)[N], Op op, int valid_items,
                                          T tile_predecessor_item);
  template <int N, class OutputT, class Op> __device__ void SubtractRight(T (&input)[N], OutputT (&output)[N], Op op);
  template <int N, class OutputT, class Op>
  __device__ void SubtractRight(T (&input)[N], OutputT (&output)[N], Op op, T tile_successor_item);
  template <int N, class OutputT, class Op>
  __device__ void SubtractRightPartialTile(T (&input)[N], OutputT (&output)[N], Op op, int valid_items);
};

template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockDiscontinuity {
 public:
  struct TempStorage : __KvRawStorage<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z> {};
  __device__ BlockDiscontinuity(TempStorage& temp_storage);
  template <int N, class FlagT, class Op> __device__ void FlagHeads(FlagT (&head_flags)[N], T (&input)[N], Op op);
  template <int N, class FlagT, class Op>
  __device__ void FlagHeads(FlagT (&head_flags)[N], T (&input)[N], Op op, T tile_predecessor_item);
  template <int N, class FlagT, class Op> __device__ void FlagTails(FlagT (&tail_flags)[N], T (&input)[N], Op op);
  template <int N, class FlagT, class Op>
  __device__ void FlagTails(FlagT (&tail_flags)[N], T (&input)[N], Op op, T tile_successor_item);
  template <int N, class FlagT, class Op>
  __device__ void FlagHeadsAndTails(FlagT (&head_flags)[N], FlagT (&tail_flags)[N], T (&input)[N], Op op);
};

template <typename T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpScan {
 public:
  struct TempStorage : __KvRawStorage<T, LOGICAL_WARP_THREADS> {};
  __device__ WarpScan(TempStorage& temp_storage);
  __device__ void ExclusiveSum(T input, T& output);
  __device__ void InclusiveSum(T input, T& output);
};

// Block-wide loads and stores of ITEMS_PER_THREAD items per thread. Whatever the algorithm (the
// arrangement in registers differs), the block reads or writes items [0, BLOCK_THREADS *
// ITEMS_PER_THREAD) of the range, guarded by valid_items: the blocked arrangement below makes the
// same accesses.
template <typename T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, BlockLoadAlgorithm ALGORITHM = BLOCK_LOAD_DIRECT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockLoad {
 public:
  struct TempStorage : __KvRawStorage<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z * ITEMS_PER_THREAD + 1> {};
  __device__ BlockLoad() {}
  __device__ BlockLoad(TempStorage& temp_storage) {}
  template <class It> __device__ void Load(It block_itr, T (&items)[ITEMS_PER_THREAD]) {
    const int tid = threadIdx.x + BLOCK_DIM_X * (threadIdx.y + BLOCK_DIM_Y * threadIdx.z);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = block_itr[tid * ITEMS_PER_THREAD + i];
  }
  template <class It> __device__ void Load(It block_itr, T (&items)[ITEMS_PER_THREAD], int valid_items) {
    const int tid = threadIdx.x + BLOCK_DIM_X * (threadIdx.y + BLOCK_DIM_Y * threadIdx.z);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
      if (tid * ITEMS_PER_THREAD + i < valid_items) items[i] = block_itr[tid * ITEMS_PER_THREAD + i];
  }
  template <class It, class D> __device__ void Load(It block_itr, T (&items)[ITEMS_PER_THREAD], int valid_items, D oob_default) {
    const int tid = threadIdx.x + BLOCK_DIM_X * (threadIdx.y + BLOCK_DIM_Y * threadIdx.z);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
      items[i] = tid * ITEMS_PER_THREAD + i < valid_items ? T(block_itr[tid * ITEMS_PER_THREAD + i]) : T(oob_default);
  }
};
template <typename T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, BlockStoreAlgorithm ALGORITHM = BLOCK_STORE_DIRECT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockStore {
 public:
  struct TempStorage : __KvRawStorage<T, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z * ITEMS_PER_THREAD + 1> {};
  __device__ BlockStore() {}
  __device__ BlockStore(TempStorage& temp_storage) {}
  template <class It> __device__ void Store(It block_itr, T (&items)[ITEMS_PER_THREAD]) {
    const int tid = threadIdx.x + BLOCK_DIM_X * (threadIdx.y + BLOCK_DIM_Y * threadIdx.z);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) block_itr[tid * ITEMS_PER_THREAD + i] = items[i];
  }
  template <class It> __device__ void Store(It block_itr, T (&items)[ITEMS_PER_THREAD], int valid_items) {
    const int tid = threadIdx.x + BLOCK_DIM_X * (threadIdx.y + BLOCK_DIM_Y * threadIdx.z);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i)
      if (tid * ITEMS_PER_THREAD + i < valid_items) block_itr[tid * ITEMS_PER_THREAD + i] = items[i];
  }
};

// Block-wide radix sort of the threads' keys (and values) in registers.
template <typename KeyT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, typename ValueT = NullType, int RADIX_BITS = 4,
          bool MEMOIZE_OUTER_SCAN = true, BlockScanAlgorithm INNER_SCAN_ALGORITHM = BLOCK_SCAN_WARP_SCANS,
          cudaSharedMemConfig SMEM_CONFIG = cudaSharedMemBankSizeFourByte, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1,
          int LEGACY_PTX_ARCH = 0>
class BlockRadixSort {
 public:
  struct TempStorage : __KvRawStorage<KeyT, BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z * (ITEMS_PER_THREAD + (4 << RADIX_BITS) / sizeof(KeyT)) + 1> {};
  __device__ BlockRadixSort();
  __device__ BlockRadixSort(TempStorage& temp_storage);
  __device__ void Sort(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8);
  __device__ void Sort(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8);
  __device__ void SortDescending(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8);
  __device__ void SortDescending(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8);
  __device__ void SortBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8);
  __device__ void SortBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8);
  __device__ void SortDescendingBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8);
  __device__ void SortDescendingBlockedToStriped(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD], int begin_bit = 0, int end_bit = sizeof(KeyT) * 8);
};

// Radix-sortable bit patterns of keys: TwiddleIn maps a key to unsigned bits that order as the
// keys do; TwiddleOut maps them back.
template <class T, class Enable = void> struct Traits;
template <class T> struct Traits<T, typename std::enable_if<std::is_integral<T>::value>::type> {
  using UnsignedBits = typename std::make_unsigned<T>::type;
  static constexpr UnsignedBits HIGH_BIT = std::is_signed<T>::value ? UnsignedBits(UnsignedBits(1) << (sizeof(T) * 8 - 1)) : UnsignedBits(0);
  static constexpr bool PRIMITIVE = true;
  static constexpr bool NULL_TYPE = false;
  __host__ __device__ static UnsignedBits TwiddleIn(UnsignedBits key) { return key ^ HIGH_BIT; }
  __host__ __device__ static UnsignedBits TwiddleOut(UnsignedBits key) { return key ^ HIGH_BIT; }
  __host__ __device__ static T Max() { return std::numeric_limits<T>::max(); }
  __host__ __device__ static T Lowest() { return std::numeric_limits<T>::lowest(); }
};
template <class T, class U> struct __FloatTraits {
  using UnsignedBits = U;
  static constexpr U HIGH_BIT = U(U(1) << (sizeof(U) * 8 - 1));
  static constexpr bool PRIMITIVE = true;
  static constexpr bool NULL_TYPE = false;
  __host__ __device__ static U TwiddleIn(U key) { return key ^ ((key & HIGH_BIT) ? U(~U(0)) : HIGH_BIT); }
  __host__ __device__ static U TwiddleOut(U key) { return key ^ ((key & HIGH_BIT) ? HIGH_BIT : U(~U(0))); }
};
template <> struct Traits<float> : __FloatTraits<float, unsigned int> {};
template <> struct Traits<double> : __FloatTraits<double, unsigned long long> {};
template <> struct Traits<__half> : __FloatTraits<__half, unsigned short> {};
template <> struct Traits<__nv_bfloat16> : __FloatTraits<__nv_bfloat16, unsigned short> {};
template <class T> struct NumericTraits : Traits<T> {};

// Double buffers for device-wide sorts.
template <class T> struct DoubleBuffer {
  T* d_buffers[2];
  int selector;
  __host__ __device__ DoubleBuffer() : selector(0) { d_buffers[0] = nullptr; d_buffers[1] = nullptr; }
  __host__ __device__ DoubleBuffer(T* d_current, T* d_alternate) : selector(0) { d_buffers[0] = d_current; d_buffers[1] = d_alternate; }
  __host__ __device__ T* Current() { return d_buffers[selector]; }
  __host__ __device__ T* Alternate() { return d_buffers[selector ^ 1]; }
};

template <class T> __device__ T ShuffleIndex(T input, int src_lane, unsigned int member_mask);
__device__ unsigned int LaneId();
__device__ unsigned int WarpId();
template <class T> __host__ __device__ constexpr T DivideAndRoundUp(T n, T d) { return (n + d - 1) / d; }
}  // namespace cub
#include <cub/device/device_radix_sort.cuh>
