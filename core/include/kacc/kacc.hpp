#pragma once
/// @file
/// Everything in kacc: storage formats, accessor views, the kernels built on them, LU
/// and the solvers.

#include <kacc/blas.hpp>
#include <kacc/core.hpp>
#include <kacc/lapack.hpp>
#include <kacc/solve.hpp>
#include <kacc/sparse.hpp>
