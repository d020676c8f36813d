#pragma once
/// @file
/// kacc::solve::Sai: a sparse approximate inverse M of A with a prescribed pattern (static
/// SPAI, Grote and Huckle 1997), computed in fp64 on the host and stored as a CsrMatrix in
/// a chosen format (seed 003: the mixed-precision SAI whose application is an accessor
/// SpMV). Applying it is one kacc::sparse::spmv, in fp64.
///
/// M minimises ||A M - I||_F over matrices with M's pattern, one column at a time: column
/// j of M, with its nonzeros at the rows J, solves the least-squares problem
/// min ||A(I, J) m - e_j(I)||_2, I being the rows where the columns J of A have entries
/// (dense Householder QR). M's pattern is A's, or A^2's, which approximates a wider
/// inverse at about three times the entries for a 2-D 5-point stencil.

#include <kacc/solve/operator.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kacc {
namespace solve {

/// The sparsity pattern of a sparse approximate inverse.
enum class sai_pattern {
  a,          ///< A's pattern
  a_squared,  ///< A^2's pattern (without cancellation)
};

namespace Impl {

/// A host matrix by rows: the columns of row i are col[ptr[i]..ptr[i+1]), increasing,
/// duplicates summed into one entry.
struct host_rows {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> ptr, col;
  std::vector<double> val;
};

/// The columns of coo as the rows of a host_rows (its transpose by rows), sorted and merged.
inline host_rows columns_of(const sparse::CooMatrix& coo) {
  host_rows h;
  h.rows = coo.num_cols;
  h.cols = coo.num_rows;
  std::vector<std::pair<std::int64_t, std::int64_t>> key(coo.nnz());
  std::vector<std::size_t> order(coo.nnz());
  for (std::size_t e = 0; e < coo.nnz(); ++e) {
    key[e] = std::make_pair(coo.col[e], coo.row[e]);
    order[e] = e;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t p, std::size_t q) { return key[p] < key[q]; });
  h.ptr.assign(static_cast<std::size_t>(h.rows) + 1, 0);
  for (std::size_t t = 0; t < order.size(); ++t) {
    const std::size_t e = order[t];
    if (t > 0 && key[e] == key[order[t - 1]]) {
      h.val.back() += coo.val[e];
      continue;
    }
    h.col.push_back(key[e].second);
    h.val.push_back(coo.val[e]);
    ++h.ptr[static_cast<std::size_t>(key[e].first) + 1];
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(h.rows); ++i) h.ptr[i + 1] += h.ptr[i];
  return h;
}

/// The sorted union of the column lists of the given rows of h.
inline std::vector<std::int64_t> union_of_rows(const host_rows& h, const std::int64_t* first_row,
                                               const std::int64_t* last_row) {
  std::vector<std::int64_t> u;
  for (const std::int64_t* r = first_row; r != last_row; ++r)
    u.insert(u.end(), h.col.begin() + h.ptr[static_cast<std::size_t>(*r)],
             h.col.begin() + h.ptr[static_cast<std::size_t>(*r) + 1]);
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  return u;
}

/// The rows J where column j of M has its nonzeros: column j's pattern of A, or of A^2.
/// `by_column` holds A's columns as rows (A^T by rows).
inline std::vector<std::int64_t> sai_column_pattern(const host_rows& by_column, std::int64_t j,
                                                    sai_pattern pattern) {
  const std::int64_t* begin = by_column.col.data() + by_column.ptr[static_cast<std::size_t>(j)];
  const std::int64_t* end = by_column.col.data() + by_column.ptr[static_cast<std::size_t>(j) + 1];
  if (pattern == sai_pattern::a) return std::vector<std::int64_t>(begin, end);
  return union_of_rows(by_column, begin, end);
}

/// Solves min ||B m - e_unit||_2 for the rows x cols column-major B (rows >= cols,
/// overwritten) by Householder QR; m gets cols entries. Returns false when B's columns are
/// numerically dependent (a diagonal entry of R below 1e-14 times B's largest column norm).
inline bool least_squares_unit(std::vector<double>& b, int rows, int cols, int unit,
                               std::vector<double>& m) {
  std::vector<double> rhs(static_cast<std::size_t>(rows), 0.0);
  rhs[static_cast<std::size_t>(unit)] = 1.0;
  auto at = [&](int i, int k) -> double& { return b[static_cast<std::size_t>(k) * rows + i]; };
  double largest = 0;
  for (int k = 0; k < cols; ++k) {
    double norm = 0;
    for (int i = 0; i < rows; ++i) norm = std::hypot(norm, at(i, k));
    largest = std::max(largest, norm);
  }
  if (!(largest > 0) || !std::isfinite(largest)) return false;
  for (int k = 0; k < cols; ++k) {
    double norm = 0;
    for (int i = k; i < rows; ++i) norm = std::hypot(norm, at(i, k));
    if (!(norm > 1e-14 * largest)) return false;
    // v = x + sign(x_k) ||x|| e_k, kept in place; R(k, k) = -sign(x_k) ||x||.
    const double alpha = at(k, k) >= 0 ? -norm : norm;
    at(k, k) -= alpha;
    const double vtv = -2 * alpha * at(k, k);  // ||v||^2 = 2 ||x|| (||x|| + |x_k|)
    for (int c = k + 1; c < cols; ++c) {
      double dot = 0;
      for (int i = k; i < rows; ++i) dot += at(i, k) * at(i, c);
      const double f = 2 * dot / vtv;
      for (int i = k; i < rows; ++i) at(i, c) -= f * at(i, k);
    }
    double dot = 0;
    for (int i = k; i < rows; ++i) dot += at(i, k) * rhs[static_cast<std::size_t>(i)];
    const double f = 2 * dot / vtv;
    for (int i = k; i < rows; ++i) rhs[static_cast<std::size_t>(i)] -= f * at(i, k);
    at(k, k) = alpha;
  }
  m.assign(static_cast<std::size_t>(cols), 0.0);
  for (int k = cols - 1; k >= 0; --k) {
    double v = rhs[static_cast<std::size_t>(k)];
    for (int c = k + 1; c < cols; ++c) v -= at(k, c) * m[static_cast<std::size_t>(c)];
    m[static_cast<std::size_t>(k)] = v / at(k, k);
  }
  return std::all_of(m.begin(), m.end(), [](double v) { return std::isfinite(v); });
}

}  // namespace Impl

