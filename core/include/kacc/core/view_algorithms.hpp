#pragma once
/// @file
/// Free functions on kacc views, in the shape of their Kokkos counterparts: make_view
/// (wrap existing storage), subview, create_mirror_view and the converting deep_copy.

#include <kacc/core/kernel_support.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>
#include <utility>

namespace kacc {

/// Wraps an existing Kokkos View as a kacc view computing in Arithmetic; no copy.
/// `make_view<double>(float_view)` reads and writes the floats as doubles.
template <class Arithmetic, class Format = void, class Policy = overflow::ieee, class... KP>
auto make_view(const Kokkos::View<KP...>& storage) {
  using KV = Kokkos::View<KP...>;
  using F =
      std::conditional_t<std::is_void<Format>::value, typename KV::non_const_value_type, Format>;
  static_assert(std::is_same<typename format_traits<F>::storage_type,
                             typename KV::non_const_value_type>::value,
                "make_view: the View's value type must be the format's storage type");
  return view_over_t<KV, Arithmetic, F, Policy>(storage);
}

/// Wraps integer storage with its scales as a scaled view, the scales running along
/// dimension ScaleAxis (default: one scale for a vector, one per column of a matrix); no
/// copy. Throws std::invalid_argument when the number of scales does not match.
template <class Arithmetic, class Format, class... KP, class... SP>
auto make_view(const Kokkos::View<KP...>& storage, const Kokkos::View<SP...>& scales) {
  using KV = Kokkos::View<KP...>;
  using V = view_over_t<KV, Arithmetic, Format>;
  static_assert(V::is_scaled, "make_view with scales needs a scaled format");
  return V(storage, typename V::scale_view_type(scales));
}

namespace detail {
template <class Arg>
struct index_range {
  static constexpr bool is_index = std::is_integral<Arg>::value;
  static constexpr bool is_all = false;
};
// Kokkos::ALL's type moved from Kokkos::Impl to Kokkos in 4.x; decltype finds it in both.
using all_t = std::decay_t<decltype(Kokkos::ALL)>;
template <>
struct index_range<all_t> {
  static constexpr bool is_index = false;
  static constexpr bool is_all = true;
};

template <class Arg>
std::pair<std::size_t, std::size_t> range_of(const Arg& arg) {
  if constexpr (std::is_integral<Arg>::value) {
    return {static_cast<std::size_t>(arg), static_cast<std::size_t>(arg) + 1};
  } else {
    return {static_cast<std::size_t>(arg.first), static_cast<std::size_t>(arg.second)};
  }
}

/// How a subview with arguments Args of a view whose scales run along Axis maps its scales
/// (D: the dimensions, 0 to sizeof...(Args) - 1). Folds, not loops over arrays: nvcc's
/// front end does not evaluate those in template arguments.
template <int Axis, class Dims, class... Args>
struct subview_scales_of;
template <int Axis, std::size_t... D, class... Args>
struct subview_scales_of<Axis, std::index_sequence<D...>, Args...> {
  /// The argument in the scale dimension is an index (one scale is left) or ALL.
  static constexpr bool axis_is_index =
      (false || ... || (static_cast<int>(D) == Axis && index_range<Args>::is_index));
  static constexpr bool axis_is_all =
      (false || ... || (static_cast<int>(D) == Axis && index_range<Args>::is_all));
  /// Dimensions before the scale dimension that an index drops.
  static constexpr int dropped =
      (0 + ... + ((static_cast<int>(D) < Axis && index_range<Args>::is_index) ? 1 : 0));
  /// The subview's scale axis: none when the parent has none or an index fixes that
  /// dimension, else the parent's axis less the dimensions before it that are dropped.
  static constexpr int axis = Axis < 0 || axis_is_index ? -1 : Axis - dropped;
  /// Every dimension but the scale axis is taken whole, so the subview holds every entry
  /// its scales apply to.
  static constexpr bool covers_its_scales =
      (true && ... && (static_cast<int>(D) == Axis || index_range<Args>::is_all));
};
template <int Axis, class... Args>
using subview_scales = subview_scales_of<Axis, std::index_sequence_for<Args...>, Args...>;

template <int Axis, class... Args>
decltype(auto) axis_argument(const Args&... args) {
  return std::get < Axis < 0 ? 0 : Axis > (std::forward_as_tuple(args...));
}
}  // namespace detail

/// A subview that is still a kacc view; arguments as for Kokkos::subview. A scaled view's
/// subview keeps the scales of its entries: an index in the scale dimension leaves one
/// scale, a range the scales of that range.
template <class D, class... P, class... Args>
auto subview(const View<D, P...>& v, const Args&... args) {
  using V = View<D, P...>;
  auto storage = Kokkos::subview(v.storage(), args...);
  if constexpr (!V::is_scaled) {
    using R = view_over_t<decltype(storage), typename V::arithmetic_type, typename V::format_type,
                          typename V::overflow_policy>;
    return R(storage);
  } else {
    using map = detail::subview_scales<V::scale_axis, Args...>;
    using R = view_over_t<decltype(storage), typename V::arithmetic_type, typename V::format_type,
                          typename V::overflow_policy, map::axis>;
    const auto& state = v.scale_state();
    const bool shared = state.shared || !map::covers_its_scales;
    if constexpr (V::scale_axis < 0 || map::axis_is_all) {
      return R(storage, typename R::scale_state_type{state.scales, state.saturated, shared});
    } else {
      const auto range = detail::range_of(detail::axis_argument<V::scale_axis>(args...));
      auto scales = Kokkos::subview(
          state.scales, Kokkos::pair<std::size_t, std::size_t>(range.first, range.second));
      return R(storage, typename R::scale_state_type{typename R::scale_view_type(scales),
                                                     state.saturated, shared});
    }
  }
}

/// A host-accessible kacc view of the same shape and format (v itself when already host).
template <class D, class... P>
auto create_mirror_view(const View<D, P...>& v) {
  using V = View<D, P...>;
  auto storage = Kokkos::create_mirror_view(v.storage());
  if constexpr (!V::is_scaled) {
    using R = view_over_t<decltype(storage), typename V::arithmetic_type, typename V::format_type,
                          typename V::overflow_policy>;
    return R(storage);
  } else {
    using M = view_over_t<decltype(storage), typename V::arithmetic_type, typename V::format_type,
                          typename V::overflow_policy, V::scale_axis>;
    const auto& state = v.scale_state();
    return M(storage, typename M::scale_state_type{
                          typename M::scale_view_type(Kokkos::create_mirror_view(state.scales)),
                          Kokkos::create_mirror_view(state.saturated), state.shared});
  }
}

namespace detail {

template <class V>
std::string extents_string(const V& v) {
  std::ostringstream out;
  out << '(';
  for (unsigned r = 0; r < static_cast<unsigned>(V::rank); ++r)
    out << (r ? ", " : "") << v.extent(r);
  out << ')';
  return out.str();
}

template <class V>
using element_value_t = typename V::non_const_value_type;

// Runs f(i...) over every index of a rank-1..3 view shape in exec.
template <unsigned Rank, class Exec, class Shape, class F>
void for_each_index(const std::string& label, const Exec& exec, const Shape& shape, const F& f) {
  if constexpr (Rank == 1) {
    Kokkos::parallel_for(label, Impl::range(exec, 0, shape.extent(0)), f);
  } else if constexpr (Rank == 2) {
    using policy = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>, Kokkos::IndexType<index_type>>;
    Kokkos::parallel_for(
        label, policy(exec, {0, 0}, {index_type(shape.extent(0)), index_type(shape.extent(1))}), f);
  } else {
    static_assert(Rank == 3, "kacc views of rank 1 to 3 are supported");
    using policy = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>, Kokkos::IndexType<index_type>>;
    Kokkos::parallel_for(label,
                         policy(exec, {0, 0, 0},
                                {index_type(shape.extent(0)), index_type(shape.extent(1)),
                                 index_type(shape.extent(2))}),
                         f);
  }
}

// dst(i...) = src(i...) converted to dst's arithmetic type. A functor, not a lambda: nvcc
// refuses extended lambdas that are generic or first capture inside `if constexpr`.
template <class Dst, class Src>
struct convert_entries {
  using T = element_value_t<Dst>;
  Dst dst;
  Src src;
  KOKKOS_INLINE_FUNCTION void operator()(index_type i) const { dst(i) = convert<T>(src(i)); }
  KOKKOS_INLINE_FUNCTION void operator()(index_type i, index_type j) const {
    dst(i, j) = convert<T>(src(i, j));
  }
  KOKKOS_INLINE_FUNCTION void operator()(index_type i, index_type j, index_type k) const {
    dst(i, j, k) = convert<T>(src(i, j, k));
  }
};

// Largest magnitude in each slot k of src (the entries whose index in dimension SlotDim
// is k), inf where one is not finite; reduces to the largest of all.
// With finite_only, non-finite entries count as 0 instead.
template <class Src, class T, class Memory, int SlotDim>
struct slot_magnitudes {
  Src src;
  Kokkos::View<T*, Kokkos::LayoutRight, Memory> slot_max;
  bool finite_only;

