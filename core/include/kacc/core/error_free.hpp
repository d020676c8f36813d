#pragma once
/// @file
/// Error-free transformations: a + b and a * b as an unevaluated sum of a rounded result
/// and its exact rounding error (Knuth's TwoSum, Dekker's FastTwoSum, the FMA
/// TwoProduct). The building blocks of kacc::compensated's products, double_double and
/// quad_double. Exact as long as nothing overflows; TwoProduct also needs the product
/// not to underflow (|a b| >= 2^-969 for doubles).

#include <kacc/core/config.hpp>

#include <cmath>
#include <type_traits>

namespace kacc {
namespace math {

/// a * b + c with one rounding, on host and device, for float and double.
template <class T,
          class = std::enable_if_t<std::is_same<T, double>::value || std::is_same<T, float>::value>>
KOKKOS_INLINE_FUNCTION T fma(T a, T b, T c) {
#if defined(KACC_DEVICE_PASS)
  if constexpr (std::is_same<T, float>::value) {
    return ::fmaf(a, b, c);
  } else {
    return ::fma(a, b, c);
  }
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace math

namespace eft {

/// s = fl(a + b), e = a + b - s exactly (Knuth; no condition on a and b). The inputs are
/// copies, so s or e may be a or b.
template <class T>
KOKKOS_INLINE_FUNCTION void two_sum(T a, T b, T& s, T& e) {
  s = a + b;
  const T bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

/// s = fl(a + b), e = a + b - s exactly, for |a| >= |b| or a = 0 (Dekker).
template <class T>
KOKKOS_INLINE_FUNCTION void fast_two_sum(T a, T b, T& s, T& e) {
  s = a + b;
  e = b - (s - a);
}

/// p = fl(a b), e = a b - p exactly (one FMA).
template <class T>
KOKKOS_INLINE_FUNCTION void two_prod(T a, T b, T& p, T& e) {
  p = a * b;
  e = math::fma(a, b, -p);
}

}  // namespace eft
}  // namespace kacc
