// kacc::double_double and kacc::quad_double against MPFR: every operation within its
// stated relative error bound on random operands over a wide exponent range and on
// cancelling ones; comparisons, conversions, printing, IEEE special values; and both as
// Arith and Acc of DOT and GEMV on fp64 data (MPRES-BLAS-style extended results), and of
// TRSV and GEMM on entries stored in the type.
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemm.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/blas/trsv.hpp>
#include <kacc/core/quad_double.hpp>
#include <kacc_testing/exact.hpp>
#include <kacc_testing/gendot.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace {

using kacc::double_double;
using kacc::quad_double;
constexpr double u = 0x1p-53;

// An MPFR number of 600 bits: exact for the sums of components used here.
struct big {
  mpfr_t v;
  big() { mpfr_init2(v, 600); }
  ~big() { mpfr_clear(v); }
  big(const big&) = delete;
  big& operator=(const big&) = delete;
};

void set(big& b, const double_double& x) {
  mpfr_set_d(b.v, x.hi, MPFR_RNDN);
  mpfr_add_d(b.v, b.v, x.lo, MPFR_RNDN);
}
void set(big& b, const quad_double& x) {
  mpfr_set_d(b.v, x.x[0], MPFR_RNDN);
  for (int i = 1; i < 4; ++i) mpfr_add_d(b.v, b.v, x.x[i], MPFR_RNDN);
}

// |computed - exact| / |exact| (0 when both are 0).
template <class X>
double rel_error(const X& computed, const big& exact) {
  big c, d;
  set(c, computed);
  mpfr_sub(d.v, c.v, exact.v, MPFR_RNDN);
  if (mpfr_zero_p(exact.v)) return mpfr_zero_p(d.v) ? 0 : INFINITY;
  mpfr_div(d.v, d.v, exact.v, MPFR_RNDN);
  return std::fabs(mpfr_get_d(d.v, MPFR_RNDU));
}

// Random operands: exponents over +-200, four random lower components.
double lead(const double_double& x) {
  return x.hi;
}
double lead(const quad_double& x) {
  return x.x[0];
}

template <class X>
std::vector<X> random_operands(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-200, 200);
  std::vector<X> v;
  for (std::size_t k = 0; k < n; ++k) {
    X x = X(std::ldexp(unit(gen), exponent(gen)));
    for (int i = 1; i <= 4; ++i) x = x + X(lead(x) * std::ldexp(unit(gen), -53 * i));
    v.push_back(x);
  }
  return v;
}

// Worst relative error of each operation over random operand pairs; in every fifth pair
// b is close to -a (cancellation in a + b).
template <class X>
void check_operations(double add_bound, double mul_bound, double div_bound, double sqrt_bound) {
  const auto a = random_operands<X>(2000, 1);
  auto b = random_operands<X>(2000, 2);
  for (std::size_t k = 4; k < b.size(); k += 5)
    b[k] = -a[k] + X(lead(a[k]) * 0x1p-120 * (1 + (k % 7) / 8.0));
  double worst_add = 0, worst_sub = 0, worst_mul = 0, worst_div = 0, worst_sqrt = 0;
  double worst_add_d = 0, worst_mul_d = 0, worst_div_d = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    big ea, eb, r;
    set(ea, a[k]);
    set(eb, b[k]);
    mpfr_add(r.v, ea.v, eb.v, MPFR_RNDN);
    worst_add = std::max(worst_add, rel_error(a[k] + b[k], r));
    mpfr_sub(r.v, ea.v, eb.v, MPFR_RNDN);
    worst_sub = std::max(worst_sub, rel_error(a[k] - b[k], r));
    mpfr_mul(r.v, ea.v, eb.v, MPFR_RNDN);
    worst_mul = std::max(worst_mul, rel_error(a[k] * b[k], r));
    mpfr_div(r.v, ea.v, eb.v, MPFR_RNDN);
    worst_div = std::max(worst_div, rel_error(a[k] / b[k], r));
    const double d = lead(b[k]);
    mpfr_add_d(r.v, ea.v, d, MPFR_RNDN);
    worst_add_d = std::max(worst_add_d, rel_error(a[k] + d, r));
    mpfr_mul_d(r.v, ea.v, d, MPFR_RNDN);
    worst_mul_d = std::max(worst_mul_d, rel_error(a[k] * d, r));
    mpfr_div_d(r.v, ea.v, d, MPFR_RNDN);
    worst_div_d = std::max(worst_div_d, rel_error(a[k] / d, r));
    const X pos = abs(a[k]);
    set(ea, pos);
    mpfr_sqrt(r.v, ea.v, MPFR_RNDN);
    worst_sqrt = std::max(worst_sqrt, rel_error(sqrt(pos), r));
  }
  EXPECT_LE(worst_add, add_bound);
  EXPECT_LE(worst_sub, add_bound);
  EXPECT_LE(worst_add_d, add_bound);
  EXPECT_LE(worst_mul, mul_bound);
  EXPECT_LE(worst_mul_d, mul_bound);
  EXPECT_LE(worst_div, div_bound);
  EXPECT_LE(worst_div_d, div_bound);
  EXPECT_LE(worst_sqrt, sqrt_bound);
}

