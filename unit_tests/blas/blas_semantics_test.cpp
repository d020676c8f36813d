// BLAS semantics, argument validation and the smaller kernels (axpy, scal, nrm2).
#include <kacc/blas/axpy.hpp>
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemm.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/blas/trsv.hpp>
#include <kacc_testing/exec_spaces.hpp>
#include <kacc_testing/rescaled.hpp>

#include "blas_reference.hpp"

#include <kacc_testing/invalid_argument.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using kacc_testing::expect_invalid_argument;

using namespace kacc_blas_ref;
using Vec16 = kacc::View<double*, kacc::StoredAs<kacc::fp16>>;
using Mat32 = kacc::View<double**, Kokkos::LayoutLeft, kacc::StoredAs<float>>;
const double nan = std::numeric_limits<double>::quiet_NaN();

TEST(BlasArguments, Rejected) {
  Mat32 A("A", 4, 3), S("S", 3, 3);
  kacc::View<double*> x3("x", 3), y4("y", 4), y5("y", 5);
  Kokkos::View<float*> f3("f", 3);
  expect_invalid_argument([&] { kacc::blas::dot(x3, y4); }, "kacc::blas::dot", "(4)");
  expect_invalid_argument([&] { kacc::blas::axpy(1.0, x3, y4); }, "kacc::blas::axpy", "(3)");
  expect_invalid_argument([&] { kacc::blas::gemv("N", 1.0, A, x3, 0.0, y5); }, "kacc::blas::gemv",
                          "(4,3)");
  expect_invalid_argument([&] { kacc::blas::gemv("T", 1.0, A, x3, 0.0, y4); }, "kacc::blas::gemv",
                          "extent 4");
  expect_invalid_argument([&] { kacc::blas::gemv("X", 1.0, A, x3, 0.0, y4); }, "kacc::blas::gemv",
                          "trans");
  expect_invalid_argument([&] { kacc::blas::gemv("NN", 1.0, A, x3, 0.0, y4); }, "kacc::blas::gemv",
                          "trans");
  expect_invalid_argument([&] { kacc::blas::gemv("N", 1.0, S, x3, 0.0, x3); }, "kacc::blas::gemv",
                          "aliases x");
  auto col = kacc::subview(S, Kokkos::ALL(), 0);
  expect_invalid_argument([&] { kacc::blas::gemv("N", 1.0, S, f3, 0.0, col); }, "kacc::blas::gemv",
                          "aliases A");
  expect_invalid_argument([&] { kacc::blas::trsv("L", "N", "N", A, x3); }, "kacc::blas::trsv",
                          "square");
  expect_invalid_argument([&] { kacc::blas::trsv("L", "N", "N", S, y4); }, "kacc::blas::trsv",
                          "(4)");
  expect_invalid_argument([&] { kacc::blas::trsv("Q", "N", "N", S, x3); }, "kacc::blas::trsv",
                          "uplo");
  expect_invalid_argument([&] { kacc::blas::trsv("L", "Q", "N", S, x3); }, "kacc::blas::trsv",
                          "trans");
  expect_invalid_argument([&] { kacc::blas::trsv("L", "N", "Q", S, x3); }, "kacc::blas::trsv",
                          "diag");
}

