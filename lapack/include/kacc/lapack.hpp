#pragma once
/// @file
/// kacc LAPACK: LU factorisation with partial pivoting (getrf) and its solve (getrs) on
/// kacc views of any storage format.

#include <kacc/lapack/getrf.hpp>
#include <kacc/lapack/getrs.hpp>
