#pragma once
/// @file
/// Block loads and stores: a kernel's inner host loop asks for W consecutive entries of a
/// view as arithmetic values (or writes W of them), and the storage format answers with
/// SIMD conversions where the compiling target has them and with the scalar conversion
/// elsewhere, so the kernel keeps one source. Loads are picked at compile time from the
/// target's features:
///   - fp16: `__F16C__` (vcvtph2ps, 8 values per instruction);
///   - bf16: `__AVX2__` (zero-extend and shift left by 16: exact, and what AVX512-BF16's
///     own widening does, so that extension adds nothing for loads);
///   - with `__AVX512F__` the floats widen to double 8 at a time in one instruction;
///   - scaled int8, int16 and int32 with one scale (a vector's, or a matrix run's):
///     `__AVX2__` (sign-extend, convert, multiply by the scale: in double, and for int8 and
///     int16 in float, the conversion is exact and the product's is the one rounding; int32
///     to float rounds first, in the current rounding mode, as on the scalar path);
///   - every other format, device code and targets without these: the scalar path.
/// Results are bit-identical to the scalar path (`convert<T>(v(i))`), NaNs included:
/// fp16 signalling NaNs come out quiet with their payload in both paths (as from F16C),
/// bf16 keeps every bit when widened to float, and float to double quiets a signalling
/// NaN in both paths (x86 hardware conversions). Under denormals-are-zero (-ffast-math) the
/// hardware widening of float to double reads a subnormal float as zero, and a bf16
/// subnormal is one: where a thread has that flag on, bf16 blocks loaded to double take the
/// scalar path, which decodes subnormals with integer operations (subnormal_check).
///
/// Stores (store_block) of scaled int8 and int16 with one scale use AVX-512 (`__AVX512F__`:
/// the quotient, rounded in the current rounding mode as nearbyint rounds, clamped and
/// narrowed), as do those of fp16 and bf16 (`__AVX512F__`, and F16C for fp16):
/// a double is first rounded to float by round-to-odd (the bits below a chosen bit of the
/// double folded into that bit, then truncated), which makes the second rounding, to the
/// 2-byte format, round to nearest even as if done once from the double (Boldo and
/// Melquiond's condition: the kept bits reach more than two bits beyond the format's).
/// fp16 then rounds with vcvtps2ph, bf16 with AVX512-BF16's vcvtneps2bf16 or, where a
/// float is subnormal (which that instruction flushes), integer operations on the float's
/// bits. bf16 folds at a bit that float subnormals keep, so its route is exact for them
/// too; under flush-to-zero or denormals-are-zero (float_subnormals_flushed) it is not,
/// and a block with a value below float's normal range is stored with the scalar encoder.
/// Results are bit-identical to `v(i) = value`, NaN payloads included.

#include <kacc/core/kernel_support.hpp>
#include <kacc/core/written_loads.hpp>

#include <cstdint>
#include <cstring>

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
#if !defined(KACC_DEVICE_PASS) && defined(__AVX512F__) && defined(__F16C__)
#define KACC_BLOCK_STORE_AVX512 1
#endif
#if !defined(KACC_DEVICE_PASS) && defined(__AVX2__)
#define KACC_BLOCK_LOAD_SCALED 1
#endif
#if !defined(KACC_DEVICE_PASS) && defined(__AVX512F__)
#define KACC_BLOCK_STORE_SCALED 1
#endif

/// Whether this thread's SSE and AVX instructions read subnormal operands as zero (MXCSR's
/// denormals-are-zero, which -ffast-math sets for the whole process), where that matters
/// to block loads (bf16's SIMD widening; false elsewhere): the smallest subnormal float,
/// widened. Registers only and no volatile, so a compiler may hoist the test out of loops
/// (the flags do not change inside a kernel); reading MXCSR (stmxcsr) per block of 16
/// measured 3x slower in GEMV with bf16 storage.
KOKKOS_FORCEINLINE_FUNCTION bool subnormals_read_as_zero() {
#if defined(KACC_BLOCK_LOAD_BF16)
  float smallest = 0x1p-149f;
  __asm__("" : "+x"(smallest));                   // a value the compiler cannot fold
  return !(static_cast<double>(smallest) > 0.0);  // one compare and branch, unlike == 0
#else
  return false;
#endif
}

/// Who tests, for a block load whose SIMD widening can meet a subnormal float (bf16 to a
/// wider type), whether this thread reads subnormals as zero; such a block then takes the
/// scalar path, which decodes subnormals with integer operations.
enum class subnormal_check {
  /// The block load itself: a compare and a branch per block, which compilers keep inside
  /// the kernel's loop (1.4-1.5x slower in GEMV's dot shape with bf16 storage).
  per_block,
  /// The caller, once per row or work item (block_loads_flush_subnormals), which reads the
  /// entries through its plain loop where they would be flushed.
  by_caller
};

/// The scalar path for one entry: read as the view reads it (in A), then converted to T.
template <class A, class T, class Format>
KOKKOS_FORCEINLINE_FUNCTION T decode_entry(const typename format_traits<Format>::storage_type& e) {
  return convert<T>(kacc::detail::load<A, Format>(e, kacc::detail::no_scale{}));
}

/// The scalar path for one store: what `v(i) = value` writes for a view of Format that
/// computes in A under overflow policy Policy.
template <class A, class Policy, class Format>
KOKKOS_FORCEINLINE_FUNCTION typename format_traits<Format>::storage_type encode_entry(
    const A& value) {
  return kacc::detail::store_value<Format, Policy>(value, kacc::detail::no_scale{});
}

namespace detail {
/// Block stores one entry at a time, for formats without SIMD stores on this target.
template <class Format>
struct scalar_block_store {
  /// Whether this format's block stores use SIMD conversions on this target.
  static constexpr bool vectorised_stores = false;
  /// entries[l] = in[l] rounded as a view computing in A under Policy stores it.
  template <int W, class A, class Policy>
  KOKKOS_FORCEINLINE_FUNCTION static void encode(
      const A* in, typename format_traits<Format>::storage_type* entries) {
    for (int l = 0; l < W; ++l) entries[l] = encode_entry<A, Policy, Format>(in[l]);
  }
};
}  // namespace detail