/// z = M r with M a sparse approximate inverse of A (see the file's comment), stored in
/// Format (a scaled format holds one scale for all of M), applied with kacc::sparse::spmv
/// in fp64.
template <class Format = double, class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class Sai {
 public:
  using device_type = Device;
  using memory_space = typename Device::memory_space;
  /// M as stored.
  using matrix_type = sparse::CsrMatrix<double, Format, int, int, Device>;

  /// Computes M for the square CsrMatrix a (any value format) with the given pattern, each
  /// column's least-squares problem in fp64 on the host (columns in parallel on the host
  /// execution space). Throws std::invalid_argument when a is not square, when a column of
  /// M would have more than max_column_entries entries (naming it), or when a column's
  /// problem has dependent columns or a non-finite solution, as for a singular A or a NaN
  /// in A (naming the column).
  template <class A, class F, class O, class S, class D>
  explicit Sai(const sparse::CsrMatrix<A, F, O, S, D>& a, sai_pattern pattern = sai_pattern::a,
               int max_column_entries = 64) {
    static_assert(
        std::is_same<typename sparse::CsrMatrix<A, F, O, S, D>::memory_space, memory_space>::value,
        "kacc::solve::Sai: A must live in the preconditioner's memory space");
    if (a.num_rows() != a.num_cols())
      detail::fail("Sai", "A must be square; it is " + std::to_string(a.num_rows()) + " x " +
                              std::to_string(a.num_cols()));
    if (max_column_entries < 1)
      detail::fail("Sai", "max_column_entries = " + std::to_string(max_column_entries) +
                              " must be positive");
    m_ = sparse::make_csr<double, Format, int, int, Device>(
        approximate_inverse(sparse::to_coo(a), pattern, max_column_entries));
  }

  /// z = M r in fp64 for r of any format. Throws std::invalid_argument when r or z does
  /// not have one entry per row of A.
  template <class Exec, class R, class Z>
  void apply(const Exec& exec, const R& r, const Z& z) const {
    static_assert(is_view_v<R> && is_view_v<Z> && R::rank == 1 && Z::rank == 1,
                  "kacc::solve::Sai::apply: r and z must be rank-1 views");
    if (r.extent(0) != rows() || z.extent(0) != rows())
      detail::fail("Sai::apply", "r has " + std::to_string(r.extent(0)) + " and z " +
                                     std::to_string(z.extent(0)) + " entries; A has " +
                                     std::to_string(rows()) + " rows");
    sparse::spmv(exec, "N", 1.0, m_, r, 0.0, z);
  }

  /// Rows of A.
  std::size_t rows() const { return static_cast<std::size_t>(m_.num_rows()); }
  /// M as stored.
  const matrix_type& inverse() const { return m_; }

 private:
  static sparse::CooMatrix approximate_inverse(const sparse::CooMatrix& coo, sai_pattern pattern,
                                               int max_column_entries) {
    const Impl::host_rows by_column = Impl::columns_of(coo);
    const std::int64_t n = coo.num_rows;
    // First the patterns (their sizes place each column's entries), then the solves.
    std::vector<std::int64_t> start(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t j = 0; j < n; ++j)
      start[static_cast<std::size_t>(j) + 1] =
          start[static_cast<std::size_t>(j)] +
          static_cast<std::int64_t>(Impl::sai_column_pattern(by_column, j, pattern).size());
    std::int64_t first_too_long = n;
    for (std::int64_t j = 0; j < n && first_too_long == n; ++j)
      if (start[static_cast<std::size_t>(j) + 1] - start[static_cast<std::size_t>(j)] >
          max_column_entries)
        first_too_long = j;
    if (first_too_long < n)
      detail::fail("Sai", "column " + std::to_string(first_too_long) + " of M would have " +
                              std::to_string(start[static_cast<std::size_t>(first_too_long) + 1] -
                                             start[static_cast<std::size_t>(first_too_long)]) +
                              " entries, more than max_column_entries = " +
                              std::to_string(max_column_entries));
    sparse::CooMatrix m;
    m.num_rows = m.num_cols = n;
    const auto nnz = static_cast<std::size_t>(start.back());
    m.row.resize(nnz);
    m.col.resize(nnz);
    m.val.resize(nnz);
    std::int64_t first_failed = n;
    Kokkos::parallel_reduce(
        "kacc::solve::Sai::columns", kacc::Impl::range(Kokkos::DefaultHostExecutionSpace(), 0, n),
        [&](const std::int64_t j, std::int64_t& failed) {
          const auto cols = Impl::sai_column_pattern(by_column, j, pattern);
          const auto rows = Impl::union_of_rows(by_column, cols.data(), cols.data() + cols.size());
          const auto unit = std::lower_bound(rows.begin(), rows.end(), j);
          const int nr = static_cast<int>(rows.size()), nc = static_cast<int>(cols.size());
          std::vector<double> b(static_cast<std::size_t>(nr) * static_cast<std::size_t>(nc), 0.0);
          std::vector<double> x;
          // A(I, J): entry (i, k) of A is in row i of A, found by its column in by_row.
          for (int c = 0; c < nc; ++c) {
            const std::int64_t k = cols[static_cast<std::size_t>(c)];
            for (auto e = by_column.ptr[static_cast<std::size_t>(k)];
                 e < by_column.ptr[static_cast<std::size_t>(k) + 1]; ++e) {
              const auto i = std::lower_bound(rows.begin(), rows.end(),
                                              by_column.col[static_cast<std::size_t>(e)]) -
                             rows.begin();
              b[static_cast<std::size_t>(c) * nr + static_cast<std::size_t>(i)] =
                  by_column.val[static_cast<std::size_t>(e)];
            }
          }
          const bool solved = nc > 0 && nr >= nc && unit != rows.end() && *unit == j &&
                              Impl::least_squares_unit(b, nr, nc, int(unit - rows.begin()), x);
          if (!solved) {
            failed = std::min(failed, j);
            return;
          }
          for (int c = 0; c < nc; ++c) {
            const auto e = static_cast<std::size_t>(start[static_cast<std::size_t>(j)] + c);
            m.row[e] = cols[static_cast<std::size_t>(c)];
            m.col[e] = j;
            m.val[e] = x[static_cast<std::size_t>(c)];
          }
        },
        Kokkos::Min<std::int64_t>(first_failed));
    if (first_failed < n)
      detail::fail("Sai", "column " + std::to_string(first_failed) +
                              " of M has no least-squares solution: the columns of A in its "
                              "pattern are dependent or not finite, or none has an entry in row " +
                              std::to_string(first_failed) + " (is A singular?)");
    return m;
  }

  matrix_type m_;
};

}  // namespace solve
}  // namespace kacc
