// Scaled integer storage: deep_copy picks for each vector or column the smallest power of
// two that maps its largest magnitude into the integer range (format_traits::scale_for),
// so encoding divides exactly and rounds once: every entry is within half a scale step of
// its source, |x - x~| <= scale / 2, with no further term. Encoding is checked against
// MPFR's ties-to-even rounding at every rounding boundary of int8 and on 10^7 random
// values each for int16 and int32.
#include <kacc/core.hpp>
#include <kacc_testing/invalid_argument.hpp>
#include <kacc_testing/rescaled.hpp>

#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using Host = Kokkos::HostSpace;
using Int16s = kacc::scaled<std::int16_t>;
constexpr double largest = 32767;

// The scale deep_copy must pick for largest magnitude m > 0, found by counting up from
// T's smallest normal in powers of two (m / s is exact): the smallest power of two s with
// m / s <= top, top being the largest integer that both T and the format hold.
template <class T>
T reference_scale(T m, double top = largest) {
  double s = std::numeric_limits<T>::min();
  while (static_cast<double>(m) / s > top) s *= 2;
  return static_cast<T>(s);
}

// |x - x~| <= scale / 2 exactly: the scale is a power of two, the division exact and the
// integer times the scale exact in T (int16 fits float's and double's mantissa).
double half_step(double scale) {
  return scale / 2;
}

template <class T>
std::vector<T> random_values(std::size_t n, double magnitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-magnitude, magnitude);
  std::vector<T> xs(n);
  for (auto& x : xs) x = static_cast<T>(u(rng));
  return xs;
}

}  // namespace

template <class T>
class Scaled : public ::testing::Test {};
using Arithmetics = ::testing::Types<double, float>;
TYPED_TEST_SUITE(Scaled, Arithmetics);

TYPED_TEST(Scaled, Rank1RoundTripsWithinHalfAScaleStep) {
  using T = TypeParam;
  const std::size_t n = 1000;
  for (double magnitude : {1e-3, 1.0, 3.7e5}) {
    SCOPED_TRACE(magnitude);
    const auto xs = random_values<T>(n, magnitude, 7);
    Kokkos::View<T*, Host> src("src", n);
    T maxabs = 0;
    std::size_t argmax = 0;
    for (std::size_t i = 0; i < n; ++i) {
      src(i) = xs[i];
      if (std::fabs(xs[i]) > maxabs) maxabs = std::fabs(xs[i]), argmax = i;
    }
    kacc::View<T*, Host, kacc::StoredAs<Int16s>> q("q", n);
    kacc::deep_copy(q, src);
    ASSERT_EQ(q.scales().extent(0), 1u);
    const T scale = q.scales()(0);
    EXPECT_EQ(scale, reference_scale(maxabs));
    // The largest magnitude takes at least half the integer range.
    EXPECT_GE(std::abs(q.storage()(argmax)), 16384);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(q.scale_at(i), scale);
      const double err = std::fabs(static_cast<double>(q(i).get()) - xs[i]);
      worst = std::max(worst, err / scale);
      EXPECT_LE(err, half_step(scale)) << "i=" << i << " x=" << xs[i];
    }
    // The bound is attained closely: uniform data gets within 1% of half a step.
    EXPECT_GT(worst, 0.49);
  }
}

template <class T, class Layout>
void check_per_column(std::size_t n, std::size_t m) {
  SCOPED_TRACE(std::string(typeid(Layout).name()));
  Kokkos::View<T**, Layout, Host> src("src", n, m);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  // Column magnitudes span 10 orders; column 2 is all zero.
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t i = 0; i < n; ++i)
      src(i, j) = j == 2 ? T(0) : static_cast<T>(u(rng) * std::pow(10.0, 2.0 * j - 4));
  kacc::View<T**, Layout, Host, kacc::StoredAs<Int16s>> q("q", n, m);
  kacc::deep_copy(q, src);
  ASSERT_EQ(q.scales().extent(0), m);
  for (std::size_t j = 0; j < m; ++j) {
    T maxabs = 0;
    for (std::size_t i = 0; i < n; ++i) maxabs = std::max(maxabs, T(std::fabs(src(i, j))));
    const T scale = q.scales()(j);
    if (j == 2) {
      EXPECT_EQ(scale, T(1)) << "an all-zero column gets scale 1";
    } else {
      EXPECT_EQ(scale, reference_scale(maxabs)) << "column " << j;
    }
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(q.scale_at(i, j), scale);
      const double x = src(i, j);
      EXPECT_LE(std::fabs(static_cast<double>(q(i, j).get()) - x), half_step(scale))
          << "(" << i << ", " << j << ")";
    }
  }
  // And back to plain storage in another format.
  Kokkos::View<double**, Kokkos::LayoutRight, Host> back("back", n, m);
  kacc::deep_copy(back, q);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back(i, j), static_cast<double>(q(i, j).get()));
}

