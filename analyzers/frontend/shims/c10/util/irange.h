// kernelvet shim: c10::irange, as PyTorch declares it. kernelvet lowers `for (i : c10::irange(...))`
// to a counted loop (frontend/lower.py, range_for), so only the declarations matter here.
#pragma once
#include <algorithm>
#include <type_traits>

namespace c10 {
namespace detail {
template <typename I, bool one_sided = false>
struct integer_iterator {
  I value;
  constexpr I operator*() const { return value; }
  constexpr integer_iterator& operator++() { ++value; return *this; }
  constexpr bool operator==(const integer_iterator& other) const {
    return one_sided ? value >= other.value : value == other.value;
  }
  constexpr bool operator!=(const integer_iterator& other) const { return !(*this == other); }
};
template <typename I, bool one_sided = false>
struct integer_range {
  integer_iterator<I, one_sided> begin_, end_;
  constexpr integer_iterator<I, one_sided> begin() const { return begin_; }
  constexpr integer_iterator<I, one_sided> end() const { return end_; }
};
}  // namespace detail

// Empty when end <= begin (the larger of the two ends the range).
template <typename Integer1, typename Integer2,
          std::enable_if_t<std::is_integral_v<Integer1> && std::is_integral_v<Integer2>, bool> = true>
constexpr detail::integer_range<Integer2> irange(Integer1 begin, Integer2 end) {
  return {{static_cast<Integer2>(begin)}, {std::max(static_cast<Integer2>(begin), end)}};
}

template <typename Integer, std::enable_if_t<std::is_integral_v<Integer>, bool> = true>
constexpr detail::integer_range<Integer, true> irange(Integer end) {
  return {{Integer()}, {end}};
}
}  // namespace c10

namespace at {
using c10::irange;
}