/// Widens W stored entries of Format at `entries` (consecutive in memory) to T, as a view
/// reading them in A would and then convert<T>, and rounds W values to them as the view's
/// stores would. This primary template is the scalar path; formats with SIMD conversions
/// specialise it.
template <class Format, class = void>
struct block_codec : detail::scalar_block_store<Format> {
  /// Whether this format's block loads use SIMD conversions on this target.
  static constexpr bool vectorised = false;
  /// The scalar path meets no subnormal float it would flush.
  template <class A, class T>
  static constexpr bool widens_subnormal_floats = false;
  /// out[l] = entries[l] as T, for l in [0, W).
  template <int W, class A, class T, subnormal_check = subnormal_check::per_block>
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
  /// Whether decode, reading in A, widens floats that may be subnormal to a wider T: under
  /// denormals-are-zero that reads them as zero.
  template <class A, class T>
  static constexpr bool widens_subnormal_floats =
      Wide::widens_to_subnormals && !std::is_same<T, float>::value && sizeof(A) <= sizeof(T);
  /// out[l] = entries[l] as T, for l in [0, W); the scalar path where widening would
  /// flush subnormals (Check says who tests for that).
  template <int W, class A, class T, subnormal_check Check = subnormal_check::per_block>
  KOKKOS_FORCEINLINE_FUNCTION static void decode(const Format* entries, T* out) {
    if constexpr (Check == subnormal_check::per_block && widens_subnormal_floats<A, T>) {
      if (subnormals_read_as_zero()) {
        decode_scalar<W, A>(entries, out);
        return;
      }
    }
    int l = 0;
    // Read in a wider A and narrowed to T, a signalling NaN comes out quiet on the scalar
    // path (the hardware narrowing quiets it) but not from the widened floats: scalar there.
    if constexpr (sizeof(A) <= sizeof(T)) {
      const auto* bits = reinterpret_cast<const std::uint16_t*>(entries);
#if defined(__AVX512F__)
      // Floats 16 at a time: a kernel reading them back in 512-bit registers then finds
      // each in one store (two 256-bit stores under one load stall store forwarding).
      if constexpr (std::is_same<T, float>::value) {
        for (; l + 16 <= W; l += 16) _mm512_storeu_ps(out + l, Wide::widen16(bits + l));
      }
#endif
      for (; l + 8 <= W; l += 8) store_floats(Wide::widen(bits + l), out + l);
      for (; l < W; ++l) out[l] = static_cast<T>(Wide::widen_one(bits[l]));
    }
    for (; l < W; ++l) out[l] = decode_entry<A, T, Format>(entries[l]);
  }
  /// The scalar path for W entries, out of line so that decode's SIMD loop stays whole.
  template <int W, class A, class T>
  [[gnu::noinline, gnu::cold]] static void decode_scalar(const Format* entries, T* out) {
    for (int l = 0; l < W; ++l) out[l] = decode_entry<A, T, Format>(entries[l]);
  }
};

#if defined(KACC_BLOCK_LOAD_FP16)
/// fp16 to float: F16C's vcvtph2ps.
struct widen_fp16 {
  /// fp16 subnormals widen to normal floats.
  static constexpr bool widens_to_subnormals = false;
  static __m256 widen(const std::uint16_t* bits) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bits)));
  }
  /// One entry: the same conversion on one lane. An asm statement, not _cvtsh_ss: GCC
  /// fuses multiply and add in a loop that calls a target builtin (it stops deferring
  /// FMAs), so a sum of such products would round otherwise than the plain loop's.
  static float widen_one(const std::uint16_t bits) {
    __m128 wide;
    __asm__("vcvtph2ps %1, %0" : "=x"(wide) : "x"(_mm_cvtsi32_si128(bits)));
    return _mm_cvtss_f32(wide);
  }
#if defined(__AVX512F__)
  static __m512 widen16(const std::uint16_t* bits) {
    return _mm512_maskz_cvtph_ps(0xffff,
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits)));
  }
#endif
};
#endif
#if defined(KACC_BLOCK_LOAD_BF16)
/// bf16 to float: zero-extend to 32 bits and shift into the high half.
struct widen_bf16 {
  /// bf16 subnormals are float subnormals.
  static constexpr bool widens_to_subnormals = true;
  static __m256 widen(const std::uint16_t* bits) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bits)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  /// One entry: the bits moved into a float's high half.
  static float widen_one(const std::uint16_t bits) {
    return kacc::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
  }
#if defined(__AVX512F__)
  static __m512 widen16(const std::uint16_t* bits) {
    const __m512i wide = _mm512_maskz_cvtepu16_epi32(
        0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits)));
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, wide, 16));
  }
#endif
};
#endif

#if defined(KACC_BLOCK_STORE_AVX512)
/// Clamps to [-largest, largest] where store_value does (overflow::saturate; NaN stays).
template <class Policy>
inline __m512d clamped(__m512d v, const double largest) {
  if constexpr (std::is_same<Policy, overflow::saturate>::value) {
    const __m512d top = _mm512_set1_pd(largest), bottom = _mm512_set1_pd(-largest);
    v = _mm512_mask_mov_pd(v, _mm512_cmp_pd_mask(v, top, _CMP_GT_OQ), top);
    v = _mm512_mask_mov_pd(v, _mm512_cmp_pd_mask(v, bottom, _CMP_LT_OQ), bottom);
  }
  return v;
}
template <class Policy>
inline __m512 clamped(__m512 v, const float largest) {
  if constexpr (std::is_same<Policy, overflow::saturate>::value) {
    const __m512 top = _mm512_set1_ps(largest), bottom = _mm512_set1_ps(-largest);
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, top, _CMP_GT_OQ), top);
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, bottom, _CMP_LT_OQ), bottom);
  }
  return v;
}

/// Whether this thread's SSE and AVX instructions flush subnormal float results to zero
/// or read subnormal operands as zero (MXCSR's flush-to-zero and denormals-are-zero, which
/// -ffast-math sets): a double of 2^-140 narrowed to float and widened back. Registers
/// only, as subnormals_read_as_zero, so compilers may hoist it out of loops.
inline bool float_subnormals_flushed() {
  double tiny = 0x1p-140;
  __asm__("" : "+x"(tiny));  // a value the compiler cannot fold
  return !(static_cast<double>(static_cast<float>(tiny)) > 0.0);
}

