#pragma once
/// @file
/// Exact conversion between binary64 and any IEEE-754-like binary format with
/// `ExponentBits` exponent and `MantissaBits` stored mantissa bits: round to nearest
/// even, gradual underflow, signed zeros, infinities, NaN kept NaN (quiet). Integer
/// operations only, so it runs in every Kokkos execution space. It is the reference
/// every faster conversion in kacc is tested against, and the implementation of
/// formats without hardware support.

#include <kacc/core/config.hpp>

namespace kacc::detail {

template <int ExponentBits, int MantissaBits>
struct ieee_codec {
  static_assert(ExponentBits >= 2 && ExponentBits <= 10, "ExponentBits must lie in [2, 10]");
  static_assert(MantissaBits >= 1 && MantissaBits <= 51, "MantissaBits must lie in [1, 51]");
  static constexpr int width = 1 + ExponentBits + MantissaBits;
  static constexpr int bias = (1 << (ExponentBits - 1)) - 1;
  static constexpr std::uint64_t mantissa_mask = (std::uint64_t{1} << MantissaBits) - 1;
  static constexpr std::uint64_t exponent_max = (std::uint64_t{1} << ExponentBits) - 1;
  static constexpr std::uint64_t sign_bit = std::uint64_t{1} << (width - 1);
  static constexpr std::uint64_t infinity_bits = exponent_max << MantissaBits;
  static constexpr std::uint64_t quiet_bit = std::uint64_t{1} << (MantissaBits - 1);
  static constexpr std::uint64_t max_finite_bits = infinity_bits - 1;

  /// Bits of `value` rounded to nearest even, in the low `width` bits.
  KOKKOS_INLINE_FUNCTION static std::uint64_t encode(double value) {
    const std::uint64_t u = kacc::bit_cast<std::uint64_t>(value);
    const std::uint64_t sign = (u >> 63) ? sign_bit : 0;
    const std::uint64_t magnitude = u & 0x7fffffffffffffffull;
    if (magnitude >= 0x7ff0000000000000ull) {
      if (magnitude == 0x7ff0000000000000ull) return sign | infinity_bits;
      // NaN: keep the top payload bits and make sure the result is a (quiet) NaN.
      return sign | infinity_bits | quiet_bit |
             ((magnitude & 0xfffffffffffffull) >> (52 - MantissaBits));
    }
    const int exponent = static_cast<int>(magnitude >> 52);
    if (exponent == 0) return sign;  // binary64 subnormals are far below any target's range
    const std::uint64_t significand = (magnitude & 0xfffffffffffffull) | (std::uint64_t{1} << 52);
    int target_exponent = exponent - 1023 + bias;
    // Normal results keep MantissaBits bits; subnormal ones lose (1 - target_exponent) more.
    const int shift = 52 - MantissaBits + (target_exponent >= 1 ? 0 : 1 - target_exponent);
    if (shift >= 64) return sign;
    std::uint64_t rounded = significand >> shift;
    const std::uint64_t remainder = significand & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t halfway = std::uint64_t{1} << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (rounded & 1))) ++rounded;
    if (target_exponent < 1) return sign | rounded;  // carries into the exponent by itself
    if (rounded >> (MantissaBits + 1)) {
      rounded >>= 1;
      ++target_exponent;
    }
    if (target_exponent >= static_cast<int>(exponent_max)) return sign | infinity_bits;
    return sign | (static_cast<std::uint64_t>(target_exponent) << MantissaBits) |
           (rounded & mantissa_mask);
  }

  /// The exact binary64 value of `bits`.
  KOKKOS_INLINE_FUNCTION static double decode(std::uint64_t bits) {
    const std::uint64_t sign = (bits & sign_bit) ? (std::uint64_t{1} << 63) : 0;
    const std::uint64_t exponent = (bits >> MantissaBits) & exponent_max;
    const std::uint64_t mantissa = bits & mantissa_mask;
    if (exponent == exponent_max) {
      const std::uint64_t payload =
          mantissa ? (mantissa << (52 - MantissaBits)) | (std::uint64_t{1} << 51) : 0;
      return kacc::bit_cast<double>(sign | 0x7ff0000000000000ull | payload);
    }
    if (exponent == 0) {
      // mantissa * 2^(1 - bias - MantissaBits); both factors are exact doubles.
      const double scale =
          kacc::bit_cast<double>(static_cast<std::uint64_t>(1023 + 1 - bias - MantissaBits) << 52);
      const double magnitude = static_cast<double>(mantissa) * scale;
      return sign ? -magnitude : magnitude;
    }
    return kacc::bit_cast<double>(sign | ((exponent - bias + 1023) << 52) |
                                  (mantissa << (52 - MantissaBits)));
  }
};

/// Rounds a double to float with round-to-odd. A float rounded this way and then
/// rounded to nearest into a format of at most 22 significant bits gives the same
/// result as rounding the double directly: no double rounding (Boldo & Melquiond).
KOKKOS_INLINE_FUNCTION float round_to_odd_float(double value) {
  // Written with selects, not branches, so loops over it vectorise.
  const float rounded = static_cast<float>(value);
  const double back = static_cast<double>(rounded);
  const bool inexact = back != value;  // also true for NaN, whose payload bits survive
  const bool away = inexact && math::fabs(back) > math::fabs(value);
  const std::uint32_t bits = kacc::bit_cast<std::uint32_t>(rounded) - (away ? 1u : 0u);
  return kacc::bit_cast<float>(bits | (inexact ? 1u : 0u));
}

}  // namespace kacc::detail