TYPED_TEST(Scaled, Rank2GetsOneScalePerColumn) {
  check_per_column<TypeParam, Kokkos::LayoutLeft>(300, 6);
  check_per_column<TypeParam, Kokkos::LayoutRight>(17, 5);
}

TYPED_TEST(Scaled, Rank3ScalesFollowTheLastIndex) {
  using T = TypeParam;
  Kokkos::View<T***, Host> src("src", 3, 4, 2);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 2; ++k) src(i, j, k) = static_cast<T>((i - 1.3 * j) * (k ? 1000 : 1));
  kacc::View<T***, Host, kacc::StoredAs<Int16s>> q("q", 3, 4, 2);
  kacc::deep_copy(q, src);
  ASSERT_EQ(q.scales().extent(0), 2u);
  for (int k = 0; k < 2; ++k) {
    T maxabs = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) maxabs = std::max(maxabs, T(std::fabs(src(i, j, k))));
    EXPECT_EQ(q.scales()(k), reference_scale(maxabs));
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 2; ++k) {
        const double x = src(i, j, k);
        EXPECT_LE(std::fabs(q(i, j, k).get() - x), half_step(q.scales()(k)));
      }
}

TYPED_TEST(Scaled, AllZeroVectorGetsScaleOne) {
  using T = TypeParam;
  Kokkos::View<T*, Host> zeros("zeros", 5);
  kacc::View<T*, Host, kacc::StoredAs<Int16s>> q("q", 5);
  q.scales()(0) = T(0.25);
  kacc::deep_copy(q, zeros);
  EXPECT_EQ(q.scales()(0), T(1));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(q(i).get(), T(0));
}

TEST(Scaled, NonFiniteDataThrows) {
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  const auto inf = std::numeric_limits<double>::infinity();
  for (double bad : {nan, inf, -inf}) {
    SCOPED_TRACE(bad);
    Kokkos::View<double*, Host> v("v", 4);
    v(2) = bad;
    kacc::View<double*, Host, kacc::StoredAs<Int16s>> q("q", 4);
    EXPECT_THROW(kacc::deep_copy(q, v), std::invalid_argument);
    Kokkos::View<double**, Host> a("a", 3, 3);
    a(1, 2) = bad;
    a(0, 0) = 5;
    kacc::View<double**, Host, kacc::StoredAs<Int16s>> qa("qa", 3, 3);
    EXPECT_THROW(kacc::deep_copy(qa, a), std::invalid_argument);
  }
  const std::string m = kacc_testing::invalid_argument_message([] {
    Kokkos::View<float**, Host> a("a", 2, 2);
    a(0, 1) = std::numeric_limits<float>::infinity();
    kacc::View<float**, Host, kacc::StoredAs<Int16s>> qa("qa", 2, 2);
    kacc::deep_copy(qa, a);
  });
  EXPECT_NE(m.find("kacc::deep_copy"), std::string::npos) << m;
  EXPECT_NE(m.find("non-finite"), std::string::npos) << m;
}

