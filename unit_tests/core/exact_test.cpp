// kacc::exact<double> on the host, against MPFR: the correctly rounded value of the exact
// sum, bit for bit, for ill-conditioned dot products (GenDot, condition 1e5 ... 1e40), for
// values and products over the whole double range (subnormals, products that over- or
// underflow in floating point), rounding ties, signed zeros and IEEE special values; the
// same result for any order of the additions and any split into joined parts. Also
// kacc::Impl::round_terms_to_nearest (the rounding of a few expansion terms) on sums on,
// next to and far from midpoints between doubles, and exact_lanes' loops over groups of
// entries (their expansions held in registers with AVX-512, added by held_two_sum) and the
// folds of their lanes into one.
#include <kacc/core/accumulator.hpp>
#include <kacc/core/exact_lanes.hpp>
#include <kacc_testing/exact.hpp>
#include <kacc_testing/gendot.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using acc_t = kacc::exact<double>;
using traits = kacc::accumulator_traits<acc_t>;

std::uint64_t bits_of(double v) {
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// Equal bit for bit; every NaN equals every NaN.
::testing::AssertionResult same_double(double expected, double actual) {
  if ((std::isnan(expected) && std::isnan(actual)) || bits_of(expected) == bits_of(actual))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << std::hexfloat << "expected " << expected << ", got " << actual;
}

// MPFR's correctly rounded sum_k a[k] b[k].
double reference(const std::vector<double>& a, const std::vector<double>& b) {
  return kacc_testing::exact_dot(a.size(), a.data(), b.data()).rounded();
}

// sum_k a[k] b[k] in the order given, products through add_product.
double exact_dot(const std::vector<double>& a, const std::vector<double>& b) {
  acc_t acc = traits::zero();
  for (std::size_t k = 0; k < a.size(); ++k) traits::add_product(acc, a[k], b[k]);
  return traits::result(acc);
}

// The same sum in `parts` interleaved accumulators joined at the end, in reverse order.
double exact_dot_split(const std::vector<double>& a, const std::vector<double>& b, int parts) {
  std::vector<acc_t> acc(static_cast<std::size_t>(parts), traits::zero());
  for (std::size_t k = a.size(); k-- > 0;) traits::add_product(acc[k % acc.size()], a[k], b[k]);
  for (std::size_t p = 1; p < acc.size(); ++p) traits::join(acc[0], acc[p]);
  return traits::result(acc[0]);
}

TEST(Exact, GenDotEqualsMpfrForEveryConditionOrderAndSplit) {
  for (double cond : {1e5, 1e10, 1e20, 1e30, 1e40}) {
    for (std::size_t n : {6u, 100u, 1001u}) {
      SCOPED_TRACE("cond " + std::to_string(cond) + " n " + std::to_string(n));
      std::vector<double> x, y;
      kacc_testing::gen_dot(n, cond, 17 + n, x, y);
      const double ref = reference(x, y);
      EXPECT_TRUE(same_double(ref, exact_dot(x, y)));
      for (int parts : {2, 3, 7, 64}) EXPECT_TRUE(same_double(ref, exact_dot_split(x, y, parts)));
    }
  }
}

TEST(Exact, WholeDoubleRangeEqualsMpfr) {
  // Products from 2^-2148 to near 2^2048: most over- or underflow in floating point.
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const std::size_t n = 1 + seed % 40;
    const auto a = kacc_testing::wide_range_values(n, seed);
    const auto b = kacc_testing::wide_range_values(n, seed + 1000);
    EXPECT_TRUE(same_double(reference(a, b), exact_dot(a, b))) << "seed " << seed;
    EXPECT_TRUE(same_double(reference(a, b), exact_dot_split(a, b, 3))) << "seed " << seed;
    // Sums of single values: the products a[k] * 1.
    const std::vector<double> ones(n, 1.0);
    acc_t acc = traits::zero();
    for (double v : a) traits::add(acc, v);
    EXPECT_TRUE(same_double(reference(a, ones), traits::result(acc))) << "seed " << seed;
  }
}

