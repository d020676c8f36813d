#pragma once
/// @file
/// kacc::solve::BlockJacobi: block-diagonal preconditioner whose diagonal blocks (up to 32
/// rows) are found by supervariable agglomeration, inverted in fp64 on the host, and
/// stored inverted in a chosen format (seed 003: Ginkgo's block-Jacobi with compressed
/// storage). Applying it reads each stored entry once and computes in fp64.
///
/// The inverted blocks are stored column by column, so both loop shapes read memory in
/// order: on the host a thread takes a whole block and updates its rows side by side, one
/// column at a time (SIMD over the rows, the column converted with block loads); on a GPU
/// a thread takes a row and consecutive threads read consecutive entries of a column.
/// Each entry of z sums its row's products in column order in both; they differ only where
/// the compiler contracts a multiply and an add into an FMA in one shape and not in the
/// other (in the last bits).
///
/// Blocks: consecutive rows with the same sparsity pattern form a supervariable (as the
/// variables of one mesh node usually do); consecutive supervariables are merged while the
/// block stays within max_block_size rows (Anzt, Chow, Dongarra et al.; Ginkgo's
/// `find_blocks`). A supervariable longer than max_block_size is cut.

#include <kacc/core/block_load.hpp>
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

/// The diagonal blocks of a host matrix, inverted in fp64 on the host.
struct inverted_blocks {
  /// First row of each block, then the row count.
  std::vector<std::int64_t> starts;
  /// Where each block's s x s entries begin in `inverse`, then their total.
  std::vector<std::int64_t> offsets;
  /// The block of each row.
  std::vector<std::int64_t> block_of;
  /// The inverted blocks, each column-major, one after the other.
  Kokkos::View<double*, Kokkos::HostSpace> inverse;
  /// The 1-norm condition number of each block.
  std::vector<double> conditions;
};

/// Finds the diagonal blocks of coo (at most max_block_size rows each, 1 to 32) and
/// inverts them. Throws std::invalid_argument, naming `who`, for a max_block_size outside
/// 1..32 or a singular block (naming its rows).
inline inverted_blocks invert_diagonal_blocks(const sparse::CooMatrix& coo, int max_block_size,
                                              const char* who) {
  if (max_block_size < 1 || max_block_size > 32)
    detail::fail(who, "max_block_size = " + std::to_string(max_block_size) + " must be in 1..32");
  inverted_blocks b;
  b.starts = agglomerate_blocks(coo, max_block_size);
  const std::int64_t n = coo.num_rows;
  const std::size_t blocks = b.starts.size() > 0 ? b.starts.size() - 1 : 0;
  b.offsets.assign(blocks + 1, 0);
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::int64_t s = b.starts[k + 1] - b.starts[k];
    b.offsets[k + 1] = b.offsets[k] + s * s;
  }
  b.block_of.resize(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < blocks; ++k)
    for (std::int64_t i = b.starts[k]; i < b.starts[k + 1]; ++i)
      b.block_of[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(k);
  b.inverse = Kokkos::View<double*, Kokkos::HostSpace>(
      std::string("kacc::solve::") + who + "::inverse_fp64",
      static_cast<std::size_t>(b.offsets[blocks]));
  for (std::size_t e = 0; e < coo.nnz(); ++e) {
    const auto i = coo.row[e], j = coo.col[e];
    const std::size_t k = static_cast<std::size_t>(b.block_of[static_cast<std::size_t>(i)]);
    if (j >= b.starts[k] && j < b.starts[k + 1]) {
      const std::int64_t s = b.starts[k + 1] - b.starts[k];
      b.inverse(b.offsets[k] + (i - b.starts[k]) * s + (j - b.starts[k])) += coo.val[e];
    }
  }
  b.conditions.resize(blocks);
  for (std::size_t k = 0; k < blocks; ++k) {
    const int s = static_cast<int>(b.starts[k + 1] - b.starts[k]);
    double* block = b.inverse.data() + b.offsets[k];
    const double a_norm = norm1(block, s);
    if (!invert_block(block, s))
      detail::fail(who, "the diagonal block of rows " + std::to_string(b.starts[k]) + " to " +
                            std::to_string(b.starts[k + 1] - 1) + " is singular");
    b.conditions[k] = a_norm * norm1(block, s);
    for (int i = 0; i < s; ++i)
      for (int j = i + 1; j < s; ++j) std::swap(block[i * s + j], block[j * s + i]);
  }
  return b;
}

