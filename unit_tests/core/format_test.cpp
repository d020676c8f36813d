// Storage formats: decoding of every fp16/bf16 bit pattern, encoding from double against
// MPFR (crafted halfway, subnormal and overflow cases and random doubles), encoding from
// float on a strided sample of all floats (the full 2^32 sweep is exhaustive_test.cpp),
// float_format<E, M> against MPFR, and the overflow policies of kacc views.
#include "format_reference.hpp"

#include <kacc/core.hpp>

#include <gtest/gtest.h>

#include <cfloat>
#include <random>
#include <string>
#include <vector>

namespace {

using core_test::bits_of;
using core_test::decode_by_definition;
using core_test::round_by_mpfr;
using core_test::same_value;

template <class Format>
struct layout;
template <>
struct layout<kacc::fp16> {
  static constexpr int E = 5, M = 10;
};
template <>
struct layout<kacc::bf16> {
  static constexpr int E = 8, M = 7;
};
template <int E_, int M_>
struct layout<kacc::float_format<E_, M_>> {
  static constexpr int E = E_, M = M_;
};

template <class Format>
double to_double(Format f) {
  return static_cast<double>(f);
}

template <class Format>
std::string describe(double x, Format got, double expected) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "x=%a (bits %016llx): got %a (bits %llx), expected %a", x,
                static_cast<unsigned long long>(bits_of(x)), to_double(got),
                static_cast<unsigned long long>(got.bits), expected);
  return buf;
}

using TwoByteFormats = ::testing::Types<kacc::fp16, kacc::bf16>;

}  // namespace

// --- decoding: every bit pattern --------------------------------------------------------

template <class Format>
class DecodeAll : public ::testing::Test {};
TYPED_TEST_SUITE(DecodeAll, TwoByteFormats);

TYPED_TEST(DecodeAll, EveryBitPatternDecodesExactly) {
  using F = TypeParam;
  constexpr int E = layout<F>::E, M = layout<F>::M;
  int failures = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const F f = F::from_bits(static_cast<std::uint16_t>(b));
    const double expected = decode_by_definition<E, M>(b);
    const double as_double = static_cast<double>(f);
    const double via_float = static_cast<double>(static_cast<float>(f));
    const double via_codec = kacc::detail::ieee_codec<E, M>::decode(b);
    const double via_traits = kacc::format_traits<F>::template decode<double>(f);
    const double via_convert = kacc::convert<double>(f);
    for (double got : {as_double, via_float, via_codec, via_traits, via_convert}) {
      if (!same_value(got, expected) && ++failures <= 10)
        ADD_FAILURE() << "bits " << std::hex << b << ": got " << got << ", expected " << expected;
    }
    // Signs survive on zeros, infinities and NaN alike.
    EXPECT_EQ(std::signbit(as_double), (b & 0x8000u) != 0) << std::hex << b;
    // Every non-NaN value encodes back to its own bits, from double and from float.
    if (!std::isnan(expected)) {
      if (F(expected).bits != b && ++failures <= 10) ADD_FAILURE() << "double round trip " << b;
      if (F(static_cast<float>(expected)).bits != b && ++failures <= 10)
        ADD_FAILURE() << "float round trip " << b;
    } else {
      // NaN stays NaN (quiet) through both encoders.
      EXPECT_TRUE(std::isnan(static_cast<double>(F(expected)))) << std::hex << b;
      EXPECT_TRUE(std::isnan(static_cast<double>(F(static_cast<float>(expected))))) << b;
    }
  }
  EXPECT_EQ(failures, 0);
}

// --- encoding from double ----------------------------------------------------------------

namespace {

template <class F>
void expect_encodes(double x, double expected) {
  constexpr int E = layout<F>::E, M = layout<F>::M;
  const F got(x);
  // The hand-derived expectation and MPFR agree, and the encoder matches both.
  EXPECT_TRUE(same_value(expected, round_by_mpfr<E, M>(x)))
      << "hand-derived expectation disagrees with MPFR for x=" << std::hexfloat << x;
  EXPECT_TRUE(same_value(to_double(got), expected)) << describe(x, got, expected);
  // The integer reference codec, the float encoder fed through the same double, and
  // kacc::convert all give the same result.
  EXPECT_TRUE(same_value(
      kacc::detail::ieee_codec<E, M>::decode(kacc::detail::ieee_codec<E, M>::encode(x)), expected))
      << "codec, x=" << std::hexfloat << x;
  EXPECT_TRUE(same_value(to_double(kacc::convert<F>(x)), expected))
      << "convert, x=" << std::hexfloat << x;
}

double up(double x) {
  return std::nextafter(x, INFINITY);
}
double down(double x) {
  return std::nextafter(x, -INFINITY);
}

}  // namespace

