// kacc::blas::gemm: every storage format in every operand position, all four transpose
// pairs, both loop shapes, against the exact (MPFR) result of the data as stored; BLAS
// semantics of alpha, beta and empty sizes; argument checks.
#include <kacc/blas/gemm.hpp>

#include "blas_reference.hpp"

#include <kacc_testing/invalid_argument.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using kacc_testing::expect_invalid_argument;

using namespace kacc_blas_ref;
using kacc::Impl::shape;
using Host = Kokkos::DefaultHostExecutionSpace;
const double nan = std::numeric_limits<double>::quiet_NaN();

template <class S, class Layout = Kokkos::LayoutLeft>
using Mat = kacc::View<double**, Layout, Kokkos::HostSpace, kacc::StoredAs<S>>;

/// How many entries of C miss the bound around the exact alpha op(A) op(B) + beta C0:
/// gamma_{k+1} (fp64) on |alpha| |op(A)| |op(B)| + |beta C0|, plus the final rounding to
/// C's format (relative u_C, and u_C * 2^-14 absolute for fp16's subnormals).
template <class SC>
int gemm_misses(const std::vector<double>& a, const std::vector<double>& b,
                const std::vector<double>& c0, const std::vector<double>& c, std::size_t m,
                std::size_t n, std::size_t k, double alpha, double beta) {
  int misses = 0;
  std::vector<double> x(k + 1), y(k + 1);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double abs = 0;
      for (std::size_t l = 0; l < k; ++l) {
        x[l] = alpha * a[i * k + l];  // alpha is a power of two: exact
        y[l] = b[l * n + j];
        abs += std::fabs(x[l] * y[l]);
      }
      x[k] = beta;
      y[k] = beta == 0 ? 0 : c0[i * n + j];
      abs += std::fabs(x[k] * y[k]);
      const auto exact = kacc_testing::exact_dot(k + 1, x.data(), y.data());
      const double first = gamma(k + 1, 0x1p-53) * abs;
      const double uc = unit_roundoff<SC>();
      const double bound = first + uc * (std::fabs(exact.rounded()) + first) + uc * 0x1p-14;
      if (!(exact.abs_error(c[i * n + j]) <= bound)) ++misses;
    }
  return misses;
}

template <shape Shape, class SA, class SB, class SC, class LA, class LB>
void check_mix(std::size_t m, std::size_t n, std::size_t k, bool ta, bool tb, double alpha,
               double beta) {
  SCOPED_TRACE(::testing::Message() << "m=" << m << " n=" << n << " k=" << k << " ta=" << ta
                                    << " tb=" << tb << " alpha=" << alpha << " beta=" << beta
                                    << " shape=" << (Shape == shape::host ? "host" : "team"));
  const std::size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  auto A = make_matrix<Mat<SA, LA>>(random_values(ar * ac, 1 + m), ar, ac);
  auto B = make_matrix<Mat<SB, LB>>(random_values(br * bc, 2 + n), br, bc);
  auto C = make_matrix<Mat<SC>>(random_values(m * n, 3 + k), m, n);
  const auto a = op(stored(A), ar, ac, ta), b = op(stored(B), br, bc, tb), c0 = stored(C);
  kacc::blas::Impl::gemm<double, double, Shape>("test", Host(), ta, tb, alpha, A, B, beta, C);
  Host().fence();
  EXPECT_EQ(gemm_misses<SC>(a, b, c0, stored(C), m, n, k, alpha, beta), 0);
}

/// Small sizes in every transpose pair and both shapes; with `large`, also sizes past one
/// host tile in every direction (gemm_mc, gemm_nc, gemm_kc), past one team tile, and C of
/// at most gemm_nr columns past two gemm_narrow_rows row blocks, K past two
/// gemm_narrow_depth steps, in both transposes of A (one of them streams op(A) in
/// gemm_host_narrow, whichever layout A has).
template <class SA, class SB, class SC, class LA, class LB>
void check_all(const char* name, bool large = false) {
  SCOPED_TRACE(name);
  const std::size_t sizes[][3] = {{1, 1, 1}, {3, 5, 2}, {17, 70, 9}};
  for (const auto& s : sizes)
    for (int t = 0; t < 4; ++t) {
      check_mix<shape::host, SA, SB, SC, LA, LB>(s[0], s[1], s[2], t & 1, t & 2, -2.0, 0.5);
      check_mix<shape::team, SA, SB, SC, LA, LB>(s[0], s[1], s[2], t & 1, t & 2, 0.5, -1.0);
    }
  if (!large) return;
  check_mix<shape::host, SA, SB, SC, LA, LB>(67, 131, 260, false, true, 1.0, 0.0);
  check_mix<shape::team, SA, SB, SC, LA, LB>(35, 33, 40, true, false, 1.0, 0.0);
  for (int t = 0; t < 2; ++t) {
    check_mix<shape::host, SA, SB, SC, LA, LB>(603, 16, 21, t, false, -1.0, 1.0);
    check_mix<shape::host, SA, SB, SC, LA, LB>(515, 5, 16, t, true, 2.0, 0.0);
  }
}

using L = Kokkos::LayoutLeft;
using R = Kokkos::LayoutRight;

