// Accuracy of DOT, GEMV and TRSV against exact MPFR references: (a) Acc<fp64,S> results
// lie within the fp64 error bound of the data as stored while plain fp32 does not, and
// (b) against the original fp64 data, Acc<fp64,fp32> beats plain fp32 by at least 0.7x.
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/blas/trsv.hpp>

#include "blas_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace kacc_blas_ref;
constexpr double u64 = 0x1p-53, u32 = 0x1p-24;

template <class S>
using Vec = kacc::View<double*, kacc::StoredAs<S>>;
template <class S, class Layout>
using Mat = kacc::View<double**, Layout, kacc::StoredAs<S>>;

// Largest error / bound over the entries.
double worst(const std::vector<double>& err, const std::vector<double>& bound) {
  double w = 0;
  for (std::size_t i = 0; i < err.size(); ++i) w = std::max(w, err[i] / bound[i]);
  return w;
}

// Per-row |computed - exact(M x)| and gamma_n |M||x| for stored data.
template <class YV>
void gemv_errors(const std::vector<double>& M, std::size_t m, std::size_t n,
                 const std::vector<double>& x, const YV& y, double u, std::vector<double>& err,
                 std::vector<double>& bound) {
  const auto ys = stored(y);
  err.assign(m, 0);
  bound.assign(m, 0);
  for (std::size_t i = 0; i < m; ++i) {
    err[i] = kacc_testing::exact_dot(n, &M[i * n], x.data()).abs_error(ys[i]);
    for (std::size_t k = 0; k < n; ++k) bound[i] += std::fabs(M[i * n + k] * x[k]);
    bound[i] *= gamma(n, u);
  }
}

template <class S>
class StoredAccuracy : public ::testing::Test {};
using Formats = ::testing::Types<float, kacc::fp16, kacc::bf16, kacc::scaled<std::int16_t>>;
TYPED_TEST_SUITE(StoredAccuracy, Formats);

TYPED_TEST(StoredAccuracy, DotWithinFp64Bound) {
  const std::size_t n = 5001;
  auto x = make_vector<Vec<TypeParam>>(random_values(n, 1));
  auto y = make_vector<Vec<TypeParam>>(random_values(n, 2, distribution::normal));
  const double r = kacc::blas::dot(x, y);
  const auto xs = stored(x), ys = stored(y);
  double abs = 0;
  for (std::size_t i = 0; i < n; ++i) abs += std::fabs(xs[i] * ys[i]);
  EXPECT_LE(kacc_testing::exact_dot(n, xs.data(), ys.data()).abs_error(r), gamma(n, u64) * abs);
}

template <class S, class Layout>
void check_gemv_fp64_bound(bool trans) {
  const std::size_t m = 301, n = 263;  // A is m x n
  auto A = make_matrix<Mat<S, Layout>>(random_values(m * n, 3), m, n);
  const std::size_t rows = trans ? n : m, cols = trans ? m : n;
  auto x = make_vector<Vec<S>>(random_values(cols, 4, distribution::normal));
  kacc::View<double*> y("y", rows);
  kacc::blas::gemv(trans ? "T" : "N", 1.0, A, x, 0.0, y);
  std::vector<double> err, bound;
  gemv_errors(op(stored(A), m, n, trans), rows, cols, stored(x), y, u64, err, bound);
  EXPECT_LE(worst(err, bound), 1.0) << (trans ? "T" : "N");
}

TYPED_TEST(StoredAccuracy, GemvWithinFp64Bound) {
  check_gemv_fp64_bound<TypeParam, Kokkos::LayoutLeft>(false);
  check_gemv_fp64_bound<TypeParam, Kokkos::LayoutLeft>(true);
  check_gemv_fp64_bound<TypeParam, Kokkos::LayoutRight>(false);
  check_gemv_fp64_bound<TypeParam, Kokkos::LayoutRight>(true);
}

// Triangular test matrices from an fp64 LU of a random matrix; the unused triangle (and a
// unit diagonal) holds unrelated values the solver must not read.
struct triangles {
  std::size_t n;
  std::vector<double> L, U;
  explicit triangles(std::size_t n_, std::uint64_t seed) : n(n_) {
    lu_factors(random_values(n * n, seed), n, L, U);
  }
  // Row-major A to store, and the triangle T = op(A) with the diagonal actually used.
  void pick(bool lower, bool trans, bool unit, std::vector<double>& A,
            std::vector<double>& T) const {
    const bool op_lower = lower != trans;
    // op(A) lower: unit -> L, else U^T; upper: unit -> L^T, else U.
    const std::vector<double> t =
        op_lower ? (unit ? L : op(U, n, n, true)) : (unit ? op(L, n, n, true) : U);
    T = t;
    if (unit)
      for (std::size_t i = 0; i < n; ++i) T[i * n + i] = 1.0;
    A = op(t, n, n, trans);
    const auto noise = random_values(n * n, 99);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if ((lower ? j > i : j < i) || (unit && i == j)) A[i * n + j] = 0.5 * noise[i * n + j];
  }
};

