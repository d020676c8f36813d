// The two loop shapes of every kernel (kacc::Impl::shape::host for CPUs, ::team for GPUs)
// run here on the host, so the GPU shapes are checked in every CI run: GEMV in all four
// layout/transpose cases, DOT, TRSV (several diagonal blocks) and CSR SpMV, each against
// the exact (MPFR) result of the data as stored, within the fp64 error bound.
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/blas/trsv.hpp>
#include <kacc/sparse/spmv.hpp>

#include "blas_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace kacc_blas_ref;
using kacc::Impl::shape;
using Host = Kokkos::DefaultHostExecutionSpace;
constexpr double u64 = 0x1p-53;

template <class S>
using HostVec = kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<S>>;
template <class S, class Layout>
using HostMat = kacc::View<double**, Layout, Kokkos::HostSpace, kacc::StoredAs<S>>;
using Plain = Kokkos::View<double*, Kokkos::HostSpace>;

// How many entries of y miss gamma_terms |M||x| around the exact M x (M row-major m x n;
// terms: the longest chain of additions a row's sum may take, by default n).
int gemv_misses(const std::vector<double>& M, std::size_t m, std::size_t n,
                const std::vector<double>& x, const Plain& y, std::size_t terms = 0) {
  if (terms == 0) terms = n;
  int misses = 0;
  for (std::size_t i = 0; i < m; ++i) {
    double abs = 0;
    for (std::size_t k = 0; k < n; ++k) abs += std::fabs(M[i * n + k] * x[k]);
    const double err = kacc_testing::exact_dot(n, &M[i * n], x.data()).abs_error(y(i));
    if (!(err <= gamma(terms, u64) * abs)) ++misses;
  }
  return misses;
}

template <shape Shape, class Acc, class S, class Layout>
void check_gemv(bool trans) {
  const std::size_t rows = 300, cols = 517;  // not multiples of any lane or team count
  auto A = make_matrix<HostMat<S, Layout>>(random_values(rows * cols, 7), rows, cols);
  const std::size_t m = trans ? cols : rows, n = trans ? rows : cols;
  auto x = make_vector<Plain>(random_values(n, 8, distribution::normal));
  Plain y("y", m);
  kacc::blas::Impl::gemv<double, Acc, Shape>("test_gemv", Host(), trans, 1.0, A, x, 0.0, y);
  Host().fence();
  const auto M = op(stored(A), rows, cols, trans);
  EXPECT_EQ(gemv_misses(M, m, n, stored(x), y), 0)
      << (trans ? "T" : "N") << " " << kacc::format_name<S>() << " "
      << kacc::Impl::layout_of<HostMat<S, Layout>>();
}

template <shape Shape, class Acc, class S>
void check_gemv_all_cases() {
  check_gemv<Shape, Acc, S, Kokkos::LayoutLeft>(false);
  check_gemv<Shape, Acc, S, Kokkos::LayoutLeft>(true);
  check_gemv<Shape, Acc, S, Kokkos::LayoutRight>(false);
  check_gemv<Shape, Acc, S, Kokkos::LayoutRight>(true);
}

TEST(KernelShape, GemvTeamShape) {
  check_gemv_all_cases<shape::team, double, float>();
  check_gemv_all_cases<shape::team, double, kacc::fp16>();
  check_gemv_all_cases<shape::team, kacc::compensated<double>, kacc::bf16>();
}

TEST(KernelShape, GemvHostShape) {
  check_gemv_all_cases<shape::host, double, float>();
  check_gemv_all_cases<shape::host, kacc::compensated<double>, kacc::fp16>();
}

std::vector<std::string> launched;
void record_launch(const char* label, std::uint32_t, std::uint64_t* id) {
  launched.emplace_back(label);
  *id = 0;
}

