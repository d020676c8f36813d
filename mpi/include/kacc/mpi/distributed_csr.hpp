#pragma once
/// @file
/// kacc::mpi::distributed_csr: a sparse matrix distributed by rows over MPI ranks, each rank's
/// rows held as kacc CSR matrices (values in any format) with the halo exchange planned once.

#include <kacc/core/view_algorithms.hpp>
#include <kacc/mpi/partition.hpp>
#include <kacc/sparse/csr_matrix.hpp>
#include <kacc/sparse/matrix_market.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace kacc {
namespace mpi {

/// This rank's rows of a matrix distributed by a row_partition. Columns are renumbered into
/// a column vector of extent column_count() = local_rows() + ghost_count(): first this rank's
/// block of x, then the ghosts, the entries of x owned by other ranks that these rows need,
/// in increasing global column (so grouped by owning rank). Rows with no ghost column are
/// interior and multiply while the halo is in flight; the others are boundary rows. The
/// interior part is a kacc::sparse::CsrMatrix over all local rows (boundary rows empty), the
/// boundary part one over the boundary rows only (boundary_rows() names them), so a product
/// moves the bytes of one local SpMV plus the halo. Rows keep their entries in global column
/// order.
template <class Arith, class Format = Arith,
          class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class distributed_csr {
 public:
  /// The CSR type of the local parts (64-bit offsets, 32-bit local columns).
  using local_matrix_type = sparse::CsrMatrix<Arith, Format, int, std::int64_t, Device>;
  /// Local row indices on the device: the entries sent (for packing), the boundary rows.
  using index_view_type = Kokkos::View<int*, typename local_matrix_type::device_type>;
  /// Where the local parts live.
  using memory_space = typename local_matrix_type::memory_space;
  /// A view into one of the product's reusable buffers (see scratch()).
  template <class T, class Space = memory_space>
  using scratch_view = Kokkos::View<T*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  /// The buffers of scratch() and host_scratch(): the packed entries sent, the boundary rows'
  /// products, and (host only) the ghosts received.
  enum buffer { send_buffer = 0, boundary_buffer = 1, ghost_buffer = 2 };

  /// Collective. `local` holds this rank's rows of a global_rows x global_cols matrix: row
  /// indices local (0 ... rows.local_rows(rank) - 1), column indices global. The matrix must
  /// be square in the partition's sense (columns partitioned as rows: global_cols ==
  /// rows.global_rows()). Any rank's error (a column out of range, extents that disagree)
  /// throws std::invalid_argument on every rank.
  static distributed_csr from_local_rows(MPI_Comm comm, const row_partition& rows,
                                         const sparse::CooMatrix& local) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    distributed_csr d;
    d.comm_ = comm;
    d.rows_ = rows;
    const index_type n_local = rows.local_rows(rank), first = rows.begin(rank);
    std::string error;
    if (local.num_rows != n_local || local.num_cols != rows.global_rows()) {
      error = "kacc::mpi::distributed_csr: this rank's block has extents (" +
              std::to_string(local.num_rows) + ", " + std::to_string(local.num_cols) +
              "), the partition gives it (" + std::to_string(n_local) + ", " +
              std::to_string(rows.global_rows()) + ")";
    }
    for (std::size_t k = 0; k < local.nnz() && error.empty(); ++k) {
      if (local.row[k] < 0 || local.row[k] >= n_local || local.col[k] < 0 ||
          local.col[k] >= rows.global_rows()) {
        error = "kacc::mpi::distributed_csr: entry (" + std::to_string(local.row[k]) + ", " +
                std::to_string(local.col[k]) + ") is outside this rank's block";
      }
    }
    if (error.empty() && n_local + 1 > (index_type(1) << 30)) {
      error = "kacc::mpi::distributed_csr: a rank's block must have fewer than 2^30 rows";
    }
    Impl::agree(comm, error);

