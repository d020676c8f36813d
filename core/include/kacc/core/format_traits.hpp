#pragma once
/// @file
/// Storage formats and how a value moves between a format and the arithmetic type.
///
/// Adding a format is one specialisation of `kacc::format_traits<Format>` with:
///   - `storage_type`: what one entry is in memory (trivially copyable);
///   - `is_scaled`: whether entries carry a per-vector/per-column scale (see scaled<>);
///   - `decode<T>(storage_type[, T scale])`: the value as arithmetic type T;
///   - `encode<T>(T[, T scale])`: round a value of type T to storage, IEEE overflow;
///   - `max_value()`: largest finite value as double (for the saturating policy);
///   - `name()`: a short name for kernel labels and reports;
///   - scaled formats only: `scale_for<T>(T largest_magnitude)`, the scale deep_copy gives
///     data with that largest magnitude, and `fits<T>(T v, T scale)`, whether encode stores
///     v rounded (false raises the view's saturation flag).
/// No kernel changes: kernels see formats only through kacc::View.

#include <kacc/core/float_format.hpp>
#include <kacc/core/half.hpp>

#include <cfloat>
#include <limits>

namespace kacc {

/// What a write does with a value beyond the format's finite range.
namespace overflow {
/// IEEE: round to infinity (the default).
struct ieee {};
/// Clamp to the largest finite value of matching sign, infinities included; NaN stays
/// NaN (the "auto-adaptive rounding" of Haidar et al. 2020). Integer formats always
/// saturate because they have no infinity.
struct saturate {};
/// Scaled formats only: writes saturate and raise the view's saturation flag as under
/// `saturate`, and kacc's host entry points that write such a view (kacc::deep_copy, the
/// blas and sparse kernels) throw std::overflow_error when the flag is set after they ran.
/// Kernels cannot throw, so a kernel of the user's own reports through v.saturated().
struct throw_on_host {};
/// Scaled formats only: kacc's host entry points that write such a view (kacc::deep_copy,
/// the blas and sparse kernels) leave it holding their result with its scales re-picked
/// so that nothing saturates: each scale the smallest power of two that holds the entries
/// it applies to (format_traits::scale_for, as kacc::deep_copy picks them), and the
/// view's saturation flag not raised. The kernels run as under `saturate`; when something
/// saturated, the entry point reruns them into a workspace of the view's arithmetic type
/// and stores that with new scales (Impl::write_with_overflow_policy, which also gives the
/// costs). A subview whose scales also cover entries outside it (a row of a per-column
/// matrix) cannot change them: there writes saturate and raise the flag. A NaN or
/// infinite result fits no scale: the scales are picked from the finite results, the
/// non-finite ones stored as under `saturate` (NaN as 0, +-inf as +-largest), and the
/// flag raised (kacc::deep_copy instead refuses non-finite data). A kernel of the user's
/// own cannot re-scale: its writes saturate and raise the flag.
struct rescale_on_host {};
}  // namespace overflow

/// View property naming the storage format: `kacc::View<double*, kacc::StoredAs<kacc::fp16>>`.
template <class Format, class OverflowPolicy = overflow::ieee>
struct StoredAs {
  using format = Format;
  using overflow_policy = OverflowPolicy;
#if defined(KACC_HAS_KOKKOS_VIEW_PROPERTY)
  // Kokkos parses View properties by concept: with these StoredAs takes the memory-traits
  // slot of `Kokkos::View<double*, StoredAs<F>>` (no Kokkos trait set), and
  // kacc::customize_view_arguments picks the accessor from it.
  using memory_traits = StoredAs;
  static constexpr unsigned impl_value = 0;
  static constexpr bool is_unmanaged = false;
  static constexpr bool is_random_access = false;
  static constexpr bool is_atomic = false;
  static constexpr bool is_restrict = false;
  static constexpr bool is_aligned = false;
#endif
};

/// View property of scaled views: the dimension whose index picks an entry's scale, or -1
/// for one scale for the whole view. Fixed at compile time, so an access loads its scale
/// at that index (or at 0) of a contiguous array. The default is ScalesAlong<-1> for a
/// vector and the last dimension otherwise (ScalePerColumn for a matrix).
template <int Axis>
struct ScalesAlong {
  /// The dimension the scales run along, -1 for one scale.
  static constexpr int axis = Axis;
};
/// One scale for the whole view.
using OneScale = ScalesAlong<-1>;
/// One scale per row of a matrix (index 0).
using ScalePerRow = ScalesAlong<0>;
/// One scale per column of a matrix (index 1), the default for a matrix.
using ScalePerColumn = ScalesAlong<1>;

/// Integer storage with scales: value = integer * scale, one scale per index of the view's
/// scale dimension (kacc::ScalesAlong; by default one per vector and one per column of a
/// matrix). `kacc::deep_copy` into such a view gives each scale the smallest power of two
/// that maps the largest magnitude it applies to into the integer range
/// (format_traits::scale_for; all-zero data get scale 1; non-finite data throws
/// std::invalid_argument). Writes round once to the nearest integer, ties to even, and
/// saturate at +-largest; NaN is stored as 0 (integers have no NaN). A write that
/// saturates or stores NaN raises the view's saturation flag (View::saturated(), shared by
/// copies and subviews of the allocation; View::clear_saturated() resets it). A subview
/// that shares its scales with entries outside it (a row of a per-column matrix) keeps
/// them in deep_copy, so values beyond them saturate, and are flagged. Scales set by hand
/// that are not powers of two work, but then v / scale is rounded before the integer is.
template <class Integer>
struct scaled {
  static_assert(std::is_integral<Integer>::value && std::is_signed<Integer>::value,
                "scaled<> needs a signed integer type");
  using integer_type = Integer;
};

template <class Format, class = void>
struct format_traits;  // specialise this to add a format

/// Whether T can be the arithmetic type of a kacc::View: the C++ arithmetic types, and the
/// types that specialise this to true (kacc::double_double, kacc::quad_double), which then
/// give the operators and conversions a view's proxies use.
template <class T>
struct is_arithmetic_type : std::is_arithmetic<T> {};

namespace detail {
/// What every format with casts for conversions shares: the storage is the format type
/// itself, which converts by static_cast (float, double) or through its explicit
/// constructors and conversion operators (fp16, bf16, float_format).
template <class Format>
struct cast_format_traits {
  using storage_type = Format;
  static constexpr bool is_scaled = false;
  template <class T>
  KOKKOS_INLINE_FUNCTION static T decode(Format s) {
    return static_cast<T>(s);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static Format encode(T v) {
    return static_cast<Format>(v);
  }
};
}  // namespace detail

/// float and double: the hardware formats.
template <class Float>
struct format_traits<Float, std::enable_if_t<std::is_same<Float, double>::value ||
                                             std::is_same<Float, float>::value>>
    : detail::cast_format_traits<Float> {
  KOKKOS_INLINE_FUNCTION static constexpr double max_value() {
    return sizeof(Float) == sizeof(double) ? DBL_MAX : FLT_MAX;
  }
  static constexpr const char* name() { return sizeof(Float) == sizeof(double) ? "fp64" : "fp32"; }
};

/// fp16, bf16 and every float_format: IEEE-like layouts, each described by its `codec`
/// (detail::ieee_codec) and naming itself.
template <class Format>
struct format_traits<Format, std::void_t<typename Format::codec>>
    : detail::cast_format_traits<Format> {
  KOKKOS_INLINE_FUNCTION static double max_value() {
    return Format::codec::decode(Format::codec::max_finite_bits);
  }
  static constexpr const char* name() { return Format::name(); }
};

namespace detail {

/// The largest integer magnitude that both Integer and T hold exactly: the largest
/// Integer, or below it the largest T when T has fewer digits (float and int32_t:
/// 2^31 - 128).
template <class T, class Integer>
inline constexpr T largest_exact_integer_v =
    std::numeric_limits<Integer>::digits <= std::numeric_limits<T>::digits
        ? static_cast<T>(std::numeric_limits<Integer>::max())
        : static_cast<T>(std::uint64_t{1} << std::numeric_limits<Integer>::digits) -
              static_cast<T>(std::uint64_t{1} << (std::numeric_limits<Integer>::digits -
                                                  std::numeric_limits<T>::digits));

/// 2^digits of Integer as T, exact: the first magnitude beyond Integer's range.
template <class T, class Integer>
inline constexpr T integer_limit_v = static_cast<T>(std::uint64_t{1}
                                                    << std::numeric_limits<Integer>::digits);

/// The smallest normal T.
template <class T>
inline constexpr T smallest_normal_v = std::numeric_limits<T>::min();

/// The largest finite T (a constant, so device code may use it; nvcc refuses calls of
/// std::numeric_limits<T>::max() there).
template <class T>
inline constexpr T largest_finite_v = std::numeric_limits<T>::max();

/// The largest power of two not above x, for positive finite x; 0 for subnormal x. The
/// exponent bits alone, so it is exact and independent of the rounding mode.
template <class T>
KOKKOS_INLINE_FUNCTION T power_of_two_below(T x) {
  static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                "scaled formats compute in float or double");
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  constexpr Bits exponent_mask = sizeof(T) == 8 ? Bits(0x7ff0000000000000ull) : Bits(0x7f800000u);
  return kacc::bit_cast<T>(static_cast<Bits>(kacc::bit_cast<Bits>(x) & exponent_mask));
}

}  // namespace detail

template <class Integer>
struct format_traits<scaled<Integer>> {
  using storage_type = Integer;
  static constexpr bool is_scaled = true;
  static constexpr Integer largest = std::numeric_limits<Integer>::max();

