#pragma once
/// @file
/// kacc::Impl::exact_lanes<W>: the host loop form of kacc::exact<double> for products taken W
/// at a time. W lanes of floating-point expansions side by side, terms for the rounded
/// products and terms for their rounding errors, so each cascade of TwoSums is the same
/// branch-free operation on W doubles (it vectorises), and each lane's leading term carries
/// the loop's only dependency from one group of W products to the next. A cascade stops at
/// the first term after which no lane has a remainder: on most data the later terms only
/// ever add zeros. Products of two float-valued entries (fp32, fp16 or bf16 storage) are
/// exact in double, so with ExactProducts the error terms and their cascade are left out at
/// compile time. Products outside the expansions' range, special values, and whatever an
/// expansion cannot hold go to one exact<double> on the side, as exact<double>::add_product
/// would send them. Every step is exact, so the sum is the same exact sum, however it is
/// split. The loops over groups of W products (exact_lanes::add_product_groups,
/// lanes_try_add_product_groups) keep the expansions in AVX-512 registers where the host has
/// them, and the lanes are folded into one there too (exact_lanes_avx512.hpp).

#include <kacc/core/exact.hpp>
#include <kacc/core/exact_lanes_avx512.hpp>
#include <kacc/core/ieee_codec.hpp>
#include <kacc/core/pragma_simd.hpp>

#include <cstdint>

