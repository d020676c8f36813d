// Accessor SpMV: accuracy against MPFR on real matrices, BLAS alpha/beta semantics,
// transpose, CSR/ELL and row/load-balanced agreement, argument checks, conversions, and
// the block loads of 16-bit and scaled values (row, merge-path and ELL kernels) bit for bit
// against the scalar sum.
#include <gtest/gtest.h>
#include <kacc/sparse/ell_matrix.hpp>
#include <kacc/sparse/spmv.hpp>
#include <kacc_testing/exact.hpp>
#include <kacc_testing/gendot.hpp>
#include <kacc_testing/rescaled.hpp>
#ifdef KACC_TEST_KOKKOSKERNELS
#include <kacc/sparse/kokkoskernels.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "test_matrices.hpp"

namespace ks = kacc::sparse;

namespace {

using HostVec = Kokkos::View<double*, Kokkos::HostSpace>;
using Vec = Kokkos::View<double*>;

ks::CooMatrix load(const char* name) {
  return ks::read_matrix_market(kacc_sparse_test::matrix_path(name));
}

std::vector<double> random_vector(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& e : v) e = dist(gen);
  return v;
}

template <class V>
V device_copy(const std::vector<double>& h, const char* label) {
  V v(std::string(label), h.size());
  HostVec hv(const_cast<double*>(h.data()), h.size());
  kacc::deep_copy(v, hv);
  return v;
}

template <class V>
std::vector<double> host_copy(const V& v) {
  HostVec h("h", v.extent(0));
  kacc::deep_copy(h, v);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

/// Exact y = A x per row (MPFR) and sum |a||x| per row, for the COO values given.
struct Exact {
  std::vector<double> y, abs_ax;
  std::vector<std::size_t> len;
};
Exact exact_product(const ks::CooMatrix& a, const std::vector<double>& x) {
  Exact e;
  const std::size_t rows = static_cast<std::size_t>(a.num_rows);
  e.y.assign(rows, 0);
  e.abs_ax.assign(rows, 0);
  e.len.assign(rows, 0);
  std::size_t k = 0;
  std::vector<double> av, xv;
  for (std::size_t i = 0; i < rows; ++i) {
    av.clear();
    xv.clear();
    for (; k < a.nnz() && a.row[k] == static_cast<std::int64_t>(i); ++k) {
      av.push_back(a.val[k]);
      xv.push_back(x[a.col[k]]);
      e.abs_ax[i] += std::fabs(a.val[k] * x[a.col[k]]);
    }
    e.len[i] = av.size();
    e.y[i] = kacc_testing::exact_dot(av.size(), av.data(), xv.data()).rounded();
  }
  return e;
}

double rel_error_1norm(const std::vector<double>& y, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    num += std::fabs(y[i] - ref[i]);
    den += std::fabs(ref[i]);
  }
  return den > 0 ? num / den : num;
}