// Few long rows (the GMRES basis's V^T w) take the split dot shape: 37 rows (on the host a
// block of split_block_rows, whose groups of staged_rows or plain_rows rows go side by
// side, and a block of 5) of split_least_entries + 333 entries, so the last piece is short.
// Each row is a sum of pieces of at most `piece` products, the pieces then added one by
// one, so its error is within gamma_(piece + pieces) |M||x|: tighter than the row's gamma_n.
template <shape Shape, class S, class Layout>
void check_split_gemv() {
  namespace impl = kacc::blas::Impl;
  const std::size_t few = 37, entries = impl::split_least_entries + 333;
  const std::size_t piece = Shape == shape::host ? impl::split_entries : impl::team_split_entries;
  const bool trans = std::is_same<Layout, Kokkos::LayoutLeft>::value;  // rows along k
  const std::size_t rows = trans ? entries : few, cols = trans ? few : entries;
  auto A = make_matrix<HostMat<S, Layout>>(random_values(rows * cols, 9), rows, cols);
  auto x = make_vector<Plain>(random_values(entries, 10, distribution::normal));
  Plain y("y", few);
  launched.clear();
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(record_launch);
  impl::gemv<double, double, Shape>("test_gemv", Host(), trans, 1.0, A, x, 0.0, y);
  Host().fence();
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
  const std::string what = std::string(trans ? "T " : "N ") + kacc::format_name<S>();
  EXPECT_NE(std::find(launched.begin(), launched.end(), "test_gemv_split"), launched.end())
      << what << ": kernels launched " << ::testing::PrintToString(launched);
  const auto M = op(stored(A), rows, cols, trans);
  const std::size_t pieces = (entries + piece - 1) / piece;
  EXPECT_EQ(gemv_misses(M, few, entries, stored(x), y, piece + pieces), 0) << what;
}

// LayoutLeft "T" is the GMRES basis's V^T w; LayoutRight "N" sums along rows too.
TEST(KernelShape, GemvFewLongRowsSplit) {
  check_split_gemv<shape::host, double, Kokkos::LayoutLeft>();
  check_split_gemv<shape::host, float, Kokkos::LayoutRight>();
  check_split_gemv<shape::host, kacc::fp16, Kokkos::LayoutLeft>();
  check_split_gemv<shape::host, kacc::fp16, Kokkos::LayoutRight>();
  check_split_gemv<shape::team, kacc::fp16, Kokkos::LayoutLeft>();
}

template <shape Shape, class Acc>
void check_dot() {
  const std::size_t n = 100003;
  auto x = make_vector<HostVec<kacc::fp16>>(random_values(n, 1));
  auto y = make_vector<HostVec<float>>(random_values(n, 2, distribution::normal));
  const Acc sum = kacc::blas::Impl::dot<double, Acc, Shape>("test_dot", Host(), x, y);
  const double r = kacc::accumulator_traits<Acc>::result(sum);
  const auto xs = stored(x), ys = stored(y);
  double abs = 0;
  for (std::size_t i = 0; i < n; ++i) abs += std::fabs(xs[i] * ys[i]);
  EXPECT_LE(kacc_testing::exact_dot(n, xs.data(), ys.data()).abs_error(r), gamma(n, u64) * abs);
}

TEST(KernelShape, DotBothShapes) {
  check_dot<shape::team, double>();
  check_dot<shape::team, kacc::compensated<double>>();
  check_dot<shape::host, double>();
}

// A well-conditioned triangle (unit-sized diagonal, small off-diagonal entries), so the
// fp64 solve agrees with the exact one to a few ulps times n.
std::vector<double> triangle(std::size_t n) {
  auto a = random_values(n * n, 11);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) a[i * n + j] /= static_cast<double>(n);
    a[i * n + i] = 1.5 + std::fabs(a[i * n + i]);
  }
  return a;
}

template <shape Shape, class Acc, class Layout>
void check_trsv(bool lower, bool trans) {
  const std::size_t n = 700;  // three diagonal blocks, the last one partial
  const auto a = triangle(n);
  auto A = make_matrix<HostMat<float, Layout>>(a, n, n);
  const auto b0 = random_values(n, 12);
  auto w = make_vector<Plain>(b0);
  const bool op_lower = lower != trans;
  if (trans) {
    kacc::blas::Impl::trsv<double, Acc, Shape, true>("test_trsv", Host(), op_lower, false, A, w);
  } else {
    kacc::blas::Impl::trsv<double, Acc, Shape, false>("test_trsv", Host(), op_lower, false, A, w);
  }
  Host().fence();
  // The triangle of A that is read, as op(A) row-major, zeros elsewhere.
  auto T = op(stored(A), n, n, trans);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (op_lower ? j > i : j < i) T[i * n + j] = 0;
  const auto exact = exact_trsv(T, n, op_lower, b0);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    worst = std::max(worst, std::fabs(w(i) - exact[i]) / std::fabs(exact[i]));
  EXPECT_LE(worst, 64 * n * u64) << (lower ? "L" : "U") << (trans ? "T" : "N");
}

