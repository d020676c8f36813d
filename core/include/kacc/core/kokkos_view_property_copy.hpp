#pragma once
/// @file
/// `Kokkos::deep_copy`, `Kokkos::create_mirror`, `Kokkos::create_mirror_view` and
/// `Kokkos::create_mirror_view_and_copy` for Kokkos Views whose memory-traits slot holds
/// kacc::StoredAs (kacc/core/kokkos_view_property.hpp). Kokkos' own versions rebuild the
/// View type without the memory traits (host mirrors, uniform types) and copy contiguous
/// Views of equal value type bytewise, which would copy doubles into fp16 entries. These
/// overloads, declared in namespace Kokkos so that the qualified calls users write find
/// them, take a `View<T*, ...>` and so are more specialized than Kokkos' `View<T, ...>`
/// ones; they are enabled only when one of the Views has StoredAs. Mirrors keep the
/// format; deep_copy copies bytes between Views of one format and one layout, and
/// otherwise converts entry by entry in the destination's execution space (rounding once
/// to the destination's format). Ranks 1 and 2 only. Included by
/// kokkos_view_property.hpp; on Kokkos without the View hooks it declares nothing.

#include <kacc/core/kokkos_view_property.hpp>
#include <kacc/core/view_algorithms.hpp>

#if defined(KACC_HAS_KOKKOS_VIEW_PROPERTY)

#include <stdexcept>
#include <string>

namespace kacc::detail {

/// The format a Kokkos View stores: StoredAs' format, or the value type of a plain View.
template <class V, bool = kacc::is_stored_as_kokkos_view_v<V>>
struct kokkos_view_format {
  using type = typename V::traits::memory_traits::format;
};
template <class V>
struct kokkos_view_format<V, false> {
  using type = typename V::non_const_value_type;
};
template <class V>
using kokkos_view_format_t = typename kokkos_view_format<V>::type;

/// The View a mirror of V in MemorySpace has: V's data type made non-const, V's layout
/// and format, executed by the space's default execution space.
template <class V, class MemorySpace>
using stored_as_mirror_t = Kokkos::View<
    typename V::non_const_data_type, typename V::array_layout,
    Kokkos::Device<std::conditional_t<std::is_same<MemorySpace, Kokkos::HostSpace>::value,
                                      Kokkos::DefaultHostExecutionSpace,
                                      typename MemorySpace::execution_space>,
                   MemorySpace>,
    typename V::traits::memory_traits>;

template <class Dst, class Src>
void check_deep_copy_extents(const Dst& dst, const Src& src) {
  for (unsigned r = 0; r < Dst::rank(); ++r) {
    if (dst.extent(r) != src.extent(r)) {
      throw std::invalid_argument("Kokkos::deep_copy (kacc StoredAs View): extent " +
                                  std::to_string(r) + " of dst '" + dst.label() + "' is " +
                                  std::to_string(dst.extent(r)) + ", of src '" + src.label() +
                                  "' " + std::to_string(src.extent(r)));
    }
  }
}

/// Whether dst and src have one format, one layout and contiguous spans with equal
/// strides, so that their storage can be copied bytewise.
template <class Dst, class Src>
bool same_bytes(const Dst& dst, const Src& src) {
  if (!std::is_same<kokkos_view_format_t<Dst>, kokkos_view_format_t<Src>>::value) return false;
  if (!dst.span_is_contiguous() || !src.span_is_contiguous() || dst.span() != src.span()) {
    return false;
  }
  for (unsigned r = 0; r < Dst::rank(); ++r) {
    if (dst.stride(r) != src.stride(r)) return false;
  }
  return true;
}

/// The storage of a contiguous View as an unmanaged rank-1 View of its entries' bits.
template <class V>
auto entries_of(const V& v) {
  using Entry = std::remove_pointer_t<decltype(v.data())>;
  return Kokkos::View<Entry*, Kokkos::LayoutRight, typename V::memory_space,
                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.span());
}

/// dst(i...) = value, rounded once to dst's format (a functor: see convert_entries).
template <class Dst>
struct fill_entries {
  Dst dst;
  typename Dst::non_const_value_type value;
  KOKKOS_INLINE_FUNCTION void operator()(index_type i) const { dst(i) = value; }
  KOKKOS_INLINE_FUNCTION void operator()(index_type i, index_type j) const { dst(i, j) = value; }
};

