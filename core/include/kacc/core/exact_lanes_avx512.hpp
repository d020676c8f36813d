#pragma once
/// @file
/// The AVX-512 register form of kacc::Impl::exact_lanes' loops over groups of products (and of the
/// fold of its lanes into one, held_fold): the lanes' expansions stay in __m512d registers from one
/// group to the next, as kept in memory every group stores and reloads them, and the stores, with
/// the adders, bound the loop. Each TwoSum is held_two_sum: with AVX512DQ a Fast2Sum of its
/// operands ordered by magnitude (5 instructions), else six additions of which three go to the FMA
/// units (fma(x, ±1, y): the same bits), as the adders would bound the loop otherwise. Every loop
/// over terms or registers (at most 16 steps) is unrolled in full before GCC's scalar replacement
/// of aggregates runs (KACC_PRAGMA_UNROLL), which keeps an array in registers only where every
/// index is a constant by then; left to the later unroller, GCC 12 kept the terms after the first
/// on the stack, a load and a store per group on each term's chain. The rare branches
/// (KACC_UNLIKELY) keep the calls they make from pushing the expansions to the stack too. GEMV
/// 16384^2, LayoutRight-N, 2 threads, Intel Xeon (the row loop with 512-bit vectors): exact<double>
/// 133.8-140.9 -> 131.5-133.5 ms, with fp32 storage unchanged (83.6-86.9, 84.6-86.0); same bits.
/// Host only; defines KACC_EXACT_LANES_AVX512 where the target has AVX-512F.

#include <kacc/core/exact.hpp>
#include <kacc/core/pragma_simd.hpp>
#include <kacc/core/written_loads.hpp>

#include <cstdint>
#include <type_traits>

#if defined(__AVX512F__) && !defined(KACC_DEVICE_PASS)
#include <immintrin.h>
/// The host loops of exact_lanes use AVX-512 registers and mask instructions.
#define KACC_EXACT_LANES_AVX512