TEST(DoubleDouble, OperationsWithinTheirBounds) {
  // Joldes, Muller and Popescu's bounds; sqrt: the tested 4u^2.
  check_operations<double_double>(3 * u * u, 4 * u * u, 15 * u * u, 4 * u * u);
}

// accumulator_traits<double_double>::add_product of two doubles (TwoProduct, then
// double_double::add_exact_product): within 3u^2 (|x| + |a b|) (1 + 4u) of x + a b, the sum
// normalised (hi is lo + hi rounded), and Impl::add_finite's bits. Random sums and factors
// over a wide exponent range; in every fifth case a b cancels x's leading part, in every
// fifth but one it cancels it but for an ulp (the sums' magnitudes then are their ulps).
TEST(DoubleDouble, ExactProductAdditionWithinItsBound) {
  using traits = kacc::accumulator_traits<double_double>;
  const auto x = random_operands<double_double>(20000, 3);
  std::mt19937_64 gen(4);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-100, 100);
  double worst = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double b = std::ldexp(unit(gen), exponent(gen));
    double a = std::ldexp(unit(gen), exponent(gen));
    if (k % 5 == 4) a = -x[k].hi / b;
    if (k % 5 == 3) a = std::nextafter(-x[k].hi / b, 0.0);
    double_double sum = x[k];
    traits::add_product(sum, a, b);
    big product, exact, bound, error, computed;
    mpfr_set_d(product.v, a, MPFR_RNDN);
    mpfr_mul_d(product.v, product.v, b, MPFR_RNDN);
    set(exact, x[k]);
    mpfr_abs(bound.v, exact.v, MPFR_RNDN);
    mpfr_add(exact.v, exact.v, product.v, MPFR_RNDN);
    mpfr_abs(product.v, product.v, MPFR_RNDN);
    mpfr_add(bound.v, bound.v, product.v, MPFR_RNDN);
    mpfr_mul_d(bound.v, bound.v, 3 * u * u * (1 + 4 * u), MPFR_RNDN);
    set(computed, sum);
    mpfr_sub(error.v, computed.v, exact.v, MPFR_RNDN);
    mpfr_abs(error.v, error.v, MPFR_RNDN);
    EXPECT_LE(mpfr_cmp(error.v, bound.v), 0)
        << "case " << k << ": " << x[k] << " + " << a << " * " << b;
    if (!mpfr_zero_p(bound.v)) {
      mpfr_div(error.v, error.v, bound.v, MPFR_RNDU);
      worst = std::max(worst, mpfr_get_d(error.v, MPFR_RNDU));
    }
    EXPECT_EQ(sum.hi + sum.lo, sum.hi) << "case " << k << ": not normalised";
    double hi = x[k].hi, lo = x[k].lo, p, e;
    kacc::eft::two_prod(a, b, p, e);
    kacc::Impl::add_finite(hi, lo, p, e);
    EXPECT_TRUE(hi == sum.hi && lo == sum.lo) << "case " << k << ": add_finite's bits differ";
  }
  std::cout << "worst error / bound: " << worst << "\n";
}

