// kacc::solve::gesv_ir: matrices of prescribed condition number (random orthogonal
// factors times geometric singular values), diagonally dominant and badly scaled ones,
// every factor format and refinement; each backward error measured with the exact (MPFR)
// residual and compared with that of an fp64 LU solve (the dgesv stand-in); bad input
// and failures reported honestly, never as "converged".
#include <kacc/solve.hpp>

#include "../blas/blas_reference.hpp"

#include <kacc_testing/invalid_argument.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using namespace kacc_blas_ref;
using namespace kacc::solve;
using Host = Kokkos::DefaultHostExecutionSpace;
using Mat = kacc::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
using Vec = kacc::View<double*, Kokkos::HostSpace>;
const double nan = std::numeric_limits<double>::quiet_NaN();

/// Row-major n x n matrix U diag(sigma) V^T, U and V products of n random Householder
/// reflections, sigma geometric from 1 down to 1 / kappa.
std::vector<double> conditioned(std::size_t n, double kappa, std::uint64_t seed) {
  std::vector<double> a(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    a[i * n + i] = n == 1 ? 1.0 : std::pow(kappa, -double(i) / double(n - 1));
  const auto g = random_values(2 * n * n, seed, distribution::normal);
  std::vector<double> w(n), t(n);
  for (std::size_t h = 0; h < 2 * n; ++h) {
    double norm = 0;
    for (std::size_t i = 0; i < n; ++i) norm += g[h * n + i] * g[h * n + i];
    for (std::size_t i = 0; i < n; ++i) w[i] = g[h * n + i] / std::sqrt(norm);
    const bool left = h % 2 == 0;  // a <- (I - 2ww^T) a, or a (I - 2ww^T)
    for (std::size_t c = 0; c < n; ++c) {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += w[i] * (left ? a[i * n + c] : a[c * n + i]);
      for (std::size_t i = 0; i < n; ++i) (left ? a[i * n + c] : a[c * n + i]) -= 2 * s * w[i];
    }
  }
  return a;
}

/// ||A||_inf ||x||_inf + ||b||_inf, the denominator of the normwise backward error.
double backward_error_scale(const std::vector<double>& a, const std::vector<double>& b,
                            const std::vector<double>& x) {
  const std::size_t n = b.size();
  double an = 0, xn = 0, bn = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double row = 0;
    for (std::size_t j = 0; j < n; ++j) row += std::fabs(a[i * n + j]);
    an = std::max(an, row);
    xn = std::max(xn, std::fabs(x[i]));
    bn = std::max(bn, std::fabs(b[i]));
  }
  return an * xn + bn;
}

/// ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf), the residual exact (MPFR).
double backward_error(const std::vector<double>& a, const std::vector<double>& b,
                      const std::vector<double>& x) {
  const std::size_t n = b.size();
  double r = 0;
  for (std::size_t i = 0; i < n; ++i)
    r = std::max(r, kacc_testing::exact_dot(n, &a[i * n], x.data(), -b[i]).abs_error(0.0));
  return r / backward_error_scale(a, b, x);
}

/// The backward error of an fp64 LU solve (kacc's getrf/getrs, as dgesv).
double fp64_lu_backward_error(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = b.size();
  auto F = make_matrix<Mat>(a, n, n);
  Kokkos::View<int*, Kokkos::HostSpace> ipiv("ipiv", n);
  kacc::lapack::getrf(F, ipiv);
  auto x = make_vector<Vec>(b);
  kacc::lapack::getrs(F, ipiv, x);
  return backward_error(a, b, stored(x));
}

struct result {
  ir_status status;
  double backward_error;       // exact
  double fp64_backward_error;  // of the fp64 LU solve
};

/// Solves with A held in a matrix of type M, by `engine` (kacc_lu when there is none).
template <class M = Mat, class Engine = kacc_lu<Host>>
result solve(const std::vector<double>& a, const std::vector<double>& b, const ir_options& o,
             Engine&& engine = Engine()) {
  const std::size_t n = b.size();
  auto A = make_matrix<M>(a, n, n);
  auto B = make_vector<Vec>(b);
  Vec x("x", n);
  result r{gesv_ir(Host(), A, B, x, o, engine), 0, fp64_lu_backward_error(a, b)};
  r.backward_error = backward_error(a, b, stored(x));
  auto same = [](const std::vector<double>& u, const std::vector<double>& v) {
    return u.size() == v.size() &&
           std::equal(u.begin(), u.end(), v.begin(), [](double p, double q) {
             return p == q || (std::isnan(p) && std::isnan(q));
           });
  };
  EXPECT_TRUE(same(stored(A), a)) << "A changed";
  EXPECT_TRUE(same(stored(B), b)) << "b changed";
  return r;
}

const char* name(factor_format f) {
  return f == factor_format::fp64   ? "fp64"
         : f == factor_format::fp32 ? "fp32"
         : f == factor_format::fp16 ? "fp16"
                                    : "bf16";
}