// Writes into a scaled y that do not fit its scale saturate and are flagged; under
// overflow::throw_on_host the entry point throws after its kernels.
TEST(BlasSemantics, ScaledOutputsFlagOrThrowOnSaturation) {
  using Int8s = kacc::scaled<std::int8_t>;
  Kokkos::View<double*> x("x", 4), big("big", 4);
  Kokkos::deep_copy(x, 1.0);
  Kokkos::deep_copy(big, 100.0);
  kacc::View<double*, kacc::StoredAs<Int8s>> y("y", 4);  // scale 1: up to 127
  kacc::blas::axpy(1.0, x, y);
  EXPECT_FALSE(y.saturated());
  kacc::blas::axpy(1.0, big, y);  // 101: fits
  EXPECT_FALSE(y.saturated());
  kacc::blas::axpy(1.0, big, y);  // 201: saturates at 127
  EXPECT_TRUE(y.saturated());
  auto y_host = kacc::create_mirror_view(y);  // a copy only where y is not host memory
  kacc::deep_copy(y_host, y);
  EXPECT_EQ(y_host(0).get(), 127.0);
  kacc::View<double*, kacc::StoredAs<Int8s, kacc::overflow::throw_on_host>> t("t", 4);
  kacc::blas::axpy(100.0, x, t);
  try {
    kacc::blas::axpy(100.0, x, t);
    ADD_FAILURE() << "no std::overflow_error";
  } catch (const std::overflow_error& e) {
    EXPECT_NE(std::string(e.what()).find("kacc::blas::axpy: a write into y ('t')"),
              std::string::npos)
        << e.what();
  }
  t.clear_saturated();
  Mat32 A("A", 4, 4);
  Kokkos::deep_copy(A.storage(), 50.0f);
  EXPECT_THROW(kacc::blas::gemv("N", 1.0, A, x, 0.0, t), std::overflow_error);  // 200
  t.clear_saturated();
  kacc::blas::gemv("N", 0.5, A, x, 0.0, t);  // 100: fits
  kacc::blas::scal(1.0, t);
  EXPECT_THROW(kacc::blas::scal(2.0, t), std::overflow_error);
}

// Under overflow::rescale_on_host a write that does not fit leaves the output holding the
// result with re-picked scales (kacc_testing::expect_rescaled: the fp64 reference within
// half a step, each scale the smallest power of two, the flag clear). The data are
// integers, so the fp64 references are exact. Outputs that are read (axpy, scal, beta = 1,
// trsv) hold values whose loss the results would show.
template <class I>
using RescaledVec =
    kacc::View<double*, kacc::StoredAs<kacc::scaled<I>, kacc::overflow::rescale_on_host>>;

