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

/// The types a View<DataType, Properties...> is made of, computed outside the class so that
/// its base class (the scale holder) can name them.
template <class DataType, class... Properties>
struct view_types {
  using split = split_properties<type_list<>, void, Properties...>;
  using const_value = typename base_value<DataType>::type;
  using arithmetic_type = std::remove_const_t<const_value>;
  using stored_as = std::conditional_t<std::is_void<typename split::stored_as>::value,
                                       StoredAs<arithmetic_type>, typename split::stored_as>;
  using format_type = typename stored_as::format;
  using storage_type = typename format_traits<format_type>::storage_type;
  using storage_view_type = typename kokkos_view_of<replace_value_t<DataType, storage_type>,
                                                    typename split::kokkos_properties>::type;
  static constexpr bool is_const = std::is_const<const_value>::value;
  static constexpr bool is_scaled = format_traits<format_type>::is_scaled;
  using scale_view_type =
      Kokkos::View<std::conditional_t<is_const, const arithmetic_type, arithmetic_type>*,
                   Kokkos::LayoutStride, typename storage_view_type::device_type>;
  using scale_state_type = std::conditional_t<is_scaled, scale_state<scale_view_type>, no_scale>;
};

/// Holds a view's scale state. For unscaled formats the state is empty and the holder is
/// an empty base, so the view is exactly as large as its Kokkos View (nvcc has no
/// [[no_unique_address]]).
template <class State, bool = std::is_empty<State>::value>
struct scale_holder {
  State held_state{};
  scale_holder() = default;
  explicit scale_holder(const State& state) : held_state(state) {}
  KOKKOS_INLINE_FUNCTION const State& held_scale_state() const { return held_state; }
};
template <class State>
struct scale_holder<State, true> : private State {
  scale_holder() = default;
  explicit scale_holder(const State&) {}
  KOKKOS_INLINE_FUNCTION const State& held_scale_state() const { return *this; }
};

}  // namespace detail

template <class DataType, class... Properties>
class View : private detail::scale_holder<
                 typename detail::view_types<DataType, Properties...>::scale_state_type> {
  using types = detail::view_types<DataType, Properties...>;
  using const_value = typename types::const_value;
  using holder = detail::scale_holder<typename types::scale_state_type>;

 public:
  using data_type = DataType;
  using arithmetic_type = typename types::arithmetic_type;
  // As in Kokkos::View: the types entries are read and written as.
  using value_type = const_value;
  using non_const_value_type = arithmetic_type;
  using const_value_type = const arithmetic_type;
  using stored_as = typename types::stored_as;
  using format_type = typename stored_as::format;
  using overflow_policy = typename stored_as::overflow_policy;
  using format_traits_type = format_traits<format_type>;
  using storage_type = typename format_traits_type::storage_type;
  using storage_view_type = typename types::storage_view_type;
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
  using scale_view_type = typename types::scale_view_type;
  using scale_state_type = typename types::scale_state_type;
  using reference_type = std::conditional_t<
      is_const, arithmetic_type,
      std::conditional_t<is_identity, arithmetic_type&,
                         kacc::reference<arithmetic_type, format_type, overflow_policy>>>;

  View() = default;

  /// Allocates `label` with the given extents (scales start at 1).
  template <class... N, class Enable = std::enable_if_t<(std::is_integral<N>::value && ...)>>
  explicit View(const std::string& label, N... extents)
      : holder(initial_scales(label, last_extent(static_cast<std::size_t>(extents)...))),
        storage_((detail::check_extents(label, sizeof(storage_type), extents...), label),
                 static_cast<std::size_t>(extents)...) {}

  /// Allocates with Kokkos allocation properties, e.g.
  /// `Kokkos::view_alloc(Kokkos::WithoutInitializing, "x")`.
  template <class AllocProperties, class... N,
            class Enable = std::enable_if_t<
                !std::is_convertible<AllocProperties, std::string>::value &&
                !Kokkos::is_view<AllocProperties>::value && (std::is_integral<N>::value && ...)>>
  View(const AllocProperties& properties, N... extents)
      : holder(initial_scales("kacc::View", last_extent(static_cast<std::size_t>(extents)...))),
        storage_(
            (detail::check_extents("kacc::View", sizeof(storage_type), extents...), properties),
            static_cast<std::size_t>(extents)...) {}

  /// Wraps existing storage without copying (scales start at 1 for scaled formats).
  template <class... KP>
  explicit View(const Kokkos::View<KP...>& storage)
      : holder(initial_scales(storage.label(), storage.extent(rank - 1))), storage_(storage) {}

  /// Wraps existing integer storage and its scales: entry scale = scales(last index * stride).
  /// `shared` says the scales also serve entries outside this storage (see scale_state).
  template <class... KP>
  View(const Kokkos::View<KP...>& storage, const scale_view_type& scales, std::size_t stride,
       bool shared = false)
      : holder(scale_state_type{scales, stride, shared}), storage_(storage) {
    static_assert(is_scaled, "only views of scaled formats take scales");
  }

  /// From a compatible kacc view (same format; e.g. non-const to const, any layout to stride).
  template <class D, class... P>
  View(const View<D, P...>& other)
      : holder(convert_state(other.scale_state())), storage_(other.storage()) {
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
      return scale_state().scales(detail::last_index(i...) * scale_state().stride);
    } else {
      return {};
    }
  }

  KOKKOS_INLINE_FUNCTION const storage_view_type& storage() const { return storage_; }
  KOKKOS_INLINE_FUNCTION const scale_state_type& scale_state() const {
    return holder::held_scale_state();
  }
  /// The scales of a scaled view (one per column, or one for a vector).
  KOKKOS_INLINE_FUNCTION const scale_view_type& scales() const {
    static_assert(is_scaled, "only views of scaled formats have scales");
    return scale_state().scales;
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

  template <class... N>
  static std::size_t last_extent(N... extents) {
    const std::size_t all[] = {extents...};
    return all[sizeof...(N) - 1];
  }

  // Built in the constructors' initialiser lists: assigning into a default-constructed
  // View crashes some Kokkos development snapshots, and it is one allocation less.
  // last_extent: the extent of the last dimension, along which the scales run.
  static scale_state_type initial_scales(const std::string& label, std::size_t last_extent) {
    if constexpr (is_scaled) {
      const std::size_t n = rank == 1 ? 1 : last_extent;
      Kokkos::View<arithmetic_type*, device_type> scales(label + "_scales", n);
      Kokkos::deep_copy(scales, arithmetic_type(1));
      return {scale_view_type(scales), rank == 1 ? 0u : 1u, false};
    } else {
      (void)label;
      (void)last_extent;
      return {};
    }
  }

  storage_view_type storage_;
};

}  // namespace kacc
