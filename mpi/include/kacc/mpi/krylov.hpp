#pragma once
/// @file
/// kacc::mpi::gmres and kacc::mpi::cg: kacc::solve::gmres (CB-GMRES) and kacc::solve::cg on
/// a row-distributed matrix, through kacc::mpi::distributed_space; and kacc::mpi::jacobi and
/// kacc::mpi::block_jacobi, the preconditioners of a rank's rows (block-local: no block
/// crosses ranks).

#include <kacc/mpi/distributed_space.hpp>
#include <kacc/solve/cg.hpp>
#include <kacc/solve/gmres.hpp>
#include <kacc/solve/preconditioner/block_jacobi.hpp>
#include <kacc/solve/preconditioner/jacobi.hpp>

#include <optional>

namespace kacc {
namespace mpi {

namespace Impl {

/// This rank's rows of A as a host COO matrix: local row indices, the columns numbered as
/// in A's column vectors (its own, then the ghosts), entries in increasing row order and
/// each row's in increasing global column order.
template <class A, class F, class D>
sparse::CooMatrix local_rows(const distributed_csr<A, F, D>& a) {
  const sparse::CooMatrix interior = sparse::to_coo(a.interior()),
                          boundary = sparse::to_coo(a.boundary());
  const auto boundary_rows =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.boundary_rows());
  sparse::CooMatrix rows;
  rows.num_rows = a.local_rows();
  rows.num_cols = a.column_count();
  const auto take = [&](const sparse::CooMatrix& part, std::size_t k, std::int64_t row) {
    rows.row.push_back(row);
    rows.col.push_back(part.col[k]);
    rows.val.push_back(part.val[k]);
  };
  // A row is in one part only (the interior part's boundary rows are empty).
  std::size_t ki = 0, kb = 0;
  for (std::int64_t i = 0; i < rows.num_rows; ++i) {
    for (; ki < interior.nnz() && interior.row[ki] == i; ++ki) take(interior, ki, i);
    for (; kb < boundary.nnz() && boundary_rows(boundary.row[kb]) == i; ++kb) take(boundary, kb, i);
  }
  return rows;
}

/// Makes a preconditioner on every rank; an std::invalid_argument on any rank (a zero
/// diagonal entry, a singular block) is thrown on all.
template <class Preconditioner, class Make>
Preconditioner make_on_every_rank(MPI_Comm comm, Make&& make) {
  std::optional<Preconditioner> made;
  std::string error;
  try {
    made.emplace(make());
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  agree(comm, error);
  return *made;
}

}  // namespace Impl

/// The Jacobi preconditioner of this rank's rows of a (z = D^-1 r on this rank's block), its
/// inverse diagonal stored in Format. Collective: a zero, missing or non-finite diagonal
/// entry on any rank throws std::invalid_argument on every rank (the row is numbered
/// locally). Applied by the solvers as on one process; equal to kacc::solve::Jacobi of the
/// whole matrix, row by row.
template <class Format = double, class A, class F, class D>
solve::Jacobi<Format, D> jacobi(const distributed_csr<A, F, D>& a) {
  return Impl::make_on_every_rank<solve::Jacobi<Format, D>>(a.comm(), [&] {
    sparse::CooMatrix diagonal;  // Jacobi reads the diagonal only: the ghosts can go
    const sparse::CooMatrix rows = Impl::local_rows(a);
    diagonal.num_rows = diagonal.num_cols = rows.num_rows;
    for (std::size_t k = 0; k < rows.nnz(); ++k)
      if (rows.col[k] == rows.row[k]) {
        diagonal.row.push_back(rows.row[k]);
        diagonal.col.push_back(rows.col[k]);
        diagonal.val.push_back(rows.val[k]);
      }
    return solve::Jacobi<Format, D>(
        sparse::make_csr<double, double, int, std::int64_t, D>(diagonal));
  });
}

/// The block-Jacobi preconditioner of this rank's rows of a (kacc::solve::BlockJacobi's
/// blocks, at most max_block_size rows, found from the rows' whole sparsity pattern and
/// never crossing ranks), its inverted blocks stored in Format. Collective: a singular block
/// or a bad max_block_size on any rank throws std::invalid_argument on every rank. When
/// every rank's first row starts a block of kacc::solve::BlockJacobi of the whole matrix
/// (e.g. rank blocks of a multiple of max_block_size rows on a stencil), the blocks, and so
/// the preconditioner, are that one's.
template <class Format = double, class A, class F, class D>
solve::BlockJacobi<Format, D> block_jacobi(const distributed_csr<A, F, D>& a,
                                           int max_block_size = 32) {
  return Impl::make_on_every_rank<solve::BlockJacobi<Format, D>>(
      a.comm(), [&] { return solve::BlockJacobi<Format, D>(Impl::local_rows(a), max_block_size); });
}

/// kacc::solve::gmres<BasisFormat> on a row-distributed matrix: b and x are this rank's
/// blocks (extent a.local_rows()), M a preconditioner of this rank's rows (Identity,
/// kacc::mpi::jacobi, kacc::mpi::block_jacobi or the user's), the reductions and products
/// those of distributed_space<Acc>. Options, results and exceptions as for
/// kacc::solve::gmres, the same status on every rank. With Acc = `kacc::exact<double>` the
/// iterates, iteration counts, residual history and residual are bitwise the same for every
/// rank count and partition, and equal to kacc::solve::gmres<BasisFormat>(
/// kacc::solve::local_space<kacc::exact<double>>(), ...) of the whole matrix on one process.
/// Collective; argument errors on any rank throw std::invalid_argument on every rank. A
/// scaled BasisFormat is refused at compile time (each rank's block would carry its own
/// scales, so the iterates would depend on the partition).
template <class BasisFormat = double, class Acc = void, class Exec, class A, class F, class D,
          class B, class X, class Preconditioner = solve::Identity>
solve::SolverStatus gmres(const Exec& exec, const distributed_csr<A, F, D>& a, const B& b,
                          const X& x, const solve::GmresOptions& options = solve::GmresOptions(),
                          const Preconditioner& M = Preconditioner()) {
  static_assert(!format_traits<BasisFormat>::is_scaled,
                "kacc::mpi::gmres: the basis format must not be scaled (each rank's block "
                "would carry its own scales)");
  const distributed_space<Acc, typename Exec::memory_space> space(a);
  return solve::gmres<BasisFormat>(space, exec, a, b, x, options, M);
}

/// kacc::solve::cg on a row-distributed matrix, as kacc::mpi::gmres.
template <class Acc = void, class Exec, class A, class F, class D, class B, class X,
          class Preconditioner = solve::Identity>
solve::SolverStatus cg(const Exec& exec, const distributed_csr<A, F, D>& a, const B& b, const X& x,
                       const solve::CgOptions& options = solve::CgOptions(),
                       const Preconditioner& M = Preconditioner()) {
  const distributed_space<Acc, typename Exec::memory_space> space(a);
  return solve::cg(space, exec, a, b, x, options, M);
}

}  // namespace mpi
}  // namespace kacc