/// 8 doubles rounded to float by round-to-odd at bit OddBit of the double: the bits below
/// it are folded into it, then the double is truncated to float. Exact where the float
/// keeps bit OddBit: normal floats from OddBit 29 on (the 29 bits float drops), and from
/// OddBit 43 on also subnormal floats down to 2^-140 (a smaller value truncates towards
/// zero, where it still rounds to a 2-byte format with float's range). Values beyond
/// float's range truncate to +-FLT_MAX (odd, so they still round to infinity), NaNs keep
/// their top payload bits and come out quiet.
template <int OddBit>
inline __m256 round_to_odd_float(const __m512d d) {
  static_assert(OddBit >= 29 && OddBit < 52, "a bit float keeps, inside the mantissa");
  const __m512i u = _mm512_castpd_si512(d);
  const __mmask8 inexact =
      _mm512_test_epi64_mask(u, _mm512_set1_epi64((std::int64_t(1) << OddBit) - 1));
  const __m512i odd =
      _mm512_mask_or_epi64(u, inexact, u, _mm512_set1_epi64(std::int64_t(1) << OddBit));
  // The zero-masking forms: GCC 12 warns (-Wmaybe-uninitialized) inside the unmasked
  // ones' undefined operands.
  return _mm512_maskz_cvt_roundpd_ps(0xff, _mm512_castsi512_pd(odd),
                                     _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}

/// lo and hi side by side in one register.
inline __m512 joined(const __m256 lo, const __m256 hi) {
  return _mm512_castpd_ps(joined_halves(_mm256_castps_pd(lo), _mm256_castps_pd(hi)));
}

/// Whether a lane of one of the n doubles from `in` (n a multiple of 8) lies strictly
/// between 0 and the smallest normal float in magnitude: there round-to-odd through float
/// is not exact (nor, under flush-to-zero, kept at all). On the bits without the sign, less
/// one, so that zeros wrap to the top: their unsigned minimum, compared once (a compare
/// and a mask move per 8 doubles made the roofline kernel with bf16 storage and fp64
/// arithmetic take 1.2x as long).
inline bool below_float_normals(const double* in, const int n) {
  __m512i smallest = _mm512_set1_epi64(-1);
  for (int j = 0; j < n; j += 8) {
    const __m512i u = _mm512_castpd_si512(_mm512_loadu_pd(in + j));
    const __m512i twice = _mm512_add_epi64(u, u);  // the sign shifted out
    smallest =
        _mm512_maskz_min_epu64(0xff, smallest, _mm512_sub_epi64(twice, _mm512_set1_epi64(1)));
  }
  return _mm512_cmplt_epu64_mask(smallest, _mm512_set1_epi64(2 * 0x3810000000000000ll - 1)) != 0;
}

/// float to fp16: vcvtps2ph, round to nearest even (what binary16_from_float computes).
struct narrow_fp16 {
  /// fp16 subnormals are normal floats: round-to-odd through float is exact for them.
  static constexpr bool needs_float_normals = false;
  /// The double's bit that round_to_odd_float folds into: the last one float keeps.
  static constexpr int odd_bit = 29;
  /// Rounds 16 floats to fp16 at bits (`lowest`: see narrow_bf16; unused).
  static void narrow(const __m512 f, std::uint16_t* bits, __m512i& /*lowest*/) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(bits),
                        _mm512_maskz_cvtps_ph(0xffff, f, _MM_FROUND_TO_NEAREST_INT));
  }
  /// vcvtps2ph rounds every float.
  static bool missed_subnormals(const __m512i /*lowest*/) { return false; }
};

/// float to bf16 on the bits, as bfloat16_from_float: round to nearest even on bit 16
/// (a carry moves into the exponent), NaNs quiet with their top payload bits.
struct narrow_bf16 {
  /// bf16 subnormals are float subnormals.
  static constexpr bool needs_float_normals = true;
  /// The double's bit that round_to_odd_float folds into: the one below bf16's rounding
  /// bit, which float subnormals keep down to 2^-140 (bit 29 would make the rounding of a
  /// bf16 subnormal lose the bits below float's smallest subnormal).
  static constexpr int odd_bit = 43;
  /// Rounds 16 floats to bf16 at bits. With AVX512-BF16, vcvtneps2bf16 rounds and quiets
  /// NaNs as the integer operations below do, in one instruction, but flushes subnormal
  /// floats to zero: `lowest` keeps the unsigned minimum of the floats' bits without the
  /// sign, less one (zeros wrap to the top), for missed_subnormals to test once per run.
  /// A loop of vcvtneps2bf16 took 0.43-0.57 ns per 16 floats alone, 0.86-0.93 ns with
  /// this minimum and 1.1-1.6 ns with vfpclassps and a branch per 16 (AMD EPYC).
  static void narrow(const __m512 f, std::uint16_t* bits, __m512i& lowest) {
    const __m512i u = _mm512_castps_si512(f);
#if defined(__AVX512BF16__)
    // The zero-masking form: GCC 12 warns inside the unmasked one's undefined operand.
    lowest = _mm512_maskz_min_epu32(0xffff, lowest,
                                    _mm512_sub_epi32(_mm512_add_epi32(u, u), _mm512_set1_epi32(1)));
    const __m256bh r = _mm512_cvtneps_pbh(f);
    std::memcpy(bits, &r, sizeof r);
#else
    (void)lowest;
    const __m512i high = _mm512_maskz_srli_epi32(0xffff, u, 16);
    const __m512i odd = _mm512_and_si512(high, _mm512_set1_epi32(1));
    __m512i r = _mm512_maskz_srli_epi32(
        0xffff, _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(
        _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_or_epi32(r, nan, high, _mm512_set1_epi32(0x0040));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(bits), _mm512_maskz_cvtepi32_epi16(0xffff, r));
#endif
  }
  /// Whether narrow flushed a subnormal float since `lowest` started at all ones.
  static bool missed_subnormals(const __m512i lowest) {
#if defined(__AVX512BF16__)
    return _mm512_cmplt_epu32_mask(lowest, _mm512_set1_epi32(2 * 0x00800000 - 1)) != 0;
#else
    (void)lowest;
    return false;
#endif
  }
};

/// SIMD block stores of a 2-byte float format, 16 values at a time from float or double;
/// other arithmetic types and remainders shorter than 16 are stored by the scalar encoder,
/// and so are all W values where Narrow missed a subnormal float, or, while this thread
/// flushes float subnormals, where a double lies below float's normal range
/// (Narrow::needs_float_normals).
template <class Format, class Narrow>
struct simd_block_store {
  /// This format's block stores use SIMD conversions on this target.
  static constexpr bool vectorised_stores = true;
  /// entries[l] = in[l] rounded as a view computing in A under Policy stores it. Forced
  /// inline, its scalar path out of line (encode_scalar): GCC 12 called it once per
  /// roofline work item with bf16 (register saves, the constants loaded again,
  /// vzeroupper), where it inlined fp16's; inlined, the roofline's Acc<fp32,bf16> at one
  /// iteration ran 183-187 GFLOP/s instead of 138-158 (AMD EPYC, 2 threads).
  template <int W, class A, class Policy>
  [[gnu::always_inline]] static void encode(const A* in, Format* entries) {
    auto* bits = reinterpret_cast<std::uint16_t*>(entries);
    const auto largest = static_cast<A>(format_traits<Format>::max_value());
    __m512i lowest = _mm512_set1_epi32(-1);
    int l = 0;
    if constexpr (std::is_same<A, double>::value) {
      constexpr int simd_end = W / 16 * 16;
      if constexpr (Narrow::needs_float_normals) {
        // Where float subnormals are flushed, the whole run is tested once, before any
        // conversion (tested per 16 between the conversions, the roofline's bf16 work
        // items of 64 doubles took 1.14x as long). Elsewhere round-to-odd keeps them.
        if (float_subnormals_flushed() && below_float_normals(in, simd_end)) {
          encode_scalar<W, A, Policy>(in, entries);
          return;
        }
      }
      for (; l < simd_end; l += 16) {
        const __m512d lo = clamped<Policy>(_mm512_loadu_pd(in + l), largest);
        const __m512d hi = clamped<Policy>(_mm512_loadu_pd(in + l + 8), largest);
        Narrow::narrow(joined(round_to_odd_float<Narrow::odd_bit>(lo),
                              round_to_odd_float<Narrow::odd_bit>(hi)),
                       bits + l, lowest);
      }
    } else if constexpr (std::is_same<A, float>::value) {
      for (; l + 16 <= W; l += 16)
        Narrow::narrow(clamped<Policy>(_mm512_loadu_ps(in + l), largest), bits + l, lowest);
    }
    if (Narrow::missed_subnormals(lowest)) {
      encode_scalar<W, A, Policy>(in, entries);
      return;
    }
    for (; l < W; ++l) entries[l] = encode_entry<A, Policy, Format>(in[l]);
  }
  /// The scalar path for W entries, out of line so that encode stays small enough to inline.
  template <int W, class A, class Policy>
  [[gnu::noinline, gnu::cold]] static void encode_scalar(const A* in, Format* entries) {
    for (int l = 0; l < W; ++l) entries[l] = encode_entry<A, Policy, Format>(in[l]);
  }
};
#endif

/// The store half of fp16's and bf16's codecs: SIMD with AVX-512, scalar otherwise.
template <class Format>
struct block_store_of {
  using type = scalar_block_store<Format>;
};
#if defined(KACC_BLOCK_STORE_AVX512)
template <>
struct block_store_of<fp16> {
  using type = simd_block_store<fp16, narrow_fp16>;
};
template <>
struct block_store_of<bf16> {
  using type = simd_block_store<bf16, narrow_bf16>;
};
#endif

}  // namespace detail

