// kacc::lapack::getrf and getrs: P A = L U in every storage format and both loop shapes,
// checked entry by entry against the exact (MPFR) product of the stored factors; LAPACK's
// pivots and info; solves (one or several right-hand sides) checked by their exact
// residual; argument checks.
#include <kacc/lapack.hpp>

#include "../blas/blas_reference.hpp"

#include <kacc_testing/invalid_argument.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using kacc_testing::expect_invalid_argument;

using namespace kacc_blas_ref;
using kacc::Impl::shape;
using Host = Kokkos::DefaultHostExecutionSpace;
using Pivots = Kokkos::View<int*, Kokkos::HostSpace>;

template <class S, class Layout = Kokkos::LayoutLeft>
using Mat = kacc::View<double**, Layout, Kokkos::HostSpace, kacc::StoredAs<S>>;

/// How many entries of P A - L U (A row-major m x n as stored, LU the stored factors) miss
/// the bound 2 (n u64 + (3 + panels) uf) (|L||U|)_ij + panels uf |A_ij|: fp64 updates, the
/// factors rounded to the format uf once, the trailing matrix once per panel.
int lu_misses(std::vector<double> a, const std::vector<double>& lu, const std::vector<int>& piv,
              std::size_t m, std::size_t n, double uf, std::size_t panels) {
  for (std::size_t i = 0; i < piv.size(); ++i)
    for (std::size_t j = 0; j < n; ++j) std::swap(a[i * n + j], a[(piv[i] - 1) * n + j]);
  const std::size_t kmax = std::min(m, n);
  int misses = 0;
  std::vector<double> l(kmax), u(kmax);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t k = std::min({i + 1, j + 1, kmax});
      double abs = 0;
      for (std::size_t q = 0; q < k; ++q) {
        l[q] = q == i ? 1.0 : lu[i * n + q];
        u[q] = lu[q * n + j];
        abs += std::fabs(l[q] * u[q]);
      }
      const auto e = kacc_testing::exact_dot(k, l.data(), u.data(), -a[i * n + j]);
      const double bound =
          2 * (kmax * 0x1p-53 + (3 + panels) * uf) * abs + panels * uf * std::fabs(a[i * n + j]);
      if (!(e.abs_error(0.0) <= bound)) ++misses;
    }
  return misses;
}

template <shape Shape, class S, class Layout = Kokkos::LayoutLeft>
void check_getrf(std::size_t m, std::size_t n) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << m << " n=" << n << " format=" << kacc::Impl::format_of<Mat<S>>()
               << " shape=" << (Shape == shape::host ? "host" : "team"));
  auto A = make_matrix<Mat<S, Layout>>(random_values(m * n, 7 * m + n), m, n);
  const auto a = stored(A);
  std::vector<kacc::index_type> piv;
  const auto info = kacc::lapack::Impl::getrf<double, Shape>("test", Host(), A, piv);
  Host().fence();
  EXPECT_EQ(info, 0);
  const std::vector<int> p(piv.begin(), piv.end());
  const std::size_t panels = (std::min(m, n) + kacc::lapack::Impl::getrf_block<Shape> - 1) /
                             kacc::lapack::Impl::getrf_block<Shape>;
  EXPECT_EQ(lu_misses(a, stored(A), p, m, n, unit_roundoff<S>(), panels), 0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    EXPECT_GE(p[i], static_cast<int>(i + 1));
    EXPECT_LE(p[i], static_cast<int>(m));
  }
}

TEST(Getrf, EveryFormatBothShapes) {
  // Past one panel: 130 on the host shape (128 columns per panel), 70 on the team shape (64).
  for (std::size_t n : {1, 2, 5, 130}) {
    check_getrf<shape::host, double>(n, n);
    check_getrf<shape::host, float, Kokkos::LayoutRight>(n, n);
    check_getrf<shape::host, kacc::fp16>(n, n);
    check_getrf<shape::host, kacc::bf16, Kokkos::LayoutRight>(n, n);
  }
  for (std::size_t n : {1, 5, 70}) {
    check_getrf<shape::team, double>(n, n);
    check_getrf<shape::team, float>(n, n);
    check_getrf<shape::team, kacc::fp16>(n, n);
    check_getrf<shape::team, kacc::bf16>(n, n);
  }
}

TEST(Getrf, Rectangular) {
  check_getrf<shape::host, double>(140, 30);
  check_getrf<shape::host, double>(30, 140);
  check_getrf<shape::team, float>(75, 20);
}