/// A host vector of indices copied into a new View of Device.
template <class Device>
Kokkos::View<std::int64_t*, Device> index_view_of(const std::string& label,
                                                  const std::vector<std::int64_t>& v) {
  Kokkos::View<std::int64_t*, Device> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, label),
                                        v.size());
  Kokkos::deep_copy(d, Kokkos::View<const std::int64_t*, Kokkos::HostSpace>(v.data(), v.size()));
  return d;
}

/// The checks of a block-Jacobi apply (fixed or adaptive precision): r and z rank-1 views
/// that Exec can reach, with `rows` entries each (else std::invalid_argument naming `who`).
template <class Exec, class R, class Z>
void check_block_apply(const char* who, std::size_t rows, const R& r, const Z& z) {
  static_assert(is_view_v<R> && is_view_v<Z> && R::rank == 1 && Z::rank == 1,
                "kacc::solve::BlockJacobi / AdaptiveBlockJacobi::apply: r and z must be rank-1 "
                "views");
  KACC_REQUIRE_ACCESSIBLE(Exec, R, "kacc::solve::BlockJacobi / AdaptiveBlockJacobi::apply", "r");
  KACC_REQUIRE_ACCESSIBLE(Exec, Z, "kacc::solve::BlockJacobi / AdaptiveBlockJacobi::apply", "z");
  if (r.extent(0) != rows || z.extent(0) != rows)
    detail::fail(who, "r has " + std::to_string(r.extent(0)) + " and z " +
                          std::to_string(z.extent(0)) + " entries; A has " + std::to_string(rows) +
                          " rows");
}

/// Rows i to i + 8 * Chunks - 1 of the host shape's block (see block_times): their sums
/// stay in registers, one chain of 8 rows per chunk, the chunks' chains side by side, and
/// each column's 8 * Chunks entries are converted together (block loads where the format
/// has SIMD conversions on this target).
template <int Chunks, class Inverse, class R, class Z>
KOKKOS_FORCEINLINE_FUNCTION void block_rows_times(const Inverse& inverse, std::int64_t entry,
                                                  std::int64_t first, std::int64_t s,
                                                  std::int64_t i, const R& r, const Z& z) {
  constexpr int rows = 8 * Chunks;
  double sum[rows];
  for (int l = 0; l < rows; ++l) sum[l] = 0;
  for (std::int64_t j = 0; j < s; ++j) {
    const double rj = convert<double>(r(first + j));
    const std::int64_t column = entry + j * s + i;
    double e[rows];
    if constexpr (kacc::Impl::block_load_vectorised_v<Inverse>) {
      kacc::Impl::load_block<rows>(inverse, column, e);
    } else {
      for (int l = 0; l < rows; ++l) e[l] = convert<double>(inverse(column + l));
    }
    for (int l = 0; l < rows; ++l) sum[l] += e[l] * rj;
  }
  for (int l = 0; l < rows; ++l)
    z(first + i + l) = convert<typename Z::non_const_value_type>(sum[l]);
}

/// The host shape's block: z(first + i) = sum_j E(i, j) r(first + j) for the s x s inverse E
/// stored column-major from `entry` (s <= 32), each row summed in column order. Rows go in
/// runs of 32, 16 and 8 whose sums stay in registers (a run of 32, a whole block of the
/// default size, keeps four independent chains); the last s mod 8 rows one at a time.
template <class Inverse, class R, class Z>
KOKKOS_INLINE_FUNCTION void block_times(const Inverse& inverse, std::int64_t entry,
                                        std::int64_t first, std::int64_t s, const R& r,
                                        const Z& z) {
  if (s == 32) {
    block_rows_times<4>(inverse, entry, first, s, 0, r, z);
    return;
  }
  std::int64_t i = 0;
  if (s >= 16) {
    block_rows_times<2>(inverse, entry, first, s, 0, r, z);
    i = 16;
  }
  if (i + 8 <= s) {
    block_rows_times<1>(inverse, entry, first, s, i, r, z);
    i += 8;
  }
  for (; i < s; ++i) {
    double sum = 0;
    for (std::int64_t j = 0; j < s; ++j)
      sum += convert<double>(inverse(entry + j * s + i)) * convert<double>(r(first + j));
    z(first + i) = convert<typename Z::non_const_value_type>(sum);
  }
}

