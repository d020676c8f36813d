// The storage formats in a program built with -ffast-math, which (on x86, at start-up)
// sets flush-to-zero and denormals-are-zero for the whole process, as any application
// built with it does to the header-only kacc it includes. Subnormal values of fp16, bf16
// and float_format must still decode and encode bit for bit: decoding uses integer
// operations only, encoding never reads a subnormal operand it depends on. Expected
// values are built here on the bits, with integers only, so the flags cannot touch them.
// (format_test.cpp is not built this way: -ffast-math also assumes no NaN or infinity,
// which its NaN and overflow checks need.)
#include <kacc/core.hpp>
#include <kacc/core/block_load.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

template <class To, class From>
To bits_as(From from) {
  static_assert(sizeof(To) == sizeof(From), "");
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

// The double m * 2^e for 0 < m < 2^52 and a normal result, built on the bits: m shifted
// up to its leading one, the exponent counted with integers.
double exact_double(std::uint64_t m, int e) {
  int lead = 63;
  while (!(m >> lead)) --lead;
  const std::uint64_t fraction = (m << (52 - lead)) & ((std::uint64_t{1} << 52) - 1);
  const auto exponent = static_cast<std::uint64_t>(1023 + lead + e);
  return bits_as<double>((exponent << 52) | fraction);
}

// The float m * 2^e for 0 < m < 2^23, normal or subnormal result, on the bits.
float exact_float(std::uint32_t m, int e) {
  int lead = 31;
  while (!(m >> lead)) --lead;
  const int exponent = 127 + lead + e;
  if (exponent >= 1) {
    const std::uint32_t fraction = (m << (23 - lead)) & 0x7fffffu;
    return bits_as<float>((static_cast<std::uint32_t>(exponent) << 23) | fraction);
  }
  return bits_as<float>(m << (e + 149));  // subnormal: the mantissa sits at 2^-149 units
}

}  // namespace

TEST(FastMath, FlushToZeroAndDenormalsAreZeroAreOn) {
  // The premise of every other test here: float arithmetic now flushes subnormals. A
  // multiply whose operand is subnormal reads it as zero.
  volatile float tiny = bits_as<float>(std::uint32_t{0x00000100u});
  volatile float one = 1.0f;
  EXPECT_EQ(tiny * one, 0.0f) << "this binary does not run with denormals-are-zero";
  volatile double tiny64 = bits_as<double>(std::uint64_t{0x100});
  EXPECT_EQ(static_cast<double>(tiny64 * 1.0), 0.0);
}

TEST(FastMath, Fp16SubnormalsDecodeAndEncodeExactly) {
  for (std::uint32_t m = 1; m < 1024; ++m) {
    for (const std::uint32_t sign : {0u, 0x8000u}) {
      const auto bits = static_cast<std::uint16_t>(sign | m);
      const kacc::fp16 h = kacc::fp16::from_bits(bits);
      const float f = exact_float(m, -24) * (sign ? -1.0f : 1.0f);  // normal floats
      ASSERT_EQ(bits_as<std::uint32_t>(static_cast<float>(h)), bits_as<std::uint32_t>(f)) << m;
      ASSERT_EQ(bits_as<std::uint64_t>(static_cast<double>(h)),
                bits_as<std::uint64_t>(static_cast<double>(f)))
          << m;
      ASSERT_EQ(kacc::fp16(f).bits, bits) << m;
      ASSERT_EQ(kacc::fp16(static_cast<double>(f)).bits, bits) << m;
      ASSERT_EQ(kacc::convert<kacc::fp16>(kacc::convert<double>(h)).bits, bits) << m;
    }
    // Halfway to the next subnormal: ties to even, on the float and the double path.
    const double tie = exact_double(2 * m + 1, -25);
    const std::uint16_t even = static_cast<std::uint16_t>((m & 1) ? m + 1 : m);
    ASSERT_EQ(kacc::fp16(tie).bits, even) << m;
    ASSERT_EQ(kacc::fp16(static_cast<float>(tie)).bits, even) << m;
  }
}

