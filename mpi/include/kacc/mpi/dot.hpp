#pragma once
/// @file
/// kacc::mpi::dot(comm, exec, x, y): the dot product of two vectors distributed by rows,
/// each rank holding its block as a kacc view of any storage format.

#include <kacc/blas/dot.hpp>
#include <kacc/mpi/collective_error.hpp>
#include <kacc/mpi/reduce.hpp>

namespace kacc {
namespace mpi {
namespace Impl {

/// This rank's part of x . y accumulated in A (x and y of equal extent, possibly 0; the
/// checks are the caller's), to be joined across ranks by allreduce_sum.
template <class T, class A, class Exec, class X, class Y>
A local_dot(const Exec& exec, const X& x, const Y& y) {
  const std::string label = std::string("kacc::mpi::dot[x=") + blas::detail::format_of<X>() +
                            ",y=" + blas::detail::format_of<Y>() +
                            blas::detail::arith_suffix<T, A>();
  return blas::Impl::dot<T, A, kacc::Impl::default_shape_v<Exec>>(label, exec, x, y);
}

}  // namespace Impl

/// Returns x . y over all ranks of comm, on every rank; x and y are this rank's blocks (the
/// same rows of both vectors; a rank may own none). Arith and Acc as in kacc::blas::dot:
/// each rank accumulates its block in Acc and the accumulators are summed across ranks
/// whole (kacc::mpi::allreduce_sum), so with `kacc::exact<double>` the result is the
/// correctly rounded dot product of the global vectors: bitwise the same for every rank
/// count, thread count and partition, and equal to kacc::blas::dot on one process.
/// Collective. Throws std::invalid_argument on every rank when x and y differ in extent on
/// any rank.
template <class Arith = void, class Acc = void, class Exec, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
blas::detail::arith_t<Arith, X, Y> dot(MPI_Comm comm, const Exec& exec, const X& x, const Y& y) {
  using T = blas::detail::arith_t<Arith, X, Y>;
  using A = blas::detail::acc_t<Acc, T>;
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::mpi::dot: x and y must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::mpi::dot", "x");
  KACC_REQUIRE_ACCESSIBLE(Exec, Y, "kacc::mpi::dot", "y");
  Impl::agree(comm, x.extent(0) == y.extent(0)
                        ? std::string()
                        : "kacc::mpi::dot: x has extents " + blas::detail::extents_of(x) +
                              " but y has extents " + blas::detail::extents_of(y));
  A sum = Impl::local_dot<T, A>(exec, x, y);
  allreduce_sum(comm, sum);
  return static_cast<T>(accumulator_traits<A>::result(sum));
}

/// dot(comm, x, y) in x's default execution space.
template <class Arith = void, class Acc = void, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
blas::detail::arith_t<Arith, X, Y> dot(MPI_Comm comm, const X& x, const Y& y) {
  return dot<Arith, Acc>(comm, typename X::execution_space(), x, y);
}

}  // namespace mpi
}  // namespace kacc