#if defined(KACC_BLOCK_LOAD_FP16)
/// fp16 with F16C: 8 values per conversion instruction.
template <>
struct block_codec<fp16> : detail::simd_block_codec<fp16, detail::widen_fp16>,
                           detail::block_store_of<fp16>::type {};
#endif
#if defined(KACC_BLOCK_LOAD_BF16)
/// bf16 with AVX2: 8 values per shift.
template <>
struct block_codec<bf16> : detail::simd_block_codec<bf16, detail::widen_bf16>,
                           detail::block_store_of<bf16>::type {};
#endif
#endif

/// Whether entries of V are read by block_codec: unscaled storage (kacc views, and plain
/// Views of kacc formats or arithmetic types).
template <class V>
inline constexpr bool block_decodable_v =
    is_format_v<format_t<V>> && !format_traits<format_t<V>>::is_scaled;

/// Entries a kernel stages through block loads at a time: converted into a local array
/// (L1-resident) first, then summed in a separate loop that compilers vectorise whole.
constexpr int block_stage = 256;

/// The type V(i) reads an entry as before convert<T>: its arithmetic type for kacc views,
/// Kokkos Views with StoredAs and plain Views of arithmetic types, double for plain Views
/// of kacc formats.
template <class V>
using read_t = std::conditional_t<is_kacc_view_v<V> || is_stored_as_kokkos_view_v<V> ||
                                      std::is_arithmetic<format_t<V>>::value,
                                  arithmetic_t<V>, double>;

/// The address of entry (i...) of V's storage.
template <class V, class... I>
KOKKOS_FORCEINLINE_FUNCTION auto storage_pointer(const V& v, const I&... i) {
  if constexpr (is_kacc_view_v<V>) {
    return &v.storage()(i...);
  } else if constexpr (is_stored_as_kokkos_view_v<V>) {
    return v.data() + v.mapping()(i...);  // v(i...) is a proxy, not an entry
  } else {
    return &v(i...);
  }
}

/// Asks the host's caches for `count` entries of storage from `first` on, one hint per cache
/// line, to read them (ForWrite false) or to write them too: loops that convert between
/// their loads fall behind the hardware prefetchers (a hint: no effect on results; none in
/// device code). Locality as __builtin_prefetch's: 3 into every level, 2 into L2 and beyond.
template <bool ForWrite = false, int Locality = 3, class S>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_entries(const S* first, const index_type count) {
#if !defined(KACC_DEVICE_PASS) && (defined(__GNUC__) || defined(__clang__))
  constexpr index_type step = sizeof(S) < 64 ? 64 / sizeof(S) : 1;
  for (index_type j = 0; j < count; j += step)
    __builtin_prefetch(first + j, ForWrite ? 1 : 0, Locality);
#else
  (void)first, (void)count;
#endif
}

namespace detail {
/// out[l] = convert<T>(entries[l] * scale in A) for l in [0, count), one at a time: the
/// scalar path of scaled<Integer> against one scale (one rounding, the product's).
template <class A, class T, class Integer>
KOKKOS_INLINE_FUNCTION void decode_scaled_entries(const Integer* entries, const A scale, T* out,
                                                  const int count) {
  for (int l = 0; l < count; ++l) {
    out[l] = convert<T>(format_traits<scaled<Integer>>::template decode<A>(entries[l], scale));
  }
}

/// Block loads of scaled<Integer> against one scale: the scalar path; int8, int16 and int32
/// specialise it with SIMD conversions where the target has them.
template <class Integer>
struct scaled_block_decoder {
  /// Whether these block loads use SIMD conversions on this target.
  static constexpr bool vectorised = false;
  /// out[l] = convert<T>(entries[l] * scale in A), for l in [0, W).
  template <int W, class A, class T>
  KOKKOS_INLINE_FUNCTION static void decode(const Integer* entries, const A scale, T* out) {
    decode_scaled_entries<A>(entries, scale, out, W);
  }
};

#if defined(KACC_BLOCK_LOAD_SCALED)
/// 8 integers at `entries` sign-extended to 32 bits.
inline __m256i widen8_epi32(const std::int16_t* entries) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(entries)));
}
inline __m256i widen8_epi32(const std::int8_t* entries) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(entries)));
}
inline __m256i widen8_epi32(const std::int32_t* entries) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(entries));
}
#if defined(__AVX512F__)
/// 16 integers at `entries` sign-extended to 32 bits.
inline __m512i widen16_epi32(const std::int16_t* entries) {
  return _mm512_maskz_cvtepi16_epi32(0xffff,
                                     _mm256_loadu_si256(reinterpret_cast<const __m256i*>(entries)));
}
inline __m512i widen16_epi32(const std::int8_t* entries) {
  return _mm512_maskz_cvtepi8_epi32(0xffff,
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(entries)));
}
inline __m512i widen16_epi32(const std::int32_t* entries) {
  return _mm512_loadu_si512(entries);
}
#endif

