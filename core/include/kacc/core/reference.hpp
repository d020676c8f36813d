#pragma once
/// @file
/// The proxy reference a kacc::View hands out when storage and arithmetic differ:
/// reading converts the stored entry to the arithmetic type, writing rounds to the
/// storage format.
///
/// A proxy stands for an entry the way `double&` does inside one expression, and is
/// built so that it cannot outlive that expression by accident: it is move-only and
/// assigns only as an rvalue (`v(i) = x`, `v(i) += x`). `auto r = v(i); r = 2;` and
/// `std::swap` of named proxies do not compile, where a copyable proxy would write
/// through a copy or store one value twice. A named proxy still reads; write
/// `double x = v(i)`, `kacc::value(v(i))` or `v(i).get()` for a value. Arithmetic and
/// comparison operators, `++`/`--` and the ADL functions `abs`, `fabs` and `sqrt` come
/// from one mixin (detail::enable_reference_operators) and compute in the arithmetic type,
/// so every expression written on a `double&` also compiles on a proxy with the same
/// result type. `reference<const T, Format>` is the read-only proxy: assignment deleted.

#include <kacc/core/format_traits.hpp>

#include <utility>

namespace kacc {

template <class Arithmetic, class Format, class OverflowPolicy = overflow::ieee>
class reference;

namespace detail {

/// Base of every proxy; tells proxies from other class types.
struct reference_tag {};

}  // namespace detail

/// Whether T (cv and references removed) is a kacc proxy reference.
template <class T>
struct is_reference
    : std::is_base_of<detail::reference_tag, std::remove_cv_t<std::remove_reference_t<T>>> {};
/// is_reference<T>::value.
template <class T>
inline constexpr bool is_reference_v = is_reference<T>::value;

namespace detail {

/// What an operand is in an expression: a proxy's value, or the operand itself.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr auto operand_value(const T& x) {
  if constexpr (is_reference_v<T>) {
    return x.get();
  } else {
    return x;
  }
}

/// The type of an operand after it is read (its arithmetic type for a proxy).
template <class T>
using operand_value_t = decltype(operand_value(std::declval<const T&>()));

/// Operands a proxy combines with: arithmetic values and proxies.
template <class T>
inline constexpr bool is_operand_v = std::is_arithmetic<T>::value || is_reference_v<T>;

/// The operators of a proxy type Reference whose arithmetic type is Arithmetic, as hidden
/// friends (found by ADL only). Each reads the proxy once and computes in the arithmetic
/// type, so `v(i) * 2` has the type `double * int` has. A proxy on the left takes any
/// operand (value or proxy); on the right it takes values only, so that two proxies of
/// different types find exactly one operator. The assigning operators take `Reference&&`,
/// as the proxy's own assignment does, and exist only where that assignment does.
template <class Reference, class Arithmetic>
struct enable_reference_operators : reference_tag {
  /// The type the proxy reads as.
  using value_type = std::remove_cv_t<Arithmetic>;

#define KACC_REFERENCE_BINARY_OPERATOR(op)                                                 \
  template <class U, std::enable_if_t<is_operand_v<U>, int> = 0>                           \
  friend KOKKOS_INLINE_FUNCTION constexpr auto operator op(const Reference& a, const U& b) \
      ->decltype(std::declval<value_type>() op std::declval<operand_value_t<U>>()) {       \
    return a.get() op operand_value(b);                                                    \
  }                                                                                        \
  template <class U, std::enable_if_t<std::is_arithmetic<U>::value, int> = 0>              \
  friend KOKKOS_INLINE_FUNCTION constexpr auto operator op(const U& a, const Reference& b) \
      ->decltype(std::declval<U>() op std::declval<value_type>()) {                        \
    return a op b.get();                                                                   \
  }

  KACC_REFERENCE_BINARY_OPERATOR(+)
  KACC_REFERENCE_BINARY_OPERATOR(-)
  KACC_REFERENCE_BINARY_OPERATOR(*)
  KACC_REFERENCE_BINARY_OPERATOR(/)
  KACC_REFERENCE_BINARY_OPERATOR(==)
  KACC_REFERENCE_BINARY_OPERATOR(!=)
  KACC_REFERENCE_BINARY_OPERATOR(<)
  KACC_REFERENCE_BINARY_OPERATOR(<=)
  KACC_REFERENCE_BINARY_OPERATOR(>)
  KACC_REFERENCE_BINARY_OPERATOR(>=)
#undef KACC_REFERENCE_BINARY_OPERATOR