namespace kacc {
namespace Impl {

/// Bit l set where |p[l]| alone lets the expansions take p[l]: |p[l]| in
/// [exact<double>::expansion_min_product, exact<double>::expansion_max], or with
/// ExactProducts at most expansion_max; never for inf or NaN. Positive doubles order as
/// their bits, so one unsigned compare tests the interval (|p| - min wraps past the top
/// below min).
template <bool ExactProducts>
KOKKOS_FORCEINLINE_FUNCTION __mmask8 lanes_magnitude_in_range(const __m512d p) {
  static_assert(
      exact<double>::expansion_min_product == 0x1p-960 && exact<double>::expansion_max == 0x1p900,
      "kacc::Impl::lanes_magnitude_in_range: bits below for another range");
  constexpr std::uint64_t lo = std::uint64_t{1023 - 960} << 52,
                          hi = std::uint64_t{1023 + 900} << 52;
  const __m512i m =
      _mm512_and_si512(_mm512_castpd_si512(p), _mm512_set1_epi64(0x7fffffffffffffffll));
  if constexpr (ExactProducts)
    return _mm512_cmple_epu64_mask(m, _mm512_set1_epi64(static_cast<long long>(hi)));
  return _mm512_cmple_epu64_mask(_mm512_sub_epi64(m, _mm512_set1_epi64(static_cast<long long>(lo))),
                                 _mm512_set1_epi64(static_cast<long long>(hi - lo)));
}

/// lanes_in_range for 8 lanes in registers: bit l set where the expansions take
/// p[l] = a[l] b[l], by magnitude or, without ExactProducts, as an exact zero (a factor
/// zero; a product that underflowed to zero is not exact).
template <bool ExactProducts>
KOKKOS_FORCEINLINE_FUNCTION __mmask8 lanes_in_range_mask(const __m512d a, const __m512d b,
                                                         const __m512d p) {
  __mmask8 in = lanes_magnitude_in_range<ExactProducts>(p);
  if constexpr (!ExactProducts) {
    const __m512d zero = _mm512_setzero_pd();
    const __mmask8 factor_zero =
        _mm512_cmp_pd_mask(a, zero, _CMP_EQ_OQ) | _mm512_cmp_pd_mask(b, zero, _CMP_EQ_OQ);
    in |= _mm512_cmp_pd_mask(p, zero, _CMP_EQ_OQ) & factor_zero;
  }
  return in;
}

/// lanes_products for a group of 8 V entries that load(g, a, b) writes into a and b, the
/// products and errors left in registers. Returns whether the expansions take every
/// product: by magnitude alone on most data, the exact zeros looked for only where that
/// fails. The entries are read back with load_written_pd.
template <bool ExactProducts, int V, class Load>
KOKKOS_FORCEINLINE_FUNCTION bool held_products(const Load& load, const std::int64_t g,
                                               __m512d (&p)[V], __m512d (&e)[V]) {
  double a[8 * V], b[8 * V];
  load(g, a, b);
  __mmask8 in = 0xff;
  KACC_PRAGMA_UNROLL(16)
  for (int v = 0; v < V; ++v) {
    const __m512d av = load_written_pd(a + 8 * v), bv = load_written_pd(b + 8 * v);
    p[v] = _mm512_mul_pd(av, bv);
    if constexpr (!ExactProducts) e[v] = _mm512_fmsub_pd(av, bv, p[v]);
    in &= lanes_magnitude_in_range<ExactProducts>(p[v]);
  }
  if constexpr (!ExactProducts) {
    if (in != 0xff) {
      in = 0xff;
      KACC_PRAGMA_UNROLL(16)
      for (int v = 0; v < V; ++v)
        in &= lanes_in_range_mask<ExactProducts>(load_written_pd(a + 8 * v),
                                                 load_written_pd(b + 8 * v), p[v]);
    }
  }
  return in == 0xff;
}

/// TwoSum of 8 lanes of finite doubles: returns s = a + b rounded, err = a + b - s exactly. With
/// AVX512DQ, vrangepd orders the operands by magnitude (its smaller and larger picks are
/// complementary at equal magnitudes, the negative one the smaller, as the Intel SDM's VRANGEPD
/// tables for opposite signs give) and Fast2Sum adds them: 5 instructions for TwoSum's 6, the same
/// s, and the same err up to the sign of a zero (which no held term sees: a sum is -0 only when
/// both operands are, and the terms start at +0). GEMV 16384^2, 2 threads, Intel Xeon, four
/// processes each: exact<double> LayoutLeft-N 148.9 -> 135.9 ms (medians), LayoutRight-N 116.7 ->
/// 114.3, with fp32 storage 84.3 -> 78.4 and 79.4 -> 74.1; DOT 2^27 within the spread between
/// processes. On an AMD EPYC (Zen 4, adders apart from the FMA units), five processes each: GEMV
/// within the spread (LayoutLeft-N 127.9 -> 131.1 ms, LayoutRight-N 111.2 -> 110.8), DOT 86.4 ->
/// 73.4.
KOKKOS_FORCEINLINE_FUNCTION __m512d held_two_sum(const __m512d a, const __m512d b, __m512d& err) {
#if defined(__AVX512DQ__)
  constexpr int larger_magnitude = 0x7, smaller_magnitude = 0x6;  // each with its own sign
  const __m512d big = _mm512_range_pd(a, b, larger_magnitude),
                small = _mm512_range_pd(a, b, smaller_magnitude);
  const __m512d s = _mm512_add_pd(big, small);
  err = _mm512_sub_pd(small, _mm512_sub_pd(s, big));
  return s;
#else
  const __m512d one = _mm512_set1_pd(1.0), minus_one = _mm512_set1_pd(-1.0);
  const __m512d s = _mm512_add_pd(a, b);
  const __m512d bb = _mm512_fmadd_pd(a, minus_one, s);  // s - a
  const __m512d a_part = _mm512_fmadd_pd(_mm512_sub_pd(s, bb), minus_one, a);
  err = _mm512_fmadd_pd(a_part, one, _mm512_sub_pd(b, bb));
  return s;
#endif
}

/// a | b, bit by bit. _mm512_or_pd needs AVX512DQ; the integer OR that stands in for it
/// elsewhere made the loops that hold the expansions slower where both exist (GEMV 16384^2
/// LayoutLeft-N, exact<double>, 131-135 -> 148-160 ms).
KOKKOS_FORCEINLINE_FUNCTION __m512d held_bits_or(const __m512d a, const __m512d b) {
#if defined(__AVX512DQ__)
  return _mm512_or_pd(a, b);
#else
  return _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(a), _mm512_castpd_si512(b)));
#endif
}

