#pragma once
/// @file
/// kacc::blas::dot(exec, x, y): sum_i x(i) y(i) for vectors of any storage formats,
/// computed in the common arithmetic type (or Arith) and accumulated in Acc.

#include <kacc/blas/detail.hpp>

namespace kacc {
namespace blas {

/// Returns x . y. Arith defaults to the common arithmetic type of x and y, Acc to Arith
/// (e.g. `dot<double, kacc::compensated<double>>(exec, x, y)`). Empty vectors give 0.
/// Throws std::invalid_argument when the extents differ.
template <class Arith = void, class Acc = void, class Exec, class X, class Y,
          class = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
detail::arith_t<Arith, X, Y> dot(const Exec& exec, const X& x, const Y& y) {
  using T = detail::arith_t<Arith, X, Y>;
  using A = detail::acc_t<Acc, T>;
  using traits = accumulator_traits<A>;
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::blas::dot: x and y must be rank 1");
  if (x.extent(0) != y.extent(0)) {
    detail::fail("dot", "x has extents " + detail::extents_of(x) + " but y has extents " +
                            detail::extents_of(y));
  }
  const std::int64_t n = x.extent(0);
  if (n == 0) return T(0);
  // Fixed blocks, each a lane-split sum, so the inner loop vectorises.
  constexpr std::int64_t block = 4096;
  constexpr int L = detail::lanes;
  const std::int64_t blocks = (n + block - 1) / block;
  const std::string label = std::string("kacc::blas::dot[x=") + detail::format_of<X>() +
                            ",y=" + detail::format_of<Y>() + detail::arith_suffix<T, A>();
  A result = traits::zero();
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<Exec>(exec, 0, blocks),
      KOKKOS_LAMBDA(const std::int64_t b, A& sum) {
        const std::int64_t i0 = b * block, i1 = i0 + block < n ? i0 + block : n;
        A lane[L];
        for (int l = 0; l < L; ++l) lane[l] = traits::zero();
        std::int64_t i = i0;
        for (; i + L <= i1; i += L)
          for (int l = 0; l < L; ++l)
            traits::add(lane[l], convert<T>(x(i + l)) * convert<T>(y(i + l)));
        for (int l = 0; i + l < i1; ++l)
          traits::add(lane[l], convert<T>(x(i + l)) * convert<T>(y(i + l)));
        for (int w = L / 2; w > 0; w /= 2)
          for (int l = 0; l < w; ++l) traits::join(lane[l], lane[l + w]);
        traits::join(sum, lane[0]);
      },
      Kokkos::Sum<A>(result));
  exec.fence();
  return static_cast<T>(traits::result(result));
}

/// dot(x, y) in x's default execution space.
template <class Arith = void, class Acc = void, class X, class Y,
          class = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
detail::arith_t<Arith, X, Y> dot(const X& x, const Y& y) {
  return dot<Arith, Acc>(typename X::execution_space(), x, y);
}

}  // namespace blas
}  // namespace kacc