/// Every y(i) within gamma_len(i) * sum|a||x| (+ the rounding of the exact value) of exact.
template <class Format>
void check_within_fp64_bound(const char* name, ks::SpmvAlgorithm algo) {
  SCOPED_TRACE(std::string(name) + " " + kacc::format_name<Format>() + " " +
               ks::algorithm_name(algo));
  const auto coo = load(name);
  const auto a = ks::make_csr<double, Format>(coo);
  const auto stored = ks::to_coo(a);  // the values as stored, widened exactly
  if constexpr (!kacc::format_traits<Format>::is_scaled) {
    // Each stored value is the original rounded once to Format (scaled formats depend on
    // the scale chosen, which scaled_test checks).
    ASSERT_EQ(stored.row, coo.row);
    ASSERT_EQ(stored.col, coo.col);
    for (std::size_t k = 0; k < coo.nnz(); ++k)
      ASSERT_EQ(stored.val[k], kacc::convert<double>(kacc::convert<Format>(coo.val[k]))) << k;
  }
  if (std::any_of(stored.val.begin(), stored.val.end(),
                  [](double v) { return !std::isfinite(v); })) {
    // Values beyond the format's range (bcsstk13 in fp16): nothing to bound.
    EXPECT_TRUE((std::is_same<Format, kacc::fp16>::value));
    return;
  }
  const auto x = random_vector(static_cast<std::size_t>(coo.num_cols), 7);
  const auto ex = exact_product(stored, x);
  auto xd = device_copy<Vec>(x, "x");
  Vec yd("y", static_cast<std::size_t>(coo.num_rows));
  ks::spmv("N", 1.0, a, xd, 0.0, yd, algo);
  const auto y = host_copy(yd);
  const double u = std::ldexp(1.0, -53);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double k = static_cast<double>(ex.len[i]);
    const double gamma = k * u / (1 - k * u);
    const double bound = gamma * ex.abs_ax[i] + u * std::fabs(ex.y[i]);
    if (!(std::fabs(y[i] - ex.y[i]) <= bound)) {
      if (bad < 3)
        ADD_FAILURE() << "row " << i << ": y " << y[i] << " exact " << ex.y[i] << " bound "
                      << bound;
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace

TEST(SparseSpmv, AccFp64WithinFp64BoundOfStoredData) {
  for (const char* name :
       {"bcsstk13.mtx.gz", "rajat01.mtx.gz", "orani678.mtx.gz", "lp_e226.mtx.gz"}) {
    for (auto algo : {ks::SpmvAlgorithm::row, ks::SpmvAlgorithm::load_balanced}) {
      check_within_fp64_bound<double>(name, algo);
      check_within_fp64_bound<float>(name, algo);
      check_within_fp64_bound<kacc::fp16>(name, algo);
      check_within_fp64_bound<kacc::bf16>(name, algo);
      check_within_fp64_bound<kacc::scaled<std::int16_t>>(name, algo);
    }
  }
}

TEST(SparseSpmv, AccFp64Fp32NeverLessAccurateThanFp32) {
  for (const char* name :
       {"s3rmt3m3.mtx.gz", "cond-mat-2005.mtx.gz", "orani678.mtx.gz", "Si2.mtx.gz"}) {
    SCOPED_TRACE(name);
    const auto coo = load(name);
    const auto acc = ks::make_csr<double, float>(coo);
    const auto f32 = ks::make_csr<float>(coo);
    std::vector<double> err_acc, err_f32;
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const auto x = random_vector(static_cast<std::size_t>(coo.num_cols), seed);
      const auto ref = exact_product(coo, x).y;  // exact for the fp64 matrix
      const std::size_t rows = static_cast<std::size_t>(coo.num_rows);
      auto xd = device_copy<Vec>(x, "x");
      Vec yd("y", rows);
      ks::spmv("N", 1.0, acc, xd, 0.0, yd);
      err_acc.push_back(rel_error_1norm(host_copy(yd), ref));
      auto xf = device_copy<Kokkos::View<float*>>(x, "xf");
      Kokkos::View<float*> yf("yf", rows);
      ks::spmv("N", 1.0f, f32, xf, 0.0f, yf);
      err_f32.push_back(rel_error_1norm(host_copy(yf), ref));
    }
    std::nth_element(err_acc.begin(), err_acc.begin() + 2, err_acc.end());
    std::nth_element(err_f32.begin(), err_f32.begin() + 2, err_f32.end());
    EXPECT_LE(err_acc[2], err_f32[2]);
    EXPECT_GT(err_f32[2], 0.0);  // the comparison is not vacuous
  }
}

namespace {
// A small irregular matrix: row 0 long, rows with 0..3 entries, a rectangular shape.
ks::CooMatrix small_matrix() {
  ks::CooMatrix a;
  a.num_rows = 7;
  a.num_cols = 40;
  auto add = [&](int i, int j, double v) {
    a.row.push_back(i);
    a.col.push_back(j);
    a.val.push_back(v);
  };
  for (int j = 0; j < 40; ++j) add(0, j, 0.25 * (j % 7) - 0.5);
  add(2, 3, 2.0);
  add(3, 0, -1.0);
  add(3, 39, 4.0);
  for (int j = 10; j < 37; ++j) add(5, j, 1.0 / (j + 1));
  add(6, 1, 8.0);
  return a;
}

std::vector<double> dense_product(const ks::CooMatrix& a, const std::vector<double>& x,
                                  bool trans) {
  std::vector<double> y(static_cast<std::size_t>(trans ? a.num_cols : a.num_rows), 0.0);
  for (std::size_t k = 0; k < a.nnz(); ++k) {
    if (trans) {
      y[a.col[k]] += a.val[k] * x[a.row[k]];
    } else {
      y[a.row[k]] += a.val[k] * x[a.col[k]];
    }
  }
  return y;
}
}  // namespace

TEST(SparseSpmv, AlphaBetaSemanticsAndTranspose) {
  const auto coo = small_matrix();
  const auto a = ks::make_csr<double, float>(coo);
  const auto stored = ks::to_coo(a);
  const auto ell = ks::ell_from_csr(a, 100.0);
  for (bool trans : {false, true}) {
    SCOPED_TRACE(trans ? "T" : "N");
    const std::size_t xn = trans ? 7 : 40, yn = trans ? 40 : 7;
    const auto x = random_vector(xn, 3);
    const auto y0 = random_vector(yn, 4);
    const auto ax = dense_product(stored, x, trans);
    auto xd = device_copy<Vec>(x, "x");
    for (auto algo : {ks::SpmvAlgorithm::row, ks::SpmvAlgorithm::load_balanced}) {
      // beta = 0 ignores NaN in y.
      std::vector<double> nan(yn, std::numeric_limits<double>::quiet_NaN());
      auto yd = device_copy<Vec>(nan, "y");
      ks::spmv(trans ? "T" : "N", 2.0, a, xd, 0.0, yd, algo);
      auto y = host_copy(yd);
      for (std::size_t i = 0; i < yn; ++i) EXPECT_NEAR(y[i], 2.0 * ax[i], 1e-13) << i;
      // alpha = 0 with beta: y scaled, A not used.
      yd = device_copy<Vec>(y0, "y");
      ks::spmv(trans ? "T" : "N", 0.0, a, xd, -3.0, yd, algo);
      y = host_copy(yd);
      for (std::size_t i = 0; i < yn; ++i) EXPECT_EQ(y[i], -3.0 * y0[i]);
      // alpha = 0, beta = 0: zeros even from NaN.
      yd = device_copy<Vec>(nan, "y");
      ks::spmv(trans ? "T" : "N", 0.0, a, xd, 0.0, yd, algo);
      for (double v : host_copy(yd)) EXPECT_EQ(v, 0.0);
      // General alpha, beta.
      yd = device_copy<Vec>(y0, "y");
      ks::spmv(trans ? "T" : "N", -1.5, a, xd, 0.5, yd, algo);
      y = host_copy(yd);
      for (std::size_t i = 0; i < yn; ++i) EXPECT_NEAR(y[i], -1.5 * ax[i] + 0.5 * y0[i], 1e-13);
    }
    // ELL in both modes.
    auto yd = device_copy<Vec>(y0, "y");
    ks::spmv(trans ? "T" : "N", -1.5, ell, xd, 0.5, yd);
    auto y = host_copy(yd);
    for (std::size_t i = 0; i < yn; ++i) EXPECT_NEAR(y[i], -1.5 * ax[i] + 0.5 * y0[i], 1e-13);
  }
}

TEST(SparseSpmv, KaccVectorsOfAnyFormat) {
  const auto coo = small_matrix();
  const auto a = ks::make_csr<double, kacc::bf16>(coo);
  const auto x = random_vector(40, 5);
  using XV = kacc::View<double*, kacc::StoredAs<kacc::fp16>>;
  using YV = kacc::View<double*, kacc::StoredAs<float>>;
  auto xd = device_copy<XV>(x, "x");
  const auto xs = host_copy(xd);  // x as stored
  const auto ax = dense_product(ks::to_coo(a), xs, false);
  YV yd("y", 7);
  ks::spmv(Kokkos::DefaultExecutionSpace(), "N", 1.0, a, xd, 0.0, yd);
  Kokkos::fence();
  const auto y = host_copy(yd);
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(y[i], double(float(ax[i]))) << i;
}

TEST(SparseSpmv, EllMatchesCsrAndReportsPadding) {
  // Rows, entries and longest row as the README of sparse/data/matrices states them.
  struct Case {
    const char* name;
    std::size_t rows, nnz, longest_row;
  };
  for (const Case c : {Case{"bayer10.mtx.gz", 13436, 94926, 27}, Case{"Si2.mtx.gz", 769, 17801, 61},
                       Case{"olm1000.mtx.gz", 1000, 3996, 6}}) {
    SCOPED_TRACE(c.name);
    const auto coo = load(c.name);
    const auto csr = ks::make_csr<double, kacc::fp16>(coo);
    const auto ell = ks::ell_from_csr(csr, 4.0);
    EXPECT_EQ(ell.nnz(), c.nnz);
    EXPECT_EQ(ell.slots(), c.rows * c.longest_row);
    EXPECT_EQ(ell.padding(), c.rows * c.longest_row - c.nnz);
    const auto x = random_vector(static_cast<std::size_t>(coo.num_cols), 11);
    auto xd = device_copy<Vec>(x, "x");
    Vec y1("y1", csr.num_rows()), y2("y2", csr.num_rows());
    ks::spmv("N", 1.0, csr, xd, 0.0, y1, ks::SpmvAlgorithm::row);
    ks::spmv("N", 1.0, ell, xd, 0.0, y2);
    const auto r1 = host_copy(y1), r2 = host_copy(y2);
    if (Kokkos::SpaceAccessibility<Kokkos::DefaultExecutionSpace, Kokkos::HostSpace>::accessible) {
      EXPECT_EQ(r1, r2);  // host rows: the same products added in the same order
    } else {
      // Device CSR rows reduce across vector lanes, ELL rows add in order: both are fp64
      // sums of the same products, within 2 (n - 1) u sum |a x| of each other.
      const auto abs_ax = exact_product(ks::to_coo(csr), x).abs_ax;
      for (std::size_t i = 0; i < r1.size(); ++i)
        EXPECT_LE(std::fabs(r1[i] - r2[i]), 2.0 * (c.longest_row - 1) * 0x1p-53 * abs_ax[i]) << i;
    }
    // Back to CSR: identical matrix.
    const auto back = ks::csr_from_ell(ell);
    const auto c1 = ks::to_coo(csr), c2 = ks::to_coo(back);
    EXPECT_EQ(c1.row, c2.row);
    EXPECT_EQ(c1.col, c2.col);
    EXPECT_EQ(c1.val, c2.val);
  }
}

TEST(SparseSpmv, EllRefusesPaddingBlowUp) {
  const auto csr = ks::make_csr<double, float>(load("rajat01.mtx.gz"));
  try {
    ks::ell_from_csr(csr, 3.0);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_padding_factor"), std::string::npos) << e.what();
  }
  const auto ell = ks::ell_from_csr(csr, 1000.0);  // allowed when the limit is raised
  EXPECT_GT(ell.padding_factor(), 100.0);
}

TEST(SparseSpmv, LoadBalancedMatchesRowOnIrregularMatrices) {
  for (const char* name : {"rajat01.mtx.gz", "adder_dcop_32.mtx.gz", "cond-mat-2005.mtx.gz"}) {
    SCOPED_TRACE(name);
    const auto coo = load(name);
    const auto a = ks::make_csr<double, kacc::scaled<std::int16_t>>(coo);
    const auto stored = ks::to_coo(a);
    const auto x = random_vector(static_cast<std::size_t>(coo.num_cols), 13);
    const auto ex = exact_product(stored, x);
    auto xd = device_copy<Vec>(x, "x");
    Vec y1("y1", a.num_rows()), y2("y2", a.num_rows());
    ks::spmv("N", 1.0, a, xd, 0.0, y1, ks::SpmvAlgorithm::row);
    ks::spmv("N", 1.0, a, xd, 0.0, y2, ks::SpmvAlgorithm::load_balanced);
    const auto r1 = host_copy(y1), r2 = host_copy(y2);
    const double u = std::ldexp(1.0, -53);
    for (std::size_t i = 0; i < r1.size(); ++i) {
      // Each within the fp64 bound of the exact product, so within twice that of each other.
      const double k = static_cast<double>(ex.len[i]);
      const double bound = k * u / (1 - k * u) * ex.abs_ax[i] + u * std::fabs(ex.y[i]);
      ASSERT_LE(std::fabs(r1[i] - ex.y[i]), bound) << "row kernel, row " << i;
      ASSERT_LE(std::fabs(r2[i] - ex.y[i]), bound) << "load-balanced kernel, row " << i;
      ASSERT_LE(std::fabs(r1[i] - r2[i]), 2 * bound) << "row " << i;
    }
  }
  // Statistics match the README: rajat01 max/mean about 228.
  const auto rajat = ks::make_csr<double>(load("rajat01.mtx.gz"));
  EXPECT_EQ(rajat.row_stats().max, 1442.0);
  EXPECT_NEAR(rajat.row_stats().max / rajat.row_stats().mean, 228.0, 1.0);
  EXPECT_NEAR(rajat.row_stats().cv, 4.3, 0.1);
}

namespace {
// A rows x cols CSR matrix whose row i has lengths[i] entries (columns 0, 1, ...).
ks::CsrMatrix<double> with_row_lengths(const std::vector<int>& lengths) {
  ks::CooMatrix a;
  a.num_rows = static_cast<std::int64_t>(lengths.size());
  a.num_cols = *std::max_element(lengths.begin(), lengths.end());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    for (int j = 0; j < lengths[i]; ++j) {
      a.row.push_back(static_cast<std::int64_t>(i));
      a.col.push_back(j);
      a.val.push_back(1.0);
    }
  }
  return ks::make_csr<double>(a);
}
}  // namespace