TEST(EncodeFromDouble, Fp16CraftedCases) {
  using F = kacc::fp16;
  const double ulp1 = std::ldexp(1.0, -10);  // fp16 spacing in [1, 2)
  // Exactly halfway: ties to even, both directions.
  expect_encodes<F>(1 + ulp1 / 2, 1.0);
  expect_encodes<F>(1 + 3 * ulp1 / 2, 1 + 2 * ulp1);
  expect_encodes<F>(-(1 + ulp1 / 2), -1.0);
  // One double ulp beside halfway: rounding through float (RN) would land on the halfway
  // point and then tie to even, the wrong way for the upper case.
  expect_encodes<F>(up(1 + ulp1 / 2), 1 + ulp1);
  expect_encodes<F>(down(1 + ulp1 / 2), 1.0);
  expect_encodes<F>(down(1 + 3 * ulp1 / 2), 1 + ulp1);
  expect_encodes<F>(up(1 + 3 * ulp1 / 2), 1 + 2 * ulp1);
  expect_encodes<F>(1 + ulp1 / 2 + std::ldexp(1.0, -40), 1 + ulp1);  // below float's resolution
  // Subnormals: smallest 2^-24, its half ties to zero, just above half rounds up.
  const double tiny = std::ldexp(1.0, -24);
  expect_encodes<F>(tiny, tiny);
  expect_encodes<F>(tiny / 2, 0.0);
  expect_encodes<F>(-tiny / 2, -0.0);
  expect_encodes<F>(up(tiny / 2), tiny);
  expect_encodes<F>(down(tiny / 2), 0.0);
  expect_encodes<F>(3 * tiny / 2, 2 * tiny);  // halfway between 1 and 2 subnormal units
  expect_encodes<F>(5 * tiny / 2, 2 * tiny);
  expect_encodes<F>(std::ldexp(1.0, -30), 0.0);
  expect_encodes<F>(DBL_TRUE_MIN, 0.0);
  expect_encodes<F>(-DBL_TRUE_MIN, -0.0);
  // Subnormal/normal boundary: largest subnormal 2^-14 - 2^-24, smallest normal 2^-14.
  const double min_normal = std::ldexp(1.0, -14);
  expect_encodes<F>(min_normal - tiny, min_normal - tiny);
  expect_encodes<F>(min_normal - tiny / 2, min_normal);  // tie: odd subnormal -> even normal
  expect_encodes<F>(down(min_normal - tiny / 2), min_normal - tiny);
  expect_encodes<F>(min_normal, min_normal);
  // Overflow boundary: 65504 largest finite, 65520 the tie that goes to infinity.
  expect_encodes<F>(65504.0, 65504.0);
  expect_encodes<F>(65519.99, 65504.0);
  expect_encodes<F>(down(65520.0), 65504.0);
  expect_encodes<F>(65520.0, INFINITY);
  expect_encodes<F>(-65520.0, -INFINITY);
  expect_encodes<F>(1e300, INFINITY);
  expect_encodes<F>(DBL_MAX, INFINITY);
  expect_encodes<F>(INFINITY, INFINITY);
  expect_encodes<F>(-INFINITY, -INFINITY);
  expect_encodes<F>(0.0, 0.0);
  expect_encodes<F>(-0.0, -0.0);
  expect_encodes<F>(NAN, NAN);
  expect_encodes<F>(-NAN, NAN);
  // Values beyond float's range must not become float infinities on the way.
  expect_encodes<F>(1e39, INFINITY);
  expect_encodes<F>(1e-46, 0.0);
}