/// out[0..8) = n * scale: the integers convert to double exactly, so the product's is the
/// one rounding, as on the scalar path.
inline void store_scaled8(const __m256i n, const double scale, double* out) {
#if defined(__AVX512F__)
  // The zero-masking form: GCC 12 warns (-Wmaybe-uninitialized) inside the unmasked
  // one's _mm512_undefined_pd operand.
  _mm512_storeu_pd(out, _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xff, n), _mm512_set1_pd(scale)));
#else
  const __m256d s = _mm256_set1_pd(scale);
  _mm256_storeu_pd(out, _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(n)), s));
  _mm256_storeu_pd(out + 4, _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(n, 1)), s));
#endif
}
/// out[0..8) = n * scale: 8- and 16-bit integers convert to float exactly too; int32 rounds
/// to nearest in the current rounding mode, as static_cast<float> does on x86 (cvtsi2ss).
inline void store_scaled8(const __m256i n, const float scale, float* out) {
  _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(n), _mm256_set1_ps(scale)));
}
/// out[l] = n[l] * scales[l] for l in [0, 8): a scale per entry, one rounding each.
inline void store_scaled8(const __m256i n, const double* scales, double* out) {
#if defined(__AVX512F__)
  _mm512_storeu_pd(out, _mm512_mul_pd(_mm512_maskz_cvtepi32_pd(0xff, n), _mm512_loadu_pd(scales)));
#else
  _mm256_storeu_pd(
      out, _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(n)), _mm256_loadu_pd(scales)));
  _mm256_storeu_pd(out + 4, _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(n, 1)),
                                          _mm256_loadu_pd(scales + 4)));
#endif
}
inline void store_scaled8(const __m256i n, const float* scales, float* out) {
  _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(n), _mm256_loadu_ps(scales)));
}

/// int8, int16 and int32 against one scale with AVX2: sign-extend, convert and multiply 8
/// (16 floats with AVX-512) at a time, where the view computes in T; a remainder, and other
/// types T, one at a time. GCC 12 vectorises the scalar loop alone, but not once a kernel
/// inlines it (a movswl and a vcvtsi2sd per entry in the roofline kernel); int32 runs read
/// one entry at a time made GEMV "T" of a GMRES basis take as long as fp64's.
template <class Integer>
struct simd_scaled_block_decoder {
  /// These block loads use SIMD conversions on this target.
  static constexpr bool vectorised = true;
  /// out[l] = convert<T>(entries[l] * scale in A), for l in [0, W).
  template <int W, class A, class T>
  static void decode(const Integer* entries, const A scale, T* out) {
    int l = 0;
    if constexpr (std::is_same<A, T>::value &&
                  (std::is_same<T, float>::value || std::is_same<T, double>::value)) {
#if defined(__AVX512F__)
      if constexpr (std::is_same<T, float>::value) {
        for (; l + 16 <= W; l += 16) {
          const __m512 n = _mm512_maskz_cvtepi32_ps(0xffff, widen16_epi32(entries + l));
          _mm512_storeu_ps(out + l, _mm512_mul_ps(n, _mm512_set1_ps(scale)));
        }
      }
#endif
      for (; l + 8 <= W; l += 8) store_scaled8(widen8_epi32(entries + l), scale, out + l);
    }
    decode_scaled_entries<A>(entries + l, scale, out + l, W - l);
  }
  /// out[l] = convert<T>(entries[l] * scales[l] in A), for l in [0, W): a scale per entry
  /// (a matrix's run along the dimension its scales run along), 8 at a time where the view
  /// computes in T, one at a time otherwise.
  template <int W, class A, class T>
  static void decode_along(const Integer* entries, const A* scales, T* out) {
    int l = 0;
    if constexpr (std::is_same<A, T>::value &&
                  (std::is_same<T, float>::value || std::is_same<T, double>::value)) {
      for (; l + 8 <= W; l += 8) store_scaled8(widen8_epi32(entries + l), scales + l, out + l);
    }
    for (; l < W; ++l) {
      out[l] =
          convert<T>(format_traits<scaled<Integer>>::template decode<A>(entries[l], scales[l]));
    }
  }
};
template <>
struct scaled_block_decoder<std::int8_t> : simd_scaled_block_decoder<std::int8_t> {};
template <>
struct scaled_block_decoder<std::int16_t> : simd_scaled_block_decoder<std::int16_t> {};
template <>
struct scaled_block_decoder<std::int32_t> : simd_scaled_block_decoder<std::int32_t> {};
#endif

#if defined(KACC_BLOCK_STORE_SCALED)
/// Whether store_block of T into scaled<Integer> computing in A has the AVX-512 path.
template <class Integer, class A, class T>
inline constexpr bool simd_scaled_store_v = std::is_same<A, T>::value &&
                                            (std::is_same<T, float>::value ||
                                             std::is_same<T, double>::value) &&
                                            (std::is_same<Integer, std::int8_t>::value ||
                                             std::is_same<Integer, std::int16_t>::value);

/// encode_quotient of 8 quotients as int32, and in `fits` whether each fits_quotient: rounded
/// in the current rounding mode (as nearbyint), NaN to 0, clamped to [-top, top]. The
/// zero-masking forms throughout: GCC 12 warns (-Wmaybe-uninitialized) inside the unmasked
/// ones' undefined operands.
inline __m256i encode_quotients(const __m512d q, const double top, const double limit,
                                __mmask8& fits) {
  const __m512d rounded =
      _mm512_maskz_roundscale_pd(0xff, q, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC);
  fits = _mm512_cmp_pd_mask(_mm512_abs_pd(rounded), _mm512_set1_pd(limit), _CMP_LT_OQ);
  const __mmask8 ordered = _mm512_cmp_pd_mask(rounded, rounded, _CMP_ORD_Q);
  const __m512d clamped = _mm512_maskz_max_pd(
      ordered, _mm512_maskz_min_pd(0xff, rounded, _mm512_set1_pd(top)), _mm512_set1_pd(-top));
  return _mm512_maskz_cvttpd_epi32(0xff, clamped);
}
/// encode_quotient of 16 float quotients as int32, and whether each fits.
inline __m512i encode_quotients(const __m512 q, const float top, const float limit,
                                __mmask16& fits) {
  const __m512 rounded =
      _mm512_maskz_roundscale_ps(0xffff, q, _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC);
  fits = _mm512_cmp_ps_mask(_mm512_abs_ps(rounded), _mm512_set1_ps(limit), _CMP_LT_OQ);
  const __mmask16 ordered = _mm512_cmp_ps_mask(rounded, rounded, _CMP_ORD_Q);
  const __m512 clamped = _mm512_maskz_max_ps(
      ordered, _mm512_maskz_min_ps(0xffff, rounded, _mm512_set1_ps(top)), _mm512_set1_ps(-top));
  return _mm512_maskz_cvttps_epi32(0xffff, clamped);
}