TEST(QuadDouble, OperationsWithinTheirBounds) {
  check_operations<quad_double>(0x1p-208, 0x1p-208, 0x1p-205, 0x1p-205);
}

template <class X>
void check_special_values() {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(static_cast<double>(X(inf) + X(1.0)), inf);
  EXPECT_EQ(static_cast<double>(X(1.0) - X(inf)), -inf);
  EXPECT_TRUE(std::isnan(static_cast<double>(X(inf) - X(inf))));
  EXPECT_TRUE(std::isnan(static_cast<double>(X(inf) * X(0.0))));
  EXPECT_EQ(static_cast<double>(X(2.0) * X(inf)), inf);
  EXPECT_EQ(static_cast<double>(X(1.0) / X(0.0)), inf);
  EXPECT_EQ(static_cast<double>(sqrt(X(0.0))), 0.0);
  EXPECT_TRUE(std::isnan(static_cast<double>(sqrt(X(-1.0)))));
}

TEST(DoubleDouble, SpecialValuesFollowIeee) {
  check_special_values<double_double>();
}
TEST(QuadDouble, SpecialValuesFollowIeee) {
  check_special_values<quad_double>();
}

template <class X>
void check_comparisons_and_conversions() {
  const X third = X(1.0) / X(3.0);
  const X bigger = third + X(0x1p-100);
  EXPECT_TRUE(third < bigger && bigger > third && third <= bigger && bigger >= third);
  EXPECT_TRUE(third != bigger && third == third && !(third < third) && third <= third);
  EXPECT_EQ(static_cast<double>(third), 1.0 / 3.0);  // rounded to nearest
  EXPECT_EQ(static_cast<float>(third), 1.0f / 3.0f);
  EXPECT_EQ(abs(-third), third);
  EXPECT_TRUE(X(-2.0) < X(0.0));
}

TEST(DoubleDouble, ComparisonsAndConversions) {
  check_comparisons_and_conversions<double_double>();
}
TEST(QuadDouble, ComparisonsAndConversions) {
  check_comparisons_and_conversions<quad_double>();
}

TEST(DoubleDouble, Printing) {
  std::ostringstream os;
  os << double_double(1.0) / double_double(3.0) << " " << double_double(0.0);
  EXPECT_EQ(os.str(), "3.3333333333333333333333333333333e-1 0");
  // The first 25 digits of far-away values agree with MPFR's decimal expansion.
  for (double v : {-2.5e-300, 1.7e308, 6.02214076e23, 0x1p-1000}) {
    char ref[64];
    mpfr_t m;
    mpfr_init2(m, 53);
    mpfr_set_d(m, v, MPFR_RNDN);
    mpfr_snprintf(ref, sizeof ref, "%.24Re", m);
    mpfr_clear(m);
    const std::string printed = kacc::to_string(double_double(v));
    const std::string expected(ref);
    EXPECT_EQ(printed.substr(0, expected.find('e') - 1),
              expected.substr(0, expected.find('e') - 1));
    EXPECT_EQ(printed.substr(printed.find('e') + 1),
              std::to_string(std::stoi(expected.substr(expected.find('e') + 1))));
  }
}

TEST(QuadDouble, Printing) {
  std::ostringstream os;
  os << quad_double(2.0) / quad_double(3.0);
  EXPECT_EQ(os.str().substr(0, 64),
            "6.66666666666666666666666666666666666666666666666666666666666666");
  EXPECT_EQ(os.str().substr(os.str().size() - 3), "e-1");
}