TEST(FastMath, Bf16SubnormalsDecodeAndEncodeExactly) {
  for (std::uint32_t m = 1; m < 128; ++m) {
    for (const std::uint32_t sign : {0u, 0x8000u}) {
      const auto bits = static_cast<std::uint16_t>(sign | m);
      const kacc::bf16 b = kacc::bf16::from_bits(bits);
      // m * 2^-133: a float subnormal, a normal double.
      const double d = exact_double(m, -133);
      const double expected = sign ? -d : d;
      ASSERT_EQ(bits_as<std::uint64_t>(static_cast<double>(b)), bits_as<std::uint64_t>(expected))
          << m;
      // As a float it is the subnormal with the same top 16 bits, moved there unchanged.
      ASSERT_EQ(bits_as<std::uint32_t>(static_cast<float>(b)), (sign | m) << 16) << m;
      ASSERT_EQ(kacc::bf16(expected).bits, bits) << m;
      ASSERT_EQ(kacc::bf16(bits_as<float>((sign | m) << 16)).bits, bits) << m;
      ASSERT_EQ(kacc::convert<double>(b), expected) << m;
    }
  }
}

template <int E, int M>
void check_float_format_subnormals() {
  using F = kacc::float_format<E, M>;
  using codec = typename F::codec;
  constexpr int lowest = 1 - codec::bias - M;  // exponent of the subnormal unit
  for (std::uint64_t m = 1; m <= codec::mantissa_mask; ++m) {
    const auto bits = static_cast<typename F::container_type>(m);
    const F f = F::from_bits(bits);
    const double expected = exact_double(m, lowest);
    ASSERT_EQ(bits_as<std::uint64_t>(static_cast<double>(f)), bits_as<std::uint64_t>(expected))
        << m;
    ASSERT_EQ(F(expected).bits, bits) << m;
    if constexpr (E <= 8 && M <= 23) {
      const float expected_float = exact_float(static_cast<std::uint32_t>(m), lowest);
      ASSERT_EQ(bits_as<std::uint32_t>(static_cast<float>(f)),
                bits_as<std::uint32_t>(expected_float))
          << m;
      ASSERT_EQ(F(expected_float).bits, bits) << m;
    }
  }
}

TEST(FastMath, FloatFormatSubnormalsDecodeAndEncodeExactly) {
  check_float_format_subnormals<5, 2>();   // E5M2
  check_float_format_subnormals<4, 3>();   // E4M3-like
  check_float_format_subnormals<6, 9>();   // 16 bits, wider range
  check_float_format_subnormals<8, 15>();  // truncated float: float subnormals
  check_float_format_subnormals<10, 13>();
}

TEST(FastMath, EveryFp16AndBf16PatternMatchesTheReferenceCodec) {
  // The integer reference codec (ieee_codec) runs no float arithmetic, so it is the same
  // under any flags; every pattern, NaNs included, must decode to its bits.
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto b16 = static_cast<std::uint16_t>(bits);
    const double h = kacc::detail::binary16_codec::decode(b16);
    const double b = kacc::detail::bfloat16_codec::decode(b16);
    ASSERT_EQ(bits_as<std::uint64_t>(static_cast<double>(kacc::fp16::from_bits(b16))),
              bits_as<std::uint64_t>(h))
        << bits;
    ASSERT_EQ(bits_as<std::uint64_t>(static_cast<double>(kacc::bf16::from_bits(b16))),
              bits_as<std::uint64_t>(b))
        << bits;
  }
}

namespace {

// Stores xs (as A) 16 at a time through block stores (SIMD where the target has them) and
// one by one, and expects the same bits: the scalar stores are exact under these flags
// (the tests above), the block stores round through float.
template <class Format, class A>
void expect_block_stores_match(const std::vector<double>& xs) {
  const std::size_t n = (xs.size() + 15) / 16 * 16;
  kacc::View<A*, Kokkos::HostSpace, kacc::StoredAs<Format>> block("block", n), scalar("scalar", n);
  std::vector<A> in(n, A(0));
  for (std::size_t i = 0; i < xs.size(); ++i) in[i] = static_cast<A>(xs[i]);
  for (std::size_t i = 0; i < n; i += 16) {
    kacc::Impl::store_block<16>(block, static_cast<kacc::index_type>(i), in.data() + i);
  }
  for (std::size_t i = 0; i < n; ++i) scalar(i) = in[i];
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(block.storage()(i).bits, scalar.storage()(i).bits) << i << " " << in[i];
}

}  // namespace