// The documented rule (spmv.hpp): load_balanced when the rows are irregular -- longest row
// above 8x the mean, or coefficient of variation of the row lengths above 1 -- and long
// enough to be worth splitting (longest row above 32 entries); else row. Each matrix is
// built so that its statistics, worked out by hand below, demand one answer.
TEST(SparseSpmv, AutomaticAlgorithmFollowsTheRowLengthStatistics) {
  struct Case {
    const char* what;
    std::vector<int> lengths;
    double mean, max, cv;  // by hand
    ks::SpmvAlgorithm expected;
  };
  std::vector<Case> cases;
  // 100 rows of 40: mean 40, max 40 (1x), cv 0.
  cases.push_back(
      {"uniform rows of 40", std::vector<int>(100, 40), 40, 40, 0, ks::SpmvAlgorithm::row});
  // 99 rows of 5 and one of 1000: mean 14.95, max/mean 66.9.
  {
    std::vector<int> l(100, 5);
    l[37] = 1000;
    cases.push_back({"one row of 1000 among rows of 5", l, 14.95, 1000,
                     std::sqrt((99 * 25.0 + 1e6) / 100 - 14.95 * 14.95) / 14.95,
                     ks::SpmvAlgorithm::load_balanced});
  }
  // 80 empty rows and 20 of 100: mean 20, max/mean 5 (below 8), cv sqrt(0.8/0.2) = 2.
  {
    std::vector<int> l(100, 0);
    for (int i = 0; i < 100; i += 5) l[i] = 100;
    cases.push_back({"a fifth of the rows full, the rest empty", l, 20, 100, 2,
                     ks::SpmvAlgorithm::load_balanced});
  }
  // 99 rows of 1 and one of 30: max/mean 23 and cv 2.8, but no row longer than 32.
  {
    std::vector<int> l(100, 1);
    l[0] = 30;
    cases.push_back({"irregular but short rows", l, 1.29, 30,
                     std::sqrt((99 + 900.0) / 100 - 1.29 * 1.29) / 1.29, ks::SpmvAlgorithm::row});
  }
  // Rows of 20 and 60 alternating: mean 40, max/mean 1.5, cv 0.5.
  {
    std::vector<int> l(100, 20);
    for (int i = 1; i < 100; i += 2) l[i] = 60;
    cases.push_back({"two row lengths, 20 and 60", l, 40, 60, 0.5, ks::SpmvAlgorithm::row});
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const auto a = with_row_lengths(c.lengths);
    EXPECT_NEAR(a.row_stats().mean, c.mean, 1e-12 * c.mean);
    EXPECT_EQ(a.row_stats().max, c.max);
    EXPECT_NEAR(a.row_stats().cv, c.cv, 1e-12 + 1e-12 * c.cv);
    EXPECT_STREQ(ks::algorithm_name(ks::choose_algorithm(a.row_stats())),
                 ks::algorithm_name(c.expected));
  }
  // Real matrices, from the statistics in the README of sparse/data/matrices: very uneven
  // rows (max/mean 228, 211, 32) take load_balanced; even rows (max/mean 1.2, 1.3) take row.
  for (const char* name : {"rajat01.mtx.gz", "adder_dcop_32.mtx.gz", "cond-mat-2005.mtx.gz"}) {
    SCOPED_TRACE(name);
    EXPECT_STREQ(
        ks::algorithm_name(ks::choose_algorithm(ks::make_csr<double>(load(name)).row_stats())),
        "load_balanced");
  }
  for (const char* name : {"s3rmt3m3.mtx.gz", "cvxbqp1.mtx.gz"}) {
    SCOPED_TRACE(name);
    EXPECT_STREQ(
        ks::algorithm_name(ks::choose_algorithm(ks::make_csr<double>(load(name)).row_stats())),
        "row");
  }
}

