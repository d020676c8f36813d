#pragma once
/// @file
/// kacc::solve::BlockJacobi: block-diagonal preconditioner whose diagonal blocks (up to 32
/// rows) are found by supervariable agglomeration, inverted in fp64 on the host, and
/// stored inverted in a chosen format (seed 003: Ginkgo's block-Jacobi with compressed
/// storage). Applying it reads each stored entry once and computes in fp64.
///
/// Blocks: consecutive rows with the same sparsity pattern form a supervariable (as the
/// variables of one mesh node usually do); consecutive supervariables are merged while the
/// block stays within max_block_size rows (Anzt, Chow, Dongarra et al.; Ginkgo's
/// `find_blocks`). A supervariable longer than max_block_size is cut.

#include <kacc/solve/operator.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kacc {
namespace solve {

namespace Impl {

/// Block starts (ending with n) from supervariable agglomeration of a host CSR pattern.
inline std::vector<std::int64_t> agglomerate_blocks(const sparse::CooMatrix& a, int max_block) {
  const std::int64_t n = a.num_rows;
  std::vector<std::int64_t> row_start(static_cast<std::size_t>(n) + 1, 0);
  for (const auto r : a.row) ++row_start[static_cast<std::size_t>(r) + 1];
  for (std::int64_t i = 0; i < n; ++i) row_start[i + 1] += row_start[i];
  auto same_pattern = [&](std::int64_t i, std::int64_t j) {
    const auto li = row_start[i + 1] - row_start[i], lj = row_start[j + 1] - row_start[j];
    return li == lj && std::equal(a.col.begin() + row_start[i], a.col.begin() + row_start[i + 1],
                                  a.col.begin() + row_start[j]);
  };
  // Supervariables (cut at max_block rows), then greedy merging of neighbours into blocks
  // of at most max_block rows, so a supervariable is never split between blocks.
  std::vector<std::int64_t> super_starts;
  std::int64_t length = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i == 0 || length == max_block || !same_pattern(i - 1, i)) {
      super_starts.push_back(i);
      length = 0;
    }
    ++length;
  }
  super_starts.push_back(n);
  std::vector<std::int64_t> starts{0};
  std::int64_t block = 0;
  for (std::size_t k = 0; k + 1 < super_starts.size(); ++k) {
    const std::int64_t l = super_starts[k + 1] - super_starts[k];
    if (block + l > max_block) {
      starts.push_back(super_starts[k]);
      block = 0;
    }
    block += l;
  }
  if (n > 0) starts.push_back(n);
  return starts;
}

/// Inverts the s x s row-major block in place by Gauss-Jordan elimination with partial
/// pivoting; returns false when a pivot is zero or the result is not finite.
inline bool invert_block(double* a, int s) {
  std::vector<int> perm(static_cast<std::size_t>(s));
  for (int i = 0; i < s; ++i) perm[static_cast<std::size_t>(i)] = i;
  for (int k = 0; k < s; ++k) {
    int p = k;
    for (int i = k + 1; i < s; ++i)
      if (std::fabs(a[i * s + k]) > std::fabs(a[p * s + k])) p = i;
    if (!(a[p * s + k] != 0)) return false;
    if (p != k) {
      for (int j = 0; j < s; ++j) std::swap(a[k * s + j], a[p * s + j]);
      std::swap(perm[static_cast<std::size_t>(k)], perm[static_cast<std::size_t>(p)]);
    }
    const double pivot = 1.0 / a[k * s + k];
    a[k * s + k] = 1.0;
    for (int j = 0; j < s; ++j) a[k * s + j] *= pivot;
    for (int i = 0; i < s; ++i) {
      if (i == k) continue;
      const double f = a[i * s + k];
      a[i * s + k] = 0.0;
      for (int j = 0; j < s; ++j) a[i * s + j] -= f * a[k * s + j];
    }
  }
  // Row swaps of A are column swaps of A^-1: undo them.
  std::vector<double> row(static_cast<std::size_t>(s));
  for (int i = 0; i < s; ++i) {
    for (int j = 0; j < s; ++j)
      row[static_cast<std::size_t>(perm[static_cast<std::size_t>(j)])] = a[i * s + j];
    for (int j = 0; j < s; ++j) {
      a[i * s + j] = row[static_cast<std::size_t>(j)];
      if (!std::isfinite(row[static_cast<std::size_t>(j)])) return false;
    }
  }
  return true;
}

