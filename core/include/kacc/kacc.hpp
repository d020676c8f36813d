#pragma once
/// @file
/// Everything in kacc: storage formats, accessor views, and the kernels built on them.

#include <kacc/core.hpp>
#if __has_include(<kacc/blas.hpp>)
#include <kacc/blas.hpp>
#endif
#if __has_include(<kacc/sparse.hpp>)
#include <kacc/sparse.hpp>
#endif