TEST(BlasRescale, AxpyAndScalRescaleInsteadOfSaturating) {
  auto y = make_vector<RescaledVec<std::int8_t>>({100, -3, 7, 51});  // scale 1
  ASSERT_EQ(kacc_testing::scales_of(y), std::vector<double>{1.0});
  kacc::blas::axpy(1.0, make_vector<Kokkos::View<double*>>({1, 1, 1, 1}), y);
  EXPECT_EQ(stored(y), (std::vector<double>{101, -2, 8, 52})) << "fits: stored as it is";
  EXPECT_EQ(kacc_testing::scales_of(y), std::vector<double>{1.0}) << "fits: scale kept";
  EXPECT_FALSE(y.saturated());
  kacc::blas::axpy(1.0, make_vector<Kokkos::View<double*>>({100, 1, 1, 1}), y);
  kacc_testing::expect_rescaled(y, {201, -1, 9, 53});               // scale 2
  auto x = make_vector<RescaledVec<std::int16_t>>({30000, -1, 3});  // scale 1
  kacc::blas::scal(4.0, x);
  kacc_testing::expect_rescaled(x, {120000, -4, 12});  // scale 4
  kacc::blas::scal(0.0, x);
  EXPECT_EQ(stored(x), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(kacc_testing::scales_of(x), std::vector<double>{4.0}) << "fits: scale kept";
  // float arithmetic: the workspace computes in float too.
  using FloatVec =
      kacc::View<float*,
                 kacc::StoredAs<kacc::scaled<std::int32_t>, kacc::overflow::rescale_on_host>>;
  auto f = make_vector<FloatVec>({1e9, 3, -5});
  kacc::blas::axpy(2.0f, make_vector<Kokkos::View<float*>>({1e9, 0, 0}), f);
  kacc_testing::expect_rescaled(f, {3e9, 3, -5});
}

// A flag raised before the call (by a user's own kernel, say) does not make a write that
// fits re-scale, and stays raised.
TEST(BlasRescale, FlagRaisedBeforeTriggersNoRescale) {
  auto y = make_vector<RescaledVec<std::int8_t>>({200, -4, 8, 52});  // scale 2
  Kokkos::deep_copy(y.scale_state().saturated, 1);
  kacc::blas::axpy(1.0, make_vector<Kokkos::View<double*>>({-100, 2, 2, 2}), y);
  EXPECT_EQ(stored(y), (std::vector<double>{100, -2, 10, 54}));
  // A re-scale would have picked 1.
  EXPECT_EQ(kacc_testing::scales_of(y), std::vector<double>{2.0}) << "fits: scale kept";
  EXPECT_TRUE(y.saturated());
}

TEST(BlasRescale, GemvRescalesWithAndWithoutBeta) {
  const auto A = make_matrix<Kokkos::View<double**>>({1e9, 1e9, 2, 3, 4, 5}, 3, 2);
  const auto x = make_vector<Kokkos::View<double*>>({1, 1});
  auto y = make_vector<RescaledVec<std::int32_t>>({2e9, 1, -5});  // scale 1
  kacc::blas::gemv("N", 1.0, A, x, 1.0, y);
  kacc_testing::expect_rescaled(y, {4e9, 6, 4});  // scale 2
  kacc::blas::gemv("N", 0.5, A, x, 0.0, y);       // 1e9, 2.5, 4.5 fit at 2: kept
  EXPECT_EQ(stored(y), (std::vector<double>{1e9, 2, 4}));
  EXPECT_EQ(kacc_testing::scales_of(y), std::vector<double>{2.0});
  auto yt = make_vector<RescaledVec<std::int8_t>>({1, 1});
  kacc::blas::gemv("T", 1.0, make_matrix<Kokkos::View<double**>>({100, 1, 100, 2}, 2, 2), x, 0.0,
                   yt);
  kacc_testing::expect_rescaled(yt, {200, 3});
}

template <class CV>
void check_gemm_rescales() {
  const auto A = make_matrix<Kokkos::View<double**>>({1000, 0, 0, 1, 1, 1}, 3, 2);
  const auto B = make_matrix<Kokkos::View<double**>>({40, 1, 2, 3, 5, 6, 7, 8}, 2, 4);
  const std::vector<double> c0 = {1, 2, 3, 4, 5, 6, 7, 8, -9, 10, 11, 12};
  auto C = make_matrix<CV>(c0, 3, 4);
  const auto scales0 = kacc_testing::scales_of(C);
  kacc::blas::gemm("N", "N", 0.0, A, B, 1.0, C);
  EXPECT_EQ(stored(C), c0);
  EXPECT_EQ(kacc_testing::scales_of(C), scales0) << "fits: scales kept";
  kacc::blas::gemm("N", "N", 1.0, A, B, 1.0, C);
  kacc_testing::expect_rescaled(C, {40001, 1002, 2003, 3004, 10, 12, 14, 16, 36, 17, 20, 23});
  kacc::blas::gemm("N", "N", 2.0, A, B, 0.0, C);  // 80000 saturates again
  kacc_testing::expect_rescaled(C, {80000, 2000, 4000, 6000, 10, 12, 14, 16, 90, 14, 18, 22});
}

TEST(BlasRescale, GemmRescalesPerRowAndPerColumn) {
  using Int16R = kacc::StoredAs<kacc::scaled<std::int16_t>, kacc::overflow::rescale_on_host>;
  check_gemm_rescales<kacc::View<double**, Kokkos::LayoutLeft, Int16R, kacc::ScalePerRow>>();
  check_gemm_rescales<kacc::View<double**, Kokkos::LayoutRight, Int16R, kacc::ScalePerRow>>();
  check_gemm_rescales<kacc::View<double**, Kokkos::LayoutLeft, Int16R, kacc::ScalePerColumn>>();
  check_gemm_rescales<kacc::View<double**, Kokkos::LayoutRight, Int16R, kacc::ScalePerColumn>>();
  check_gemm_rescales<kacc::View<double**, Kokkos::LayoutLeft, Int16R, kacc::OneScale>>();
  // A block of rows of a per-row matrix owns its scales.
  using PerRow = kacc::View<double**, Kokkos::LayoutLeft, Int16R, kacc::ScalePerRow>;
  auto C = make_matrix<PerRow>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 3, 4);
  const double row2_scale = kacc_testing::scales_of(C)[2];
  auto block = kacc::subview(C, Kokkos::make_pair(0, 2), Kokkos::ALL);
  kacc::blas::gemm("N", "N", 1.0, make_matrix<Kokkos::View<double**>>({1000, 0, 0, 1}, 2, 2),
                   make_matrix<Kokkos::View<double**>>({40, 1, 2, 3, 5, 6, 7, 8}, 2, 4), 1.0,
                   block);
  kacc_testing::expect_rescaled(block, {40001, 1002, 2003, 3004, 10, 12, 14, 16});
  EXPECT_EQ(kacc_testing::scales_of(C)[2], row2_scale);
  const auto all = stored(C);
  EXPECT_EQ(std::vector<double>(all.begin() + 8, all.end()), (std::vector<double>{9, 10, 11, 12}));
}

