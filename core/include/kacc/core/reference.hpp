#pragma once
/// @file
/// The proxy reference a kacc::View hands out when storage and arithmetic differ:
/// reading converts the stored entry to the arithmetic type, writing rounds to the
/// storage format. Arithmetic and comparison operators come from the implicit
/// conversion to the arithmetic type, so `2.0 * v(i) + w(j)` computes in that type.
///
/// A proxy refers to an entry, it is not a value: `auto x = v(i)` keeps a proxy whose
/// reads see later writes to v(i). Write `double x = v(i)`, `kacc::value(v(i))` or
/// `v(i).get()` for a value. Generic code that must deduce a value type (Kokkos::fabs,
/// std::max) takes `kacc::value(...)`, too.

#include <kacc/core/format_traits.hpp>

namespace kacc {

template <class Arithmetic, class Format, class OverflowPolicy = overflow::ieee>
class reference {
 public:
  using arithmetic_type = Arithmetic;
  using format_type = Format;
  using storage_type = typename format_traits<Format>::storage_type;
  using scale_type = detail::scale_t<Format, Arithmetic>;

  KOKKOS_INLINE_FUNCTION reference(storage_type* entry, scale_type scale)
      : entry_(entry), scale_(scale) {}

  KOKKOS_INLINE_FUNCTION Arithmetic get() const {
    return detail::load<Arithmetic, Format>(*entry_, scale_);
  }
  KOKKOS_INLINE_FUNCTION operator Arithmetic() const { return get(); }

  // Assignment writes through; it never rebinds the proxy.
  KOKKOS_INLINE_FUNCTION const reference& operator=(Arithmetic value) const {
    *entry_ = detail::store_value<Format, OverflowPolicy>(value, scale_);
    return *this;
  }
  KOKKOS_INLINE_FUNCTION const reference& operator=(const reference& other) const {
    return *this = other.get();
  }
  KOKKOS_INLINE_FUNCTION const reference& operator+=(Arithmetic v) const {
    return *this = get() + v;
  }
  KOKKOS_INLINE_FUNCTION const reference& operator-=(Arithmetic v) const {
    return *this = get() - v;
  }
  KOKKOS_INLINE_FUNCTION const reference& operator*=(Arithmetic v) const {
    return *this = get() * v;
  }
  KOKKOS_INLINE_FUNCTION const reference& operator/=(Arithmetic v) const {
    return *this = get() / v;
  }

  /// The storage entry itself, e.g. for atomics on the raw format.
  KOKKOS_INLINE_FUNCTION storage_type* storage_pointer() const { return entry_; }

 private:
  storage_type* entry_;
  KACC_NO_UNIQUE_ADDRESS scale_type scale_;
};

template <class T>
struct is_reference : std::false_type {};
template <class A, class F, class P>
struct is_reference<reference<A, F, P>> : std::true_type {};
template <class T>
inline constexpr bool is_reference_v =
    is_reference<std::remove_cv_t<std::remove_reference_t<T>>>::value;

/// The value behind a proxy; any other value passes through unchanged.
template <class T>
KOKKOS_INLINE_FUNCTION auto value(const T& x) {
  if constexpr (is_reference_v<T>) {
    return x.get();
  } else {
    return x;
  }
}

/// Converts between arithmetic types, kacc formats and proxies, rounding once.
template <class To, class From>
KOKKOS_INLINE_FUNCTION To convert(const From& from) {
  if constexpr (is_reference_v<From>) {
    return convert<To>(from.get());
  } else if constexpr (std::is_same<To, From>::value) {
    return from;
  } else if constexpr (std::is_arithmetic<From>::value) {
    if constexpr (std::is_arithmetic<To>::value) {
      return static_cast<To>(from);
    } else {
      return format_traits<To>::template encode<From>(from);
    }
  } else {
    // From is a kacc format: widen exactly to double first, then round once.
    return convert<To>(format_traits<From>::template decode<double>(from));
  }
}

}  // namespace kacc