TEST(SparseSpmv, LoadBalancedExhaustiveSmallShapes) {
  // Every row length pattern with empty rows and one long row, against the row kernel.
  std::mt19937 gen(1);
  for (int trial = 0; trial < 40; ++trial) {
    ks::CooMatrix a;
    a.num_rows = 1 + trial % 9;
    a.num_cols = 300;
    for (int i = 0; i < a.num_rows; ++i) {
      const int len = (gen() % 3 == 0) ? 0 : (gen() % 4 == 0 ? 250 : int(gen() % 5));
      for (int j = 0; j < len; ++j) {
        a.row.push_back(i);
        a.col.push_back(j);
        a.val.push_back(1.0 + j % 3);
      }
    }
    const auto m = ks::make_csr<double>(a);
    const auto x = random_vector(300, trial);
    auto xd = device_copy<Vec>(x, "x");
    const auto ref = dense_product(a, x, false);
    Vec y("y", a.num_rows);
    ks::spmv("N", 1.0, m, xd, 0.0, y, ks::SpmvAlgorithm::load_balanced);
    const auto r = host_copy(y);
    for (std::size_t i = 0; i < r.size(); ++i)
      ASSERT_NEAR(r[i], ref[i], 1e-11) << trial << " " << i;
  }
}

namespace {
// Rows of every length 0..40 (in the given order, so rows start at every offset within a
// block and the last row is long or short), random columns and values; y from the row
// kernel must have the bits of the plain loop: each row's products of the stored values
// and x added one by one in Acc, in column order (a plain fp64 sum by FMA where the host has
// one, its products rounded first where not).
ks::CooMatrix rows_of_every_length(bool longest_last) {
  ks::CooMatrix a;
  a.num_rows = 41;
  a.num_cols = 97;
  std::mt19937 gen(longest_last ? 3 : 4);
  std::uniform_real_distribution<double> value(-3.0, 3.0);
  for (int r = 0; r < 41; ++r) {
    const int len = longest_last ? r : 40 - r;
    for (int j = 0; j < len; ++j) {
      a.row.push_back(r);
      a.col.push_back(static_cast<std::int64_t>(gen() % 97));
      a.val.push_back(value(gen));
    }
  }
  return a;
}

// The host shape's order: the matrix and vectors live in host memory and the kernel runs
// on the host back end in every build (device rows reduce across vector lanes instead).
template <class Format, class Acc>
void check_row_blocks_same_bits(bool longest_last) {
  using HostExec = Kokkos::DefaultHostExecutionSpace;
  const auto a = rows_of_every_length(longest_last);
  const auto m = ks::make_csr<double, Format, int, int, HostExec::device_type>(a);
  const auto x = random_vector(97, 5);
  auto xd = device_copy<HostVec>(x, "x");
  HostVec y("y", 41);
  ks::spmv<double, Acc>(HostExec(), "N", 1.0, m, xd, 0.0, y, ks::SpmvAlgorithm::row);
  const auto got = host_copy(y);
  const auto stored = host_copy(m.values());  // scaled formats: against the scale chosen
  using traits = kacc::accumulator_traits<Acc>;
  std::size_t k = 0;
  for (std::size_t r = 0; r < 41; ++r) {
    Acc sum = traits::zero();
    for (; k < a.nnz() && a.row[k] == static_cast<std::int64_t>(r); ++k) {
      const double xk = x[static_cast<std::size_t>(a.col[k])];
      if constexpr (traits::is_plain) {
#if defined(__FMA__)
        sum = std::fma(stored[k], xk, sum);
#else
        const volatile double product = stored[k] * xk;
        sum += product;
#endif
      } else {
        traits::add_product(sum, stored[k], xk);
      }
    }
    const double want = static_cast<double>(traits::result(sum));
    EXPECT_EQ(kacc::bit_cast<std::uint64_t>(got[r]), kacc::bit_cast<std::uint64_t>(want))
        << kacc::format_name<Format>() << " row " << r << ": kernel " << got[r] << ", plain loop "
        << want;
  }
}
}  // namespace

TEST(SparseSpmv, RowKernelBlockLoadsGiveTheBitsOfThePlainLoop) {
  for (bool longest_last : {true, false}) {
    check_row_blocks_same_bits<kacc::fp16, double>(longest_last);
    check_row_blocks_same_bits<kacc::bf16, double>(longest_last);
    check_row_blocks_same_bits<kacc::fp16, kacc::compensated<double>>(longest_last);
    check_row_blocks_same_bits<float, double>(longest_last);
    check_row_blocks_same_bits<double, kacc::double_double>(longest_last);
    check_row_blocks_same_bits<float, kacc::double_double>(longest_last);
    check_row_blocks_same_bits<kacc::scaled<std::int16_t>, double>(longest_last);
    check_row_blocks_same_bits<kacc::scaled<std::int8_t>, kacc::compensated<double>>(longest_last);
  }
}

// fp32 arithmetic (kept scalar on GCC, keep_scalar): each row's products rounded to float,
// then added in column order, in the row kernel and the ELL rows (the merge path joins the
// pieces of a row cut between threads, so its order differs). The
// reference rounds each product and sum through double, which is exact before the one
// rounding to float (53 >= 2 * 24 + 2 bits), so no FMA can form in it.
TEST(SparseSpmv, Fp32RowsHaveTheBitsOfThePlainLoop) {
  using HostExec = Kokkos::DefaultHostExecutionSpace;
  using FloatVec = Kokkos::View<float*, Kokkos::HostSpace>;
  for (bool longest_last : {true, false}) {
    const auto a = rows_of_every_length(longest_last);
    const auto m = ks::make_csr<float, float, int, int, HostExec::device_type>(a);
    const auto stored = host_copy(m.values());
    const auto x64 = random_vector(97, 5);
    FloatVec x("x", 97), y("y", 41);
    for (std::size_t j = 0; j < 97; ++j) x(j) = static_cast<float>(x64[j]);
    std::vector<float> want(41, 0.0f);
    for (std::size_t k = 0; k < a.nnz(); ++k) {
      const float product = static_cast<float>(double(stored[k]) * double(x(a.col[k])));
      float& sum = want[static_cast<std::size_t>(a.row[k])];
      sum = static_cast<float>(double(sum) + double(product));
    }
    const auto check = [&](const char* kernel) {
      for (std::size_t r = 0; r < 41; ++r) {
        EXPECT_EQ(kacc::bit_cast<std::uint32_t>(y(r)), kacc::bit_cast<std::uint32_t>(want[r]))
            << kernel << " row " << r << ": " << y(r) << ", plain loop " << want[r];
      }
    };
    ks::spmv<float, float>(HostExec(), "N", 1.0f, m, x, 0.0f, y, ks::SpmvAlgorithm::row);
    check("row");
    ks::spmv<float, float>(HostExec(), "N", 1.0f, ks::ell_from_csr(m, 100.0), x, 0.0f, y);
    check("ell");
  }
}

