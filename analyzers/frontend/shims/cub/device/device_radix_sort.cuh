// kernelvet shim: cub's device-wide radix sort (host API; the engine sees the calls, not the sort).
#pragma once
#include <cub/cub.cuh>
namespace cub {
struct DeviceRadixSort {
  template <class KeyT, class ValueT, class NumItemsT>
  static cudaError_t SortPairs(void* d_temp_storage, size_t& temp_storage_bytes, const KeyT* d_keys_in, KeyT* d_keys_out,
                               const ValueT* d_values_in, ValueT* d_values_out, NumItemsT num_items, int begin_bit = 0,
                               int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0);
  template <class KeyT, class ValueT, class NumItemsT>
  static cudaError_t SortPairs(void* d_temp_storage, size_t& temp_storage_bytes, DoubleBuffer<KeyT>& d_keys,
                               DoubleBuffer<ValueT>& d_values, NumItemsT num_items, int begin_bit = 0,
                               int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0);
  template <class KeyT, class ValueT, class NumItemsT>
  static cudaError_t SortPairsDescending(void* d_temp_storage, size_t& temp_storage_bytes, const KeyT* d_keys_in,
                                         KeyT* d_keys_out, const ValueT* d_values_in, ValueT* d_values_out,
                                         NumItemsT num_items, int begin_bit = 0, int end_bit = sizeof(KeyT) * 8,
                                         cudaStream_t stream = 0);
  template <class KeyT, class NumItemsT>
  static cudaError_t SortKeys(void* d_temp_storage, size_t& temp_storage_bytes, const KeyT* d_keys_in, KeyT* d_keys_out,
                              NumItemsT num_items, int begin_bit = 0, int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0);
  template <class KeyT, class NumItemsT>
  static cudaError_t SortKeysDescending(void* d_temp_storage, size_t& temp_storage_bytes, const KeyT* d_keys_in,
                                        KeyT* d_keys_out, NumItemsT num_items, int begin_bit = 0,
                                        int end_bit = sizeof(KeyT) * 8, cudaStream_t stream = 0);
};
struct DeviceScan {
  template <class InputIt, class OutputIt, class NumItemsT>
  static cudaError_t ExclusiveSum(void* d_temp_storage, size_t& temp_storage_bytes, InputIt d_in, OutputIt d_out,
                                  NumItemsT num_items, cudaStream_t stream = 0);
  template <class InputIt, class OutputIt, class NumItemsT>
  static cudaError_t InclusiveSum(void* d_temp_storage, size_t& temp_storage_bytes, InputIt d_in, OutputIt d_out,
                                  NumItemsT num_items, cudaStream_t stream = 0);
};
struct DeviceReduce {
  template <class InputIt, class OutputIt, class NumItemsT>
  static cudaError_t Sum(void* d_temp_storage, size_t& temp_storage_bytes, InputIt d_in, OutputIt d_out,
                         NumItemsT num_items, cudaStream_t stream = 0);
  template <class InputIt, class OutputIt, class NumItemsT>
  static cudaError_t Max(void* d_temp_storage, size_t& temp_storage_bytes, InputIt d_in, OutputIt d_out,
                         NumItemsT num_items, cudaStream_t stream = 0);
};
}  // namespace cub