/// Solves with A of condition number kappa and expects convergence without fallback,
/// with a backward error at most twice that of the fp64 LU solve (or of eps).
void expect_converges(std::size_t n, double kappa, factor_format f, refinement m,
                      residual_precision res = residual_precision::fp64) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " kappa=" << kappa << " factors=" << name(f)
                                    << (m == refinement::gmres ? " gmres" : " classic"));
  const auto a = conditioned(n, kappa, n + static_cast<std::uint64_t>(std::log10(kappa)));
  const auto b = random_values(n, 99);
  ir_options o;
  o.factors = f;
  o.method = m;
  o.residual = res;
  const auto r = solve(a, b, o);
  EXPECT_EQ(r.status.outcome, ir_outcome::converged) << to_string(r.status.reason);
  EXPECT_EQ(r.status.reason, ir_reason::none);
  EXPECT_LE(r.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53))
      << "fp64 LU: " << r.fp64_backward_error;
  EXPECT_EQ(r.status.residual_history.size(), std::size_t(r.status.outer_iterations + 1));
  EXPECT_LE(r.status.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53));
  if (m == refinement::classic) {
    EXPECT_EQ(r.status.inner_iterations, 0);
  }
}

TEST(GesvIr, ClassicFp32ToKappa1e6) {
  for (double kappa : {1e1, 1e3, 1e6})
    expect_converges(100, kappa, factor_format::fp32, refinement::classic);
}

TEST(GesvIr, GmresFp32ToKappa1e12) {
  for (double kappa : {1e2, 1e8, 1e12})
    expect_converges(100, kappa, factor_format::fp32, refinement::gmres);
}

TEST(GesvIr, ScaledFp16ToKappa1e6) {
  expect_converges(100, 1e2, factor_format::fp16, refinement::classic);
  for (double kappa : {1e2, 1e4, 1e6})
    expect_converges(100, kappa, factor_format::fp16, refinement::gmres);
}

TEST(GesvIr, Bf16ToKappa1e4) {
  expect_converges(100, 1e1, factor_format::bf16, refinement::classic);
  for (double kappa : {1e2, 1e4})
    expect_converges(100, kappa, factor_format::bf16, refinement::gmres);
}

TEST(GesvIr, Fp64FactorsAndDoubleDoubleResidual) {
  expect_converges(100, 1e8, factor_format::fp64, refinement::classic);
  expect_converges(100, 1e4, factor_format::fp32, refinement::classic,
                   residual_precision::double_double);
  expect_converges(100, 1e6, factor_format::fp16, refinement::gmres,
                   residual_precision::double_double);
}

TEST(GesvIr, SizesOneToFewHundred) {
  for (std::size_t n : {1, 2, 3, 17, 257})
    expect_converges(n, 1e3, factor_format::fp32, refinement::classic);
  expect_converges(300, 1e4, factor_format::fp16, refinement::gmres);
}

// Polishing ends, as LAPACK's dgerfs does, at the first iterate whose backward error (as
// gesv_ir computes it) is at most 2^-53: that iterate is returned and is the last in the
// history, and the one before it was above. Without the rule a further step would be
// taken, fail to halve the residual, and be undone.
TEST(GesvIr, PolishStopsAtUnitRoundoff) {
  const std::size_t n = 300;
  const auto a = conditioned(n, 1e2, 7);
  const auto b = random_values(n, 8);
  Vec x("x", n);
  const auto s = gesv_ir(Host(), make_matrix<Mat>(a, n, n), make_vector<Vec>(b), x);
  ASSERT_EQ(s.outcome, ir_outcome::converged) << to_string(s.reason);
  const auto& h = s.residual_history;
  ASSERT_GE(h.size(), 2u);
  const double roundoff = 0x1p-53 * backward_error_scale(a, b, stored(x));
  EXPECT_LE(h.back(), roundoff * (1 + 1e-9));
  EXPECT_GT(h[h.size() - 2], roundoff * (1 - 1e-9));
  EXPECT_LE(s.backward_error, 0x1p-53 * (1 + 1e-9));
}

// Order 2000 (the largest the tests reach; random, so kappa is about 1e4 to 1e5 and the
// LU spans 16 panels): every low-precision factor format converges, fp32 factors with
// classic refinement and GMRES-IR, fp16 and bf16 ones with GMRES-IR.
TEST(GesvIr, Order2000EveryFactorFormat) {
  const std::size_t n = 2000;
  const auto a = random_values(n * n, 21);
  const auto b = random_values(n, 22);
  const double fp64 = fp64_lu_backward_error(a, b);
  for (const factor_format f : {factor_format::fp32, factor_format::fp16, factor_format::bf16}) {
    for (const refinement m : {refinement::classic, refinement::gmres}) {
      if (f != factor_format::fp32 && m == refinement::classic) continue;
      SCOPED_TRACE(::testing::Message()
                   << name(f) << (m == refinement::gmres ? " gmres" : " classic"));
      ir_options o;
      o.factors = f;
      o.method = m;
      const auto A = make_matrix<Mat>(a, n, n);
      const auto B = make_vector<Vec>(b);
      Vec x("x", n);
      const auto status = gesv_ir(Host(), A, B, x, o);
      EXPECT_EQ(status.outcome, ir_outcome::converged) << to_string(status.reason);
      EXPECT_LE(backward_error(a, b, stored(x)), 2 * std::max(fp64, 0x1p-53))
          << "fp64 LU: " << fp64;
    }
  }
}

