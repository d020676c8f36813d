#pragma once
/// @file
/// kacc::blas::nrm2(exec, x): the Euclidean norm of a vector of any storage format.

#include <kacc/blas/detail.hpp>

#include <limits>

namespace kacc {
namespace blas {

/// sqrt(sum x(i)^2) in Arith (default: x's arithmetic type), accumulated in Acc. One pass
/// in the common case; when the sum of squares overflows or underflows while x is not
/// zero, a second pass scales by max |x(i)| (as reference BLAS avoids over/underflow).
template <class Arith = void, class Acc = void, class Exec, class X,
          class = std::enable_if_t<is_view_v<X>>>
detail::arith_t<Arith, X> nrm2(const Exec& exec, const X& x) {
  using T = detail::arith_t<Arith, X>;
  using A = detail::acc_t<Acc, T>;
  using traits = accumulator_traits<A>;
  static_assert(X::rank == 1, "kacc::blas::nrm2: x must be rank 1");
  const std::int64_t n = x.extent(0);
  if (n == 0) return T(0);
  const std::string label =
      std::string("kacc::blas::nrm2[x=") + detail::format_of<X>() + detail::arith_suffix<T, A>();
  auto sum_squares = [&](const T scale) {
    A result = traits::zero();
    Kokkos::parallel_reduce(
        label, Kokkos::RangePolicy<Exec>(exec, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i, A& s) {
          const T v = convert<T>(x(i)) * scale;
          traits::add(s, v * v);
        },
        Kokkos::Sum<A>(result));
    exec.fence();
    return static_cast<T>(traits::result(result));
  };
  const T ss = sum_squares(T(1));
  if (math::isfinite(ss) &&
      ss >= std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon()) {
    return math::sqrt(ss);
  }
  T big = 0;
  Kokkos::parallel_reduce(
      label + "_max", Kokkos::RangePolicy<Exec>(exec, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, T& mx) {
        const T v = math::fabs(convert<T>(x(i)));
        if (!(v <= mx)) mx = v;  // NaN wins
      },
      Kokkos::Max<T>(big));
  exec.fence();
  if (big == T(0) || !math::isfinite(big)) return big;
  return big * math::sqrt(sum_squares(T(1) / big));
}

template <class Arith = void, class Acc = void, class X, class = std::enable_if_t<is_view_v<X>>>
detail::arith_t<Arith, X> nrm2(const X& x) {
  return nrm2<Arith, Acc>(typename X::execution_space(), x);
}

}  // namespace blas
}  // namespace kacc