template <shape Shape, class Acc>
void check_trsv_all_cases() {
  for (const bool lower : {true, false})
    for (const bool trans : {false, true}) {
      check_trsv<Shape, Acc, Kokkos::LayoutLeft>(lower, trans);
      check_trsv<Shape, Acc, Kokkos::LayoutRight>(lower, trans);
    }
}

TEST(KernelShape, TrsvTeamShape) {
  check_trsv_all_cases<shape::team, double>();
  check_trsv_all_cases<shape::team, kacc::compensated<double>>();
}

TEST(KernelShape, TrsvHostShape) {
  check_trsv_all_cases<shape::host, double>();
  check_trsv_all_cases<shape::host, kacc::compensated<double>>();
}

// DOT and the GEMV dot shape stage 2-byte formats through block loads (SIMD conversions
// on hosts that have them), and take fp32 matrices with fp64 arithmetic four rows side by
// side; the sums must be the same, bit for bit, as those of fp64 views holding the same
// (exactly representable) values, which take the plain loops: same terms, same lanes, same
// order. Magnitudes from 2^-12 to 2^12, so that the sums
// round and a different order would show.
std::vector<double> wide_values(std::size_t n, std::uint64_t seed) {
  auto v = random_values(n, seed);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::ldexp(v[i], static_cast<int>((i * 7) % 25) - 12);
  return v;
}

// By default several whole stages (of block_stage or prefetched_stage entries), then
// 16-lane blocks and a tail.
template <class S, class Acc, class Layout>
void expect_staged_same_bits(const std::size_t rows = 37, const std::size_t n = 1000) {
  auto x = make_vector<HostVec<S>>(wide_values(n, 21));
  auto y = make_vector<HostVec<S>>(wide_values(n, 22));
  auto x64 = make_vector<Plain>(stored(x)), y64 = make_vector<Plain>(stored(y));
  const double d = kacc::blas::dot<double, Acc>(Host(), x, y);
  const double d64 = kacc::blas::dot<double, Acc>(Host(), x64, y64);
  EXPECT_EQ(d, d64) << kacc::format_name<S>();
  auto A = make_matrix<HostMat<S, Layout>>(wide_values(rows * n, 23), rows, n);
  auto A64 = make_matrix<HostMat<double, Layout>>(stored(A), rows, n);
  // A (rows x n) with "N" and its transpose's storage with "T" both reduce along n.
  const bool k_contiguous = std::is_same<Layout, Kokkos::LayoutRight>::value;
  Plain out("out", rows), out64("out64", rows);
  if (k_contiguous) {
    kacc::blas::gemv<double, Acc>(Host(), "N", 1.0, A, x, 0.0, out);
    kacc::blas::gemv<double, Acc>(Host(), "N", 1.0, A64, x64, 0.0, out64);
  } else {
    auto At = make_matrix<HostMat<S, Layout>>(op(stored(A), rows, n, true), n, rows);
    auto At64 = make_matrix<HostMat<double, Layout>>(stored(At), n, rows);
    kacc::blas::gemv<double, Acc>(Host(), "T", 1.0, At, x, 0.0, out);
    kacc::blas::gemv<double, Acc>(Host(), "T", 1.0, At64, x64, 0.0, out64);
  }
  Host().fence();
  for (std::size_t i = 0; i < rows; ++i)
    EXPECT_EQ(out(i), out64(i)) << kacc::format_name<S>() << " row " << i;
}

// The column-walking GEMV shapes (LayoutLeft "N", LayoutRight "T": the host axpy shape),
// whose 16-bit columns are staged host_lanes rows at a time: by default 1000 rows (chunks
// and a partial group of 16) by 37 columns (groups of four and a remainder). Chunks hold
// more rows for narrower formats (4096 of 2 bytes, 1024 of fp64), so tall matrices give
// the same bits from chunks of different heights.
// Scaled formats may name the axis their scales run along (kacc::ScalePerRow).
template <class S, class Acc, class Layout, class... ScaleAxis>
void expect_staged_axpy_same_bits(const std::size_t rows = 1000, const std::size_t n = 37) {
  auto x = make_vector<HostVec<S>>(wide_values(n, 24));
  auto x64 = make_vector<Plain>(stored(x));
  const bool trans = std::is_same<Layout, Kokkos::LayoutRight>::value;
  const std::size_t r = trans ? n : rows, c = trans ? rows : n;
  using Matrix = kacc::View<double**, Layout, Kokkos::HostSpace, kacc::StoredAs<S>, ScaleAxis...>;
  auto A = make_matrix<Matrix>(wide_values(r * c, 25), r, c);
  auto A64 = make_matrix<HostMat<double, Layout>>(stored(A), r, c);
  Plain out("out", rows), out64("out64", rows);
  kacc::blas::gemv<double, Acc>(Host(), trans ? "T" : "N", 1.0, A, x64, 0.0, out);
  kacc::blas::gemv<double, Acc>(Host(), trans ? "T" : "N", 1.0, A64, x64, 0.0, out64);
  Host().fence();
  for (std::size_t i = 0; i < rows; ++i)
    EXPECT_EQ(out(i), out64(i)) << kacc::format_name<S>() << (trans ? " T" : " N") << " row " << i;
}