TEST(EncodeFromDouble, Bf16CraftedCases) {
  using F = kacc::bf16;
  const double ulp1 = std::ldexp(1.0, -7);
  expect_encodes<F>(1 + ulp1 / 2, 1.0);
  expect_encodes<F>(1 + 3 * ulp1 / 2, 1 + 2 * ulp1);
  expect_encodes<F>(up(1 + ulp1 / 2), 1 + ulp1);
  expect_encodes<F>(down(1 + ulp1 / 2), 1.0);
  expect_encodes<F>(down(1 + 3 * ulp1 / 2), 1 + ulp1);
  expect_encodes<F>(1 + ulp1 / 2 + std::ldexp(1.0, -40), 1 + ulp1);
  // Subnormals: smallest 2^-133; bf16 shares float's exponent range.
  const double tiny = std::ldexp(1.0, -133);
  expect_encodes<F>(tiny, tiny);
  expect_encodes<F>(tiny / 2, 0.0);
  expect_encodes<F>(up(tiny / 2), tiny);
  expect_encodes<F>(-up(tiny / 2), -tiny);
  expect_encodes<F>(3 * tiny / 2, 2 * tiny);
  expect_encodes<F>(std::ldexp(1.0, -149), 0.0);  // float's smallest subnormal
  expect_encodes<F>(1e-300, 0.0);
  const double min_normal = std::ldexp(1.0, -126);
  expect_encodes<F>(min_normal - tiny / 2, min_normal);
  expect_encodes<F>(down(min_normal - tiny / 2), min_normal - tiny);
  // Overflow: largest finite (2 - 2^-7) 2^127; (2 - 2^-8) 2^127 is the tie to infinity.
  const double max = std::ldexp(2 - ulp1, 127);
  const double tie = std::ldexp(2 - ulp1 / 2, 127);
  expect_encodes<F>(max, max);
  expect_encodes<F>(down(tie), max);
  expect_encodes<F>(tie, INFINITY);
  expect_encodes<F>(static_cast<double>(FLT_MAX), INFINITY);
  expect_encodes<F>(up(static_cast<double>(FLT_MAX)), INFINITY);
  expect_encodes<F>(-1e300, -INFINITY);
  expect_encodes<F>(INFINITY, INFINITY);
  expect_encodes<F>(-0.0, -0.0);
  expect_encodes<F>(NAN, NAN);
  EXPECT_EQ(kacc::format_traits<F>::max_value(), max);
  EXPECT_EQ(kacc::format_traits<kacc::fp16>::max_value(), 65504.0);
}

namespace {

// Random doubles that exercise a format: a third with exponents spread over the format's
// range and a margin, a third within a few double ulps of a halfway point between two
// neighbouring format values, a third of raw random bit patterns.
template <int E, int M>
std::vector<double> random_doubles(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int bias = (1 << (E - 1)) - 1;
  std::uniform_int_distribution<int> exponent(1 - bias - M - 4, bias + 3);
  std::uniform_int_distribution<int> nudge(-3, 3);
  std::vector<double> xs;
  xs.reserve(n);
  const std::uint64_t max_finite = kacc::detail::ieee_codec<E, M>::max_finite_bits;
  while (xs.size() < n) {
    const std::uint64_t r = rng();
    double x;
    switch (xs.size() % 3) {
      case 0: {
        const std::uint64_t mantissa = r & 0xfffffffffffffull;
        x = std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -52), exponent(rng));
        break;
      }
      case 1: {
        const std::uint64_t b = r % max_finite;  // b and b + 1 both finite
        const double lo = decode_by_definition<E, M>(b), hi = decode_by_definition<E, M>(b + 1);
        x = lo + (hi - lo) / 2;  // exact: a midpoint of two format values is a double
        for (int k = nudge(rng); k != 0; k += k > 0 ? -1 : 1) x = k > 0 ? up(x) : down(x);
        break;
      }
      default:
        std::memcpy(&x, &r, sizeof x);
        if (std::isnan(x)) continue;
    }
    xs.push_back((rng() & 1) ? -x : x);
  }
  return xs;
}

template <class F>
void check_random_against_mpfr(std::size_t n, std::uint64_t seed) {
  constexpr int E = layout<F>::E, M = layout<F>::M;
  int failures = 0;
  for (double x : random_doubles<E, M>(n, seed)) {
    const double expected = round_by_mpfr<E, M>(x);
    const F got(x);
    if (!same_value(to_double(got), expected) && ++failures <= 10)
      ADD_FAILURE() << describe(x, got, expected);
  }
  EXPECT_EQ(failures, 0);
}

}  // namespace

TEST(EncodeFromDouble, Fp16MillionRandomAgainstMpfr) {
  check_random_against_mpfr<kacc::fp16>(1000000, 1);
}