TEST(Exact, ExpansionOverflowsIntoTheWords) {
  // Products within the expansion's range whose exact sum needs far more than its four
  // doubles: most of it has to move into the words, and decides the result once the
  // large terms cancel.
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> a, b;
    for (int k = -15; k <= 14; ++k) {
      a.push_back(std::ldexp(unit(gen), 29 * k));
      b.push_back(std::ldexp(unit(gen), 29 * k + trial));
    }
    // Cancel the larger half exactly: what is left was added while they filled the
    // expansion.
    for (std::size_t k = a.size() / 2; k < 30; ++k) {
      a.push_back(a[k]);
      b.push_back(-b[k]);
    }
    EXPECT_TRUE(same_double(reference(a, b), exact_dot(a, b))) << trial;
    EXPECT_TRUE(same_double(reference(a, b), exact_dot_split(a, b, 2))) << trial;
  }
}

TEST(Exact, CancellationOfHugeAndTinyTerms) {
  // Results that live far below the terms, and terms far beyond the double range.
  const double big = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<std::vector<double>> cases[] = {
      {{1e300, -1e300, 1.0}, {1e300, 1e300, 3.0}},  // 1e600 - 1e600 + 3
      {{big, big, -big}, {2.0, 0.5, 2.0}},          // 2 max + max/2 - 2 max
      {{tiny, 0.5}, {0.5, tiny}},                   // two ties: 2^-1075 + 2^-1075
      {{tiny, tiny}, {0.5, 0.25}},                  // 3 2^-1076: below half of 2^-1074
      {{1.0, 1.0}, {1.0, 0x1p-53}},                 // 1 + 2^-53: tie, to even (1)
      {{1.0, 1.0, tiny}, {1.0, 0x1p-53, tiny}},     // just above the tie: up
      {{1.0 + 0x1p-52, 1.0}, {1.0, 0x1p-53}},       // tie, to even (up)
      {{0x1p-1022, -tiny}, {1.0, 1.0}},             // largest subnormal
      {{big, 0x1p970}, {1.0, 1.0}},                 // max + half an ulp: tie, to even: inf
      {{big, 0x1p970, -tiny}, {1.0, 1.0, tiny}},    // just below: max
      {{-big, -big}, {1.0, 1.0}},                   // -inf
      // Four large terms fill the expansion, the small ones must go to the words, the
      // large ones cancel: 1 + 2^-53 + 2^-500 rounds up.
      {{0x1p800, 0x1p600, 0x1p400, 0x1p200, 1.0, 0x1p-53, 0x1p-500, -0x1p800, -0x1p600, -0x1p400,
        -0x1p200},
       {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}},
  };
  for (const auto& c : cases)
    EXPECT_TRUE(same_double(reference(c[0], c[1]), exact_dot(c[0], c[1])));
}

TEST(Exact, SignedZerosGivePlusZero) {
  // An exact zero is +0, as a plain sum starting at +0 gives: -0 terms too.
  EXPECT_TRUE(same_double(0.0, exact_dot({-0.0, 0.0}, {1.0, -1.0})));
  EXPECT_TRUE(same_double(0.0, exact_dot({-0.0}, {1.0})));
  EXPECT_TRUE(same_double(0.0, exact_dot({3.0, -3.0}, {1.0, 1.0})));
  EXPECT_TRUE(same_double(0.0, traits::result(traits::zero())));
  EXPECT_TRUE(same_double(-5.0, exact_dot({-0.0, -5.0}, {-0.0, 1.0})));
}

