#pragma once
/// @file
/// kacc::View: a Kokkos::View whose entries are stored in one format and read and
/// written in another. Template properties follow Kokkos::View: the data type gives the
/// arithmetic type and rank; layout, device or space and memory traits pass through to
/// the storage View; `kacc::StoredAs<Format, OverflowPolicy>` names the storage.
///
///     kacc::View<double*, kacc::StoredAs<kacc::fp16>> v("v", n);   // 2 bytes, fp64 math
///
/// `v(i)` hands out `double&` when the storage is the arithmetic type (the same loads as
/// a plain View), a value for const storage, and otherwise a kacc::reference proxy.

#include <kacc/core/reference.hpp>

#include <limits>
#include <stdexcept>
#include <string>

namespace kacc {

namespace detail {

template <class D>
struct base_value {
  using type = D;
};
template <class D>
struct base_value<D*> {
  using type = typename base_value<D>::type;
};
template <class D>
struct base_value<D[]> {
  using type = typename base_value<D>::type;
};
template <class D, std::size_t N>
struct base_value<D[N]> {
  using type = typename base_value<D>::type;
};

/// The data type D with its scalar replaced by N, keeping const, pointers and extents.
template <class D, class N>
struct replace_value {
  using type = std::conditional_t<std::is_const<D>::value, const N, N>;
};
template <class D, class N>
struct replace_value<D*, N> {
  using type = typename replace_value<D, N>::type*;
};
template <class D, class N>
struct replace_value<D[], N> {
  using type = typename replace_value<D, N>::type[];
};
template <class D, class N, std::size_t K>
struct replace_value<D[K], N> {
  using type = typename replace_value<D, N>::type[K];
};
template <class D, class N>
using replace_value_t = typename replace_value<D, N>::type;

template <class T>
struct is_stored_as : std::false_type {};
template <class F, class P>
struct is_stored_as<StoredAs<F, P>> : std::true_type {};

template <class... Ps>
struct type_list {};

// Splits View properties into the StoredAs one (void if absent) and the Kokkos ones.
template <class Kept, class Found, class... Rest>
struct split_properties;
template <class... Kept, class Found>
struct split_properties<type_list<Kept...>, Found> {
  using kokkos_properties = type_list<Kept...>;
  using stored_as = Found;
};
template <class... Kept, class Found, class P, class... Rest>
struct split_properties<type_list<Kept...>, Found, P, Rest...>
    : std::conditional_t<is_stored_as<P>::value, split_properties<type_list<Kept...>, P, Rest...>,
                         split_properties<type_list<Kept..., P>, Found, Rest...>> {};

template <class Data, class Properties>
struct kokkos_view_of;
template <class Data, class... Ps>
struct kokkos_view_of<Data, type_list<Ps...>> {
  using type = Kokkos::View<Data, Ps...>;
};

/// Where a scaled view finds an entry's scale: scales(last index * stride).
template <class ScaleView>
struct scale_state {
  ScaleView scales;
  std::size_t stride = 0;
  /// The scales also cover entries outside this view (a row or block subview), so
  /// deep_copy must keep them rather than pick new ones from this view's data alone.
  bool shared = false;
};

template <class... I>
KOKKOS_INLINE_FUNCTION std::size_t last_index(const I&... i) {
  std::size_t last = 0;
  ((last = static_cast<std::size_t>(i)), ...);
  return last;
}

/// Throws std::invalid_argument for negative extents or a size that overflows.
template <class... N>
void check_extents(const std::string& label, std::size_t entry_bytes, N... n) {
  const long long extents[] = {static_cast<long long>(n)..., 0};
  std::size_t total = 1;
  for (std::size_t r = 0; r < sizeof...(N); ++r) {
    if (extents[r] < 0) {
      throw std::invalid_argument("kacc::View '" + label + "': extent " + std::to_string(r) +
                                  " is " + std::to_string(extents[r]) +
                                  "; extents must be non-negative");
    }
    const auto e = static_cast<std::size_t>(extents[r]);
    if (e != 0 && total > std::numeric_limits<std::size_t>::max() / entry_bytes / e) {
      throw std::invalid_argument("kacc::View '" + label + "': extents overflow the address space");
    }
    total *= e;
  }
}

}  // namespace detail

template <class DataType, class... Properties>
class View {
  using split = detail::split_properties<detail::type_list<>, void, Properties...>;
  using const_value = typename detail::base_value<DataType>::type;

