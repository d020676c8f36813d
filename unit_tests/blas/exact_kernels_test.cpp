// kacc::exact<double> (and kacc::compensated<double>'s Dot2 bound) in the kernels: DOT, NRM2, GEMV
// (N and T, LayoutLeft and LayoutRight), TRSV and CSR SpMV give MPFR's correctly rounded result bit
// for bit, on ill-conditioned data (GenDot, condition 1e5 ... 1e40), on data over the whole double
// range, with IEEE special values and (GEMV) with row sums on and next to midpoints between
// doubles, with fp64 and fp32 storage, for every execution
// space of the build, both loop shapes, and lengths that split the work differently.
// ctest runs this program with --kokkos-threads=1, 2, 3, 7 and 64: since every run must
// equal MPFR, the results are bitwise identical across thread counts.
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/blas/trsv.hpp>
#include <kacc/sparse/spmv.hpp>
#include <kacc_testing/gendot.hpp>

#include "blas_reference.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace {

using namespace kacc_blas_ref;
using kacc::Impl::shape;
using Exact = kacc::exact<double>;
using Host = Kokkos::DefaultHostExecutionSpace;
constexpr double conditions[] = {1e5, 1e10, 1e20, 1e30, 1e40};

template <class S>
using HostVec = kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<S>>;
template <class S, class Layout>
using HostMat = kacc::View<double**, Layout, Kokkos::HostSpace, kacc::StoredAs<S>>;
using Plain = Kokkos::View<double*, Kokkos::HostSpace>;

::testing::AssertionResult same_double(double expected, double actual) {
  std::uint64_t e, a;
  std::memcpy(&e, &expected, sizeof e);
  std::memcpy(&a, &actual, sizeof a);
  if ((std::isnan(expected) && std::isnan(actual)) || e == a) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << std::hexfloat << "expected " << expected << ", got " << actual;
}

// How many entries of y differ from MPFR's correctly rounded M x (M row-major m x n).
int matvec_misses(const std::vector<double>& M, std::size_t m, std::size_t n,
                  const std::vector<double>& x, const Plain& y) {
  const auto ref = exact_matvec(M, m, n, x);
  int misses = 0;
  for (std::size_t i = 0; i < m; ++i)
    if (!same_double(ref[i], y(i))) ++misses;
  return misses;
}

// The host execution spaces of the build (the test data live in HostSpace), named so
// that ctest's per-thread-count runs can select the OpenMP one.
#if defined(KOKKOS_ENABLE_SERIAL) && !defined(KOKKOS_ENABLE_OPENMP) && \
    !defined(KOKKOS_ENABLE_THREADS)
using HostSpaces = ::testing::Types<Kokkos::Serial>;
#elif defined(KOKKOS_ENABLE_SERIAL)
using HostSpaces = ::testing::Types<Kokkos::Serial, Kokkos::DefaultHostExecutionSpace>;
#else
using HostSpaces = ::testing::Types<Kokkos::DefaultHostExecutionSpace>;
#endif
struct SpaceName {
  template <class Exec>
  static std::string GetName(int) {
    return Exec::name();
  }
};

template <class Exec>
class ExactKernels : public ::testing::Test {};
TYPED_TEST_SUITE(ExactKernels, HostSpaces, SpaceName);

// Whether kacc::blas::dot in exact<double> (the host shape here) and the device form
// (the team shape, with the space's own number of teams and with 1, 3 and 16 teams, whose
// words then meet by atomics) all give ref, MPFR's correctly rounded x . y, bit for bit.
template <class Exec, class X, class Y>
::testing::AssertionResult dot_equals(double ref, const X& x, const Y& y) {
  auto result = same_double(ref, kacc::blas::dot<double, Exact>(Exec(), x, y));
  if (!result) return result << " (host shape)";
  const Exact team = kacc::blas::Impl::dot<double, Exact, shape::team>("test_dot", Exec(), x, y);
  result = same_double(ref, kacc::accumulator_traits<Exact>::result(team));
  if (!result) return result << " (team shape)";
  for (int teams : {1, 3, 16}) {
    const Exact sum = kacc::blas::Impl::dot_exact_team<double>("test_dot", Exec(), x, y, teams);
    result = same_double(ref, sum.value());
    if (!result) return result << " (team shape, " << teams << " teams)";
  }
  return result;
}