// LAPACK's convention: the first exactly zero pivot, 1-based; nothing divides by it.
TEST(Getrf, ZeroPivotReportedNotDividedBy) {
  for (std::size_t n : {3, 130}) {
    std::vector<double> v = random_values(n * n, 5);
    const std::size_t zero = n - 2;
    for (std::size_t i = 0; i < n; ++i) v[i * n + zero] = 0;
    auto A = make_matrix<Mat<double>>(v, n, n);
    Pivots ipiv("ipiv", n);
    EXPECT_EQ(kacc::lapack::getrf(A, ipiv), static_cast<kacc::index_type>(zero + 1));
    for (double e : stored(A)) EXPECT_TRUE(std::isfinite(e));
  }
  Mat<float> Z("Z", 4, 4);
  Pivots ipiv("ipiv", 4);
  EXPECT_EQ(kacc::lapack::getrf(Z, ipiv), 1);
  for (double e : stored(Z)) EXPECT_EQ(e, 0.0);
}

// Ties go to the first row, so the pivots do not depend on the thread count.
TEST(Getrf, FirstLargestPivot) {
  auto A = make_matrix<Mat<double>>({1, 1, -3, 2, 3, 5}, 3, 2);
  Pivots ipiv("ipiv", 2);
  EXPECT_EQ(kacc::lapack::getrf(A, ipiv), 0);
  EXPECT_EQ(ipiv(0), 2);
}

/// Expects the exact residual of x (n entries) for A x = b (A row-major n x n) within the
/// backward error bound of LU with unit roundoff u: Wilkinson's, with a growth factor far
/// below its worst case.
void expect_small_residual(const std::vector<double>& a, std::size_t n,
                           const std::vector<double>& x, const std::vector<double>& b, double u) {
  double rmax = 0, anorm = 0, xnorm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    rmax = std::max(rmax, kacc_testing::exact_dot(n, &a[i * n], x.data(), -b[i]).abs_error(0.0));
    double row = 0;
    for (std::size_t j = 0; j < n; ++j) row += std::fabs(a[i * n + j]);
    anorm = std::max(anorm, row);
    xnorm = std::max(xnorm, std::fabs(x[i]));
  }
  EXPECT_LE(rmax, 4 * n * u * anorm * xnorm);
}

/// expect_small_residual for each column of X and B (row-major n x k).
void expect_small_residuals(const std::vector<double>& a, std::size_t n, std::size_t k,
                            const std::vector<double>& x, const std::vector<double>& b, double u) {
  for (std::size_t j = 0; j < k; ++j) {
    SCOPED_TRACE(::testing::Message() << "column " << j);
    std::vector<double> xj(n), bj(n);
    for (std::size_t i = 0; i < n; ++i) {
      xj[i] = x[i * k + j];
      bj[i] = b[i * k + j];
    }
    expect_small_residual(a, n, xj, bj, u);
  }
}

/// n x n values with the diagonal raised by 4, which keeps kappa(A) small.
std::vector<double> well_conditioned(std::size_t n, unsigned seed) {
  auto v = random_values(n * n, seed);
  for (std::size_t i = 0; i < n; ++i) v[i * n + i] += 4;
  return v;
}

// getrs solves with the stored factors: the exact residual of the solution is within
// the backward error bound of LU in the factor format.
template <class S>
void check_getrs(std::size_t n) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " format=" << kacc::Impl::format_of<Mat<S>>());
  auto A = make_matrix<Mat<S>>(well_conditioned(n, 3 * n), n, n);
  const auto a = stored(A);
  Mat<double> F("F", n, n);
  kacc::deep_copy(F, A);
  Pivots ipiv("ipiv", n);
  ASSERT_EQ(kacc::lapack::getrf(F, ipiv), 0);
  const auto b = random_values(n, 4 * n);
  auto x = make_vector<kacc::View<double*, Kokkos::HostSpace>>(b);
  kacc::lapack::getrs(F, ipiv, x);
  expect_small_residual(a, n, stored(x), b, 0x1p-53);
}

TEST(Getrs, Solves) {
  for (std::size_t n : {1, 7, 140}) {
    check_getrs<double>(n);
    check_getrs<kacc::fp16>(n);
  }
}

// Several right-hand sides: each column of B solved by the blocked solve (diagonal
// blocks of getrf's width, GEMM updates past them) in both loop shapes, B in either
// layout and in fp64 or fp32 (rounded at every block), the factors in either layout, n
// across several blocks.
template <shape Shape, class BS, class BLayout, class ALayout = Kokkos::LayoutLeft>
void check_getrs_columns(std::size_t n, std::size_t k) {
  SCOPED_TRACE(::testing::Message()
               << "n=" << n << " k=" << k << " B=" << (kacc::Impl::format_of<Mat<BS, BLayout>>())
               << " A=" << (kacc::Impl::layout_of<Mat<double, ALayout>>())
               << " shape=" << (Shape == shape::host ? "host" : "team"));
  const auto a = well_conditioned(n, 5 * n + k);
  auto F = make_matrix<Mat<double, ALayout>>(a, n, n);
  Pivots ipiv("ipiv", n);
  ASSERT_EQ(kacc::lapack::getrf(F, ipiv), 0);
  auto B = make_matrix<Mat<BS, BLayout>>(random_values(n * k, 6 * n + k), n, k);
  const auto b = stored(B);
  kacc::lapack::Impl::getrs_columns<double, double, Shape>("getrs_columns", Host(), F, ipiv, B);
  Host().fence();
  expect_small_residuals(a, n, k, stored(B), b,
                         std::is_same<BS, double>::value ? 0x1p-53 : 0x1p-24);
}