namespace kacc {
namespace Impl {

/// Whether host loops accumulating in Acc with arithmetic T use exact_lanes.
template <class Acc, class T>
inline constexpr bool uses_exact_lanes_v =
    std::is_same<Acc, exact<double>>::value&& std::is_same<T, double>::value;

/// Whether every value of an ieee_codec format is a float: at most 24 significant bits and
/// exponents within float's, subnormals included (ExponentBits <= 8, MantissaBits <= 23).
template <class Codec>
struct codec_within_float : std::false_type {};
template <int ExponentBits, int MantissaBits>
struct codec_within_float<kacc::detail::ieee_codec<ExponentBits, MantissaBits>>
    : std::integral_constant<bool, (ExponentBits <= 8 && MantissaBits <= 23)> {};

/// Whether every value of the storage format Format is a float: fp32, fp16, bf16 and the
/// float_formats within float. Scaled formats are not (a scale widens the significand).
template <class Format, class = void>
struct float_valued : std::is_same<Format, float> {};
template <class Format>
struct float_valued<Format, std::void_t<typename Format::codec>>
    : codec_within_float<typename Format::codec> {};

/// Whether the product of two entries stored as FA and FB, widened to double, is exact and,
/// when finite, inside the expansions' range: both float-valued, so at most 48 significant
/// bits and a magnitude in [2^-298, 2^256] (or zero). Such products need no error terms.
template <class FA, class FB>
inline constexpr bool exact_products_v = float_valued<FA>::value&& float_valued<FB>::value;

/// Whether the W doubles x[l] are all zero (either sign). With AVX-512, one bit test of the
/// OR of the lanes (compilers turn the portable loop into a scalar one).
template <int W>
KOKKOS_FORCEINLINE_FUNCTION bool lanes_all_zero(const double* x) {
#if defined(KACC_EXACT_LANES_AVX512)
  if constexpr (W % 8 == 0) {
    __m512i bits = _mm512_castpd_si512(load_written_pd(x));
    for (int l = 8; l < W; l += 8)
      bits = _mm512_or_si512(bits, _mm512_castpd_si512(load_written_pd(x + l)));
    return _mm512_test_epi64_mask(bits, _mm512_set1_epi64(0x7fffffffffffffffll)) == 0;
  }
#endif
  std::uint64_t bits = 0;
  for (int l = 0; l < W; ++l) bits |= kacc::bit_cast<std::uint64_t>(x[l]) << 1;
  return bits == 0;
}

/// Whether the expansions take every product p[l] = a[l] b[l]: inside
/// exact<double>::add_product's expansion range, or an exact zero (which adds nothing
/// anywhere); with ExactProducts, whether every product is finite.
template <bool ExactProducts, int W>
KOKKOS_FORCEINLINE_FUNCTION bool lanes_in_range(const double* a, const double* b, const double* p) {
  constexpr double lo = exact<double>::expansion_min_product, hi = exact<double>::expansion_max;
#if defined(KACC_EXACT_LANES_AVX512)
  if constexpr (W % 8 == 0) {
    __mmask8 all = 0xff;
    for (int l = 0; l < W; l += 8)
      all &= lanes_in_range_mask<ExactProducts>(load_written_pd(a + l), load_written_pd(b + l),
                                                load_written_pd(p + l));
    return all == 0xff;
  }
#endif
  int in_range = 0;
  for (int l = 0; l < W; ++l) {
    const double m = math::fabs(p[l]);
    // Bitwise, not short-circuit, operators: no branch in the loop.
    if constexpr (ExactProducts) {
      in_range += m <= hi;  // false for inf and NaN
    } else {
      const bool zero = (p[l] == 0) & ((a[l] == 0) | (b[l] == 0));
      in_range += ((m >= lo) & (m <= hi)) | zero;
    }
  }
  return in_range == W;
}

KACC_SIMD_LOOPS_BEGIN
/// Adds x[l] to lane l of the expansion of Terms terms at `terms` (term t of lane l at
/// terms[t W + l]) by TwoSums, term by term, until no remainder is left (checked from the
/// second term on). Returns whether a nonzero remainder is left in x after the last term.
template <int Terms, int W>
KOKKOS_FORCEINLINE_FUNCTION bool lanes_cascade(double* terms, double* x) {
  for (int t = 0; t < Terms; ++t) {
    double* term = terms + t * W;
    KACC_PRAGMA_SIMD
    for (int l = 0; l < W; ++l) {
      const double e = term[l], v = x[l];
      const double s = e + v, bb = s - e;
      term[l] = s;
      x[l] = (e - (s - bb)) + (v - bb);  // TwoSum: e + v = s + x[l] exactly
    }
    // The leading term's remainders (the rounding errors of the running sums) are rarely
    // all zero: checking them costs more than it saves.
    if (t >= 1 && t + 1 < Terms && lanes_all_zero<W>(x)) return false;
  }
  return !lanes_all_zero<W>(x);
}

/// p[l] = a[l] b[l] and, unless ExactProducts, e[l] = its rounding error (FMA). Returns
/// whether the expansions take every product (lanes_in_range).
template <bool ExactProducts, int W>
KOKKOS_FORCEINLINE_FUNCTION bool lanes_products(const double* a, const double* b, double* p,
                                                double* e) {
  KACC_PRAGMA_SIMD
  for (int l = 0; l < W; ++l) {
    p[l] = a[l] * b[l];
    if constexpr (!ExactProducts) e[l] = math::fma(a[l], b[l], -p[l]);
  }
  return lanes_in_range<ExactProducts, W>(a, b, p);
}
KACC_SIMD_LOOPS_END

/// Terms of exact_lanes' expansions: product_terms for the rounded products, then
/// error_terms for their rounding errors (none when the products are exact).
template <bool ExactProducts>
struct exact_lane_terms {
  /// Doubles per expansion of the rounded products: as exact<double>'s own.
  static constexpr int product_terms = exact<double>::expansion_terms;
  /// Doubles per expansion of the rounding errors: each error is below half an ulp of its
  /// product, so their sum spans fewer bits.
  static constexpr int error_terms = ExactProducts ? 0 : 2;
  /// All terms of one lane.
  static constexpr int terms = product_terms + error_terms;
};

/// Adds a[l] b[l] to lane l of the expansions at `terms` (exact_lane_terms' layout, term t
/// of lane l at terms[t W + l]) when the expansions hold them whole; returns false, with
/// the expansions no longer of use, when something would have to go to a long accumulator.
template <bool ExactProducts, int W>
KOKKOS_FORCEINLINE_FUNCTION bool lanes_try_add_products(double* terms, const double* a,
                                                        const double* b) {
  using layout = exact_lane_terms<ExactProducts>;
  double p[W], e[W];
  if (!lanes_products<ExactProducts, W>(a, b, p, e)) return false;
  if (lanes_cascade<layout::product_terms, W>(terms, p)) return false;
  if constexpr (!ExactProducts) {
    if (lanes_cascade<layout::error_terms, W>(terms + layout::product_terms * W, e)) return false;
  }
  return true;
}

/// lanes_try_add_products for `groups` groups in turn, group g's entries written into
/// a[0 .. W) and b[0 .. W) by load(g, a, b); false as soon as one fails. With AVX-512 the
/// expansions stay in registers from one group to the next (held_add_product_groups).
template <bool ExactProducts, int W, class Load>
KOKKOS_FORCEINLINE_FUNCTION bool lanes_try_add_product_groups(double* terms,
                                                              const std::int64_t groups,
                                                              const Load& load) {
#if defined(KACC_EXACT_LANES_AVX512)
  if constexpr (W % 8 == 0)
    return held_add_product_groups<exact_lane_terms<ExactProducts>, W / 8>(
        terms, groups, load, held_give_up{}, held_give_up{});
#endif
  for (std::int64_t g = 0; g < groups; ++g) {
    double a[W], b[W];
    load(g, a, b);
    if (!lanes_try_add_products<ExactProducts, W>(terms, a, b)) return false;
  }
  return true;
}

/// Rounds the exact sum S of the N finite doubles t[0 .. N) to nearest, ties to even, into
/// `out` when a few floating-point operations decide it, and returns whether they did; the
/// caller rounds S otherwise (through an exact<double>). Up to `passes` TwoSum passes
/// (VecSum: v[N-1] the running sum, v[0 .. N-2] the errors, S = sum v exactly). After each:
///   - v[0 .. N-3] all zero: S = v[N-2] + v[N-1] exactly, and their TwoSum's sum is RN(S);
///   - else with r the rounded sum of v[0 .. N-2] (error at most B = 2^-48 sum |v_i| for
///     N <= 16) and v[N-1] + r = h + l exactly, h = RN(v[N-1] + r): S = h + l + d, |d| <= B,
///     and h is RN(S) when l is more than B from both midpoints next to h (so on most data
///     after the first pass). Not decided there when |h| < 2^-899 (the gaps and the bound
///     must not underflow).
/// An exact zero gives +0. The terms must be small enough that their sums cannot overflow
/// (exact<double>'s expansion terms are, below 2^1000).
template <int N, int Passes = 3>
KOKKOS_INLINE_FUNCTION bool round_terms_to_nearest(const double* t, double& out) {
  static_assert(N >= 2 && N <= 16, "kacc::Impl::round_terms_to_nearest: the bound needs N <= 16");
  double v[N];
  for (int i = 0; i < N; ++i) v[i] = t[i];
  for (int pass = 0; pass < Passes; ++pass) {
    for (int i = 1; i < N; ++i) eft::two_sum(v[i - 1], v[i], v[i], v[i - 1]);
    int nonzero = 0;
    for (int i = 0; i + 2 < N; ++i) nonzero += v[i] != 0;
    double h, l;
    if (nonzero == 0) {
      eft::two_sum(v[N - 1], v[N - 2], h, l);
      out = h;  // +0 for an exact zero: a sum with an error term +0 is never -0
      return true;
    }
    double r = 0, a = 0;
    for (int i = 0; i + 1 < N; ++i) {
      r += v[i];
      a += math::fabs(v[i]);
    }
    eft::two_sum(v[N - 1], r, h, l);
    const std::uint64_t u = kacc::bit_cast<std::uint64_t>(h);
    const int biased = static_cast<int>((u >> 52) & 0x7ff);
    if (biased < 124) continue;  // |h| < 2^-899
    // Half the gaps to the doubles next to h: half an ulp away from zero and toward it, a
    // quarter toward zero from a power of two.
    const double half_ulp = kacc::bit_cast<double>(static_cast<std::uint64_t>(biased - 53) << 52);
    const bool power_of_two = (u & ((std::uint64_t{1} << 52) - 1)) == 0;
    const double away = half_ulp, toward = power_of_two ? 0.5 * half_ulp : half_ulp;
    const double half_up = h > 0 ? away : toward, half_down = h > 0 ? toward : away;
    // 2B, B = 2^-48 a (a below 2^-900: B = a, more than enough, and no underflow). The
    // differences below are exact or within a factor 1 + 2^-53, so each exceeding 2B
    // proves the exact one exceeds B.
    const double twice_bound = a >= 0x1p-900 ? a * 0x1p-47 : 2 * a;
    if (half_up - l > twice_bound && half_down + l > twice_bound) {
      out = h;
      return true;
    }
  }
  return false;
}

/// W lanes of exact sums of products of doubles (see the file comment). With Separate, the
/// lanes are W separate sums (W rows of a matrix-vector product), each with its own
/// long accumulator on the side; without, they are parts of one sum. ExactProducts: every
/// product added is exact in double (exact_products_v of the operands' formats).
template <int W, bool Separate = false, bool ExactProducts = false>
struct exact_lanes : exact_lane_terms<ExactProducts> {
  using layout = exact_lane_terms<ExactProducts>;
  using layout::error_terms;
  using layout::product_terms;
  using layout::terms;