TEST(KernelShape, StagedBlockLoadsSameBitsAsPlainLoops) {
  expect_staged_axpy_same_bits<kacc::fp16, double, Kokkos::LayoutLeft>();
  expect_staged_axpy_same_bits<kacc::bf16, double, Kokkos::LayoutRight>();
  expect_staged_axpy_same_bits<kacc::fp16, kacc::compensated<double>, Kokkos::LayoutRight>();
  expect_staged_axpy_same_bits<kacc::bf16, kacc::compensated<double>, Kokkos::LayoutLeft>();
  // Two full chunks of 4096 rows per thread, and a short one.
  const std::size_t tall = 2 * static_cast<std::size_t>(Host().concurrency()) * 4096 + 37;
  expect_staged_axpy_same_bits<kacc::fp16, double, Kokkos::LayoutLeft>(tall, 6);
  expect_staged_axpy_same_bits<kacc::bf16, kacc::compensated<double>, Kokkos::LayoutRight>(tall, 5);
  expect_staged_axpy_same_bits<float, double, Kokkos::LayoutLeft>(tall, 7);
  // Columns enough for the column-walking shape to ask for columns ahead (a hint only).
  const std::size_t wide = kacc::blas::Impl::axpy_prefetch_columns + 27;
  expect_staged_axpy_same_bits<float, double, Kokkos::LayoutRight>(1000, wide);
  // fp32 with fp64 arithmetic and the formats with SIMD block loads walk axpy_pass_columns
  // columns per pass, then four, then one at a time.
  const std::size_t passes = 5 * kacc::blas::Impl::axpy_pass_columns + 4 + 3;
  expect_staged_axpy_same_bits<float, double, Kokkos::LayoutLeft>(1000, passes);
  expect_staged_axpy_same_bits<kacc::bf16, double, Kokkos::LayoutLeft>(1000, passes);
  expect_staged_axpy_same_bits<kacc::fp16, kacc::compensated<double>, Kokkos::LayoutRight>(1000,
                                                                                           passes);
  expect_staged_axpy_same_bits<kacc::fp16, double, Kokkos::LayoutLeft>(1000, wide);
  // Scaled matrices through the SIMD scaled decoders: columns of one scale each (LayoutLeft
  // "N" by default, LayoutRight "T" scaled per row), or a scale per entry along them.
  expect_staged_axpy_same_bits<kacc::scaled<std::int16_t>, double, Kokkos::LayoutLeft>();
  expect_staged_axpy_same_bits<kacc::scaled<std::int8_t>, double, Kokkos::LayoutRight>();
  expect_staged_axpy_same_bits<kacc::scaled<std::int32_t>, double, Kokkos::LayoutLeft,
                               kacc::ScalePerRow>();
  expect_staged_axpy_same_bits<kacc::scaled<std::int16_t>, kacc::compensated<double>,
                               Kokkos::LayoutRight, kacc::ScalePerRow>();
  expect_staged_axpy_same_bits<kacc::scaled<std::int8_t>, double, Kokkos::LayoutLeft>(tall, 6);
  expect_staged_axpy_same_bits<kacc::scaled<std::int32_t>, double, Kokkos::LayoutRight>(1000, wide);
  expect_staged_same_bits<kacc::fp16, double, Kokkos::LayoutRight>();
  expect_staged_same_bits<kacc::bf16, double, Kokkos::LayoutRight>();
  expect_staged_same_bits<kacc::fp16, double, Kokkos::LayoutLeft>();
  expect_staged_same_bits<kacc::bf16, kacc::compensated<double>, Kokkos::LayoutLeft>();
  expect_staged_same_bits<kacc::fp16, kacc::compensated<double>, Kokkos::LayoutRight>();
  // Rows many and long enough for the host dot shape to take kacc::blas::Impl::staged_rows
  // of them side by side (whole stages of prefetched_stage entries, blocks and a tail),
  // and a last, partial group.
  const std::size_t grouped =
      4 * kacc::blas::Impl::staged_rows * static_cast<std::size_t>(Host().concurrency()) + 5;
  const std::size_t long_rows = kacc::blas::Impl::side_by_side_entries + 300;
  expect_staged_same_bits<kacc::fp16, double, Kokkos::LayoutRight>(grouped, long_rows);
  expect_staged_same_bits<kacc::bf16, kacc::compensated<double>, Kokkos::LayoutLeft>(grouped,
                                                                                     long_rows);
  // fp32 matrices with fp64 arithmetic: kacc::blas::Impl::plain_rows rows side by side, as
  // their fp64 twins (whose lane order GemvRowsInLaneOrder checks).
  const std::size_t narrow_grouped =
      4 * kacc::blas::Impl::plain_rows * static_cast<std::size_t>(Host().concurrency()) + 3;
  expect_staged_same_bits<float, double, Kokkos::LayoutRight>(narrow_grouped, long_rows);
  expect_staged_same_bits<float, double, Kokkos::LayoutLeft>(narrow_grouped, long_rows);
  // Scaled vectors (one scale) stage x and y through their SIMD block loads; the matrices,
  // one scale per column (the default), take the plain loops.
  expect_staged_same_bits<kacc::scaled<std::int16_t>, double, Kokkos::LayoutRight>();
  expect_staged_same_bits<kacc::scaled<std::int8_t>, kacc::compensated<double>,
                          Kokkos::LayoutLeft>();
  expect_staged_same_bits<kacc::scaled<std::int32_t>, double, Kokkos::LayoutRight>();
  // Scaled matrices in fp64 arithmetic, plain_rows rows side by side through the SIMD
  // scaled decoders: LayoutRight rows scaled along their length (a scale per entry),
  // LayoutLeft "T" rows (columns) of one scale each, loaded all before the products.
  expect_staged_same_bits<kacc::scaled<std::int16_t>, double, Kokkos::LayoutRight>(narrow_grouped,
                                                                                   long_rows);
  expect_staged_same_bits<kacc::scaled<std::int16_t>, double, Kokkos::LayoutLeft>(narrow_grouped,
                                                                                  long_rows);
  expect_staged_same_bits<kacc::scaled<std::int8_t>, double, Kokkos::LayoutLeft>(narrow_grouped,
                                                                                 long_rows);
  expect_staged_same_bits<kacc::scaled<std::int32_t>, double, Kokkos::LayoutLeft>(narrow_grouped,
                                                                                  long_rows);
  expect_staged_same_bits<kacc::scaled<std::int32_t>, double, Kokkos::LayoutRight>(narrow_grouped,
                                                                                   long_rows);
}