    // Ghost columns: the distinct remote columns, in increasing global order.
    std::vector<std::int64_t> ghosts;
    for (std::size_t k = 0; k < local.nnz(); ++k)
      if (local.col[k] < first || local.col[k] >= first + n_local) ghosts.push_back(local.col[k]);
    std::sort(ghosts.begin(), ghosts.end());
    ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
    d.ghosts_ = static_cast<index_type>(ghosts.size());
    d.plan_halo(ghosts);

    // Both parts over all local rows, entries sorted by (row, global column).
    std::vector<std::size_t> order(local.nnz());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return local.row[a] != local.row[b] ? local.row[a] < local.row[b]
                                          : local.col[a] < local.col[b];
    });
    std::vector<int> boundary(static_cast<std::size_t>(n_local), 0);
    const auto column_of = [&](std::int64_t c) -> std::int64_t {
      if (c >= first && c < first + n_local) return c - first;
      return n_local + (std::lower_bound(ghosts.begin(), ghosts.end(), c) - ghosts.begin());
    };
    for (std::size_t k = 0; k < local.nnz(); ++k)
      if (column_of(local.col[k]) >= n_local) boundary[static_cast<std::size_t>(local.row[k])] = 1;
    // boundary[i]: 0 for an interior row, else 1 + its row in the boundary part.
    std::vector<int> boundary_rows;
    for (index_type i = 0; i < n_local; ++i)
      if (boundary[static_cast<std::size_t>(i)]) {
        boundary_rows.push_back(static_cast<int>(i));
        boundary[static_cast<std::size_t>(i)] = static_cast<int>(boundary_rows.size());
      }
    sparse::CooMatrix part[2];
    part[0].num_rows = n_local;
    part[1].num_rows = static_cast<std::int64_t>(boundary_rows.size());
    for (auto& p : part) p.num_cols = n_local + d.ghosts_;
    for (std::size_t k : order) {
      const int b = boundary[static_cast<std::size_t>(local.row[k])];
      auto& p = part[b ? 1 : 0];
      p.row.push_back(b ? b - 1 : local.row[k]);
      p.col.push_back(column_of(local.col[k]));
      p.val.push_back(local.val[k]);
    }
    d.boundary_rows_ = index_view_type("kacc::mpi::boundary_rows", boundary_rows.size());
    auto rows_host = Kokkos::create_mirror_view(d.boundary_rows_);
    for (std::size_t k = 0; k < boundary_rows.size(); ++k) rows_host(k) = boundary_rows[k];
    Kokkos::deep_copy(d.boundary_rows_, rows_host);
    d.interior_ = sparse::make_csr<Arith, Format, int, std::int64_t, Device>(part[0]);
    d.boundary_ = sparse::make_csr<Arith, Format, int, std::int64_t, Device>(part[1]);
    d.chunk_interior();
    return d;
  }

  /// Collective: every rank reads the Matrix Market file at `path` and keeps its rows of a
  /// balanced row partition. A file that any rank cannot read, or a matrix that is not square,
  /// throws std::invalid_argument on every rank, with the reading rank's message.
  static distributed_csr read_matrix_market(MPI_Comm comm, const std::string& path) {
    sparse::CooMatrix global;
    std::string error;
    try {
      global = sparse::read_matrix_market(path);
      if (global.num_rows != global.num_cols) {
        error = "kacc::mpi::distributed_csr::read_matrix_market: " + path + " is " +
                std::to_string(global.num_rows) + " x " + std::to_string(global.num_cols) +
                "; a row-distributed matrix must be square";
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    Impl::agree(comm, error);
    const auto rows = row_partition::balanced(comm, global.num_rows);
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    sparse::CooMatrix mine;
    mine.num_rows = rows.local_rows(rank);
    mine.num_cols = global.num_cols;
    for (std::size_t k = 0; k < global.nnz(); ++k) {
      if (rows.owner(global.row[k]) != rank) continue;
      mine.row.push_back(global.row[k] - rows.begin(rank));
      mine.col.push_back(global.col[k]);
      mine.val.push_back(global.val[k]);
    }
    return from_local_rows(comm, rows, mine);
  }

  /// The communicator the matrix was made on.
  MPI_Comm comm() const { return comm_; }
  /// Rows of every rank.
  const row_partition& rows() const { return rows_; }
  /// Rows of this rank.
  index_type local_rows() const { return interior_.num_rows(); }
  /// Entries of x owned by other ranks that this rank's rows read.
  index_type ghost_count() const { return ghosts_; }
  /// Extent of a column vector: local_rows() + ghost_count().
  index_type column_count() const { return local_rows() + ghosts_; }
  /// The rows whose columns are all local; boundary rows empty.
  const local_matrix_type& interior() const { return interior_; }
  /// The rows with at least one ghost column, in increasing local row order.
  const local_matrix_type& boundary() const { return boundary_; }
  /// The local row of each row of boundary().
  const index_view_type& boundary_rows() const { return boundary_rows_; }
  /// interior() cut into consecutive blocks of rows sharing its arrays, multiplied one after
  /// the other so that the halo exchange progresses between them (MPI_Testall); empty when
  /// this rank has fewer than 2 * chunk_min_rows rows or exchanges nothing.
  const std::vector<local_matrix_type>& interior_chunks() const { return chunks_; }
  /// The first local row of each of interior_chunks(), then local_rows().
  const std::vector<index_type>& interior_chunk_starts() const { return chunk_starts_; }
  /// Fewest rows of one of interior_chunks(); a block of 2^14 rows takes tens of
  /// microseconds, so the halo is looked at often without the launches costing much.
  static constexpr index_type chunk_min_rows = index_type(1) << 14;
  /// Most interior_chunks().
  static constexpr index_type max_chunks = 16;

  /// The ranks this rank receives ghosts from, and where each one's ghosts start in the ghost
  /// part (recv_offsets has one entry more).
  const std::vector<int>& recv_ranks() const { return recv_ranks_; }
  /// See recv_ranks().
  const std::vector<index_type>& recv_offsets() const { return recv_offsets_; }
  /// The ranks this rank sends entries of its block to.
  const std::vector<int>& send_ranks() const { return send_ranks_; }
  /// Where each send rank's entries start in send_indices() (one entry more).
  const std::vector<index_type>& send_offsets() const { return send_offsets_; }
  /// Local indices of the entries sent, grouped by send rank.
  const index_view_type& send_indices() const { return send_indices_; }

  /// count entries of T in kacc::mpi::spmv's reusable buffer `which`, in memory_space: made
  /// by the first product that needs it (grown when a later one needs more) and kept, so
  /// products in a solver's loop allocate nothing. Copies of the matrix share the buffers
  /// until one grows: run one product at a time per matrix.
  template <class T>
  scratch_view<T> scratch(buffer which, std::size_t count) const {
    static_assert(alignof(T) <= alignof(double),
                  "kacc::mpi::distributed_csr::scratch: T is aligned beyond double");
    return scratch_view<T>(reinterpret_cast<T*>(grow(scratch_[which], count * sizeof(T))), count);
  }
  /// The same in host memory, where MPI reads and writes when memory_space is not
  /// host-accessible.
  template <class T>
  scratch_view<T, Kokkos::HostSpace> host_scratch(buffer which, std::size_t count) const {
    static_assert(alignof(T) <= alignof(double),
                  "kacc::mpi::distributed_csr::host_scratch: T is aligned beyond double");
    return scratch_view<T, Kokkos::HostSpace>(
        reinterpret_cast<T*>(grow(host_scratch_[which], count * sizeof(T))), count);
  }

 private:
  // Who sends what: each rank tells each owner which of its columns it needs (all-to-all of
  // counts, then of the global indices), once.
  void plan_halo(const std::vector<std::int64_t>& ghosts) {
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm_, &rank);
    MPI_Comm_size(comm_, &ranks);
    std::vector<int> need(static_cast<std::size_t>(ranks), 0), give(need.size(), 0);
    for (auto c : ghosts) ++need[static_cast<std::size_t>(rows_.owner(c))];
    MPI_Alltoall(need.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm_);
    std::vector<int> need_at(need.size(), 0), give_at(need.size(), 0);
    for (int r = 1; r < ranks; ++r) {
      need_at[r] = need_at[r - 1] + need[r - 1];
      give_at[r] = give_at[r - 1] + give[r - 1];
    }
    std::vector<long long> asked(ghosts.begin(), ghosts.end());
    std::vector<long long> wanted(static_cast<std::size_t>(give_at.back() + give.back()));
    MPI_Alltoallv(asked.data(), need.data(), need_at.data(), MPI_LONG_LONG, wanted.data(),
                  give.data(), give_at.data(), MPI_LONG_LONG, comm_);
    recv_offsets_ = {0};
    send_offsets_ = {0};
    for (int r = 0; r < ranks; ++r) {
      if (need[r]) {
        recv_ranks_.push_back(r);
        recv_offsets_.push_back(recv_offsets_.back() + need[r]);
      }
      if (give[r]) {
        send_ranks_.push_back(r);
        send_offsets_.push_back(send_offsets_.back() + give[r]);
      }
    }
    send_indices_ = index_view_type("kacc::mpi::send_indices", wanted.size());
    auto host = Kokkos::create_mirror_view(send_indices_);
    for (std::size_t k = 0; k < wanted.size(); ++k)
      host(k) = static_cast<int>(wanted[k] - rows_.begin(rank));
    Kokkos::deep_copy(send_indices_, host);
  }

  distributed_csr() : rows_(row_partition::balanced(MPI_COMM_SELF, 0)) {}

  // interior_chunks(): each chunk's row offsets rebased to 0, its entries and values views
  // into interior_'s.
  void chunk_interior() {
    const index_type n = interior_.num_rows();
    if (n < 2 * chunk_min_rows || (recv_ranks_.empty() && send_ranks_.empty())) return;
    const index_type count = std::min(max_chunks, n / chunk_min_rows);
    const auto offsets =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), interior_.row_map());
    for (index_type c = 0; c < count; ++c) {
      const index_type r0 = n * c / count, r1 = n * (c + 1) / count;
      typename local_matrix_type::row_map_type row_map("kacc::mpi::interior_chunk::row_map",
                                                       r1 - r0 + 1);
      const auto host = Kokkos::create_mirror_view(row_map);
      for (index_type i = r0; i <= r1; ++i) host(i - r0) = offsets(i) - offsets(r0);
      Kokkos::deep_copy(row_map, host);
      const auto range = std::make_pair(offsets(r0), offsets(r1));
      chunks_.emplace_back(
          static_cast<int>(r1 - r0), interior_.num_cols(), row_map,
          Kokkos::subview(interior_.entries(), range),
          typename local_matrix_type::values_type(kacc::subview(interior_.values(), range)));
      chunk_starts_.push_back(r0);
    }
    chunk_starts_.push_back(n);
  }

  // Buffers are counted in doubles, so any T up to double's alignment fits.
  template <class Buffer>
  static void* grow(Buffer& buffer, std::size_t bytes) {
    const std::size_t words = (bytes + sizeof(double) - 1) / sizeof(double);
    if (buffer.extent(0) < words) {
      buffer = Buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::mpi::spmv::scratch"),
                      words);
    }
    return buffer.data();
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  row_partition rows_;
  index_type ghosts_ = 0;
  local_matrix_type interior_, boundary_;
  std::vector<local_matrix_type> chunks_;
  std::vector<index_type> chunk_starts_;
  std::vector<int> recv_ranks_, send_ranks_;
  std::vector<index_type> recv_offsets_, send_offsets_;
  index_view_type send_indices_, boundary_rows_;
  mutable Kokkos::View<double*, memory_space> scratch_[3];
  mutable Kokkos::View<double*, Kokkos::HostSpace> host_scratch_[3];
};

}  // namespace mpi
}  // namespace kacc