/// The deep_copy of two Views of which at least one has StoredAs, in Exec.
template <class Exec, class Dst, class Src>
void stored_as_deep_copy(const Exec& exec, const Dst& dst, const Src& src) {
  static_assert(Dst::rank() == Src::rank(), "kacc: Kokkos::deep_copy requires Views of equal rank");
  static_assert(Dst::rank() == 1 || Dst::rank() == 2,
                "kacc: Kokkos::deep_copy of a View with kacc::StoredAs supports ranks 1 and 2");
  static_assert(!std::is_const<typename Dst::value_type>::value,
                "Kokkos::deep_copy requires a non-const destination");
  constexpr bool same_format =
      std::is_same<kokkos_view_format_t<Dst>, kokkos_view_format_t<Src>>::value;
  constexpr bool accessible =
      Kokkos::SpaceAccessibility<Exec, typename Src::memory_space>::accessible &&
      Kokkos::SpaceAccessibility<Exec, typename Dst::memory_space>::accessible;
  static_assert(same_format || accessible,
                "kacc: Kokkos::deep_copy converting between formats needs the destination's "
                "execution space to reach the source: first copy to a mirror of the source's "
                "format in the destination's memory space (Kokkos::create_mirror_view_and_copy)");
  check_deep_copy_extents(dst, src);
  if (dst.size() == 0) return;
  if (same_bytes(dst, src)) {
    if (static_cast<const void*>(dst.data()) != static_cast<const void*>(src.data())) {
      Kokkos::deep_copy(exec, entries_of(dst), entries_of(src));
    }
    return;
  }
  if constexpr (accessible) {
    copy_converted(exec, dst, src);
  } else {
    throw std::invalid_argument("Kokkos::deep_copy (kacc StoredAs View): dst '" + dst.label() +
                                "' and src '" + src.label() +
                                "' are in different memory spaces and not both contiguous "
                                "with one layout");
  }
}

template <class... V>
inline constexpr bool any_stored_as_v = (kacc::is_stored_as_kokkos_view_v<V> || ...);

template <class T>
inline constexpr bool always_false = false;

/// A new mirror of src in the memory space of Space (void: src's host mirror space).
template <class Space, class V>
auto stored_as_mirror(const V& src, bool without_initializing) {
  using MemorySpace = typename std::conditional_t<std::is_void<Space>::value,
                                                  typename V::HostMirror, Space>::memory_space;
  using Mirror = stored_as_mirror_t<V, MemorySpace>;
  const std::string label = std::string(src.label()).append("_mirror");
  if (without_initializing) {
    return Mirror(Kokkos::view_alloc(label, Kokkos::WithoutInitializing), src.layout());
  }
  return Mirror(Kokkos::view_alloc(label), src.layout());
}

/// src itself (as a View of the mirror type) when it lives in the memory space of Space
/// (void: src's host mirror space) and is writable, else stored_as_mirror.
template <class Space, class V>
auto stored_as_mirror_view(const V& src, bool without_initializing) {
  using MemorySpace = typename std::conditional_t<std::is_void<Space>::value,
                                                  typename V::HostMirror, Space>::memory_space;
  using Mirror = stored_as_mirror_t<V, MemorySpace>;
  // A View of const values gets a new, writable mirror, as Kokkos' create_mirror_view.
  if constexpr (std::is_same<MemorySpace, typename V::memory_space>::value &&
                std::is_same<typename V::data_type, typename V::non_const_data_type>::value) {
    return Mirror(src);
  } else {
    return stored_as_mirror<Space>(src, without_initializing);
  }
}

}  // namespace kacc::detail

#define KACC_STORED_AS_VIEW_ALLOC_MESSAGE                                                       \
  "kacc: Kokkos::create_mirror, create_mirror_view and create_mirror_view_and_copy of a "       \
  "View with kacc::StoredAs take a space and Kokkos::WithoutInitializing, not view_alloc(...) " \
  "properties"

