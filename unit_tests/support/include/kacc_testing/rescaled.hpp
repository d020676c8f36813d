#pragma once
// Checks of scaled views written under kacc::overflow::rescale_on_host, shared by the core,
// blas and sparse tests: every scale is the smallest power of two that holds the entries
// it applies to (counted up here, independently of format_traits::scale_for), every entry
// lies within half an integer step of its scale from the fp64 reference, and the view's
// saturation flag is clear.
#include <kacc/core/view_algorithms.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kacc_testing {

/// The largest integer magnitude that both the storage integer I and the arithmetic type
/// T hold exactly: the scale of data with largest magnitude m maps m to at most this.
template <class T, class I>
double largest_stored_integer() {
  constexpr int id = std::numeric_limits<I>::digits, td = std::numeric_limits<T>::digits;
  return id <= td ? static_cast<double>(std::numeric_limits<I>::max())
                  : std::ldexp(1.0, id) - std::ldexp(1.0, id - td);
}

/// The smallest power of two s, at least T's smallest normal, with m / s <= top, counted
/// up: the scale kacc::deep_copy gives entries whose largest magnitude is m > 0.
template <class T>
double wanted_scale(double m, double top) {
  double s = static_cast<double>(std::numeric_limits<T>::min());
  while (m / s > top) s *= 2;
  return s;
}

/// The values of a rank-1 or rank-2 view as fp64 (row-major for a matrix), on the host.
template <class V>
std::vector<double> values_of(const V& v) {
  if constexpr (V::rank == 1) {
    Kokkos::View<double*, Kokkos::HostSpace> h("h", v.extent(0));
    kacc::deep_copy(h, v);
    return std::vector<double>(h.data(), h.data() + h.size());
  } else {
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> h("h", v.extent(0), v.extent(1));
    kacc::deep_copy(h, v);
    return std::vector<double>(h.data(), h.data() + h.size());
  }
}

/// The scales of a scaled view, on the host.
template <class V>
std::vector<double> scales_of(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.scales());
  return std::vector<double>(h.data(), h.data() + h.size());
}

/// v holds `want` (row-major for a matrix) with scales re-picked for it: each scale the
/// wanted_scale of the largest |want| it applies to (1 for all-zero entries), each entry
/// within half that scale of want, the saturation flag clear.
template <class V>
void expect_rescaled(const V& v, const std::vector<double>& want) {
  using T = typename V::arithmetic_type;
  const double top = largest_stored_integer<T, typename V::storage_type>();
  const auto got = values_of(v);
  const auto scales = scales_of(v);
  ASSERT_EQ(got.size(), want.size());
  const std::size_t n1 = V::rank == 2 ? v.extent(1) : 1;
  auto slot = [&](std::size_t e) -> std::size_t {
    return V::scale_axis < 0 ? 0 : V::rank == 1 || V::scale_axis == 0 ? e / n1 : e % n1;
  };
  std::vector<double> largest(scales.size(), 0.0);
  for (std::size_t e = 0; e < want.size(); ++e)
    largest[slot(e)] = std::max(largest[slot(e)], std::fabs(want[e]));
  for (std::size_t k = 0; k < scales.size(); ++k) {
    const double expected = largest[k] > 0 ? wanted_scale<T>(largest[k], top) : 1.0;
    EXPECT_EQ(scales[k], expected) << "scale " << k << " (largest magnitude " << largest[k] << ")";
  }
  for (std::size_t e = 0; e < want.size(); ++e) {
    EXPECT_LE(std::fabs(got[e] - want[e]), scales[slot(e)] / 2)
        << "entry " << e << ": stored " << got[e] << ", reference " << want[e];
  }
  EXPECT_FALSE(v.saturated()) << "a re-scaled write leaves the saturation flag clear";
}

}  // namespace kacc_testing
