#pragma once
/// @file
/// Block loads: a kernel's inner host loop asks for W consecutive entries of a view as
/// arithmetic values, and the storage format answers with SIMD conversions where the
/// compiling target has them and with the scalar conversion elsewhere, so the kernel
/// keeps one source. Picked at compile time from the target's features:
///   - fp16: `__F16C__` (vcvtph2ps, 8 values per instruction);
///   - bf16: `__AVX2__` (zero-extend and shift left by 16: exact, and what AVX512-BF16's
///     own widening does, so that extension adds nothing for loads);
///   - with `__AVX512F__` the floats widen to double 8 at a time in one instruction;
///   - every other format, device code and targets without these: the scalar path.
/// Results are bit-identical to the scalar path (`convert<T>(v(i))`), NaNs included:
/// fp16 signalling NaNs come out quiet with their payload in both paths (as from F16C),
/// bf16 keeps every bit when widened to float, and float to double quiets a signalling
/// NaN in both paths (x86 hardware conversions).

#include <kacc/core/kernel_support.hpp>

#if !defined(KACC_DEVICE_PASS) && (defined(__AVX512F__) || defined(__F16C__) || defined(__AVX2__))
#include <immintrin.h>
#endif

namespace kacc {
namespace Impl {

#if !defined(KACC_DEVICE_PASS) && defined(__F16C__) && defined(__AVX__)
#define KACC_BLOCK_LOAD_FP16 1
#endif
#if !defined(KACC_DEVICE_PASS) && defined(__AVX2__)
#define KACC_BLOCK_LOAD_BF16 1
#endif

/// The scalar path for one entry: read as the view reads it (in A), then converted to T.
template <class A, class T, class Format>
KOKKOS_FORCEINLINE_FUNCTION T decode_entry(const typename format_traits<Format>::storage_type& e) {
  return convert<T>(kacc::detail::load<A, Format>(e, kacc::detail::no_scale{}));
}

/// Widens W stored entries of Format at `entries` (consecutive in memory) to T, as a view
/// reading them in A would and then convert<T>. This primary template is the scalar
/// path; formats with SIMD conversions specialise it.
template <class Format, class = void>
struct block_codec {
  /// Whether this format's block loads use SIMD conversions on this target.
  static constexpr bool vectorised = false;
  /// out[l] = entries[l] as T, for l in [0, W).
  template <int W, class A, class T>
  KOKKOS_FORCEINLINE_FUNCTION static void decode(
      const typename format_traits<Format>::storage_type* entries, T* out) {
    for (int l = 0; l < W; ++l) out[l] = decode_entry<A, T, Format>(entries[l]);
  }
};

#if defined(KACC_BLOCK_LOAD_FP16) || defined(KACC_BLOCK_LOAD_BF16)
namespace detail {

/// Stores 8 floats as T: widening float to double is exact, as is float to the
/// arithmetic type the scalar path passes through.
template <class T>
inline void store_floats(const __m256 f, T* out) {
  if constexpr (std::is_same<T, float>::value) {
    _mm256_storeu_ps(out, f);
  } else if constexpr (std::is_same<T, double>::value) {
#if defined(__AVX512F__)
    // The zero-masking form: GCC 12 warns (-Wmaybe-uninitialized) inside the unmasked
    // one's _mm512_undefined_pd operand.
    _mm512_storeu_pd(out, _mm512_maskz_cvtps_pd(0xff, f));
#else
    _mm256_storeu_pd(out, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(out + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
#endif
  } else {
    alignas(32) float narrow[8];
    _mm256_store_ps(narrow, f);
    for (int l = 0; l < 8; ++l) out[l] = static_cast<T>(narrow[l]);
  }
}

/// SIMD block widening of a 2-byte format whose values are all floats: Wide::widen turns
/// 8 stored entries into floats; a remainder shorter than 8 is scalar.
template <class Format, class Wide>
struct simd_block_codec {
  /// This format's block loads use SIMD conversions on this target.
  static constexpr bool vectorised = true;
  /// out[l] = entries[l] as T, for l in [0, W).
  template <int W, class A, class T>
  static void decode(const Format* entries, T* out) {
    int l = 0;
    // Read in a wider A and narrowed to T, a signalling NaN comes out quiet on the scalar
    // path (the hardware narrowing quiets it) but not from the widened floats: scalar there.
    if constexpr (sizeof(A) <= sizeof(T)) {
      const auto* bits = reinterpret_cast<const std::uint16_t*>(entries);
      for (; l + 8 <= W; l += 8) store_floats(Wide::widen(bits + l), out + l);
    }
    for (; l < W; ++l) out[l] = decode_entry<A, T, Format>(entries[l]);
  }
};

#if defined(KACC_BLOCK_LOAD_FP16)
/// fp16 to float: F16C's vcvtph2ps.
struct widen_fp16 {
  static __m256 widen(const std::uint16_t* bits) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bits)));
  }
};
#endif
#if defined(KACC_BLOCK_LOAD_BF16)
/// bf16 to float: zero-extend to 32 bits and shift into the high half.
struct widen_bf16 {
  static __m256 widen(const std::uint16_t* bits) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bits)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
};
#endif

}  // namespace detail