// DOT of ill-conditioned fp64 data with Arith = Acc = X: within (n - 1) add_bound
// sum |x_i y_i| of the exact value (the products are exact).
template <class X>
void check_dot(double add_bound) {
  using Vec = Kokkos::View<double*, Kokkos::HostSpace>;
  for (double cond : {1e10, 1e30}) {
    std::vector<double> xv, yv;
    const std::size_t n = 3000;
    kacc_testing::gen_dot(n, cond, 4, xv, yv);
    Vec x("x", n), y("y", n);
    double abs = 0;
    for (std::size_t i = 0; i < n; ++i) {
      x(i) = xv[i];
      y(i) = yv[i];
      abs += std::fabs(xv[i] * yv[i]);
    }
    const X r = kacc::blas::dot<X, X>(Kokkos::DefaultHostExecutionSpace(), x, y);
    const auto exact = kacc_testing::exact_dot(n, xv.data(), yv.data());
    big e, c, d;
    mpfr_set(e.v, exact.get(), MPFR_RNDN);
    set(c, r);
    mpfr_sub(d.v, c.v, e.v, MPFR_RNDN);
    EXPECT_LE(std::fabs(mpfr_get_d(d.v, MPFR_RNDU)), 2 * n * add_bound * abs) << cond;
    // Acc = X, Arith = double: one rounding to double at the end on top.
    const double rd = kacc::blas::dot<double, X>(Kokkos::DefaultHostExecutionSpace(), x, y);
    EXPECT_LE(exact.abs_error(rd), u * std::fabs(exact.rounded()) + 2 * n * add_bound * abs);
  }
}

TEST(DoubleDouble, DotArithAndAcc) {
  check_dot<double_double>(3 * u * u);
}
TEST(QuadDouble, DotArithAndAcc) {
  check_dot<quad_double>(0x1p-208);
}

// NRM2 in X of (3, 4, 0, ...) (1 + 2^-60) scaled by 2^e: exactly 5 (1 + 2^-60) 2^e, which
// fp64 arithmetic misses by 2^-60 relative. e = 0 takes one pass, e = -600 (squares below
// double's range) and e = 600 (beyond it) the second, scaled pass. A NaN entry gives NaN,
// an infinite one inf.
template <class X>
void check_nrm2(double bound) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const X one_plus = X(1.0) + X(0x1p-60);
  kacc::View<X*, Kokkos::HostSpace, kacc::StoredAs<X>> x("x", 7);
  for (const int e : {0, -600, 600}) {
    SCOPED_TRACE(e);
    x(0) = X(std::ldexp(3.0, e)) * one_plus;
    x(1) = X(std::ldexp(4.0, e)) * one_plus;
    big exact, one;
    mpfr_set_d(exact.v, std::ldexp(5.0, e), MPFR_RNDN);
    mpfr_set_d(one.v, 0x1p-60, MPFR_RNDN);
    mpfr_add_d(one.v, one.v, 1.0, MPFR_RNDN);
    mpfr_mul(exact.v, exact.v, one.v, MPFR_RNDN);
    EXPECT_LE(rel_error(kacc::blas::nrm2<X, X>(Host(), x), exact), bound);
  }
  x(3) = X(std::numeric_limits<double>::infinity());
  EXPECT_EQ(lead(kacc::blas::nrm2<X, X>(Host(), x)), std::numeric_limits<double>::infinity());
  x(4) = X(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(lead(kacc::blas::nrm2<X, X>(Host(), x))));
}

TEST(DoubleDouble, Nrm2InDoubleDouble) {
  // A sum of squares within 3u^2, then sqrt within 4u^2.
  check_nrm2<double_double>(8 * u * u);
}
TEST(QuadDouble, Nrm2InQuadDouble) {
  check_nrm2<quad_double>(0x1p-203);
}

// GEMV with Arith = Acc = double_double, y stored as double_double: every row within
// the same bound as DOT.
TEST(DoubleDouble, GemvExtendedPrecisionResult) {
  const std::size_t m = 40, n = 300;
  std::vector<double> xv, M;
  kacc_testing::gen_dot_rows(m, n, 1e25, 9, xv, M);
  for (bool trans : {false, true}) {
    const std::size_t rows = trans ? n : m, cols = trans ? m : n;
    Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> A("A", rows, cols);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t k = 0; k < n; ++k) (trans ? A(k, i) : A(i, k)) = M[i * n + k];
    Kokkos::View<double*, Kokkos::HostSpace> x("x", n);
    for (std::size_t k = 0; k < n; ++k) x(k) = xv[k];
    Kokkos::View<double_double*, Kokkos::HostSpace> y("y", m);
    kacc::blas::gemv<double_double, double_double>(Kokkos::DefaultHostExecutionSpace(),
                                                   trans ? "T" : "N", 1.0, A, x, 0.0, y);
    Kokkos::DefaultHostExecutionSpace().fence();
    for (std::size_t i = 0; i < m; ++i) {
      const auto exact = kacc_testing::exact_dot(n, &M[i * n], xv.data());
      double abs = 0;
      for (std::size_t k = 0; k < n; ++k) abs += std::fabs(M[i * n + k] * xv[k]);
      big e, c, d;
      mpfr_set(e.v, exact.get(), MPFR_RNDN);
      set(c, y(i));
      mpfr_sub(d.v, c.v, e.v, MPFR_RNDN);
      EXPECT_LE(std::fabs(mpfr_get_d(d.v, MPFR_RNDU)), 2 * n * 3 * u * u * abs)
          << (trans ? "T row " : "N row ") << i;
    }
  }
}

