#pragma once
/// @file
/// `kacc::exact<double>`: a long (Kulisch) accumulator that holds sums of doubles and of
/// products of doubles without any rounding, and rounds once, to nearest (ties to even),
/// when the result is read. The result is therefore independent of the order of the
/// additions: the same for every thread count, schedule, layout and machine.
///
/// The sum is a two's complement integer in units of 2^-2148 (the smallest product of two
/// subnormals) with room up to 2^2111 (2^63 terms of up to 2^2048, the largest product of
/// two doubles), kept as words of 32 data bits in 64-bit signed integers. The 31 spare bits of
/// each word absorb the carries of 2^29 additions, after which the words are normalised;
/// an addition touches three words, so it costs a few integer operations. A product is
/// split into 32-bit halves of the two significands and added as three exact integer
/// partial products, so products that over- or underflow in floating point
/// (|a b| > DBL_MAX or < 2^-1074) are still exact.
///
/// In front of the words sits a floating-point expansion of expansion_terms doubles, as in
/// ExBLAS (Collange, Defour, Graillat and Iakymchuk): a value of magnitude up to 2^900,
/// or a product between 2^-960 and 2^900 split exactly by the FMA TwoProduct, is added to
/// the expansion by a cascade of TwoSums, which is exact; only what the expansion cannot
/// hold goes to the words. Most additions therefore stay in floating point.
/// Infinities and NaNs are kept as flags and give the IEEE result of the sum: inf - inf
/// and anything with a NaN are NaN. An exact sum beyond the double range rounds to
/// +-inf. An exact zero is +0, as in a plain sum that starts from +0.

#include <kacc/core/config.hpp>
#include <kacc/core/error_free.hpp>

namespace kacc {

/// A long accumulator: exact sums, one correctly rounded result. Only `exact<double>` is
/// defined.
template <class T>
struct exact;

/// Exact sums of doubles and of products of doubles (see the file comment).
template <>
struct exact<double> {
  /// Data bits per word; the other bits of the signed 64-bit word hold carries.
  static constexpr int digit_bits = 32;
  /// The sum is an integer multiple of 2^lowest_exponent.
  static constexpr int lowest_exponent = -2148;
  /// Words of the accumulator: 2148 + 2112 bits and the sign need 134; one to spare.
  static constexpr int words = 135;
  /// Word additions (each below 2^33 in magnitude) after which the carries are propagated.
  static constexpr int normalize_period = 1 << 29;
  /// Doubles of the floating-point expansion in front of the words.
  static constexpr int expansion_terms = 4;
  /// Largest magnitude the expansion takes: far enough below DBL_MAX that its TwoSums
  /// cannot overflow for any feasible number of terms (2^123).
  static constexpr double expansion_max = 0x1p900;
  /// Smallest product the expansion takes: above it TwoProduct's error term is exact.
  static constexpr double expansion_min_product = 0x1p-960;

  /// Part of the sum as an exact sum of doubles (ExBLAS's floating-point expansion).
  double expansion[expansion_terms] = {};

  /// The sum in units of 2^lowest_exponent: sum_k digit[k] 2^(32 k).
  std::int64_t digit[words] = {};
  /// Word additions since the carries were last propagated.
  int pending = 0;
  /// Which special values were added (special_nan, special_plus_inf, special_minus_inf).
  unsigned special = 0;

  /// Flag in `special`: a NaN (or inf * 0) was added.
  static constexpr unsigned special_nan = 1;
  /// Flag in `special`: +inf was added.
  static constexpr unsigned special_plus_inf = 2;
  /// Flag in `special`: -inf was added.
  static constexpr unsigned special_minus_inf = 4;

  /// Adds v exactly.
  KOKKOS_INLINE_FUNCTION void add(double v) {
    if (math::fabs(v) <= expansion_max) {  // false for inf and NaN
      absorb(v);
    } else {
      add_to_words(v);
    }
  }