// DOT of x and y stored as S.
template <class Exec, class S>
void check_dot(double cond, const std::vector<double>& xv, const std::vector<double>& yv) {
  const std::size_t n = xv.size();
  auto x = make_vector<HostVec<S>>(xv);
  auto y = make_vector<HostVec<S>>(yv);
  const auto xs = stored(x), ys = stored(y);
  const double ref = kacc_testing::exact_dot(n, xs.data(), ys.data()).rounded();
  EXPECT_TRUE(dot_equals<Exec>(ref, x, y))
      << kacc::format_name<S>() << " cond " << cond << " n " << n;
}

// DOT of x stored as SX and y stored as SY.
template <class Exec, class SX, class SY>
void check_dot_mixed(double cond, const std::vector<double>& xv, const std::vector<double>& yv) {
  auto x = make_vector<HostVec<SX>>(xv);
  auto y = make_vector<HostVec<SY>>(yv);
  const auto xs = stored(x), ys = stored(y);
  const double ref = kacc_testing::exact_dot(xs.size(), xs.data(), ys.data()).rounded();
  EXPECT_TRUE(dot_equals<Exec>(ref, x, y))
      << kacc::format_name<SX>() << " . " << kacc::format_name<SY>() << " cond " << cond << " n "
      << xs.size();
}

TYPED_TEST(ExactKernels, DotEqualsMpfr) {
  // Lengths around the lane count (16) and the host block (4096); long vectors at the
  // largest condition number only. fp32 and bf16 products are exact in fp64 (the lanes
  // leave out the error terms); fp16 holds GenDot's exponents up to condition 1e8;
  // fp32 . fp64 products are not exact.
  for (double cond : conditions)
    for (std::size_t n : {6u, 17u, 4097u, 40000u}) {
      if (n > 5000 && cond != 1e40) continue;
      std::vector<double> xv, yv;
      kacc_testing::gen_dot(n, cond, n, xv, yv);
      check_dot<TypeParam, double>(cond, xv, yv);
      check_dot<TypeParam, float>(cond, xv, yv);
      check_dot<TypeParam, kacc::bf16>(cond, xv, yv);
      check_dot_mixed<TypeParam, float, double>(cond, xv, yv);
    }
  for (double cond : {1e3, 1e8})
    for (std::size_t n : {17u, 4097u}) {
      std::vector<double> xv, yv;
      kacc_testing::gen_dot(n, cond, n + 5, xv, yv);
      check_dot<TypeParam, kacc::fp16>(cond, xv, yv);
    }
}

// Values over float's whole range (normal and subnormal, signed zeros), random signs.
std::vector<double> float_range_values(std::size_t n, std::uint64_t seed) {
  auto v = kacc_testing::wide_range_values(n, seed);
  for (auto& e : v) {
    int exponent;
    const double f = std::frexp(e, &exponent);
    // Exponents in (-150, 128): below FLT_MAX, down to float's subnormals.
    e = static_cast<float>(std::ldexp(f, exponent > 0 ? exponent % 128 : exponent % 150));
  }
  return v;
}

TYPED_TEST(ExactKernels, DotOfFloatsOverTheirWholeRangeAndSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const std::size_t n = 3 + 700 * seed;
    auto xv = float_range_values(n, seed), yv = float_range_values(n, seed + 50);
    if (seed % 4 == 1) xv[n / 2] = inf;                    // inf
    if (seed % 4 == 2) xv[n / 3] = inf, yv[n / 5] = -inf;  // inf - inf: NaN
    if (seed % 4 == 3) yv[n - 1] = nan;
    check_dot<TypeParam, float>(0, xv, yv);
  }
}