namespace Kokkos {

/// deep_copy between Views of which one has kacc::StoredAs: bytewise within a format,
/// converting otherwise; fences before and after, as Kokkos' deep_copy.
template <
    class DT, class... DP, class ST, class... SP,
    std::enable_if_t<kacc::detail::any_stored_as_v<View<DT*, DP...>, View<ST, SP...>>, int> = 0>
void deep_copy(const View<DT*, DP...>& dst, const View<ST, SP...>& src) {
  Kokkos::fence("Kokkos::deep_copy (kacc StoredAs View): before");
  using Exec = typename View<DT*, DP...>::execution_space;
  kacc::detail::stored_as_deep_copy(Exec(), dst, src);
  Kokkos::fence("Kokkos::deep_copy (kacc StoredAs View): after");
}

/// deep_copy between Views of which one has kacc::StoredAs, in the instance exec (no
/// fence: the copy is ordered in exec).
template <class ExecSpace, class DT, class... DP, class ST, class... SP,
          std::enable_if_t<Kokkos::is_execution_space<ExecSpace>::value &&
                               kacc::detail::any_stored_as_v<View<DT*, DP...>, View<ST, SP...>>,
                           int> = 0>
void deep_copy(const ExecSpace& exec, const View<DT*, DP...>& dst, const View<ST, SP...>& src) {
  kacc::detail::stored_as_deep_copy(exec, dst, src);
}

/// Sets every entry of a View with kacc::StoredAs to value, rounded once to its format.
template <class DT, class... DP,
          std::enable_if_t<kacc::is_stored_as_kokkos_view_v<View<DT*, DP...>>, int> = 0>
void deep_copy(const View<DT*, DP...>& dst,
               typename ViewTraits<DT*, DP...>::const_value_type& value) {
  using V = View<DT*, DP...>;
  static_assert(V::rank() == 1 || V::rank() == 2,
                "kacc: Kokkos::deep_copy of a View with kacc::StoredAs supports ranks 1 and 2");
  Kokkos::fence("Kokkos::deep_copy (kacc StoredAs View, value): before");
  kacc::detail::for_each_index<V::rank()>("kacc::deep_copy(StoredAs, value)",
                                          typename V::execution_space(), dst,
                                          kacc::detail::fill_entries<V>{dst, value});
  Kokkos::fence("Kokkos::deep_copy (kacc StoredAs View, value): after");
}

// Mirrors. Each overload below takes the place of Kokkos' overload of the same arguments
// for a View with StoredAs; the mirror has src's data type (non-const), layout and format.

/// A new View like src in the memory space of Space (the host's if Space is not given),
/// labelled src.label() + "_mirror", entries zero.
template <class T, class... P,
          std::enable_if_t<kacc::is_stored_as_kokkos_view_v<View<T*, P...>>, int> = 0>
auto create_mirror(const View<T*, P...>& src) {
  return kacc::detail::stored_as_mirror<void>(src, false);
}

/// create_mirror with the entries left uninitialised.
template <class T, class... P,
          std::enable_if_t<kacc::is_stored_as_kokkos_view_v<View<T*, P...>>, int> = 0>
auto create_mirror(Impl::WithoutInitializing_t, const View<T*, P...>& src) {
  return kacc::detail::stored_as_mirror<void>(src, true);
}

/// create_mirror in the memory space of Space.
template <class Space, class T, class... P,
          std::enable_if_t<Kokkos::is_space<Space>::value &&
                               kacc::is_stored_as_kokkos_view_v<View<T*, P...>>,
                           int> = 0>
auto create_mirror(const Space&, const View<T*, P...>& src) {
  return kacc::detail::stored_as_mirror<Space>(src, false);
}

/// create_mirror in the memory space of Space, entries left uninitialised.
template <class Space, class T, class... P,
          std::enable_if_t<Kokkos::is_space<Space>::value &&
                               kacc::is_stored_as_kokkos_view_v<View<T*, P...>>,
                           int> = 0>
auto create_mirror(Impl::WithoutInitializing_t, const Space&, const View<T*, P...>& src) {
  return kacc::detail::stored_as_mirror<Space>(src, true);
}

/// src itself when it lives in host memory, else create_mirror(src).
template <class T, class... P,
          std::enable_if_t<kacc::is_stored_as_kokkos_view_v<View<T*, P...>>, int> = 0>
auto create_mirror_view(const View<T*, P...>& src) {
  return kacc::detail::stored_as_mirror_view<void>(src, false);
}

/// src itself when it lives in host memory, else create_mirror(WithoutInitializing, src).
template <class T, class... P,
          std::enable_if_t<kacc::is_stored_as_kokkos_view_v<View<T*, P...>>, int> = 0>
auto create_mirror_view(Impl::WithoutInitializing_t, const View<T*, P...>& src) {
  return kacc::detail::stored_as_mirror_view<void>(src, true);
}

/// src itself when it lives in Space's memory space, else create_mirror(space, src).
template <class Space, class T, class... P,
          std::enable_if_t<Kokkos::is_space<Space>::value &&
                               kacc::is_stored_as_kokkos_view_v<View<T*, P...>>,
                           int> = 0>
auto create_mirror_view(const Space&, const View<T*, P...>& src) {
  return kacc::detail::stored_as_mirror_view<Space>(src, false);
}

/// src itself when it lives in Space's memory space, else an uninitialised mirror there.
template <class Space, class T, class... P,
          std::enable_if_t<Kokkos::is_space<Space>::value &&
                               kacc::is_stored_as_kokkos_view_v<View<T*, P...>>,
                           int> = 0>
auto create_mirror_view(Impl::WithoutInitializing_t, const Space&, const View<T*, P...>& src) {
  return kacc::detail::stored_as_mirror_view<Space>(src, true);
}

/// src itself when it lives in Space's memory space (after a fence), else a new View of
/// its format there, labelled name (src's label if empty), holding a copy of its entries.
template <class Space, class T, class... P,
          std::enable_if_t<Kokkos::is_space<Space>::value &&
                               kacc::is_stored_as_kokkos_view_v<View<T*, P...>>,
                           int> = 0>
auto create_mirror_view_and_copy(const Space&, const View<T*, P...>& src,
                                 const std::string& name = "") {
  using MemorySpace = typename Space::memory_space;
  if constexpr (std::is_same<MemorySpace, typename View<T*, P...>::memory_space>::value) {
    Kokkos::fence("Kokkos::create_mirror_view_and_copy (kacc StoredAs View): same space");
    return src;
  } else {
    using Mirror = kacc::detail::stored_as_mirror_t<View<T*, P...>, MemorySpace>;
    Mirror mirror(view_alloc(name.empty() ? std::string(src.label()) : name, WithoutInitializing),
                  src.layout());
    Kokkos::deep_copy(mirror, src);
    return mirror;
  }
}

/// Refused: view_alloc properties (an execution space instance, a label) are not carried
/// to a StoredAs mirror; a space and WithoutInitializing are.
template <class... Args, class T, class... P,
          std::enable_if_t<kacc::is_stored_as_kokkos_view_v<View<T*, P...>>, int> = 0>
void create_mirror(const Impl::ViewCtorProp<Args...>&, const View<T*, P...>&) {
  static_assert(kacc::detail::always_false<T>, KACC_STORED_AS_VIEW_ALLOC_MESSAGE);
}

/// Refused, as create_mirror with view_alloc properties.
template <class... Args, class T, class... P,
          std::enable_if_t<kacc::is_stored_as_kokkos_view_v<View<T*, P...>>, int> = 0>
void create_mirror_view(const Impl::ViewCtorProp<Args...>&, const View<T*, P...>&) {
  static_assert(kacc::detail::always_false<T>, KACC_STORED_AS_VIEW_ALLOC_MESSAGE);
}

/// Refused, as create_mirror with view_alloc properties.
template <class... Args, class T, class... P,
          std::enable_if_t<kacc::is_stored_as_kokkos_view_v<View<T*, P...>>, int> = 0>
void create_mirror_view_and_copy(const Impl::ViewCtorProp<Args...>&, const View<T*, P...>&) {
  static_assert(kacc::detail::always_false<T>, KACC_STORED_AS_VIEW_ALLOC_MESSAGE);
}

}  // namespace Kokkos

#endif