// GEMV with Arith = double and Acc = X: the row sums in X, each rounded once to double.
template <class X>
void check_gemv_acc(double add_bound) {
  const std::size_t m = 40, n = 300;
  std::vector<double> xv, M;
  kacc_testing::gen_dot_rows(m, n, 1e25, 10, xv, M);
  for (bool trans : {false, true}) {
    const std::size_t rows = trans ? n : m, cols = trans ? m : n;
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> A("A", rows, cols);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t k = 0; k < n; ++k) (trans ? A(k, i) : A(i, k)) = M[i * n + k];
    Kokkos::View<double*, Kokkos::HostSpace> x("x", n), y("y", m);
    for (std::size_t k = 0; k < n; ++k) x(k) = xv[k];
    kacc::blas::gemv<double, X>(Kokkos::DefaultHostExecutionSpace(), trans ? "T" : "N", 1.0, A, x,
                                0.0, y);
    Kokkos::DefaultHostExecutionSpace().fence();
    for (std::size_t i = 0; i < m; ++i) {
      const auto exact = kacc_testing::exact_dot(n, &M[i * n], xv.data());
      double abs = 0;
      for (std::size_t k = 0; k < n; ++k) abs += std::fabs(M[i * n + k] * xv[k]);
      EXPECT_LE(exact.abs_error(y(i)), u * std::fabs(exact.rounded()) + 2 * n * add_bound * abs)
          << (trans ? "T row " : "N row ") << i;
    }
  }
}

TEST(DoubleDouble, GemvAccumulator) {
  check_gemv_acc<double_double>(3 * u * u);
}
TEST(QuadDouble, GemvAccumulator) {
  check_gemv_acc<quad_double>(0x1p-208);
}

}  // namespace

namespace {

// What GEMV with Arith = double, Acc = double_double promises bit for bit: each row's products
// (FMA TwoProduct) added with accumulator_traits<double_double>::add_product in column
// order (the column-walking host shape), or into 16 lanes by column modulo 16 and the lanes
// joined pairwise (the row-summing host shape), then rounded to double.
double double_double_row(const std::vector<double>& M, std::size_t n, std::size_t i,
                         const std::vector<double>& x, bool lanes) {
  using traits = kacc::accumulator_traits<double_double>;
  double_double lane[16];
  for (std::size_t k = 0; k < n; ++k)
    traits::add_product(lane[lanes ? k % 16 : 0], M[i * n + k], x[k]);
  for (int w = 8; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) traits::join(lane[l], lane[l + w]);
  return static_cast<double>(lane[0]);
}

template <class Layout>
void check_gemv_bits(bool trans, std::size_t m, std::size_t n, bool special) {
  std::vector<double> xv, M;
  kacc_testing::gen_dot_rows(m, n, 1e25, m + 3 * n, xv, M);
  if (special) {
    const double inf = std::numeric_limits<double>::infinity();
    M[1 * n + 7] = inf;                                // row 1: inf (not NaN)
    M[2 * n + 1] = inf, M[2 * n + n - 1] = -inf;       // row 2: NaN
    M[4 * n + 3] = 0x1p1000, M[4 * n + 5] = 0x1p1000;  // row 4: products that overflow
  }
  const std::size_t rows = trans ? n : m, cols = trans ? m : n;
  Kokkos::View<double**, Layout, Kokkos::HostSpace> A("A", rows, cols);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t k = 0; k < n; ++k) (trans ? A(k, i) : A(i, k)) = M[i * n + k];
  Kokkos::View<double*, Kokkos::HostSpace> x("x", n), y("y", m);
  for (std::size_t k = 0; k < n; ++k) x(k) = xv[k];
  kacc::blas::gemv<double, double_double>(Kokkos::DefaultHostExecutionSpace(), trans ? "T" : "N",
                                          1.0, A, x, 0.0, y);
  Kokkos::DefaultHostExecutionSpace().fence();
  // Which host shape ran: the one that streams A.
  const bool lanes = (std::is_same<Layout, Kokkos::LayoutRight>::value != trans);
  int misses = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const double ref = double_double_row(M, n, i, xv, lanes);
    if (!(ref == y(i) || (std::isnan(ref) && std::isnan(y(i))))) ++misses;
  }
  EXPECT_EQ(misses, 0) << (trans ? "T " : "N ") << (lanes ? "row-summing" : "column-walking")
                       << " shape, " << m << "x" << n << (special ? " with inf/NaN/overflow" : "");
}