TEST(GesvIr, DiagonallyDominant) {
  const std::size_t n = 200;
  auto a = random_values(n * n, 17);
  for (std::size_t i = 0; i < n; ++i) a[i * n + i] = n;
  const auto b = random_values(n, 18);
  for (auto f : {factor_format::fp16, factor_format::bf16}) {
    ir_options o;
    o.factors = f;
    const auto r = solve(a, b, o);
    EXPECT_EQ(r.status.outcome, ir_outcome::converged) << name(f);
    EXPECT_LE(r.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53)) << name(f);
  }
}

// Rows and columns scaled by powers of two up to 2^+-20: fp16 factors overflow and
// underflow unless scaled, and the scaled ones converge.
TEST(GesvIr, BadlyScaled) {
  const std::size_t n = 60;
  auto a = conditioned(n, 1e3, 5);
  const auto e = random_values(2 * n, 6);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      a[i * n + j] = std::ldexp(a[i * n + j], int(20 * e[i]) + int(20 * e[n + j]));
  const auto b = random_values(n, 7);
  ir_options o;
  o.factors = factor_format::fp16;
  o.method = refinement::gmres;
  auto r = solve(a, b, o);
  EXPECT_EQ(r.status.outcome, ir_outcome::converged) << to_string(r.status.reason);
  EXPECT_LE(r.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53));
  o.scale = scaling::never;
  r = solve(a, b, o);
  EXPECT_EQ(r.status.outcome, ir_outcome::fell_back);
  EXPECT_EQ(r.status.reason, ir_reason::narrowing_overflow);
  EXPECT_LE(r.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53));
}

// Narrowing overflows when an entry does not fit the factor format, not when a row sum
// (||A||_inf, which lets gesv_ir skip the check of the entries) does not.
TEST(GesvIr, NarrowingCheckedPerEntry) {
  ir_options o;
  o.factors = factor_format::fp16;
  o.scale = scaling::never;
  o.method = refinement::gmres;
  const std::vector<double> b = {1.0, 2.0};
  auto r = solve({40000.0, 40000.0, 1.0, -1.0}, b, o);  // rows sum to 80000 > 65504
  EXPECT_EQ(r.status.outcome, ir_outcome::converged) << to_string(r.status.reason);
  EXPECT_LE(r.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53));
  r = solve({70000.0, 1.0, 1.0, 1.0}, b, o);
  EXPECT_EQ(r.status.outcome, ir_outcome::fell_back);
  EXPECT_EQ(r.status.reason, ir_reason::narrowing_overflow);
}

// ||A||_inf: the largest row sum wherever that row lies in the host's blocks of rows
// (the last row of a partial block, the first of a full one), in both layouts, and +inf
// for a NaN.
TEST(GesvIr, MatrixNormInf) {
  const std::size_t m = 37, n = 5;
  for (std::size_t heavy : {std::size_t(0), std::size_t(16), std::size_t(36)}) {
    kacc::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace, kacc::StoredAs<float>> L("L", m, n);
    kacc::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> R("R", m, n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const double v = (i == heavy ? 3.0 : 1.0) * (j % 2 ? -1.0 : 1.0) * (j + 1);
        L(i, j) = v;
        R(i, j) = v;
      }
    EXPECT_EQ(kacc::solve::Impl::matrix_norm_inf(Host(), L), 45.0) << heavy;
    EXPECT_EQ(kacc::solve::Impl::matrix_norm_inf(Host(), R), 45.0) << heavy;
    R(heavy, 1) = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(kacc::solve::Impl::matrix_norm_inf(Host(), R), HUGE_VAL) << heavy;
  }
}

/// kacc_lu that records which memory each factor call read.
struct recording_lu : kacc_lu<Host> {
  std::vector<const double*> factored;
  kacc::index_type factor(const Host& exec, const matrix_type& S, factor_format f) {
    factored.push_back(S.data());
    return kacc_lu<Host>::factor(exec, S, f);
  }
};

/// Solves with scaled fp16 factors and expects convergence after `factorisations` of them.
void expect_fp16_converges_after(const std::vector<double>& a, const std::vector<double>& b,
                                 refinement m, std::size_t factorisations) {
  ir_options o;
  o.factors = factor_format::fp16;
  o.method = m;
  recording_lu engine;
  const auto r = solve(a, b, o, engine);
  EXPECT_EQ(r.status.outcome, ir_outcome::converged) << to_string(r.status.reason);
  EXPECT_LE(r.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53));
  EXPECT_EQ(engine.factored.size(), factorisations);
}