  /// +r: the value, promoted as for a plain value.
  friend KOKKOS_INLINE_FUNCTION constexpr auto operator+(const Reference& r) {
    return +r.get();
  }
  /// -r: the negated value.
  friend KOKKOS_INLINE_FUNCTION constexpr auto operator-(const Reference& r) {
    return -r.get();
  }

  // R defers the assignability check to the call, where Reference is complete.
#define KACC_REFERENCE_COMPOUND_OPERATOR(op)                                                     \
  template <class U, class R = Reference,                                                        \
            std::enable_if_t<is_operand_v<U> && std::is_assignable<R, value_type>::value, int> = \
                0>                                                                               \
  friend KOKKOS_INLINE_FUNCTION value_type operator op##=(Reference&& r, const U& b) {           \
    return std::move(r) = static_cast<value_type>(r.get() op operand_value(b));                  \
  }

  KACC_REFERENCE_COMPOUND_OPERATOR(+)
  KACC_REFERENCE_COMPOUND_OPERATOR(-)
  KACC_REFERENCE_COMPOUND_OPERATOR(*)
  KACC_REFERENCE_COMPOUND_OPERATOR(/)
#undef KACC_REFERENCE_COMPOUND_OPERATOR

  /// ++v(i): stores the value plus one and returns what was stored.
  template <class R = Reference,
            std::enable_if_t<std::is_assignable<R, value_type>::value, int> = 0>
  friend KOKKOS_INLINE_FUNCTION value_type operator++(Reference&& r) {
    return std::move(r) = static_cast<value_type>(r.get() + 1);
  }
  /// --v(i): stores the value minus one and returns what was stored.
  template <class R = Reference,
            std::enable_if_t<std::is_assignable<R, value_type>::value, int> = 0>
  friend KOKKOS_INLINE_FUNCTION value_type operator--(Reference&& r) {
    return std::move(r) = static_cast<value_type>(r.get() - 1);
  }
  /// v(i)++: stores the value plus one and returns the value before.
  template <class R = Reference,
            std::enable_if_t<std::is_assignable<R, value_type>::value, int> = 0>
  friend KOKKOS_INLINE_FUNCTION value_type operator++(Reference&& r, int) {
    const value_type before = r.get();
    std::move(r) = static_cast<value_type>(before + 1);
    return before;
  }
  /// v(i)--: stores the value minus one and returns the value before.
  template <class R = Reference,
            std::enable_if_t<std::is_assignable<R, value_type>::value, int> = 0>
  friend KOKKOS_INLINE_FUNCTION value_type operator--(Reference&& r, int) {
    const value_type before = r.get();
    std::move(r) = static_cast<value_type>(before - 1);
    return before;
  }

  /// |r| in the arithmetic type, found by ADL next to `using std::abs; abs(x)`.
  friend KOKKOS_INLINE_FUNCTION value_type abs(const Reference& r) {
    return magnitude(r.get());
  }
  /// |r| in the arithmetic type, found by ADL next to `using std::fabs; fabs(x)`.
  friend KOKKOS_INLINE_FUNCTION value_type fabs(const Reference& r) {
    return magnitude(r.get());
  }
  /// The square root of r, found by ADL next to `using std::sqrt; sqrt(x)`.
  friend KOKKOS_INLINE_FUNCTION auto sqrt(const Reference& r) {
    return math::sqrt(r.get());
  }

 private:
  KOKKOS_INLINE_FUNCTION static value_type magnitude(const value_type x) {
    if constexpr (std::is_floating_point<value_type>::value) {
      return math::fabs(x);
    } else {
      return x < value_type(0) ? static_cast<value_type>(-x) : x;
    }
  }
};

/// What both proxies hold and how they read: a pointer to the entry (Entry is the storage
/// type, const for the read-only proxy) and the entry's scale.
template <class Arithmetic, class Format, class Entry>
class reference_entry {
 public:
  /// The type entries are read (and written) as.
  using arithmetic_type = Arithmetic;
  /// The storage format of the entry.
  using format_type = Format;
  /// One entry in memory.
  using storage_type = Entry;
  /// The entry's scale: Arithmetic for scaled formats, an empty stand-in otherwise.
  using scale_type = scale_t<Format, Arithmetic>;

