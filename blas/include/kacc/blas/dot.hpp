#pragma once
/// @file
/// kacc::blas::dot(exec, x, y): sum_i x(i) y(i) for vectors of any storage formats,
/// computed in the common arithmetic type (or Arith) and accumulated in Acc.

#include <kacc/blas/impl/rows_times.hpp>

namespace kacc {
namespace blas {
namespace Impl {

/// Entries per block of the host shape: each block is a lane-split sum (vectorises).
constexpr index_type dot_host_block = 4096;
/// Entries per block of the host shape with exact lanes: their final join into one exact
/// accumulator costs about a tenth of 4096 entries' products, so blocks are larger.
constexpr index_type dot_exact_block = 32768;

/// Entries per block of the host shape for Acc and arithmetic T.
template <class Acc, class T>
inline constexpr index_type dot_block_v =
    kacc::Impl::uses_exact_lanes_v<Acc, T> ? dot_exact_block : dot_host_block;

/// Adds x(i) y(i) for i in [i, i1) to sum: one block of the host shape. With exact<double>,
/// the products go 16 at a time into exact lanes, which skip the FMA errors when both
/// formats are float-valued; otherwise each block is a lane-split sum, formats with SIMD
/// conversions on this host are converted block_stage entries at a time through block
/// loads first, and double_double lanes sit side by side, adding by add_finite (a block whose
/// sums do not stay finite is summed again by operator+=, so the bits are operator+='s).
template <class T, class Acc, class X, class Y>
KOKKOS_INLINE_FUNCTION void dot_host_block_sum(const X& x, const Y& y, index_type i,
                                               const index_type i1, Acc& sum) {
  using traits = accumulator_traits<Acc>;
  constexpr int L = host_lanes;
  if constexpr (kacc::Impl::uses_exact_lanes_v<Acc, T>) {
    kacc::Impl::exact_lanes<L, false, kacc::Impl::exact_products_v<format_t<X>, format_t<Y>>> lanes;
    for (; i + L <= i1; i += L) {
      T xs[L], ys[L];
      kacc::Impl::load_block<L>(x, i, xs);
      kacc::Impl::load_block<L>(y, i, ys);
      lanes.add_products(xs, ys);
    }
    for (; i < i1; ++i) lanes.add_product(convert<T>(x(i)), convert<T>(y(i)));
    lanes.add_into(sum);
  } else {
    Acc lane[L];
    for (int l = 0; l < L; ++l) lane[l] = traits::zero();
    i = dot_staged<T>(x, y, i, i1, lane);
    if constexpr (kacc::Impl::uses_double_double_lanes_v<Acc, T>) {
      const index_type start = i;
      const auto add_groups = [&](auto& lanes) {
        for (i = start; i + L <= i1; i += L) {
          T xs[L], ys[L];
          kacc::Impl::load_block<L>(x, i, xs);
          kacc::Impl::load_block<L>(y, i, ys);
          lanes.add_products(xs, ys);
        }
      };
      kacc::Impl::double_double_lanes<L, true> lanes(lane);
      add_groups(lanes);
      if (lanes.finite()) {
        lanes.store(lane);
      } else {
        kacc::Impl::double_double_lanes<L> checked(lane);
        add_groups(checked);
        checked.store(lane);
      }
    }
    for (; i + L <= i1; i += L)
      for (int l = 0; l < L; ++l)
        traits::add_product(lane[l], convert<T>(x(i + l)), convert<T>(y(i + l)));
    for (int l = 0; i + l < i1; ++l)
      traits::add_product(lane[l], convert<T>(x(i + l)), convert<T>(y(i + l)));
    for (int w = L / 2; w > 0; w /= 2)
      for (int l = 0; l < w; ++l) traits::join(lane[l], lane[l + w]);
    traits::join(sum, lane[0]);
  }
}

/// sum_i x(i) y(i) for n > 0, accumulated in Acc, in the loop shape Shape. The host shape
/// gives each thread blocks of dot_block_v entries (dot_host_block_sum); the team shape
/// lets Kokkos spread single entries over the device's threads (consecutive threads,
/// consecutive entries).
template <class T, class Acc, shape Shape, class Exec, class X, class Y>
Acc dot(const std::string& label, const Exec& exec, const X& x, const Y& y) {
  using traits = accumulator_traits<Acc>;
  const index_type n = x.extent(0);
  Acc result = traits::zero();
  if constexpr (Shape == shape::host) {
    constexpr index_type B = dot_block_v<Acc, T>;
    Kokkos::parallel_reduce(
        label, kacc::Impl::range(exec, 0, (n + B - 1) / B),
        KOKKOS_LAMBDA(const index_type b, Acc& sum) {
          const index_type i0 = b * B;
          dot_host_block_sum<T>(x, y, i0, i0 + B < n ? i0 + B : n, sum);
        },
        kacc::Impl::sum_reducer<Acc>(result));
  } else {
    Kokkos::parallel_reduce(
        label, kacc::Impl::range(exec, 0, n),
        KOKKOS_LAMBDA(const index_type i, Acc& sum) {
          traits::add_product(sum, convert<T>(x(i)), convert<T>(y(i)));
        },
        kacc::Impl::sum_reducer<Acc>(result));
  }
  exec.fence();
  return result;
}

}  // namespace Impl

/// Returns x . y. Arith defaults to the common arithmetic type of x and y, Acc to Arith
/// (e.g. `dot<double, kacc::compensated<double>>(exec, x, y)`). Empty vectors give 0.
/// Throws std::invalid_argument when the extents differ.
template <class Arith = void, class Acc = void, class Exec, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
detail::arith_t<Arith, X, Y> dot(const Exec& exec, const X& x, const Y& y) {
  using T = detail::arith_t<Arith, X, Y>;
  using A = detail::acc_t<Acc, T>;
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::blas::dot: x and y must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::blas::dot", "x");
  KACC_REQUIRE_ACCESSIBLE(Exec, Y, "kacc::blas::dot", "y");
  if (x.extent(0) != y.extent(0)) {
    detail::fail("dot", "x has extents " + detail::extents_of(x) + " but y has extents " +
                            detail::extents_of(y));
  }
  if (x.extent(0) == 0) return T(0);
  const std::string label = std::string("kacc::blas::dot[x=") + detail::format_of<X>() +
                            ",y=" + detail::format_of<Y>() + detail::arith_suffix<T, A>();
  const A sum = Impl::dot<T, A, kacc::Impl::default_shape_v<Exec>>(label, exec, x, y);
  return static_cast<T>(accumulator_traits<A>::result(sum));
}

/// dot(x, y) in x's default execution space.
template <class Arith = void, class Acc = void, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
detail::arith_t<Arith, X, Y> dot(const X& x, const Y& y) {
  return dot<Arith, Acc>(typename X::execution_space(), x, y);
}

}  // namespace blas
}  // namespace kacc
