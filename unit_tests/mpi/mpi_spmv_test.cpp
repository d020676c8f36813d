// kacc::mpi::distributed_csr and kacc::mpi::spmv: the halo plan on a stencil, y = A x against
// one process (bitwise with kacc::exact<double>, within the summation bound with a plain sum)
// on generated and repository matrices with fp64 and fp32 values, for 1 to 4 ranks, and errors
// that reach every rank.
#include <kacc/mpi.hpp>
#include <kacc/sparse/spmv.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <vector>

#include "mpi_problems.hpp"
#include "mpi_testing.hpp"

namespace {

using namespace kacc_mpi_testing;

// y = A x distributed over the world and on one process, A stored as Format; checks this
// rank's rows of both, bitwise for exact<double>, within gamma_k sum |a| |x| for a plain sum.
template <class Format>
void check_spmv(const kacc::sparse::CooMatrix& a, const kacc::mpi::row_partition& part) {
  using Dist = kacc::mpi::distributed_csr<double, Format, HostDevice>;
  const int r = rank_of_world();
  const Dist A = Dist::from_local_rows(MPI_COMM_WORLD, part, rows_of(a, part));
  const auto xv = random_vector(static_cast<std::size_t>(a.num_cols), 17);

  HostVec x("x", A.column_count()), y_exact("y_exact", A.local_rows()),
      y_plain("y_plain", A.local_rows());
  for (kacc::index_type i = 0; i < A.local_rows(); ++i) x(i) = xv[part.begin(r) + i];
  kacc::mpi::spmv<double, Exact>(Host(), A, x, y_exact);
  kacc::mpi::spmv(Host(), A, x, y_plain);
  for (kacc::index_type g = 0; g < A.ghost_count(); ++g)  // the ghosts arrived
    EXPECT_NE(x(A.local_rows() + g), 0.0);

  const auto whole = kacc::sparse::make_csr<double, Format, int, int, HostDevice>(a);
  HostVec xw("xw", xv.size()), yw("yw", a.num_rows);
  for (std::size_t i = 0; i < xv.size(); ++i) xw(i) = xv[i];
  kacc::sparse::spmv<double, Exact>(Host(), "N", 1.0, whole, xw, 0.0, yw);
  // sum_k |a_ik| |x_k| and the longest row, for the plain sum's bound.
  std::vector<double> abs_row(static_cast<std::size_t>(a.num_rows), 0.0);
  std::vector<int> length(abs_row.size(), 0);
  for (std::size_t k = 0; k < a.nnz(); ++k) {
    const auto i = static_cast<std::size_t>(a.row[k]);
    abs_row[i] += std::fabs(kacc::value(whole.values()(static_cast<kacc::index_type>(k))) *
                            xv[static_cast<std::size_t>(a.col[k])]);
    ++length[i];
  }
  int exact_misses = 0, plain_misses = 0;
  for (kacc::index_type i = 0; i < A.local_rows(); ++i) {
    const auto g = static_cast<std::size_t>(part.begin(r) + i);
    if (!same_double(yw(static_cast<kacc::index_type>(g)), y_exact(i))) ++exact_misses;
    const double u = std::ldexp(1.0, -53), gamma = length[g] * u / (1 - length[g] * u);
    if (!(std::fabs(y_plain(i) - yw(static_cast<kacc::index_type>(g))) <=
          1.01 * gamma * abs_row[g]))
      ++plain_misses;
  }
  EXPECT_EQ(exact_misses, 0) << kacc::format_name<Format>() << " on rank " << r;
  EXPECT_EQ(plain_misses, 0) << kacc::format_name<Format>() << " on rank " << r;
}

TEST(MpiSpmv, HaloOfAStencilIsOneGridRowPerNeighbour) {
  const std::int64_t m = 24;
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, m * m);
  const int r = rank_of_world(), p = ranks_of_world();
  const auto A = Dist::from_local_rows(MPI_COMM_WORLD, part, rows_of(grid(m, 1), part));
  const int neighbours = (r > 0 ? 1 : 0) + (r + 1 < p ? 1 : 0);
  EXPECT_EQ(A.ghost_count(), neighbours * m);
  EXPECT_EQ(A.recv_ranks().size(), static_cast<std::size_t>(neighbours));
  EXPECT_EQ(A.send_ranks().size(), static_cast<std::size_t>(neighbours));
  EXPECT_EQ(A.send_indices().extent(0), static_cast<std::size_t>(neighbours * m));
  EXPECT_EQ(A.interior().nnz() + A.boundary().nnz(), rows_of(grid(m, 1), part).nnz());
  EXPECT_EQ(A.boundary().num_rows(), neighbours * m);  // one grid row next to each neighbour
  EXPECT_EQ(A.boundary_rows().extent(0), static_cast<std::size_t>(neighbours * m));
  // The ghosts: the grid row before this block, then the one after, in global order.
  HostVec x("x", A.column_count());
  for (kacc::index_type i = 0; i < A.local_rows(); ++i) x(i) = double(part.begin(r) + i);
  kacc::mpi::exchange_ghosts(Host(), A, x);
  std::vector<double> expected;
  if (r > 0)
    for (std::int64_t c = part.begin(r) - m; c < part.begin(r); ++c) expected.push_back(double(c));
  if (r + 1 < p)
    for (std::int64_t c = part.end(r); c < part.end(r) + m; ++c) expected.push_back(double(c));
  std::vector<double> got;
  for (kacc::index_type g = 0; g < A.ghost_count(); ++g) got.push_back(x(A.local_rows() + g));
  EXPECT_EQ(got, expected);
}

