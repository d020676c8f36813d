#pragma once
/// @file
/// kacc solvers: mixed-precision dense solve with iterative refinement (gesv_ir), GMRES with
/// a Krylov basis stored in any format (CB-GMRES), CG, and the Jacobi, block-Jacobi, sparse
/// approximate inverse and factorised sparse approximate inverse preconditioners with their
/// data stored in any format (or, for block-Jacobi, in a format chosen per block).

#include <kacc/solve/cg.hpp>
#include <kacc/solve/gesv_ir.hpp>
#include <kacc/solve/gmres.hpp>
#include <kacc/solve/preconditioner/adaptive_block_jacobi.hpp>
#include <kacc/solve/preconditioner/block_jacobi.hpp>
#include <kacc/solve/preconditioner/fsai.hpp>
#include <kacc/solve/preconditioner/jacobi.hpp>
#include <kacc/solve/preconditioner/sai.hpp>