  KOKKOS_INLINE_FUNCTION T magnitude(const T x) const {
    return math::isfinite(x) ? math::fabs(x) : (finite_only ? T(0) : T(HUGE_VAL));
  }
  // |src| at the entry with index k in SlotDim and a, b in the other dimensions, in order.
  KOKKOS_INLINE_FUNCTION T at(index_type k, index_type a, index_type b) const {
    if constexpr (rank_v<Src> == 1) {
      return magnitude(convert<T>(src(k)));
    } else if constexpr (rank_v<Src> == 2) {
      return magnitude(convert<T>(SlotDim == 0 ? src(k, a) : src(a, k)));
    } else {
      return magnitude(convert<T>(SlotDim == 0   ? src(k, a, b)
                                  : SlotDim == 1 ? src(a, k, b)
                                                 : src(a, b, k)));
    }
  }
  // The extent of the d-th dimension other than SlotDim (1 past the rank).
  KOKKOS_INLINE_FUNCTION index_type other_extent(unsigned d) const {
    const unsigned dim = static_cast<int>(d) >= SlotDim ? d + 1 : d;
    return dim < rank_v<Src> ? index_type(src.extent(dim)) : 1;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const index_type k, T& largest) const {
    T m = 0;
    const index_type na = other_extent(0), nb = other_extent(1);
    for (index_type a = 0; a < na; ++a) {
      for (index_type b = 0; b < nb; ++b) {
        const T x = at(k, a, b);
        m = x > m ? x : m;
      }
    }
    slot_max(k) = m;
    largest = m > largest ? m : largest;
  }
};

// Sets each of dst's scales to format_traits::scale_for the largest magnitude of the
// entries of src it applies to. All-zero slots get scale 1; non-finite data throws and
// leaves dst as it was, unless finite_only, which picks the scales from the finite
// entries alone.
template <class Exec, class Dst, class Src>
void choose_scales(const Exec& exec, const Dst& dst, const Src& src, bool finite_only) {
  using T = arithmetic_t<Dst>;
  using Memory = typename Dst::memory_space;
  using traits = format_traits<format_t<Dst>>;
  constexpr int axis = Dst::scale_axis;
  // One scale for the view: the slots are the indices of the last dimension, reduced.
  constexpr int slot_dim = axis < 0 ? static_cast<int>(Dst::rank) - 1 : axis;
  auto scales = dst.scales();
  const index_type slots = src.extent(slot_dim);
  Kokkos::View<T*, Kokkos::LayoutRight, Memory> chosen(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::deep_copy::scales"), slots);
  T worst = 0;
  Kokkos::parallel_reduce("kacc::deep_copy::scales", Impl::range(exec, 0, slots),
                          slot_magnitudes<Src, T, Memory, slot_dim>{src, chosen, finite_only},
                          Kokkos::Max<T>(worst));
  if (!(worst <= std::numeric_limits<T>::max()))
    throw std::invalid_argument(
        "kacc::deep_copy: the source holds a non-finite value; scaled formats store finite "
        "values only");
  if constexpr (axis < 0) {
    const T one_scale = worst > 0 ? traits::template scale_for<T>(worst) : T(1);
    Kokkos::parallel_for(
        "kacc::deep_copy::scale", Impl::range(exec, 0, 1),
        KOKKOS_LAMBDA(index_type) { scales(0) = one_scale; });
  } else {
    Kokkos::parallel_for(
        "kacc::deep_copy::scales", Impl::range(exec, 0, slots), KOKKOS_LAMBDA(index_type k) {
          chosen(k) = chosen(k) > 0 ? traits::template scale_for<T>(chosen(k)) : T(1);
        });
    Kokkos::deep_copy(exec, scales, chosen);
  }
}

// Declared in kernel_support.hpp, for overflow::rescale_on_host.
template <class Exec, class Dst, class Src>
void copy_converted(const Exec& exec, const Dst& dst, const Src& src) {
  if constexpr (format_traits<format_t<Dst>>::is_scaled) {
    if (!dst.scale_state().shared) choose_scales(exec, dst, src, true);
  }
  for_each_index<Dst::rank>(std::string("kacc::copy_converted[") + format_name<format_t<Src>>() +
                                "->" + format_name<format_t<Dst>>() + "]",
                            exec, dst, convert_entries<Dst, Src>{dst, src});
}

/// v's entries in a view that another memory space can mirror, as a LayoutStride view:
/// v itself where its entries fill its span, else a LayoutRight copy in v's own space (a
/// subview of a block of rows or columns: Kokkos mirrors only views that fill their span).
template <class V>
auto mirrorable(const V& v) {
  using M = typename V::memory_space;
  using Strided = Kokkos::View<typename V::data_type, Kokkos::LayoutStride, M>;
  if (v.span_is_contiguous()) return Strided(v);
  using C = Kokkos::View<typename V::non_const_data_type, Kokkos::LayoutRight, M>;
  const auto alloc = Kokkos::view_alloc(Kokkos::WithoutInitializing, v.label());
  C c;
  if constexpr (V::rank == 1) {
    c = C(alloc, v.extent(0));
  } else if constexpr (V::rank == 2) {
    c = C(alloc, v.extent(0), v.extent(1));
  } else {
    static_assert(V::rank == 3, "kacc::deep_copy: ranks 1 to 3");
    c = C(alloc, v.extent(0), v.extent(1), v.extent(2));
  }
  Kokkos::deep_copy(c, v);  // one memory space: Kokkos copies views that leave gaps
  return Strided(c);
}

template <class V>
auto storage_of(const V& v) {
  if constexpr (is_kacc_view_v<V>) {
    return v.storage();
  } else {
    return v;
  }
}

}  // namespace detail

/// Copies src into dst, converting each entry from src's format to dst's, in parallel in
/// exec. Either side may be a kacc view or a plain Kokkos View, in any layout; src may
/// live in another memory space (it is mirrored first). A scaled dst gets its scales from
/// the data. Extents must match (std::invalid_argument otherwise).
template <class Exec, class Dst, class Src>
void deep_copy(const Exec& exec, const Dst& dst, const Src& src) {
  static_assert(is_view_v<Dst> && is_view_v<Src>, "kacc::deep_copy copies views");
  static_assert(rank_v<Dst> == rank_v<Src>, "kacc::deep_copy: dst and src must have the same rank");
  for (unsigned r = 0; r < static_cast<unsigned>(Dst::rank); ++r) {
    if (dst.extent(r) != src.extent(r)) {
      throw std::invalid_argument("kacc::deep_copy: extents of dst " + detail::extents_string(dst) +
                                  " and src " + detail::extents_string(src) + " differ");
    }
  }
  if (dst.size() == 0) return;
  using DstStorage = decltype(detail::storage_of(dst));
  using SrcStorage = decltype(detail::storage_of(src));
  constexpr bool dst_scaled = format_traits<format_t<Dst>>::is_scaled;
  constexpr bool src_scaled = format_traits<format_t<Src>>::is_scaled;
  constexpr bool same_storage =
      std::is_same<typename DstStorage::non_const_value_type,
                   typename SrcStorage::non_const_value_type>::value &&
      std::is_same<typename DstStorage::array_layout, typename SrcStorage::array_layout>::value &&
      std::is_same<format_t<Dst>, format_t<Src>>::value;
  if constexpr (same_storage && !dst_scaled) {
    if (dst.span_is_contiguous() && src.span_is_contiguous()) {
      Kokkos::deep_copy(exec, detail::storage_of(dst), detail::storage_of(src));
      return;
    }
  }
  if constexpr (same_storage && dst_scaled && src_scaled) {
    if (Dst::scale_axis == Src::scale_axis && !dst.scale_state().shared &&
        dst.span_is_contiguous() && src.span_is_contiguous() &&
        dst.scales().extent(0) == src.scales().extent(0)) {
      Kokkos::deep_copy(exec, dst.storage(), src.storage());
      Kokkos::deep_copy(exec, dst.scales(), src.scales());
      return;
    }
  }
  using DstMemory = typename Dst::memory_space;
  static_assert(Kokkos::SpaceAccessibility<Exec, DstMemory>::accessible,
                "kacc::deep_copy: dst must be accessible from the execution space");
  if constexpr (!Kokkos::SpaceAccessibility<Exec, typename Src::memory_space>::accessible) {
    // Bring src over in its own format first: the conversion then runs where dst lives.
    if constexpr (is_kacc_view_v<Src>) {
      auto storage =
          Kokkos::create_mirror_view_and_copy(DstMemory(), detail::mirrorable(src.storage()));
      if constexpr (src_scaled) {
        using M = view_over_t<decltype(storage), arithmetic_t<Src>, format_t<Src>, overflow::ieee,
                              Src::scale_axis>;
        auto scales = Kokkos::create_mirror_view_and_copy(DstMemory(), src.scales());
        kacc::deep_copy(exec, dst, M(storage, typename M::scale_view_type(scales)));
      } else {
        kacc::deep_copy(exec, dst,
                        view_over_t<decltype(storage), arithmetic_t<Src>, format_t<Src>>(storage));
      }
    } else {
      kacc::deep_copy(exec, dst,
                      Kokkos::create_mirror_view_and_copy(DstMemory(), detail::mirrorable(src)));
    }
  } else {
    // A subview that shares its scales with entries outside it keeps them: new scales
    // picked from its own data would silently change those other entries.
    if constexpr (dst_scaled) {
      if (!dst.scale_state().shared) detail::choose_scales(exec, dst, src, false);
    }
    detail::for_each_index<Dst::rank>(std::string("kacc::deep_copy[") +
                                          format_name<format_t<Src>>() + "->" +
                                          format_name<format_t<Dst>>() + "]",
                                      exec, dst, detail::convert_entries<Dst, Src>{dst, src});
    Impl::throw_if_saturated("kacc::deep_copy", "dst", exec, dst);
  }
}

/// deep_copy in dst's default execution space instance, fenced.
template <class Dst, class Src>
void deep_copy(const Dst& dst, const Src& src) {
  using Exec = typename Dst::execution_space;
  // Qualified: for two plain Kokkos Views, argument-dependent lookup would pick
  // Kokkos::deep_copy, which refuses a conversion between memory spaces.
  kacc::deep_copy(Exec(), dst, src);
  Exec().fence();
}

}  // namespace kacc
