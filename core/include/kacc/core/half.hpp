#pragma once
/// @file
/// kacc::fp16 (IEEE binary16) and kacc::bf16 (bfloat16): 2-byte, trivially copyable
/// storage types. kacc carries its own because on host backends Kokkos' half_t is a
/// 4-byte float. Conversions round to nearest even, directly from double (no double
/// rounding through float), with CUDA's conversion intrinsics on NVIDIA devices and
/// branch-free bit manipulation that compilers vectorise elsewhere; results are
/// identical, bit for bit, to the integer reference in ieee_codec.hpp and to x86's F16C.

#include <kacc/core/ieee_codec.hpp>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace kacc {

namespace detail {
using binary16_codec = ieee_codec<5, 10>;
using bfloat16_codec = ieee_codec<8, 7>;

// Branch-free binary16 <-> float on the bits: compilers vectorise loops over these
// (GCC 12 lowers _Float16 conversions to scalar library calls). Results equal the
// hardware's and the reference codec's, NaN payloads included.
KOKKOS_INLINE_FUNCTION std::uint16_t binary16_from_float_bits(float value) {
  const std::uint32_t u = kacc::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7fffffffu;
  // Subnormal results: adding 0.5 makes the FPU round the mantissa (to nearest even)
  // into the low bits of a float whose exponent is then subtracted away.
  const float tiny = kacc::bit_cast<float>(a) + 0.5f;
  const std::uint32_t subnormal = kacc::bit_cast<std::uint32_t>(tiny) - 0x3f000000u;
  // Normal results: rebias the exponent and round to nearest even on bit 13.
  const std::uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  const std::uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
  std::uint32_t h = a < 0x38800000u ? subnormal : normal;
  h = a >= 0x477ff000u ? 0x7c00u : h;  // rounds to infinity
  h = a > 0x7f800000u ? nan : h;
  return static_cast<std::uint16_t>(sign | h);
}

// Integer operations only, so the result does not depend on flush-to-zero or
// denormals-are-zero flags (-ffast-math, HIP's defaults): normal and special values are
// rebiased on the bits; a subnormal mantissa m stands for m * 2^-24, made from the exact
// conversion of the integer m (a normal float) by lowering its exponent by 24.
KOKKOS_INLINE_FUNCTION float binary16_to_float_bits(std::uint16_t bits) {
  const std::uint32_t magnitude = bits & 0x7fffu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  const std::uint32_t normal = (magnitude << 13) + ((127u - 15u) << 23);
  // Inf and NaN keep exponent 255; NaNs come out quiet, as from F16C and the reference.
  const std::uint32_t special = 0x7f800000u | (mantissa << 13) | (mantissa ? 0x00400000u : 0u);
  const std::uint32_t subnormal =
      kacc::bit_cast<std::uint32_t>(static_cast<float>(static_cast<std::int32_t>(mantissa))) -
      (24u << 23);
  std::uint32_t result = magnitude >= 0x7c00u ? special : normal;
  // Bit masks, not a select: GCC sinks the int-to-float conversion into a select's arm and
  // then (-ftrapping-math) will not if-convert it, and the loop does not vectorise.
  const std::uint32_t subnormal_mask = 0u - static_cast<std::uint32_t>(magnitude < 0x0400u);
  const std::uint32_t nonzero_mask = 0u - static_cast<std::uint32_t>(mantissa != 0u);
  result = (result & ~subnormal_mask) | (subnormal & subnormal_mask & nonzero_mask);
  return kacc::bit_cast<float>(result | (static_cast<std::uint32_t>(bits & 0x8000u) << 16));
}

KOKKOS_INLINE_FUNCTION std::uint16_t binary16_from_float(float value) {
#if defined(KACC_DEVICE_CUDA)
  return __half_as_ushort(__float2half_rn(value));
#else
  return binary16_from_float_bits(value);
#endif
}

KOKKOS_INLINE_FUNCTION float binary16_to_float(std::uint16_t bits) {
#if defined(KACC_DEVICE_CUDA)
  return __half2float(__ushort_as_half(bits));
#else
  return binary16_to_float_bits(bits);
#endif
}

// Directly from double, rounding once (no double rounding through float).
KOKKOS_INLINE_FUNCTION std::uint16_t binary16_from_double(double value) {
#if defined(KACC_DEVICE_CUDA)
  return __half_as_ushort(__double2half(value));
#else
  return static_cast<std::uint16_t>(binary16_codec::encode_fast(value));
#endif
}

KOKKOS_INLINE_FUNCTION std::uint16_t bfloat16_from_float(float value) {
  std::uint32_t u = kacc::bit_cast<std::uint32_t>(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even; a carry moves into the exponent
  return static_cast<std::uint16_t>(u >> 16);
}

KOKKOS_INLINE_FUNCTION float bfloat16_to_float(std::uint16_t bits) {
  return kacc::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

// Exact whatever the denormals-are-zero flag: the hardware widens the float a bf16 is, except
// that under DAZ it reads a subnormal as zero; a subnormal with mantissa m is m * 2^-133,
// made from the exact conversion of the integer m and a scaling whose operands and result
// are normal. Two conversions and bit masks (not a select, so that loops over it vectorise:
// see binary16_to_float_bits) instead of ieee_codec's decode on 64-bit integers.
KOKKOS_INLINE_FUNCTION double bfloat16_to_double(std::uint16_t bits) {
  const std::uint32_t magnitude = bits & 0x7fffu;
  const std::uint64_t widened =
      kacc::bit_cast<std::uint64_t>(static_cast<double>(bfloat16_to_float(bits)));
  const std::uint64_t tiny =
      kacc::bit_cast<std::uint64_t>(static_cast<double>(static_cast<std::int32_t>(magnitude)) *
                                    0x1p-133) |
      (static_cast<std::uint64_t>(bits & 0x8000u) << 48);
  const std::uint64_t subnormal_mask =
      std::uint64_t{0} - static_cast<std::uint64_t>(magnitude < 0x0080u);
  return kacc::bit_cast<double>((widened & ~subnormal_mask) | (tiny & subnormal_mask));
}
}  // namespace detail

/// IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits; largest finite 65504.
struct fp16 {
  /// The layout, for format_traits.
  using codec = detail::binary16_codec;
  std::uint16_t bits;

  fp16() = default;
  KOKKOS_INLINE_FUNCTION explicit fp16(float value) : bits(detail::binary16_from_float(value)) {}
  KOKKOS_INLINE_FUNCTION explicit fp16(double value) : bits(detail::binary16_from_double(value)) {}
  KOKKOS_INLINE_FUNCTION explicit operator float() const { return detail::binary16_to_float(bits); }
  KOKKOS_INLINE_FUNCTION explicit operator double() const {
    return static_cast<double>(detail::binary16_to_float(bits));
  }
  KOKKOS_INLINE_FUNCTION static constexpr fp16 from_bits(std::uint16_t b) {
    fp16 h{};
    h.bits = b;
    return h;
  }
  /// "fp16", for labels and reports.
  static constexpr const char* name() { return "fp16"; }
};

/// bfloat16: 1 sign, 8 exponent, 7 mantissa bits; the exponent range of float.
struct bf16 {
  /// The layout, for format_traits.
  using codec = detail::bfloat16_codec;
  std::uint16_t bits;

  bf16() = default;
  KOKKOS_INLINE_FUNCTION explicit bf16(float value) : bits(detail::bfloat16_from_float(value)) {}
  KOKKOS_INLINE_FUNCTION explicit bf16(double value)
      : bits(static_cast<std::uint16_t>(detail::bfloat16_codec::encode_fast(value))) {}
  KOKKOS_INLINE_FUNCTION explicit operator float() const { return detail::bfloat16_to_float(bits); }
  /// Exact, also for subnormals under denormals-are-zero (a bf16 subnormal is a float
  /// subnormal, which a float-to-double conversion would then read as zero).
  KOKKOS_INLINE_FUNCTION explicit operator double() const {
    return detail::bfloat16_to_double(bits);
  }
  KOKKOS_INLINE_FUNCTION static constexpr bf16 from_bits(std::uint16_t b) {
    bf16 h{};
    h.bits = b;
    return h;
  }
  /// "bf16", for labels and reports.
  static constexpr const char* name() { return "bf16"; }
};

static_assert(sizeof(fp16) == 2 && std::is_trivially_copyable<fp16>::value, "fp16 must be 2 bytes");
static_assert(sizeof(bf16) == 2 && std::is_trivially_copyable<bf16>::value, "bf16 must be 2 bytes");

}  // namespace kacc