  /// Adds the product a b exactly (no rounding, no over- or underflow).
  KOKKOS_INLINE_FUNCTION void add_product(double a, double b) {
    double p, e;
    eft::two_prod(a, b, p, e);
    const double m = math::fabs(p);
    if (m >= expansion_min_product && m <= expansion_max) {
      absorb(p);
      absorb(e);
    } else if (!(p == 0 && (a == 0 || b == 0))) {  // an exact zero adds nothing
      add_product_to_words(a, b);
    }
  }

  /// Adds v exactly to the words (or to the special-value flags).
  KOKKOS_INLINE_FUNCTION void add_to_words(double v) {
    if (scatter(v, word_adder{digit})) {
      count(1);
    } else {
      special |= special_flag(v);
    }
  }

  /// Adds the product a b exactly to the words (or to the special-value flags).
  KOKKOS_INLINE_FUNCTION void add_product_to_words(double a, double b) {
    if (scatter_product(a, b, word_adder{digit})) {
      count(3);
    } else {
      special |= special_flag(a * b);  // IEEE: inf * 0 = NaN, inf * finite = +-inf
    }
  }

  /// Calls add_word(k, d) for each word addition (at most three, |d| < 2^33) that adds v
  /// exactly to a sum held in words as digit is; calls nothing and returns false when v is
  /// inf or NaN. Such sums elsewhere (one in GPU shared memory, added to by atomics:
  /// kacc::Impl::exact_shared_words) add by this function.
  template <class AddWord>
  KOKKOS_INLINE_FUNCTION static bool scatter(double v, const AddWord& add_word) {
    const std::uint64_t u = kacc::bit_cast<std::uint64_t>(v);
    if (((u >> 52) & 0x7ff) == 0x7ff) return false;
    std::uint64_t m;
    int e;
    split(u, m, e);
    scatter_bits(m, e - lowest_exponent, (u >> 63) != 0, add_word);
    return true;
  }

  /// Calls add_word(k, d) for each word addition (at most nine, three per word) that adds
  /// the exact product a b; calls nothing and returns false when a or b is inf or NaN.
  template <class AddWord>
  KOKKOS_INLINE_FUNCTION static bool scatter_product(double a, double b, const AddWord& add_word) {
    const std::uint64_t ua = kacc::bit_cast<std::uint64_t>(a);
    const std::uint64_t ub = kacc::bit_cast<std::uint64_t>(b);
    if (((ua >> 52) & 0x7ff) == 0x7ff || ((ub >> 52) & 0x7ff) == 0x7ff) return false;
    std::uint64_t ma, mb;
    int ea, eb;
    split(ua, ma, ea);
    split(ub, mb, eb);
    const bool negative = ((ua ^ ub) >> 63) != 0;
    const std::uint64_t a0 = ma & 0xffffffffu, a1 = ma >> 32;
    const std::uint64_t b0 = mb & 0xffffffffu, b1 = mb >> 32;
    const int position = ea + eb - lowest_exponent;
    // ma mb = a0 b0 + (a0 b1 + a1 b0) 2^32 + a1 b1 2^64, each part below 2^64.
    scatter_bits(a0 * b0, position, negative, add_word);
    scatter_bits(a0 * b1 + a1 * b0, position + 32, negative, add_word);
    scatter_bits(a1 * b1, position + 64, negative, add_word);
    return true;
  }

  /// The special-value flag of an infinite or NaN v.
  KOKKOS_INLINE_FUNCTION static unsigned special_flag(double v) {
    return v != v ? special_nan : v > 0 ? special_plus_inf : special_minus_inf;
  }

  /// Adds another accumulator's exact sum (the join of a reduction).
  KOKKOS_INLINE_FUNCTION exact& operator+=(const exact& o) {
    normalize();
    for (int k = 0; k < words; ++k) digit[k] += o.digit[k];
    special |= o.special;
    pending = 0;
    count(o.pending + 2);
    for (int i = 0; i < expansion_terms; ++i) add_to_words(o.expansion[i]);
    return *this;
  }