// Exact |b - T x| and gamma_n |T||x| per row (T row-major, the diagonal it uses).
void trsv_residual(const std::vector<double>& T, std::size_t n, const std::vector<double>& b,
                   const std::vector<double>& x, double u, std::vector<double>& err,
                   std::vector<double>& bound) {
  err.assign(n, 0);
  bound.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    err[i] = kacc_testing::exact_dot(n, &T[i * n], x.data()).abs_error(b[i]);
    for (std::size_t k = 0; k < n; ++k) bound[i] += std::fabs(T[i * n + k] * x[k]);
    bound[i] *= gamma(n + 1, u);
  }
}

template <class S, class Layout>
void check_trsv_fp64_bound(const triangles& tri) {
  const std::size_t n = tri.n;
  for (const char* uplo : {"L", "U"})
    for (const char* trans : {"N", "T"})
      for (const char* diag : {"N", "U"}) {
        std::vector<double> A, T;
        tri.pick(uplo[0] == 'L', trans[0] == 'T', diag[0] == 'U', A, T);
        auto Av = make_matrix<Mat<S, Layout>>(A, n, n);
        const auto bvals = random_values(n, 5);
        auto b = make_vector<kacc::View<double*>>(bvals);
        kacc::blas::trsv(uplo, trans, diag, Av, b);
        // T as stored: the stored A's op() with the diagonal the solver uses.
        std::vector<double> Ts = op(stored(Av), n, n, trans[0] == 'T');
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j)
            if (T[i * n + j] == 0 && i != j) Ts[i * n + j] = 0;
        if (diag[0] == 'U')
          for (std::size_t i = 0; i < n; ++i) Ts[i * n + i] = 1;
        std::vector<double> err, bound;
        trsv_residual(Ts, n, bvals, stored(b), u64, err, bound);
        EXPECT_LE(worst(err, bound), 1.0) << uplo << trans << diag;
      }
}

TYPED_TEST(StoredAccuracy, TrsvBackwardErrorWithinFp64Bound) {
  const triangles tri(300, 7);  // more than one 256-row block
  check_trsv_fp64_bound<TypeParam, Kokkos::LayoutLeft>(tri);
  check_trsv_fp64_bound<TypeParam, Kokkos::LayoutRight>(tri);
}

// Plain fp32 views compute and accumulate in fp32: errors beyond the fp64 bound, within
// the fp32 one. This is what the bounds above would catch if accumulation were fp32.
TEST(PlainFp32, ShowsFp32SizedErrors) {
  const std::size_t n = 5001;
  auto x = make_vector<Kokkos::View<float*>>(random_values(n, 1));
  auto y = make_vector<Kokkos::View<float*>>(random_values(n, 2, distribution::normal));
  const float r = kacc::blas::dot(x, y);
  const auto xs = stored(x), ys = stored(y);
  double abs = 0;
  for (std::size_t i = 0; i < n; ++i) abs += std::fabs(xs[i] * ys[i]);
  const double e = kacc_testing::exact_dot(n, xs.data(), ys.data()).abs_error(r);
  EXPECT_GT(e, gamma(n, u64) * abs);
  EXPECT_LE(e, gamma(n, u32) * abs);

  const std::size_t m = 301, k = 263;
  auto A = make_matrix<Kokkos::View<float**, Kokkos::LayoutLeft>>(random_values(m * k, 3), m, k);
  auto xv = make_vector<Kokkos::View<float*>>(random_values(k, 4));
  Kokkos::View<float*> yv("y", m);
  kacc::blas::gemv("N", 1.0f, A, xv, 0.0f, yv);
  std::vector<double> err, bound;
  gemv_errors(stored(A), m, k, stored(xv), yv, u64, err, bound);
  EXPECT_GT(worst(err, bound), 1.0);
  gemv_errors(stored(A), m, k, stored(xv), yv, u32, err, bound);
  EXPECT_LE(worst(err, bound), 1.0);

  const triangles tri(300, 7);
  std::vector<double> Af, T;
  tri.pick(true, false, false, Af, T);
  auto Lf = make_matrix<Kokkos::View<float**, Kokkos::LayoutLeft>>(Af, 300, 300);
  const auto bvals = stored(make_vector<Kokkos::View<float*>>(random_values(300, 5)));
  auto b = make_vector<Kokkos::View<float*>>(bvals);
  kacc::blas::trsv("L", "N", "N", Lf, b);
  const auto Ts = stored(Lf);
  std::vector<double> Tl(Ts.size(), 0);
  for (std::size_t i = 0; i < 300; ++i)
    for (std::size_t j = 0; j <= i; ++j) Tl[i * 300 + j] = Ts[i * 300 + j];
  trsv_residual(Tl, 300, bvals, stored(b), u64, err, bound);
  EXPECT_GT(worst(err, bound), 1.0);
  trsv_residual(Tl, 300, bvals, stored(b), u32, err, bound);
  EXPECT_LE(worst(err, bound), 1.0);
}