// Wilkinson's matrix (1 on the diagonal and in the last column, -1 below the diagonal):
// partial pivoting's element growth is 2^(n-1), so fp16 factors of the scaled matrix
// (largest entry 4096) overflow; gesv_ir factors it again with the multiplier divided by
// 256 instead of falling back to fp64 factors.
TEST(GesvIr, Fp16GrowthFactoredAgain) {
  const std::size_t n = 12;
  std::vector<double> a(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < i; ++j) a[i * n + j] = -1;
    a[i * n + i] = 1;
    a[i * n + n - 1] = 1;
  }
  expect_fp16_converges_after(a, random_values(n, 8), refinement::classic, 2);
}

// A random matrix of order 600: partial pivoting's growth (about n^(2/3) = 71 on average)
// exceeds a 10x headroom, and the fp16 scaling leaves n^(2/3), so one factorisation does.
TEST(GesvIr, Fp16HeadroomForRandomGrowth) {
  const std::size_t n = 600;
  expect_fp16_converges_after(random_values(n * n, 12), random_values(n, 13), refinement::gmres, 1);
}

/// A plain fp64 Kokkos::View A that is not scaled is handed to the engine itself (no n^2
/// copy) and left unchanged, fallback included; a scaled one is copied first.
TEST(GesvIr, PlainMatrixFactoredWithoutCopy) {
  using Plain = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  const std::size_t n = 60;
  const auto b = random_values(n, 5);
  for (const bool scale : {false, true}) {
    for (const double kappa : {1e3, 1e14}) {
      SCOPED_TRACE(::testing::Message()
                   << "scaling " << (scale ? "always" : "never") << " kappa=" << kappa);
      const auto a = conditioned(n, kappa, 7);
      ir_options o;
      o.scale = scale ? scaling::always : scaling::never;
      const auto A = make_matrix<Plain>(a, n, n);
      const auto B = make_vector<Vec>(b);
      Vec x("x", n);
      recording_lu engine;
      const auto status = gesv_ir(Host(), A, B, x, o, engine);
      EXPECT_EQ(status.outcome, kappa < 1e10 ? ir_outcome::converged : ir_outcome::fell_back);
      EXPECT_LE(backward_error(a, b, stored(x)),
                2 * std::max(fp64_lu_backward_error(a, b), 0x1p-53));
      EXPECT_EQ(stored(A), a) << "A changed";
      ASSERT_EQ(engine.factored.size(), kappa < 1e10 ? 1u : 2u);
      EXPECT_EQ(engine.factored.front() == A.data(), !scale);
      // The fallback factors A itself, or the copy made again from A.
      EXPECT_EQ(engine.factored.back(), engine.factored.front());
    }
  }
}

// One engine for many solves: each factorisation of a size and format it has seen reuses
// the storage of the last one, and every solve is as accurate as with a fresh engine.
TEST(GesvIr, EngineReusedAcrossSolves) {
  const std::size_t n = 90;
  kacc_lu<Host> engine;
  int solves = 0;
  for (const factor_format f : {factor_format::fp32, factor_format::fp16, factor_format::fp32}) {
    for (const double kappa : {1e2, 1e3}) {
      SCOPED_TRACE(::testing::Message() << name(f) << " kappa=" << kappa);
      const auto a = conditioned(n, kappa, 30 + solves);
      const auto b = random_values(n, 40 + solves++);
      ir_options o;
      o.factors = f;  // classic refinement: factors of another matrix would not converge
      const auto r = solve(a, b, o, engine);
      EXPECT_EQ(r.status.outcome, ir_outcome::converged) << to_string(r.status.reason);
      EXPECT_LE(r.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53));
    }
  }
}

// Beyond what the factors can refine: an honest fallback (or, without it, an honest
// not_converged), never "converged".
TEST(GesvIr, TooIllConditionedFallsBack) {
  const std::size_t n = 80;
  const auto a = conditioned(n, 1e14, 3);
  const auto b = random_values(n, 4);
  ir_options o;
  auto r = solve(a, b, o);
  EXPECT_EQ(r.status.outcome, ir_outcome::fell_back);
  EXPECT_TRUE(r.status.reason == ir_reason::stagnation ||
              r.status.reason == ir_reason::iteration_cap ||
              r.status.reason == ir_reason::not_a_number)
      << to_string(r.status.reason);
  EXPECT_LE(r.backward_error, 2 * std::max(r.fp64_backward_error, 0x1p-53));
  o.fallback = false;
  o.stagnation_steps = 100;
  o.max_outer = 5;
  r = solve(a, b, o);
  EXPECT_EQ(r.status.outcome, ir_outcome::not_converged);
  EXPECT_EQ(r.status.reason, ir_reason::iteration_cap);
  EXPECT_EQ(r.status.outer_iterations, 5);
  EXPECT_FALSE(r.status.ok());
}

