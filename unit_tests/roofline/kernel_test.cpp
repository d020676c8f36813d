// The roofline kernel against a scalar host reference, in every configuration the
// benchmark runs: identical arithmetic, so the stored results must match exactly.
#include <kacc/core/view_algorithms.hpp>
#include <kacc_roofline/kernel.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
template <class A, class F>
using acc = kacc::View<A*, Mem, kacc::StoredAs<F>>;

// Scalar reference, written from the definition: eight chains t = fma(t, t, f_c) from
// the entry, then ((t0+t1)+(t2+t3))+((t4+t5)+(t6+t7)) times 1/8. Counts its FLOPs.
template <class T>
T reference_update(T a, int iterations, long long& flops) {
  T t[8];
  for (int c = 0; c < 8; ++c) t[c] = a;
  for (int j = 0; j < iterations; ++j) {
    for (int c = 0; c < 8; ++c) {
      t[c] = std::fma(t[c], t[c], static_cast<T>(0.01 * (c + 1)));
      flops += 2;
    }
  }
  const T sum = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  flops += 7 + 1;
  return sum * (T(1) / T(8));
}

// A host copy that shares nothing with x (create_mirror_view aliases host views).
template <class V>
auto snapshot(const V& x) {
  if constexpr (kacc::is_kacc_view_v<V>) {
    V copy("snapshot", x.extent(0));
    kacc::deep_copy(copy, x);
    auto host = kacc::create_mirror_view(copy);
    kacc::deep_copy(host, copy);
    return host;
  } else {
    auto host = Kokkos::create_mirror(x);
    Kokkos::deep_copy(host, x);
    return host;
  }
}

template <class V>
void check_kernel(std::size_t n, int iterations) {
  using T = kacc::arithmetic_t<V>;
  V x("x", n);
  kacc_roofline::initialise(x);
  Kokkos::fence();
  const auto before = snapshot(x);
  // Only the checked round counts are instantiated: the full 0..128 dispatcher takes tens
  // of minutes to compile in the sanitizer build.
  switch (iterations) {
    case 0:
      kacc_roofline::run<0>(x);
      break;
    case 1:
      kacc_roofline::run<1>(x);
      break;
    case 4:
      kacc_roofline::run<4>(x);
      break;
    case 16:
      kacc_roofline::run<16>(x);
      break;
    default:
      FAIL() << "the test checks 0, 1, 4 and 16 iterations only";
  }
  Kokkos::fence();
  const auto after = snapshot(x);
  // The reference writes through a host view of the same type and scale, so it rounds
  // to the storage format exactly as the kernel's store does.
  const auto expected = snapshot(x);
  long long flops = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const T a = static_cast<T>(before(i));
    expected(i) = static_cast<T>(kacc_roofline::initial_value(i));
    ASSERT_EQ(a, static_cast<T>(expected(i))) << "initial value of entry " << i;
    expected(i) = reference_update(a, iterations, flops);
  }
  EXPECT_EQ(flops, static_cast<long long>(n) * kacc_roofline::flops_per_value(iterations));
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const T got = static_cast<T>(after(i));
    const T want = static_cast<T>(expected(i));
    if (!(got == want)) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << "entry " << i << " of " << n << ", iterations " << iterations
                      << ": kernel " << got << ", reference " << want;
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

template <class V>
class RooflineKernel : public ::testing::Test {};

using Configurations =
    ::testing::Types<Kokkos::View<double*, Mem>, Kokkos::View<float*, Mem>, acc<double, double>,
                     acc<double, float>, acc<double, kacc::fp16>, acc<double, kacc::bf16>,
                     acc<float, float>, acc<float, kacc::fp16>, acc<float, kacc::bf16>,
                     acc<double, kacc::scaled<std::int16_t>>>;
TYPED_TEST_SUITE(RooflineKernel, Configurations);

TYPED_TEST(RooflineKernel, MatchesScalarReference) {
  // Sizes below, at and off multiples of the lane count, so the tail path runs too.
  for (std::size_t n :
       {std::size_t(1), std::size_t(7), std::size_t(32), std::size_t(129), std::size_t(1000)}) {
    for (int iterations : {0, 1, 4, 16}) check_kernel<TypeParam>(n, iterations);
  }
}

TYPED_TEST(RooflineKernel, ByteAccounting) {
  // One read and one write of the storage entry per value.
  using V = TypeParam;
  std::size_t storage = 0;
  if constexpr (kacc::is_kacc_view_v<V>) {
    storage = sizeof(typename V::storage_type);
  } else {
    storage = sizeof(typename V::value_type);
  }
  EXPECT_EQ(kacc_roofline::bytes_per_value<V>(), 2 * storage);
}

TEST(RooflineAccounting, FlopsPerValue) {
  // 8 chains x 2 FLOPs per round, plus 7 adds and 1 multiply for the mean.
  EXPECT_EQ(kacc_roofline::flops_per_value(0), 8);
  EXPECT_EQ(kacc_roofline::flops_per_value(1), 24);
  EXPECT_EQ(kacc_roofline::flops_per_value(64), 1032);
  EXPECT_TRUE(kacc_roofline::supported_iterations(64));
  EXPECT_FALSE(kacc_roofline::supported_iterations(3));
}

TEST(RooflineAccounting, BytesPerValueByFormat) {
  EXPECT_EQ((kacc_roofline::bytes_per_value<Kokkos::View<double*, Mem>>()), 16u);
  EXPECT_EQ((kacc_roofline::bytes_per_value<Kokkos::View<float*, Mem>>()), 8u);
  EXPECT_EQ((kacc_roofline::bytes_per_value<acc<double, double>>()), 16u);
  EXPECT_EQ((kacc_roofline::bytes_per_value<acc<double, float>>()), 8u);
  EXPECT_EQ((kacc_roofline::bytes_per_value<acc<double, kacc::fp16>>()), 4u);
  EXPECT_EQ((kacc_roofline::bytes_per_value<acc<float, kacc::bf16>>()), 4u);
  EXPECT_EQ((kacc_roofline::bytes_per_value<acc<double, kacc::scaled<std::int16_t>>>()), 4u);
}

}  // namespace