TEST(Scaled, HandSetScalesRoundAndSaturate) {
  kacc::View<double*, Host, kacc::StoredAs<Int16s>> q("q", 6);
  EXPECT_EQ(q.scales()(0), 1.0) << "scales start at 1";
  q.scales()(0) = 0.125;
  q(0) = 3.0;
  q(1) = 1e9;
  q(2) = -1e9;
  q(3) = std::numeric_limits<double>::quiet_NaN();
  q(4) = 0.3;
  q(5) = -0.3;
  EXPECT_EQ(q.storage()(0), 24);
  EXPECT_EQ(q(0).get(), 3.0);
  EXPECT_EQ(q.storage()(1), 32767);
  EXPECT_EQ(q.storage()(2), -32767) << "symmetric range";
  EXPECT_EQ(q.storage()(3), 0) << "NaN is stored as 0";
  EXPECT_EQ(q.storage()(4), 2);  // 0.3 / 0.125 = 2.4
  EXPECT_EQ(q.storage()(5), -2);
  EXPECT_EQ(q(1).get(), 32767 * 0.125);
  q(0) += 1.0;
  EXPECT_EQ(q(0).get(), 4.0);
  q(0) *= 0.5;
  EXPECT_EQ(q.storage()(0), 16);
  // A scaled proxy carries the scale and the view's saturation flag next to the pointer.
  EXPECT_EQ(sizeof(q(0)), sizeof(void*) + sizeof(double) + sizeof(int*));
  EXPECT_TRUE(q.saturated()) << "1e9, -1e9 and NaN did not fit";
  // Per-column scales set by hand on a rank-2 view.
  kacc::View<float**, Host, kacc::StoredAs<kacc::scaled<std::int8_t>>> c("c", 2, 2);
  c.scales()(0) = 0.5f;
  c.scales()(1) = 4.0f;
  c(1, 0) = 10.0f;
  c(1, 1) = 10.0f;
  EXPECT_EQ(c(1, 0).get(), 10.0f);
  // 10 / 4 = 2.5: a tie, to the even neighbour.
  EXPECT_EQ(c.storage()(1, 1), 2);
  c(1, 1) = 14.0f;  // 3.5: to 4
  EXPECT_EQ(c.storage()(1, 1), 4);
  c(0, 0) = 1000.0f;
  EXPECT_EQ(c.storage()(0, 0), 127);
}

TEST(Scaled, DeepCopyBetweenScaledViews) {
  const auto xs = random_values<double>(64, 50.0, 3);
  Kokkos::View<double**, Kokkos::LayoutLeft, Host> src("src", 16, 4);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 4; ++j) src(i, j) = xs[i + 16 * j];
  kacc::View<double**, Kokkos::LayoutLeft, Host, kacc::StoredAs<Int16s>> a("a", 16, 4);
  kacc::deep_copy(a, src);
  // Same format and layout: integers and scales are copied as they are.
  kacc::View<double**, Kokkos::LayoutLeft, Host, kacc::StoredAs<Int16s>> b("b", 16, 4);
  kacc::deep_copy(b, a);
  // Another layout: scales are chosen again from the (already quantised) data; its column
  // maxima need the same powers of two, so every value survives exactly.
  kacc::View<double**, Kokkos::LayoutRight, Host, kacc::StoredAs<Int16s>> c("c", 16, 4);
  kacc::deep_copy(c, a);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(b.scales()(j), a.scales()(j));
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(b.storage()(i, j), a.storage()(i, j));
      EXPECT_EQ(c(i, j).get(), a(i, j).get());
    }
  }
}

TEST(Scaled, FailedDeepCopyLeavesTheDestinationAlone) {
  kacc::View<double**, Host, kacc::StoredAs<Int16s>> q("q", 3, 2);
  q.scales()(0) = 0.5;
  q.scales()(1) = 0.25;
  q(2, 1) = 1.0;
  Kokkos::View<double**, Host> bad("bad", 3, 2);
  bad(0, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(kacc::deep_copy(q, bad), std::invalid_argument);
  EXPECT_EQ(q.scales()(0), 0.5);
  EXPECT_EQ(q.scales()(1), 0.25);
  EXPECT_EQ(q(2, 1).get(), 1.0);
}

TEST(Scaled, DeepCopyIntoSubviewsOfAScaledMatrix) {
  kacc::View<double**, Kokkos::LayoutLeft, Host, kacc::StoredAs<Int16s>> s("s", 4, 3);
  Kokkos::View<double**, Host> src("src", 4, 3);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) src(i, j) = (i + 1) * std::pow(10.0, j);
  kacc::deep_copy(s, src);
  // A column owns its scale: copying into it re-scales that column only.
  Kokkos::View<double*, Host> col_src("col_src", 4);
  for (int i = 0; i < 4; ++i) col_src(i) = -0.001 * (i + 1);
  const double other_scale = s.scales()(2);
  kacc::deep_copy(kacc::subview(s, Kokkos::ALL, 1), col_src);
  EXPECT_EQ(s.scales()(1), reference_scale(std::fabs(col_src(3))));
  EXPECT_EQ(s.scales()(2), other_scale);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LE(std::fabs(s(i, 1).get() - col_src(i)), half_step(s.scales()(1)));
    EXPECT_LE(std::fabs(s(i, 2).get() - src(i, 2)), half_step(other_scale));
  }
  // A row shares every column's scale with the other rows: deep_copy into it keeps the
  // scales, so the other rows' entries do not change; row values beyond a column's
  // range saturate at that column's largest magnitude.
  Kokkos::View<double*, Host> row_src("row_src", 3);
  row_src(0) = 2.5;     // within column 0's range (up to 4)
  row_src(1) = -35.0;   // beyond column 1's range (up to 0.008 after the copy above): saturates
  row_src(2) = 1000.0;  // beyond column 2's range (up to 512): saturates
  const double scales_before[3] = {s.scales()(0), s.scales()(1), s.scales()(2)};
  double others_before[4][3];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) others_before[i][j] = s(i, j).get();
  auto row = kacc::subview(s, 2, Kokkos::ALL);
  EXPECT_TRUE(row.scale_state().shared);
  EXPECT_FALSE(kacc::subview(s, Kokkos::ALL, 1).scale_state().shared);
  EXPECT_FALSE(s.saturated()) << "deep_copy picked scales that fit";
  kacc::deep_copy(row, row_src);
  EXPECT_TRUE(s.saturated()) << "the row's copy saturated, and the row shares the flag";
  for (int j = 0; j < 3; ++j) EXPECT_EQ(s.scales()(j), scales_before[j]) << "column " << j;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      if (i != 2) {
        EXPECT_EQ(s(i, j).get(), others_before[i][j]) << i << ", " << j;
      }
  EXPECT_LE(std::fabs(row(0).get() - 2.5), half_step(s.scales()(0)));
  EXPECT_EQ(row(1).get(), -largest * s.scales()(1));
  EXPECT_EQ(row(2).get(), largest * s.scales()(2));
}