TEST(Getrs, Columns) {
  for (std::size_t n : {1, 7, 130, 300}) {
    for (std::size_t k : {1, 3}) {
      check_getrs_columns<shape::host, double, Kokkos::LayoutLeft>(n, k);
      check_getrs_columns<shape::team, double, Kokkos::LayoutLeft>(n, k);
    }
    check_getrs_columns<shape::host, float, Kokkos::LayoutRight>(n, 5);
    check_getrs_columns<shape::team, float, Kokkos::LayoutRight>(n, 5);
    // Rows of the factors contiguous: the host shape solves the diagonal blocks row by row.
    check_getrs_columns<shape::host, double, Kokkos::LayoutLeft, Kokkos::LayoutRight>(n, 3);
  }
  // The public entry takes rank-2 B, and k = 0.
  const std::size_t n = 20, k = 2;
  const auto a = well_conditioned(n, 9);
  Mat<double> F = make_matrix<Mat<double>>(a, n, n);
  Pivots ipiv("ipiv", n);
  ASSERT_EQ(kacc::lapack::getrf(F, ipiv), 0);
  const auto b = random_values(n * k, 10);
  auto B = make_matrix<Mat<double>>(b, n, k);
  kacc::lapack::getrs(F, ipiv, B);
  expect_small_residuals(a, n, k, stored(B), b, 0x1p-53);
  kacc::lapack::getrs(F, ipiv, Mat<double>("B", n, 0));
}

// A rank-2 B of up to getrs_columns_one_by_one columns is solved a column at a time: each
// column has the bits of its rank-1 solve, B in either layout and format.
template <class BS, class BLayout>
void check_few_columns_as_rank_one(std::size_t n, std::size_t k) {
  SCOPED_TRACE(::testing::Message()
               << "n=" << n << " k=" << k << " B=" << (kacc::Impl::format_of<Mat<BS, BLayout>>()));
  const auto a = well_conditioned(n, 11 * n + k);
  auto F = make_matrix<Mat<float>>(a, n, n);
  Pivots ipiv("ipiv", n);
  ASSERT_EQ(kacc::lapack::getrf<double>(F, ipiv), 0);
  const auto b = random_values(n * k, 12 * n + k);
  auto B = make_matrix<Mat<BS, BLayout>>(b, n, k);
  const auto stored_b = stored(B);
  kacc::lapack::getrs<double>(F, ipiv, B);
  const auto x = stored(B);
  for (std::size_t j = 0; j < k; ++j) {
    std::vector<double> bj(n);
    for (std::size_t i = 0; i < n; ++i) bj[i] = stored_b[i * k + j];
    auto v = make_vector<kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<BS>>>(bj);
    kacc::lapack::getrs<double>(F, ipiv, v);
    const auto xj = stored(v);
    int differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += xj[i] != x[i * k + j];
    EXPECT_EQ(differ, 0) << "column " << j;
  }
}

TEST(Getrs, FewColumnsAsRankOne) {
  const std::size_t most = kacc::lapack::Impl::getrs_columns_one_by_one;
  for (std::size_t n : {1, 300}) {
    for (std::size_t k = 1; k <= most; ++k) {
      check_few_columns_as_rank_one<double, Kokkos::LayoutLeft>(n, k);
      check_few_columns_as_rank_one<double, Kokkos::LayoutRight>(n, k);
      check_few_columns_as_rank_one<float, Kokkos::LayoutRight>(n, k);
    }
  }
}

TEST(Lapack, ArgumentsRejected) {
  Mat<double> A("A", 4, 3), S("S", 3, 3);
  Pivots p2("p", 2), p3("p", 3);
  kacc::View<double*, Kokkos::HostSpace> b3("b", 3), b4("b", 4);
  expect_invalid_argument([&] { kacc::lapack::getrf(A, p2); }, "kacc::lapack::getrf", "ipiv");
  expect_invalid_argument([&] { kacc::lapack::getrs(A, p3, b3); }, "kacc::lapack::getrs", "square");
  expect_invalid_argument([&] { kacc::lapack::getrs(S, p3, b4); }, "kacc::lapack::getrs", "(4)");
  expect_invalid_argument([&] { kacc::lapack::getrs(S, p2, b3); }, "kacc::lapack::getrs", "(2)");
  expect_invalid_argument([&] { kacc::lapack::getrs(S, p3, Mat<double>("B", 4, 2)); },
                          "kacc::lapack::getrs", "B has extents (4,2)");
}

}  // namespace