  /// The expansions, term-major so a term of all lanes is contiguous: product_terms terms
  /// of the rounded products, then error_terms terms of their rounding errors.
  double term[terms][W] = {};
  /// What the expansions do not take: one for all lanes, or one per lane when Separate.
  exact<double> rest[Separate ? W : 1];
  /// Whether anything went to rest (so add_into can leave it out).
  bool rest_used = false;

  /// Adds a[l] b[l] for l in [0, W) exactly.
  KOKKOS_FORCEINLINE_FUNCTION void add_products(const double* a, const double* b) {
    double p[W], e[W];
    if (!lanes_products<ExactProducts, W>(a, b, p, e)) {
      for (int l = 0; l < W; ++l) rest[Separate ? l : 0].add_product(a[l], b[l]);
      rest_used = true;
      return;
    }
    cascade<0, product_terms>(p);
    if constexpr (!ExactProducts) cascade<product_terms, error_terms>(e);
  }

  /// Adds the products of `groups` groups of W entries exactly, as add_products(a, b) for
  /// each, where load(g, a, b) writes group g's entries into a[0 .. W) and b[0 .. W). With
  /// AVX-512 the expansions stay in registers from one group to the next, as in
  /// lanes_try_add_product_groups.
  template <class Load>
  KOKKOS_FORCEINLINE_FUNCTION void add_product_groups(const std::int64_t groups, const Load& load) {
#if defined(KACC_EXACT_LANES_AVX512)
    if constexpr (W % 8 == 0) {
      const auto out_of_range = [&](const std::int64_t g) {
        // Loaded again, so that the loop keeps no copy of the entries in memory.
        double a[W], b[W];
        load(g, a, b);
        for (int l = 0; l < W; ++l) rest[Separate ? l : 0].add_product(a[l], b[l]);
        rest_used = true;
        return true;
      };
      const auto remainder = [&](const auto& r) {
        to_rest(r);
        return true;
      };
      held_add_product_groups<layout, W / 8>(&term[0][0], groups, load, out_of_range, remainder);
      return;
    }
#endif
    for (std::int64_t g = 0; g < groups; ++g) {
      double a[W], b[W];
      load(g, a, b);
      add_products(a, b);
    }
  }

