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

  /// The same result as encode(), without branches, so loops over it vectorise: integer
  /// rounding on the binary64 bits for normal results, and for subnormal ones an addition
  /// of 2^(52 + emin_subnormal), whose ulp is the format's subnormal step, so the FPU
  /// rounds (to nearest even) exactly once. Safe under denormals-are-zero.
  KOKKOS_INLINE_FUNCTION static std::uint64_t encode_fast(double value) {
    constexpr int shift = 52 - MantissaBits;
    constexpr std::uint64_t rebias = static_cast<std::uint64_t>(1023 - bias) << 52;
    constexpr std::uint64_t smallest_normal = static_cast<std::uint64_t>(1023 + 1 - bias) << 52;
    constexpr std::uint64_t magic = static_cast<std::uint64_t>(1023 + 52 + 1 - bias - MantissaBits)
                                    << 52;
    // Largest finite value plus half an ulp: from there on, values round to infinity.
    constexpr std::uint64_t overflow =
        (static_cast<std::uint64_t>(exponent_max - 1 - bias + 1023) << 52) |
        (mantissa_mask << shift) | (std::uint64_t{1} << (shift - 1));
    const std::uint64_t u = kacc::bit_cast<std::uint64_t>(value);
    const std::uint64_t sign = (u >> 63) << (width - 1);
    const std::uint64_t a = u & 0x7fffffffffffffffull;
    const std::uint64_t subnormal =
        kacc::bit_cast<std::uint64_t>(kacc::bit_cast<double>(a) + kacc::bit_cast<double>(magic)) -
        magic;
    const std::uint64_t normal =
        (a - rebias + ((std::uint64_t{1} << (shift - 1)) - 1) + ((a >> shift) & 1)) >> shift;
    std::uint64_t r = a < smallest_normal ? subnormal : normal;
    r = a >= overflow ? infinity_bits : r;
    r = a > 0x7ff0000000000000ull ? (infinity_bits | quiet_bit | ((a >> shift) & mantissa_mask))
                                  : r;
    return sign | r;
  }

  /// The exact binary64 value of `bits`. Integer operations and selects only, so loops
  /// over it vectorise and flush-to-zero or denormals-are-zero flags cannot change it: a
  /// subnormal mantissa m stands for m * 2^(1 - bias - MantissaBits), made from the exact
  /// conversion of the integer m (a normal double) by lowering its exponent, which stays
  /// normal for every format this codec takes.
  KOKKOS_INLINE_FUNCTION static double decode(std::uint64_t bits) {
    constexpr int shift = 52 - MantissaBits;
    const std::uint64_t sign = (bits & sign_bit) ? (std::uint64_t{1} << 63) : 0;
    const std::uint64_t magnitude = bits & (sign_bit - 1);
    const std::uint64_t mantissa = bits & mantissa_mask;
    const std::uint64_t normal =
        (magnitude << shift) + (static_cast<std::uint64_t>(1023 - bias) << 52);
    const std::uint64_t special =
        0x7ff0000000000000ull | (mantissa << shift) | (mantissa ? (std::uint64_t{1} << 51) : 0);
    const std::uint64_t subnormal =
        kacc::bit_cast<std::uint64_t>(static_cast<double>(static_cast<std::int64_t>(mantissa))) -
        (static_cast<std::uint64_t>(bias - 1 + MantissaBits) << 52);
    std::uint64_t result = magnitude >= infinity_bits ? special : normal;
    // Bit masks, not a select: GCC sinks the int-to-double conversion into a select's arm
    // and then (-ftrapping-math) will not if-convert it, and loops do not vectorise.
    const std::uint64_t subnormal_mask =
        std::uint64_t{0} - static_cast<std::uint64_t>(magnitude <= mantissa_mask);
    const std::uint64_t nonzero_mask = std::uint64_t{0} - static_cast<std::uint64_t>(mantissa != 0);
    result = (result & ~subnormal_mask) | (subnormal & subnormal_mask & nonzero_mask);
    return kacc::bit_cast<double>(sign | result);
  }

  /// The value of `bits` as a float, exact for formats that fit in float (ExponentBits <=
  /// 8, MantissaBits <= 23). With float's 8 exponent bits the format is a float with a
  /// shorter mantissa, so its bits are moved, not computed: a subnormal is not flushed by
  /// a double-to-float conversion under flush-to-zero. Narrower exponents have no float
  /// subnormals and convert from decode().
  KOKKOS_INLINE_FUNCTION static float decode_float(std::uint64_t bits) {
    static_assert(ExponentBits <= 8 && MantissaBits <= 23, "the format must fit in float");
    if constexpr (ExponentBits == 8) {
      const std::uint64_t nan_quiet =
          (bits & (sign_bit - 1)) > infinity_bits ? (std::uint64_t{1} << (MantissaBits - 1)) : 0;
      return kacc::bit_cast<float>(static_cast<std::uint32_t>((bits | nan_quiet) << (32 - width)));
    } else {
      return static_cast<float>(decode(bits));
    }
  }
};

}  // namespace kacc::detail
