#pragma once
/// @file
/// kacc::mpi::spmv(exec, A, x, y): y = A x for a row-distributed matrix, the halo exchange
/// overlapped with the interior rows.

#include <kacc/mpi/distributed_csr.hpp>
#include <kacc/sparse/spmv.hpp>

#include <type_traits>
#include <vector>

namespace kacc {
namespace mpi {

/// y = A x on every rank of A.comm(). Collective.
///
/// x is a column vector of this rank: extent A.column_count(), its first A.local_rows()
/// entries this rank's block of x (set by the caller); spmv fills the rest, the ghosts, from
/// the other ranks (x's storage is exchanged as stored, so nothing is rounded; scaled formats
/// are refused at compile time because each rank's block would carry its own scale). y has
/// extent A.local_rows(). Order of work: the entries the other ranks need are packed in exec,
/// the non-blocking receives and sends are posted, the interior rows are multiplied, the
/// exchange is completed, then the boundary rows are added. MPI sees host memory: when x is
/// not host-accessible, the halo is staged through host buffers. Arith and Acc as in
/// kacc::sparse::spmv; each row is summed in its global column order, so with
/// `kacc::exact<double>` y is bitwise the same for every rank count (a boundary row that sums
/// to -0 gives +0: it is added to the interior pass's +0).
template <class Arith = void, class Acc = void, class Exec, class A, class F, class D, class X,
          class Y>
void spmv(const Exec& exec, const distributed_csr<A, F, D>& matrix, const X& x, const Y& y) {
  static_assert(is_view_v<X> && X::rank == 1, "kacc::mpi::spmv: x must be a rank-1 view");
  static_assert(!format_traits<storage_t<X>>::is_scaled,
                "kacc::mpi::spmv: x must not be stored in a scaled format (each rank's block "
                "would carry its own scale)");
  Impl::agree(matrix.comm(),
              x.extent(0) == static_cast<std::size_t>(matrix.column_count()) &&
                      y.extent(0) == static_cast<std::size_t>(matrix.local_rows())
                  ? std::string()
                  : "kacc::mpi::spmv: x has extent " + std::to_string(x.extent(0)) + " and y " +
                        std::to_string(y.extent(0)) + "; this rank needs x of " +
                        std::to_string(matrix.column_count()) + " (local rows + ghosts) and y of " +
                        std::to_string(matrix.local_rows()));
  const auto stored = kacc::detail::storage_of(x);
  using stored_type = typename decltype(stored)::non_const_value_type;
  using buffer_type = Kokkos::View<stored_type*, typename decltype(stored)::memory_space>;
  const index_type n_local = matrix.local_rows();
  const auto& send_indices = matrix.send_indices();
  buffer_type send("kacc::mpi::spmv::send", send_indices.extent(0));
  Kokkos::parallel_for(
      "kacc::mpi::spmv::pack", kacc::Impl::range(exec, 0, send.extent(0)),
      KOKKOS_LAMBDA(const index_type k) { send(k) = stored(send_indices(k)); });
  exec.fence();
  auto send_host = Kokkos::create_mirror_view(send);
  Kokkos::deep_copy(send_host, send);
  auto ghosts = Kokkos::subview(stored, std::make_pair(n_local, matrix.column_count()));
  auto ghosts_host = Kokkos::create_mirror_view(ghosts);

  const auto bytes = [](index_type count) { return static_cast<int>(count * sizeof(stored_type)); };
  std::vector<MPI_Request> requests;
  const auto& rr = matrix.recv_ranks();
  const auto& ro = matrix.recv_offsets();
  for (std::size_t k = 0; k < rr.size(); ++k) {
    requests.emplace_back();
    MPI_Irecv(ghosts_host.data() + ro[k], bytes(ro[k + 1] - ro[k]), MPI_BYTE, rr[k], 0,
              matrix.comm(), &requests.back());
  }
  const auto& sr = matrix.send_ranks();
  const auto& so = matrix.send_offsets();
  for (std::size_t k = 0; k < sr.size(); ++k) {
    requests.emplace_back();
    MPI_Isend(send_host.data() + so[k], bytes(so[k + 1] - so[k]), MPI_BYTE, sr[k], 0, matrix.comm(),
              &requests.back());
  }
  sparse::spmv<Arith, Acc>(exec, "N", 1.0, matrix.interior(), x, 0.0, y);
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  Kokkos::deep_copy(ghosts, ghosts_host);
  sparse::spmv<Arith, Acc>(exec, "N", 1.0, matrix.boundary(), x, 1.0, y);
  exec.fence();
}

}  // namespace mpi
}  // namespace kacc