#if defined(KOKKOS_ENABLE_SERIAL)
// What DOT with Arith = double, Acc = double_double promises bit for bit on one host thread:
// blocks of 4096 entries, each block's products added into 16 lanes by index modulo 16
// with accumulator_traits<double_double>::add_product, the lanes joined pairwise, then the
// blocks joined in order.
double double_double_dot(const std::vector<double>& x, const std::vector<double>& y) {
  using traits = kacc::accumulator_traits<double_double>;
  const std::size_t block = 4096;
  double_double sum;
  for (std::size_t b = 0; b < x.size(); b += block) {
    double_double lane[16];
    for (std::size_t i = b; i < x.size() && i < b + block; ++i)
      traits::add_product(lane[(i - b) % 16], x[i], y[i]);
    for (int w = 8; w > 0; w /= 2)
      for (int l = 0; l < w; ++l) traits::join(lane[l], lane[l + w]);
    traits::join(sum, lane[0]);
  }
  return static_cast<double>(sum);
}

TEST(DoubleDouble, DotBitsOfTheHostShape) {
  const std::size_t n = 3 * 4096 + 37;  // a partial block, and a tail of 5 after its lanes
  std::vector<double> xv, yv;
  kacc_testing::gen_dot(n, 1e20, 7, xv, yv);
  const double inf = std::numeric_limits<double>::infinity();
  for (int special = 0; special < 3; ++special) {
    std::vector<double> xs = xv;
    if (special == 1) xs[5000] = inf;                            // inf (not NaN)
    if (special == 2) xs[5000] = 0x1p1000, xs[5016] = 0x1p1000;  // products that overflow
    Kokkos::View<double*, Kokkos::HostSpace> x("x", n), y("y", n);
    for (std::size_t i = 0; i < n; ++i) x(i) = xs[i], y(i) = yv[i];
    const double got = kacc::blas::dot<double, double_double>(Kokkos::Serial(), x, y);
    const double want = double_double_dot(xs, yv);
    EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
        << "case " << special << ": " << got << " against " << want;
    if (special == 1) {
      EXPECT_EQ(want, std::copysign(inf, want));
    }
  }
}
#endif

TEST(DoubleDouble, GemvBitsOfEachHostShape) {
  // The row-summing shape's last group of rows short by one (LayoutRight-N) and whole
  // (LayoutLeft-T), as well as 70 rows.
  constexpr std::size_t group = kacc::blas::Impl::double_double_dot_rows;
  constexpr std::size_t whole = (70 / group + 1) * group;
  for (bool trans : {false, true})
    for (bool special : {false, true}) {
      check_gemv_bits<Kokkos::LayoutLeft>(trans, 70, 203, special);
      check_gemv_bits<Kokkos::LayoutRight>(trans, 70, 203, special);
      check_gemv_bits<Kokkos::LayoutRight>(trans, whole - 1, 203, special);
      check_gemv_bits<Kokkos::LayoutLeft>(trans, whole, 203, special);
    }
}

}  // namespace

