#pragma once
/// @file
/// kacc::blas::gemv(exec, trans, alpha, A, x, beta, y): y = alpha op(A) x + beta y for
/// any storage formats of A, x and y, one source for every precision pair and layout.

#include <kacc/blas/detail.hpp>

namespace kacc {
namespace blas {

/// y = alpha * op(A) * x + beta * y with op(A) = A ("N") or A^T ("T", "C"; lower case too).
/// Arith defaults to the common arithmetic type of A, x and y, Acc to Arith. BLAS rules:
/// beta == 0 does not read y (NaN in y does not propagate), alpha == 0 does not read A or
/// x, and an empty op(A) (m == 0 or n == 0) leaves y untouched. LayoutLeft, LayoutRight
/// and strided matrices all stream contiguous memory (see detail::rows_times).
/// Throws std::invalid_argument for an unknown trans, mismatched extents, or y sharing
/// memory with A or x.
template <class Arith = void, class Acc = void, class Exec, class AV, class X, class Y,
          class = std::enable_if_t<is_view_v<AV> && is_view_v<X> && is_view_v<Y>>>
void gemv(const Exec& exec, const char trans[],
          const typename detail::arith_t<Arith, AV, X, Y>& alpha, const AV& A, const X& x,
          const typename detail::arith_t<Arith, AV, X, Y>& beta, const Y& y) {
  using T = detail::arith_t<Arith, AV, X, Y>;
  using Ac = detail::acc_t<Acc, T>;
  using YV = typename Y::non_const_value_type;
  static_assert(AV::rank == 2, "kacc::blas::gemv: A must be rank 2");
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::blas::gemv: x and y must be rank 1");
  const char t = detail::mode_char("gemv", "trans", trans, "NTC");
  const bool tr = t != 'N';
  const std::int64_t m = A.extent(tr ? 1 : 0), n = A.extent(tr ? 0 : 1);
  if (static_cast<std::int64_t>(x.extent(0)) != n || static_cast<std::int64_t>(y.extent(0)) != m) {
    detail::fail("gemv", std::string("trans \"") + t + "\" with A of extents " +
                             detail::extents_of(A) + " needs x of extent " + std::to_string(n) +
                             " and y of extent " + std::to_string(m) + ", but x has extents " +
                             detail::extents_of(x) + " and y has extents " + detail::extents_of(y));
  }
  if (detail::overlaps(y, x))
    detail::fail("gemv", "y (extents " + detail::extents_of(y) + ") aliases x (extents " +
                             detail::extents_of(x) + ")");
  if (detail::overlaps(y, A))
    detail::fail("gemv", "y (extents " + detail::extents_of(y) + ") aliases A (extents " +
                             detail::extents_of(A) + ")");
  if (m == 0 || n == 0) return;
  const std::string formats = std::string(",A=") + detail::format_of<AV>() + "/" +
                              detail::layout_of<AV>() + ",x=" + detail::format_of<X>() +
                              ",y=" + detail::format_of<Y>() + detail::arith_suffix<T, Ac>();
  if (alpha == T(0)) {
    const bool beta_zero = beta == T(0);
    Kokkos::parallel_for(
        "kacc::blas::gemv_scale_y[" + std::string(1, t) + formats,
        Kokkos::RangePolicy<Exec>(exec, 0, m), KOKKOS_LAMBDA(const std::int64_t i) {
          y(i) = convert<YV>(beta_zero ? T(0) : beta * convert<T>(y(i)));
        });
    return;
  }
  const bool beta_zero = beta == T(0);
  auto out = KOKKOS_LAMBDA(const std::int64_t i, const T& s) {
    y(i) = convert<YV>(beta_zero ? alpha * s : alpha * s + beta * convert<T>(y(i)));
  };
  const std::string label = "kacc::blas::gemv[" + std::string(1, t) + formats;
  if (tr) {
    detail::rows_times<T, Ac>(label, exec, detail::oriented<AV, true>{A}, 0, m, 0, n, x, out);
  } else {
    detail::rows_times<T, Ac>(label, exec, detail::oriented<AV, false>{A}, 0, m, 0, n, x, out);
  }
}

/// gemv in y's default execution space.
template <class Arith = void, class Acc = void, class AV, class X, class Y,
          class = std::enable_if_t<is_view_v<AV> && is_view_v<X> && is_view_v<Y>>>
void gemv(const char trans[], const typename detail::arith_t<Arith, AV, X, Y>& alpha, const AV& A,
          const X& x, const typename detail::arith_t<Arith, AV, X, Y>& beta, const Y& y) {
  gemv<Arith, Acc>(typename Y::execution_space(), trans, alpha, A, x, beta, y);
}

}  // namespace blas
}  // namespace kacc
