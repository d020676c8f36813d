// kacc::mpi: distributed DOT and NRM2 against MPFR and against one process, row partitions, and
// errors that reach every rank. ctest runs this program under mpirun with 1, 2, 3 and 4 ranks
// and different thread counts; since every run must equal MPFR's correctly rounded result with
// kacc::exact<double>, those results are bitwise identical across rank and thread counts.
// A rank that threw while the others waited in a collective would hang: ctest's timeout
// turns that into a failure.
#include <kacc/blas/dot.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/core/double_double.hpp>
#include <kacc/core/quad_double.hpp>
#include <kacc/mpi.hpp>
#include <kacc_testing/exact.hpp>
#include <kacc_testing/gendot.hpp>

#include "mpi_testing.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

using namespace kacc_mpi_testing;

using Exact = kacc::exact<double>;
using Host = Kokkos::DefaultHostExecutionSpace;
template <class S>
using HostVec = kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<S>>;
constexpr double conditions[] = {1e5, 1e20, 1e40};

// This rank's block [p.begin(rank), p.end(rank)) of a global vector of V (double, or an
// expansion of doubles), stored as S.
template <class S, class V = double>
kacc::View<V*, Kokkos::HostSpace, kacc::StoredAs<S>> block_of(const std::vector<V>& global,
                                                              const kacc::mpi::row_partition& p) {
  const int r = rank_of_world();
  kacc::View<V*, Kokkos::HostSpace, kacc::StoredAs<S>> v("block", p.local_rows(r));
  for (kacc::index_type i = 0; i < p.local_rows(r); ++i)
    v(i) = global[static_cast<std::size_t>(p.begin(r) + i)];
  return v;
}

// The stored values (what the kernels read) of a global vector stored as S.
template <class S>
std::vector<double> stored_values(const std::vector<double>& global) {
  HostVec<S> v("stored", global.size());
  std::vector<double> out(global.size());
  for (std::size_t i = 0; i < global.size(); ++i) {
    v(i) = global[i];
    out[i] = kacc::value(v(i));
  }
  return out;
}

// Partitions that split the rows differently: balanced, and one with an empty rank 1, the
// rest going mostly to the last rank.
std::vector<kacc::mpi::row_partition> partitions(kacc::index_type n) {
  const int p = ranks_of_world(), r = rank_of_world();
  std::vector<kacc::mpi::row_partition> out{kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, n)};
  const kacc::index_type small = n / (4 * p), small_ranks = p == 1 ? 0 : p == 2 ? 1 : p - 2;
  kacc::index_type mine = 0;
  if (r == p - 1) {
    mine = n - small_ranks * small;
  } else if (r != 1) {
    mine = small;
  }
  out.push_back(kacc::mpi::row_partition::from_local_rows(MPI_COMM_WORLD, mine, n));
  return out;
}

template <class S>
void check_exact_dot(double cond, std::size_t n) {
  std::vector<double> xv, yv;
  kacc_testing::gen_dot(n, cond, n + 7, xv, yv);
  const auto xs = stored_values<S>(xv), ys = stored_values<S>(yv);
  const double ref = kacc_testing::exact_dot(n, xs.data(), ys.data()).rounded();
  for (const auto& part : partitions(static_cast<kacc::index_type>(n))) {
    const double got = kacc::mpi::dot<double, Exact>(MPI_COMM_WORLD, Host(), block_of<S>(xv, part),
                                                     block_of<S>(yv, part));
    EXPECT_TRUE(same_double(ref, got))
        << kacc::format_name<S>() << " cond " << cond << " n " << n << " ranks " << part.ranks();
    EXPECT_TRUE(same_on_every_rank(got));
  }
}

TEST(MpiDot, ExactEqualsMpfrForEveryPartition) {
  for (double cond : conditions)
    for (std::size_t n : {6u, 4099u, 40000u}) {
      check_exact_dot<double>(cond, n);
      check_exact_dot<float>(cond, n);
    }
  check_exact_dot<kacc::fp16>(1e3, 3001);
}

TEST(MpiDot, ExactOverTheWholeRangeAndSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::size_t n = 1 + 500 * seed;
    auto xv = kacc_testing::wide_range_values(n, seed),
         yv = kacc_testing::wide_range_values(n, seed + 99);
    if (seed % 3 == 0) xv[n - 1] = inf;  // on the last rank
    if (seed == 6) yv[0] = -inf;         // on the first: inf - inf is NaN
    const double ref = kacc_testing::exact_dot(n, xv.data(), yv.data()).rounded();
    for (const auto& part : partitions(static_cast<kacc::index_type>(n))) {
      const double got = kacc::mpi::dot<double, Exact>(MPI_COMM_WORLD, block_of<double>(xv, part),
                                                       block_of<double>(yv, part));
      EXPECT_TRUE(same_double(ref, got)) << "seed " << seed;
    }
  }
}

