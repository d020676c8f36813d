#pragma once
/// @file
/// kacc::View: a Kokkos::View whose entries are stored in one format and read and
/// written in another. Template properties follow Kokkos::View: the data type gives the
/// arithmetic type and rank; layout, device or space and memory traits pass through to
/// the storage View; `kacc::StoredAs<Format, OverflowPolicy>` names the storage and, for
/// scaled formats, `kacc::ScalesAlong<Axis>` which dimension the scales run along.
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

template <class T>
struct is_scales_along : std::false_type {};
template <int Axis>
struct is_scales_along<ScalesAlong<Axis>> : std::true_type {};

template <class Along>
struct scales_along_axis : std::integral_constant<int, Along::axis> {};
template <>
struct scales_along_axis<void> : std::integral_constant<int, 0> {};

template <class... Ps>
struct type_list {};

// Splits View properties into the StoredAs one and the ScalesAlong one (void if absent) and
// the Kokkos ones.
template <class Kept, class Stored, class Along, class... Rest>
struct split_properties;
template <class... Kept, class Stored, class Along>
struct split_properties<type_list<Kept...>, Stored, Along> {
  using kokkos_properties = type_list<Kept...>;
  using stored_as = Stored;
  using scales_along = Along;
};
template <class... Kept, class Stored, class Along, class P, class... Rest>
struct split_properties<type_list<Kept...>, Stored, Along, P, Rest...>
    : std::conditional_t<
          is_stored_as<P>::value, split_properties<type_list<Kept...>, P, Along, Rest...>,
          std::conditional_t<is_scales_along<P>::value,
                             split_properties<type_list<Kept...>, Stored, P, Rest...>,
                             split_properties<type_list<Kept..., P>, Stored, Along, Rest...>>> {};

template <class Data, class Properties>
struct kokkos_view_of;
template <class Data, class... Ps>
struct kokkos_view_of<Data, type_list<Ps...>> {
  using type = Kokkos::View<Data, Ps...>;
};

/// A scaled view's scales: one per index of the view's scale axis (one in all when it has
/// none), contiguous, so an access loads scales(i_axis), or scales(0), with no stride.
template <class ScaleView, class FlagView>
struct scale_state {
  ScaleView scales;
  /// Set (to 1) by any write that saturated; shared by every view of the same allocation.
  FlagView saturated;
  /// The scales also cover entries outside this view (a row or block subview), so
  /// deep_copy must keep them rather than pick new ones from this view's data alone.
  bool shared = false;
};

