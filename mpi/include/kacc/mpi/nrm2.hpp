#pragma once
/// @file
/// kacc::mpi::nrm2(comm, exec, x): the Euclidean norm of a vector distributed by rows.

#include <kacc/blas/nrm2.hpp>
#include <kacc/mpi/reduce.hpp>

#include <limits>

namespace kacc {
namespace mpi {

/// Returns sqrt(sum x(i)^2) over all ranks of comm, on every rank; x is this rank's block.
/// Arith and Acc as in kacc::blas::nrm2 (Arith may be kacc::double_double or quad_double),
/// and like it one pass in the common case and a second, scaled by the global max |x(i)|
/// (rounded to double for the expansions), when the sum of squares over- or underflows
/// while x is not zero. The accumulators are summed across ranks whole, so with
/// `kacc::exact<double>` the sum of squares is exact and rounded once, the result the same
/// for every rank count and equal to kacc::blas::nrm2 on one process; other accumulators
/// are joined in rank order (the same bits on every rank). NaN if any entry on any rank is
/// NaN, else +inf if any is infinite. Collective.
template <class Arith = void, class Acc = void, class Exec, class X,
          class Enable = std::enable_if_t<is_view_v<X>>>
blas::detail::arith_t<Arith, X> nrm2(MPI_Comm comm, const Exec& exec, const X& x) {
  using T = blas::detail::arith_t<Arith, X>;
  using A = blas::detail::acc_t<Acc, T>;
  // The type of the global maximum, an MPI reduction: T, or double for the expansions.
  using R = blas::Impl::range_t<T>;
  static_assert(X::rank == 1, "kacc::mpi::nrm2: x must be rank 1");
  static_assert(std::is_same<R, double>::value || std::is_same<R, float>::value,
                "kacc::mpi::nrm2: the arithmetic type must be double, float or an expansion "
                "of doubles (its global maximum is an MPI reduction of double or float)");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::mpi::nrm2", "x");
  const std::string label = std::string("kacc::mpi::nrm2[x=") + blas::detail::format_of<X>() +
                            blas::detail::arith_suffix<T, A>();
  const auto squares = [&](const T& scale) {
    A ss = blas::Impl::accumulate_squares<T, A>(label, exec, x, scale);
    allreduce_sum(comm, ss);
    return static_cast<T>(accumulator_traits<A>::result(ss));
  };
  const T ss = squares(T(1));
  const R lead = static_cast<R>(ss);
  if (math::isfinite(lead) &&
      lead >= std::numeric_limits<R>::min() / static_cast<R>(blas::Impl::precision_of<T>())) {
    return blas::Impl::square_root(ss);
  }
  // MPI_MAX says nothing of NaN, so NaN travels as its own flag.
  const R local_big = x.extent(0) ? blas::Impl::max_magnitude<R>(label + "_max", exec, x) : R(0);
  int local_nan = math::isnan(local_big) ? 1 : 0, any_nan = 0;
  MPI_Allreduce(&local_nan, &any_nan, 1, MPI_INT, MPI_LOR, comm);
  if (any_nan) return T(std::numeric_limits<R>::quiet_NaN());
  R big = 0;
  MPI_Allreduce(&local_big, &big, 1, std::is_same<R, double>::value ? MPI_DOUBLE : MPI_FLOAT,
                MPI_MAX, comm);
  if (big == R(0) || !math::isfinite(big)) return T(big);
  return T(big) * blas::Impl::square_root(squares(T(1) / T(big)));
}

/// nrm2(comm, x) in x's default execution space.
template <class Arith = void, class Acc = void, class X,
          class Enable = std::enable_if_t<is_view_v<X>>>
blas::detail::arith_t<Arith, X> nrm2(MPI_Comm comm, const X& x) {
  return nrm2<Arith, Acc>(comm, typename X::execution_space(), x);
}

}  // namespace mpi
}  // namespace kacc