/// An engine whose factors do nothing (M = I): GMRES-IR's corrections are plain GMRES.
struct identity_engine {
  kacc::index_type factor(const Host&, const kacc_lu<Host>::matrix_type&, factor_format) {
    return 0;
  }
  void solve(const Host&, const kacc_lu<Host>::vector_type&) const {}
};

// A GMRES-IR step that runs all gmres_max_inner iterations without halving the residual
// ends the refinement at once (stagnation), where classic refinement waits
// stagnation_steps steps; a step that does halve it goes on.
TEST(GesvIr, ExhaustedGmresStepWithoutProgressStops) {
  const std::size_t n = 60;
  ir_options o;
  o.method = refinement::gmres;
  o.gmres_restart = 2;
  o.gmres_max_inner = 2;
  o.fallback = false;
  {
    const auto r = solve(conditioned(n, 1e8, 5), random_values(n, 6), o, identity_engine{});
    EXPECT_EQ(r.status.outcome, ir_outcome::not_converged);
    EXPECT_EQ(r.status.reason, ir_reason::stagnation);
    EXPECT_EQ(r.status.outer_iterations, 1);
    EXPECT_EQ(r.status.inner_iterations, 2);
  }
  {
    // Gershgorin: every eigenvalue within 1/2 of 1, so each GMRES(2) step more than halves.
    auto a = random_values(n * n, 7);
    for (std::size_t i = 0; i < n * n; ++i) a[i] *= 0.5 / n;
    for (std::size_t i = 0; i < n; ++i) a[i * n + i] = 1;
    const auto r = solve(a, random_values(n, 8), o, identity_engine{});
    EXPECT_EQ(r.status.outcome, ir_outcome::converged) << to_string(r.status.reason);
    EXPECT_GT(r.status.outer_iterations, 1);
    EXPECT_EQ(r.status.inner_iterations, 2 * r.status.outer_iterations);
  }
}

TEST(GesvIr, BadInput) {
  const std::size_t n = 5;
  auto a = random_values(n * n, 1);
  auto b = random_values(n, 2);
  {
    auto A = a;
    A[7] = nan;
    const auto r = solve(A, b, {});
    EXPECT_EQ(r.status.outcome, ir_outcome::failed);
    EXPECT_EQ(r.status.reason, ir_reason::nonfinite_input);
    EXPECT_TRUE(std::isnan(r.status.backward_error));
  }
  {
    auto B = b;
    B[2] = std::numeric_limits<double>::infinity();
    const auto r = solve(a, B, {});
    EXPECT_EQ(r.status.outcome, ir_outcome::failed);
    EXPECT_EQ(r.status.reason, ir_reason::nonfinite_input);
  }
  {
    auto B = b;
    B[3] = nan;  // ||b||_inf is NaN (blas's maximum propagates it), not a finite maximum
    const auto r = solve(a, B, {});
    EXPECT_EQ(r.status.outcome, ir_outcome::failed);
    EXPECT_EQ(r.status.reason, ir_reason::nonfinite_input);
  }
  {
    auto A = a;
    for (std::size_t j = 0; j < n; ++j) A[3 * n + j] = 0;  // a zero row: singular
    const auto r = solve(A, b, {});
    EXPECT_EQ(r.status.outcome, ir_outcome::failed);
    EXPECT_EQ(r.status.reason, ir_reason::singular);
    EXPECT_FALSE(r.status.ok());
  }
  {
    auto A = a;
    for (auto& e : A) e *= 1e6;  // beyond fp16's 65504
    ir_options o;
    o.factors = factor_format::fp16;
    o.scale = scaling::never;
    auto r = solve(A, b, o);
    EXPECT_EQ(r.status.outcome, ir_outcome::fell_back);
    EXPECT_EQ(r.status.reason, ir_reason::narrowing_overflow);
    o.scale = scaling::automatic;
    r = solve(A, b, o);
    EXPECT_EQ(r.status.outcome, ir_outcome::converged);
  }
  {
    const auto r = solve({}, {}, {});
    EXPECT_EQ(r.status.outcome, ir_outcome::converged);
  }
  Mat A("A", 4, 3), S("S", 3, 3);
  Vec b3("b", 3), b4("b", 4), x3("x", 3);
  auto expect_invalid = [](auto f, const std::string& what) {
    kacc_testing::expect_invalid_argument(f, "kacc::solve::gesv_ir", what);
  };
  expect_invalid([&] { gesv_ir(Host(), A, b3, x3); }, "square");
  expect_invalid([&] { gesv_ir(Host(), S, b4, x3); }, "b has extents (4)");
  expect_invalid([&] { gesv_ir(Host(), S, b3, b4); }, "x has extents (4)");
  expect_invalid([&] { gesv_ir(Host(), S, b3, b3); }, "x aliases b");
  ir_options o;
  o.gmres_restart = 0;
  expect_invalid([&] { gesv_ir(Host(), S, b3, x3, o); }, "gmres_restart");
  Mat B2("B", 3, 2), B4("B", 4, 2), X2("X", 3, 2), X3("X", 3, 3);
  expect_invalid([&] { gesv_ir(Host(), A, B2, X2); }, "square");
  expect_invalid([&] { gesv_ir(Host(), S, B4, X2); }, "B has extents (4,2)");
  expect_invalid([&] { gesv_ir(Host(), S, B2, X3); }, "X has extents (3,3)");
  expect_invalid([&] { gesv_ir(Host(), S, B2, B2); }, "X aliases B");
  expect_invalid(
      [&] { gesv_ir(Host(), S, B2, kacc::subview(S, Kokkos::ALL(), Kokkos::make_pair(0, 2))); },
      "X aliases A");
  expect_invalid([&] { gesv_ir(Host(), S, B2, X2, o); }, "gmres_restart");
}