  /// Adds a product exactly (outside the groups of W: the end of a loop). One sum only.
  KOKKOS_INLINE_FUNCTION void add_product(double a, double b) {
    static_assert(!Separate, "kacc::Impl::exact_lanes: add_product needs a lane");
    rest[0].add_product(a, b);
    rest_used = true;
  }

  /// Adds every lane's sum to acc (exactly), after folding the lanes into lane 0 with
  /// the same cascades, so only lane 0's terms go through acc's scalar path. One sum only.
  KOKKOS_INLINE_FUNCTION void add_into(exact<double>& acc) {
    static_assert(!Separate, "kacc::Impl::exact_lanes: add_into sums one sum's lanes");
    fold_lanes();
    add_lane_into(0, acc);
  }

  /// The sum of all lanes, correctly rounded: the folded expansion by round_terms_to_nearest
  /// when rest holds nothing and that decides, else add_into with rest as the accumulator.
  KOKKOS_INLINE_FUNCTION double value() {
    static_assert(!Separate, "kacc::Impl::exact_lanes: value rounds one sum");
    fold_lanes();
    double rounded;
    if (!rest_used && round_lane_to_nearest(0, rounded)) return rounded;
    for (int t = 0; t < terms; ++t) rest[0].add(term[t][0]);
    return rest[0].value();
  }

