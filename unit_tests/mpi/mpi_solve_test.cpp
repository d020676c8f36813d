// kacc::mpi::gmres and kacc::mpi::cg with kacc::exact<double> reductions: every iterate, the
// iteration count, the residual history and the final residual are bitwise those of the
// one-process solver with the same exact reductions (kacc::solve::local_space<exact<double>>),
// for fp64 and fp32 bases, no, Jacobi and block-Jacobi preconditioning, on generated grids and
// a repository matrix, with balanced and uneven partitions. ctest runs this under 1 to 4
// ranks, so the iterates are the same for every rank count. And errors on one rank reach all.
#include <kacc/mpi.hpp>
#include <kacc/solve.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "mpi_problems.hpp"
#include "mpi_testing.hpp"

namespace {

using namespace kacc_mpi_testing;
using Whole = kacc::sparse::CsrMatrix<double, double, int, int, HostDevice>;
namespace kso = kacc::solve;

enum class precondition { none, jacobi, block_jacobi };

const char* name_of(precondition p) {
  return p == precondition::none ? "none" : p == precondition::jacobi ? "Jacobi" : "block-Jacobi";
}

HostVec block_of(const std::vector<double>& global, const kacc::mpi::row_partition& part) {
  const int r = rank_of_world();
  HostVec v("block", part.local_rows(r));
  for (kacc::index_type i = 0; i < part.local_rows(r); ++i)
    v(i) = global[static_cast<std::size_t>(part.begin(r) + i)];
  return v;
}

// GMRES (solver 0) or CG (1) on one process in the exact local space, and distributed.
template <class Basis, class Precond, class A, class V>
kso::SolverStatus run(int solver, const A& a, const V& b, const V& x, const Precond& m,
                      int max_iterations) {
  kso::GmresOptions g;
  g.restart = 30;
  g.max_iterations = max_iterations;
  kso::CgOptions c;
  c.max_iterations = max_iterations;
  if constexpr (std::is_same<A, Dist>::value) {
    return solver == 0 ? kacc::mpi::gmres<Basis, Exact>(Host(), a, b, x, g, m)
                       : kacc::mpi::cg<Exact>(Host(), a, b, x, c, m);
  } else {
    const kso::local_space<Exact> exact;
    return solver == 0 ? kso::gmres<Basis>(exact, Host(), a, b, x, g, m)
                       : kso::cg(exact, Host(), a, b, x, c, m);
  }
}

template <class Basis, class A, class V>
kso::SolverStatus run_with(int solver, precondition p, const A& a, const V& b, const V& x, int n) {
  if constexpr (std::is_same<A, Dist>::value) {
    if (p == precondition::jacobi) return run<Basis>(solver, a, b, x, kacc::mpi::jacobi(a), n);
    if (p == precondition::block_jacobi)
      return run<Basis>(solver, a, b, x, kacc::mpi::block_jacobi(a), n);
  } else {
    if (p == precondition::jacobi)
      return run<Basis>(solver, a, b, x, kso::Jacobi<double, HostDevice>(a), n);
    if (p == precondition::block_jacobi)
      return run<Basis>(solver, a, b, x, kso::BlockJacobi<double, HostDevice>(a), n);
  }
  return run<Basis>(solver, a, b, x, kso::Identity(), n);
}

// Solves with the global matrix a on one process and distributed by `part`, and checks that
// both give the same bits: status, residual history, and this rank's rows of x.
template <class Basis>
void check_same_as_one_process(int solver, precondition p, const kacc::sparse::CooMatrix& a,
                               const kacc::mpi::row_partition& part, const char* problem,
                               int max_iterations = 300) {
  const int r = rank_of_world();
  const auto bv = random_vector(static_cast<std::size_t>(a.num_rows), 5);
  const Whole whole = kacc::sparse::make_csr<double, double, int, int, HostDevice>(a);
  HostVec b_whole("b", bv.size()), x_whole("x", bv.size());
  for (std::size_t i = 0; i < bv.size(); ++i) b_whole(i) = bv[i];
  const auto one = run_with<Basis>(solver, p, whole, b_whole, x_whole, max_iterations);

  const Dist A = Dist::from_local_rows(MPI_COMM_WORLD, part, rows_of(a, part));
  const HostVec b = block_of(bv, part), x("x", A.local_rows());
  const auto many = run_with<Basis>(solver, p, A, b, x, max_iterations);

  const std::string what = std::string(solver == 0 ? "gmres" : "cg") + " " + problem + ", " +
                           kacc::format_name<Basis>() + " basis, " + name_of(p) + ", rank " +
                           std::to_string(r) + " of " + std::to_string(part.ranks());
  if (r == 0) std::printf("%s: %s\n", what.c_str(), many.message.c_str());
  EXPECT_EQ(one.reason, many.reason) << what;
  EXPECT_EQ(one.iterations, many.iterations) << what;
  EXPECT_EQ(one.restarts, many.restarts) << what;
  EXPECT_TRUE(same_double(one.residual, many.residual)) << what;
  EXPECT_TRUE(same_on_every_rank(many.residual)) << what;
  ASSERT_EQ(one.residual_history.size(), many.residual_history.size()) << what;
  int history_misses = 0, x_misses = 0;
  for (std::size_t k = 0; k < one.residual_history.size(); ++k)
    if (!same_double(one.residual_history[k], many.residual_history[k])) ++history_misses;
  for (kacc::index_type i = 0; i < A.local_rows(); ++i)
    if (!same_double(x_whole(part.begin(r) + i), x(i))) ++x_misses;
  EXPECT_EQ(history_misses, 0) << what;
  EXPECT_EQ(x_misses, 0) << what;
}

// A balanced partition, and an uneven one (rank 1 empty when there are 3 or more ranks, the
// last rank the most rows); every rank's row count a multiple of `unit` (which keeps the
// block-Jacobi blocks of a grid those of one process: 32-row blocks).
std::vector<kacc::mpi::row_partition> partitions(kacc::index_type n, kacc::index_type unit) {
  const int p = ranks_of_world(), r = rank_of_world();
  const kacc::index_type units = n / unit;
  const kacc::index_type balanced = units / p + (r < units % p ? 1 : 0);
  const kacc::index_type small = units / (2 * p);
  kacc::index_type mine = 0;
  if (r == p - 1) {
    mine = units - (p > 2 ? p - 2 : p - 1) * small;
  } else if (r != 1 || p < 3) {
    mine = small;
  }
  return {kacc::mpi::row_partition::from_local_rows(MPI_COMM_WORLD, balanced * unit, n),
          kacc::mpi::row_partition::from_local_rows(MPI_COMM_WORLD, mine * unit, n)};
}

TEST(MpiSolve, GmresOnAGridEqualsOneProcess) {
  const auto a = grid(48, 7);  // 2304 rows: 72 blocks of 32
  for (const auto& part : partitions(a.num_rows, 32))
    for (const auto p : {precondition::none, precondition::jacobi, precondition::block_jacobi}) {
      check_same_as_one_process<double>(0, p, a, part, "grid 48^2");
      check_same_as_one_process<float>(0, p, a, part, "grid 48^2");
    }
}

TEST(MpiSolve, CgOnAGridEqualsOneProcess) {
  const auto a = spd_grid(48, 3);
  for (const auto& part : partitions(a.num_rows, 32))
    for (const auto p : {precondition::none, precondition::jacobi, precondition::block_jacobi})
      check_same_as_one_process<double>(1, p, a, part, "SPD grid 48^2");
}

// The rank blocks start where one-process block-Jacobi blocks start, so the blocks agree.
kacc::mpi::row_partition aligned_to_blocks(const kacc::sparse::CooMatrix& a) {
  const kso::BlockJacobi<double, HostDevice> whole(
      kacc::sparse::make_csr<double, double, int, int, HostDevice>(a));
  const auto starts =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole.block_starts());
  const int p = ranks_of_world(), r = rank_of_world();
  // Rank k starts at the first block start at or after k n / p.
  const auto start_of = [&](int k) -> kacc::index_type {
    if (k == p) return a.num_rows;
    const kacc::index_type target = a.num_rows * k / p;
    std::size_t b = 0;
    while (starts(b) < target) ++b;
    return starts(b);
  };
  return kacc::mpi::row_partition::from_local_rows(MPI_COMM_WORLD, start_of(r + 1) - start_of(r),
                                                   a.num_rows);
}