// --- where the scales run: fixed at compile time --------------------------------------------

TEST(ScalesAlong, DefaultsAndSubviewsKeepEachEntrysScale) {
  using V1 = kacc::View<double*, Host, kacc::StoredAs<Int16s>>;
  using V2 = kacc::View<double**, Host, kacc::StoredAs<Int16s>>;
  using V3 = kacc::View<double***, Host, kacc::StoredAs<Int16s>>;
  static_assert(V1::scale_axis == -1 && V2::scale_axis == 1 && V3::scale_axis == 2, "");
  V2 a("a", 4, 3);
  for (int j = 0; j < 3; ++j) a.scales()(j) = std::ldexp(1.0, -j);
  auto row = kacc::subview(a, 2, Kokkos::ALL);
  auto col = kacc::subview(a, Kokkos::ALL, 1);
  auto entry_range = kacc::subview(a, 1, Kokkos::make_pair(1, 3));
  static_assert(decltype(row)::scale_axis == 0, "a row has one scale per entry");
  static_assert(decltype(col)::scale_axis == -1, "a column has one scale");
  static_assert(decltype(entry_range)::scale_axis == 0, "");
  for (int j = 0; j < 3; ++j) EXPECT_EQ(row.scale_at(j), std::ldexp(1.0, -j));
  EXPECT_EQ(col.scales().extent(0), 1u);
  EXPECT_EQ(col.scale_at(3), 0.5);
  EXPECT_EQ(entry_range.scale_at(0), 0.5);
  EXPECT_EQ(entry_range.scale_at(1), 0.25);
  // Rank 3: fixing the last index leaves one scale; fixing another keeps the axis.
  V3 c("c", 2, 2, 3);
  c.scales()(2) = 8.0;
  auto slab = kacc::subview(c, Kokkos::ALL, Kokkos::ALL, 2);
  auto plane = kacc::subview(c, 1, Kokkos::ALL, Kokkos::ALL);
  static_assert(decltype(slab)::scale_axis == -1 && decltype(plane)::scale_axis == 1, "");
  EXPECT_EQ(slab.scale_at(1, 1), 8.0);
  EXPECT_EQ(plane.scale_at(0, 2), 8.0);
  EXPECT_FALSE(slab.scale_state().shared);
  EXPECT_TRUE(plane.scale_state().shared);
}

