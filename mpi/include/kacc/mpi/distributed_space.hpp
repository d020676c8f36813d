#pragma once
/// @file
/// kacc::mpi::distributed_space: the space (see kacc/solve/space.hpp) that runs kacc's
/// Krylov solvers over MPI ranks, each rank holding a block of rows of every vector.

#include <kacc/mpi/collective_error.hpp>
#include <kacc/mpi/distributed_csr.hpp>
#include <kacc/mpi/dot.hpp>
#include <kacc/mpi/nrm2.hpp>
#include <kacc/mpi/spmv.hpp>
#include <kacc/solve/space.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kacc {
namespace mpi {

namespace Impl {

template <class Op>
struct is_distributed_csr : std::false_type {};
template <class A, class F, class D>
struct is_distributed_csr<distributed_csr<A, F, D>> : std::true_type {};

/// Whether a preconditioner says how many rows it has (kacc's Jacobi and BlockJacobi do).
template <class M, class = void>
struct has_rows : std::false_type {};
template <class M>
struct has_rows<M, std::void_t<decltype(std::declval<const M&>().rows())>> : std::true_type {};

}  // namespace Impl

/// Vectors distributed by rows over the ranks of a communicator: reductions accumulate each
/// rank's block in Acc (void: fp64) and join the accumulators across ranks whole
/// (kacc::mpi::allreduce_sum); a distributed_csr operator is applied with kacc::mpi::spmv
/// accumulated in Acc, a user callable `A(x, y)` (each rank's blocks) as on one process.
///
/// With `kacc::exact<double>` every reduction and every row of A x is correctly rounded,
/// hence the same for every partition of the rows and equal to
/// kacc::solve::local_space<kacc::exact<double>> on one process; the solvers' other work
/// (updates, preconditioners, the Hessenberg matrix and rotations, done on every rank from
/// the same reduced values) does not depend on the partition either, so the iterates, the
/// iteration counts and the residuals are bitwise those of one process. Other accumulators
/// are joined in rank order: every rank still takes the same steps, but the rounding depends
/// on the rank count.
///
/// Every function is collective: all ranks of the communicator call them in the same order
/// (as the solvers do). Errors found by the checks reach every rank (kacc::mpi::Impl::agree).
template <class Acc = void, class Memory = typename Kokkos::DefaultExecutionSpace::memory_space>
class distributed_space {
 public:
  /// For vectors distributed as A's rows; keeps a column vector (this rank's block and its
  /// ghosts) into which the solver's vectors are copied for each product.
  template <class A, class F, class D>
  explicit distributed_space(const distributed_csr<A, F, D>& a)
      : comm_(a.comm()),
        rows_(a.local_rows()),
        column_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::mpi::distributed_space"),
                a.column_count()) {}

  /// For vectors of which this rank holds local_rows entries, with a user callable operator.
  distributed_space(MPI_Comm comm, index_type local_rows) : comm_(comm), rows_(local_rows) {}

  /// The communicator.
  MPI_Comm comm() const { return comm_; }

  /// Runs the checks on every rank; an std::invalid_argument on any rank is thrown on all.
  template <class Checks>
  void check(Checks&& checks) const {
    std::string error;
    try {
      checks();
    } catch (const std::invalid_argument& e) {
      error = e.what();
    }
    Impl::agree(comm_, error);
  }

  /// Throws (on this rank; check() spreads it) unless b, x, a distributed_csr A and a
  /// preconditioner M that names its rows all have this rank's row count.
  template <class Op, class B, class X, class M>
  void check_sizes(const char* solver, const Op& a, const B& b, const X& x, const M& m) const {
    const auto fits = [&](const char* what, std::size_t rows) {
      if (rows != static_cast<std::size_t>(rows_))
        solve::detail::fail(solver, std::string(what) + " has " + std::to_string(rows) +
                                        " rows on this rank, the space " + std::to_string(rows_));
    };
    if constexpr (Impl::is_distributed_csr<Op>::value) fits("A", a.local_rows());
    fits("b", b.extent(0));
    fits("x", x.extent(0));
    if constexpr (Impl::has_rows<M>::value) fits("the preconditioner", m.rows());
  }

  /// x . y over all ranks.
  template <class Exec, class X, class Y>
  double dot(const Exec& exec, const X& x, const Y& y) const {
    using A = blas::detail::acc_t<Acc, double>;
    A sum = Impl::local_dot<double, A>(exec, x, y);
    allreduce_sum(comm_, sum);
    return accumulator_traits<A>::result(sum);
  }

  /// ||x||_2 over all ranks (kacc::mpi::nrm2).
  template <class Exec, class X>
  double nrm2(const Exec& exec, const X& x) const {
    return mpi::nrm2<double, Acc>(comm_, exec, x);
  }

  /// Returns v0 . w and sets h = V^T w, over all ranks: every column's accumulator joined in
  /// one reduction.
  template <class Exec, class V0, class V, class W, class H>
  double project(const Exec& exec, const V0& v0, const V& v, const W& w, const H& h) const {
    using A = blas::detail::acc_t<Acc, double>;
    const std::size_t j = v.extent(1);
    std::vector<A> sums(j + 1);
    sums[0] = Impl::local_dot<double, A>(exec, v0, w);
    for (std::size_t c = 0; c < j; ++c)
      sums[c + 1] = Impl::local_dot<double, A>(exec, kacc::subview(v, Kokkos::ALL, c), w);
    allreduce_sum(comm_, sums.data(), static_cast<int>(j + 1));
    if (j > 0) {
      const auto h_host = Kokkos::create_mirror_view(h);
      for (std::size_t c = 0; c < j; ++c) h_host(c) = accumulator_traits<A>::result(sums[c + 1]);
      Kokkos::deep_copy(exec, h, h_host);
    }
    return accumulator_traits<A>::result(sums[0]);
  }

  /// y = A x: for a distributed_csr, x is copied into the column vector and multiplied by
  /// kacc::mpi::spmv (its halo exchanged, rows accumulated in Acc); a callable is called.
  template <class Exec, class Op, class X, class Y, class Staging>
  void apply(const Exec& exec, const Op& a, const X& x, const Y& y, const Staging& staging) const {
    if constexpr (Impl::is_distributed_csr<Op>::value) {
      kacc::deep_copy(exec, Kokkos::subview(column_, std::make_pair(index_type(0), rows_)), x);
      Impl::spmv<void, Acc>(exec, a, column_, y, nullptr);
    } else {
      solve::detail::apply_operator<Acc>(exec, a, x, y, staging);
    }
  }

 private:
  MPI_Comm comm_;
  index_type rows_;
  Kokkos::View<double*, Memory> column_;
};

}  // namespace mpi
}  // namespace kacc