TEST(BlasRescale, TrsvRescalesTheSolution) {
  // L x = b with 1 on the diagonal and -2 below it: x(i) = b(i) + 2 x(i - 1) = 2^(i+1) - 1.
  const std::size_t n = 20;
  std::vector<double> l(n * n, 0.0), want(n);
  for (std::size_t i = 0; i < n; ++i) {
    l[i * n + i] = 1;
    if (i > 0) l[i * n + i - 1] = -2;
    want[i] = std::ldexp(1.0, static_cast<int>(i) + 1) - 1;
  }
  const auto L = make_matrix<Kokkos::View<double**>>(l, n, n);
  auto b = make_vector<RescaledVec<std::int16_t>>(std::vector<double>(n, 1.0));
  kacc::blas::trsv("L", "N", "N", L, b);
  kacc_testing::expect_rescaled(b, want);
}

// A subview that shares its scales with entries outside it cannot re-pick them: writes
// saturate and raise the flag. A column of a per-column matrix has its scale to itself.
TEST(BlasRescale, SubviewsRescaleOnlyTheScalesTheyOwn) {
  using M = kacc::View<double**, Kokkos::LayoutLeft,
                       kacc::StoredAs<kacc::scaled<std::int16_t>, kacc::overflow::rescale_on_host>>;
  const std::vector<double> m0 = {1, 2, 3, 4, 5, 6};
  auto m = make_matrix<M>(m0, 3, 2);
  const auto scales0 = kacc_testing::scales_of(m);
  const auto big = make_vector<Kokkos::View<double*>>({1e6, 1e6});
  kacc::blas::axpy(1.0, big, kacc::subview(m, 0, Kokkos::ALL));
  EXPECT_TRUE(m.saturated()) << "a row shares its column scales: saturated and counted";
  EXPECT_EQ(kacc_testing::scales_of(m), scales0);
  const double top = 32767;
  EXPECT_EQ(stored(m), (std::vector<double>{top * scales0[0], top * scales0[1], 3, 4, 5, 6}));
  m = make_matrix<M>(m0, 3, 2);
  kacc::blas::axpy(1.0, make_vector<Kokkos::View<double*>>({1e6, 0, 0}),
                   kacc::subview(m, Kokkos::ALL, 1));
  EXPECT_FALSE(m.saturated());
  EXPECT_EQ(kacc_testing::scales_of(m)[0], scales0[0]) << "column 0 is not written";
  kacc_testing::expect_rescaled(m, {1, 1e6 + 2, 3, 4, 5, 6});
  // A row of a per-row matrix owns its scale; in LayoutLeft it is strided (the workspace
  // is then LayoutLeft).
  using PerRow =
      kacc::View<double**, Kokkos::LayoutLeft,
                 kacc::StoredAs<kacc::scaled<std::int16_t>, kacc::overflow::rescale_on_host>,
                 kacc::ScalePerRow>;
  auto p = make_matrix<PerRow>(m0, 3, 2);
  const auto row_scales0 = kacc_testing::scales_of(p);
  auto row = kacc::subview(p, 1, Kokkos::ALL);
  static_assert(std::is_same<decltype(row)::array_layout, Kokkos::LayoutStride>::value,
                "a row of a LayoutLeft matrix is strided");
  kacc::blas::gemv("N", 1.0, make_matrix<Kokkos::View<double**>>({1e6, 0, 0, 1}, 2, 2),
                   make_vector<Kokkos::View<double*>>({1, 1}), 1.0, row);
  EXPECT_EQ(kacc_testing::scales_of(p)[0], row_scales0[0]);
  EXPECT_EQ(kacc_testing::scales_of(p)[2], row_scales0[2]);
  kacc_testing::expect_rescaled(p, {1, 2, 1e6 + 3, 5, 5, 6});
}