TEST(MpiDot, OtherAccumulatorsAgreeOnEveryRankWithinTheirBounds) {
  const std::size_t n = 20000;
  std::vector<double> xv, yv;
  kacc_testing::gen_dot(n, 1e8, 11, xv, yv);
  const auto exact = kacc_testing::exact_dot(n, xv.data(), yv.data());
  double abs_sum = 0;  // sum |x_i y_i|, only for the bound
  for (std::size_t i = 0; i < n; ++i) abs_sum += std::fabs(xv[i] * yv[i]);
  const double u = std::ldexp(1.0, -53), x_dot_y = std::fabs(exact.rounded());
  // Joining the ranks' accumulators adds at most one term per rank to the n of one process.
  const double m = static_cast<double>(n + ranks_of_world()), gamma = m * u / (1 - m * u);
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, n);
  const auto x = block_of<double>(xv, part), y = block_of<double>(yv, part);

  const double plain = kacc::mpi::dot(MPI_COMM_WORLD, x, y);
  EXPECT_TRUE(same_on_every_rank(plain));
  EXPECT_LE(exact.abs_error(plain), 1.01 * gamma * abs_sum);

  const double dot2 = kacc::mpi::dot<double, kacc::compensated<double>>(MPI_COMM_WORLD, x, y);
  EXPECT_TRUE(same_on_every_rank(dot2));
  EXPECT_LE(exact.abs_error(dot2), u * x_dot_y + 1.01 * gamma * gamma * abs_sum);

  const double dd = kacc::mpi::dot<double, kacc::double_double>(MPI_COMM_WORLD, x, y);
  EXPECT_TRUE(same_on_every_rank(dd));
  // Each double_double addition errs by at most 3u^2 relative to the partial sum, bounded
  // by sum |x_i y_i|; then one rounding to double.
  EXPECT_LE(exact.abs_error(dd), u * x_dot_y + 3 * m * u * u * abs_sum);
}

TEST(MpiNrm2, ExactEqualsOneProcessAndMpfr) {
  for (double scale : {1.0, 1e200, 1e-200}) {  // the last two take the scaled second pass
    std::vector<double> xv, unused;
    kacc_testing::gen_dot(3000, 1e10, 5, xv, unused);
    for (auto& v : xv) v *= scale;
    HostVec<double> whole("whole", xv.size());
    for (std::size_t i = 0; i < xv.size(); ++i) whole(i) = xv[i];
    const double one_process = kacc::blas::nrm2<double, Exact>(Host(), whole);
    if (scale == 1.0) {
      const double ss = kacc_testing::exact_dot(xv.size(), xv.data(), xv.data()).rounded();
      EXPECT_TRUE(same_double(std::sqrt(ss), one_process));
    }
    for (const auto& part : partitions(static_cast<kacc::index_type>(xv.size()))) {
      const double got = kacc::mpi::nrm2<double, Exact>(MPI_COMM_WORLD, block_of<double>(xv, part));
      EXPECT_TRUE(same_double(one_process, got)) << "scale " << scale;
    }
  }
}

TEST(MpiNrm2, NanOnOneRankIsNanEverywhereAndInfIsInf) {
  const std::size_t n = 101;
  std::vector<double> xv(n, 1.0);
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, n);
  xv[n - 1] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(kacc::mpi::nrm2(MPI_COMM_WORLD, block_of<double>(xv, part)),
            std::numeric_limits<double>::infinity());
  xv[0] = std::nan("");
  EXPECT_TRUE(std::isnan(kacc::mpi::nrm2(MPI_COMM_WORLD, block_of<double>(xv, part))));
  EXPECT_EQ(kacc::mpi::nrm2(MPI_COMM_WORLD, HostVec<double>("empty", 0)), 0.0);
}

// The components of an expansion of doubles (kacc::double_double, quad_double), leading first.
template <class X>
std::vector<double> components(const X& v) {
  std::vector<double> out(sizeof(X) / sizeof(double));
  std::memcpy(out.data(), &v, sizeof(X));
  return out;
}

