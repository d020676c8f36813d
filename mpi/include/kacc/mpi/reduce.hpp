#pragma once
/// @file
/// kacc::mpi::allreduce_sum(comm, acc): the sum over all ranks of a kacc accumulator
/// (plain, compensated, double_double, quad_double or exact), the same bits on every rank.

#include <kacc/core/accumulator.hpp>
#include <kacc/core/exact.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace kacc {
namespace mpi {
namespace Impl {

/// MPI's reduction callback: inout[k] = in[k] joined with inout[k]. MPI hands buffers of a
/// byte datatype that need not be aligned for Acc, hence the copies.
template <class Acc>
void join_callback(void* in, void* inout, int* count, MPI_Datatype*) {
  auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(inout);
  for (int k = 0; k < *count; ++k, src += sizeof(Acc), dst += sizeof(Acc)) {
    Acc lower, upper;
    std::memcpy(&lower, src, sizeof(Acc));
    std::memcpy(&upper, dst, sizeof(Acc));
    accumulator_traits<Acc>::join(lower, upper);
    std::memcpy(dst, &lower, sizeof(Acc));
  }
}

/// Whether joining Acc is exact, so the order of the joins cannot change the result.
template <class Acc>
inline constexpr bool joins_exactly_v = std::is_same<Acc, exact<double>>::value;

}  // namespace Impl

/// Replaces each of the `count` accumulators at acc, on every rank of comm, by the sum of
/// every rank's (acc[k] joined over the ranks, k by k, in one MPI reduction). Collective.
///
/// The accumulators travel whole (an exact<double> is about 1.1 KB), so nothing is rounded
/// on the way. With `kacc::exact<double>` the joins are exact and the result is the same for
/// any number of ranks (MPI_Allreduce, in whatever order the MPI library joins). Every other
/// accumulator is joined in rank order (a non-commutative MPI operation reduced to rank 0,
/// then broadcast): the same bits on every rank and from run to run for a given rank count,
/// but a different rank count may round differently.
template <class Acc>
void allreduce_sum(MPI_Comm comm, Acc* acc, int count) {
  static_assert(std::is_trivially_copyable<Acc>::value,
                "kacc::mpi::allreduce_sum: the accumulator is sent as bytes, so it must be "
                "trivially copyable");
  MPI_Datatype bytes;
  MPI_Type_contiguous(static_cast<int>(sizeof(Acc)), MPI_BYTE, &bytes);
  MPI_Type_commit(&bytes);
  MPI_Op join;
  constexpr bool exact_join = Impl::joins_exactly_v<Acc>;
  MPI_Op_create(&Impl::join_callback<Acc>, exact_join ? 1 : 0, &join);
  std::vector<Acc> sum(acc, acc + count);
  if constexpr (exact_join) {
    MPI_Allreduce(acc, sum.data(), count, bytes, join, comm);
  } else {
    MPI_Reduce(acc, sum.data(), count, bytes, join, 0, comm);
    MPI_Bcast(sum.data(), count, bytes, 0, comm);
  }
  std::copy(sum.begin(), sum.end(), acc);
  MPI_Op_free(&join);
  MPI_Type_free(&bytes);
}

/// allreduce_sum of one accumulator.
template <class Acc>
void allreduce_sum(MPI_Comm comm, Acc& acc) {
  allreduce_sum(comm, &acc, 1);
}

}  // namespace mpi
}  // namespace kacc