// NaN and infinity fit no scale: the finite results are re-scaled, the others stored as
// under saturate (NaN as 0, inf as the largest value) and flagged.
TEST(BlasRescale, NonFiniteResultsSaturateAndAreFlagged) {
  auto y = make_vector<RescaledVec<std::int8_t>>({1, 2, 3});
  const double inf = std::numeric_limits<double>::infinity();
  kacc::blas::axpy(1.0, make_vector<Kokkos::View<double*>>({nan, 1000, inf}), y);
  EXPECT_TRUE(y.saturated());
  EXPECT_EQ(kacc_testing::scales_of(y), std::vector<double>{8.0});  // 1002 / 8 <= 127
  EXPECT_EQ(stored(y), (std::vector<double>{0, 1000, 127 * 8}));
}

// The first run counts saturation in a flag of its own: what earlier writes left in the
// view's flag is kept, and a re-scaled write does not raise it.
TEST(BlasRescale, EarlierSaturationStaysCounted) {
  auto y = make_vector<RescaledVec<std::int8_t>>({1, 2});
  Kokkos::deep_copy(y.scale_state().saturated, 1);
  kacc::blas::axpy(1.0, make_vector<Kokkos::View<double*>>({1000, 0}), y);
  EXPECT_TRUE(y.saturated());
  EXPECT_EQ(stored(y), (std::vector<double>{1000, 0}));  // 1001 / 8 -> 125, 2 / 8 -> 0
  y.clear_saturated();
  kacc::blas::axpy(1.0, make_vector<Kokkos::View<double*>>({10000, 0}), y);
  kacc_testing::expect_rescaled(y, {11000, 0});
}

TEST(BlasSemantics, BetaZeroDoesNotReadY) {
  auto A = make_matrix<Mat32>({1, 2, 3, 4, 5, 6}, 2, 3);
  auto x = make_vector<Vec16>({1, 1, 1});
  auto y = make_vector<kacc::View<double*>>({nan, nan});
  kacc::blas::gemv("N", 2.0, A, x, 0.0, y);
  EXPECT_EQ(stored(y), (std::vector<double>{12, 30}));
  kacc::blas::gemv("n", 1.0, A, x, 1.0, y);  // beta = 1 adds
  EXPECT_EQ(stored(y), (std::vector<double>{18, 45}));
  auto yt = make_vector<Kokkos::View<float*>>({nan, nan, nan});
  auto x2 = make_vector<Kokkos::View<double*>>({1, -1});
  kacc::blas::gemv("t", 1.0, A, x2, 0.0, yt);
  EXPECT_EQ(stored(yt), (std::vector<double>{-3, -3, -3}));
}

TEST(BlasSemantics, AlphaZeroSkipsAEmptyIsNoOp) {
  auto A = make_matrix<Kokkos::View<double**>>({nan, nan, nan, nan}, 2, 2);
  auto x = make_vector<Kokkos::View<double*>>({nan, 1});
  auto y = make_vector<kacc::View<double*, kacc::StoredAs<kacc::bf16>>>({1, 2});
  kacc::blas::gemv("N", 0.0, A, x, 3.0, y);
  EXPECT_EQ(stored(y), (std::vector<double>{3, 6}));
  kacc::blas::gemv("N", 0.0, A, x, 0.0, y);
  EXPECT_EQ(stored(y), (std::vector<double>{0, 0}));
  Kokkos::View<double**> E("E", 2, 0);
  Kokkos::View<double*> e("e", 0);
  auto y2 = make_vector<Kokkos::View<double*>>({nan, 5});
  kacc::blas::gemv("N", 1.0, E, e, 0.0, y2);  // n == 0: y untouched, as reference BLAS
  EXPECT_TRUE(std::isnan(stored(y2)[0]));
  EXPECT_EQ(kacc::blas::dot(e, e), 0.0);
  Kokkos::View<double**> Z("Z", 0, 0);
  kacc::blas::trsv("U", "T", "N", Z, e);
  EXPECT_EQ(kacc::blas::nrm2(e), 0.0);
}