// NRM2 in X of (3, 0, ..., 0, 4) (1 + 2^-60) 2^e, whose two entries lie on different ranks
// when there are two or more: exactly 5 (1 + 2^-60) 2^e, which fp64 arithmetic misses by
// 2^-60 relative. e = 0 takes one pass, e = -600 (squares below double's range) and e = 600
// (beyond it) the second, scaled pass. Every rank gets the same components, those of
// kacc::blas::nrm2 on the whole vector (the other ranks add zeros, exactly), within bound
// of the exact norm; at e = 0 kacc::mpi::dot in X of x with itself gets those of
// kacc::blas::dot. An infinite entry on one rank gives inf, a NaN NaN.
template <class X>
void expect_expansion_nrm2(const double bound) {
  const std::size_t n = 11;
  const X one_plus = X(1.0) + X(0x1p-60);
  std::vector<X> xv(n, X(0.0));
  for (const int e : {0, -600, 600}) {
    SCOPED_TRACE(e);
    xv[0] = X(std::ldexp(3.0, e)) * one_plus;
    xv[n - 1] = X(std::ldexp(4.0, e)) * one_plus;
    kacc::View<X*, Kokkos::HostSpace, kacc::StoredAs<X>> all("all", n);
    for (std::size_t i = 0; i < n; ++i) all(i) = xv[i];
    const X one_process = kacc::blas::nrm2<X, X>(Host(), all);
    const X exact = X(std::ldexp(5.0, e)) * one_plus;
    const X one_process_dot = kacc::blas::dot<X, X>(Host(), all, all);
    for (const auto& part : partitions(static_cast<kacc::index_type>(n))) {
      const auto block = block_of<X>(xv, part);
      const X got = kacc::mpi::nrm2<X, X>(MPI_COMM_WORLD, block);
      const auto c = components(got);
      for (const double component : c) EXPECT_TRUE(same_on_every_rank(component));
      EXPECT_EQ(c, components(one_process));
      EXPECT_LE(std::fabs(components(X(got - exact))[0]), bound * std::ldexp(5.0, e));
      // DOT in X as well: x . x, the same components as on one process (finite at e = 0).
      if (e == 0) {
        EXPECT_EQ(components(kacc::mpi::dot<X, X>(MPI_COMM_WORLD, block, block)),
                  components(one_process_dot));
      }
    }
  }
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, n);
  xv[n - 1] = X(std::numeric_limits<double>::infinity());
  EXPECT_EQ(components(kacc::mpi::nrm2<X, X>(MPI_COMM_WORLD, block_of<X>(xv, part)))[0],
            std::numeric_limits<double>::infinity());
  xv[0] = X(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(
      std::isnan(components(kacc::mpi::nrm2<X, X>(MPI_COMM_WORLD, block_of<X>(xv, part)))[0]));
}

TEST(MpiNrm2, DoubleDoubleEqualsOneProcessAndExactNorm) {
  // A sum of squares within 3u^2, then sqrt within 4u^2 (as kacc::blas::nrm2's test).
  expect_expansion_nrm2<kacc::double_double>(8 * 0x1p-106);
}

TEST(MpiNrm2, QuadDoubleEqualsOneProcessAndExactNorm) {
  expect_expansion_nrm2<kacc::quad_double>(0x1p-203);
}

TEST(MpiPartition, BlocksCoverTheRowsInRankOrder) {
  const int p = ranks_of_world();
  const auto part = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, 10);
  EXPECT_EQ(part.ranks(), p);
  EXPECT_EQ(part.global_rows(), 10);
  EXPECT_EQ(part.begin(0), 0);
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(part.local_rows(r), 10 / p + (r < 10 % p ? 1 : 0));
    if (r + 1 < p) {
      EXPECT_EQ(part.end(r), part.begin(r + 1));
    }
    for (auto i = part.begin(r); i < part.end(r); ++i) EXPECT_EQ(part.owner(i), r);
  }
  EXPECT_EQ(part.end(p - 1), 10);
}

TEST(MpiErrors, APartitionThatDoesNotCoverTheRowsFailsOnEveryRank) {
  expect_error_on_every_rank(
      [] {
        kacc::mpi::row_partition::from_local_rows(MPI_COMM_WORLD, 5, 5 * ranks_of_world() + 1);
      },
      "add up to");
  expect_error_on_every_rank(
      [] {
        kacc::mpi::row_partition::from_local_rows(MPI_COMM_WORLD,
                                                  rank_of_world() == ranks_of_world() - 1 ? -1 : 3);
      },
      "must be >= 0");
  if (ranks_of_world() > 1) {
    expect_error_on_every_rank(
        [] { kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, 100 + rank_of_world()); },
        "differs between ranks");
  }
}

TEST(MpiErrors, MismatchedBlocksOnOneRankFailOnEveryRank) {
  const int last = ranks_of_world() - 1;
  HostVec<double> x("x", 10), y("y", rank_of_world() == last ? 9 : 10);
  expect_error_on_every_rank([&] { kacc::mpi::dot(MPI_COMM_WORLD, x, y); },
                             "kacc::mpi::dot: x has extents (10) but y has extents (9) (on rank " +
                                 std::to_string(last) + ")");
  // The communicator is still usable afterwards.
  HostVec<double> z("z", 10);
  for (int i = 0; i < 10; ++i) z(i) = 1.0;
  EXPECT_EQ(kacc::mpi::dot(MPI_COMM_WORLD, z, z), 10.0 * ranks_of_world());
}

}  // namespace