TYPED_TEST(ExactKernels, DotOverTheWholeRangeAndSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const std::size_t n = 1 + 400 * seed;
    auto xv = kacc_testing::wide_range_values(n, seed),
         yv = kacc_testing::wide_range_values(n, seed + 99);
    if (seed % 5 == 0) xv[n / 2] = inf;
    if (seed % 10 == 0) yv[n / 3] = -inf;  // inf - inf: NaN
    auto x = make_vector<Plain>(xv);
    auto y = make_vector<Plain>(yv);
    EXPECT_TRUE(
        dot_equals<TypeParam>(kacc_testing::exact_dot(n, xv.data(), yv.data()).rounded(), x, y))
        << "seed " << seed;
  }
}

TYPED_TEST(ExactKernels, Nrm2IsTheSquareRootOfTheRoundedExactSumOfSquares) {
  for (double cond : conditions) {
    std::vector<double> xv, unused;
    kacc_testing::gen_dot(2000, cond, 3, xv, unused);
    auto x = make_vector<Plain>(xv);
    const double ss = kacc_testing::exact_dot(xv.size(), xv.data(), xv.data()).rounded();
    EXPECT_TRUE(same_double(std::sqrt(ss), kacc::blas::nrm2<double, Exact>(TypeParam(), x)));
  }
}

// GEMV with op(A) an m x n matrix whose rows are ill-conditioned against x; A stored as S,
// x as SX. Special values, when asked for, go to a few entries of A.
template <class Exec, shape Shape, class S, class SX, class Layout>
void check_gemv(bool trans, std::size_t m, std::size_t n, double cond, bool special = false) {
  std::vector<double> xv, M;
  kacc_testing::gen_dot_rows(m, n, cond, m + n, xv, M);
  if (special) {
    const double inf = std::numeric_limits<double>::infinity();
    M[1 * n + n / 2] = inf;                                     // row 1: inf
    M[2 * n + 1] = inf, M[2 * n + n - 1] = -inf;                // row 2: inf - inf = NaN
    M[(m - 1) * n] = std::numeric_limits<double>::quiet_NaN();  // the last row: NaN
  }
  // A holds op(A) transposed for "T".
  const std::size_t rows = trans ? n : m, cols = trans ? m : n;
  auto A = make_matrix<HostMat<S, Layout>>(op(M, m, n, trans), rows, cols);
  auto x = make_vector<HostVec<SX>>(xv);
  Plain y("y", m);
  kacc::blas::Impl::gemv<double, Exact, Shape>("test_gemv", Exec(), trans, 1.0, A, x, 0.0, y);
  Exec().fence();
  EXPECT_EQ(matvec_misses(op(stored(A), rows, cols, trans), m, n, stored(x), y), 0)
      << (trans ? "T " : "N ") << kacc::format_name<S>() << " x " << kacc::format_name<SX>() << " "
      << kacc::Impl::layout_of<HostMat<S, Layout>>() << " " << m << "x" << n << " cond " << cond
      << (special ? " with inf/NaN" : "") << (Shape == shape::host ? " host shape" : " team shape");
}

template <class Exec, shape Shape, class S, class SX = double>
void check_gemv_all_cases(std::size_t m, std::size_t n, double cond, bool special = false) {
  for (bool trans : {false, true}) {
    check_gemv<Exec, Shape, S, SX, Kokkos::LayoutLeft>(trans, m, n, cond, special);
    check_gemv<Exec, Shape, S, SX, Kokkos::LayoutRight>(trans, m, n, cond, special);
  }
}

TYPED_TEST(ExactKernels, GemvEqualsMpfrInBothShapesAndLayouts) {
  // 1100 rows: more than one host chunk of rows (1024); 41 columns: a remainder after
  // the groups of four.
  check_gemv_all_cases<TypeParam, shape::host, double>(100, 517, 1e40);
  check_gemv_all_cases<TypeParam, shape::host, float>(1100, 41, 1e20);
  check_gemv_all_cases<TypeParam, shape::team, double>(70, 133, 1e30);
  // The column-walking host shape keeps the expansions of a panel of rows (two panels per
  // thread, a multiple of 16 rows), walking 16 columns at a time: 300 rows (panels of 160,
  // 80 or 64 rows with 1, 2 or 3 threads, the last ending in a partial group of 16) and 77
  // columns (a partial block); condition 1e5 stays in the expansions, 1e40 needs the long
  // accumulators.
  check_gemv_all_cases<TypeParam, shape::host, double>(300, 77, 1e5);
  check_gemv_all_cases<TypeParam, shape::host, double>(300, 77, 1e40);
}

