#pragma once
/// @file
/// kacc::blas::gemv(exec, trans, alpha, A, x, beta, y): y = alpha op(A) x + beta y for
/// any storage formats of A, x and y, one source for every precision pair and layout.

#include <kacc/blas/impl/rows_times.hpp>

namespace kacc {
namespace blas {
namespace Impl {

/// out(i, (op(A) x)(i)) for the m rows of op(A) = M: few long rows contiguous along k in
/// the split dot shape where its sums are plain (split_applies), the rest in rows_times.
template <class T, class Acc, shape Shape, class Exec, class M, class X, class Out>
void gemv_rows(const std::string& label, const Exec& exec, const M& op_a, const index_type m,
               const index_type n, const X& x, const Out& out) {
  if constexpr (accumulator_traits<Acc>::is_plain) {
    if (op_a.k_contiguous() && split_applies(m, n)) {
      rows_dot_split<T, Acc, Shape>(label, exec, op_a, 0, m, 0, n, x, out);
      return;
    }
  }
  rows_times<T, Acc, Shape>(label, exec, op_a, 0, m, 0, n, x, out);
}

/// GEMV after the argument checks: op(A) of extents (m, n), both non-zero, in the loop
/// shape Shape. The label carries the operands' formats.
template <class T, class Acc, shape Shape, class Exec, class AV, class X, class Y>
void gemv(const std::string& label, const Exec& exec, bool trans, const T& alpha, const AV& A,
          const X& x, const T& beta, const Y& y) {
  using YV = typename Y::non_const_value_type;
  const index_type m = y.extent(0), n = x.extent(0);
  const bool beta_zero = beta == T(0);
  if (alpha == T(0)) {
    Kokkos::parallel_for(
        label + "_scale_y", kacc::Impl::range(exec, 0, m), KOKKOS_LAMBDA(const index_type i) {
          y(i) = convert<YV>(beta_zero ? T(0) : beta * convert<T>(y(i)));
        });
    return;
  }
  auto out = KOKKOS_LAMBDA(const index_type i, const T& s) {
    y(i) = convert<YV>(beta_zero ? alpha * s : alpha * s + beta * convert<T>(y(i)));
  };
  if (trans) {
    gemv_rows<T, Acc, Shape>(label, exec, detail::oriented<AV, true>{A}, m, n, x, out);
  } else {
    gemv_rows<T, Acc, Shape>(label, exec, detail::oriented<AV, false>{A}, m, n, x, out);
  }
}

}  // namespace Impl

/// y = alpha * op(A) * x + beta * y with op(A) = A ("N") or A^T ("T", "C"; lower case too).
/// Arith defaults to the common arithmetic type of A, x and y, Acc to Arith. BLAS rules:
/// beta == 0 does not read y (NaN in y does not propagate), alpha == 0 does not read A or
/// x, and an empty op(A) (m == 0 or n == 0) leaves y untouched. LayoutLeft, LayoutRight
/// and strided matrices all stream contiguous memory (see Impl::rows_times).
/// Throws std::invalid_argument for an unknown trans, mismatched extents, or y sharing
/// memory with A or x.
template <class Arith = void, class Acc = void, class Exec, class AV, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<X> && is_view_v<Y>>>
void gemv(const Exec& exec, const char trans[],
          const typename detail::arith_t<Arith, AV, X, Y>& alpha, const AV& A, const X& x,
          const typename detail::arith_t<Arith, AV, X, Y>& beta, const Y& y) {
  using T = detail::arith_t<Arith, AV, X, Y>;
  using Ac = detail::acc_t<Acc, T>;
  static_assert(AV::rank == 2, "kacc::blas::gemv: A must be rank 2");
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::blas::gemv: x and y must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, AV, "kacc::blas::gemv", "A");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::blas::gemv", "x");
  KACC_REQUIRE_ACCESSIBLE(Exec, Y, "kacc::blas::gemv", "y");
  const char t = detail::mode_char("gemv", "trans", trans, "NTC");
  const bool tr = t != 'N';
  const std::int64_t m = A.extent(tr ? 1 : 0), n = A.extent(tr ? 0 : 1);
  if (static_cast<std::int64_t>(x.extent(0)) != n || static_cast<std::int64_t>(y.extent(0)) != m) {
    detail::fail("gemv", std::string("trans \"") + t + "\" with A of extents " +
                             detail::extents_of(A) + " needs x of extent " + std::to_string(n) +
                             " and y of extent " + std::to_string(m) + ", but x has extents " +
                             detail::extents_of(x) + " and y has extents " + detail::extents_of(y));
  }
  detail::check_no_alias("gemv", "y", y, "x", x);
  detail::check_no_alias("gemv", "y", y, "A", A);
  if (m == 0 || n == 0) return;
  const std::string formats = std::string(",A=") + detail::format_of<AV>() + "/" +
                              detail::layout_of<AV>() + ",x=" + detail::format_of<X>() +
                              ",y=" + detail::format_of<Y>() + detail::arith_suffix<T, Ac>();
  const std::string label = "kacc::blas::gemv[" + std::string(1, t) + formats;
  kacc::Impl::write_with_overflow_policy("kacc::blas::gemv", "y", exec, y, beta != T(0),
                                         [&](const auto& out) {
                                           Impl::gemv<T, Ac, kacc::Impl::default_shape_v<Exec>>(
                                               label, exec, tr, alpha, A, x, beta, out);
                                         });
}

/// gemv in y's default execution space instance, fenced.
template <class Arith = void, class Acc = void, class AV, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<X> && is_view_v<Y>>>
void gemv(const char trans[], const typename detail::arith_t<Arith, AV, X, Y>& alpha, const AV& A,
          const X& x, const typename detail::arith_t<Arith, AV, X, Y>& beta, const Y& y) {
  using Exec = typename Y::execution_space;
  gemv<Arith, Acc>(Exec(), trans, alpha, A, x, beta, y);
  Exec().fence();
}

}  // namespace blas
}  // namespace kacc
