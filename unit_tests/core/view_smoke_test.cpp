// Placeholder replaced by the full core suite; checks the build wiring end to end.
#include <kacc/kacc.hpp>
#include <kacc_testing/exact.hpp>

#include <gtest/gtest.h>

TEST(CoreSmoke, Fp16ViewRoundsOnWrite) {
  kacc::View<double*, kacc::StoredAs<kacc::fp16>> v("v", 4);
  auto h = kacc::create_mirror_view(v);
  h(0) = 1.0 / 3;
  EXPECT_EQ(kacc::value(h(0)), 0.333251953125);
  const double a[] = {1e20, 1.0, -1e20};
  const double b[] = {1.0, 1.0, 1.0};
  EXPECT_EQ(kacc_testing::exact_dot(3, a, b).rounded(), 1.0);
}