TYPED_TEST(Scaled, PerRowScalesFollowTheFirstIndex) {
  using T = TypeParam;
  using V = kacc::View<T**, Host, kacc::StoredAs<Int16s>, kacc::ScalePerRow>;
  static_assert(V::scale_axis == 0, "");
  const std::size_t n = 5, m = 7;
  V q("q", n, m);
  ASSERT_EQ(q.scales().extent(0), n);
  Kokkos::View<T**, Host> src("src", n, m);
  const auto xs = random_values<T>(n * m, 1.0, 11);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) src(i, j) = xs[i * m + j] * T(std::pow(10.0, i));
  kacc::deep_copy(q, src);
  EXPECT_FALSE(q.saturated());
  for (std::size_t i = 0; i < n; ++i) {
    T maxabs = 0;
    for (std::size_t j = 0; j < m; ++j) maxabs = std::max(maxabs, T(std::fabs(src(i, j))));
    EXPECT_EQ(q.scales()(i), reference_scale(maxabs)) << "row " << i;
    for (std::size_t j = 0; j < m; ++j) {
      EXPECT_EQ(q.scale_at(i, j), q.scales()(i));
      EXPECT_LE(std::fabs(double(q(i, j).get()) - double(src(i, j))),
                half_step(double(q.scales()(i))));
    }
  }
  // A row of a per-row matrix has one scale, and owns it: deep_copy re-scales that row.
  auto row = kacc::subview(q, 3, Kokkos::ALL);
  static_assert(decltype(row)::scale_axis == -1, "");
  EXPECT_FALSE(row.scale_state().shared);
  Kokkos::View<T*, Host> small("small", m);
  for (std::size_t j = 0; j < m; ++j) small(j) = T(1e-3) * T(j);
  const T other = q.scales()(2);
  kacc::deep_copy(row, small);
  EXPECT_EQ(q.scales()(3), reference_scale(small(m - 1)));
  EXPECT_EQ(q.scales()(2), other);
  // A column of it has a scale per entry.
  auto col = kacc::subview(q, Kokkos::ALL, 4);
  static_assert(decltype(col)::scale_axis == 0, "");
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(col.scale_at(i), q.scales()(i));
}

TEST(ScalesAlong, RawStorageNeedsItsScales) {
  Kokkos::View<std::int8_t**, Host> raw("raw", 2, 3);
  raw(1, 2) = -3;
  Kokkos::View<float*, Host> scales("scales", 3);
  scales(2) = 0.5f;
  auto v = kacc::make_view<float, kacc::scaled<std::int8_t>>(raw, scales);
  EXPECT_EQ(v(1, 2).get(), -1.5f);
  v(0, 0) = 1.0f;  // scale 0 is 0: 1 / 0 is infinite and saturates
  EXPECT_EQ(raw(0, 0), 127);
  EXPECT_TRUE(v.saturated());
  Kokkos::View<float*, Host> two("two", 2);
  try {
    (void)kacc::make_view<float, kacc::scaled<std::int8_t>>(raw, two);
    ADD_FAILURE() << "two scales for three columns were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scales has extent 2 but the view needs 3"),
              std::string::npos)
        << e.what();
  }
}

// --- saturation: clamped, and flagged in the view ----------------------------------------

TEST(Saturation, FlagIsSharedByCopiesSubviewsAndConstViews) {
  kacc::View<double**, Host, kacc::StoredAs<Int16s>> q("q", 3, 2);
  const kacc::View<const double**, Host, kacc::StoredAs<Int16s>> c = q;
  auto col = kacc::subview(q, Kokkos::ALL, 1);
  EXPECT_FALSE(q.saturated());
  q(0, 0) = 32767.0;   // the largest that fits at scale 1
  q(1, 0) = -32767.4;  // rounds to -32767: fits
  EXPECT_FALSE(c.saturated());
  col(2) = 32767.5;  // rounds to 32768: saturates
  EXPECT_EQ(q.storage()(2, 1), 32767);
  EXPECT_TRUE(q.saturated());
  EXPECT_TRUE(c.saturated());
  q.clear_saturated();
  EXPECT_FALSE(col.saturated());
  col(0) = -std::numeric_limits<double>::infinity();
  EXPECT_TRUE(q.saturated());
  q.clear_saturated();
  col(0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(q.storage()(0, 1), 0);
  EXPECT_TRUE(q.saturated()) << "NaN does not fit either";
  // Views of another allocation have their own flag.
  kacc::View<double**, Host, kacc::StoredAs<Int16s>> other("other", 3, 2);
  EXPECT_FALSE(other.saturated());
}

namespace {
// Writes into every entry of q in its execution space: mode 0 0.25 * (i % 255 - 127)
// (all fit at scale 0.25), mode 1 adds 1 to entry `top` only, mode 2 1e6 everywhere. A
// function, not the test body: nvcc refuses device lambdas in private member functions.
template <class V>
void write_entries(const V& q, int mode, int top) {
  using Exec = typename V::execution_space;
  Kokkos::parallel_for(
      "write_entries", Kokkos::RangePolicy<Exec>(0, q.extent(0)), KOKKOS_LAMBDA(int i) {
        if (mode == 0) {
          q(i) = 0.25f * float(i % 255 - 127);
        } else if (mode == 1) {
          q(i) += i == top ? 1.0f : 0.0f;
        } else {
          q(i) = 1e6f;
        }
      });
  Exec().fence();
}
}  // namespace

TEST(Saturation, KernelsRaiseTheFlagOnlyWhenAWriteSaturates) {
  const int n = 100000;
  const int top = 255 * 100 + 254;  // holds 127 * 0.25, the largest
  kacc::View<float*, kacc::StoredAs<kacc::scaled<std::int8_t>>> q("q", n);
  Kokkos::deep_copy(q.scales(), 0.25f);
  write_entries(q, 0, top);
  EXPECT_FALSE(q.saturated());
  write_entries(q, 1, top);
  EXPECT_TRUE(q.saturated());
  auto stored = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q.storage());
  EXPECT_EQ(stored(top), 127);
  EXPECT_EQ(stored(top - 1), 126);
  q.clear_saturated();
  write_entries(q, 2, top);
  EXPECT_TRUE(q.saturated());
  Kokkos::deep_copy(stored, q.storage());
  EXPECT_EQ(stored(n - 1), 127);
}

