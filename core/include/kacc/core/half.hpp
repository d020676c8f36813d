#pragma once
/// @file
/// kacc::fp16 (IEEE binary16) and kacc::bf16 (bfloat16): 2-byte, trivially copyable
/// storage types. kacc carries its own because on host backends Kokkos' half_t is a
/// 4-byte float. Conversions round to nearest even, directly from double (no double
/// rounding through float), and use hardware conversion where the compiler offers it
/// (CUDA intrinsics, `_Float16` with F16C on x86, HIP's native half) with results
/// identical, bit for bit, to the integer reference in ieee_codec.hpp.

#include <kacc/core/ieee_codec.hpp>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

// _Float16 where the compiler has it natively (GCC >= 12 and Clang on x86 and AMDGPU);
// nvcc's front end is left out because its host pass does not accept it everywhere.
#if defined(__FLT16_MANT_DIG__) && !defined(__CUDACC__) && !defined(KACC_NO_FLOAT16)
#define KACC_HAVE_FLOAT16 1
#endif

namespace kacc {

namespace detail {
using binary16_codec = ieee_codec<5, 10>;
using bfloat16_codec = ieee_codec<8, 7>;

KOKKOS_INLINE_FUNCTION std::uint16_t binary16_from_float(float value) {
#if defined(KACC_DEVICE_CUDA)
  return __half_as_ushort(__float2half_rn(value));
#elif defined(KACC_HAVE_FLOAT16)
  return kacc::bit_cast<std::uint16_t>(static_cast<_Float16>(value));
#else
  return static_cast<std::uint16_t>(binary16_codec::encode(static_cast<double>(value)));
#endif
}

KOKKOS_INLINE_FUNCTION float binary16_to_float(std::uint16_t bits) {
#if defined(KACC_DEVICE_CUDA)
  return __half2float(__ushort_as_half(bits));
#elif defined(KACC_HAVE_FLOAT16)
  return static_cast<float>(kacc::bit_cast<_Float16>(bits));
#else
  return static_cast<float>(binary16_codec::decode(bits));
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
}  // namespace detail

/// IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits; largest finite 65504.
struct fp16 {
  std::uint16_t bits;

  fp16() = default;
  KOKKOS_INLINE_FUNCTION explicit fp16(float value) : bits(detail::binary16_from_float(value)) {}
  KOKKOS_INLINE_FUNCTION explicit fp16(double value)
      : bits(detail::binary16_from_float(detail::round_to_odd_float(value))) {}
  KOKKOS_INLINE_FUNCTION explicit operator float() const { return detail::binary16_to_float(bits); }
  KOKKOS_INLINE_FUNCTION explicit operator double() const {
    return static_cast<double>(detail::binary16_to_float(bits));
  }
  KOKKOS_INLINE_FUNCTION static constexpr fp16 from_bits(std::uint16_t b) {
    fp16 h{};
    h.bits = b;
    return h;
  }
};

/// bfloat16: 1 sign, 8 exponent, 7 mantissa bits; the exponent range of float.
struct bf16 {
  std::uint16_t bits;

  bf16() = default;
  KOKKOS_INLINE_FUNCTION explicit bf16(float value) : bits(detail::bfloat16_from_float(value)) {}
  KOKKOS_INLINE_FUNCTION explicit bf16(double value)
      : bits(detail::bfloat16_from_float(detail::round_to_odd_float(value))) {}
  KOKKOS_INLINE_FUNCTION explicit operator float() const { return detail::bfloat16_to_float(bits); }
  KOKKOS_INLINE_FUNCTION explicit operator double() const {
    return static_cast<double>(detail::bfloat16_to_float(bits));
  }
  KOKKOS_INLINE_FUNCTION static constexpr bf16 from_bits(std::uint16_t b) {
    bf16 h{};
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(fp16) == 2 && std::is_trivially_copyable<fp16>::value, "fp16 must be 2 bytes");
static_assert(sizeof(bf16) == 2 && std::is_trivially_copyable<bf16>::value, "bf16 must be 2 bytes");

}  // namespace kacc