/// The row-major n x k matrix whose columns are `columns`.
std::vector<double> with_columns(const std::vector<std::vector<double>>& columns) {
  const std::size_t n = columns.front().size(), k = columns.size();
  std::vector<double> b(n * k);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < k; ++j) b[i * k + j] = columns[j][i];
  return b;
}

/// Column j of a row-major n x k matrix.
std::vector<double> column(const std::vector<double>& b, std::size_t k, std::size_t j) {
  std::vector<double> c(b.size() / k);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = b[i * k + j];
  return c;
}

/// Whether two statuses report the same solve, bit for bit.
void expect_same_status(const ir_status& s, const ir_status& t) {
  EXPECT_EQ(s.outcome, t.outcome);
  EXPECT_EQ(s.reason, t.reason);
  EXPECT_EQ(s.outer_iterations, t.outer_iterations);
  EXPECT_EQ(s.inner_iterations, t.inner_iterations);
  EXPECT_EQ(s.residual_history, t.residual_history);
  EXPECT_TRUE(s.backward_error == t.backward_error ||
              (std::isnan(s.backward_error) && std::isnan(t.backward_error)))
      << s.backward_error << " " << t.backward_error;
}

// Several right-hand sides (rank-2 B and X, as dsgesv's NRHS), fewer than are refined
// together: one factorisation, and each column's solution and status bit for bit those
// of gesv_ir on that column alone, for B and X in either layout and X stored in fp32.
template <class BM, class XM, class XV>
void expect_columns_solved_as_alone(factor_format f, refinement m) {
  SCOPED_TRACE(::testing::Message() << name(f) << (m == refinement::gmres ? " gmres" : " classic"));
  const std::size_t n = 100, k = 3;
  static_assert(k < kacc::solve::Impl::ir_together_columns, "each column refined alone");
  const auto a = conditioned(n, 1e4, 31);
  const auto b = with_columns({random_values(n, 32), random_values(n, 33), random_values(n, 34)});
  ir_options o;
  o.factors = f;
  o.method = m;
  const auto A = make_matrix<Mat>(a, n, n);
  const auto B = make_matrix<BM>(b, n, k);
  XM X("X", n, k);
  recording_lu engine;
  const std::vector<ir_status> statuses = gesv_ir(Host(), A, B, X, o, engine);
  ASSERT_EQ(statuses.size(), k);
  EXPECT_EQ(engine.factored.size(), 1u);
  const auto x = stored(X);
  for (std::size_t j = 0; j < k; ++j) {
    SCOPED_TRACE(::testing::Message() << "column " << j);
    XV xj("x", n);
    const ir_status alone = gesv_ir(Host(), A, make_vector<Vec>(column(b, k, j)), xj, o);
    EXPECT_EQ(statuses[j].outcome, ir_outcome::converged) << to_string(statuses[j].reason);
    expect_same_status(statuses[j], alone);
    EXPECT_EQ(column(x, k, j), stored(xj));
  }
  EXPECT_EQ(stored(B), b) << "B changed";
}

TEST(GesvIr, ColumnsSolvedAsEachAlone) {
  using Right = kacc::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using Fp32Columns =
      kacc::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace, kacc::StoredAs<float>>;
  using Fp32Vec = kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<float>>;
  for (const refinement m : {refinement::classic, refinement::gmres}) {
    expect_columns_solved_as_alone<Mat, Mat, Vec>(factor_format::fp32, m);
    expect_columns_solved_as_alone<Right, Fp32Columns, Fp32Vec>(factor_format::fp32, m);
  }
  expect_columns_solved_as_alone<Mat, Right, Vec>(factor_format::fp16, refinement::gmres);
}

/// kacc_lu counting its solves of one column and of several.
struct counting_lu : kacc_lu<Host> {
  int vector_solves = 0, matrix_solves = 0;
  void solve(const Host& exec, const vector_type& v) {
    ++vector_solves;
    kacc_lu<Host>::solve(exec, v);
  }
  void solve(const Host& exec, const matrix_type& v) {
    ++matrix_solves;
    kacc_lu<Host>::solve(exec, v);
  }
};