// Rows whose exact sums lie on or next to midpoints between doubles (ties to even, the
// smaller gap below a power of two, tails far below the last bit), scaled by 2^-500, 1 and
// 2^500 and negated, their terms spread over the columns: the rounding of the expansions.
template <class Exec, class Layout>
void check_gemv_midpoints(bool trans) {
  constexpr double u = 0x1p-53;
  const std::vector<std::vector<double>> sums = {{1, u},
                                                 {1, u, 0x1p-150},
                                                 {1, u, -0x1p-150},
                                                 {1 + 2 * u, u},
                                                 {1, -u / 2},
                                                 {1, -u / 2, -0x1p-200},
                                                 {1, -u / 2, 0x1p-200},
                                                 {1, -1},
                                                 {0x1p60, 1, u, -0x1p60, 0x1p-300}};
  const std::size_t n = 37;
  std::vector<double> M;
  for (double scale : {0x1p-500, 1.0, 0x1p500})
    for (double sign : {1.0, -1.0})
      for (std::size_t r = 0; r < sums.size(); ++r) {
        std::vector<double> row(n, 0.0);
        for (std::size_t j = 0; j < sums[r].size(); ++j)
          row[(j * 11 + r) % n] = sign * scale * sums[r][j];
        M.insert(M.end(), row.begin(), row.end());
      }
  const std::size_t m = M.size() / n;
  const std::vector<double> xv(n, 1.0);
  const std::size_t rows = trans ? n : m, cols = trans ? m : n;
  auto A = make_matrix<HostMat<double, Layout>>(op(M, m, n, trans), rows, cols);
  auto x = make_vector<Plain>(xv);
  Plain y("y", m);
  kacc::blas::gemv<double, Exact>(Exec(), trans ? "T" : "N", 1.0, A, x, 0.0, y);
  Exec().fence();
  EXPECT_EQ(matvec_misses(M, m, n, xv, y), 0)
      << (trans ? "T " : "N ") << kacc::Impl::layout_of<HostMat<double, Layout>>();
}

TYPED_TEST(ExactKernels, GemvRowsNextToMidpointsEqualMpfr) {
  for (bool trans : {false, true}) {
    check_gemv_midpoints<TypeParam, Kokkos::LayoutLeft>(trans);
    check_gemv_midpoints<TypeParam, Kokkos::LayoutRight>(trans);
  }
}

TYPED_TEST(ExactKernels, GemvWithFloatValuedStorageEqualsMpfr) {
  // fp32, bf16 and fp16 A and x: products exact in fp64, no error terms. fp32 A with fp64 x:
  // products that are not exact.
  for (double cond : {1e5, 1e20, 1e40}) {
    check_gemv_all_cases<TypeParam, shape::host, float, float>(300, 77, cond);
    check_gemv_all_cases<TypeParam, shape::host, kacc::bf16, kacc::bf16>(45, 290, cond);
  }
  check_gemv_all_cases<TypeParam, shape::host, kacc::fp16, kacc::fp16>(300, 77, 1e8);
  check_gemv_all_cases<TypeParam, shape::host, float, double>(40, 300, 1e30);
  check_gemv_all_cases<TypeParam, shape::team, float, float>(40, 300, 1e30);
  // inf and NaN in fp32 storage: the finite check of exact products.
  check_gemv_all_cases<TypeParam, shape::host, float, float>(300, 77, 1e5, true);
  check_gemv_all_cases<TypeParam, shape::host, double>(300, 77, 1e5, true);
}