  /// The value of s at the given scale: one rounding (none when T holds s exactly).
  template <class T>
  KOKKOS_INLINE_FUNCTION static T decode(Integer s, T scale) {
    return static_cast<T>(s) * scale;
  }

  /// v / scale rounded to the nearest integer, ties to even (in the default rounding
  /// mode), saturated to [-largest, largest]; NaN gives 0. With a power-of-two scale
  /// (scale_for picks only such) the division is exact, so the rounding to an integer is
  /// the only one. Selects rather than branches, so loops over it vectorise; where T holds
  /// largest exactly (int8 and int16 in float or double, int32 in double) the selects are
  /// a clamp in T, which compilers vectorise together with the conversion to Integer.
  template <class T>
  KOKKOS_INLINE_FUNCTION static Integer encode(T v, T scale) {
    return encode_quotient(v / scale);
  }

  /// encode(v, scale) from q = v / scale: q rounded to the nearest integer (ties to even)
  /// and saturated as encode does.
  template <class T>
  KOKKOS_INLINE_FUNCTION static Integer encode_quotient(T q) {
    T rounded = math::nearbyint(q);
    if constexpr (std::numeric_limits<Integer>::digits <= std::numeric_limits<T>::digits) {
      constexpr T top = static_cast<T>(largest);
      rounded = rounded == rounded ? rounded : T(0);
      rounded = rounded > top ? top : rounded;
      rounded = rounded < -top ? -top : rounded;
      // Through int: GCC vectorises double -> int conversions, not double -> short ones.
      using converted = std::conditional_t<(sizeof(Integer) < sizeof(int)), int, Integer>;
      return static_cast<Integer>(static_cast<converted>(rounded));
    } else {
      constexpr T limit = detail::integer_limit_v<T, Integer>;
      const bool above = rounded >= limit;
      const bool below = rounded <= -limit;
      rounded = rounded == rounded && !above && !below ? rounded : T(0);
      Integer s = static_cast<Integer>(rounded);
      s = above ? largest : s;
      s = below ? static_cast<Integer>(-largest) : s;
      return s;
    }
  }

