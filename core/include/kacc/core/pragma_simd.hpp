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