#if defined(KACC_BLOCK_LOAD_FP16)
/// fp16 with F16C: 8 values per conversion instruction.
template <>
struct block_codec<fp16> : detail::simd_block_codec<fp16, detail::widen_fp16> {};
#endif
#if defined(KACC_BLOCK_LOAD_BF16)
/// bf16 with AVX2: 8 values per shift.
template <>
struct block_codec<bf16> : detail::simd_block_codec<bf16, detail::widen_bf16> {};
#endif
#endif

/// Whether entries of V are read by block_codec: unscaled storage (kacc views, and plain
/// Views of kacc formats or arithmetic types).
template <class V>
inline constexpr bool block_decodable_v =
    is_format_v<format_t<V>> && !format_traits<format_t<V>>::is_scaled;

/// Whether block loads of V use SIMD conversions on this target: kernels stage entries
/// through them only then, and keep their plain loops (which compilers vectorise whole)
/// for the other formats.
template <class V>
inline constexpr bool block_load_vectorised_v =
    block_decodable_v<V>&& block_codec<format_t<V>>::vectorised;

/// Entries a kernel stages through block loads at a time: converted into a local array
/// (L1-resident) first, then summed in a separate loop that compilers vectorise whole.
constexpr int block_stage = 256;

/// The type V(i) reads an entry as before convert<T>: its arithmetic type for kacc views
/// and plain Views of arithmetic types, double for plain Views of kacc formats.
template <class V>
using read_t = std::conditional_t<is_kacc_view_v<V> || std::is_arithmetic<format_t<V>>::value,
                                  arithmetic_t<V>, double>;

/// The address of entry (i...) of V's storage.
template <class V, class... I>
KOKKOS_FORCEINLINE_FUNCTION auto storage_pointer(const V& v, const I&... i) {
  if constexpr (is_kacc_view_v<V>) {
    return &v.storage()(i...);
  } else {
    return &v(i...);
  }
}

/// out[l] = convert<T>(v(i + l)) for l in [0, W), v of rank 1. Host code reads entries
/// that lie consecutive in memory (stride 1) with block_codec; other strides, scaled
/// formats and device code read them one by one. Same bits either way.
template <int W, class T, class V>
KOKKOS_FORCEINLINE_FUNCTION void load_block(const V& v, const index_type i, T* out) {
#if !defined(KACC_DEVICE_PASS)
  if constexpr (block_decodable_v<V>) {
    if (v.stride(0) == 1) {
      block_codec<format_t<V>>::template decode<W, read_t<V>>(storage_pointer(v, i), out);
      return;
    }
  }
#endif
  for (int l = 0; l < W; ++l) out[l] = convert<T>(v(i + l));
}

/// out[l] = convert<T>(v(r + l, c)) (dim 0) or convert<T>(v(r, c + l)) (dim 1) for l in
/// [0, W), v of rank 2: block_codec where those entries are consecutive in memory, one by
/// one otherwise (scaled formats, whose scale may change along the block, included).
template <int W, class T, class V>
KOKKOS_FORCEINLINE_FUNCTION void load_block(const V& v, const index_type r, const index_type c,
                                            const int dim, T* out) {
#if !defined(KACC_DEVICE_PASS)
  if constexpr (block_decodable_v<V>) {
    if (v.stride(dim) == 1) {
      block_codec<format_t<V>>::template decode<W, read_t<V>>(storage_pointer(v, r, c), out);
      return;
    }
  }
#endif
  for (int l = 0; l < W; ++l) out[l] = convert<T>(dim == 0 ? v(r + l, c) : v(r, c + l));
}

}  // namespace Impl
}  // namespace kacc