namespace {
// The merge-path pieces (8 on 2 threads, so rows are cut between threads) and the ELL rows
// sum runs of stored values; where the format has SIMD block loads they are decoded in
// blocks first. y must have the bits of the same kernel on an fp64 copy of the stored
// values, which reads them one by one.
template <class Format, class Acc>
void check_blocks_same_bits_as_fp64_copy(bool longest_last) {
  auto a = rows_of_every_length(longest_last);
  const auto m = ks::make_csr<double, Format>(a);
  a.val = host_copy(m.values());
  const auto m64 = ks::make_csr<double>(a);
  const auto x = device_copy<Vec>(random_vector(97, 5), "x");
  auto same_bits = [&](const char* kernel, const auto& got, const auto& want) {
    for (std::size_t r = 0; r < want.size(); ++r) {
      EXPECT_EQ(kacc::bit_cast<std::uint64_t>(got[r]), kacc::bit_cast<std::uint64_t>(want[r]))
          << kernel << ", " << kacc::format_name<Format>() << " row " << r << ": " << got[r]
          << ", fp64 copy " << want[r];
    }
  };
  Vec y("y", 41), y64("y64", 41);
  ks::spmv<double, Acc>("N", 1.0, m, x, 0.0, y, ks::SpmvAlgorithm::load_balanced);
  ks::spmv<double, Acc>("N", 1.0, m64, x, 0.0, y64, ks::SpmvAlgorithm::load_balanced);
  same_bits("load_balanced", host_copy(y), host_copy(y64));
  ks::spmv<double, Acc>("N", 1.0, ks::ell_from_csr(m, 100.0), x, 0.0, y);
  ks::spmv<double, Acc>("N", 1.0, ks::ell_from_csr(m64, 100.0), x, 0.0, y64);
  same_bits("ell", host_copy(y), host_copy(y64));
}
}  // namespace

TEST(SparseSpmv, LoadBalancedAndEllBlockLoadsGiveTheBitsOfAnFp64Copy) {
  for (bool longest_last : {true, false}) {
    check_blocks_same_bits_as_fp64_copy<kacc::fp16, double>(longest_last);
    check_blocks_same_bits_as_fp64_copy<kacc::bf16, double>(longest_last);
    check_blocks_same_bits_as_fp64_copy<kacc::fp16, kacc::compensated<double>>(longest_last);
    check_blocks_same_bits_as_fp64_copy<float, double>(longest_last);
    check_blocks_same_bits_as_fp64_copy<kacc::bf16, kacc::double_double>(longest_last);
    check_blocks_same_bits_as_fp64_copy<kacc::scaled<std::int16_t>, double>(longest_last);
    check_blocks_same_bits_as_fp64_copy<kacc::scaled<std::int8_t>, kacc::compensated<double>>(
        longest_last);
  }
}

TEST(SparseSpmv, ScaledYFlagsOrThrowsOnSaturation) {
  const auto a = ks::make_csr<double>(small_matrix());  // 7 x 40
  Vec x("x", 40);
  Kokkos::deep_copy(x, 1e6);
  using Int16s = kacc::scaled<std::int16_t>;
  kacc::View<double*, kacc::StoredAs<Int16s>> y("y", 7);
  ks::spmv("N", 1.0, a, x, 0.0, y);
  EXPECT_TRUE(y.saturated());
  kacc::View<double*, kacc::StoredAs<Int16s, kacc::overflow::throw_on_host>> t("t", 7);
  ks::spmv("N", 0.0, a, x, 0.0, t);
  EXPECT_THROW(ks::spmv("N", 1.0, a, x, 0.0, t), std::overflow_error);
}

namespace {
// Integer entries (a long row, a short one, an empty one), so that with integer x every
// product and sum is exact in fp64.
ks::CooMatrix integer_matrix() {
  ks::CooMatrix a;
  a.num_rows = 4;
  a.num_cols = 6;
  auto add = [&](int i, int j, double v) {
    a.row.push_back(i);
    a.col.push_back(j);
    a.val.push_back(v);
  };
  for (int j = 0; j < 6; ++j) add(0, j, j + 1);
  add(1, 2, -3);
  add(3, 0, 2);
  add(3, 5, 7);
  return a;
}

std::vector<double> plus(std::vector<double> a, const std::vector<double>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}
}  // namespace

// Under overflow::rescale_on_host a y that does not hold the result gets new scales
// (kacc_testing::expect_rescaled); beta = 1 shows the old y was used, and a result that
// fits keeps the scale.
TEST(SparseSpmv, RescaleOnHostRepicksTheScaleOfY) {
  using Y = kacc::View<double*,
                       kacc::StoredAs<kacc::scaled<std::int16_t>, kacc::overflow::rescale_on_host>>;
  const auto coo = integer_matrix();
  const auto a = ks::make_csr<double>(coo);
  const std::vector<double> x = {1000, 2000, 3000, 4000, 5000, 6000}, y0 = {1, 2, 3, 4};
  const auto ax = dense_product(coo, x, false);  // 91000, -9000, 0, 44000
  auto xd = device_copy<Vec>(x, "x");
  for (auto algo : {ks::SpmvAlgorithm::row, ks::SpmvAlgorithm::load_balanced}) {
    SCOPED_TRACE(ks::algorithm_name(algo));
    auto y = device_copy<Y>(y0, "y");
    ks::spmv("N", 1.0, a, xd, 0.0, y, algo);
    kacc_testing::expect_rescaled(y, ax);
    y = device_copy<Y>(y0, "y");
    ks::spmv("N", 1.0, a, xd, 1.0, y, algo);
    kacc_testing::expect_rescaled(y, plus(ax, y0));
    y = device_copy<Y>(y0, "y");
    const auto scale0 = kacc_testing::scales_of(y);
    auto unit = device_copy<Vec>({1, 0, 0, 0, 0, 0}, "unit");
    ks::spmv("N", 1.0, a, unit, 1.0, y, algo);  // 2, 2, 3, 6: fits
    EXPECT_EQ(host_copy(y), (std::vector<double>{2, 2, 3, 6}));
    EXPECT_EQ(kacc_testing::scales_of(y), scale0);
    EXPECT_FALSE(y.saturated());
  }
  const std::vector<double> xt = {1000, 2000, 3000, 4000};
  const std::vector<double> yt0 = {30000, 1, 2, 3, 4, 5};  // scale 1
  auto yt = device_copy<Y>(yt0, "yt");
  const auto xtd = device_copy<Vec>(xt, "xt");
  ks::spmv("T", 1.0, a, xtd, 1.0, yt);
  kacc_testing::expect_rescaled(yt, plus(dense_product(coo, xt, true), yt0));
  yt = device_copy<Y>(yt0, "yt");
  ks::spmv("T", 0.0, a, xtd, 2.0, yt);  // alpha = 0: y = 2 y
  kacc_testing::expect_rescaled(yt, {60000, 2, 4, 6, 8, 10});
}