// StoredAs<X>: views that store X, computing in X (entries handed out whole) or in double
// (each read rounded to double), and X arithmetic over double storage. Entries
// (i + 1) (1 + 2^-60) keep their low part only where X is stored; DOT and GEMV of them with
// integers are exact in X, whatever the order of the additions.
template <class X>
void check_stored_as() {
  using Host = Kokkos::DefaultHostExecutionSpace;
  constexpr int n = 64;
  const double tiny = 0x1p-60;
  const X one_plus = X(1.0) + X(tiny);
  kacc::View<X*, Kokkos::HostSpace, kacc::StoredAs<X>> a("a", n);
  kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<X>> rounded("rounded", n);
  kacc::View<X*, Kokkos::HostSpace, kacc::StoredAs<double>> w("w", n);
  static_assert(kacc::bytes_per_entry<decltype(a)>() == sizeof(X));
  static_assert(kacc::bytes_per_entry<decltype(rounded)>() == sizeof(X));
  static_assert(kacc::bytes_per_entry<decltype(w)>() == sizeof(double));
  for (int i = 0; i < n; ++i) {
    a(i) = one_plus * X(i + 1.0);
    rounded.storage()(i) = a(i);
    w(i) = X(static_cast<double>(i));
  }
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(static_cast<double>(X(a(i)) - X(i + 1.0)), (i + 1.0) * tiny) << "entry " << i;
    EXPECT_EQ(static_cast<double>(rounded(i)), i + 1.0) << "entry " << i;
  }
  const double sum_w = n * (n - 1) / 2.0;                 // sum of w
  const double sum_aw = (n - 1.0) * n * (n + 1.0) / 3.0;  // sum of (i + 1) i
  const X d = kacc::blas::dot<X, X>(Host(), a, w);
  EXPECT_TRUE(d == X(sum_aw) + X(sum_aw * tiny)) << d;
  const double rd = kacc::blas::dot<double, X>(Host(), rounded, w);
  EXPECT_EQ(rd, sum_aw);

  kacc::View<X**, Kokkos::LayoutRight, Kokkos::HostSpace, kacc::StoredAs<X>> A("A", n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = a(i);
  kacc::View<X*, Kokkos::HostSpace, kacc::StoredAs<X>> y("y", n);
  kacc::blas::gemv<X, X>(Host(), "N", 1.0, A, w, 0.0, y);
  for (int i = 0; i < n; ++i) {
    const double want = (i + 1.0) * sum_w;
    EXPECT_TRUE(X(y(i)) == X(want) + X(want * tiny)) << "N row " << i << ": " << X(y(i));
  }
  kacc::blas::gemv<X, X>(Host(), "T", 1.0, A, w, 0.0, y);
  for (int j = 0; j < n; ++j)
    EXPECT_TRUE(X(y(j)) == X(sum_aw) + X(sum_aw * tiny)) << "T row " << j << ": " << X(y(j));
}

TEST(DoubleDouble, StoredAsAStorageFormat) {
  check_stored_as<double_double>();
}
TEST(QuadDouble, StoredAsAStorageFormat) {
  check_stored_as<quad_double>();
}