TEST(Saturation, ThrowOnHostPolicyThrowsFromDeepCopy) {
  using V = kacc::View<double**, Host, kacc::StoredAs<Int16s, kacc::overflow::throw_on_host>>;
  V q("q", 2, 2);
  Kokkos::View<double**, Host> src("src", 2, 2);
  src(0, 0) = 1.0;
  src(1, 1) = -3.0;
  kacc::deep_copy(q, src);  // scales from the data: everything fits
  auto row = kacc::subview(q, 0, Kokkos::ALL);
  Kokkos::View<double*, Host> row_src("row_src", 2);
  row_src(1) = 2.0;  // column 1's scale holds up to 4
  kacc::deep_copy(row, row_src);
  EXPECT_FALSE(q.saturated());
  row_src(1) = 8.0;
  try {
    kacc::deep_copy(row, row_src);
    ADD_FAILURE() << "no std::overflow_error";
  } catch (const std::overflow_error& e) {
    EXPECT_NE(std::string(e.what()).find("kacc::deep_copy: a write into dst"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(q(0, 1).get(), largest * q.scales()(1));
}

// deep_copy picks the scales from the data under every policy, so a rescale_on_host view
// takes any finite data; a subview sharing its scales keeps them, saturates and counts
// (no throw). Kernels of the user's own cannot re-scale: they saturate and count.
TEST(Saturation, RescaleOnHostPolicyInDeepCopyAndUserKernels) {
  using V = kacc::View<double**, Host, kacc::StoredAs<Int16s, kacc::overflow::rescale_on_host>>;
  V q("q", 2, 2);
  Kokkos::View<double**, Host> src("src", 2, 2);
  src(0, 0) = 1.0;
  src(1, 1) = -3.0;
  kacc::deep_copy(q, src);
  src(0, 0) = 1e6;
  kacc::deep_copy(q, src);
  kacc_testing::expect_rescaled(q, {1e6, 0, 0, -3});
  const auto scales = kacc_testing::scales_of(q);
  auto row = kacc::subview(q, 0, Kokkos::ALL);
  Kokkos::View<double*, Host> row_src("row_src", 2);
  row_src(1) = 8.0;  // column 1's scale (2^-13) holds up to 4
  kacc::deep_copy(row, row_src);
  EXPECT_TRUE(q.saturated());
  EXPECT_EQ(kacc_testing::scales_of(q), scales);
  EXPECT_EQ(q(0, 1).get(), largest * scales[1]);
  kacc::View<float*, kacc::StoredAs<kacc::scaled<std::int8_t>, kacc::overflow::rescale_on_host>> r(
      "r", 1000);
  Kokkos::deep_copy(r.scales(), 0.25f);
  write_entries(r, 2, 0);  // 1e6 everywhere
  EXPECT_TRUE(r.saturated());
  EXPECT_EQ(kacc_testing::scales_of(r), std::vector<double>{0.25});
  // r lives in the default memory space (a GPU's in device builds): read its storage back.
  const auto stored = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.storage());
  EXPECT_EQ(stored(999), 127);
}

// --- one rounding, ties to even, against MPFR ---------------------------------------------

namespace {

// What encode must store for x at scale 2^e: x / 2^e rounded to the nearest integer, ties
// to even (mpfr_roundeven on the exact quotient), saturated to [-largest, largest].
template <class Integer>
Integer mpfr_encoded(double x, long e) {
  constexpr long top = std::numeric_limits<Integer>::max();
  mpfr_t q;
  mpfr_init2(q, 64);
  mpfr_set_d(q, x, MPFR_RNDN);  // exact: 64 >= 53 bits
  mpfr_div_2si(q, q, e, MPFR_RNDN);
  mpfr_roundeven(q, q);
  long r = 0;
  if (mpfr_cmp_si(q, top) > 0) {
    r = top;
  } else if (mpfr_cmp_si(q, -top) < 0) {
    r = -top;
  } else {
    r = mpfr_get_si(q, MPFR_RNDN);
  }
  mpfr_clear(q);
  return static_cast<Integer>(r);
}

// Counts the x in xs whose encoding at scale 2^e in T differs from MPFR's; prints the first.
template <class T, class Integer>
std::size_t encode_mismatches(const std::vector<T>& xs, long e) {
  using traits = kacc::format_traits<kacc::scaled<Integer>>;
  const T scale = static_cast<T>(std::ldexp(1.0, static_cast<int>(e)));
  std::size_t bad = 0;
  for (const T x : xs) {
    const Integer got = traits::template encode<T>(x, scale);
    const Integer want = mpfr_encoded<Integer>(static_cast<double>(x), e);
    if (got != want && bad++ == 0) {
      ADD_FAILURE() << "encode(" << x << ", 2^" << e << ") = " << long(got) << ", want "
                    << long(want);
    }
  }
  return bad;
}

// Every rounding decision of int8 at scale 2^e in T: each integer k of the range and one
// beyond, the tie k + 1/2, and the T neighbours of both, with either sign.
template <class T>
std::vector<T> int8_boundaries(long e) {
  std::vector<T> xs;
  const T scale = static_cast<T>(std::ldexp(1.0, static_cast<int>(e)));
  const T inf = std::numeric_limits<T>::infinity();
  for (int k = 0; k <= 129; ++k) {
    for (const T point : {T(k), T(k) + T(0.5)}) {
      for (const T x : {std::nextafter(point, -inf), point, std::nextafter(point, inf)}) {
        xs.push_back(x * scale);
        xs.push_back(-x * scale);
      }
    }
  }
  return xs;
}

}  // namespace

TEST(ScaledEncode, Int8EveryRoundingBoundaryTiesToEven) {
  for (const long e : {-126L, -20L, -3L, 0L, 7L, 100L}) {
    SCOPED_TRACE(e);
    EXPECT_EQ((encode_mismatches<float, std::int8_t>(int8_boundaries<float>(e), e)), 0u);
    EXPECT_EQ((encode_mismatches<double, std::int8_t>(int8_boundaries<double>(e), e)), 0u);
  }
  for (const long e : {-1022L, 900L}) {
    SCOPED_TRACE(e);
    EXPECT_EQ((encode_mismatches<double, std::int8_t>(int8_boundaries<double>(e), e)), 0u);
  }
}

namespace {

// n values at scale 2^e whose quotients x / 2^e spread over the integer range and a little
// beyond (to saturation); a quarter are exact ties k + 1/2 and a quarter their neighbours.
template <class T, class Integer>
std::vector<T> random_quotients(std::size_t n, long e, unsigned seed) {
  const double limit = std::ldexp(1.0, std::numeric_limits<Integer>::digits) * 1.001;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-limit, limit);
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> xs(n);
  for (std::size_t i = 0; i < n; ++i) {
    T q = static_cast<T>(u(rng));
    if (i % 4 == 1) q = static_cast<T>(std::floor(q) + 0.5);
    if (i % 4 == 2) q = std::nextafter(static_cast<T>(std::floor(q) + 0.5), (i & 8) ? inf : -inf);
    xs[i] = q * static_cast<T>(std::ldexp(1.0, static_cast<int>(e)));
  }
  return xs;
}

}  // namespace

TEST(ScaledEncode, Int16TenMillionRandomValuesAgainstMpfr) {
  const std::size_t n = 2'500'000;
  long exponents[] = {-1000, -17, 0, 40};
  for (std::size_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(exponents[k]);
    EXPECT_EQ((encode_mismatches<double, std::int16_t>(
                  random_quotients<double, std::int16_t>(n, exponents[k], 100 + k), exponents[k])),
              0u);
  }
  EXPECT_EQ((encode_mismatches<float, std::int16_t>(
                random_quotients<float, std::int16_t>(n / 4, -100, 7), -100)),
            0u);
}

TEST(ScaledEncode, Int32TenMillionRandomValuesAgainstMpfr) {
  const std::size_t n = 2'500'000;
  long exponents[] = {-990, -31, 0, 50};
  for (std::size_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(exponents[k]);
    EXPECT_EQ((encode_mismatches<double, std::int32_t>(
                  random_quotients<double, std::int32_t>(n, exponents[k], 200 + k), exponents[k])),
              0u);
  }
  // float holds 24 of int32's 31 bits: near the top, quotients are multiples of 128 and
  // 2^31 itself saturates to the largest int32.
  EXPECT_EQ((encode_mismatches<float, std::int32_t>(
                random_quotients<float, std::int32_t>(n / 4, -60, 9), -60)),
            0u);
}

TEST(ScaledEncode, NonFiniteWritesSaturateOrStoreZero) {
  using traits = kacc::format_traits<kacc::scaled<std::int32_t>>;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(traits::encode<float>(inf, 1.0f), 2147483647);
  EXPECT_EQ(traits::encode<float>(-inf, 1.0f), -2147483647);
  EXPECT_EQ(traits::encode<float>(std::numeric_limits<float>::quiet_NaN(), 1.0f), 0);
  EXPECT_EQ(traits::encode<float>(2147483648.0f, 1.0f), 2147483647);
  EXPECT_EQ(traits::encode<double>(-2147483648.0, 1.0), -2147483647) << "symmetric range";
}

// --- the scale: a power of two, bounded below ------------------------------------------

template <class T>
void check_scale_for(unsigned seed) {
  using traits = kacc::format_traits<Int16s>;
  std::mt19937 rng(seed);
  const int lowest = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
  std::uniform_int_distribution<int> exponent(lowest, std::numeric_limits<T>::max_exponent - 1);
  std::uniform_real_distribution<double> fraction(1, 2);
  std::vector<T> ms = {std::numeric_limits<T>::max(),
                       std::numeric_limits<T>::denorm_min(),
                       std::numeric_limits<T>::min(),
                       T(32767),
                       T(32767.5),
                       T(32768),
                       T(1)};
  for (int i = 0; i < 20000; ++i) {
    const T m = static_cast<T>(std::ldexp(fraction(rng), exponent(rng)));
    if (m > 0 && std::isfinite(m)) ms.push_back(m);
  }
  for (const T m : ms) {
    const T s = traits::scale_for<T>(m);
    ASSERT_EQ(s, reference_scale(m)) << "m=" << m;
  }
}

TEST(ScaledScale, SmallestPowerOfTwoNotBelowTheSmallestNormal) {
  check_scale_for<double>(5);
  check_scale_for<float>(6);
  // float and int32: the largest magnitude maps to at most 2^31 - 128, float's largest
  // value below 2^31, so it is never saturated.
  using traits32 = kacc::format_traits<kacc::scaled<std::int32_t>>;
  EXPECT_EQ(traits32::scale_for<float>(2147483520.0f), 1.0f);
  EXPECT_EQ(traits32::scale_for<float>(2147483648.0f), 2.0f);
}

TEST(ScaledScale, TinyFloatDataKeepTheirValues) {
  // Data near 1e-36 once got scale maxabs / 32767 (about 3e-41, subnormal), whose
  // reciprocal overflows float: every nonzero entry became +-maxabs.
  const std::size_t n = 64;
  Kokkos::View<float*, Host> src("src", n);
  for (std::size_t i = 0; i < n; ++i) src(i) = static_cast<float>((i % 7) - 3.2) * 1e-36f;
  kacc::View<float*, Host, kacc::StoredAs<Int16s>> q("q", n);
  kacc::deep_copy(q, src);
  const float scale = q.scales()(0);
  EXPECT_EQ(scale, std::numeric_limits<float>::min());
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_LE(std::fabs(static_cast<double>(q(i).get()) - src(i)), half_step(scale)) << i;
  }
}