/// lanes_cascade on expansions held in registers: r[v] into the Count terms held[0 ..
/// Count) of 8 V lanes. Returns whether a nonzero remainder is left in r.
template <int Count, int V>
KOKKOS_FORCEINLINE_FUNCTION bool held_cascade(__m512d (*held)[V], __m512d (&r)[V]) {
  const __m512i magnitude = _mm512_set1_epi64(0x7fffffffffffffffll);
  __m512d nonzero = _mm512_setzero_pd();
  KACC_PRAGMA_UNROLL(16)
  for (int t = 0; t < Count; ++t) {
    nonzero = _mm512_setzero_pd();
    KACC_PRAGMA_UNROLL(16)
    for (int v = 0; v < V; ++v) {
      held[t][v] = held_two_sum(held[t][v], r[v], r[v]);
      nonzero = held_bits_or(nonzero, r[v]);
    }
    // As lanes_cascade: the leading term's remainders are not checked.
    if (t >= 1 && _mm512_test_epi64_mask(_mm512_castpd_si512(nonzero), magnitude) == 0)
      return false;
  }
  return _mm512_test_epi64_mask(_mm512_castpd_si512(nonzero), magnitude) != 0;
}

/// The loop over `groups` groups of 8 V products, group g's entries written by load(g, a, b),
/// with the expansions `terms` (Layout: an exact_lane_terms, term t of lane l at
/// terms[t 8 V + l]) held in registers. A group whose products the expansions do not take
/// goes to out_of_range(g), a cascade's nonzero remainder to remainder(r) (r: __m512d[V]);
/// either returning false ends the loop. Returns false where it ended early.
template <class Layout, int V, class Load, class OutOfRange, class Remainder>
KOKKOS_FORCEINLINE_FUNCTION bool held_add_product_groups(double* terms, const std::int64_t groups,
                                                         const Load& load,
                                                         const OutOfRange& out_of_range,
                                                         const Remainder& remainder) {
  constexpr bool exact_products = Layout::error_terms == 0;
  __m512d held[Layout::terms][V];
  KACC_PRAGMA_UNROLL(16)
  for (int t = 0; t < Layout::terms; ++t) {
    KACC_PRAGMA_UNROLL(16)
    for (int v = 0; v < V; ++v) held[t][v] = _mm512_loadu_pd(terms + (t * V + v) * 8);
  }
  bool ok = true;
  for (std::int64_t g = 0; g < groups && ok; ++g) {
    __m512d p[V], e[V];
    if (KACC_UNLIKELY(!held_products<exact_products, V>(load, g, p, e))) {
      ok = out_of_range(g);
      continue;
    }
    if (KACC_UNLIKELY(held_cascade<Layout::product_terms, V>(held, p))) ok = remainder(p);
    if constexpr (!exact_products)
      if (KACC_UNLIKELY(ok &&
                        held_cascade<Layout::error_terms, V>(held + Layout::product_terms, e)))
        ok = remainder(e);
  }
  KACC_PRAGMA_UNROLL(16)
  for (int t = 0; t < Layout::terms; ++t) {
    KACC_PRAGMA_UNROLL(16)
    for (int v = 0; v < V; ++v) _mm512_storeu_pd(terms + (t * V + v) * 8, held[t][v]);
  }
  return ok;
}

