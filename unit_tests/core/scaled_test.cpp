// Scaled integer storage: deep_copy picks one scale per vector or per column so that the
// largest magnitude maps to the largest integer, and then every entry is within half a
// scale step of its source: |x - x~| <= scale / 2, plus the rounding of the two
// floating-point operations involved (derived below).
#include <kacc/core.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using Host = Kokkos::HostSpace;
using Int16s = kacc::scaled<std::int16_t>;
constexpr double largest = 32767;

// Encoding computes q = x * (1 / scale) in T: two roundings move q by at most
// 2 eps |q| <= 2 eps * largest, which can push it across a rounding boundary; decoding
// i * scale rounds once more, by eps |x| at most.
template <class T>
double bound(double scale, double x) {
  const double eps = std::numeric_limits<T>::epsilon();
  return scale * (0.5 + 2 * eps * largest) + eps * std::fabs(x);
}

template <class T>
std::vector<T> random_values(std::size_t n, double magnitude, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-magnitude, magnitude);
  std::vector<T> xs(n);
  for (auto& x : xs) x = static_cast<T>(u(rng));
  return xs;
}

std::string message_of(void (*f)()) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument thrown)";
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
    EXPECT_EQ(scale, maxabs / static_cast<T>(largest));
    // The largest magnitude uses the whole integer range.
    EXPECT_EQ(std::abs(q.storage()(argmax)), 32767);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(q.scale_at(i), scale);
      const double err = std::fabs(static_cast<double>(q(i).get()) - xs[i]);
      worst = std::max(worst, err / scale);
      EXPECT_LE(err, bound<T>(scale, xs[i])) << "i=" << i << " x=" << xs[i];
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
      EXPECT_EQ(scale, maxabs / static_cast<T>(largest)) << "column " << j;
    }
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(q.scale_at(i, j), scale);
      const double x = src(i, j);
      EXPECT_LE(std::fabs(static_cast<double>(q(i, j).get()) - x), bound<T>(scale, x))
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
    EXPECT_EQ(q.scales()(k), maxabs / static_cast<T>(largest));
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 2; ++k) {
        const double x = src(i, j, k);
        EXPECT_LE(std::fabs(q(i, j, k).get() - x), bound<T>(q.scales()(k), x));
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
  const std::string m = message_of([] {
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
  // A scaled proxy carries the scale next to the pointer.
  EXPECT_EQ(sizeof(q(0)), sizeof(void*) + sizeof(double));
  // Per-column scales set by hand on a rank-2 view.
  kacc::View<float**, Host, kacc::StoredAs<kacc::scaled<std::int8_t>>> c("c", 2, 2);
  c.scales()(0) = 0.5f;
  c.scales()(1) = 4.0f;
  c(1, 0) = 10.0f;
  c(1, 1) = 10.0f;
  EXPECT_EQ(c(1, 0).get(), 10.0f);
  // 10 / 4 = 2.5: a tie, either neighbour is nearest.
  EXPECT_TRUE(c.storage()(1, 1) == 2 || c.storage()(1, 1) == 3) << int(c.storage()(1, 1));
  EXPECT_LE(std::fabs(c(1, 1).get() - 10.0f), 2.0f);
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
  // Another layout: scales are chosen again from the (already quantised) data, which
  // holds the same column maxima, so the values survive up to the rounding of the scales.
  kacc::View<double**, Kokkos::LayoutRight, Host, kacc::StoredAs<Int16s>> c("c", 16, 4);
  kacc::deep_copy(c, a);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(b.scales()(j), a.scales()(j));
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(b.storage()(i, j), a.storage()(i, j));
      EXPECT_LE(std::fabs(c(i, j).get() - a(i, j).get()),
                4 * DBL_EPSILON * std::fabs(a(i, j).get()));
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
  EXPECT_EQ(s.scales()(1), std::fabs(col_src(3)) / largest);
  EXPECT_EQ(s.scales()(2), other_scale);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LE(std::fabs(s(i, 1).get() - col_src(i)), bound<double>(s.scales()(1), col_src(i)));
    EXPECT_LE(std::fabs(s(i, 2).get() - src(i, 2)), bound<double>(other_scale, src(i, 2)));
  }
  // A row shares every column's scale with the other rows: deep_copy into it keeps the
  // scales, so the other rows' entries do not change; row values beyond a column's
  // range saturate at that column's largest magnitude.
  Kokkos::View<double*, Host> row_src("row_src", 3);
  row_src(0) = 2.5;     // within column 0's range (up to 4)
  row_src(1) = -35.0;   // beyond column 1's range (up to 0.004 after the copy above): saturates
  row_src(2) = 1000.0;  // beyond column 2's range (up to 400): saturates
  const double scales_before[3] = {s.scales()(0), s.scales()(1), s.scales()(2)};
  double others_before[4][3];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) others_before[i][j] = s(i, j).get();
  auto row = kacc::subview(s, 2, Kokkos::ALL);
  EXPECT_TRUE(row.scale_state().shared);
  EXPECT_FALSE(kacc::subview(s, Kokkos::ALL, 1).scale_state().shared);
  kacc::deep_copy(row, row_src);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(s.scales()(j), scales_before[j]) << "column " << j;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      if (i != 2) {
        EXPECT_EQ(s(i, j).get(), others_before[i][j]) << i << ", " << j;
      }
  EXPECT_LE(std::fabs(row(0).get() - 2.5), bound<double>(s.scales()(0), 2.5));
  EXPECT_EQ(row(1).get(), -largest * s.scales()(1));
  EXPECT_EQ(row(2).get(), largest * s.scales()(2));
}
