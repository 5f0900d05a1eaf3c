// kernelvet shim: cooperative_groups::reduce and scans over a tile, with the functors they take.
#pragma once
#include <cooperative_groups.h>

namespace cooperative_groups {
template <class T> struct plus { __device__ T operator()(const T& a, const T& b) const { return a + b; } };
template <class T> struct less { __device__ T operator()(const T& a, const T& b) const { return b < a ? b : a; } };
template <class T> struct greater { __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
template <class T> struct bit_and { __device__ T operator()(const T& a, const T& b) const { return a & b; } };
template <class T> struct bit_or { __device__ T operator()(const T& a, const T& b) const { return a | b; } };
template <class T> struct bit_xor { __device__ T operator()(const T& a, const T& b) const { return a ^ b; } };

// A butterfly over the tile: every thread ends with the reduction of all the tile's values.
template <class Group, class T, class Op>
__device__ T reduce(const Group& group, T val, Op op) {
  for (unsigned int offset = group.size() / 2; offset > 0; offset /= 2) {
    val = op(val, group.shfl_xor(val, offset));
  }
  return val;
}
// Scans: the value of the lanes up to (inclusive) or before (exclusive) this one.
template <class Group, class T, class Op>
__device__ T inclusive_scan(const Group& group, T val, Op op) {
  for (unsigned int offset = 1; offset < group.size(); offset *= 2) {
    T other = group.shfl_up(val, offset);
    if (group.thread_rank() >= offset) val = op(val, other);
  }
  return val;
}
template <class Group, class T>
__device__ T inclusive_scan(const Group& group, T val) { return inclusive_scan(group, val, plus<T>()); }
template <class Group, class T, class Op>
__device__ T exclusive_scan(const Group& group, T val, Op op) {
  T inc = inclusive_scan(group, val, op);
  T prev = group.shfl_up(inc, 1);
  return group.thread_rank() == 0 ? T() : prev;
}
template <class Group, class T>
__device__ T exclusive_scan(const Group& group, T val) { return exclusive_scan(group, val, plus<T>()); }
}  // namespace cooperative_groups