/// kacc_lu without the multi-column solve, counting its solves.
struct column_by_column_lu {
  kacc_lu<Host> lu;
  int vector_solves = 0;
  kacc::index_type factor(const Host& exec, const kacc_lu<Host>::matrix_type& S, factor_format f) {
    return lu.factor(exec, S, f);
  }
  void solve(const Host& exec, const kacc_lu<Host>::vector_type& v) {
    ++vector_solves;
    lu.solve(exec, v);
  }
};

// Classic refinement of Impl::ir_together_columns or more columns takes them together:
// the first iterates from one multi-column solve with the factors, then per step one GEMM
// residual and one multi-column solve, until the last column stops (one solve per column
// with an engine that has no multi-column solve). Each column ends as it does alone
// (same outcome, within one step) and within twice the fp64 LU's backward error, a zero
// column after no step at all; n spans several of getrs' diagonal blocks, B and X in
// either layout, X in fp32, scaled fp16 factors, a double_double residual.
template <class BM, class XM>
void expect_columns_refined_together(std::size_t n, factor_format f, residual_precision r) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " " << name(f)
                                    << (r == residual_precision::fp64 ? "" : " dd residual"));
  const std::size_t k = 6;
  static_assert(k >= kacc::solve::Impl::ir_together_columns, "the columns refined together");
  const auto a = conditioned(n, 1e4, 51);
  const std::vector<double> zeros(n, 0.0);
  const auto b = with_columns({random_values(n, 52), random_values(n, 53), zeros,
                               random_values(n, 54), random_values(n, 55), random_values(n, 56)});
  ir_options o;
  o.factors = f;
  o.residual = r;
  const auto A = make_matrix<Mat>(a, n, n);
  const auto B = make_matrix<BM>(b, n, k);
  const bool fp64_x = kacc::Impl::format_of<XM>() == kacc::Impl::format_of<Mat>();
  // Checks each column of X against the column solved alone; returns the most steps.
  auto expect_solved = [&](const std::vector<ir_status>& statuses, const XM& X) {
    EXPECT_EQ(statuses.size(), k);
    const auto x = stored(X);
    int steps = 0;
    for (std::size_t j = 0; j < k; ++j) {
      SCOPED_TRACE(::testing::Message() << "column " << j);
      const ir_status& s = statuses[j];
      Vec xj("x", n);
      const ir_status alone = gesv_ir(Host(), A, make_vector<Vec>(column(b, k, j)), xj, o);
      EXPECT_EQ(s.outcome, ir_outcome::converged) << to_string(s.reason);
      EXPECT_EQ(s.outcome, alone.outcome);
      EXPECT_LE(std::abs(s.outer_iterations - alone.outer_iterations), 1);
      EXPECT_EQ(s.residual_history.size(), std::size_t(s.outer_iterations) + 1);
      steps = std::max(steps, s.outer_iterations);
      const auto bj = column(b, k, j), xs = column(x, k, j);
      if (j == 2) {
        EXPECT_EQ(s.outer_iterations, 0);
        EXPECT_EQ(xs, zeros);
        continue;
      }
      const double exact = backward_error(a, bj, xs);
      if (fp64_x) {
        EXPECT_LE(exact, 2 * std::max(fp64_lu_backward_error(a, bj), 0x1p-53));
        // The reported backward error is from an fp64 residual, whose rounding errors are of
        // the order of a residual at the unit roundoff (2.1 times the exact value in a Debug
        // build without FMA, which failed a factor 2): a factor 4 still rejects 0 or an
        // earlier step's residual.
        EXPECT_GT(s.backward_error, 0.25 * exact);
        EXPECT_LT(s.backward_error, 4 * exact);
      } else {  // X rounds the solution to fp32, as it does the solution alone
        std::vector<double> rounded = stored(xj);
        for (double& v : rounded) v = static_cast<float>(v);
        EXPECT_LE(exact, 2 * backward_error(a, bj, rounded));
      }
    }
    EXPECT_GE(steps, 2);
    return steps;
  };
  XM X("X", n, k);
  counting_lu engine;
  const int steps = expect_solved(gesv_ir(Host(), A, B, X, o, engine), X);
  EXPECT_EQ(engine.matrix_solves, steps + 1) << "the first iterates and one per step";
  EXPECT_EQ(engine.vector_solves, 1) << "the factors' overflow test";
  EXPECT_EQ(stored(B), b) << "B changed";
  column_by_column_lu columns;
  const int column_steps = expect_solved(gesv_ir(Host(), A, B, X, o, columns), X);
  EXPECT_EQ(columns.vector_solves, 1 + int(k) * (column_steps + 1));
}