// Plain sums in the arithmetic of the storage (fp64, fp32) in the host dot shape
// (LayoutRight "N", LayoutLeft "T"): each row's bits are those of 16 lanes, entry k's
// product added to lane k % 16 in the order of k, the lanes then joined pairwise, whether
// the rows go one at a time or kacc::blas::Impl::plain_rows side by side.
template <class T, class Layout>
void expect_rows_in_lane_order(const std::size_t rows, const std::size_t n) {
  constexpr int L = kacc::blas::Impl::host_lanes;
  const auto a = wide_values(rows * n, 31), xv = wide_values(n, 32);
  const bool k_contiguous = std::is_same<Layout, Kokkos::LayoutRight>::value;
  Kokkos::View<T**, Layout, Kokkos::HostSpace> A("A", k_contiguous ? rows : n,
                                                 k_contiguous ? n : rows);
  Kokkos::View<T*, Kokkos::HostSpace> x("x", n), y("y", rows);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t k = 0; k < n; ++k)
      (k_contiguous ? A(i, k) : A(k, i)) = static_cast<T>(a[i * n + k]);
  for (std::size_t k = 0; k < n; ++k) x(k) = static_cast<T>(xv[k]);
  kacc::blas::gemv<T, T>(Host(), k_contiguous ? "N" : "T", T(1), A, x, T(0), y);
  Host().fence();
  for (std::size_t i = 0; i < rows; ++i) {
    T lane[L] = {};
    for (std::size_t k = 0; k < n; ++k) {
      const T product = (k_contiguous ? A(i, k) : A(k, i)) * x(k);
      lane[k % L] += product;
    }
    for (int w = L / 2; w > 0; w /= 2)
      for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
    EXPECT_EQ(y(i), lane[0]) << (k_contiguous ? "N " : "T ") << sizeof(T) << "-byte row " << i;
  }
}