/// The Axis-th of the indices i..., or 0 for Axis -1 (one scale for the view).
template <int Axis, class... I>
KOKKOS_FORCEINLINE_FUNCTION std::size_t scale_index(const I&... i) {
  if constexpr (Axis < 0) {
    return 0;
  } else {
    const std::size_t all[] = {static_cast<std::size_t>(i)...};
    return all[Axis];
  }
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
  using split = split_properties<type_list<>, void, void, Properties...>;
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
  static constexpr int rank = static_cast<int>(storage_view_type::rank);
  /// The dimension the scales run along: the property's, else none for a vector and the
  /// last dimension (columns of a matrix) otherwise.
  static constexpr int scale_axis = std::is_void<typename split::scales_along>::value
                                        ? (rank == 1 ? -1 : rank - 1)
                                        : scales_along_axis<typename split::scales_along>::value;
  static_assert(scale_axis >= -1 && scale_axis < rank,
                "kacc::ScalesAlong: the axis must be -1 (one scale) or a dimension of the view");
  static_assert(is_scaled || std::is_void<typename split::scales_along>::value,
                "kacc::ScalesAlong applies to scaled formats only");
  static_assert(
      is_scaled ||
          !std::is_same<typename stored_as::overflow_policy, overflow::throw_on_host>::value,
      "kacc::overflow::throw_on_host applies to scaled formats only (the others have no "
      "saturation flag)");
  static_assert(
      is_scaled ||
          !std::is_same<typename stored_as::overflow_policy, overflow::rescale_on_host>::value,
      "kacc::overflow::rescale_on_host applies to scaled formats only (the others have no "
      "scales)");
  using scale_view_type =
      Kokkos::View<std::conditional_t<is_const, const arithmetic_type, arithmetic_type>*,
                   Kokkos::LayoutRight, typename storage_view_type::device_type>;
  using flag_view_type = Kokkos::View<int, typename storage_view_type::device_type>;
  using scale_state_type =
      std::conditional_t<is_scaled, scale_state<scale_view_type, flag_view_type>, no_scale>;
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

  static_assert(is_arithmetic_type<arithmetic_type>::value,
                "kacc::View: the arithmetic type must be arithmetic, or a type for which "
                "kacc::is_arithmetic_type is true (kacc::double_double, kacc::quad_double)");
  static constexpr bool is_const = std::is_const<const_value>::value;
  static constexpr bool is_scaled = format_traits_type::is_scaled;
  /// Storage equals arithmetic: entries are handed out as plain references.
  static constexpr bool is_identity = std::is_same<storage_type, arithmetic_type>::value &&
                                      !is_scaled &&
                                      std::is_same<overflow_policy, overflow::ieee>::value;
  static constexpr std::integral_constant<unsigned, static_cast<unsigned>(storage_view_type::rank)>
      rank{};

  /// The dimension whose index picks an entry's scale (-1: one scale for the view).
  static constexpr int scale_axis = types::scale_axis;
  using scale_type = detail::scale_t<format_type, arithmetic_type>;
  using scale_view_type = typename types::scale_view_type;
  using flag_view_type = typename types::flag_view_type;
  using scale_state_type = typename types::scale_state_type;
  using reference_type = std::conditional_t<
      is_const, arithmetic_type,
      std::conditional_t<is_identity, arithmetic_type&,
                         kacc::reference<arithmetic_type, format_type, overflow_policy>>>;

  View() = default;

  /// Allocates `label` with the given extents (scales start at 1).
  template <class... N, class Enable = std::enable_if_t<(std::is_integral<N>::value && ...)>>
  explicit View(const std::string& label, N... extents)
      : holder(initial_scales(label, scale_extent(static_cast<std::size_t>(extents)...))),
        storage_((detail::check_extents(label, sizeof(storage_type), extents...), label),
                 static_cast<std::size_t>(extents)...) {}

  /// Allocates with Kokkos allocation properties, e.g.
  /// `Kokkos::view_alloc(Kokkos::WithoutInitializing, "x")`.
  template <class AllocProperties, class... N,
            class Enable = std::enable_if_t<
                !std::is_convertible<AllocProperties, std::string>::value &&
                !Kokkos::is_view<AllocProperties>::value && (std::is_integral<N>::value && ...)>>
  View(const AllocProperties& properties, N... extents)
      : holder(initial_scales("kacc::View", scale_extent(static_cast<std::size_t>(extents)...))),
        storage_(
            (detail::check_extents("kacc::View", sizeof(storage_type), extents...), properties),
            static_cast<std::size_t>(extents)...) {}

  /// Wraps existing storage without copying. Scaled formats need their scales as well
  /// (the constructor below, or make_view with scales): integers alone have no value.
  template <class... KP>
  explicit View(const Kokkos::View<KP...>& storage) : storage_(storage) {
    static_assert(!is_scaled,
                  "kacc::View: storage of a scaled format has no value without its scales; wrap "
                  "it as View(storage, scales) or kacc::make_view<Arithmetic, Format>(storage, "
                  "scales)");
  }

  /// Wraps existing integer storage and its scales, one per index of dimension scale_axis
  /// (one in all for scale_axis -1); throws std::invalid_argument when the number of scales
  /// differs. The view gets a saturation flag of its own.
  template <class... KP>
  View(const Kokkos::View<KP...>& storage, const scale_view_type& scales)
      : View(storage, scale_state_type{scales, flag_view_type("kacc::View::saturated"), false}) {}

  /// Wraps storage with a given scale state (scales, saturation flag, whether the scales are
  /// shared with entries outside the view): how subviews and mirrors keep their parent's.
  template <class... KP>
  View(const Kokkos::View<KP...>& storage, const scale_state_type& state)
      : holder(state), storage_(storage) {
    static_assert(is_scaled, "only views of scaled formats take scales");
    const std::size_t needed = scale_axis < 0 ? 1 : storage.extent(scale_axis < 0 ? 0 : scale_axis);
    if (state.scales.extent(0) != needed || !state.saturated.is_allocated()) {
      throw std::invalid_argument(
          "kacc::View '" + storage.label() + "': scales has extent " +
          std::to_string(state.scales.extent(0)) + " but the view needs " + std::to_string(needed) +
          (scale_axis < 0 ? std::string(" (one scale)")
                          : " (one per index of dimension " + std::to_string(scale_axis) + ")"));
    }
  }

  /// From a compatible kacc view (same format and scale axis; e.g. non-const to const, any
  /// layout to stride).
  template <class D, class... P>
  View(const View<D, P...>& other)
      : holder(convert_state(other.scale_state())), storage_(other.storage()) {
    static_assert(std::is_same<typename View<D, P...>::format_type, format_type>::value,
                  "kacc::View: converting between different storage formats needs kacc::deep_copy");
    static_assert(!is_scaled || View<D, P...>::scale_axis == scale_axis,
                  "kacc::View: converting between scaled views needs the same scale axis");
  }

  template <class... I>
  KOKKOS_FORCEINLINE_FUNCTION reference_type operator()(const I&... i) const {
    static_assert(sizeof...(I) == decltype(rank)::value,
                  "kacc::View: give one index per dimension");
    if constexpr (is_const) {
      return detail::load<arithmetic_type, format_type>(storage_(i...), scale_at(i...));
    } else if constexpr (is_identity) {
      return storage_(i...);
    } else if constexpr (is_scaled) {
      return reference_type(&storage_(i...), scale_at(i...), scale_state().saturated.data());
    } else {
      return reference_type(&storage_(i...), scale_at(i...));
    }
  }

  /// The scale that applies to entry (i...); detail::no_scale for unscaled formats.
  template <class... I>
  KOKKOS_FORCEINLINE_FUNCTION scale_type scale_at(const I&... i) const {
    if constexpr (is_scaled) {
      return scale_state().scales(detail::scale_index<scale_axis>(i...));
    } else {
      return {};
    }
  }

  KOKKOS_INLINE_FUNCTION const storage_view_type& storage() const { return storage_; }
  KOKKOS_INLINE_FUNCTION const scale_state_type& scale_state() const {
    return holder::held_scale_state();
  }
  /// The scales of a scaled view, one per index of dimension scale_axis (one for -1).
  KOKKOS_INLINE_FUNCTION const scale_view_type& scales() const {
    static_assert(is_scaled, "only views of scaled formats have scales");
    return scale_state().scales;
  }
  /// Whether a write into this view's allocation (through this view, a copy or a subview)
  /// did not fit at its scale and was saturated (or was non-finite) since the allocation or
  /// the last clear_saturated(). Reads a flag from the view's memory space; call it after
  /// the kernels that wrote have finished (fence).
  bool saturated() const {
    static_assert(is_scaled, "only writes into scaled formats are counted");
    int flag = 0;
    Kokkos::deep_copy(flag, scale_state().saturated);
    return flag != 0;
  }
  /// Resets the flag saturated() reads.
  void clear_saturated() const {
    static_assert(is_scaled, "only writes into scaled formats are counted");
    Kokkos::deep_copy(scale_state().saturated, 0);
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
      return {other.scales, other.saturated, other.shared};
    } else {
      return {};
    }
  }

  // The number of scales a view with these extents has.
  template <class... N>
  static std::size_t scale_extent(N... extents) {
    const std::size_t all[] = {extents...};
    return scale_axis < 0 ? 1 : all[scale_axis < 0 ? 0 : scale_axis];
  }

  // Built in the constructors' initialiser lists: assigning into a default-constructed
  // View crashes some Kokkos development snapshots, and it is one allocation less.
  static scale_state_type initial_scales(const std::string& label, std::size_t n) {
    if constexpr (is_scaled) {
      Kokkos::View<arithmetic_type*, Kokkos::LayoutRight, device_type> scales(label + "_scales", n);
      Kokkos::deep_copy(scales, arithmetic_type(1));
      return {scale_view_type(scales), flag_view_type(label + "_saturated"), false};
    } else {
      (void)label;
      (void)n;
      return {};
    }
  }

  storage_view_type storage_;
};

}  // namespace kacc
