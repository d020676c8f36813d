#pragma once
/// @file
/// kacc BLAS: dot, gemv, gemm, trsv, axpy, scal and nrm2 on plain and kacc views of any formats.

#include <kacc/blas/axpy.hpp>
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemm.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/blas/trsv.hpp>