TYPED_TEST(ExactKernels, GemvPublicEntryPoint) {
  std::vector<double> xv, M;
  kacc_testing::gen_dot_rows(64, 200, 1e30, 11, xv, M);
  auto A = make_matrix<Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>>(M, 64, 200);
  auto x = make_vector<Plain>(xv);
  Plain y("y", 64);
  kacc::blas::gemv<double, Exact>(TypeParam(), "N", 1.0, A, x, 0.0, y);
  TypeParam().fence();
  EXPECT_EQ(matvec_misses(M, 64, 200, xv, y), 0);
}

// x(i) = fl(fl_exact(b(i) - sum_k T(i,k) x(k)) / T(i,i)) over the computed x, as
// ExBLAS's TRSV; one diagonal block (n <= 256), where kacc's residual is one sum.
std::vector<double> rounded_residual_trsv(const std::vector<double>& T, std::size_t n, bool lower,
                                          const std::vector<double>& b) {
  std::vector<double> x(n), a, v;
  for (std::size_t q = 0; q < n; ++q) {
    const std::size_t i = lower ? q : n - 1 - q;
    a.assign(1, b[i]);
    v.assign(1, 1.0);
    const std::size_t k0 = lower ? 0 : i + 1, k1 = lower ? i : n;
    for (std::size_t k = k0; k < k1; ++k) {
      a.push_back(-T[i * n + k]);
      v.push_back(x[k]);
    }
    x[i] = kacc_testing::exact_dot(a.size(), a.data(), v.data()).rounded() / T[i * n + i];
  }
  return x;
}

template <class Exec, class Layout>
void check_trsv(const char* uplo, const char* trans, std::size_t n) {
  std::vector<double> T = random_values(n * n, 5);
  const bool lower_storage = uplo[0] == 'L';
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < n; ++k)
      if (lower_storage ? k > i : k < i) T[i * n + k] = 0;
    T[i * n + i] = 1.5 + T[i * n + i];
  }
  const auto bv = random_values(n, 6);
  auto A = make_matrix<Kokkos::View<double**, Layout, Kokkos::HostSpace>>(T, n, n);
  auto b = make_vector<Plain>(bv);
  kacc::blas::trsv<double, Exact>(Exec(), uplo, trans, "N", A, b);
  Exec().fence();
  const bool tr = trans[0] != 'N';
  const auto ref = rounded_residual_trsv(op(T, n, n, tr), n, lower_storage != tr, bv);
  int misses = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (!same_double(ref[i], b(i))) ++misses;
  EXPECT_EQ(misses, 0) << uplo << trans << " n " << n;
}

TYPED_TEST(ExactKernels, TrsvResidualsAreCorrectlyRounded) {
  for (const char* uplo : {"L", "U"})
    for (const char* trans : {"N", "T"}) {
      check_trsv<TypeParam, Kokkos::LayoutLeft>(uplo, trans, 150);
      check_trsv<TypeParam, Kokkos::LayoutRight>(uplo, trans, 37);
    }
}

TYPED_TEST(ExactKernels, SpmvEqualsMpfrForEveryCsrKernel) {
  namespace ks = kacc::sparse;
  // Rows of varying length (some empty), each ill-conditioned against x.
  const std::size_t m = 300, n = 400;
  std::vector<double> xv, M;
  kacc_testing::gen_dot_rows(m, n, 1e30, 21, xv, M);
  ks::CooMatrix coo;
  coo.num_rows = static_cast<std::int64_t>(m);
  coo.num_cols = static_cast<std::int64_t>(n);
  std::vector<double> dense(m * n, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t len = i % 7 == 0 ? 0 : (i * 37) % n + 1;
    for (std::size_t k = 0; k < len; ++k) {
      coo.row.push_back(static_cast<std::int64_t>(i));
      coo.col.push_back(static_cast<std::int64_t>(k));
      coo.val.push_back(M[i * n + k]);
      dense[i * n + k] = M[i * n + k];
    }
  }
  using Device = typename TypeParam::device_type;
  const auto a = ks::make_csr<double, double, int, int, Device>(coo);
  auto x = make_vector<Plain>(xv);
  for (auto algo : {ks::SpmvAlgorithm::row, ks::SpmvAlgorithm::load_balanced}) {
    Plain y("y", m);
    ks::spmv<double, Exact>(TypeParam(), "N", 1.0, a, x, 0.0, y, algo);
    TypeParam().fence();
    EXPECT_EQ(matvec_misses(dense, m, n, xv, y), 0) << ks::algorithm_name(algo);
  }
  Plain y("y", m);
  kacc::sparse::Impl::csr_row<double, Exact, shape::team>("test_csr_team", TypeParam(), 1.0, a, x,
                                                          0.0, y);
  TypeParam().fence();
  EXPECT_EQ(matvec_misses(dense, m, n, xv, y), 0) << "team shape";
}