TEST(MpiSpmv, EqualsOneProcessOnAGrid) {
  const auto a = grid(37, 2);
  for (const auto& part :
       {kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, a.num_rows),
        kacc::mpi::row_partition::from_local_rows(MPI_COMM_WORLD,
                                                  rank_of_world() == ranks_of_world() - 1
                                                      ? a.num_rows - (ranks_of_world() - 1) * 100
                                                      : 100,
                                                  a.num_rows)}) {
    check_spmv<double>(a, part);
    check_spmv<float>(a, part);
  }
}

TEST(MpiSpmv, ChunkedInteriorEqualsOneProcess) {
  // Enough rows per rank for interior_chunks(): the exchange progresses between them.
  const int p = ranks_of_world();
  std::int64_t m = 1;
  while (m * m < 2 * Dist::chunk_min_rows * p) ++m;
  const auto a = grid(m, 4);
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, a.num_rows);
  const auto A = Dist::from_local_rows(MPI_COMM_WORLD, part, rows_of(a, part));
  if (p > 1) {
    EXPECT_GE(A.interior_chunks().size(), 2u);
    kacc::index_type rows = 0, nnz = 0;
    for (const auto& c : A.interior_chunks()) {
      rows += c.num_rows();
      nnz += static_cast<kacc::index_type>(c.nnz());
    }
    EXPECT_EQ(rows, A.local_rows());
    EXPECT_EQ(nnz, static_cast<kacc::index_type>(A.interior().nnz()));
  }
  check_spmv<double>(a, part);
  check_spmv<float>(a, part);
}

TEST(MpiSpmv, EqualsOneProcessOnARepositoryMatrix) {
  const std::string path = std::string(KACC_TEST_MATRIX_DIR) + "/bcsstk13.mtx.gz";
  const auto a = kacc::sparse::read_matrix_market(path);
  check_spmv<double>(a, kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, a.num_rows));
  // And the collective reader gives the same rows.
  const auto A = Dist::read_matrix_market(MPI_COMM_WORLD, path);
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, a.num_rows);
  EXPECT_EQ(A.interior().nnz() + A.boundary().nnz(), rows_of(a, part).nnz());
}

TEST(MpiSpmv, AFileOneRankCannotReadFailsOnEveryRank) {
  const bool last = rank_of_world() == ranks_of_world() - 1;
  const std::string path =
      last ? "/nonexistent/kacc.mtx" : std::string(KACC_TEST_MATRIX_DIR) + "/bcsstk13.mtx.gz";
  std::string message;
  try {
    Dist::read_matrix_market(MPI_COMM_WORLD, path);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("/nonexistent/kacc.mtx"), std::string::npos) << message;
  EXPECT_NE(message.find("on rank " + std::to_string(ranks_of_world() - 1)), std::string::npos)
      << message;
}

TEST(MpiSpmv, AShortVectorOnOneRankFailsOnEveryRank) {
  const auto a = grid(10, 3);
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, a.num_rows);
  const auto A = Dist::from_local_rows(MPI_COMM_WORLD, part, rows_of(a, part));
  const bool last = rank_of_world() == ranks_of_world() - 1;
  HostVec x("x", A.column_count() - (last ? 1 : 0)), y("y", A.local_rows());
  std::string message;
  try {
    kacc::mpi::spmv(Host(), A, x, y);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("local rows + ghosts"), std::string::npos) << message;
  message.clear();
  try {
    kacc::mpi::exchange_ghosts(Host(), A, x);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("kacc::mpi::exchange_ghosts: x has extent"), std::string::npos) << message;
}

}  // namespace

// KACC_MPI_GPU_AWARE decides when set, the library's answer otherwise; anything but 0 or 1
// is refused rather than read as either.
TEST(MpiGpuAware, SettingOverridesTheLibrarysAnswer) {
  using kacc::mpi::Impl::gpu_aware_from;
  EXPECT_FALSE(gpu_aware_from(nullptr, false));
  EXPECT_TRUE(gpu_aware_from(nullptr, true));
  EXPECT_FALSE(gpu_aware_from("", false));
  EXPECT_TRUE(gpu_aware_from("1", false));
  EXPECT_FALSE(gpu_aware_from("0", true));
  EXPECT_THROW(gpu_aware_from("yes", false), std::invalid_argument);
  EXPECT_THROW(gpu_aware_from("10", true), std::invalid_argument);
  // This build's MPI (host memory, or an MPI that does not say it takes device buffers).
#if !defined(KOKKOS_ENABLE_CUDA)
  EXPECT_FALSE(kacc::mpi::Impl::library_takes_device_buffers());
#endif
}