/// Stores the low `lanes` (8 or 16) of 16 int32 in range of Integer, narrowed.
template <int lanes>
inline void store_narrowed(const __m512i n, std::int16_t* out) {
  const __m256i narrowed = _mm512_maskz_cvtepi32_epi16(0xffff, n);
  if constexpr (lanes == 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), narrowed);
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(narrowed));
  }
}
template <int lanes>
inline void store_narrowed(const __m512i n, std::int8_t* out) {
  const __m128i narrowed = _mm512_maskz_cvtepi32_epi8(0xffff, n);
  if constexpr (lanes == 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), narrowed);
  } else {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), narrowed);
  }
}

/// entries[l] = encode_quotient(in[l] / scale) for l in [0, W), the quotient formed as
/// x * inverse where inverse is nonzero (exact_reciprocal) and x / scale otherwise, 8
/// doubles or 16 floats at a time with AVX-512 and the rest one at a time: the bits of
/// store_block's scalar loop. Returns whether some entry did not fit.
template <int W, class Integer, class T>
inline bool store_scaled_block(const T* in, const T scale, const T inverse, Integer* entries) {
  using traits = format_traits<scaled<Integer>>;
  constexpr int lanes = 64 / sizeof(T);
  constexpr T top = static_cast<T>(traits::largest);
  constexpr T limit = kacc::detail::integer_limit_v<T, Integer>;
  bool misfit = false;
  int l = 0;
  for (; l + lanes <= W; l += lanes) {
    if constexpr (sizeof(T) == 8) {
      const __m512d x = _mm512_loadu_pd(in + l);
      const __m512d q = inverse != T(0) ? _mm512_mul_pd(x, _mm512_set1_pd(inverse))
                                        : _mm512_div_pd(x, _mm512_set1_pd(scale));
      __mmask8 fits;
      const __m256i n = encode_quotients(q, top, limit, fits);
      store_narrowed<lanes>(_mm512_castsi256_si512(n), entries + l);
      misfit |= fits != 0xff;
    } else {
      const __m512 x = _mm512_loadu_ps(in + l);
      const __m512 q = inverse != T(0) ? _mm512_mul_ps(x, _mm512_set1_ps(inverse))
                                       : _mm512_div_ps(x, _mm512_set1_ps(scale));
      __mmask16 fits;
      store_narrowed<lanes>(encode_quotients(q, top, limit, fits), entries + l);
      misfit |= fits != 0xffff;
    }
  }
  for (; l < W; ++l) {
    const T q = inverse != T(0) ? in[l] * inverse : in[l] / scale;
    entries[l] = traits::template encode_quotient<T>(q);
    misfit |= !traits::template fits_quotient<T>(q);
  }
  return misfit;
}
#endif
}  // namespace detail

/// Whether Format is kacc::scaled<Integer>, whose entries are integer * scale: the scaled
/// block loads and stores compute that themselves. Any other scaled format (a user's own)
/// loads and stores entry by entry through its format_traits.
template <class Format>
struct is_scaled_integer_format : std::false_type {};
template <class Integer>
struct is_scaled_integer_format<scaled<Integer>> : std::true_type {};

/// Whether V is a kacc view of scaled<Integer> with one scale for all its entries (a
/// vector's): its blocks load and store against that scale, read once per block.
template <class V, bool = is_kacc_view_v<V>>
struct single_scale : std::false_type {};
template <class V>
struct single_scale<V, true>
    : std::integral_constant<bool, V::is_scaled && (V::scale_axis < 0) &&
                                       is_scaled_integer_format<typename V::format_type>::value> {};
/// single_scale<V>::value.
template <class V>
inline constexpr bool single_scale_v = single_scale<V>::value;

/// Whether V is a vector of a scaled format with one scale whose block loads convert with
/// SIMD instructions on this target (int8, int16 and int32 with AVX2, read in the view's
/// arithmetic type).
template <class V, bool = single_scale_v<V>>
struct scaled_vector_loads_vectorised : std::false_type {};
template <class V>
struct scaled_vector_loads_vectorised<V, true>
    : std::integral_constant<
          bool, V::rank == 1 && detail::scaled_block_decoder<
                                    typename V::format_traits_type::storage_type>::vectorised> {};

/// Whether V is a kacc matrix of scaled int8, int16 or int32 (kacc::scaled<Integer>) whose
/// runs along a dimension (stride 1) load through the SIMD scaled decoders: against one
/// scale, or a scale per entry along the scale axis (load_block of rank 2).
template <class V, bool = is_kacc_view_v<V>>
struct scaled_matrix_loads_vectorised : std::false_type {};
template <class V>
struct scaled_matrix_loads_vectorised<V, true>
    : std::integral_constant<
          bool, is_scaled_integer_format<typename V::format_type>::value && V::rank == 2 &&
                    detail::scaled_block_decoder<
                        typename V::format_traits_type::storage_type>::vectorised> {};

/// Whether block loads of V use SIMD conversions on this target: kernels stage entries
/// through them only then, and keep their plain loops (which compilers vectorise whole)
/// for the other formats.
template <class V>
inline constexpr bool block_load_vectorised_v = (block_decodable_v<V> &&
                                                 block_codec<format_t<V>>::vectorised) ||
                                                scaled_vector_loads_vectorised<V>::value;

