#pragma once
/// @file
/// kacc::blas::axpy(exec, alpha, x, y) (y += alpha x) and kacc::blas::scal(exec, alpha, x)
/// (x *= alpha) for vectors of any storage formats.

#include <kacc/blas/detail.hpp>

namespace kacc {
namespace blas {
namespace Impl {

/// y = y + alpha x in T after the argument checks.
template <class T, class Exec, class X, class Y>
void axpy(const std::string& label, const Exec& exec, const T& alpha, const X& x, const Y& y) {
  using YV = typename Y::non_const_value_type;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, x.extent(0)), KOKKOS_LAMBDA(const index_type i) {
        y(i) = convert<YV>(convert<T>(y(i)) + alpha * convert<T>(x(i)));
      });
}

/// x = alpha x in T (x = 0, not read, when alpha == 0) after the argument checks.
template <class T, class Exec, class X>
void scal(const std::string& label, const Exec& exec, const T& alpha, const X& x) {
  using XV = typename X::non_const_value_type;
  const bool zero = alpha == T(0);
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, x.extent(0)), KOKKOS_LAMBDA(const index_type i) {
        x(i) = convert<XV>(zero ? T(0) : alpha * convert<T>(x(i)));
      });
}

}  // namespace Impl

/// y = y + alpha * x, computed in Arith (default: common arithmetic type), rounded once to
/// y's format. alpha == 0 and empty vectors leave y untouched (BLAS). Throws
/// std::invalid_argument when the extents differ.
template <class Arith = void, class Exec, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
void axpy(const Exec& exec, const typename detail::arith_t<Arith, X, Y>& alpha, const X& x,
          const Y& y) {
  using T = detail::arith_t<Arith, X, Y>;
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::blas::axpy: x and y must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::blas::axpy", "x");
  KACC_REQUIRE_ACCESSIBLE(Exec, Y, "kacc::blas::axpy", "y");
  if (x.extent(0) != y.extent(0))
    detail::fail("axpy", "x has extents " + detail::extents_of(x) + " but y has extents " +
                             detail::extents_of(y));
  if (alpha == T(0) || x.extent(0) == 0) return;
  const std::string label = std::string("kacc::blas::axpy[x=") + detail::format_of<X>() +
                            ",y=" + detail::format_of<Y>() + ",arith=" + format_name<T>() + "]";
  kacc::Impl::write_with_overflow_policy(
      "kacc::blas::axpy", "y", exec, y, true,
      [&](const auto& out) { Impl::axpy<T>(label, exec, alpha, x, out); });
}

/// axpy in y's default execution space instance, fenced.
template <class Arith = void, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
void axpy(const typename detail::arith_t<Arith, X, Y>& alpha, const X& x, const Y& y) {
  using Exec = typename Y::execution_space;
  axpy<Arith>(Exec(), alpha, x, y);
  Exec().fence();
}

/// x = alpha * x. alpha == 0 sets x to zero without reading it (as KokkosBlas::scal), so
/// NaN in x does not survive.
template <class Arith = void, class Exec, class X, class Enable = std::enable_if_t<is_view_v<X>>>
void scal(const Exec& exec, const typename detail::arith_t<Arith, X>& alpha, const X& x) {
  using T = detail::arith_t<Arith, X>;
  static_assert(X::rank == 1, "kacc::blas::scal: x must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::blas::scal", "x");
  const std::string label = std::string("kacc::blas::scal[x=") + detail::format_of<X>() +
                            ",arith=" + format_name<T>() + "]";
  kacc::Impl::write_with_overflow_policy(
      "kacc::blas::scal", "x", exec, x, alpha != T(0),
      [&](const auto& out) { Impl::scal<T>(label, exec, alpha, out); });
}

/// scal in x's default execution space instance, fenced.
template <class Arith = void, class X, class Enable = std::enable_if_t<is_view_v<X>>>
void scal(const typename detail::arith_t<Arith, X>& alpha, const X& x) {
  using Exec = typename X::execution_space;
  scal<Arith>(Exec(), alpha, x);
  Exec().fence();
}

}  // namespace blas
}  // namespace kacc