// TRSV with Arith = Acc = X on a matrix and right-hand side stored as X: L unit lower
// bidiagonal (-1 below the diagonal), so L x = b and L^T x = b give the prefix and suffix
// sums of b. With b(i) = 1 + 2^-70 (i + 1) those are integers plus multiples of 2^-70 that
// fp64 arithmetic rounds away (2^-54 and less against an ulp of 2^-44); 300 rows take the
// blocked path past the first diagonal block. Each x(i) within bound of its MPFR value.
template <class X>
void check_trsv(const double bound) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const int n = 300;
  kacc::View<X**, Kokkos::LayoutLeft, Kokkos::HostSpace, kacc::StoredAs<X>> L("L", n, n),
      Lt("Lt", n, n);
  for (int i = 0; i < n; ++i) {
    L(i, i) = X(1.0);
    Lt(i, i) = X(1.0);
    if (i > 0) {
      L(i, i - 1) = X(-1.0);
      Lt(i - 1, i) = X(-1.0);
    }
  }
  const double tiny = 0x1p-70;
  struct solve_case {
    const char *uplo, *trans, *diag;
    bool transposed_storage, prefix;
  };
  for (const solve_case c :
       {solve_case{"L", "N", "N", false, true}, solve_case{"U", "T", "U", true, true},
        solve_case{"U", "N", "N", true, false}, solve_case{"L", "T", "U", false, false}}) {
    SCOPED_TRACE(std::string(c.uplo) + c.trans + c.diag);
    kacc::View<X*, Kokkos::HostSpace, kacc::StoredAs<X>> x("x", n);
    for (int i = 0; i < n; ++i) x(i) = X(1.0) + X(tiny * (i + 1));
    if (c.transposed_storage) {
      kacc::blas::trsv<X, X>(Host(), c.uplo, c.trans, c.diag, Lt, x);
    } else {
      kacc::blas::trsv<X, X>(Host(), c.uplo, c.trans, c.diag, L, x);
    }
    Host().fence();
    for (int i = 0; i < n; ++i) {
      // The sum of b(k) over k = 1 .. i + 1 (prefix) or i + 1 .. n (suffix), 1-based.
      const double first = c.prefix ? 1 : i + 1, last = c.prefix ? i + 1 : n;
      big exact, low;
      mpfr_set_d(exact.v, last - first + 1, MPFR_RNDN);
      mpfr_set_d(low.v, tiny * (last - first + 1) * (first + last) / 2, MPFR_RNDN);
      mpfr_add(exact.v, exact.v, low.v, MPFR_RNDN);
      EXPECT_LE(rel_error(X(x(i)), exact), bound) << "x(" << i << ") = " << X(x(i));
    }
  }
}

TEST(DoubleDouble, TrsvInDoubleDouble) {
  check_trsv<double_double>(300 * 3 * u * u);
}
TEST(QuadDouble, TrsvInQuadDouble) {
  check_trsv<quad_double>(300 * 0x1p-208);
}

// GEMM with Arith = Acc = X on matrices stored as X: A all ones (m x k, or its transpose
// with "T"), B(p, j) = 1 + 2^-70 (p + 1)(j + 1), so C(i, j) = k + 2^-70 (j + 1) k (k + 1) / 2,
// whose low part fp64 arithmetic rounds away. Each C(i, j) within bound of its MPFR value.
template <class X>
void check_gemm(const double bound) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const int m = 20, k = 300, n = 7;
  const double tiny = 0x1p-70;
  using Matrix = kacc::View<X**, Kokkos::LayoutLeft, Kokkos::HostSpace, kacc::StoredAs<X>>;
  Matrix A("A", m, k), At("At", k, m), B("B", k, n);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      A(i, p) = X(1.0);
      At(p, i) = X(1.0);
    }
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < n; ++j) B(p, j) = X(1.0) + X(tiny * (p + 1) * (j + 1));
  for (const bool trans : {false, true}) {
    SCOPED_TRACE(trans ? "T" : "N");
    Matrix C("C", m, n);
    if (trans) {
      kacc::blas::gemm<X, X>(Host(), "T", "N", X(1.0), At, B, X(0.0), C);
    } else {
      kacc::blas::gemm<X, X>(Host(), "N", "N", X(1.0), A, B, X(0.0), C);
    }
    Host().fence();
    for (int j = 0; j < n; ++j) {
      big exact, low;
      mpfr_set_d(exact.v, k, MPFR_RNDN);
      mpfr_set_d(low.v, tiny * (j + 1) * k * (k + 1.0) / 2, MPFR_RNDN);
      mpfr_add(exact.v, exact.v, low.v, MPFR_RNDN);
      for (int i = 0; i < m; ++i)
        EXPECT_LE(rel_error(X(C(i, j)), exact), bound) << "C(" << i << ", " << j << ")";
    }
  }
}

TEST(DoubleDouble, GemmInDoubleDouble) {
  check_gemm<double_double>(2 * 300 * 3 * u * u);
}
TEST(QuadDouble, GemmInQuadDouble) {
  check_gemm<quad_double>(2 * 300 * 0x1p-208);
}