/// The 1-norm of an s x s row-major block.
inline double norm1(const double* a, int s) {
  double most = 0;
  for (int j = 0; j < s; ++j) {
    double col = 0;
    for (int i = 0; i < s; ++i) col += std::fabs(a[i * s + j]);
    most = std::fmax(most, col);
  }
  return most;
}

}  // namespace Impl

/// z = D^-1 r for the block diagonal D of A, the inverted blocks stored in Format (a
/// scaled format holds one scale for all blocks), read in fp64.
template <class Format = double, class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class BlockJacobi {
 public:
  using device_type = Device;
  using memory_space = typename Device::memory_space;
  /// The inverted blocks as stored, each row-major, one after the other.
  using values_type = kacc::View<double*, Device, kacc::StoredAs<Format>>;
  /// The same, read only.
  using const_values_type = kacc::View<const double*, Device, kacc::StoredAs<Format>>;
  using index_view = Kokkos::View<std::int64_t*, Device>;

  /// Finds the blocks of the square CsrMatrix a (any value format; at most max_block_size
  /// rows each, 1 to 32), inverts them in fp64 and stores them in Format. Throws
  /// std::invalid_argument when a is not square, max_block_size is outside 1..32, or a
  /// block is singular (naming its rows).
  template <class A, class F, class O, class S, class D>
  explicit BlockJacobi(const sparse::CsrMatrix<A, F, O, S, D>& a, int max_block_size = 32) {
    static_assert(
        std::is_same<typename sparse::CsrMatrix<A, F, O, S, D>::memory_space, memory_space>::value,
        "kacc::solve::BlockJacobi: A must live in the preconditioner's memory space");
    if (a.num_rows() != a.num_cols())
      detail::fail("BlockJacobi", "A must be square; it is " + std::to_string(a.num_rows()) +
                                      " x " + std::to_string(a.num_cols()));
    build(sparse::to_coo(a), max_block_size);
  }

  /// The same for rows given on the host whose own columns come first: rows.num_rows <=
  /// rows.num_cols, column i < num_rows being row i's diagonal column, entries in increasing
  /// row order and each row's columns in one order common to all rows (patterns are
  /// compared as sequences). The blocks hold the leading square part; the other columns
  /// only shape the rows' sparsity patterns, from which the blocks are found. This is a
  /// block of rows of a larger matrix with its columns renumbered (as one rank's rows of a
  /// kacc::mpi::distributed_csr are: its own columns, then the ghosts, each row in global
  /// column order), and gives the blocks the whole matrix would have there if the block of
  /// rows starts and ends on the whole matrix's block boundaries. Throws
  /// std::invalid_argument as the other constructor, and for rows with more rows than
  /// columns or entries out of row order.
  explicit BlockJacobi(const sparse::CooMatrix& rows, int max_block_size = 32) {
    if (rows.num_rows > rows.num_cols)
      detail::fail("BlockJacobi", "rows has " + std::to_string(rows.num_rows) + " rows but only " +
                                      std::to_string(rows.num_cols) + " columns");
    for (std::size_t k = 1; k < rows.nnz(); ++k)
      if (rows.row[k] < rows.row[k - 1])
        detail::fail("BlockJacobi",
                     "the entries of rows must be in increasing row order; "
                     "entry " +
                         std::to_string(k) + " is not");
    build(rows, max_block_size);
  }

  /// z = D^-1 r in fp64 for r of any format: row i of z is row i of its block's stored
  /// inverse times the block's part of r. Throws std::invalid_argument when r or z does
  /// not have one entry per row of A.
  template <class Exec, class R, class Z>
  void apply(const Exec& exec, const R& r, const Z& z) const {
    static_assert(is_view_v<R> && is_view_v<Z> && R::rank == 1 && Z::rank == 1,
                  "kacc::solve::BlockJacobi::apply: r and z must be rank-1 views");
    KACC_REQUIRE_ACCESSIBLE(Exec, R, "kacc::solve::BlockJacobi::apply", "r");
    KACC_REQUIRE_ACCESSIBLE(Exec, Z, "kacc::solve::BlockJacobi::apply", "z");
    if (r.extent(0) != rows() || z.extent(0) != rows())
      detail::fail("BlockJacobi::apply", "r has " + std::to_string(r.extent(0)) + " and z " +
                                             std::to_string(z.extent(0)) + " entries; A has " +
                                             std::to_string(rows()) + " rows");
    using ZV = typename Z::non_const_value_type;
    const const_values_type inverse = inverse_;
    const auto starts = starts_;
    const auto offsets = offsets_;
    const auto block_of = block_of_;
    Kokkos::parallel_for(
        std::string("kacc::solve::BlockJacobi::apply[") + format_name<Format>() + "]",
        kacc::Impl::range(exec, 0, rows()), KOKKOS_LAMBDA(const index_type i) {
          const std::int64_t k = block_of(i);
          const std::int64_t first = starts(k), s = starts(k + 1) - first;
          const std::int64_t row = offsets(k) + (i - first) * s;
          double sum = 0;
          for (std::int64_t j = 0; j < s; ++j)
            sum += convert<double>(inverse(row + j)) * convert<double>(r(first + j));
          z(i) = convert<ZV>(sum);
        });
  }

  /// Rows of A.
  std::size_t rows() const { return block_of_.extent(0); }
  /// The number of diagonal blocks.
  std::size_t blocks() const { return conditions_.size(); }
  /// First row of each block, then the row count (blocks() + 1 entries, device).
  const index_view& block_starts() const { return starts_; }
  /// The 1-norm condition number of each diagonal block, computed in fp64 on the host.
  const std::vector<double>& block_conditions() const { return conditions_; }
  /// The inverted blocks as stored.
  const values_type& inverse_blocks() const { return inverse_; }

 private:
  void build(const sparse::CooMatrix& coo, int max_block_size) {
    if (max_block_size < 1 || max_block_size > 32)
      detail::fail("BlockJacobi",
                   "max_block_size = " + std::to_string(max_block_size) + " must be in 1..32");
    const std::vector<std::int64_t> starts = Impl::agglomerate_blocks(coo, max_block_size);
    const std::int64_t n = coo.num_rows;
    const std::size_t blocks = starts.size() > 0 ? starts.size() - 1 : 0;
    std::vector<std::int64_t> offsets(blocks + 1, 0);
    for (std::size_t k = 0; k < blocks; ++k) {
      const std::int64_t s = starts[k + 1] - starts[k];
      offsets[k + 1] = offsets[k] + s * s;
    }
    std::vector<std::int64_t> block_of(static_cast<std::size_t>(n));
    for (std::size_t k = 0; k < blocks; ++k)
      for (std::int64_t i = starts[k]; i < starts[k + 1]; ++i)
        block_of[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(k);
    Kokkos::View<double*, Kokkos::HostSpace> inverse("kacc::solve::BlockJacobi::inverse_fp64",
                                                     static_cast<std::size_t>(offsets[blocks]));
    for (std::size_t e = 0; e < coo.nnz(); ++e) {
      const auto i = coo.row[e], j = coo.col[e];
      const std::size_t k = static_cast<std::size_t>(block_of[static_cast<std::size_t>(i)]);
      if (j >= starts[k] && j < starts[k + 1]) {
        const std::int64_t s = starts[k + 1] - starts[k];
        inverse(offsets[k] + (i - starts[k]) * s + (j - starts[k])) += coo.val[e];
      }
    }
    conditions_.resize(blocks);
    for (std::size_t k = 0; k < blocks; ++k) {
      const int s = static_cast<int>(starts[k + 1] - starts[k]);
      double* block = inverse.data() + offsets[k];
      const double a_norm = Impl::norm1(block, s);
      if (!Impl::invert_block(block, s))
        detail::fail("BlockJacobi", "the diagonal block of rows " + std::to_string(starts[k]) +
                                        " to " + std::to_string(starts[k + 1] - 1) +
                                        " is singular");
      conditions_[k] = a_norm * Impl::norm1(block, s);
    }
    starts_ = index_view("kacc::solve::BlockJacobi::starts", blocks + 1);
    offsets_ = index_view("kacc::solve::BlockJacobi::offsets", blocks + 1);
    block_of_ = index_view("kacc::solve::BlockJacobi::block_of", static_cast<std::size_t>(n));
    Kokkos::deep_copy(
        starts_, Kokkos::View<const std::int64_t*, Kokkos::HostSpace>(starts.data(), blocks + 1));
    Kokkos::deep_copy(
        offsets_, Kokkos::View<const std::int64_t*, Kokkos::HostSpace>(offsets.data(), blocks + 1));
    Kokkos::deep_copy(block_of_, Kokkos::View<const std::int64_t*, Kokkos::HostSpace>(
                                     block_of.data(), static_cast<std::size_t>(n)));
    inverse_ = values_type(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::solve::BlockJacobi::inverse"),
        inverse.extent(0));
    kacc::deep_copy(inverse_, inverse);
  }

  index_view starts_, offsets_, block_of_;
  values_type inverse_;
  std::vector<double> conditions_;
};

}  // namespace solve
}  // namespace kacc