namespace detail {
/// Bytes one device thread moves per memory instruction in a wide block access.
constexpr int device_access_bytes = 16;

/// Whether block loads and stores of W entries of V move whole device_access_bytes chunks
/// in device code: unscaled storage of a trivial type (bits that a chunk may carry:
/// not double_double) whose W entries fill a whole number of chunks.
template <class V, int W, class S = typename format_traits<format_t<V>>::storage_type>
inline constexpr bool device_wide_block_v =
    std::conjunction_v<std::bool_constant<block_decodable_v<V>>, std::is_trivial<S>,
                       std::bool_constant<(W * sizeof(S)) % device_access_bytes == 0>>;

/// Entries of V in one device_access_bytes chunk where device block accesses move whole
/// chunks of them (device_wide_block_v); 1 for other formats.
template <class V, class S = typename format_traits<format_t<V>>::storage_type>
inline constexpr int device_chunk_entries_v =
    sizeof(S) < device_access_bytes&& device_wide_block_v<V, static_cast<int>(device_access_bytes /
                                                                              sizeof(S))>
        ? static_cast<int>(device_access_bytes / sizeof(S))
        : 1;

/// W entries of storage type S, seen as whole chunks: a device thread reads or writes a
/// chunk in one instruction, where W separate narrow accesses would each cost one.
template <int W, class S>
union wide_block {
  struct alignas(device_access_bytes) chunk {
    unsigned char bytes[device_access_bytes];
  };
  /// The chunks.
  chunk chunks[W * sizeof(S) / device_access_bytes];
  /// The entries.
  S entries[W];
};

/// Whether store_block<W> of T into V moves whole chunks in device code: writable views
/// of unscaled storage (kacc views, plain Views of arithmetic types) and T their
/// arithmetic type, so each entry rounds as the view's own store rounds it.
template <class V, class T, int W, bool = is_kacc_view_v<V>>
inline constexpr bool device_wide_store_v =
    device_wide_block_v<V, W> && !V::is_const && std::is_same<T, arithmetic_t<V>>::value;
template <class V, class T, int W>
inline constexpr bool device_wide_store_v<V, T, W, false> =
    std::conjunction_v<std::bool_constant<device_wide_block_v<V, W>>,
                       std::is_arithmetic<format_t<V>>,
                       std::is_same<T, typename V::non_const_value_type>,
                       std::negation<std::is_const<typename V::value_type>>>;

/// Whether p lies on a chunk boundary.
template <class S>
KOKKOS_FORCEINLINE_FUNCTION bool on_chunk_boundary(const S* p) {
  return reinterpret_cast<std::uintptr_t>(p) % device_access_bytes == 0;
}
}  // namespace detail

/// out[l] = convert<T>(v(i + l)) for l in [0, W), v of rank 1. Host code reads entries
/// that lie consecutive in memory (stride 1) with block_codec, or, for scaled formats with
/// one scale, with scaled_block_decoder against that scale, read once. Device code reads
/// unscaled entries at stride 1 whose W fill whole 16-byte chunks (device_wide_block_v)
/// chunk by chunk when they start on a chunk boundary, one load instruction per chunk
/// where W narrow loads would each cost one (fp16 on an H200: 0.43 TB/s one entry per
/// thread, 3.4 TB/s eight), then decodes each entry. Other strides and formats read them
/// one by one (one scale read once still). Same bits either way.
template <int W, subnormal_check Check = subnormal_check::per_block, class T, class V>
KOKKOS_FORCEINLINE_FUNCTION void load_block(const V& v, const index_type i, T* out) {
#if !defined(KACC_DEVICE_PASS)
  if constexpr (block_decodable_v<V>) {
    if (v.stride(0) == 1) {
      block_codec<format_t<V>>::template decode<W, read_t<V>, T, Check>(storage_pointer(v, i), out);
      return;
    }
  }
#else
  if constexpr (detail::device_wide_block_v<V, W>) {
    using S = typename format_traits<format_t<V>>::storage_type;
    using block = detail::wide_block<W, S>;
    const S* const p = storage_pointer(v, i);
    if (v.stride(0) == 1 && detail::on_chunk_boundary(p)) {
      block b;
      for (int c = 0; c < int(sizeof(b.chunks) / sizeof(b.chunks[0])); ++c)
        b.chunks[c] = reinterpret_cast<const typename block::chunk*>(p)[c];
      for (int l = 0; l < W; ++l) out[l] = decode_entry<read_t<V>, T, format_t<V>>(b.entries[l]);
      return;
    }
  }
#endif
  if constexpr (single_scale_v<V>) {
    using A = arithmetic_t<V>;
    const A scale = v.scale_at(i);
#if !defined(KACC_DEVICE_PASS)
    if (v.stride(0) == 1) {
      using integer = typename V::format_traits_type::storage_type;
      detail::scaled_block_decoder<integer>::template decode<W, A>(&v.storage()(i), scale, out);
      return;
    }
#endif
    for (int l = 0; l < W; ++l) {
      out[l] = convert<T>(V::format_traits_type::template decode<A>(v.storage()(i + l), scale));
    }
  } else {
    for (int l = 0; l < W; ++l) out[l] = convert<T>(v(i + l));
  }
}

/// Whether block stores into V use SIMD conversions on this target: writable kacc views
/// of formats that have them.
template <class V, bool = is_kacc_view_v<V>>
struct block_store_vectorised : std::false_type {};
template <class V>
struct block_store_vectorised<V, true>
    : std::integral_constant<bool, !V::is_const && block_decodable_v<V> &&
                                       block_codec<format_t<V>>::vectorised_stores> {};
/// block_store_vectorised<V>::value.
template <class V>
inline constexpr bool block_store_vectorised_v = block_store_vectorised<V>::value;
/// Whether store_block<W, T> into V writes consecutive entries with SIMD conversions on
/// this target: V's format has them and T is V's arithmetic type.
template <class V, class T>
inline constexpr bool block_store_simd_v =
    std::conjunction_v<block_store_vectorised<V>, std::is_same<T, arithmetic_t<V>>>;