TEST(Exact, SpecialValuesFollowIeee) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(same_double(inf, exact_dot({inf, 1e308}, {1.0, -1e308})));
  EXPECT_TRUE(same_double(-inf, exact_dot({inf, 1.0}, {-2.0, 1.0})));
  EXPECT_TRUE(same_double(nan, exact_dot({inf, -inf}, {1.0, 1.0})));
  EXPECT_TRUE(same_double(nan, exact_dot({inf, 1.0}, {0.0, 1.0})));  // inf * 0
  EXPECT_TRUE(same_double(nan, exact_dot({nan, 1.0}, {1.0, 1.0})));
  EXPECT_TRUE(same_double(nan, exact_dot_split({inf, 1.0, -inf}, {1.0, 1.0, 1.0}, 3)));
  acc_t acc = traits::zero();
  traits::add(acc, inf);
  traits::add(acc, -1e308);
  EXPECT_TRUE(same_double(inf, traits::result(acc)));
  // Each special value against MPFR, which follows IEEE 754.
  const std::vector<double> a = {inf, -inf, nan, 0.0, 2.0}, b = {1.0, -1.0, 0.0, inf, 3.0};
  EXPECT_TRUE(same_double(reference(a, b), exact_dot(a, b)));
}

TEST(Exact, CarryPropagationKeepsTheValue) {
  // Many additions into the same words, with the carries propagated in between and at
  // the period the accumulator sets: the value stays exact.
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> a(20000), ones(a.size(), 1.0);
  for (auto& v : a) v = unit(gen) * 0x1p950;  // beyond the expansion: into the words
  acc_t acc = traits::zero();
  acc.pending = acc_t::normalize_period - 100;  // the period falls inside the loop
  for (std::size_t k = 0; k < a.size(); ++k) {
    traits::add(acc, a[k]);
    if (k % 4999 == 0) acc.normalize();
  }
  EXPECT_LT(acc.pending, acc_t::normalize_period);
  EXPECT_TRUE(same_double(reference(a, ones), traits::result(acc)));
}

TEST(Exact, VolatileJoinAsKokkosUsesIt) {
  std::vector<double> x, y;
  kacc_testing::gen_dot(200, 1e30, 5, x, y);
  acc_t lo = traits::zero(), hi = traits::zero();
  for (std::size_t k = 0; k < 100; ++k) traits::add_product(lo, x[k], y[k]);
  for (std::size_t k = 100; k < 200; ++k) traits::add_product(hi, x[k], y[k]);
  volatile acc_t& dest = lo;
  const volatile acc_t& src = hi;
  dest += src;
  EXPECT_TRUE(same_double(reference(x, y), traits::result(lo)));
}

}  // namespace

namespace {

// v split into two doubles whose sum is v: its leading `keep` significant bits, the rest.
void split_into(double v, int keep, std::vector<double>& out) {
  int e;
  std::frexp(v, &e);
  const double unit = std::ldexp(1.0, e - keep);
  const double lead = std::trunc(v / unit) * unit;  // exact: a power-of-two scaling
  out.push_back(lead);
  out.push_back(v - lead);  // exact: the low bits of v
}

// Six doubles whose exact sum lies on, just off or far from a midpoint between the doubles
// next to h: h split at random, +-half an ulp (or a quarter below a power of two), an
// offset of 2^-k ulp (k = 1 .. 200) or none, and a pair that cancels, shuffled.
std::vector<double> near_midpoint_terms(std::mt19937_64& gen) {
  std::uniform_int_distribution<int> exponent(-800, 800), offset(1, 200), keep(1, 52);
  std::uniform_real_distribution<double> digits(1.0, 2.0);
  const bool power_of_two = gen() % 4 == 0;
  double h = std::ldexp(power_of_two ? 1.0 : digits(gen), exponent(gen));
  if (gen() % 2) h = -h;
  const double ulp = std::ldexp(1.0, std::ilogb(h) - 52);
  const double toward_zero = power_of_two ? ulp / 4 : ulp / 2;
  const bool up = gen() % 2 != 0;  // the midpoint above h or below it
  const double half = (h > 0) == up ? ulp / 2 : toward_zero;
  double off = gen() % 4 == 0 ? 0.0 : std::ldexp(ulp, -offset(gen));
  if (gen() % 2) off = -off;
  std::vector<double> t;
  split_into(h, keep(gen), t);
  t.push_back(up ? half : -half);
  t.push_back(off);
  const double big = std::ldexp(digits(gen), std::ilogb(h) + static_cast<int>(gen() % 100));
  t.push_back(big);
  t.push_back(-big);
  std::shuffle(t.begin(), t.end(), gen);
  return t;
}

}  // namespace

