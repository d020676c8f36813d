#pragma once
/// @file
/// kacc solvers: mixed-precision dense solve with iterative refinement (gesv_ir), GMRES with
/// a Krylov basis stored in any format (CB-GMRES), CG, and the Jacobi and block-Jacobi
/// preconditioners with their data stored in any format.

#include <kacc/solve/cg.hpp>
#include <kacc/solve/gesv_ir.hpp>
#include <kacc/solve/gmres.hpp>
#include <kacc/solve/preconditioner/block_jacobi.hpp>
#include <kacc/solve/preconditioner/jacobi.hpp>
