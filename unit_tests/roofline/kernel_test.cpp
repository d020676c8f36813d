// The roofline kernel against a scalar host reference, in every configuration the
// benchmark runs: identical arithmetic, so the stored results must match exactly. Its
// FLOPs are counted by running the kernel's own arithmetic on a type that counts every
// operation, and the recurrence is checked to change the stored value in every round.
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

// Scalar reference, written from the definition: eight chains t = fma(t, t, c_k) with
// c_k = -1.99 + 0.0123 k from the entry, then ((t0+t1)+(t2+t3))+((t4+t5)+(t6+t7)) / 8.
template <class T>
T reference_update(T a, int iterations) {
  T t[8];
  for (int c = 0; c < 8; ++c) t[c] = a;
  for (int j = 0; j < iterations; ++j) {
    for (int c = 0; c < 8; ++c) t[c] = std::fma(t[c], t[c], static_cast<T>(-1.99 + 0.0123 * c));
  }
  const T sum = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
  return sum / T(8);
}

// An arithmetic type that counts the FLOPs done on it: 2 per fused multiply-add, 1 per
// add or multiply (the kernel uses no other operation: any other would not compile).
// Copies and conversions are free.
struct counted {
  double value = 0;
  static inline long long flops = 0;
  counted() = default;
  explicit counted(double v) : value(v) {}
};
counted operator+(counted a, counted b) {
  ++counted::flops;
  return counted(a.value + b.value);
}
counted operator*(counted a, counted b) {
  ++counted::flops;
  return counted(a.value * b.value);
}
// Found by argument-dependent lookup from the kernel's unqualified fma call.
counted fma(counted a, counted b, counted c) {
  counted::flops += 2;
  return counted(std::fma(a.value, b.value, c.value));
}

// FLOPs the kernel's arithmetic does on a block of W entries at Rounds rounds.
template <int Rounds, int W>
long long counted_flops_per_value() {
  counted a[W], f[kacc_roofline::chains];
  for (int w = 0; w < W; ++w) a[w] = counted(0.25 / (w + 1));
  for (int c = 0; c < kacc_roofline::chains; ++c) f[c] = counted(-1.9);
  counted::flops = 0;
  kacc_roofline::update_block<Rounds>(a, f);
  EXPECT_EQ(counted::flops % W, 0) << "every entry of a block does the same work";
  return counted::flops / W;
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
  for (std::size_t i = 0; i < n; ++i) {
    const T a = static_cast<T>(before(i));
    expected(i) = static_cast<T>(kacc_roofline::initial_value(i));
    ASSERT_EQ(a, static_cast<T>(expected(i))) << "initial value of entry " << i;
    expected(i) = reference_update(a, iterations);
  }
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
  // Sizes below, at and off multiples of the lane count and of a work item's entries (up
  // to 8 blocks of 32), so the tail path runs too.
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(32), std::size_t(129),
                        std::size_t(512), std::size_t(1000)}) {
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

TEST(RooflineAccounting, CountedFlopsOfTheKernelArithmetic) {
  // The kernel's own block arithmetic on a counting type, at the block widths the kernel
  // uses (one entry on devices and in the tail, a full block on hosts).
  constexpr int host_block = kacc_roofline::lanes<Kokkos::View<double*, Kokkos::HostSpace>>();
  EXPECT_EQ((counted_flops_per_value<0, 1>()), kacc_roofline::flops_per_value(0));
  EXPECT_EQ((counted_flops_per_value<1, 1>()), kacc_roofline::flops_per_value(1));
  EXPECT_EQ((counted_flops_per_value<16, 1>()), kacc_roofline::flops_per_value(16));
  EXPECT_EQ((counted_flops_per_value<4, host_block>()), kacc_roofline::flops_per_value(4));
  EXPECT_EQ((counted_flops_per_value<64, host_block>()), kacc_roofline::flops_per_value(64));
}

// Stored results of R rounds from the initial values, on the host.
template <class V, int R>
std::vector<double> stored_after(std::size_t n) {
  V x("x", n);
  kacc_roofline::initialise(x);
  kacc_roofline::run<R>(x);
  Kokkos::fence();
  const auto host = snapshot(x);
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(host(i));
  return out;
}

template <class V>
void check_every_round_counts() {
  // A converging recurrence gives the same 2-byte value after 8, 16 and 32 rounds; the
  // kernel's must not, or the intensity could not be told from the result.
  const std::size_t n = 1000;
  const auto r8 = stored_after<V, 8>(n), r16 = stored_after<V, 16>(n), r32 = stored_after<V, 32>(n);
  std::size_t same_8_16 = 0, same_16_32 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    same_8_16 += r8[i] == r16[i];
    same_16_32 += r16[i] == r32[i];
  }
  // Chance agreement of two unrelated values near 1 in 2-byte formats is a few percent.
  EXPECT_LT(same_8_16, n / 10) << "8 and 16 rounds store the same value";
  EXPECT_LT(same_16_32, n / 10) << "16 and 32 rounds store the same value";
}

TEST(RooflineRecurrence, EveryRoundChangesTheStoredValue) {
  check_every_round_counts<acc<double, kacc::fp16>>();
  check_every_round_counts<acc<double, kacc::bf16>>();
  check_every_round_counts<acc<float, kacc::bf16>>();
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