TEST(Exact, RoundTermsToNearestEqualsMpfrNextToMidpoints) {
  std::mt19937_64 gen(17);
  int decided = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const auto t = near_midpoint_terms(gen);
    ASSERT_EQ(t.size(), 6u);
    const double want = reference(t, std::vector<double>(6, 1.0));
    double got = 0;
    if (kacc::Impl::round_terms_to_nearest<6>(t.data(), got)) {
      ++decided;
      EXPECT_TRUE(same_double(want, got)) << "trial " << trial;
    }
  }
  // Sums not within the bound of a midpoint are decided (about 9000 of these; the kernels
  // round the others through exact<double>).
  EXPECT_GT(decided, 5000);
  double got = 1;
  const double negative_zeros[6] = {-0.0, -0.0, -0.0, -0.0, -0.0, -0.0};
  ASSERT_TRUE(kacc::Impl::round_terms_to_nearest<6>(negative_zeros, got));
  EXPECT_TRUE(same_double(0.0, got));  // an exact zero is +0
}

namespace {

// An entry for the lane-group loops: uniform in [-1, 1] times 2^s, s uniform in [lo, hi];
// float-valued where FloatValued.
template <bool FloatValued>
double lane_entry(std::mt19937_64& gen, int lo, int hi) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  double v =
      std::ldexp(unit(gen), lo + static_cast<int>(gen() % static_cast<unsigned>(hi - lo + 1)));
  if constexpr (FloatValued) {
    v = static_cast<float>(v);
    if (!std::isfinite(v) || v == 0) v = 1.0;
  }
  return v;
}

// The load of exact_lanes' group loops over the entries at a and b: group g's W entries of
// each. Callable where exact_lanes is (host and device), so through pointers.
template <int W>
struct group_loader {
  const double* a;
  const double* b;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t g, double* x, double* y) const {
    for (int l = 0; l < W; ++l) {
      x[l] = a[g * W + l];
      y[l] = b[g * W + l];
    }
  }
};

// exact_lanes<W>::add_product_groups and lanes_try_add_product_groups (held in registers
// with AVX-512 where W is a multiple of 8, the portable loop otherwise) against MPFR, and
// add_product_groups against add_products, bit for bit. Returns how many sums the try loop
// held in its expansions.
template <bool ExactProducts, int W>
int check_lane_groups(int kind) {
  std::mt19937_64 gen(static_cast<std::uint64_t>(31 * W + kind + (ExactProducts ? 7 : 0)));
  int held = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t groups = 1 + gen() % 64, n = groups * W;
    std::vector<double> a(n), b(n);
    // Kind 1: exponents from -500 to 500; kind 3: tiny entries whose fp64 products lie
    // around the bottom of the expansions' range (those below go to the long accumulator);
    // kind 4: products inside the range whose exponents spread too far for the expansions'
    // terms (cascade remainders).
    const int lo = kind == 1   ? -500
                   : kind == 3 ? -560
                   : kind == 4 ? -150
                               : 0,
              hi = kind == 1   ? 500
                   : kind == 3 ? -470
                   : kind == 4 ? 150
                               : 0;
    for (std::size_t k = 0; k < n; ++k) {
      a[k] = lane_entry<ExactProducts>(gen, lo, hi);
      b[k] = lane_entry<ExactProducts>(gen, lo, hi);
    }
    if (kind == 2) {
      // Products that cancel in pairs, every fifth pair but for 2^-20 of it, and zeros.
      for (std::size_t k = 0; k + 1 < n; k += 2) {
        a[k + 1] = -a[k];
        b[k + 1] = k % 10 == 0 ? static_cast<float>(b[k] * (1 + 0x1p-20)) : b[k];
      }
      for (std::size_t k = 0; k < n; ++k)
        if (gen() % 4 == 0) a[k] = 0;
    }
    const double want = reference(a, b);
    const group_loader<W> load{a.data(), b.data()};
    kacc::Impl::exact_lanes<W, false, ExactProducts> grouped, one_by_one;
    grouped.add_product_groups(static_cast<std::int64_t>(groups), load);
    for (std::size_t g = 0; g < groups; ++g) one_by_one.add_products(&a[g * W], &b[g * W]);
    EXPECT_TRUE(same_double(want, grouped.value())) << "kind " << kind << ", trial " << trial;
    EXPECT_TRUE(same_double(one_by_one.value(), want)) << "kind " << kind << ", trial " << trial;

    using layout = kacc::Impl::exact_lane_terms<ExactProducts>;
    std::vector<double> terms(layout::terms * W, 0.0);
    if (kacc::Impl::lanes_try_add_product_groups<ExactProducts, W>(
            terms.data(), static_cast<std::int64_t>(groups), load)) {
      ++held;
      acc_t sum = traits::zero();
      for (double t : terms) sum.add(t);
      EXPECT_TRUE(same_double(want, traits::result(sum))) << "kind " << kind << ", trial " << trial;
    }
  }
  return held;
}