  /// Kokkos 3.x joins reduction values through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile exact& o) volatile {
    exact self, other;
    for (int k = 0; k < words; ++k) {
      self.digit[k] = digit[k];
      other.digit[k] = o.digit[k];
    }
    for (int i = 0; i < expansion_terms; ++i) {
      self.expansion[i] = expansion[i];
      other.expansion[i] = o.expansion[i];
    }
    self.pending = pending;
    self.special = special;
    other.pending = o.pending;
    other.special = o.special;
    self += other;
    for (int k = 0; k < words; ++k) digit[k] = self.digit[k];
    for (int i = 0; i < expansion_terms; ++i) expansion[i] = self.expansion[i];
    pending = self.pending;
    special = self.special;
  }

  /// The exact sum rounded to nearest, ties to even; +-inf beyond the double range.
  KOKKOS_INLINE_FUNCTION double value() const {
    if ((special & special_nan) != 0 || (special & (special_plus_inf | special_minus_inf)) ==
                                            (special_plus_inf | special_minus_inf)) {
      return kacc::bit_cast<double>(std::uint64_t{0x7ff8000000000000ull});
    }
    if (special != 0) {
      return kacc::bit_cast<double>(
          ((special & special_minus_inf) != 0 ? std::uint64_t{1} << 63 : std::uint64_t{0}) |
          std::uint64_t{0x7ff0000000000000ull});
    }
    exact m = *this;
    for (int i = 0; i < expansion_terms; ++i) m.add_to_words(expansion[i]);
    m.normalize();
    const bool negative = m.digit[words - 1] < 0;
    if (negative) {
      for (int k = 0; k < words; ++k) m.digit[k] = -m.digit[k];
      m.normalize();
    }
    int top_word = words - 1;
    while (top_word >= 0 && m.digit[top_word] == 0) --top_word;
    if (top_word < 0) return 0.0;
    const int top =
        top_word * digit_bits + bit_length(static_cast<std::uint64_t>(m.digit[top_word])) - 1;
    // Least significant kept bit: 53 bits, or fewer where the result is subnormal.
    constexpr int subnormal_lsb = -1074 - lowest_exponent;
    int lsb = top - 52 > subnormal_lsb ? top - 52 : subnormal_lsb;
    std::uint64_t significand = m.bits(lsb, top - lsb + 1);
    const bool round = m.bits(lsb - 1, 1) != 0;
    if (round && (m.any_below(lsb - 1) || (significand & 1) != 0)) {
      ++significand;
      if (significand == (std::uint64_t{1} << 53)) {
        significand >>= 1;
        ++lsb;
      }
    }
    const std::uint64_t sign = negative ? std::uint64_t{1} << 63 : 0;
    constexpr std::uint64_t hidden = std::uint64_t{1} << 52;
    if (significand < hidden) return kacc::bit_cast<double>(sign | significand);  // subnormal
    const int biased = lsb + lowest_exponent + 52 + 1023;
    if (biased >= 0x7ff) return kacc::bit_cast<double>(sign | std::uint64_t{0x7ff0000000000000ull});
    return kacc::bit_cast<double>(sign | (static_cast<std::uint64_t>(biased) << 52) |
                                  (significand - hidden));
  }

  /// Propagates the carries: every word but the top one in [0, 2^32).
  KOKKOS_INLINE_FUNCTION void normalize() {
    for (int k = 0; k + 1 < words; ++k) {
      const std::int64_t carry = digit[k] >> digit_bits;  // arithmetic shift: floor
      digit[k] = static_cast<std::int64_t>(static_cast<std::uint64_t>(digit[k]) & 0xffffffffu);
      digit[k + 1] += carry;
    }
    pending = 0;
  }