TEST(SparseSpmv, ArgumentChecksNameArgumentsAndExtents) {
  const auto a = ks::make_csr<double>(small_matrix());  // 7 x 40
  Vec x("x", 40), y("y", 7), bad("bad", 8);
  auto expect_msg = [](auto&& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no exception for " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_msg([&] { ks::spmv("N", 1.0, a, x, 0.0, bad); }, "y 8");
  expect_msg([&] { ks::spmv("N", 1.0, a, bad, 0.0, y); }, "x of extent 40");
  expect_msg([&] { ks::spmv("T", 1.0, a, x, 0.0, y); }, "(7, 40)");
  expect_msg([&] { ks::spmv("Q", 1.0, a, x, 0.0, y); }, "argument mode is \"Q\"");
  expect_msg(
      [&] {
        ks::CsrMatrix<double> m(3, 3, ks::CsrMatrix<double>::row_map_type("r", 3),
                                ks::CsrMatrix<double>::entries_type("e", 0),
                                ks::CsrMatrix<double>::values_type("v", 0));
      },
      "row_map has extent 3");
}

TEST(SparseSpmv, Int64IndicesAndFormatConversion) {
  const auto coo = small_matrix();
  const auto a = ks::make_csr<double, double, std::int64_t, std::int64_t>(coo);
  const auto b = ks::convert_values<double, kacc::fp16>(a);
  const auto x = random_vector(40, 9);
  auto xd = device_copy<Vec>(x, "x");
  Vec y("y", 7);
  ks::spmv("N", 1.0, b, xd, 0.0, y);
  // The reference rounds the original values to fp16 itself, so a conversion that lost or
  // moved values would show.
  auto rounded = coo;
  for (auto& v : rounded.val) v = kacc::convert<double>(kacc::convert<kacc::fp16>(v));
  EXPECT_NE(rounded.val, coo.val);  // fp16 changes some of them
  const auto ref = dense_product(rounded, x, false);
  const auto r = host_copy(y);
  for (std::size_t i = 0; i < 7; ++i) EXPECT_NEAR(r[i], ref[i], 1e-13);
}

#ifdef KACC_TEST_KOKKOSKERNELS
TEST(SparseSpmv, KokkosKernelsRoundTrip) {
  const auto coo = small_matrix();
  const auto a = ks::make_csr<double, float>(coo);
  const auto kk = ks::to_kokkos<double>(a);
  EXPECT_EQ(kk.numRows(), 7);
  EXPECT_EQ(kk.numCols(), 40);
  EXPECT_EQ(static_cast<std::size_t>(kk.nnz()), a.nnz());
  const auto back = ks::from_kokkos<double, kacc::bf16>(kk);
  const auto c1 = ks::to_coo(a), c2 = ks::to_coo(back);
  EXPECT_EQ(c1.row, c2.row);
  EXPECT_EQ(c1.col, c2.col);
  for (std::size_t k = 0; k < c1.nnz(); ++k) {
    EXPECT_EQ(c2.val[k], kacc::convert<double>(kacc::convert<kacc::bf16>(c1.val[k])));
  }
}
#endif

namespace {

/// A test matrix for exact SpMV, one row at a time: each row multiplies columns of its own,
/// whose x entries it brings.
struct RowsAndX {
  ks::CooMatrix a;
  std::vector<double> x;
  void add(const std::vector<double>& values, const std::vector<double>& xs) {
    for (std::size_t k = 0; k < values.size(); ++k) {
      a.row.push_back(a.num_rows);
      a.col.push_back(static_cast<std::int64_t>(x.size()));
      a.val.push_back(values[k]);
      x.push_back(xs[k]);
    }
    ++a.num_rows;
    a.num_cols = static_cast<std::int64_t>(x.size());
  }
};

/// GenDot rows of condition 1e5 .. 1e40 and lengths 6 .. 64 (the long ill-conditioned ones
/// overflow the expansions and go to long accumulators), short random rows of 0 .. 5
/// entries, rows whose sums lie on or next to midpoints between doubles (ties to even, the
/// smaller gap below a power of two), cancel exactly (+0), leave or pass the double range,
/// have products below or above the expansions' range, subnormal entries, inf and NaN.
RowsAndX exact_test_rows() {
  RowsAndX r;
  std::uint64_t seed = 1;
  for (double cond : {1e5, 1e10, 1e20, 1e30, 1e40})
    for (std::size_t len : {6, 7, 9, 16, 64}) {
      std::vector<double> xv, Y;
      kacc_testing::gen_dot_rows(3, len, cond, seed++, xv, Y);
      for (std::size_t i = 0; i < 3; ++i)
        r.add(std::vector<double>(Y.begin() + i * len, Y.begin() + (i + 1) * len), xv);
    }
  for (std::size_t len = 0; len <= 5; ++len)
    r.add(random_vector(len, static_cast<unsigned>(40 + len)),
          random_vector(len, static_cast<unsigned>(50 + len)));
  // Empty rows up to the next group of rows the host kernel takes side by side, so the rows
  // next to midpoints share a group with no special value (whose rows all go to long
  // accumulators).
  const auto next_group = [&r] {
    while (r.a.num_rows % ks::Impl::csr_row_lanes != 0) r.add({}, {});
  };
  next_group();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double u = 0x1p-53;
  // Sums of these values times 1, first the ones the expansions hold.
  const std::vector<std::vector<double>> sums = {
      {1, u},                             // a tie: 1
      {1, u, 0x1p-150},                   // just above it: 1 + 2u
      {1, u, -0x1p-150},                  // just below it: 1
      {1 + 2 * u, u},                     // a tie from an odd significand: 1 + 4u
      {1, -u / 2},                        // a tie below a power of two: 1
      {1, -u / 2, -0x1p-200},             // just below it: 1 - u
      {-1, u / 2, 0x1p-200},              // the same, negative: -1 + u
      {0x1p60, 1, u, -0x1p60, 0x1p-300},  // cancellation, then just above a tie
      {1, -1},                            // an exact zero: +0
      {-0.0},                             // +0
      {0x1p800, 1, -0x1p800, 0x1p-800},   // cancellation: 1
  };
  for (const auto& v : sums) r.add(v, std::vector<double>(v.size(), 1.0));
  next_group();
  const std::vector<std::vector<double>> special_sums = {
      {0x1p1000, 0x1p1000, -0x1p1000},  // beyond the expansions: 2^1000
      {1e300, -1e300, 1e-300},          // cancellation: 1e-300
      {0x1p1023, 0x1p1023},             // beyond the double range: inf
      {tiny, tiny, -tiny},              // subnormals: tiny
      {tiny * 3, -tiny},                // 2 tiny
      {inf, 1},                         // inf
      {inf, -inf},                      // NaN
      {nan, 1},                         // NaN
      {-inf, 2, -inf},                  // -inf
  };
  for (const auto& v : special_sums) r.add(v, std::vector<double>(v.size(), 1.0));
  r.add({1e300, -1e300, 3}, {1e10, 1e10, 1});             // products past DBL_MAX: 3
  r.add({1e-200, 1, -1e-200}, {1e-200, 1e-300, 1e-200});  // products below the expansions
  r.add({tiny, 0.5}, {0.5, tiny});                        // 2^-1075 twice: tiny
  r.add({tiny * 3}, {0.5});                               // a subnormal tie: 2 tiny
  r.add({inf, 1}, {0, 1});                                // inf * 0: NaN
  r.add({2, 3}, {-0.0, 0.0});                             // +0
  return r;
}

::testing::AssertionResult same_bits(double expected, double actual) {
  if ((std::isnan(expected) && std::isnan(actual)) ||
      kacc::bit_cast<std::uint64_t>(expected) == kacc::bit_cast<std::uint64_t>(actual))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << std::hexfloat << "expected " << expected << ", got " << actual;
}

/// y = A x with exact<double> sums for A stored as Format and x stored as XFormat, every
/// CSR kernel, against MPFR's correctly rounded sums of the stored data, bit for bit.
template <class Format, class XFormat>
void check_exact_rows() {
  const auto rows = exact_test_rows();
  const auto a = ks::make_csr<double, Format>(rows.a);
  using XV = kacc::View<double*, kacc::StoredAs<XFormat>>;
  auto xd = device_copy<XV>(rows.x, "x");
  const auto ref = exact_product(ks::to_coo(a), host_copy(xd)).y;  // the stored data
  for (auto algo : {ks::SpmvAlgorithm::row, ks::SpmvAlgorithm::load_balanced}) {
    Vec y("y", static_cast<std::size_t>(rows.a.num_rows));
    ks::spmv<double, kacc::exact<double>>("N", 1.0, a, xd, 0.0, y, algo);
    const auto got = host_copy(y);
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(same_bits(ref[i], got[i]))
          << kacc::format_name<Format>() << " x " << kacc::format_name<XFormat>() << " "
          << ks::algorithm_name(algo) << " row " << i;
  }
  // ELL's padding adds products 0 * x(c) of finite x here: the same exact sums.
  Vec y("y", static_cast<std::size_t>(rows.a.num_rows));
  Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
  ks::spmv<double, kacc::exact<double>>("N", 1.0, ks::ell_from_csr(a, 1000.0), xd, 0.0, y);
  const auto got = host_copy(y);
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(same_bits(ref[i], got[i]))
        << kacc::format_name<Format>() << " x " << kacc::format_name<XFormat>() << " ELL row " << i;
}

}  // namespace

TEST(SparseSpmv, ExactRowsEqualMpfrOnIllConditionedAndSpecialRows) {
  check_exact_rows<double, double>();
  check_exact_rows<float, float>();  // exact products: no error terms
  check_exact_rows<double, float>();
}

namespace {

/// Rows of a that the merge-path kernel cuts between pieces on HostExec (their sums are
/// joined in its fix-up pass).
template <class Matrix>
std::vector<bool> rows_cut_by_merge_path(const Matrix& a) {
  using HostExec = Kokkos::DefaultHostExecutionSpace;
  const auto row_map = a.row_map();
  const kacc::index_type rows = a.num_rows(), nnz = a.nnz(), total = rows + nnz;
  const kacc::index_type per = ks::Impl::merge_path_piece_length(
      static_cast<kacc::index_type>(HostExec().concurrency()), total);
  std::vector<bool> cut(static_cast<std::size_t>(rows), false);
  for (kacc::index_type d = per; d < total; d += per) {
    kacc::index_type i, j;
    ks::Impl::merge_path_search(row_map, rows, nnz, d, i, j);
    if (i < rows && j > kacc::index_type(row_map(i))) cut[static_cast<std::size_t>(i)] = true;
  }
  return cut;
}

// Sums in Acc of the same rows (inf and NaN included) have the bits of adding each product
// with accumulator_traits<Acc>, in the host shape's order (device rows reduce across vector
// lanes), though the host's CSR and ELL kernels take 16 rows side by side: every row in the
// row and ELL kernels, every row the merge-path kernel does not cut.
template <class Acc>
void check_rows_traits_bits() {
  using HostExec = Kokkos::DefaultHostExecutionSpace;
  const auto rows = exact_test_rows();
  const auto a = ks::make_csr<double, double, int, int, HostExec::device_type>(rows.a);
  auto xd = device_copy<HostVec>(rows.x, "x");
  HostVec y("y", static_cast<std::size_t>(rows.a.num_rows));
  using traits = kacc::accumulator_traits<Acc>;
  for (auto algo : {ks::SpmvAlgorithm::row, ks::SpmvAlgorithm::load_balanced}) {
    SCOPED_TRACE(ks::algorithm_name(algo));
    Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());  // a row left unwritten shows
    ks::spmv<double, Acc>(HostExec(), "N", 1.0, a, xd, 0.0, y, algo);
    const auto got = host_copy(y);
    const auto cut = algo == ks::SpmvAlgorithm::row ? std::vector<bool>(got.size(), false)
                                                    : rows_cut_by_merge_path(a);
    std::size_t k = 0, checked = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      Acc sum = traits::zero();
      for (; k < rows.a.nnz() && rows.a.row[k] == static_cast<std::int64_t>(i); ++k)
        traits::add_product(sum, rows.a.val[k], rows.x[static_cast<std::size_t>(rows.a.col[k])]);
      if (cut[i]) continue;
      ++checked;
      EXPECT_TRUE(same_bits(static_cast<double>(traits::result(sum)), got[i])) << "row " << i;
    }
    EXPECT_GT(checked, got.size() * 9 / 10);
  }
  // ELL: every slot of a row in slot order, padding included.
  const auto ell = ks::ell_from_csr(a, 1000.0);
  Kokkos::deep_copy(y, std::numeric_limits<double>::quiet_NaN());
  ks::spmv<double, Acc>(HostExec(), "N", 1.0, ell, xd, 0.0, y);
  const auto got = host_copy(y);
  for (std::size_t i = 0; i < got.size(); ++i) {
    Acc sum = traits::zero();
    for (std::size_t k = 0; k < static_cast<std::size_t>(ell.width()); ++k) {
      const std::size_t s = ell.slot(i, k);
      traits::add_product(sum, static_cast<double>(ell.values()(s)), xd(ell.entries()(s)));
    }
    EXPECT_TRUE(same_bits(static_cast<double>(traits::result(sum)), got[i])) << "ELL row " << i;
  }
}

}  // namespace