// exact_lanes<W>::value and add_into where folding the lanes into one leaves cascade
// remainders that decide the result: in two groups, lane pi(l) takes the product p_l of
// group 0 and -p_(l+1) of group 1 (the last lane zero), p_l of magnitude up to 2^e_l, the
// e_l evenly spread over [-750, 750] (fp64; [-260, 250] float-valued) from the smallest up,
// so each lane holds its two products whole, every product but p_0 cancels with one in
// another lane, and the sum, p_0, is in the remainders of the folds only. Against MPFR,
// bit for bit. Returns in how many of the 100 sums the folds sent remainders to rest.
template <bool ExactProducts, int W>
int check_lane_fold() {
  int folded_into_rest = 0;
  std::mt19937_64 gen(static_cast<std::uint64_t>(W + (ExactProducts ? 1 : 0)));
  const int bottom = ExactProducts ? -260 : -750, top = ExactProducts ? 250 : 750;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<int> lane_of(W);
    for (int l = 0; l < W; ++l) lane_of[static_cast<std::size_t>(l)] = l;
    std::shuffle(lane_of.begin(), lane_of.end(), gen);
    std::vector<double> a(2 * W, 0.0), b(2 * W, 0.0);
    for (int l = 0; l < W; ++l) {
      const int e = bottom + (top - bottom) * l / (W - 1);
      const double x = lane_entry<ExactProducts>(gen, e - e / 2, e - e / 2),
                   y = lane_entry<ExactProducts>(gen, e / 2, e / 2);
      const auto i = static_cast<std::size_t>(lane_of[static_cast<std::size_t>(l)]);
      a[i] = x;
      b[i] = y;
      if (l > 0) {
        const auto j = static_cast<std::size_t>(W + lane_of[static_cast<std::size_t>(l - 1)]);
        a[j] = -x;
        b[j] = y;
      }
    }
    const double want = reference(a, b);
    const group_loader<W> load{a.data(), b.data()};
    kacc::Impl::exact_lanes<W, false, ExactProducts> rounded, joined;
    rounded.add_product_groups(2, load);
    joined.add_product_groups(2, load);
    EXPECT_FALSE(rounded.rest_used) << "trial " << trial;  // each lane held its products
    EXPECT_TRUE(same_double(want, rounded.value())) << "trial " << trial;
    folded_into_rest += rounded.rest_used;
    acc_t acc = traits::zero();
    joined.add_into(acc);
    EXPECT_TRUE(same_double(want, traits::result(acc))) << "trial " << trial;
  }
  return folded_into_rest;
}

}  // namespace