TEST(BlasSemantics, TrsvZeroPivotGivesIeeeResults) {
  auto A = make_matrix<Mat32>({1, 0, 0, 2, 0, 0, 3, 4, 5}, 3, 3);
  auto b = make_vector<kacc::View<double*>>({1, 1, 1});
  kacc::blas::trsv("L", "N", "N", A, b);
  const auto x = stored(b);
  EXPECT_EQ(x[0], 1.0);
  EXPECT_TRUE(std::isinf(x[1]));
  EXPECT_FALSE(std::isfinite(x[2]));
}

// The host shape inverts diagonal blocks; a block with a zero pivot must still give the
// substitution's results: rows before the pivot exact, inf at the pivot (an inverse
// would give inf - inf = NaN there), then 0 * inf = NaN as in reference BLAS.
TEST(BlasSemantics, TrsvZeroPivotInALaterBlockGivesIeeeResults) {
  const std::size_t n = 200;
  std::vector<double> a(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) a[i * n + i] = 1;
  a[130 * n + 130] = 0;
  a[130 * n + 0] = 2;
  auto A = make_matrix<Mat32>(a, n, n);
  auto b = make_vector<kacc::View<double*>>(std::vector<double>(n, 1.0));
  kacc::blas::trsv("L", "N", "N", A, b);
  const auto x = stored(b);
  EXPECT_EQ(x[127], 1.0);
  EXPECT_EQ(x[129], 1.0);
  EXPECT_EQ(x[130], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(x[131]));
}

TEST(BlasSemantics, AxpyScalNrm2) {
  auto x = make_vector<Vec16>({1, 2, 3, 4});
  auto y = make_vector<Kokkos::View<float*>>({1, 1, 1, 1});
  kacc::blas::axpy(0.5, x, y);
  EXPECT_EQ(stored(y), (std::vector<double>{1.5, 2, 2.5, 3}));
  kacc::blas::scal(2.0, x);
  EXPECT_EQ(stored(x), (std::vector<double>{2, 4, 6, 8}));
  auto z = make_vector<kacc::View<double*>>({nan, 1});
  kacc::blas::scal(0.0, z);
  EXPECT_EQ(stored(z), (std::vector<double>{0, 0}));
  EXPECT_DOUBLE_EQ(kacc::blas::nrm2(x), std::sqrt(4.0 + 16 + 36 + 64));
  auto big = make_vector<Kokkos::View<double*>>({3e200, 4e200});
  EXPECT_DOUBLE_EQ(kacc::blas::nrm2(big), 5e200);
  auto tiny = make_vector<Kokkos::View<double*>>({3e-200, 4e-200});
  EXPECT_DOUBLE_EQ(kacc::blas::nrm2(tiny), 5e-200);
}

// A NaN anywhere gives NaN, even with an inf elsewhere and larger entries after it (the
// maximum of the scaled pass once lost a NaN that a later entry replaced).
TEST(BlasSemantics, Nrm2NanWinsOverInf) {
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t at : {0u, 500u, 999u}) {
    std::vector<double> v(1000, 2.0);
    v[999 - at] = inf;
    v[at] = nan;
    EXPECT_TRUE(std::isnan(kacc::blas::nrm2(make_vector<Kokkos::View<double*>>(v)))) << at;
    v[at] = 1.0;
    EXPECT_EQ(kacc::blas::nrm2(make_vector<Kokkos::View<double*>>(v)), inf) << at;
  }
}