TEST(SparseSpmv, DoubleDoubleRowsHaveTheBitsOfTheTraitsSum) {
  check_rows_traits_bits<kacc::double_double>();
}
TEST(SparseSpmv, CompensatedRowsHaveTheBitsOfTheTraitsSum) {
  check_rows_traits_bits<kacc::compensated<double>>();
}

namespace {
// Row i of an n x n matrix with 1 + i % 9 entries, at columns (i + 7 t) % n, t = 0, 1, ...:
// entry t is (i + t + 1)(1 + 2^-60) and x(j) = 1 + j % 5. In double_double the entries
// are stored whole and every product and sum of the row is exact (integers below 2^53 and
// their 2^-60 multiples), so y(i) = S(i) + S(i) 2^-60, S(i) = sum (i + t + 1) x(col), in
// any order of additions; read as double, each entry rounds to i + t + 1 and y(i) = S(i).
constexpr int dd_rows = 300;
constexpr double dd_tiny = 0x1p-60;

KOKKOS_INLINE_FUNCTION int dd_row_length(int i) {
  return 1 + i % 9;
}
KOKKOS_INLINE_FUNCTION int dd_column(int i, int t) {
  return (i + 7 * t) % dd_rows;
}
KOKKOS_INLINE_FUNCTION double dd_x(int j) {
  return 1.0 + j % 5;
}
KOKKOS_INLINE_FUNCTION double dd_row_sum(int i) {
  double s = 0;
  for (int t = 0; t < dd_row_length(i); ++t) s += (i + t + 1.0) * dd_x(dd_column(i, t));
  return s;
}

template <class Arith>
ks::CsrMatrix<Arith, kacc::double_double> dd_valued_matrix() {
  using M = ks::CsrMatrix<Arith, kacc::double_double>;
  typename M::row_map_type row_map("row_map", dd_rows + 1);
  auto h_row_map = Kokkos::create_mirror_view(row_map);
  h_row_map(0) = 0;
  for (int i = 0; i < dd_rows; ++i) h_row_map(i + 1) = h_row_map(i) + dd_row_length(i);
  Kokkos::deep_copy(row_map, h_row_map);
  const int nnz = h_row_map(dd_rows);
  typename M::entries_type entries("entries", nnz);
  typename M::values_type values("values", nnz);
  Kokkos::parallel_for(
      Kokkos::RangePolicy<typename M::execution_space>(0, dd_rows), KOKKOS_LAMBDA(const int i) {
        for (int t = 0; t < dd_row_length(i); ++t) {
          entries(row_map(i) + t) = dd_column(i, t);
          values.storage()(row_map(i) + t) =
              kacc::double_double(i + t + 1.0) * kacc::double_double(1.0, dd_tiny);
        }
      });
  return M(dd_rows, dd_rows, row_map, entries, values);
}

// Entries of y that differ from s(i) (1 + 2^-60) in double_double (whole), or from s(i).
template <class Y, class S>
int dd_entries_wrong(const Y& y, const S& s, const bool whole) {
  int wrong = 0;
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<typename Y::execution_space>(0, dd_rows),
      KOKKOS_LAMBDA(const int i, int& w) {
        const kacc::double_double yi = y.storage()(i);
        w += whole ? !(yi.hi == s(i) && yi.lo == s(i) * dd_tiny) : !(yi.hi == s(i) && yi.lo == 0);
      },
      wrong);
  return wrong;
}