#if defined(KACC_EXACT_LANES_AVX512)
TEST(Exact, HeldTwoSumEqualsTwoSum) {
  // Pairs of equal magnitude in both sign orders (a Fast2Sum path must still add both
  // operands), signed zeros, and pairs whose exponents differ by 0 to 120 in either order.
  std::vector<double> a, b;
  for (const double m : {1.0, 0x1.fffffffffffffp-1, 0x1p-900, 3.0e200})
    for (const double sa : {1.0, -1.0})
      for (const double sb : {1.0, -1.0}) {
        a.push_back(sa * m);
        b.push_back(sb * m);
      }
  for (const double za : {0.0, -0.0})
    for (const double zb : {0.0, -0.0, 1.5, -0x1p-1000}) {
      a.push_back(za);
      b.push_back(zb);
      a.push_back(zb);
      b.push_back(za);
    }
  std::mt19937_64 gen(17);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> shift(0, 120), base(-400, 400);
  while (a.size() % 8 != 0 || a.size() < 4096) {
    const int e = base(gen);
    a.push_back(std::ldexp(mantissa(gen), e));
    b.push_back(std::ldexp(mantissa(gen), e - shift(gen)));
    if (gen() & 1) std::swap(a.back(), b.back());
  }
  for (std::size_t i = 0; i < a.size(); i += 8) {
    __m512d err;
    const __m512d sum =
        kacc::Impl::held_two_sum(_mm512_loadu_pd(&a[i]), _mm512_loadu_pd(&b[i]), err);
    double s[8], e[8];
    _mm512_storeu_pd(s, sum);
    _mm512_storeu_pd(e, err);
    for (int l = 0; l < 8; ++l) {
      double want_s, want_e;
      kacc::eft::two_sum(a[i + l], b[i + l], want_s, want_e);
      EXPECT_TRUE(same_double(want_s, s[l])) << a[i + l] << " + " << b[i + l];
      EXPECT_EQ(want_e, e[l]) << a[i + l] << " + " << b[i + l];  // either sign of a zero
    }
  }
}
#endif

TEST(Exact, LaneFoldsKeepTheirRemainders) {
  // Every sum's folds left remainders (with 4 lanes, where fewer terms meet, most sums').
  EXPECT_GT((check_lane_fold<false, 4>()), 50);
  EXPECT_EQ((check_lane_fold<false, 8>()), 100);
  EXPECT_EQ((check_lane_fold<false, 16>()), 100);
  EXPECT_EQ((check_lane_fold<true, 16>()), 100);
  EXPECT_EQ((check_lane_fold<false, 32>()), 100);
  EXPECT_EQ((check_lane_fold<true, 32>()), 100);
}

TEST(Exact, LaneGroupsEqualMpfr) {
  // Uniform data stays in the expansions; wide exponents and tiny entries send fp64
  // products out of their range, so the try loop gives up on some sums.
  EXPECT_EQ((check_lane_groups<false, 16>(0)), 300);
  EXPECT_EQ((check_lane_groups<true, 16>(0)), 300);
  EXPECT_EQ((check_lane_groups<false, 4>(0)), 300);
  EXPECT_EQ((check_lane_groups<true, 32>(0)), 300);
  EXPECT_LT((check_lane_groups<false, 16>(1)), 300);
  EXPECT_LT((check_lane_groups<false, 4>(1)), 300);
  check_lane_groups<true, 16>(1);
  // Exact zeros (a factor zero) stay in the expansions too.
  EXPECT_EQ((check_lane_groups<false, 16>(2)), 300);
  EXPECT_EQ((check_lane_groups<true, 16>(2)), 300);
  EXPECT_EQ((check_lane_groups<false, 8>(2)), 300);
  EXPECT_LT((check_lane_groups<false, 16>(3)), 300);
  EXPECT_LT((check_lane_groups<false, 4>(3)), 300);
  EXPECT_LT((check_lane_groups<false, 16>(4)), 300);
  EXPECT_LT((check_lane_groups<true, 32>(4)), 300);
  EXPECT_LT((check_lane_groups<false, 4>(4)), 300);
}
