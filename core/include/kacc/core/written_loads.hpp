#pragma once
/// @file
/// kacc::Impl::load_written_pd: an AVX-512 load of 8 doubles that the same thread has just
/// written to memory (a block of entries a load callable converted, values a loop computed),
/// read as two 32-byte halves. Compilers that prefer 256-bit vectors (GCC 12's tuning for
/// Intel cores with AVX-512) write such arrays 32 bytes at a time, and a 64-byte load of two
/// 32-byte stores cannot take its data from the store buffer: it waits until both stores
/// reach the cache. Each half load forwards from its store (or from a 64-byte one), so the
/// value comes a few cycles after the stores instead. On an Intel Xeon with AVX-512 (one
/// thread, 16 lanes, 16 384 products in cache), kacc::exact<double>'s register-held DOT
/// loop took 2.3 ns per product with 64-byte loads and 0.67 ns with the halves. joined_halves,
/// the two halves as one register, serves other AVX-512 code too. Host only: defined where
/// the target has AVX-512F, outside device passes.

#include <kacc/core/config.hpp>

#if defined(__AVX512F__) && !defined(KACC_DEVICE_PASS)
#include <immintrin.h>

namespace kacc {
namespace Impl {

/// lo in the low 256 bits and hi in the high ones. The zero-masking inserts with every lane
/// kept: GCC 12 warns (-Wmaybe-uninitialized) inside the _mm512_undefined_pd operand of the
/// unmasked insert and of the casts.
KOKKOS_FORCEINLINE_FUNCTION __m512d joined_halves(const __m256d lo, const __m256d hi) {
  return _mm512_maskz_insertf64x4(0xff, _mm512_maskz_insertf64x4(0xff, _mm512_setzero_pd(), lo, 0),
                                  hi, 1);
}

/// x[0 .. 8) as one register, read as two 32-byte halves (see the file comment).
KOKKOS_FORCEINLINE_FUNCTION __m512d load_written_pd(const double* x) {
  return joined_halves(_mm256_loadu_pd(x), _mm256_loadu_pd(x + 4));
}

}  // namespace Impl
}  // namespace kacc

#endif
