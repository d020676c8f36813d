#pragma once
/// @file
/// kacc::blas::nrm2(exec, x): the Euclidean norm of a vector of any storage format.

#include <kacc/blas/detail.hpp>

#include <limits>

namespace kacc {
namespace blas {
namespace Impl {

/// The accumulator of sum_i (scale x(i))^2 (a range reduction: coalesced on GPUs, blocked on
/// CPUs), unrounded, so that partial sums (of ranks, say) can be joined before one rounding.
template <class T, class Acc, class Exec, class X>
Acc accumulate_squares(const std::string& label, const Exec& exec, const X& x, const T& scale) {
  using traits = accumulator_traits<Acc>;
  Acc result = traits::zero();
  Kokkos::parallel_reduce(
      label, kacc::Impl::range(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(const index_type i, Acc& s) {
        const T v = convert<T>(x(i)) * scale;
        traits::add_product(s, v, v);
      },
      kacc::Impl::sum_reducer<Acc>(result));
  exec.fence();
  return result;
}

/// sum_i (scale x(i))^2 accumulated in Acc, rounded to T.
template <class T, class Acc, class Exec, class X>
T sum_of_squares(const std::string& label, const Exec& exec, const X& x, const T& scale) {
  return static_cast<T>(
      accumulator_traits<Acc>::result(accumulate_squares<T, Acc>(label, exec, x, scale)));
}

/// max_i |x(i)|, NaN if any entry is NaN. Kokkos::Max joins partial maxima with `>`, which
/// drops a NaN, so NaN counts as +inf in the maximum and an infinite maximum is checked for
/// NaNs in a second pass.
template <class T, class Exec, class X>
T max_magnitude(const std::string& label, const Exec& exec, const X& x) {
  T big = 0;
  const T inf = std::numeric_limits<T>::infinity();
  Kokkos::parallel_reduce(
      label, kacc::Impl::range(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(const index_type i, T& mx) {
        const T v = math::fabs(convert<T>(x(i)));
        const T key = math::isnan(v) ? inf : v;
        if (key > mx) mx = key;
      },
      Kokkos::Max<T>(big));
  if (math::isfinite(big)) return big;
  int nans = 0;
  Kokkos::parallel_reduce(
      label + "_nan", kacc::Impl::range(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(const index_type i, int& count) {
        if (math::isnan(convert<T>(x(i)))) ++count;
      },
      Kokkos::Sum<int>(nans));
  exec.fence();
  return nans ? std::numeric_limits<T>::quiet_NaN() : big;
}

/// The type whose range T has: T itself for the arithmetic types, double for the
/// expansions of doubles (kacc::double_double, quad_double), which have no
/// std::numeric_limits.
template <class T>
using range_t = std::conditional_t<std::is_arithmetic<T>::value, T, double>;

/// The relative precision of T: its machine epsilon; for an expansion of k doubles (k =
/// sizeof(T) / sizeof(double)), double's epsilon to the k-th power.
template <class T>
constexpr double precision_of() {
  if constexpr (std::is_arithmetic<T>::value) {
    return std::numeric_limits<T>::epsilon();
  } else {
    double precision = 1;
    for (std::size_t k = 0; k < sizeof(T) / sizeof(double); ++k)
      precision *= std::numeric_limits<double>::epsilon();
    return precision;
  }
}

/// sqrt in T: the math library's for the arithmetic types, the type's own (found by
/// argument-dependent lookup) for kacc's expansions.
template <class T>
T square_root(const T& v) {
  using math::sqrt;
  return sqrt(v);
}

}  // namespace Impl

/// sqrt(sum x(i)^2) in Arith (default: x's arithmetic type), accumulated in Acc. One pass
/// in the common case; when the sum of squares overflows or underflows while x is not
/// zero, a second pass scales by max |x(i)| (as reference BLAS avoids over/underflow).
/// Arith may be kacc::double_double or quad_double: their range is double's, the scale is
/// max |x(i)| rounded to double, and sqrt theirs.
template <class Arith = void, class Acc = void, class Exec, class X,
          class Enable = std::enable_if_t<is_view_v<X>>>
detail::arith_t<Arith, X> nrm2(const Exec& exec, const X& x) {
  using T = detail::arith_t<Arith, X>;
  using A = detail::acc_t<Acc, T>;
  static_assert(X::rank == 1, "kacc::blas::nrm2: x must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::blas::nrm2", "x");
  if (x.extent(0) == 0) return T(0);
  const std::string label =
      std::string("kacc::blas::nrm2[x=") + detail::format_of<X>() + detail::arith_suffix<T, A>();
  using R = Impl::range_t<T>;
  const T ss = Impl::sum_of_squares<T, A>(label, exec, x, T(1));
  const R lead = static_cast<R>(ss);
  if (math::isfinite(lead) &&
      lead >= std::numeric_limits<R>::min() / static_cast<R>(Impl::precision_of<T>())) {
    return Impl::square_root(ss);
  }
  const R big = Impl::max_magnitude<R>(label + "_max", exec, x);
  if (big == R(0) || !math::isfinite(big)) return T(big);
  return T(big) * Impl::square_root(Impl::sum_of_squares<T, A>(label, exec, x, T(1) / T(big)));
}

/// nrm2(x) in x's default execution space.
template <class Arith = void, class Acc = void, class X,
          class Enable = std::enable_if_t<is_view_v<X>>>
detail::arith_t<Arith, X> nrm2(const X& x) {
  return nrm2<Arith, Acc>(typename X::execution_space(), x);
}

}  // namespace blas
}  // namespace kacc
