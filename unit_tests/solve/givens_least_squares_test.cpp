// kacc::solve::Impl::GivensLeastSquares, the Hessenberg least-squares problem that
// kacc::solve::gmres and gesv_ir's GMRES-IR share: each residual norm it reports and each
// solution it returns are checked against the definition of a least-squares solution
// (the residual is the one of y, and orthogonal to H's columns), computed in long double
// from the original columns; the cut at near-singular columns; reuse after reset.
#include <kacc/solve/givens_least_squares.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using kacc::solve::Impl::GivensLeastSquares;

/// A random (m + 1) x m upper Hessenberg matrix, column-major: column j has j + 2 entries.
std::vector<std::vector<double>> random_hessenberg(int m, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> columns(m);
  for (int j = 0; j < m; ++j) {
    columns[j].assign(m + 1, 0.0);
    for (int i = 0; i <= j + 1; ++i) columns[j][i] = normal(engine);
  }
  return columns;
}

/// beta e_1 - H(:, 0:k) y in long double.
std::vector<long double> residual(const std::vector<std::vector<double>>& columns, int k,
                                  double beta, const std::vector<double>& y) {
  std::vector<long double> r(k + 1, 0.0L);
  r[0] = beta;
  for (int j = 0; j < k; ++j)
    for (int i = 0; i <= j + 1; ++i) r[i] -= static_cast<long double>(columns[j][i]) * y[j];
  return r;
}

long double norm(const std::vector<long double>& v) {
  long double s = 0;
  for (const long double x : v) s += x * x;
  return std::sqrt(s);
}

/// Feeds the columns one by one and checks, after each, the reported residual norm and
/// the solution of the problem so far.
void check_every_step(GivensLeastSquares& ls, const std::vector<std::vector<double>>& columns,
                      double beta) {
  const int m = static_cast<int>(columns.size());
  ls.reset(beta);
  double previous = beta;
  for (int j = 0; j < m; ++j) {
    const double reported = ls.add_column(j, columns[j].data());
    const int k = j + 1;
    ASSERT_EQ(ls.nonsingular_columns(k), k) << "step " << j;
    std::vector<double> y(k);
    ls.solve(k, y.data());
    const auto r = residual(columns, k, beta, y);
    const long double r_norm = norm(r);
    EXPECT_NEAR(reported, static_cast<double>(r_norm), 1e-12 * beta) << "step " << j;
    EXPECT_LE(reported, previous * (1 + 1e-14)) << "step " << j;  // more columns, no worse
    previous = reported;
    // Optimality: H(:, 0:k)^T r = 0 up to rounding.
    for (int q = 0; q < k; ++q) {
      long double dot = 0, column_norm = 0;
      for (int i = 0; i <= q + 1; ++i) {
        dot += columns[q][i] * r[i];
        column_norm += static_cast<long double>(columns[q][i]) * columns[q][i];
      }
      EXPECT_LE(std::fabs(static_cast<double>(dot)),
                1e-12 * beta * static_cast<double>(std::sqrt(column_norm)))
          << "step " << j << ", column " << q;
    }
  }
}

TEST(GivensLeastSquares, ResidualAndSolutionOfEveryStep) {
  const int m = 24;
  GivensLeastSquares ls(m);
  check_every_step(ls, random_hessenberg(m, 7), 3.0);
}

TEST(GivensLeastSquares, ResetStartsANewCycle) {
  const int m = 10;
  GivensLeastSquares ls(m);
  check_every_step(ls, random_hessenberg(m, 11), 1.0);
  check_every_step(ls, random_hessenberg(m, 12), 0.25);
  GivensLeastSquares fresh(m);
  check_every_step(fresh, random_hessenberg(m, 12), 0.25);
}

TEST(GivensLeastSquares, ExactSolutionWhenTheSubdiagonalVanishes) {
  // A zero last entry (a "lucky" breakdown of Arnoldi): beta e_1 lies in H's range, so
  // the residual is zero up to rounding.
  const int m = 6;
  auto columns = random_hessenberg(m, 3);
  columns[m - 1][m] = 0;
  GivensLeastSquares ls(m);
  ls.reset(2.0);
  double reported = 0;
  for (int j = 0; j < m; ++j) reported = ls.add_column(j, columns[j].data());
  EXPECT_LE(reported, 1e-14 * 2.0);
  std::vector<double> y(m);
  ASSERT_EQ(ls.nonsingular_columns(m), m);
  ls.solve(m, y.data());
  EXPECT_LE(static_cast<double>(norm(residual(columns, m, 2.0, y))), 1e-13);
}

TEST(GivensLeastSquares, NonsingularColumnsStopAtADependentColumn) {
  // Column 2 is a combination of columns 0 and 1 (zero below row 2): R(2, 2) is rounding
  // noise, so only two columns are usable, and those two solve their own problem.
  const int m = 5;
  auto columns = random_hessenberg(m, 5);
  for (int i = 0; i <= m; ++i) columns[2][i] = 0.75 * columns[0][i] - 1.5 * columns[1][i];
  GivensLeastSquares ls(m);
  ls.reset(1.0);
  for (int j = 0; j < m; ++j) ls.add_column(j, columns[j].data());
  EXPECT_EQ(ls.nonsingular_columns(m), 2);
  EXPECT_EQ(ls.nonsingular_columns(2), 2);
  EXPECT_EQ(ls.nonsingular_columns(1), 1);
  std::vector<double> y(2);
  ls.solve(2, y.data());
  const auto r = residual(columns, 2, 1.0, y);
  for (int q = 0; q < 2; ++q) {
    long double dot = 0;
    for (int i = 0; i <= q + 1; ++i) dot += columns[q][i] * r[i];
    EXPECT_LE(std::fabs(static_cast<double>(dot)), 1e-13) << "column " << q;
  }
}

TEST(GivensLeastSquares, ZeroColumnIsNotUsable) {
  const int m = 3;
  auto columns = random_hessenberg(m, 9);
  columns[0].assign(m + 1, 0.0);
  GivensLeastSquares ls(m);
  ls.reset(1.0);
  EXPECT_EQ(ls.add_column(0, columns[0].data()), 1.0);  // nothing gained
  EXPECT_EQ(ls.nonsingular_columns(1), 0);
}

}  // namespace
