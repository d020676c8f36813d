#pragma once
/// @file
/// kacc::mpi::spmv(exec, A, x, y): y = A x for a row-distributed matrix, the halo exchange
/// overlapped with the interior rows; kacc::mpi::exchange_ghosts(exec, A, x): the exchange
/// alone.

#include <kacc/mpi/distributed_csr.hpp>
#include <kacc/mpi/gpu_aware.hpp>
#include <kacc/sparse/spmv.hpp>

#include <type_traits>
#include <vector>

namespace kacc {
namespace mpi {

/// Where the time of one kacc::mpi::spmv went, in seconds, when the caller asks for it (the
/// phases are then fenced apart, which costs a little overlap on GPUs).
struct spmv_profile {
  double pack = 0;      ///< packing the entries others need, and posting the transfers
  double interior = 0;  ///< the interior rows, while the halo is in flight
  double wait = 0;      ///< waiting for the halo after the interior rows (exposed exchange)
  double boundary = 0;  ///< the boundary rows
};

namespace Impl {

/// y(rows(k)) = values(k) in exec.
template <class Exec, class Rows, class Values, class Y>
void scatter(const Exec& exec, const Rows& rows, const Values& values, const Y& y) {
  Kokkos::parallel_for(
      "kacc::mpi::spmv::scatter", kacc::Impl::range(exec, 0, rows.extent(0)),
      KOKKOS_LAMBDA(const index_type k) { y(rows(k)) = values(k); });
}

/// send(k) = stored(indices(k)) in exec, fenced.
template <class Exec, class Indices, class Stored, class Buffer>
void pack(const Exec& exec, const Indices& indices, const Stored& stored, const Buffer& send) {
  Kokkos::parallel_for(
      "kacc::mpi::halo::pack", kacc::Impl::range(exec, 0, send.extent(0)),
      KOKKOS_LAMBDA(const index_type k) { send(k) = stored(indices(k)); });
  exec.fence();
}

/// A halo exchange in flight: started by the constructor, completed by finish(). Its
/// buffers are the matrix's (distributed_csr::scratch), made once and reused.
template <class Matrix, class X>
class ghost_exchange {
 public:
  template <class Exec>
  ghost_exchange(const Exec& exec, const Matrix& matrix, const X& x)
      : stored_(kacc::detail::storage_of(x)), staged_(!host_accessible && !gpu_aware()) {
    static_assert(!format_traits<format_t<X>>::is_scaled,
                  "kacc::mpi: x must not be stored in a scaled format (each rank's block "
                  "would carry its own scale)");
    const auto sends = matrix.send_indices().extent(0);
    const auto send = matrix.template scratch<stored_type>(Matrix::send_buffer, sends);
    pack(exec, matrix.send_indices(), stored_, send);
    ghosts_ = Kokkos::subview(stored_, std::make_pair(matrix.local_rows(), matrix.column_count()));
    // Without GPU-aware MPI, device buffers are staged through host ones.
    const stored_type* send_data = send.data();
    stored_type* ghost_data = ghosts_.data();
    if (staged_) {
      const auto send_host = matrix.template host_scratch<stored_type>(Matrix::send_buffer, sends);
      Kokkos::deep_copy(send_host, send);
      send_data = send_host.data();
      ghosts_host_ =
          matrix.template host_scratch<stored_type>(Matrix::ghost_buffer, ghosts_.extent(0));
      ghost_data = ghosts_host_.data();
    }
    const auto& rr = matrix.recv_ranks();
    const auto& ro = matrix.recv_offsets();
    requests_.resize(rr.size() + matrix.send_ranks().size());
    for (std::size_t k = 0; k < rr.size(); ++k) {
      MPI_Irecv(ghost_data + ro[k], bytes(ro[k + 1] - ro[k]), MPI_BYTE, rr[k], tag, matrix.comm(),
                &requests_[k]);
    }
    const auto& sr = matrix.send_ranks();
    const auto& so = matrix.send_offsets();
    for (std::size_t k = 0; k < sr.size(); ++k) {
      MPI_Isend(send_data + so[k], bytes(so[k + 1] - so[k]), MPI_BYTE, sr[k], tag, matrix.comm(),
                &requests_[rr.size() + k]);
    }
  }
  ghost_exchange(const ghost_exchange&) = delete;
  ghost_exchange& operator=(const ghost_exchange&) = delete;

  /// Lets MPI move the transfers on (MPI_Testall), without waiting.
  void progress() {
    int done = 0;
    MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE);
  }

  /// Waits for every transfer and puts the ghosts in place.
  void finish() {
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    if (staged_) Kokkos::deep_copy(ghosts_, ghosts_host_);
  }

 private:
  using stored_view = decltype(kacc::detail::storage_of(std::declval<X>()));
  using stored_type = typename stored_view::non_const_value_type;
  using ghosts_type = decltype(Kokkos::subview(std::declval<stored_view>(),
                                               std::make_pair(index_type(0), index_type(0))));
  static constexpr bool host_accessible =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename stored_view::memory_space>::accessible;
  /// The tag of kacc's halo messages.
  static constexpr int tag = 0x6b61;
  static int bytes(index_type count) { return static_cast<int>(count * sizeof(stored_type)); }