TEST(MpiSolve, GmresAndCgOnRepositoryMatricesEqualOneProcess) {
  const std::string dir = KACC_TEST_MATRIX_DIR;
  const auto si2 = kacc::sparse::read_matrix_market(dir + "/Si2.mtx.gz");  // indefinite
  const auto balanced = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, si2.num_rows);
  const auto aligned = aligned_to_blocks(si2);
  check_same_as_one_process<double>(0, precondition::jacobi, si2, balanced, "Si2");
  check_same_as_one_process<float>(0, precondition::jacobi, si2, balanced, "Si2");
  check_same_as_one_process<double>(0, precondition::block_jacobi, si2, aligned, "Si2");
  check_same_as_one_process<float>(0, precondition::block_jacobi, si2, aligned, "Si2");
  // SPD but ill-conditioned: 100 CG iterations do not converge; they must agree anyway.
  const auto bcsstk13 = kacc::sparse::read_matrix_market(dir + "/bcsstk13.mtx.gz");
  check_same_as_one_process<double>(
      1, precondition::jacobi, bcsstk13,
      kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, bcsstk13.num_rows), "bcsstk13", 100);
  check_same_as_one_process<double>(1, precondition::block_jacobi, bcsstk13,
                                    aligned_to_blocks(bcsstk13), "bcsstk13", 100);
}

