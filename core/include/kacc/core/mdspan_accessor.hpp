#pragma once
/// @file
/// kacc::mdspan_accessor: the same conversion as kacc::View, as an mdspan accessor
/// policy. On Kokkos 4.4 and newer, `float_view.to_mdspan(kacc::mdspan_accessor<double,
/// float>{})` gives an mdspan whose `m(i, j)` is a proxy computing in double. The policy
/// has no state, so scaled formats (which need their scales) are not offered here.

#include <kacc/core/reference.hpp>

#include <cstddef>

namespace kacc {

template <class Arithmetic, class Format, class OverflowPolicy = overflow::ieee>
struct mdspan_accessor {
  static_assert(!format_traits<Format>::is_scaled,
                "mdspan_accessor has no room for scales; use kacc::View");
  using element_type = typename format_traits<Format>::storage_type;
  using data_handle_type = element_type*;
  using reference = kacc::reference<Arithmetic, Format, OverflowPolicy>;
  using offset_policy = mdspan_accessor;

  KOKKOS_INLINE_FUNCTION constexpr reference access(data_handle_type p, std::size_t i) const {
    return reference(p + i, {});
  }
  KOKKOS_INLINE_FUNCTION constexpr data_handle_type offset(data_handle_type p,
                                                           std::size_t i) const {
    return p + i;
  }
};

}  // namespace kacc