 private:
  /// Adds x to the expansion by a cascade of TwoSums (exact); what is left goes to the
  /// words.
  KOKKOS_INLINE_FUNCTION void absorb(double x) {
    for (int i = 0; i < expansion_terms; ++i) {
      double s, r;
      eft::two_sum(expansion[i], x, s, r);
      expansion[i] = s;
      x = r;
    }
    if (x != 0) add_to_words(x);
  }

  /// v's significand m and exponent e with |v| = m 2^e, for finite v.
  KOKKOS_INLINE_FUNCTION static void split(std::uint64_t u, std::uint64_t& m, int& e) {
    const int biased = static_cast<int>((u >> 52) & 0x7ff);
    m = u & ((std::uint64_t{1} << 52) - 1);
    if (biased == 0) {
      e = -1074;
    } else {
      m |= std::uint64_t{1} << 52;
      e = biased - 1075;
    }
  }

  /// Calls add_word for the three word additions that add (or subtract) v 2^position,
  /// v < 2^64, in units of 2^lowest_exponent.
  template <class AddWord>
  KOKKOS_INLINE_FUNCTION static void scatter_bits(std::uint64_t v, int position, bool negative,
                                                  const AddWord& add_word) {
    const int w = position / digit_bits, r = position % digit_bits;
    const std::uint64_t lo = (v & 0xffffffffu) << r, hi = (v >> 32) << r;
    const std::int64_t sign = negative ? -1 : 1;
    add_word(w, sign * static_cast<std::int64_t>(lo & 0xffffffffu));
    add_word(w + 1, sign * static_cast<std::int64_t>((lo >> 32) + (hi & 0xffffffffu)));
    add_word(w + 2, sign * static_cast<std::int64_t>(hi >> 32));
  }

  /// Adds word additions to this accumulator's own words.
  struct word_adder {
    /// The words.
    std::int64_t* digit;
    /// digit[k] += d.
    KOKKOS_INLINE_FUNCTION void operator()(int k, std::int64_t d) const { digit[k] += d; }
  };

  /// Records word additions; propagates the carries before the words could overflow.
  KOKKOS_INLINE_FUNCTION void count(int additions) {
    pending += additions;
    if (pending >= normalize_period) normalize();
  }

  /// Position of the highest set bit plus one (0 for 0).
  KOKKOS_INLINE_FUNCTION static int bit_length(std::uint64_t v) {
    int n = 0;
    for (int step = 32; step > 0; step /= 2) {
      if ((v >> step) != 0) {
        v >>= step;
        n += step;
      }
    }
    return n + static_cast<int>(v);
  }

  /// Word k of a normalised non-negative sum, 0 outside the array.
  KOKKOS_INLINE_FUNCTION std::uint64_t word(int k) const {
    return k >= 0 && k < words ? static_cast<std::uint64_t>(digit[k]) : 0;
  }

  /// Bits [position, position + n) of a normalised non-negative sum, n <= 53.
  KOKKOS_INLINE_FUNCTION std::uint64_t bits(int position, int n) const {
    if (n <= 0) return 0;  // a sum below the subnormal range keeps no bits
    const int w = position / digit_bits, r = position % digit_bits;
    const std::uint64_t low64 = word(w) | (word(w + 1) << 32);
    std::uint64_t v = low64 >> r;
    if (r != 0) v |= word(w + 2) << (64 - r);
    return v & ((std::uint64_t{1} << n) - 1);
  }

  /// Whether any bit below position is set, in a normalised non-negative sum.
  KOKKOS_INLINE_FUNCTION bool any_below(int position) const {
    const int w = position / digit_bits, r = position % digit_bits;
    if ((word(w) & ((std::uint64_t{1} << r) - 1)) != 0) return true;
    for (int k = 0; k < w; ++k)
      if (digit[k] != 0) return true;
    return false;
  }
};

}  // namespace kacc
