#pragma once
/// @file
/// Binary + - * / for the multi-double types (double_double, quad_double), derived from
/// their compound assignments, with a double on either side; one mixin instead of twelve
/// operators per type.

#include <kacc/core/config.hpp>

namespace kacc {
namespace detail {

/// Base of D (CRTP): hidden friends x op y computed as a copy of x op= y, so each takes
/// exactly the rounding of D's compound operator (a double operand converts to D where D
/// has no compound operator for double). Found by ADL only, as D's own operators would be.
template <class D>
struct arithmetic_from_compound {
  /// x + y.
  friend KOKKOS_INLINE_FUNCTION D operator+(D x, const D& y) { return x += y; }
  /// x + y for a double y.
  friend KOKKOS_INLINE_FUNCTION D operator+(D x, double y) { return x += y; }
  /// x + y for a double x.
  friend KOKKOS_INLINE_FUNCTION D operator+(double x, D y) { return y += x; }
  /// x - y.
  friend KOKKOS_INLINE_FUNCTION D operator-(D x, const D& y) { return x -= y; }
  /// x - y for a double y: x + (-y), exact negation.
  friend KOKKOS_INLINE_FUNCTION D operator-(D x, double y) { return x += -y; }
  /// x - y for a double x: (-y) + x, exact negation.
  friend KOKKOS_INLINE_FUNCTION D operator-(double x, const D& y) { return -y + x; }
  /// x * y.
  friend KOKKOS_INLINE_FUNCTION D operator*(D x, const D& y) { return x *= y; }
  /// x * y for a double y.
  friend KOKKOS_INLINE_FUNCTION D operator*(D x, double y) { return x *= y; }
  /// x * y for a double x.
  friend KOKKOS_INLINE_FUNCTION D operator*(double x, D y) { return y *= x; }
  /// x / y.
  friend KOKKOS_INLINE_FUNCTION D operator/(D x, const D& y) { return x /= y; }
  /// x / y for a double y.
  friend KOKKOS_INLINE_FUNCTION D operator/(D x, double y) { return x /= y; }
  /// x / y for a double x.
  friend KOKKOS_INLINE_FUNCTION D operator/(double x, const D& y) { return D(x) /= y; }
};

}  // namespace detail
}  // namespace kacc