// Ogita, Rump and Oishi's Dot2 bound for kacc::compensated<double>:
// |res - x^T y| <= u |x^T y| + gamma_n^2 sum |x_i y_i|. Beyond condition 1/u a dot
// product whose products are rounded misses it.
TYPED_TEST(ExactKernels, CompensatedDotWithinDot2Bound) {
  constexpr double u = 0x1p-53;
  for (double cond : conditions)
    for (std::size_t n : {100u, 4097u, 40000u}) {
      std::vector<double> xv, yv;
      kacc_testing::gen_dot(n, cond, n + 1, xv, yv);
      auto x = make_vector<Plain>(xv);
      auto y = make_vector<Plain>(yv);
      const double r = kacc::blas::dot<double, kacc::compensated<double>>(TypeParam(), x, y);
      const auto exact = kacc_testing::exact_dot(n, xv.data(), yv.data());
      double abs = 0;
      for (std::size_t i = 0; i < n; ++i) abs += std::fabs(xv[i] * yv[i]);
      const double g = gamma(n, u);
      EXPECT_LE(exact.abs_error(r), u * std::fabs(exact.rounded()) + g * g * abs)
          << "cond " << cond << " n " << n;
    }
}

// The default execution space's DOT in exact<double> on data in its own memory: in a GPU
// build, the device form (the team shape) on the device. Vectors long enough for every
// thread of a large GPU to take several steps.
TEST(ExactKernelsDefaultSpace, DotEqualsMpfr) {
  using Exec = Kokkos::DefaultExecutionSpace;
  using Space = Exec::memory_space;
  const auto check = [](const auto& x, const auto& y, const std::string& what) {
    const auto xs = stored(x), ys = stored(y);
    const double ref = kacc_testing::exact_dot(xs.size(), xs.data(), ys.data()).rounded();
    EXPECT_TRUE(same_double(ref, kacc::blas::dot<double, Exact>(Exec(), x, y))) << what;
  };
  for (double cond : conditions)
    for (std::size_t n : {std::size_t{100003}, std::size_t{1} << 21}) {
      if (n > 200000 && cond != 1e40) continue;
      std::vector<double> xv, yv;
      kacc_testing::gen_dot(n, cond, n, xv, yv);
      using F64 = kacc::View<double*, Space, kacc::StoredAs<double>>;
      using F32 = kacc::View<double*, Space, kacc::StoredAs<float>>;
      const std::string what = "cond " + std::to_string(cond) + " n " + std::to_string(n);
      check(make_vector<F64>(xv), make_vector<F64>(yv), "fp64 " + what);
      check(make_vector<F32>(xv), make_vector<F32>(yv), "fp32 " + what);
      check(make_vector<F32>(xv), make_vector<F64>(yv), "fp32 . fp64 " + what);
    }
  const double inf = std::numeric_limits<double>::infinity();
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const std::size_t n = 30001 * seed;
    auto xv = kacc_testing::wide_range_values(n, seed),
         yv = kacc_testing::wide_range_values(n, seed + 99);
    if (seed == 3) xv[n / 2] = inf;
    if (seed == 4) xv[n / 2] = inf, yv[n / 3] = -inf;  // inf - inf: NaN
    using Vec = Kokkos::View<double*, Space>;
    check(make_vector<Vec>(xv), make_vector<Vec>(yv), "whole range, seed " + std::to_string(seed));
  }
}

}  // namespace
