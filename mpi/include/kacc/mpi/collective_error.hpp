#pragma once
/// @file
/// kacc::mpi::Impl::agree(comm, error): turns an error found on some ranks into the same
/// exception on every rank, so that no rank is left waiting in a collective the others have
/// abandoned.

#include <mpi.h>

#include <climits>
#include <stdexcept>
#include <string>

namespace kacc {
namespace mpi {
namespace Impl {

/// Collective over `comm`: returns when `error` is empty on every rank; otherwise every rank
/// throws std::invalid_argument with the message of the lowest rank that has one, prefixed
/// with that rank's number. Every rank must call it at the same point (it is a collective),
/// which is why each kacc::mpi entry point calls it before its first reduction.
inline void agree(MPI_Comm comm, const std::string& error) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int mine = error.empty() ? INT_MAX : rank;
  int first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return;
  int length = rank == first ? static_cast<int>(error.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  std::string message = rank == first ? error : std::string(static_cast<std::size_t>(length), ' ');
  MPI_Bcast(message.data(), length, MPI_CHAR, first, comm);
  throw std::invalid_argument(message + " (on rank " + std::to_string(first) + ")");
}

}  // namespace Impl
}  // namespace mpi
}  // namespace kacc
