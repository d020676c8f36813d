#pragma once
/// @file
/// kacc::mpi::nrm2(comm, exec, x): the Euclidean norm of a vector distributed by rows.

#include <kacc/blas/nrm2.hpp>
#include <kacc/mpi/reduce.hpp>

#include <limits>

namespace kacc {
namespace mpi {

/// Returns sqrt(sum x(i)^2) over all ranks of comm, on every rank; x is this rank's block.
/// Arith and Acc as in kacc::blas::nrm2, and like it one pass in the common case and a
/// second, scaled by the global max |x(i)|, when the sum of squares over- or underflows while
/// x is not zero. The accumulators are summed across ranks whole, so with
/// `kacc::exact<double>` the sum of squares is exact and rounded once, the result the same
/// for every rank count and equal to kacc::blas::nrm2 on one process. NaN if any entry on any
/// rank is NaN, else +inf if any is infinite. Collective.
template <class Arith = void, class Acc = void, class Exec, class X,
          class Enable = std::enable_if_t<is_view_v<X>>>
blas::detail::arith_t<Arith, X> nrm2(MPI_Comm comm, const Exec& exec, const X& x) {
  using T = blas::detail::arith_t<Arith, X>;
  using A = blas::detail::acc_t<Acc, T>;
  static_assert(X::rank == 1, "kacc::mpi::nrm2: x must be rank 1");
  static_assert(std::is_same<T, double>::value || std::is_same<T, float>::value,
                "kacc::mpi::nrm2: the arithmetic type must be double or float (its global "
                "maximum is an MPI reduction)");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::mpi::nrm2", "x");
  const std::string label = std::string("kacc::mpi::nrm2[x=") + blas::detail::format_of<X>() +
                            blas::detail::arith_suffix<T, A>();
  const auto squares = [&](const T& scale) {
    A ss = blas::Impl::accumulate_squares<T, A>(label, exec, x, scale);
    allreduce_sum(comm, ss);
    return static_cast<T>(accumulator_traits<A>::result(ss));
  };
  const T ss = squares(T(1));
  if (math::isfinite(ss) &&
      ss >= std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon()) {
    return math::sqrt(ss);
  }
  // MPI_MAX says nothing of NaN, so NaN travels as its own flag.
  const T local_big = x.extent(0) ? blas::Impl::max_magnitude<T>(label + "_max", exec, x) : T(0);
  int local_nan = math::isnan(local_big) ? 1 : 0, any_nan = 0;
  MPI_Allreduce(&local_nan, &any_nan, 1, MPI_INT, MPI_LOR, comm);
  if (any_nan) return std::numeric_limits<T>::quiet_NaN();
  T big = 0;
  MPI_Allreduce(&local_big, &big, 1, std::is_same<T, double>::value ? MPI_DOUBLE : MPI_FLOAT,
                MPI_MAX, comm);
  if (big == T(0) || !math::isfinite(big)) return big;
  return big * math::sqrt(squares(T(1) / big));
}

/// nrm2(comm, x) in x's default execution space.
template <class Arith = void, class Acc = void, class X,
          class Enable = std::enable_if_t<is_view_v<X>>>
blas::detail::arith_t<Arith, X> nrm2(MPI_Comm comm, const X& x) {
  return nrm2<Arith, Acc>(comm, typename X::execution_space(), x);
}

}  // namespace mpi
}  // namespace kacc
