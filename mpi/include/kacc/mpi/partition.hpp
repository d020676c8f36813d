#pragma once
/// @file
/// kacc::mpi::row_partition: which contiguous block of global rows each rank owns.

#include <kacc/core/kernel_support.hpp>
#include <kacc/mpi/collective_error.hpp>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kacc {
namespace mpi {

/// Rows [begin(r), end(r)) of a global index space [0, global_rows()) belong to rank r of the
/// communicator the partition was made on; the blocks are contiguous, in rank order, and
/// cover every row once. The same on every rank (it is made collectively).
class row_partition {
 public:
  /// Balanced blocks: the first global_rows % ranks ranks own one row more. Collective; every
  /// rank must pass the same global_rows, else every rank throws std::invalid_argument.
  static row_partition balanced(MPI_Comm comm, index_type global_rows) {
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    long long mine = static_cast<long long>(global_rows), lowest = 0, highest = 0;
    MPI_Allreduce(&mine, &lowest, 1, MPI_LONG_LONG, MPI_MIN, comm);
    MPI_Allreduce(&mine, &highest, 1, MPI_LONG_LONG, MPI_MAX, comm);
    std::string error;
    if (global_rows < 0) {
      error = "kacc::mpi::row_partition::balanced: global_rows is " + std::to_string(global_rows) +
              "; it must be >= 0";
    } else if (lowest != highest) {
      error = "kacc::mpi::row_partition::balanced: global_rows differs between ranks (" +
              std::to_string(lowest) + " to " + std::to_string(highest) + ")";
    }
    Impl::agree(comm, error);
    std::vector<index_type> offsets(static_cast<std::size_t>(ranks) + 1, 0);
    const index_type base = global_rows / ranks, extra = global_rows % ranks;
    for (int r = 0; r < ranks; ++r) offsets[r + 1] = offsets[r] + base + (r < extra ? 1 : 0);
    return row_partition(std::move(offsets));
  }

  /// Each rank names how many rows it owns, in rank order. Collective. With expected_global_rows
  /// >= 0, the counts must add up to it, else every rank throws std::invalid_argument (a
  /// partition that does not cover the rows, or covers more); a negative count throws too.
  static row_partition from_local_rows(MPI_Comm comm, index_type local_rows,
                                       index_type expected_global_rows = -1) {
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    long long mine = static_cast<long long>(local_rows);
    std::vector<long long> counts(static_cast<std::size_t>(ranks));
    MPI_Allgather(&mine, 1, MPI_LONG_LONG, counts.data(), 1, MPI_LONG_LONG, comm);
    std::vector<index_type> offsets(static_cast<std::size_t>(ranks) + 1, 0);
    std::string error;
    for (int r = 0; r < ranks; ++r) {
      if (counts[r] < 0 && error.empty()) {
        error = "kacc::mpi::row_partition::from_local_rows: rank " + std::to_string(r) +
                " names local_rows = " + std::to_string(counts[r]) + "; it must be >= 0";
      }
      offsets[r + 1] = offsets[r] + static_cast<index_type>(counts[r]);
    }
    if (error.empty() && expected_global_rows >= 0 && offsets.back() != expected_global_rows) {
      error = "kacc::mpi::row_partition::from_local_rows: the ranks' local_rows add up to " +
              std::to_string(offsets.back()) + " but the matrix has " +
              std::to_string(expected_global_rows) + " rows";
    }
    // Every rank computed the same error from the same gathered counts; agreeing is still
    // collective, so a rank whose own check differs cannot leave the others waiting.
    Impl::agree(comm, error);
    return row_partition(std::move(offsets));
  }

  /// Number of ranks.
  int ranks() const { return static_cast<int>(offsets_.size()) - 1; }
  /// Number of rows over all ranks.
  index_type global_rows() const { return offsets_.back(); }
  /// First global row of rank r.
  index_type begin(int r) const { return offsets_[static_cast<std::size_t>(r)]; }
  /// One past the last global row of rank r.
  index_type end(int r) const { return offsets_[static_cast<std::size_t>(r) + 1]; }
  /// Rows of rank r.
  index_type local_rows(int r) const { return end(r) - begin(r); }
  /// The rank owning global row i (0 <= i < global_rows()), by bisection over the blocks.
  int owner(index_type i) const {
    int lo = 0, hi = ranks();
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (begin(mid) <= i) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

 private:
  explicit row_partition(std::vector<index_type> offsets) : offsets_(std::move(offsets)) {}
  std::vector<index_type> offsets_;
};

}  // namespace mpi
}  // namespace kacc