TEST(FastMath, BlockStoresOfSubnormalsMatchTheScalarStores) {
  // Every subnormal of fp16 (m 2^-24) and bf16 (m 2^-133), the ties above them and their
  // neighbours one double ulp away, in blocks that mix them with normal values.
  std::vector<double> fp16s, bf16s;
  for (std::uint64_t m = 1; m < 2048; ++m) {
    for (const double d : {exact_double(m, -25), exact_double(m, -134)}) {
      std::vector<double>& xs = d > 1e-20 ? fp16s : bf16s;
      const std::uint64_t u = bits_as<std::uint64_t>(d);
      for (const std::uint64_t v : {u - 1, u, u + 1}) {
        xs.push_back(bits_as<double>(v));
        xs.push_back(-bits_as<double>(v));
      }
      xs.push_back(0.5);
    }
  }
  expect_block_stores_match<kacc::fp16, double>(fp16s);
  expect_block_stores_match<kacc::fp16, float>(fp16s);
  expect_block_stores_match<kacc::bf16, double>(bf16s);
  expect_block_stores_match<kacc::bf16, float>(bf16s);
  // Doubles below float's normals (and fp16's range) in an otherwise normal block.
  std::vector<double> tiny(16, 1.0);
  tiny[3] = exact_double(3, -140);
  tiny[9] = -exact_double(5, -150);
  tiny[12] = exact_double(1, -1000);
  expect_block_stores_match<kacc::fp16, double>(tiny);
  expect_block_stores_match<kacc::bf16, double>(tiny);
}

namespace {

// Loads every pattern of Format W at a time through block loads (SIMD where the target
// has them: blocks of 16, one-entry widening for W = 1) as T, read in A, and expects the
// bits of the scalar loads, which are exact under these flags
// (EveryFp16AndBf16PatternMatchesTheReferenceCodec).
template <class Format, class A, class T, int W>
void expect_block_loads_match_in() {
  constexpr int n = 65536;
  kacc::View<A*, Kokkos::HostSpace, kacc::StoredAs<Format>> v("patterns", n);
  for (int i = 0; i < n; ++i) v.storage()(i) = Format::from_bits(static_cast<std::uint16_t>(i));
  std::vector<T> block(n);
  for (int i = 0; i < n; i += W) kacc::Impl::load_block<W>(v, i, block.data() + i);
  for (int i = 0; i < n; ++i) {
    // NaNs, found on the bits (-ffast-math lets a compiler assume x == x): their quieting
    // is format_test's, built without -ffast-math.
    if (static_cast<std::uint64_t>(i & 0x7fff) > Format::codec::infinity_bits) continue;
    const T scalar = kacc::convert<T>(v(i));
    using Bits = typename std::conditional<sizeof(T) == 8, std::uint64_t, std::uint32_t>::type;
    ASSERT_EQ(bits_as<Bits>(block[i]), bits_as<Bits>(scalar))
        << Format::name() << " pattern " << i << ", blocks of " << W;
  }
}

template <class Format, class A, class T>
void expect_block_loads_match() {
  expect_block_loads_match_in<Format, A, T, 16>();
  expect_block_loads_match_in<Format, A, T, 1>();
}

}  // namespace

TEST(FastMath, BlockLoadsOfEveryPatternMatchTheScalarLoads) {
  expect_block_loads_match<kacc::fp16, double, double>();
  expect_block_loads_match<kacc::fp16, float, float>();
  expect_block_loads_match<kacc::fp16, float, double>();
  expect_block_loads_match<kacc::bf16, double, double>();
  expect_block_loads_match<kacc::bf16, float, float>();
  expect_block_loads_match<kacc::bf16, float, double>();
}
