#pragma once
/// @file
/// kacc sparse: CSR and ELL matrices with compact values, SpMV, Matrix Market I/O.
/// Kokkos Kernels interop is separate: <kacc/sparse/kokkoskernels.hpp>, target
/// kacc::kokkoskernels.

#include <kacc/sparse/csr_matrix.hpp>
#include <kacc/sparse/ell_matrix.hpp>
#include <kacc/sparse/matrix_market.hpp>
#include <kacc/sparse/spmv.hpp>