TEST(MpiSolve, AWrongLocalSizeOnOneRankFailsOnEveryRank) {
  const auto a = grid(12, 1);
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, a.num_rows);
  const Dist A = Dist::from_local_rows(MPI_COMM_WORLD, part, rows_of(a, part));
  const int last = ranks_of_world() - 1;
  const bool short_here = rank_of_world() == last;
  const HostVec b = block_of(random_vector(144, 1), part), x("x", A.local_rows()),
                x_short("x", A.local_rows() - (short_here ? 1 : 0));
  const std::string on_last = "(on rank " + std::to_string(last) + ")";
  expect_error_on_every_rank([&] { kacc::mpi::gmres(Host(), A, b, x_short); },
                             "kacc::solve::gmres: x has");
  expect_error_on_every_rank([&] { kacc::mpi::cg<Exact>(Host(), A, b, x_short); }, on_last);
  // A preconditioner with one row too many on the last rank.
  kacc::sparse::CooMatrix identity;
  identity.num_rows = identity.num_cols = A.local_rows() + (short_here ? 1 : 0);
  for (std::int64_t i = 0; i < identity.num_rows; ++i) {
    identity.row.push_back(i);
    identity.col.push_back(i);
    identity.val.push_back(1.0);
  }
  const kso::Jacobi<double, HostDevice> wrong(
      kacc::sparse::make_csr<double, double, int, int, HostDevice>(identity));
  expect_error_on_every_rank([&] { kacc::mpi::gmres(Host(), A, b, x, kso::GmresOptions(), wrong); },
                             "the preconditioner has");
  // Options that differ between ranks.
  kso::GmresOptions bad;
  if (short_here) bad.restart = 0;
  expect_error_on_every_rank([&] { kacc::mpi::gmres(Host(), A, b, x, bad); }, "restart = 0");
  // And the communicator is still usable: a solve with plain fp64 reductions succeeds, the
  // same status on every rank (the ranks' sums are joined in rank order).
  const auto s = kacc::mpi::gmres(Host(), A, b, x);
  EXPECT_TRUE(s.converged) << s.message;
  EXPECT_TRUE(same_on_every_rank(s.residual));
  EXPECT_TRUE(same_on_every_rank(static_cast<double>(s.iterations)));
}

}  // namespace
