#pragma once
/// @file
/// What the kacc BLAS entry points share: type selection (arithmetic and accumulation
/// type), kernel labels and argument checks. The kernels themselves are in impl/.

#include <kacc/core/block_load.hpp>
#include <kacc/core/view_algorithms.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kacc {
namespace blas {
namespace detail {

/// Arith if named, else the common arithmetic type of the views.
template <class Arith, class... V>
using arith_t = std::conditional_t<std::is_void<Arith>::value, common_arithmetic_t<V...>, Arith>;
/// Acc if named, else the arithmetic type.
template <class Acc, class Arith>
using acc_t = std::conditional_t<std::is_void<Acc>::value, Arith, Acc>;

using kacc::Impl::arith_suffix;
using kacc::Impl::extents_of;
using kacc::Impl::format_of;
using kacc::Impl::layout_of;

/// kacc::Impl::fail for "kacc::blas::<function>".
[[noreturn]] inline void fail(const std::string& function, const std::string& message) {
  kacc::Impl::fail("kacc::blas::" + function, message);
}

/// kacc::Impl::mode_char for "kacc::blas::<function>".
inline char mode_char(const std::string& function, const char* argument, const char* mode,
                      const char* allowed) {
  return kacc::Impl::mode_char("kacc::blas::" + function, argument, mode, allowed);
}

/// kacc::Impl::check_no_alias for "kacc::blas::<function>".
template <class Out, class In>
void check_no_alias(const std::string& function, const char* out_name, const Out& out,
                    const char* in_name, const In& in) {
  kacc::Impl::check_no_alias("kacc::blas::" + function, out_name, out, in_name, in);
}

/// Matrix entry (i, k) of op(A): A(i, k), or A(k, i) when Trans.
template <class AV, bool Trans>
struct oriented {
  AV a;
  /// Whether block loads of A use SIMD conversions on this host.
  static constexpr bool vectorised_loads = kacc::Impl::block_load_vectorised_v<AV>;
  /// Whether runs of A along either dimension load with SIMD conversions on this host:
  /// vectorised_loads, or a scaled A, whose runs go through the SIMD scaled decoders.
  static constexpr bool vectorised_runs =
      vectorised_loads || kacc::Impl::scaled_matrix_loads_vectorised<AV>::value;
  /// Whether a run of entries along k is scaled by one scale (a scaled A whose scales run
  /// along i).
  static constexpr bool one_scale_along_k = [] {
    if constexpr (kacc::is_kacc_view_v<AV>) {
      return AV::is_scaled && AV::scale_axis != (Trans ? 0 : 1);
    } else {
      return false;
    }
  }();
  template <class I, class K>
  KOKKOS_FORCEINLINE_FUNCTION decltype(auto) operator()(const I& i, const K& k) const {
    if constexpr (Trans) {
      return a(k, i);
    } else {
      return a(i, k);
    }
  }
  /// out[l] = (i, k + l) as T for l in [0, W), with block loads (SIMD where they have it).
  template <int W, kacc::Impl::subnormal_check Check = kacc::Impl::subnormal_check::per_block,
            class T>
  KOKKOS_FORCEINLINE_FUNCTION void load_along_k(const index_type i, const index_type k,
                                                T* out) const {
    if constexpr (Trans) {
      kacc::Impl::load_block<W, Check>(a, k, i, 0, out);
    } else {
      kacc::Impl::load_block<W, Check>(a, i, k, 1, out);
    }
  }
  /// out[l] = (i + l, k) as T for l in [0, W), with block loads (SIMD where they have it).
  template <int W, kacc::Impl::subnormal_check Check = kacc::Impl::subnormal_check::per_block,
            class T>
  KOKKOS_FORCEINLINE_FUNCTION void load_along_i(const index_type i, const index_type k,
                                                T* out) const {
    if constexpr (Trans) {
      kacc::Impl::load_block<W, Check>(a, k, i, 1, out);
    } else {
      kacc::Impl::load_block<W, Check>(a, i, k, 0, out);
    }
  }
  /// Whether consecutive k are closer in memory than consecutive i.
  bool k_contiguous() const {
    return Trans ? a.stride(0) <= a.stride(1) : a.stride(1) <= a.stride(0);
  }
};

}  // namespace detail
}  // namespace blas
}  // namespace kacc