 public:
  using data_type = DataType;
  using arithmetic_type = std::remove_const_t<const_value>;
  // As in Kokkos::View: the types entries are read and written as.
  using value_type = const_value;
  using non_const_value_type = arithmetic_type;
  using const_value_type = const arithmetic_type;
  using stored_as = std::conditional_t<std::is_void<typename split::stored_as>::value,
                                       StoredAs<arithmetic_type>, typename split::stored_as>;
  using format_type = typename stored_as::format;
  using overflow_policy = typename stored_as::overflow_policy;
  using format_traits_type = format_traits<format_type>;
  using storage_type = typename format_traits_type::storage_type;
  using storage_view_type =
      typename detail::kokkos_view_of<detail::replace_value_t<DataType, storage_type>,
                                      typename split::kokkos_properties>::type;
  using execution_space = typename storage_view_type::execution_space;
  using memory_space = typename storage_view_type::memory_space;
  using device_type = typename storage_view_type::device_type;
  using array_layout = typename storage_view_type::array_layout;
  using memory_traits = typename storage_view_type::memory_traits;
  using size_type = typename storage_view_type::size_type;

  static_assert(std::is_arithmetic<arithmetic_type>::value,
                "kacc::View: the arithmetic type must be arithmetic");
  static constexpr bool is_const = std::is_const<const_value>::value;
  static constexpr bool is_scaled = format_traits_type::is_scaled;
  /// Storage equals arithmetic: entries are handed out as plain references.
  static constexpr bool is_identity = std::is_same<storage_type, arithmetic_type>::value &&
                                      !is_scaled &&
                                      std::is_same<overflow_policy, overflow::ieee>::value;
  static constexpr std::integral_constant<unsigned, static_cast<unsigned>(storage_view_type::rank)>
      rank{};

  using scale_type = detail::scale_t<format_type, arithmetic_type>;
  using scale_view_type =
      Kokkos::View<std::conditional_t<is_const, const arithmetic_type, arithmetic_type>*,
                   Kokkos::LayoutStride, device_type>;
  using scale_state_type =
      std::conditional_t<is_scaled, detail::scale_state<scale_view_type>, detail::no_scale>;
  using reference_type = std::conditional_t<
      is_const, arithmetic_type,
      std::conditional_t<is_identity, arithmetic_type&,
                         kacc::reference<arithmetic_type, format_type, overflow_policy>>>;

  View() = default;

  /// Allocates `label` with the given extents (scales start at 1).
  template <class... N, class Enable = std::enable_if_t<(std::is_integral<N>::value && ...)>>
  explicit View(const std::string& label, N... extents)
      : storage_((detail::check_extents(label, sizeof(storage_type), extents...), label),
                 static_cast<std::size_t>(extents)...),
        scale_state_(initial_scales(label)) {}

  /// Allocates with Kokkos allocation properties, e.g.
  /// `Kokkos::view_alloc(Kokkos::WithoutInitializing, "x")`.
  template <class AllocProperties, class... N,
            class Enable = std::enable_if_t<
                !std::is_convertible<AllocProperties, std::string>::value &&
                !Kokkos::is_view<AllocProperties>::value && (std::is_integral<N>::value && ...)>>
  View(const AllocProperties& properties, N... extents)
      : storage_(
            (detail::check_extents("kacc::View", sizeof(storage_type), extents...), properties),
            static_cast<std::size_t>(extents)...),
        scale_state_(initial_scales("kacc::View")) {}

  /// Wraps existing storage without copying (scales start at 1 for scaled formats).
  template <class... KP>
  explicit View(const Kokkos::View<KP...>& storage)
      : storage_(storage), scale_state_(initial_scales(storage_.label())) {}

