#pragma once
/// @file
/// kacc solvers: mixed-precision dense solve with iterative refinement (gesv_ir).

#include <kacc/solve/gesv_ir.hpp>