TEST(Gemm, Fp64) {
  check_all<double, double, double, L, L>("fp64");
}
TEST(Gemm, Fp32) {
  check_all<float, float, float, L, R>("fp32");
}
TEST(Gemm, Fp16) {
  check_all<kacc::fp16, kacc::fp16, kacc::fp16, R, L>("fp16");
}
TEST(Gemm, Bf16) {
  check_all<kacc::bf16, kacc::bf16, kacc::bf16, R, R>("bf16");
}
TEST(Gemm, Mixed) {
  check_all<kacc::fp16, float, double, L, L>("fp16*fp32->fp64", true);
  check_all<double, kacc::bf16, kacc::fp16, L, R>("fp64*bf16->fp16");
  check_all<float, double, kacc::bf16, R, L>("fp32*fp64->bf16");
  check_all<kacc::bf16, kacc::fp16, float, R, R>("bf16*fp16->fp32", true);
}

// The exact accumulator rounds every entry of an fp64 C correctly.
TEST(Gemm, ExactAccumulatorIsCorrectlyRounded) {
  const std::size_t m = 9, n = 7, k = 200;
  auto A = make_matrix<Mat<double>>(random_values(m * k, 11, distribution::normal), m, k);
  auto B = make_matrix<Mat<double>>(random_values(k * n, 12, distribution::normal), k, n);
  Mat<double> C("C", m, n);
  kacc::blas::gemm<double, kacc::exact<double>>("N", "N", 1.0, A, B, 0.0, C);
  const auto a = stored(A), b = op(stored(B), k, n, true), c = stored(C);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      EXPECT_EQ(c[i * n + j], kacc_testing::exact_dot(k, &a[i * k], &b[j * k]).rounded());
}

TEST(Gemm, BetaZeroDoesNotReadC) {
  auto A = make_matrix<Mat<float>>({1, 2, 3, 4, 5, 6}, 2, 3);
  auto B = make_matrix<Mat<kacc::fp16>>({1, 1, 1}, 3, 1);
  auto C = make_matrix<Mat<double>>({nan, std::numeric_limits<double>::infinity()}, 2, 1);
  kacc::blas::gemm("N", "N", 2.0, A, B, 0.0, C);
  EXPECT_EQ(stored(C), (std::vector<double>{12, 30}));
}

TEST(Gemm, AlphaZeroOrEmptyKScalesC) {
  auto A = make_matrix<Mat<double>>({nan, nan}, 2, 1);
  auto B = make_matrix<Mat<double>>({nan, nan}, 1, 2);
  auto C = make_matrix<Mat<double>>({1, 2, 3, 4}, 2, 2);
  kacc::blas::gemm("N", "N", 0.0, A, B, 3.0, C);
  EXPECT_EQ(stored(C), (std::vector<double>{3, 6, 9, 12}));
  kacc::blas::gemm("N", "N", 0.0, A, B, 0.0, C);
  EXPECT_EQ(stored(C), (std::vector<double>(4, 0.0)));
  Mat<double> A0("A0", 2, 0), B0("B0", 0, 2);
  auto D = make_matrix<Mat<double>>({1, 2, 3, 4}, 2, 2);
  kacc::blas::gemm("N", "N", 1.0, A0, B0, -1.0, D);
  EXPECT_EQ(stored(D), (std::vector<double>{-1, -2, -3, -4}));
  Mat<double> A3("A3", 3, 0), B3("B3", 3, 2), E("E", 0, 2);
  kacc::blas::gemm("T", "N", 1.0, A3, B3, 1.0, E);  // m = 0: nothing to do
  SUCCEED();
}

TEST(Gemm, ArgumentsRejected) {
  Mat<double> A("A", 4, 3), B("B", 3, 2), C("C", 4, 2), S("S", 4, 4);
  expect_invalid_argument([&] { kacc::blas::gemm("X", "N", 1.0, A, B, 0.0, C); },
                          "kacc::blas::gemm", "transA");
  expect_invalid_argument([&] { kacc::blas::gemm("N", "NT", 1.0, A, B, 0.0, C); },
                          "kacc::blas::gemm", "transB");
  expect_invalid_argument([&] { kacc::blas::gemm("T", "N", 1.0, A, B, 0.0, C); },
                          "kacc::blas::gemm", "(4,3)");
  expect_invalid_argument([&] { kacc::blas::gemm("N", "T", 1.0, A, B, 0.0, C); },
                          "kacc::blas::gemm", "(3,2)");
  expect_invalid_argument([&] { kacc::blas::gemm("N", "N", 1.0, A, B, 0.0, S); },
                          "kacc::blas::gemm", "(4,4)");
  auto left = kacc::subview(S, Kokkos::ALL(), std::make_pair(0, 3));
  auto right = kacc::subview(S, Kokkos::ALL(), std::make_pair(2, 4));
  expect_invalid_argument([&] { kacc::blas::gemm("N", "N", 1.0, left, B, 0.0, right); },
                          "kacc::blas::gemm", "aliases A");
  Mat<double> B4("B4", 4, 2);
  auto top = kacc::subview(S, std::make_pair(0, 4), std::make_pair(0, 2));
  expect_invalid_argument([&] { kacc::blas::gemm("N", "N", 1.0, S, B4, 0.0, top); },
                          "kacc::blas::gemm", "aliases A");
  expect_invalid_argument([&] { kacc::blas::gemm("N", "N", 1.0, S, top, 0.0, top); },
                          "kacc::blas::gemm", "aliases");
}

}  // namespace