// (b): against the original fp64 data, n >= 4096.
TEST(AccumulationGain, DotMedianErrorBelowFp32) {
  const std::size_t n = 1 << 14;
  std::vector<double> acc, plain;
  for (std::uint64_t seed = 0; seed < 11; ++seed) {
    const auto xv = random_values(n, 2 * seed + 11), yv = random_values(n, 2 * seed + 12);
    const double ref = kacc_testing::exact_dot(n, xv.data(), yv.data()).rounded();
    const double a = kacc::blas::dot(make_vector<Vec<float>>(xv), make_vector<Vec<float>>(yv));
    const float p = kacc::blas::dot(make_vector<Kokkos::View<float*>>(xv),
                                    make_vector<Kokkos::View<float*>>(yv));
    acc.push_back(std::fabs(a - ref) / std::fabs(ref));
    plain.push_back(std::fabs(p - ref) / std::fabs(ref));
  }
  std::nth_element(acc.begin(), acc.begin() + 5, acc.end());
  std::nth_element(plain.begin(), plain.begin() + 5, plain.end());
  EXPECT_LE(acc[5], 0.7 * plain[5]) << acc[5] << " vs " << plain[5];
}

TEST(AccumulationGain, GemvMedianErrorBelowFp32) {
  const std::size_t m = 96, n = 4096;
  std::vector<double> acc, plain;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const auto Ad = random_values(m * n, 100 + seed), xd = random_values(n, 200 + seed);
    const auto ref = exact_matvec(Ad, m, n, xd);
    for (const bool trans : {false, true}) {
      const std::size_t r = trans ? n : m, c = trans ? m : n;
      const auto At = op(Ad, m, n, true);  // stored so that op(stored) = Ad
      kacc::View<double*> ya("ya", m);
      Kokkos::View<float*> yp("yp", m);
      const auto& src = trans ? At : Ad;
      kacc::blas::gemv(trans ? "T" : "N", 1.0,
                       make_matrix<Mat<float, Kokkos::LayoutLeft>>(src, r, c),
                       make_vector<Vec<float>>(xd), 0.0, ya);
      kacc::blas::gemv(trans ? "T" : "N", 1.0f,
                       make_matrix<Kokkos::View<float**, Kokkos::LayoutLeft>>(src, r, c),
                       make_vector<Kokkos::View<float*>>(xd), 0.0f, yp);
      acc.push_back(rel_error_1norm(stored(ya), ref));
      plain.push_back(rel_error_1norm(stored(yp), ref));
    }
  }
  std::sort(acc.begin(), acc.end());
  std::sort(plain.begin(), plain.end());
  EXPECT_LE(acc[acc.size() / 2], 0.7 * plain[plain.size() / 2])
      << acc[acc.size() / 2] << " vs " << plain[plain.size() / 2];
}

TEST(AccumulationGain, TrsvMedianErrorBelowFp32) {
  const std::size_t n = 4096;
  std::vector<double> L, U;
  lu_factors(random_values(n * n, 31), n, L, U);
  for (const bool lower : {true, false}) {
    const auto& T = lower ? L : U;
    std::vector<double> acc, plain;
    for (std::uint64_t seed = 0; seed < 2; ++seed) {  // 2 right-hand sides: max vs min
      const auto b = random_values(n, 300 + seed);
      const auto ref = exact_trsv(T, n, lower, b);
      auto ba = make_vector<kacc::View<double*>>(b);
      auto bp = make_vector<Kokkos::View<float*>>(b);
      const char* d = lower ? "U" : "N";
      kacc::blas::trsv(lower ? "L" : "U", "N", d,
                       make_matrix<Mat<float, Kokkos::LayoutLeft>>(T, n, n), ba);
      kacc::blas::trsv(lower ? "L" : "U", "N", d,
                       make_matrix<Kokkos::View<float**, Kokkos::LayoutLeft>>(T, n, n), bp);
      acc.push_back(rel_error_1norm(stored(ba), ref));
      plain.push_back(rel_error_1norm(stored(bp), ref));
    }
    // Stronger than comparing medians: the worst Acc error against the best fp32 one.
    const double a = std::max(acc[0], acc[1]), p = std::min(plain[0], plain[1]);
    EXPECT_LE(a, 0.7 * p) << (lower ? "L: " : "U: ") << a << " vs " << p;
  }
}

}  // namespace
