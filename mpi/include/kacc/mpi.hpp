#pragma once
/// @file
/// kacc's MPI layer (target kacc::mpi, built with -DKACC_ENABLE_MPI=ON): row partitions,
/// reductions of distributed vectors whose results are the same bits on every rank (and, with
/// kacc::exact<double>, for every rank count), row-distributed CSR matrices whose SpMV
/// overlaps the halo exchange with the interior rows, and the Krylov solvers (GMRES,
/// CB-GMRES, CG) with block-local Jacobi and block-Jacobi preconditioners on them.

#include <kacc/mpi/collective_error.hpp>
#include <kacc/mpi/distributed_csr.hpp>
#include <kacc/mpi/distributed_space.hpp>
#include <kacc/mpi/dot.hpp>
#include <kacc/mpi/gpu_aware.hpp>
#include <kacc/mpi/krylov.hpp>
#include <kacc/mpi/nrm2.hpp>
#include <kacc/mpi/partition.hpp>
#include <kacc/mpi/reduce.hpp>
#include <kacc/mpi/spmv.hpp>
