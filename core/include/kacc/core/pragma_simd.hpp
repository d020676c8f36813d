#pragma once
/// @file
/// KACC_PRAGMA_SIMD: asks the host compiler to vectorise the loop that follows across its
/// iterations (OpenMP's `simd`), for loops over side-by-side accumulator lanes that compilers
/// leave scalar on their own. Empty in device passes, where a thread runs its lanes one by
/// one, and without OpenMP.

#include <kacc/core/config.hpp>

#if defined(_OPENMP) && !defined(KACC_DEVICE_PASS)
#define KACC_PRAGMA_SIMD _Pragma("omp simd")
#else
#define KACC_PRAGMA_SIMD
#endif

/// KACC_SIMD_LOOPS_BEGIN and KACC_SIMD_LOOPS_END: around the definitions whose loops carry
/// KACC_PRAGMA_SIMD, keep clang from warning (-Wpass-failed) where it does not vectorise
/// such a loop: with UndefinedBehaviorSanitizer's checks (-fsanitize=undefined) clang 14
/// vectorises none of them, and a user's `-Werror` build would fail inside kacc's headers.
/// Clang places the warning at the loop where the build has debug information (any `-g`,
/// as sanitizer builds do), else at the function the loop was inlined into, which may be
/// the user's, out of the pair's reach. unit_tests/core compiles these loops so.
#if defined(_OPENMP) && !defined(KACC_DEVICE_PASS) && defined(__clang__)
#define KACC_SIMD_LOOPS_BEGIN \
  _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Wpass-failed\"")
#define KACC_SIMD_LOOPS_END _Pragma("clang diagnostic pop")
#else
#define KACC_SIMD_LOOPS_BEGIN
#define KACC_SIMD_LOOPS_END
#endif

/// KACC_PRAGMA_UNROLL(n): asks GCC to unroll the loop that follows n times, where its own
/// limits decide differently from one instantiation to the next (GEMV's staged block loads
/// of one layout were left rolled, 1.5x slower than the other's, unrolled). Empty for other
/// compilers and in CUDA and HIP builds.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define KACC_PRAGMA_UNROLL(n) _Pragma(KACC_PRAGMA_STRING(GCC unroll n))
#define KACC_PRAGMA_STRING(text) #text
#else
#define KACC_PRAGMA_UNROLL(n)
#endif