/// The team shape's row: row `row` of the s x s inverse stored column-major from `entry`
/// times the block's part of r (s entries from `first`), summed in column order.
template <class Inverse, class R>
KOKKOS_INLINE_FUNCTION double block_row_times(const Inverse& inverse, std::int64_t entry,
                                              std::int64_t row, const R& r, std::int64_t first,
                                              std::int64_t s) {
  double sum = 0;
  for (std::int64_t j = 0; j < s; ++j)
    sum += convert<double>(inverse(entry + j * s + row)) * convert<double>(r(first + j));
  return sum;
}

}  // namespace Impl

/// z = D^-1 r for the block diagonal D of A, the inverted blocks stored in Format (a
/// scaled format holds one scale for all blocks), read in fp64.
template <class Format = double, class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class BlockJacobi {
 public:
  using device_type = Device;
  using memory_space = typename Device::memory_space;
  /// The inverted blocks as stored, each column-major, one after the other.
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
  /// inverse times the block's part of r, in the loop shape of Exec's space. Throws
  /// std::invalid_argument when r or z does not have one entry per row of A.
  template <class Exec, class R, class Z>
  void apply(const Exec& exec, const R& r, const Z& z) const {
    apply_in_shape<kacc::Impl::default_shape_v<Exec>>(exec, r, z);
  }

  /// apply() in the given loop shape (host: a block per thread; team: a row per thread),
  /// whatever Exec's default; see the file's comment for how the two round.
  template <kacc::Impl::shape Shape, class Exec, class R, class Z>
  void apply_in_shape(const Exec& exec, const R& r, const Z& z) const {
    Impl::check_block_apply<Exec>("BlockJacobi::apply", rows(), r, z);
    using ZV = typename Z::non_const_value_type;
    const const_values_type inverse = inverse_;
    const auto starts = starts_;
    const auto offsets = offsets_;
    const std::string label =
        std::string("kacc::solve::BlockJacobi::apply[") + format_name<Format>() + "]";
    if constexpr (Shape == kacc::Impl::shape::host) {
      Kokkos::parallel_for(
          label, kacc::Impl::range(exec, 0, blocks()), KOKKOS_LAMBDA(const index_type k) {
            Impl::block_times(inverse, offsets(k), starts(k), starts(k + 1) - starts(k), r, z);
          });
    } else {
      const auto block_of = block_of_;
      Kokkos::parallel_for(
          label, kacc::Impl::range(exec, 0, rows()), KOKKOS_LAMBDA(const index_type i) {
            const std::int64_t k = block_of(i);
            const std::int64_t first = starts(k), s = starts(k + 1) - first;
            z(i) = convert<ZV>(Impl::block_row_times(inverse, offsets(k), i - first, r, first, s));
          });
    }
  }

  /// Rows of A.
  std::size_t rows() const { return block_of_.extent(0); }
  /// The number of diagonal blocks.
  std::size_t blocks() const { return conditions_.size(); }
  /// First row of each block, then the row count (blocks() + 1 entries, device).
  const index_view& block_starts() const { return starts_; }
  /// The 1-norm condition number of each diagonal block, computed in fp64 on the host.
  const std::vector<double>& block_conditions() const { return conditions_; }
  /// The inverted blocks as stored, each column-major, one after the other.
  const values_type& inverse_blocks() const { return inverse_; }

 private:
  void build(const sparse::CooMatrix& coo, int max_block_size) {
    const Impl::inverted_blocks b =
        Impl::invert_diagonal_blocks(coo, max_block_size, "BlockJacobi");
    starts_ = Impl::index_view_of<Device>("kacc::solve::BlockJacobi::starts", b.starts);
    offsets_ = Impl::index_view_of<Device>("kacc::solve::BlockJacobi::offsets", b.offsets);
    block_of_ = Impl::index_view_of<Device>("kacc::solve::BlockJacobi::block_of", b.block_of);
    conditions_ = b.conditions;
    inverse_ = values_type(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::solve::BlockJacobi::inverse"),
        b.inverse.extent(0));
    kacc::deep_copy(inverse_, b.inverse);
  }

  index_view starts_, offsets_, block_of_;
  values_type inverse_;
  std::vector<double> conditions_;
};

}  // namespace solve
}  // namespace kacc