TEST(EncodeFromDouble, Bf16MillionRandomAgainstMpfr) {
  check_random_against_mpfr<kacc::bf16>(1000000, 2);
}

// --- encoding from float: a strided sample (the exhaustive test covers all 2^32) ----------

TYPED_TEST(DecodeAll, StridedFloatsEncodeLikeTheReferenceCodec) {
  using F = TypeParam;
  constexpr int E = layout<F>::E, M = layout<F>::M;
  int failures = 0;
  // An odd stride visits every exponent and many mantissa patterns in ~1M steps.
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 4093) {
    const float f = kacc::bit_cast<float>(static_cast<std::uint32_t>(u));
    const double d = static_cast<double>(f);
    const F got(f);
    if (std::isnan(f)) {
      if (!std::isnan(static_cast<double>(got)) && ++failures <= 10)
        ADD_FAILURE() << "NaN lost: " << std::hex << u;
      continue;
    }
    const std::uint64_t expected = kacc::detail::ieee_codec<E, M>::encode(d);
    if (got.bits != expected && ++failures <= 10)
      ADD_FAILURE() << describe(d, got, decode_by_definition<E, M>(expected));
    if (!same_value(to_double(got), round_by_mpfr<E, M>(d)) && ++failures <= 10)
      ADD_FAILURE() << "MPFR: " << describe(d, got, round_by_mpfr<E, M>(d));
  }
  EXPECT_EQ(failures, 0);
}

// --- float_format<E, M> -------------------------------------------------------------------

template <class Format>
class FloatFormat : public ::testing::Test {};
using FloatFormats = ::testing::Types<kacc::float_format<5, 10>, kacc::float_format<6, 9>,
                                      kacc::float_format<4, 3>, kacc::float_format<5, 2>,
                                      kacc::float_format<8, 15>, kacc::float_format<10, 21>>;
TYPED_TEST_SUITE(FloatFormat, FloatFormats);