// The accumulation type is a template parameter: a compensated sum recovers what a plain
// fp64 sum loses to cancellation.
TEST(BlasAccumulator, CompensatedDot) {
  const std::size_t n = 10000;
  std::vector<double> a(n), b(n, 1.0);
  for (std::size_t i = 0; i < n; ++i) a[i] = (i % 2 ? -1e16 : 1e16) + (i % 3 == 0 ? 1.0 : 0.0);
  const double exact = kacc_testing::exact_dot(n, a.data(), b.data()).rounded();
  auto x = make_vector<Kokkos::View<double*>>(a);
  auto y = make_vector<Kokkos::View<double*>>(b);
  const double c = kacc::blas::dot<double, kacc::compensated<double>>(x, y);
  EXPECT_EQ(c, exact);
  auto v = make_vector<kacc::View<double*, kacc::StoredAs<float>>>(random_values(3001, 8));
  const auto vs = stored(v);
  EXPECT_EQ((kacc::blas::nrm2<double, kacc::compensated<double>>(v)),
            std::sqrt(kacc_testing::exact_dot(vs.size(), vs.data(), vs.data()).rounded()));
}

// Explicit arithmetic type: fp16 storage computed in fp32; strided vectors.
TEST(BlasTypes, ExplicitArithmeticAndStrides) {
  auto x = make_vector<Vec16>({1, 2, 3});
  auto y = make_vector<Vec16>({4, 5, 6});
  const auto r = kacc::blas::dot<float>(x, y);
  static_assert(std::is_same<std::remove_const_t<decltype(r)>, float>::value, "arith type");
  EXPECT_EQ(r, 32.0f);
  Kokkos::View<double**, Kokkos::LayoutRight> M("M", 3, 2);
  auto hM = Kokkos::create_mirror_view(M);
  for (int i = 0; i < 3; ++i) hM(i, 0) = i + 1, hM(i, 1) = 10;
  Kokkos::deep_copy(M, hM);
  auto strided = Kokkos::subview(M, Kokkos::ALL(), 0);  // LayoutStride
  EXPECT_EQ(kacc::blas::dot(strided, x), 14.0);
}

template <class Exec>
class BlasSpaces : public ::testing::Test {};
TYPED_TEST_SUITE(BlasSpaces, kacc_testing::ExecSpaces);

// Every enabled execution space runs the same kernels with an explicit instance.
TYPED_TEST(BlasSpaces, GemvAndTrsvWithExec) {
  using Mem = typename TypeParam::memory_space;
  TypeParam exec;
  const std::size_t n = 70;
  const auto Ad = random_values(n * n, 5);
  auto A =
      make_matrix<kacc::View<double**, Kokkos::LayoutRight, Mem, kacc::StoredAs<float>>>(Ad, n, n);
  auto x = make_vector<kacc::View<double*, Mem>>(random_values(n, 6));
  kacc::View<double*, Mem> y("y", n);
  kacc::blas::gemv(exec, "N", 1.0, A, x, 0.0, y);
  kacc::blas::trsv(exec, "U", "N", "N", A, y);  // y = U^{-1} A x
  exec.fence();
  const auto As = stored(A), ys = stored(y);
  const auto ref = exact_matvec(As, n, n, stored(x));
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0, abs = 0;
    for (std::size_t k = i; k < n; ++k)
      s += As[i * n + k] * ys[k], abs += std::fabs(As[i * n + k] * ys[k]);
    EXPECT_NEAR(s, ref[i], 1e-12 * abs);
  }
  // DOT and NRM2 each against the exact sum of squares (not against each other: two
  // kernels wrong the same way would agree).
  const auto xs = stored(x);
  const double u = 0x1p-53;
  const auto sum_squares = kacc_testing::exact_dot(n, xs.data(), xs.data());
  EXPECT_LE(sum_squares.abs_error(kacc::blas::dot(exec, x, x)),
            gamma(n, u) * sum_squares.rounded());
  const double norm = std::sqrt(sum_squares.rounded());
  EXPECT_LE(std::fabs(kacc::blas::nrm2(exec, x) - norm), (gamma(n, u) + 2 * u) * norm);
}

}  // namespace
