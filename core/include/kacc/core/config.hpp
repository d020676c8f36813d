#pragma once
/// @file
/// The one place where kacc adapts to the Kokkos version and the compiler: math
/// functions, bit casts, and the host/device split. Everything else includes this.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

#define KACC_KOKKOS_VERSION_AT_LEAST(major, minor) (KOKKOS_VERSION >= ((major)*10000 + (minor)*100))

// Kokkos' mdspan-based View with the customization hooks that let a View property choose
// the accessor (customize_view_arguments; develop 4.6.99 from June 2025 on, Kokkos 5):
// there `Kokkos::View<double*, kacc::StoredAs<F>>` is a Kokkos View handing out kacc
// proxies (kacc/core/kokkos_view_property.hpp).
#if KOKKOS_VERSION >= 40699 && defined(KOKKOS_ENABLE_IMPL_MDSPAN) && \
    !defined(KOKKOS_ENABLE_IMPL_VIEW_LEGACY)
#define KACC_HAS_KOKKOS_VIEW_PROPERTY 1
#endif

// The CUDA device compilation pass, where the formats use CUDA's conversion intrinsics.
#if defined(__CUDA_ARCH__)
#define KACC_DEVICE_CUDA 1
#endif
// Any device compilation pass: host-only paths (x86 intrinsics, std:: math) stay out of it.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
#define KACC_DEVICE_PASS 1
#endif

// KACC_UNLIKELY(condition): the condition (commas allowed, as in template arguments), marked as
// false on most data, so that the compiler lays out and allocates registers for the other path (a
// hot loop's values then stay in registers across a rare branch that calls out).
#if defined(__GNUC__) || defined(__clang__)
#define KACC_UNLIKELY(...) __builtin_expect(!!(__VA_ARGS__), 0)
#else
#define KACC_UNLIKELY(...) (__VA_ARGS__)
#endif

// 512-bit vectors, under GCC with AVX-512, for the host functions that mark themselves with
// it: GCC's tuning for recent Intel cores prefers 256-bit vectors, so the loops it vectorises
// around kacc's AVX-512 block loads split each register of 8 widened doubles in halves
// (vextractf64x4) before using them. The attribute changes those functions only, not the
// rest of the program that includes kacc (its kernels are templates, compiled with the
// application's flags). A function with it is not inlined into its caller, so it marks
// functions that each do a block of work, never per-entry helpers; each says what it gained.
// GCC 8 brought the option; compilers that define __GNUC__ without being GCC are left out.
#if defined(__GNUC__) && __GNUC__ >= 8 && !defined(__clang__) && !defined(__INTEL_COMPILER) && \
    !defined(__NVCOMPILER) && !defined(__CUDACC__) && !defined(__HIPCC__) && defined(__AVX512F__)
#define KACC_HOST_WIDE_VECTORS __attribute__((target("prefer-vector-width=512")))
#else
#define KACC_HOST_WIDE_VECTORS
#endif

// Lets an empty scale member of a proxy take no room; compilers without it just pad.
#if defined(__has_cpp_attribute)
#if __has_cpp_attribute(no_unique_address) && !defined(__CUDACC__) && !defined(_MSC_VER)
#define KACC_NO_UNIQUE_ADDRESS [[no_unique_address]]
#endif
#endif
#ifndef KACC_NO_UNIQUE_ADDRESS
#define KACC_NO_UNIQUE_ADDRESS
#endif

namespace kacc {
namespace math {

#if KACC_KOKKOS_VERSION_AT_LEAST(4, 0)
using Kokkos::fabs;
using Kokkos::isfinite;
using Kokkos::isinf;
using Kokkos::isnan;
using Kokkos::nearbyint;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::isinf;
using Kokkos::Experimental::isnan;
using Kokkos::Experimental::nearbyint;
using Kokkos::Experimental::sqrt;
#endif

}  // namespace math

/// *address = value, a relaxed atomic store, on host and device (Kokkos 3 has it only in
/// Kokkos::Impl).
KOKKOS_INLINE_FUNCTION void atomic_store_relaxed(int* address, int value) {
#if KACC_KOKKOS_VERSION_AT_LEAST(4, 0)
  Kokkos::atomic_store(address, value);
#else
  Kokkos::Impl::atomic_store(address, value, Kokkos::Impl::memory_order_relaxed);
#endif
}

/// Reinterprets the bits of a trivially copyable value; usable in kernels.
template <class To, class From>
KOKKOS_INLINE_FUNCTION To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs types of equal size");
  static_assert(std::is_trivially_copyable<To>::value && std::is_trivially_copyable<From>::value,
                "bit_cast needs trivially copyable types");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

}  // namespace kacc