/// v(i + l) = in[l] for l in [0, W), v of rank 1, rounded as the view's own stores round
/// (its overflow policy included). Host code writes entries of kacc views that lie
/// consecutive in memory with block_codec when T is the view's arithmetic type. Scaled
/// formats with one scale encode against it, read once (multiplying by its reciprocal
/// where that gives the quotient exactly), and raise the saturation flag
/// once after the block when an entry did not fit (as the entries' own stores would):
/// the conditional atomic store each entry's write makes keeps compilers from vectorising
/// a loop of them. With AVX-512, int8 and int16 with one scale encode 8 doubles or 16
/// floats per instruction (GCC 12's vectorisation of the scalar loop spends most of its
/// instructions moving masks). Device code encodes unscaled entries of T, the view's
/// arithmetic type, into whole 16-byte chunks and writes a chunk at a time, as load_block
/// reads them. Other views and strides write entries one by one. Same bits, and the same
/// flag, either way.
template <int W, class T, class V>
KOKKOS_FORCEINLINE_FUNCTION void store_block(const V& v, const index_type i, const T* in) {
#if !defined(KACC_DEVICE_PASS)
  if constexpr (block_store_simd_v<V, T>) {
    if (v.stride(0) == 1) {
      block_codec<format_t<V>>::template encode<W, T, typename V::overflow_policy>(in,
                                                                                   &v.storage()(i));
      return;
    }
  }
#else
  if constexpr (detail::device_wide_store_v<V, T, W>) {
    using S = typename format_traits<format_t<V>>::storage_type;
    using block = detail::wide_block<W, S>;
    S* const p = const_cast<S*>(storage_pointer(v, i));
    if (v.stride(0) == 1 && detail::on_chunk_boundary(p)) {
      block b;
      if constexpr (is_kacc_view_v<V>) {
        detail::scalar_block_store<format_t<V>>::template encode<W, T, typename V::overflow_policy>(
            in, b.entries);
      } else {
        for (int l = 0; l < W; ++l) b.entries[l] = in[l];
      }
      for (int c = 0; c < int(sizeof(b.chunks) / sizeof(b.chunks[0])); ++c)
        reinterpret_cast<typename block::chunk*>(p)[c] = b.chunks[c];
      return;
    }
  }
#endif
  if constexpr (single_scale_v<V>) {
    using A = arithmetic_t<V>;
    using traits = typename V::format_traits_type;
    const A scale = v.scale_at(i);
    const A inverse = traits::template exact_reciprocal<A>(scale);
    int misfits = 0;  // an int: GCC does not vectorise a loop that ands bools
    bool stored = false;
#if defined(KACC_BLOCK_STORE_SCALED)
    using integer = typename traits::storage_type;
    if constexpr (detail::simd_scaled_store_v<integer, A, T>) {
      if (v.stride(0) == 1) {
        misfits = detail::store_scaled_block<W>(in, scale, inverse, &v.storage()(i));
        stored = true;
      }
    }
#endif
    if (!stored) {
      // One loop per way of forming the quotient: a select inside one loop would put the
      // division back into the vectorised multiply loop.
      auto encode_all = [&](auto quotient_of) {
        for (int l = 0; l < W; ++l) {
          const A quotient = quotient_of(convert<A>(in[l]));
          v.storage()(i + l) = traits::template encode_quotient<A>(quotient);
          misfits |= !traits::template fits_quotient<A>(quotient);
        }
      };
      if (inverse != A(0)) {
        encode_all([inverse](const A x) { return x * inverse; });
      } else {
        encode_all([scale](const A x) { return x / scale; });
      }
    }
    int* const flag = v.scale_state().saturated.data();
    if (misfits != 0 && flag != nullptr) kacc::detail::raise_flag(flag);
  } else {
    for (int l = 0; l < W; ++l) v(i + l) = convert<typename V::non_const_value_type>(in[l]);
  }
}

/// out[l] = convert<T>(v(r + l, c)) (dim 0) or convert<T>(v(r, c + l)) (dim 1) for l in
/// [0, W), v of rank 2: block_codec where those entries are consecutive in memory; scaled
/// int8, int16 and int32 there through the SIMD scaled decoders (against the block's one scale, or
/// a scale per entry along the scale axis: GEMV with int16s storage, 16384^2, LayoutRight-N,
/// 2 threads, 34-35 ms one entry at a time, which GCC 12 converts with a movswl and a
/// vcvtsi2sd each); one by one otherwise. Same bits either way.
template <int W, subnormal_check Check = subnormal_check::per_block, class T, class V>
KOKKOS_FORCEINLINE_FUNCTION void load_block(const V& v, const index_type r, const index_type c,
                                            const int dim, T* out) {
#if !defined(KACC_DEVICE_PASS)
  if constexpr (block_decodable_v<V>) {
    if (v.stride(dim) == 1) {
      block_codec<format_t<V>>::template decode<W, read_t<V>, T, Check>(storage_pointer(v, r, c),
                                                                        out);
      return;
    }
  }
  if constexpr (scaled_matrix_loads_vectorised<V>::value) {
    if (v.stride(dim) == 1) {
      using A = arithmetic_t<V>;
      using decoder = detail::scaled_block_decoder<typename V::format_traits_type::storage_type>;
      const auto* entries = &v.storage()(r, c);
      if (V::scale_axis != dim) {
        decoder::template decode<W, A>(entries, A(v.scale_at(r, c)), out);
        return;
      }
      if constexpr (std::is_same<typename V::scale_type, A>::value) {
        const auto& scales = v.scales();
        if (scales.stride(0) == 1) {
          decoder::template decode_along<W, A>(entries, &scales(dim == 0 ? r : c), out);
          return;
        }
      }
    }
  }
#endif
  for (int l = 0; l < W; ++l) out[l] = convert<T>(dim == 0 ? v(r + l, c) : v(r, c + l));
}

/// Whether block loads of V to T may widen subnormal floats (block_codec's
/// widens_subnormal_floats), so that they must know whether this thread flushes them.
template <class V, class T>
KOKKOS_INLINE_FUNCTION constexpr bool block_load_widens_subnormals() {
  if constexpr (block_decodable_v<V>) {
    return block_codec<format_t<V>>::template widens_subnormal_floats<read_t<V>, T>;
  } else {
    return false;
  }
}

/// Whether block loads to T of any of the views V would read subnormals as zero on this
/// thread: then a kernel reads their entries through its plain loop (exact under any
/// flags), and otherwise its block loads need no test of their own
/// (subnormal_check::by_caller).
template <class T, class... V>
KOKKOS_FORCEINLINE_FUNCTION bool block_loads_flush_subnormals() {
  return (block_load_widens_subnormals<V, T>() || ...) && subnormals_read_as_zero();
}

/// v(r + l, c) = in[l] (dim 0) or v(r, c + l) = in[l] (dim 1) for l in [0, W), v of rank
/// 2, rounded as the view's own stores round: block_codec where those entries of a kacc
/// view are consecutive in memory and T is its arithmetic type, one by one otherwise
/// (scaled formats, whose scale may change along the block, included). Same bits either
/// way.
template <int W, class T, class V>
KOKKOS_FORCEINLINE_FUNCTION void store_block(const V& v, const index_type r, const index_type c,
                                             const int dim, const T* in) {
#if !defined(KACC_DEVICE_PASS)
  if constexpr (block_store_simd_v<V, T>) {
    if (v.stride(dim) == 1) {
      block_codec<format_t<V>>::template encode<W, T, typename V::overflow_policy>(
          in, &v.storage()(r, c));
      return;
    }
  }
#endif
  using stored_type = typename V::non_const_value_type;
  for (int l = 0; l < W; ++l) {
    if (dim == 0) {
      v(r + l, c) = convert<stored_type>(in[l]);
    } else {
      v(r, c + l) = convert<stored_type>(in[l]);
    }
  }
}

}  // namespace Impl
}  // namespace kacc