TEST(GesvIr, ColumnsRefinedTogether) {
  using Right = kacc::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using Fp32Columns =
      kacc::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace, kacc::StoredAs<float>>;
  for (const std::size_t n : {100, 300}) {
    expect_columns_refined_together<Mat, Mat>(n, factor_format::fp32, residual_precision::fp64);
    expect_columns_refined_together<Right, Fp32Columns>(n, factor_format::fp32,
                                                        residual_precision::fp64);
  }
  expect_columns_refined_together<Mat, Right>(100, factor_format::fp16, residual_precision::fp64);
  expect_columns_refined_together<Mat, Mat>(100, factor_format::fp16,
                                            residual_precision::double_double);
}

// A non-finite column fails alone; columns whose refinement fails share one fp64
// factorisation; a failed narrowing fails every column (NaN without the fallback).
TEST(GesvIr, ColumnsFailAndFallBack) {
  const std::size_t n = 60, k = 3;
  const auto a = conditioned(n, 1e6, 41);
  auto b = with_columns({random_values(n, 42), random_values(n, 43), random_values(n, 44)});
  const auto A = make_matrix<Mat>(a, n, n);
  auto expect_nan_column = [&](const Mat& X, std::size_t j) {
    for (std::size_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(double(X(i, j)))) << i;
  };
  {
    auto bad = b;
    bad[5 * k + 1] = HUGE_VAL;
    Mat X("X", n, k);
    recording_lu engine;
    const auto s = gesv_ir(Host(), A, make_matrix<Mat>(bad, n, k), X, {}, engine);
    EXPECT_EQ(s[1].outcome, ir_outcome::failed);
    EXPECT_EQ(s[1].reason, ir_reason::nonfinite_input);
    expect_nan_column(X, 1);
    for (std::size_t j : {0, 2}) {
      EXPECT_EQ(s[j].outcome, ir_outcome::converged) << j;
      const auto x = column(stored(X), k, j);
      EXPECT_LE(backward_error(a, column(b, k, j), x),
                2 * std::max(fp64_lu_backward_error(a, column(b, k, j)), 0x1p-53));
    }
    EXPECT_EQ(engine.factored.size(), 1u);
  }
  {
    ir_options o;
    o.max_outer = 0;  // the first iterate is not a solution at kappa 1e6
    Mat X("X", n, k);
    recording_lu engine;
    const auto s = gesv_ir(Host(), A, make_matrix<Mat>(b, n, k), X, o, engine);
    EXPECT_EQ(engine.factored.size(), 2u) << "one fp32 and one fp64 factorisation";
    for (std::size_t j = 0; j < k; ++j) {
      EXPECT_EQ(s[j].outcome, ir_outcome::fell_back) << j;
      EXPECT_EQ(s[j].reason, ir_reason::iteration_cap) << j;
      EXPECT_EQ(s[j].residual_history.size(), 1u) << j;
      const auto x = column(stored(X), k, j);
      EXPECT_LE(backward_error(a, column(b, k, j), x),
                2 * std::max(fp64_lu_backward_error(a, column(b, k, j)), 0x1p-53));
      // The reported backward error is the fallback's, from an fp64 residual: within a
      // factor 2 of the exact one (here 0.8 to 1.3 times it).
      const double exact = backward_error(a, column(b, k, j), x);
      EXPECT_GT(s[j].backward_error, 0.5 * exact) << j;
      EXPECT_LT(s[j].backward_error, 2 * exact) << j;
    }
  }
  {
    auto huge = a;
    for (double& v : huge) v *= 1e300;
    const auto H = make_matrix<Mat>(huge, n, n);
    Mat X("X", n, k);
    recording_lu engine;
    auto s = gesv_ir(Host(), H, make_matrix<Mat>(b, n, k), X, {}, engine);
    EXPECT_EQ(engine.factored.size(), 1u) << "the fp64 factorisation only";
    for (std::size_t j = 0; j < k; ++j) {
      EXPECT_EQ(s[j].outcome, ir_outcome::fell_back) << j;
      EXPECT_EQ(s[j].reason, ir_reason::narrowing_overflow) << j;
    }
    ir_options o;
    o.fallback = false;
    s = gesv_ir(Host(), H, make_matrix<Mat>(b, n, k), X, o);
    for (std::size_t j = 0; j < k; ++j) {
      EXPECT_EQ(s[j].outcome, ir_outcome::not_converged) << j;
      EXPECT_EQ(s[j].reason, ir_reason::narrowing_overflow) << j;
      EXPECT_FALSE(s[j].ok());
      expect_nan_column(X, j);
    }
  }
  {
    Mat X("X", n, 0);
    EXPECT_TRUE(gesv_ir(Host(), A, Mat("B", n, 0), X).empty());
    Mat E("E", 0, 0), X0("X", 0, 2);
    const auto s = gesv_ir(Host(), E, Mat("B", 0, 2), X0);
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].outcome, ir_outcome::converged);
    EXPECT_EQ(s[1].outcome, ir_outcome::converged);
  }
}

}  // namespace