TEST(KernelShape, GemvRowsInLaneOrder) {
  const std::size_t grouped =
      4 * kacc::blas::Impl::plain_rows * static_cast<std::size_t>(Host().concurrency()) + 3;
  const std::size_t long_rows = kacc::blas::Impl::side_by_side_entries + 300;
  expect_rows_in_lane_order<double, Kokkos::LayoutRight>(grouped, long_rows);
  expect_rows_in_lane_order<double, Kokkos::LayoutLeft>(grouped, long_rows);
  expect_rows_in_lane_order<float, Kokkos::LayoutRight>(grouped, long_rows);
  expect_rows_in_lane_order<float, Kokkos::LayoutLeft>(grouped, long_rows);
  // Few or short rows: one at a time.
  expect_rows_in_lane_order<double, Kokkos::LayoutRight>(37, 1000);
  expect_rows_in_lane_order<float, Kokkos::LayoutLeft>(37, 1000);
}

// Rows of 0 to 96 entries, so the team shape's lanes see empty, short and long rows.
kacc::sparse::CooMatrix irregular_matrix(int rows, int cols) {
  kacc::sparse::CooMatrix coo;
  coo.num_rows = rows;
  coo.num_cols = cols;
  const auto v = random_values(static_cast<std::size_t>(rows) * 97, 21);
  std::size_t next = 0;
  for (int i = 0; i < rows; ++i) {
    const int length = (i * 37) % 97;
    for (int k = 0; k < length; ++k) {
      coo.row.push_back(i);
      coo.col.push_back((i + k * 13) % cols);
      coo.val.push_back(v[next++]);
    }
  }
  return coo;
}

template <shape Shape, class Acc>
void check_csr_row() {
  const int rows = 1000, cols = 1200;
  auto coo = irregular_matrix(rows, cols);
  auto A = kacc::sparse::make_csr<double, float, int, int, Host::device_type>(coo);
  auto x = make_vector<Plain>(random_values(cols, 22, distribution::normal));
  Plain y("y", rows);
  kacc::sparse::Impl::csr_row<double, Acc, Shape>("test_csr_row", Host(), 1.0, A, x, 0.0, y);
  Host().fence();
  // The exact products, row by row, from the matrix as stored.
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.row_map());
  auto cols_of = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), A.entries());
  Plain vals("vals", A.nnz());
  kacc::deep_copy(vals, A.values());
  const auto xs = stored(x);
  int misses = 0;
  for (int i = 0; i < rows; ++i) {
    std::vector<double> a, b;
    double abs = 0;
    for (int k = rm(i); k < rm(i + 1); ++k) {
      a.push_back(vals(k));
      b.push_back(xs[cols_of(k)]);
      abs += std::fabs(a.back() * b.back());
    }
    const double err = kacc_testing::exact_dot(a.size(), a.data(), b.data()).abs_error(y(i));
    if (!(err <= gamma(a.size() + 1, u64) * abs)) ++misses;
  }
  EXPECT_EQ(misses, 0);
}

TEST(KernelShape, CsrRowBothShapes) {
  check_csr_row<shape::team, double>();
  check_csr_row<shape::team, kacc::compensated<double>>();
  check_csr_row<shape::host, double>();
}

TEST(KernelShape, CsrVectorLanesFollowTheMeanRowLength) {
  // Powers of two from below, capped by the space's vector length (32 at most).
  const int most = kacc::Impl::vector_lanes<Host>();
  EXPECT_EQ(kacc::sparse::Impl::csr_vector_lanes<Host>(0.5), 1);
  EXPECT_EQ(kacc::sparse::Impl::csr_vector_lanes<Host>(3.9), std::min(2, most));
  EXPECT_EQ(kacc::sparse::Impl::csr_vector_lanes<Host>(27.0), std::min(16, most));
  EXPECT_EQ(kacc::sparse::Impl::csr_vector_lanes<Host>(1e6), std::min(32, most));
}

}  // namespace
