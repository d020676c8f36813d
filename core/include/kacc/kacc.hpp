#pragma once
/// @file
/// Everything in kacc: storage formats, accessor views, and the kernels built on them.

#include <kacc/blas.hpp>
#include <kacc/core.hpp>
#include <kacc/solve.hpp>
#include <kacc/sparse.hpp>