  stored_view stored_;
  bool staged_;  ///< device buffers staged through host ones (no GPU-aware MPI)
  ghosts_type ghosts_;
  typename Matrix::template scratch_view<stored_type, Kokkos::HostSpace> ghosts_host_;
  std::vector<MPI_Request> requests_;
};

template <class Matrix, class X>
void check_column_vector(const char* function, const Matrix& matrix, const X& x) {
  static_assert(is_view_v<X> && X::rank == 1, "kacc::mpi: x must be a rank-1 view");
  agree(matrix.comm(), x.extent(0) == static_cast<std::size_t>(matrix.column_count())
                           ? std::string()
                           : std::string(function) + ": x has extent " +
                                 std::to_string(x.extent(0)) + "; this rank needs " +
                                 std::to_string(matrix.column_count()) + " (local rows + ghosts)");
}

/// kacc::mpi::spmv after its checks.
template <class Arith, class Acc, class Exec, class A, class F, class D, class X, class Y>
void spmv(const Exec& exec, const distributed_csr<A, F, D>& matrix, const X& x, const Y& y,
          spmv_profile* profile) {
  Kokkos::Timer timer;
  const auto lap = [&](double spmv_profile::*phase) {
    if (!profile) return;
    exec.fence();
    profile->*phase = timer.seconds();
    timer.reset();
  };
  Impl::ghost_exchange<distributed_csr<A, F, D>, X> halo(exec, matrix, x);
  lap(&spmv_profile::pack);
  const auto& chunks = matrix.interior_chunks();
  if (chunks.empty()) {
    sparse::spmv<Arith, Acc>(exec, "N", 1.0, matrix.interior(), x, 0.0, y);
  } else {
    // Open MPI moves a large message only when asked: between blocks of interior rows.
    const auto& starts = matrix.interior_chunk_starts();
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const auto rows = std::make_pair(starts[c], starts[c + 1]);
      if constexpr (is_kacc_view_v<Y>) {
        sparse::spmv<Arith, Acc>(exec, "N", 1.0, chunks[c], x, 0.0, kacc::subview(y, rows));
      } else {
        sparse::spmv<Arith, Acc>(exec, "N", 1.0, chunks[c], x, 0.0, Kokkos::subview(y, rows));
      }
      halo.progress();
    }
  }
  lap(&spmv_profile::interior);
  halo.finish();
  lap(&spmv_profile::wait);
  using T = std::conditional_t<std::is_void<Arith>::value,
                               std::common_type_t<A, arithmetic_t<X>, arithmetic_t<Y>>, Arith>;
  const auto boundary_y = matrix.template scratch<T>(distributed_csr<A, F, D>::boundary_buffer,
                                                     matrix.boundary().num_rows());
  sparse::spmv<T, Acc>(exec, "N", 1.0, matrix.boundary(), x, 0.0, boundary_y);
  Impl::scatter(exec, matrix.boundary_rows(), boundary_y, y);
  exec.fence();
  lap(&spmv_profile::boundary);
}

}  // namespace Impl

/// Fills the ghosts of the column vector x (its entries after the first A.local_rows()) with
/// the other ranks' entries, as stored (nothing is rounded). Collective. x has extent
/// A.column_count(); scaled formats are refused at compile time. MPI sees host memory: when x
/// is not host-accessible, the halo is staged through host buffers.
template <class Exec, class A, class F, class D, class X>
void exchange_ghosts(const Exec& exec, const distributed_csr<A, F, D>& matrix, const X& x) {
  Impl::check_column_vector("kacc::mpi::exchange_ghosts", matrix, x);
  Impl::ghost_exchange<distributed_csr<A, F, D>, X>(exec, matrix, x).finish();
}

/// y = A x on every rank of A.comm(). Collective.
///
/// x is a column vector of this rank (see exchange_ghosts): its first A.local_rows() entries
/// are this rank's block of x, set by the caller; spmv fills the ghosts. y has extent
/// A.local_rows(). The entries the other ranks need are packed in exec, the non-blocking
/// receives and sends posted, the interior rows multiplied (in A.interior_chunks() when
/// there are any, MPI_Testall between them so the exchange moves meanwhile), the exchange
/// completed, then the boundary rows multiplied into a buffer in the arithmetic type and
/// copied to their places in y. Its buffers are the matrix's, made once (see
/// distributed_csr::scratch). Arith and Acc as in kacc::sparse::spmv; each row is summed in its
/// global column order and rounded into y once, as on one process, so with `kacc::exact<double>` y
/// is bitwise the same for every rank count. With `profile`, the phases are fenced apart and timed.
template <class Arith = void, class Acc = void, class Exec, class A, class F, class D, class X,
          class Y>
void spmv(const Exec& exec, const distributed_csr<A, F, D>& matrix, const X& x, const Y& y,
          spmv_profile* profile = nullptr) {
  Impl::check_column_vector("kacc::mpi::spmv", matrix, x);
  Impl::agree(matrix.comm(), y.extent(0) == static_cast<std::size_t>(matrix.local_rows())
                                 ? std::string()
                                 : "kacc::mpi::spmv: y has extent " + std::to_string(y.extent(0)) +
                                       "; this rank has " + std::to_string(matrix.local_rows()) +
                                       " rows");
  Impl::spmv<Arith, Acc>(exec, matrix, x, y, profile);
}

}  // namespace mpi
}  // namespace kacc
