#pragma once
/// @file
/// kacc::float_format<ExponentBits, MantissaBits>: an IEEE-like format of any width up
/// to 32 bits in the smallest unsigned container that holds it, e.g. a truncated-mantissa
/// float (`float_format<8, 15>`, 24 bits in 32) or an fp16 with a wider range
/// (`float_format<6, 9>`). Conversion is the integer reference codec, so it works in every
/// execution space; it also shows how a format plugs into kacc (see format_traits.hpp).

#include <kacc/core/ieee_codec.hpp>

namespace kacc {

namespace detail {
/// "e<E>m<M>", e.g. "e8m15" for float_format<8, 15>, built at compile time.
template <int E, int M>
struct float_format_name {
  static_assert(E > 0 && E < 100 && M >= 0 && M < 100, "float_format: 1-99 exponent bits");
  struct chars {
    char text[8];
  };
  static constexpr chars make() {
    chars c{};
    int p = 0;
    c.text[p++] = 'e';
    if (E >= 10) c.text[p++] = static_cast<char>('0' + E / 10);
    c.text[p++] = static_cast<char>('0' + E % 10);
    c.text[p++] = 'm';
    if (M >= 10) c.text[p++] = static_cast<char>('0' + M / 10);
    c.text[p++] = static_cast<char>('0' + M % 10);
    return c;
  }
  static constexpr chars value = make();
};
}  // namespace detail

template <int ExponentBits, int MantissaBits>
struct float_format {
  using codec = detail::ieee_codec<ExponentBits, MantissaBits>;
  static_assert(codec::width <= 32, "float_format holds at most 32 bits");
  using container_type =
      std::conditional_t<(codec::width <= 8), std::uint8_t,
                         std::conditional_t<(codec::width <= 16), std::uint16_t, std::uint32_t>>;
  container_type bits;

  float_format() = default;
  KOKKOS_INLINE_FUNCTION explicit float_format(double value)
      : bits(static_cast<container_type>(codec::encode_fast(value))) {}
  /// Widens value on the bits (exact, also under denormals-are-zero), then rounds once.
  KOKKOS_INLINE_FUNCTION explicit float_format(float value)
      : float_format(detail::ieee_codec<8, 23>::decode(kacc::bit_cast<std::uint32_t>(value))) {}
  KOKKOS_INLINE_FUNCTION explicit operator double() const { return codec::decode(bits); }
  /// Exact when the format fits in float (ExponentBits <= 8, MantissaBits <= 23), also
  /// under flush-to-zero; otherwise the value rounded to float.
  KOKKOS_INLINE_FUNCTION explicit operator float() const {
    if constexpr (ExponentBits <= 8 && MantissaBits <= 23) {
      return codec::decode_float(bits);
    } else {
      return static_cast<float>(codec::decode(bits));
    }
  }
  KOKKOS_INLINE_FUNCTION static constexpr float_format from_bits(container_type b) {
    float_format f{};
    f.bits = b;
    return f;
  }
  /// "e<E>m<M>", for labels and reports.
  static constexpr const char* name() {
    return detail::float_format_name<ExponentBits, MantissaBits>::value.text;
  }
};

}  // namespace kacc