// x(j) = dd_x(j) and row_sums(i) = S(i). A function of its own: nvcc takes no device
// lambda in a test's body.
void fill_x_and_row_sums(const Kokkos::View<double*>& x, const Kokkos::View<double*>& row_sums) {
  Kokkos::parallel_for(
      Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace>(0, dd_rows), KOKKOS_LAMBDA(const int j) {
        x(j) = dd_x(j);
        row_sums(j) = dd_row_sum(j);
      });
}
}  // namespace

// SpMV with values StoredAs<kacc::double_double>: computed in double_double they keep their
// low parts (row and load-balanced CSR kernels, ELL); computed in double they are read
// rounded (row kernel, and "T", which double_double arithmetic cannot take).
TEST(SparseSpmv, DoubleDoubleValuesKeepTheirLowParts) {
  using Exec = Kokkos::DefaultExecutionSpace;
  using DDVec = kacc::View<kacc::double_double*, kacc::StoredAs<kacc::double_double>>;
  Kokkos::View<double*> x("x", dd_rows), row_sums("row_sums", dd_rows),
      column_sums("column_sums", dd_rows);
  auto h_column_sums = Kokkos::create_mirror_view(column_sums);
  for (int i = 0; i < dd_rows; ++i)
    for (int t = 0; t < dd_row_length(i); ++t)
      h_column_sums(dd_column(i, t)) += (i + t + 1.0) * dd_x(i);
  Kokkos::deep_copy(column_sums, h_column_sums);
  fill_x_and_row_sums(x, row_sums);
  const auto a = dd_valued_matrix<kacc::double_double>();
  DDVec y("y", dd_rows);
  for (const auto algorithm : {ks::SpmvAlgorithm::row, ks::SpmvAlgorithm::load_balanced}) {
    SCOPED_TRACE(static_cast<int>(algorithm));
    ks::spmv(Exec(), "N", 1.0, a, x, 0.0, y, algorithm);
    EXPECT_EQ(dd_entries_wrong(y, row_sums, true), 0);
  }
  ks::spmv(Exec(), "N", 1.0, ks::ell_from_csr(a, 4.0), x, 0.0, y);
  EXPECT_EQ(dd_entries_wrong(y, row_sums, true), 0) << "ELL";
  // "T" in double_double would need atomic adds Kokkos does not have: refused by name.
  try {
    ks::spmv(Exec(), "T", 1.0, a, x, 0.0, y);
    ADD_FAILURE() << "mode T with Arith = double_double: no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Arith = dd "), std::string::npos) << e.what();
  }
  ks::spmv<double, kacc::double_double>(Exec(), "T", 1.0, a, x, 0.0, y);
  EXPECT_EQ(dd_entries_wrong(y, column_sums, false), 0) << "transpose in double";

  const auto rounded = dd_valued_matrix<double>();
  ks::spmv(Exec(), "N", 1.0, rounded, x, 0.0, y, ks::SpmvAlgorithm::row);
  EXPECT_EQ(dd_entries_wrong(y, row_sums, false), 0) << "read as double";
}