/// Lanes [W, 2 W) of x in lanes [0, W), the other lanes zero (W = 1, 2 or 4).
template <int W>
KOKKOS_FORCEINLINE_FUNCTION __m512d lanes_moved_down(const __m512d x) {
  static_assert(W == 1 || W == 2 || W == 4, "kacc::Impl::lanes_moved_down: W is 1, 2 or 4");
  const __m512i from =
      _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(W));
  return _mm512_maskz_permutexvar_pd(static_cast<__mmask8>((1u << W) - 1), from, x);
}

/// Folds the 8 V lanes of the Count terms at `terms` (term t of lane l at terms[t 8 V + l])
/// into lane 0, in registers: registers 1 .. V - 1 into register 0, then lanes [w, 2 w) into
/// [0, w) for w = 4, 2, 1, each term through held_cascade; a nonzero remainder goes to
/// remainder(r) (r: __m512d[1]). Lanes 1 .. 8 V - 1 are zero afterwards. Each step adds
/// only the lanes that still hold something, as a register (the portable fold adds all W
/// lanes at every halving, through memory). The row-summing GEMV shape folds every row: 2
/// threads, Intel Xeon, LayoutRight-N exact<double> 512^2 0.239-0.269 -> 0.118-0.125 ms,
/// 4096^2 9.04-9.66 -> 8.20-8.39, 16384^2 131.7-136.0 -> 129.8-131.5; same bits.
template <int Count, int V, class Remainder>
KOKKOS_INLINE_FUNCTION void held_fold(double* terms, const Remainder& remainder) {
  __m512d lane0[Count][1];
  KACC_PRAGMA_UNROLL(16)
  for (int t = 0; t < Count; ++t) lane0[t][0] = _mm512_loadu_pd(terms + t * 8 * V);
  const auto add = [&](const __m512d x) {
    __m512d r[1] = {x};
    if (KACC_UNLIKELY(held_cascade<Count, 1>(lane0, r))) remainder(r);
  };
  for (int v = 1; v < V; ++v) {
    KACC_PRAGMA_UNROLL(16)
    for (int t = 0; t < Count; ++t) {
      add(_mm512_loadu_pd(terms + (t * V + v) * 8));
      _mm512_storeu_pd(terms + (t * V + v) * 8, _mm512_setzero_pd());
    }
  }
  const auto halve = [&](const auto w) {
    KACC_PRAGMA_UNROLL(16)
    for (int t = 0; t < Count; ++t) {
      const __m512d upper = lanes_moved_down<decltype(w)::value>(lane0[t][0]);
      lane0[t][0] = _mm512_maskz_mov_pd(static_cast<__mmask8>((1u << w) - 1), lane0[t][0]);
      add(upper);
    }
  };
  halve(std::integral_constant<int, 4>{});
  halve(std::integral_constant<int, 2>{});
  halve(std::integral_constant<int, 1>{});
  KACC_PRAGMA_UNROLL(16)
  for (int t = 0; t < Count; ++t) _mm512_storeu_pd(terms + t * 8 * V, lane0[t][0]);
}

/// held_add_product_groups' answer for lanes_try_add_product_groups: end the loop.
struct held_give_up {
  /// A group out of range: give up.
  KOKKOS_FORCEINLINE_FUNCTION bool operator()(std::int64_t) const { return false; }
  /// A cascade's remainder: give up.
  template <int V>
  KOKKOS_FORCEINLINE_FUNCTION bool operator()(const __m512d (&)[V]) const {
    return false;
  }
};

}  // namespace Impl
}  // namespace kacc

#endif