  /// Whether encode(v, scale) stores v rounded, rather than saturating (|v / scale| rounds
  /// beyond largest, v infinite) or storing 0 for NaN.
  template <class T>
  KOKKOS_INLINE_FUNCTION static bool fits(T v, T scale) {
    return fits_quotient(v / scale);
  }

  /// fits(v, scale) from q = v / scale.
  template <class T>
  KOKKOS_INLINE_FUNCTION static bool fits_quotient(T q) {
    return math::fabs(math::nearbyint(q)) < detail::integer_limit_v<T, Integer>;
  }

  /// 1 / scale where v * (1 / scale) equals v / scale for every v (scale a power of two
  /// whose reciprocal is a normal number), else 0: loops over many entries of one scale
  /// then multiply instead of dividing, with the same results.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T exact_reciprocal(T scale) {
    const T inverse = T(1) / scale;
    const bool exact = scale > T(0) && detail::power_of_two_below(scale) == scale &&
                       inverse >= detail::smallest_normal_v<T> &&
                       inverse <= detail::largest_finite_v<T>;
    return exact ? inverse : T(0);
  }

  /// The scale deep_copy gives data whose largest magnitude is `magnitude` (> 0, finite):
  /// the smallest power of two that maps it into the integer range, so encoding divides
  /// exactly, and no smaller than T's smallest normal, so neither 1 / scale nor a decoded
  /// nonzero entry is subnormal (both would depend on flush-to-zero flags). The largest
  /// magnitude then takes between half and all of the integer range; data whose largest
  /// magnitude lies below largest * smallest normal (float, int16: 3.9e-34) keep fewer
  /// integer bits.
  template <class T>
  KOKKOS_INLINE_FUNCTION static T scale_for(T magnitude) {
    constexpr T top = detail::largest_exact_integer_v<T, Integer>;
    const T wanted = magnitude / top;  // rounded: the checks below make the result exact
    T scale = detail::power_of_two_below(wanted);
    scale = scale < wanted ? T(2) * scale : scale;
    scale = scale < detail::smallest_normal_v<T> ? detail::smallest_normal_v<T> : scale;
    scale = magnitude / scale > top ? T(2) * scale : scale;
    return scale;
  }