  /// Wraps existing integer storage and its scales: entry scale = scales(last index * stride).
  /// `shared` says the scales also serve entries outside this storage (see scale_state).
  template <class... KP>
  View(const Kokkos::View<KP...>& storage, const scale_view_type& scales, std::size_t stride,
       bool shared = false)
      : storage_(storage), scale_state_{scales, stride, shared} {
    static_assert(is_scaled, "only views of scaled formats take scales");
  }

  /// From a compatible kacc view (same format; e.g. non-const to const, any layout to stride).
  template <class D, class... P>
  View(const View<D, P...>& other)
      : storage_(other.storage()), scale_state_(convert_state(other.scale_state())) {
    static_assert(std::is_same<typename View<D, P...>::format_type, format_type>::value,
                  "kacc::View: converting between different storage formats needs kacc::deep_copy");
  }

  template <class... I>
  KOKKOS_FORCEINLINE_FUNCTION reference_type operator()(const I&... i) const {
    static_assert(sizeof...(I) == decltype(rank)::value,
                  "kacc::View: give one index per dimension");
    if constexpr (is_const) {
      return detail::load<arithmetic_type, format_type>(storage_(i...), scale_at(i...));
    } else if constexpr (is_identity) {
      return storage_(i...);
    } else {
      return reference_type(&storage_(i...), scale_at(i...));
    }
  }

  /// The scale that applies to entry (i...); detail::no_scale for unscaled formats.
  template <class... I>
  KOKKOS_FORCEINLINE_FUNCTION scale_type scale_at(const I&... i) const {
    if constexpr (is_scaled) {
      return scale_state_.scales(detail::last_index(i...) * scale_state_.stride);
    } else {
      return {};
    }
  }

  KOKKOS_INLINE_FUNCTION const storage_view_type& storage() const { return storage_; }
  KOKKOS_INLINE_FUNCTION const scale_state_type& scale_state() const { return scale_state_; }
  /// The scales of a scaled view (one per column, or one for a vector).
  KOKKOS_INLINE_FUNCTION const scale_view_type& scales() const {
    static_assert(is_scaled, "only views of scaled formats have scales");
    return scale_state_.scales;
  }

  template <class R>
  KOKKOS_INLINE_FUNCTION constexpr std::size_t extent(const R& r) const {
    return storage_.extent(r);
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION constexpr int extent_int(const R& r) const {
    return storage_.extent_int(r);
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION constexpr std::size_t stride(const R& r) const {
    return storage_.stride(r);
  }
  KOKKOS_INLINE_FUNCTION constexpr std::size_t size() const { return storage_.size(); }
  KOKKOS_INLINE_FUNCTION constexpr std::size_t span() const { return storage_.span(); }
  KOKKOS_INLINE_FUNCTION bool span_is_contiguous() const { return storage_.span_is_contiguous(); }
  // const storage_type* for views of const data.
  KOKKOS_INLINE_FUNCTION auto data() const { return storage_.data(); }
  KOKKOS_INLINE_FUNCTION bool is_allocated() const { return storage_.is_allocated(); }
  std::string label() const { return storage_.label(); }
  /// Bytes one entry occupies in memory.
  static constexpr std::size_t bytes_per_entry() { return sizeof(storage_type); }

 private:
  template <class OtherState>
  static scale_state_type convert_state(const OtherState& other) {
    if constexpr (is_scaled) {
      return {other.scales, other.stride, other.shared};
    } else {
      return {};
    }
  }

  // Built in the constructors' initialiser lists: assigning into a default-constructed
  // View crashes some Kokkos development snapshots, and it is one allocation less.
  scale_state_type initial_scales(const std::string& label) const {
    if constexpr (is_scaled && !is_const) {
      const std::size_t n = rank == 1 ? 1 : storage_.extent(rank - 1);
      Kokkos::View<arithmetic_type*, device_type> scales(label + "_scales", n);
      Kokkos::deep_copy(scales, arithmetic_type(1));
      return {scale_view_type(scales), rank == 1 ? 0u : 1u, false};
    } else {
      (void)label;
      return {};
    }
  }

  storage_view_type storage_;
  KACC_NO_UNIQUE_ADDRESS scale_state_type scale_state_{};
};

}  // namespace kacc
