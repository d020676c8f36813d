#pragma once
/// @file
/// kacc's MPI layer (target kacc::mpi, built with -DKACC_ENABLE_MPI=ON): row partitions and
/// reductions of distributed vectors whose results are the same bits on every rank, and,
/// with kacc::exact<double>, for every rank count.

#include <kacc/mpi/collective_error.hpp>
#include <kacc/mpi/dot.hpp>
#include <kacc/mpi/nrm2.hpp>
#include <kacc/mpi/partition.hpp>
#include <kacc/mpi/reduce.hpp>