  KOKKOS_INLINE_FUNCTION static constexpr double max_value() {
    return static_cast<double>(largest);
  }
  static constexpr const char* name() {
    return sizeof(Integer) == 1   ? "int8s"
           : sizeof(Integer) == 2 ? "int16s"
           : sizeof(Integer) == 4 ? "int32s"
                                  : "int64s";
  }
};

/// The short name of a format ("fp64", "fp16", "int16s", ...), for labels and reports.
template <class Format>
constexpr const char* format_name() {
  return format_traits<Format>::name();
}

/// True for the types that have format_traits (kacc's own formats, float and double).
template <class T, class = void>
struct is_format : std::false_type {};
template <class T>
struct is_format<T, std::void_t<typename format_traits<T>::storage_type>> : std::true_type {};
template <class T>
inline constexpr bool is_format_v = is_format<T>::value;

namespace detail {

/// Stand-in for the scale of formats that have none; costs no storage in a proxy.
struct no_scale {};
/// Stand-in for the saturation flag of formats that have none; a type of its own, so that
/// it and no_scale can share an address in a proxy.
struct no_flag {};

template <class Format, class T>
using scale_t = std::conditional_t<format_traits<Format>::is_scaled, T, no_scale>;

template <class T, class Format, class Scale>
KOKKOS_INLINE_FUNCTION T load(const typename format_traits<Format>::storage_type& s, Scale scale) {
  if constexpr (format_traits<Format>::is_scaled) {
    return format_traits<Format>::template decode<T>(s, scale);
  } else {
    (void)scale;
    return format_traits<Format>::template decode<T>(s);
  }
}

/// Records a saturated write: a relaxed atomic store of 1, made only when one happens, so
/// writes that fit cost a compare and no memory traffic.
KOKKOS_INLINE_FUNCTION void raise_flag(int* flag) {
  atomic_store_relaxed(flag, 1);
}

template <class Format, class Policy, class T, class Scale, class Flag = no_flag>
KOKKOS_INLINE_FUNCTION typename format_traits<Format>::storage_type store_value(T v, Scale scale,
                                                                                Flag flag = {}) {
  using traits = format_traits<Format>;
  if constexpr (traits::is_scaled) {
    if constexpr (std::is_pointer<Flag>::value) {
      if (flag != nullptr && !traits::template fits<T>(v, scale)) raise_flag(flag);
    }
    return traits::template encode<T>(v, scale);
  } else {
    (void)scale;
    (void)flag;
    if constexpr (std::is_same<Policy, overflow::saturate>::value) {
      const T largest = static_cast<T>(traits::max_value());
      v = v > largest ? largest : (v < -largest ? -largest : v);
    }
    return traits::template encode<T>(v);
  }
}

}  // namespace detail
}  // namespace kacc
