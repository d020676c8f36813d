// Block loads (block_load.hpp): every fp16 and bf16 bit pattern, NaN payloads included,
// read W at a time must give the bits the scalar path gives (convert<T>(v(i))), for each
// arithmetic type of the view and of the kernel, at every alignment and remainder length,
// for kacc views and plain Views, contiguous and strided.
#include <kacc/core.hpp>
#include <kacc/core/block_load.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace {

using Host = Kokkos::HostSpace;
constexpr std::size_t patterns = 65536;

template <class T>
std::uint64_t bits_of(T value) {
  std::uint64_t b = 0;
  std::memcpy(&b, &value, sizeof(T));
  return b;
}

// Compares load_block<W> at i = first, first + step, ... with the scalar reads of v.
template <int W, class T, class V>
void expect_same_bits(const V& v, std::size_t first, std::size_t step, const std::string& what) {
  const std::size_t n = v.extent(0);
  std::size_t mismatches = 0;
  for (std::size_t i = first; i + W <= n; i += step) {
    T block[W];
    kacc::Impl::load_block<W>(v, static_cast<kacc::index_type>(i), block);
    for (int l = 0; l < W; ++l) {
      const T scalar = kacc::convert<T>(v(i + l));
      if (bits_of(block[l]) != bits_of(scalar) && mismatches++ < 5) {
        ADD_FAILURE() << what << ": entry " << i + l << " block " << block[l] << " scalar "
                      << scalar;
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << what;
}

// A kacc view holding every bit pattern of Format once, read in arithmetic type A.
template <class Format, class A>
kacc::View<A*, Host, kacc::StoredAs<Format>> all_patterns() {
  kacc::View<A*, Host, kacc::StoredAs<Format>> v("all", patterns);
  for (std::size_t i = 0; i < patterns; ++i)
    v.storage()(i) = Format::from_bits(static_cast<std::uint16_t>(i));
  return v;
}

template <class Format, class A, class T>
void check_every_pattern(const std::string& name) {
  const auto v = all_patterns<Format, A>();
  // 16: whole SIMD blocks, aligned and not; 13: a remainder after the SIMD part.
  expect_same_bits<16, T>(v, 0, 16, name + " W=16");
  expect_same_bits<16, T>(v, 3, 16, name + " W=16 offset 3");
  expect_same_bits<13, T>(v, 5, 13, name + " W=13");
  const kacc::View<const A*, Host, kacc::StoredAs<Format>> cv = v;  // values, not proxies
  expect_same_bits<16, T>(cv, 0, 16, name + " const W=16");
}

template <class Format>
void check_format(const std::string& name) {
  check_every_pattern<Format, double, double>(name + " A=fp64 T=fp64");
  check_every_pattern<Format, double, float>(name + " A=fp64 T=fp32");
  check_every_pattern<Format, float, double>(name + " A=fp32 T=fp64");
  check_every_pattern<Format, float, float>(name + " A=fp32 T=fp32");
  // Plain Views of the format: contiguous, and a row of a LayoutLeft matrix (stride 2).
  Kokkos::View<Format**, Kokkos::LayoutLeft, Host> m("m", 2, patterns);
  for (std::size_t i = 0; i < patterns; ++i) {
    m(0, i) = Format::from_bits(static_cast<std::uint16_t>(i));
    m(1, i) = Format::from_bits(static_cast<std::uint16_t>(~i));
  }
  const auto row = Kokkos::subview(m, 0, Kokkos::ALL());
  ASSERT_EQ(row.stride(0), 2u);
  expect_same_bits<16, double>(row, 0, 16, name + " plain strided");
  Kokkos::View<Format*, Host> plain("plain", patterns);
  Kokkos::deep_copy(plain, row);
  expect_same_bits<16, double>(plain, 0, 16, name + " plain contiguous");
}

TEST(BlockLoad, Fp16EveryPatternSameBitsAsScalar) {
  check_format<kacc::fp16>("fp16");
}

TEST(BlockLoad, Bf16EveryPatternSameBitsAsScalar) {
  check_format<kacc::bf16>("bf16");
}

// The other formats take the scalar path through the same entry point.
TEST(BlockLoad, ScaledAndWideFormatsReadAsScalar) {
  kacc::View<double*, Host, kacc::StoredAs<kacc::scaled<std::int16_t>>> s("s", 64);
  Kokkos::deep_copy(s.scales(), 0.25);
  for (std::size_t i = 0; i < 64; ++i) s.storage()(i) = static_cast<std::int16_t>(1000 - 37 * i);
  expect_same_bits<16, double>(s, 0, 16, "int16s");
  kacc::View<double*, Host, kacc::StoredAs<float>> f("f", 64);
  for (std::size_t i = 0; i < 64; ++i) f(i) = 0.1 * static_cast<double>(i) - 3;
  expect_same_bits<16, double>(f, 0, 16, "fp32");
}

// Which path this build tested: the SIMD one wherever the target has the instructions.
TEST(BlockLoad, SimdPathCompiledWhereTheTargetHasIt) {
#if defined(__F16C__) && defined(__AVX__)
  EXPECT_TRUE(kacc::Impl::block_codec<kacc::fp16>::vectorised);
#else
  EXPECT_FALSE(kacc::Impl::block_codec<kacc::fp16>::vectorised);
#endif
#if defined(__AVX2__)
  EXPECT_TRUE(kacc::Impl::block_codec<kacc::bf16>::vectorised);
#else
  EXPECT_FALSE(kacc::Impl::block_codec<kacc::bf16>::vectorised);
#endif
  EXPECT_FALSE(kacc::Impl::block_codec<float>::vectorised);
}

}  // namespace