  /// Refers to the entry at `entry` with the given scale.
  KOKKOS_INLINE_FUNCTION reference_entry(Entry* entry, scale_type scale)
      : entry_(entry), scale_(scale) {}

  /// The entry converted to the arithmetic type.
  KOKKOS_INLINE_FUNCTION Arithmetic get() const {
    return load<Arithmetic, Format>(*entry_, scale_);
  }
  /// The entry converted to the arithmetic type.
  KOKKOS_INLINE_FUNCTION operator Arithmetic() const { return get(); }
  /// The storage entry itself, e.g. for atomics on the raw format.
  KOKKOS_INLINE_FUNCTION Entry* storage_pointer() const { return entry_; }

 protected:
  Entry* entry_;
  KACC_NO_UNIQUE_ADDRESS scale_type scale_;
};

}  // namespace detail

/// Proxy for one entry of a view stored in Format and computed in Arithmetic; see the
/// file comment. Only views make proxies; they live for the expression that uses them.
template <class Arithmetic, class Format, class OverflowPolicy>
class reference
    : public detail::enable_reference_operators<reference<Arithmetic, Format, OverflowPolicy>,
                                                Arithmetic>,
      public detail::reference_entry<Arithmetic, Format,
                                     typename format_traits<Format>::storage_type> {
  using entry =
      detail::reference_entry<Arithmetic, Format, typename format_traits<Format>::storage_type>;

 public:
  /// Where a write that saturates is recorded: the view's flag for scaled formats, an
  /// empty stand-in otherwise.
  using flag_type = std::conditional_t<format_traits<Format>::is_scaled, int*, detail::no_flag>;

  /// Refers to the entry at `p` with the given scale; writes that saturate set *flag (when
  /// not null).
  KOKKOS_INLINE_FUNCTION reference(typename entry::storage_type* p,
                                   typename entry::scale_type scale, flag_type flag = {})
      : entry(p, scale), flag_(flag) {}
  /// Not copyable: a copy would be a second handle on the entry that outlives the expression.
  reference(const reference&) = delete;
  /// Movable, so functions can return a proxy and forward it.
  reference(reference&&) = default;
  ~reference() = default;

  /// Rounds value to the storage format (once) and stores it; returns what was stored.
  KOKKOS_INLINE_FUNCTION Arithmetic operator=(Arithmetic value) && {
    *this->entry_ = detail::store_value<Format, OverflowPolicy>(value, this->scale_, flag_);
    return this->get();
  }
  /// Stores the value of another entry (never rebinds the proxy).
  KOKKOS_INLINE_FUNCTION Arithmetic operator=(const reference& other) && {
    return std::move(*this) = other.get();
  }
  /// Stores the value of another entry (never rebinds the proxy).
  KOKKOS_INLINE_FUNCTION Arithmetic operator=(reference&& other) && {
    return std::move(*this) = other.get();
  }

 private:
  KACC_NO_UNIQUE_ADDRESS flag_type flag_;
};

/// The read-only proxy: the same reads and operators, no assignment.
template <class Arithmetic, class Format, class OverflowPolicy>
class reference<const Arithmetic, Format, OverflowPolicy>
    : public detail::enable_reference_operators<reference<const Arithmetic, Format, OverflowPolicy>,
                                                Arithmetic>,
      public detail::reference_entry<Arithmetic, Format,
                                     const typename format_traits<Format>::storage_type> {
  using entry = detail::reference_entry<Arithmetic, Format,
                                        const typename format_traits<Format>::storage_type>;

 public:
  /// Refers to the entry at `p` with the given scale.
  KOKKOS_INLINE_FUNCTION reference(typename entry::storage_type* p,
                                   typename entry::scale_type scale)
      : entry(p, scale) {}
  /// Not copyable, as the writable proxy.
  reference(const reference&) = delete;
  /// Movable, so functions can return a proxy and forward it.
  reference(reference&&) = default;
  ~reference() = default;
  /// Read-only: nothing assigns to it.
  reference& operator=(const reference&) = delete;
  /// Read-only: nothing assigns to it.
  reference& operator=(reference&&) = delete;
};

/// The value behind a proxy; any other value passes through unchanged.
template <class T>
KOKKOS_INLINE_FUNCTION auto value(const T& x) {
  return detail::operand_value(x);
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