  /// Lane l's expansion rounded by round_terms_to_nearest into out; false when that leaves
  /// it undecided (the caller rounds it with rest).
  KOKKOS_INLINE_FUNCTION bool round_lane_to_nearest(int l, double& out) const {
    double t[terms];
    for (int u = 0; u < terms; ++u) t[u] = term[u][l];
    return round_terms_to_nearest<terms>(t, out);
  }

  /// Adds lane l's sum to acc (exactly): with Separate, the sum of lane l.
  KOKKOS_INLINE_FUNCTION void add_lane_into(int l, exact<double>& acc) const {
    for (int t = 0; t < terms; ++t) acc.add(term[t][l]);
    if (rest_used) acc += rest[Separate ? l : 0];
  }

 private:
  /// x[l] into terms [First, First + Count) by lanes_cascade; a nonzero remainder goes to
  /// rest.
  template <int First, int Count>
  KOKKOS_FORCEINLINE_FUNCTION void cascade(double* x) {
    if (lanes_cascade<Count, W>(&term[First][0], x)) to_rest(x);
  }

  /// A cascade's remainder x[0 .. N) (lanes 0 .. N - 1), to rest.
  template <int N = W>
  KOKKOS_FORCEINLINE_FUNCTION void to_rest(const double* x) {
    for (int l = 0; l < N; ++l)
      if (x[l] != 0) rest[Separate ? l : 0].add_to_words(x[l]);
    rest_used = true;
  }

#if defined(KACC_EXACT_LANES_AVX512)
  /// A remainder held_cascade or held_fold leaves in registers (lanes 0 .. 8 V - 1), to rest.
  template <int V>
  KOKKOS_INLINE_FUNCTION void to_rest(const __m512d (&r)[V]) {
    double x[8 * V];
    for (int v = 0; v < V; ++v) _mm512_storeu_pd(x + 8 * v, r[v]);
    to_rest<8 * V>(x);
  }
#endif

  /// Every lane's expansions added into lane 0's (fold; with AVX-512 held_fold); lanes
  /// [1, W) are zero afterwards. One sum only.
  KOKKOS_INLINE_FUNCTION void fold_lanes() {
#if defined(KACC_EXACT_LANES_AVX512)
    if constexpr (W % 8 == 0) {
      const auto remainder = [&](const __m512d(&r)[1]) { to_rest(r); };
      held_fold<product_terms, W / 8>(&term[0][0], remainder);
      if constexpr (!ExactProducts)
        held_fold<error_terms, W / 8>(&term[product_terms][0], remainder);
      return;
    }
#endif
    fold<0, product_terms>();
    if constexpr (!ExactProducts) fold<product_terms, error_terms>();
  }

  /// Adds lanes [w, 2w) of terms [First, First + Count) into lanes [0, w), halving w down
  /// to 1, term by term through the cascades; lanes [1, W) are zero afterwards.
  template <int First, int Count>
  KOKKOS_INLINE_FUNCTION void fold() {
    for (int w = W / 2; w > 0; w /= 2) {
      for (int t = First; t < First + Count; ++t) {
        double x[W] = {};
        for (int l = 0; l < w; ++l) {
          x[l] = term[t][l + w];
          term[t][l + w] = 0;
        }
        cascade<First, Count>(x);
      }
    }
  }
};

}  // namespace Impl
}  // namespace kacc
