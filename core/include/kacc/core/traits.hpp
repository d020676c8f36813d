#pragma once
/// @file
/// Traits that work for kacc views and plain Kokkos Views alike, so kernels are written
/// once: `arithmetic_t<V>` (the type entries compute in), `format_t<V>` (the format they
/// are stored in), `is_view_v<V>` (either kind of view), `is_kacc_view_v<V>`,
/// `is_stored_as_kokkos_view_v<V>` (a `Kokkos::View<T, kacc::StoredAs<F>>`).

#include <kacc/core/view.hpp>

namespace kacc {

template <class T>
struct is_kacc_view : std::false_type {};
template <class D, class... P>
struct is_kacc_view<View<D, P...>> : std::true_type {};
template <class T>
inline constexpr bool is_kacc_view_v = is_kacc_view<std::remove_cv_t<T>>::value;

template <class T>
inline constexpr bool is_view_v = is_kacc_view_v<T> || Kokkos::is_view<std::remove_cv_t<T>>::value;

/// True for a Kokkos::View whose memory-traits slot holds kacc::StoredAs, which Kokkos
/// allows where it has the View hooks (kacc/core/kokkos_view_property.hpp); false
/// elsewhere and for every other type.
template <class T, class = void>
struct is_stored_as_kokkos_view : std::false_type {};
template <class T>
struct is_stored_as_kokkos_view<T, std::enable_if_t<Kokkos::is_view<T>::value>>
    : detail::is_stored_as<typename T::traits::memory_traits> {};
template <class T>
inline constexpr bool is_stored_as_kokkos_view_v =
    is_stored_as_kokkos_view<std::remove_cv_t<T>>::value;

namespace detail {
template <class V, bool = is_kacc_view_v<V>, bool = is_stored_as_kokkos_view_v<V>>
struct view_formats {
  using arithmetic_type = typename V::arithmetic_type;
  using format_type = typename V::format_type;
};
// A Kokkos View with StoredAs computes in its value type, stores StoredAs' format.
template <class V>
struct view_formats<V, false, true> {
  using arithmetic_type = typename V::non_const_value_type;
  using format_type = typename V::traits::memory_traits::format;
};
// A plain View of a kacc 2-byte or custom format computes in float.
template <class V>
struct view_formats<V, false, false> {
  using value_type = typename V::non_const_value_type;
  using arithmetic_type =
      std::conditional_t<std::is_arithmetic<value_type>::value, value_type, float>;
  using format_type = value_type;
};
}  // namespace detail

template <class V>
using arithmetic_t = typename detail::view_formats<std::remove_cv_t<V>>::arithmetic_type;
/// The format V's entries are stored in (V::storage_type is one entry's bits).
template <class V>
using format_t = typename detail::view_formats<std::remove_cv_t<V>>::format_type;
/// The old name of format_t.
template <class V>
using storage_t [[deprecated("kacc::storage_t is now kacc::format_t")]] = format_t<V>;

/// The rank of a kacc or Kokkos view as a plain constant (usable in device code, where
/// the conversion operator of Kokkos' and kacc's rank constants is host-only).
template <class V>
inline constexpr unsigned rank_v = static_cast<unsigned>(V::rank);

/// Bytes one entry of V occupies in memory (scales of scaled views not counted).
template <class V>
constexpr std::size_t bytes_per_entry() {
  return sizeof(typename format_traits<format_t<V>>::storage_type);
}

/// The common arithmetic type of several views (fp64 when any of them computes in fp64).
template <class... V>
using common_arithmetic_t = std::common_type_t<arithmetic_t<V>...>;

namespace detail {
/// The scale axis a view of the given rank gets by default: none for a vector, the last
/// dimension otherwise.
constexpr int default_scale_axis(unsigned rank) {
  return rank == 1 ? -1 : static_cast<int>(rank) - 1;
}

template <class KV, class Arithmetic, class Format, class Policy, int ScaleAxis,
          bool = format_traits<Format>::is_scaled>
struct view_over {
  using type = View<replace_value_t<typename KV::data_type, Arithmetic>, typename KV::array_layout,
                    typename KV::device_type, typename KV::memory_traits, StoredAs<Format, Policy>,
                    ScalesAlong<ScaleAxis>>;
};
template <class KV, class Arithmetic, class Format, class Policy, int ScaleAxis>
struct view_over<KV, Arithmetic, Format, Policy, ScaleAxis, false> {
  using type = View<replace_value_t<typename KV::data_type, Arithmetic>, typename KV::array_layout,
                    typename KV::device_type, typename KV::memory_traits, StoredAs<Format, Policy>>;
};
}  // namespace detail

/// kacc::View type over the Kokkos View type KV, computing in Arithmetic; scaled formats
/// take their scales along dimension ScaleAxis (see ScalesAlong).
template <class KV, class Arithmetic, class Format = typename KV::non_const_value_type,
          class Policy = overflow::ieee,
          int ScaleAxis = detail::default_scale_axis(static_cast<unsigned>(KV::rank))>
using view_over_t = typename detail::view_over<KV, Arithmetic, Format, Policy, ScaleAxis>::type;

}  // namespace kacc