TYPED_TEST(FloatFormat, DecodesByDefinitionAndRoundTrips) {
  using F = TypeParam;
  constexpr int E = layout<F>::E, M = layout<F>::M, width = 1 + E + M;
  static_assert(sizeof(F) * 8 >= width && sizeof(F) * 8 < 2 * width + 8, "smallest container");
  // All patterns for formats up to 16 bits, a stride through wider ones.
  const std::uint64_t count = std::uint64_t{1} << width;
  const std::uint64_t step = width <= 16 ? 1 : (count >> 16) | 1;
  int failures = 0;
  for (std::uint64_t b = 0; b < count; b += step) {
    const F f = F::from_bits(static_cast<typename F::container_type>(b));
    const double expected = decode_by_definition<E, M>(b);
    if (!same_value(static_cast<double>(f), expected) && ++failures <= 10)
      ADD_FAILURE() << "decode " << std::hex << b;
    if (std::isnan(expected)) {
      if (!std::isnan(static_cast<double>(F(expected))) && ++failures <= 10)
        ADD_FAILURE() << "NaN lost " << std::hex << b;
    } else if (F(expected).bits != b && ++failures <= 10) {
      ADD_FAILURE() << "round trip " << std::hex << b;
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(kacc::format_traits<F>::max_value(),
            (decode_by_definition<E, M>(kacc::detail::ieee_codec<E, M>::max_finite_bits)));
}

TYPED_TEST(FloatFormat, RandomDoublesRoundLikeMpfr) {
  using F = TypeParam;
  constexpr int E = layout<F>::E, M = layout<F>::M;
  int failures = 0;
  for (double x : random_doubles<E, M>(200000, 3 + E * 64 + M)) {
    const double expected = round_by_mpfr<E, M>(x);
    const F got(x);
    if (!same_value(static_cast<double>(got), expected) && ++failures <= 10)
      ADD_FAILURE() << describe(x, got, expected);
  }
  EXPECT_EQ(failures, 0);
}

TEST(FloatFormat, WorksAsViewStorage) {
  using F = kacc::float_format<6, 9>;
  kacc::View<double*, kacc::StoredAs<F>, Kokkos::HostSpace> v("v", 3);
  v(0) = 1.0 / 3;
  v(1) = 1e10;  // beyond the largest finite (2 - 2^-9) 2^31
  v(2) = -1e-12;
  EXPECT_EQ(v(0).get(), (round_by_mpfr<6, 9>(1.0 / 3)));
  EXPECT_EQ(v(1).get(), INFINITY);
  EXPECT_TRUE(same_value(v(2).get(), round_by_mpfr<6, 9>(-1e-12)));
  EXPECT_EQ(sizeof(*v.data()), 2u);
  EXPECT_EQ(std::string(kacc::format_name<F>()), "e6m9");  // exponent and mantissa bits
}

// --- overflow policies ----------------------------------------------------------------

namespace {
template <class Arith, class Format, class Policy>
using host_view = kacc::View<Arith*, kacc::StoredAs<Format, Policy>, Kokkos::HostSpace>;

template <class Arith, class Format>
void check_policies(double max_finite, double beyond) {
  SCOPED_TRACE(kacc::format_name<Format>());
  const Arith big = static_cast<Arith>(beyond), inf = std::numeric_limits<Arith>::infinity();
  const Arith nan = std::numeric_limits<Arith>::quiet_NaN();
  host_view<Arith, Format, kacc::overflow::ieee> ieee("ieee", 6);
  host_view<Arith, Format, kacc::overflow::saturate> sat("sat", 6);
  const Arith inputs[6] = {big, -big, inf, -inf, nan, static_cast<Arith>(max_finite)};
  for (int i = 0; i < 6; ++i) {
    ieee(i) = inputs[i];
    sat(i) = inputs[i];
  }
  const Arith m = static_cast<Arith>(max_finite);
  EXPECT_EQ(ieee(0).get(), inf);
  EXPECT_EQ(ieee(1).get(), -inf);
  EXPECT_EQ(ieee(2).get(), inf);
  EXPECT_EQ(ieee(3).get(), -inf);
  EXPECT_TRUE(std::isnan(ieee(4).get()));
  EXPECT_EQ(ieee(5).get(), m);
  EXPECT_EQ(sat(0).get(), m);
  EXPECT_EQ(sat(1).get(), -m);
  EXPECT_EQ(sat(2).get(), m);
  EXPECT_EQ(sat(3).get(), -m);
  EXPECT_TRUE(std::isnan(sat(4).get()));
  EXPECT_EQ(sat(5).get(), m);
  // Compound assignment goes through the same policy.
  sat(5) *= Arith(4);
  ieee(5) *= Arith(4);
  EXPECT_EQ(sat(5).get(), m);
  EXPECT_EQ(ieee(5).get(), inf);
  // deep_copy honours the destination's policy.
  Kokkos::View<Arith*, Kokkos::HostSpace> src("src", 6);
  for (int i = 0; i < 6; ++i) src(i) = inputs[i];
  kacc::deep_copy(sat, src);
  EXPECT_EQ(sat(0).get(), m);
  EXPECT_EQ(sat(3).get(), -m);
  EXPECT_TRUE(std::isnan(sat(4).get()));
}
}  // namespace

TEST(OverflowPolicy, IeeeGivesInfinitySaturateClamps) {
  check_policies<double, kacc::fp16>(65504.0, 1e6);
  check_policies<float, kacc::fp16>(65504.0, 1e6);
  check_policies<double, kacc::bf16>(kacc::format_traits<kacc::bf16>::max_value(), 1e39);
  check_policies<float, kacc::bf16>(kacc::format_traits<kacc::bf16>::max_value(),
                                    static_cast<double>(FLT_MAX));
  check_policies<double, float>(FLT_MAX, 1e300);
  check_policies<double, kacc::float_format<4, 3>>(240.0, 1e4);
}

TEST(OverflowPolicy, SaturateLeavesInRangeRoundingAlone) {
  host_view<double, kacc::fp16, kacc::overflow::saturate> sat("sat", 3);
  sat(0) = 65519.0;  // rounds to 65504 anyway
  sat(1) = 1.0 / 3;
  sat(2) = -0.0;
  EXPECT_EQ(sat(0).get(), 65504.0);
  EXPECT_EQ(sat(1).get(), (round_by_mpfr<5, 10>(1.0 / 3)));
  EXPECT_TRUE(std::signbit(sat(2).get()));
  // A saturating view of double storage is not the identity: it hands out proxies.
  using D = host_view<double, double, kacc::overflow::saturate>;
  static_assert(!D::is_identity && kacc::is_reference_v<decltype(std::declval<D>()(0))>, "");
  D d("d", 1);
  d(0) = INFINITY;
  EXPECT_EQ(d(0).get(), DBL_MAX);
}
