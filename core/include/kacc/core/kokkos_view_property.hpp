#pragma once
/// @file
/// `Kokkos::View<double*, kacc::StoredAs<kacc::fp16>>` as a real Kokkos::View: on a Kokkos
/// whose View is built on mdspan and has the customization hooks (KACC_HAS_KOKKOS_VIEW_PROPERTY,
/// see config.hpp), StoredAs takes the View's memory-traits slot and
/// kacc::customize_view_arguments, found by Kokkos through argument-dependent lookup,
/// gives the View an accessor whose storage is the format and whose reference is a kacc
/// proxy computing in the View's value type. Kokkos then allocates, labels and
/// reference-counts it as any View; `Kokkos::subview` keeps the format through the
/// specializations of Kokkos::Impl::RemoveAlignedMemoryTrait at the end of this file.
/// Unscaled formats only (the accessor has no room for scales, as kacc::mdspan_accessor).
/// On other Kokkos versions this header declares nothing.

#include <kacc/core/reference.hpp>
#include <kacc/core/traits.hpp>

#include <cstddef>
#include <type_traits>

#if defined(KACC_HAS_KOKKOS_VIEW_PROPERTY)

namespace kacc {

/// The accessor of `Kokkos::View<T*, StoredAs<Format, OverflowPolicy>>`: Kokkos'
/// reference-counted handle on the stored entries, kacc proxies as references.
template <class Element, class Format, class OverflowPolicy, class MemorySpace>
struct kokkos_view_accessor {
  static_assert(!format_traits<Format>::is_scaled,
                "a Kokkos::View accessor has no room for scales; use kacc::View");
  static_assert(std::is_arithmetic<std::remove_const_t<Element>>::value,
                "StoredAs on a Kokkos::View needs an arithmetic value type, e.g. double");

  /// What one entry is in memory (const for a View of const values).
  using storage_type = std::conditional_t<std::is_const<Element>::value,
                                          const typename format_traits<Format>::storage_type,
                                          typename format_traits<Format>::storage_type>;
  using element_type = Element;
  using reference = kacc::reference<Element, Format, OverflowPolicy>;
  using data_handle_type = Kokkos::Impl::ReferenceCountedDataHandle<storage_type, MemorySpace>;
  using offset_policy = kokkos_view_accessor;
  /// Kokkos' View reads the memory space from its accessor.
  using memory_space = MemorySpace;

  KOKKOS_DEFAULTED_FUNCTION constexpr kokkos_view_accessor() = default;
  /// Non-const to const, as Kokkos converts `View<double*>` to `View<const double*>`.
  template <class Other,
            std::enable_if_t<std::is_convertible<Other (*)[], Element (*)[]>::value, int> = 0>
  KOKKOS_FUNCTION constexpr kokkos_view_accessor(
      const kokkos_view_accessor<Other, Format, OverflowPolicy, MemorySpace>&) noexcept {}

  KOKKOS_FUNCTION constexpr reference access(const data_handle_type& p, std::size_t i) const {
    return reference(p.get() + i, {});
  }
  KOKKOS_FUNCTION constexpr data_handle_type offset(const data_handle_type& p,
                                                    std::size_t i) const {
    return data_handle_type(p, p.get() + i);
  }
};

/// Kokkos' hook: a View whose memory-traits slot holds StoredAs<Format, OverflowPolicy>
/// gets kokkos_view_accessor (size_t indices, as Kokkos' own Views).
template <class T, class Layout, class Device, class Format, class OverflowPolicy>
constexpr auto customize_view_arguments(
    Kokkos::Impl::ViewArguments<T, Layout, Device, StoredAs<Format, OverflowPolicy>>) {
  return Kokkos::Impl::ViewCustomArguments<
      std::size_t,
      kokkos_view_accessor<T, Format, OverflowPolicy, typename Device::memory_space>>{};
}

/// Kokkos' hook for the number of storage entries to allocate and copy: the mapping's
/// span (the unqualified call in Kokkos_CopyViews.hpp finds only overloads by ADL).
template <class Mapping, class Element, class Format, class OverflowPolicy, class MemorySpace>
KOKKOS_FUNCTION constexpr std::size_t allocation_size_from_mapping_and_accessor(
    const Mapping& mapping,
    const kokkos_view_accessor<Element, Format, OverflowPolicy, MemorySpace>&) {
  return mapping.required_span_size();
}

namespace detail {
/// The ViewTraits of a subview of a View whose memory-traits slot holds StoredAs: the
/// source's own traits. Kokkos removes the Aligned trait (which StoredAs never has) by
/// rewriting the slot as a fresh Kokkos::MemoryTraits, which would drop the format.
template <class D, class... P>
struct subview_traits {
  static_assert(is_stored_as<typename Kokkos::ViewTraits<D, P...>::memory_traits>::value,
                "only Views with a kacc::StoredAs property");
  using type = Kokkos::ViewTraits<D, P...>;
};
}  // namespace detail

}  // namespace kacc

// Kokkos::subview computes its result type from Impl::RemoveAlignedMemoryTrait, which has
// no customization point; these specializations (StoredAs last, as Kokkos requires of
// memory traits, after at most a layout, a space and a hooks policy) keep the format.
namespace Kokkos::Impl {
template <class D, class F, class O>
struct RemoveAlignedMemoryTrait<D, kacc::StoredAs<F, O>>
    : kacc::detail::subview_traits<D, kacc::StoredAs<F, O>> {};
template <class D, class A, class F, class O>
struct RemoveAlignedMemoryTrait<D, A, kacc::StoredAs<F, O>>
    : kacc::detail::subview_traits<D, A, kacc::StoredAs<F, O>> {};
template <class D, class A, class B, class F, class O>
struct RemoveAlignedMemoryTrait<D, A, B, kacc::StoredAs<F, O>>
    : kacc::detail::subview_traits<D, A, B, kacc::StoredAs<F, O>> {};
template <class D, class A, class B, class C, class F, class O>
struct RemoveAlignedMemoryTrait<D, A, B, C, kacc::StoredAs<F, O>>
    : kacc::detail::subview_traits<D, A, B, C, kacc::StoredAs<F, O>> {};
}  // namespace Kokkos::Impl

#endif

// deep_copy and mirrors that keep the format.
#include <kacc/core/kokkos_view_property_copy.hpp>
