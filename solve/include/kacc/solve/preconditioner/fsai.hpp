#pragma once
/// @file
/// kacc::solve::Fsai: the factorised sparse approximate inverse M = G^T G of a symmetric
/// positive definite A (Kolotilina and Yeremin 1993), for CG: M is symmetric positive
/// definite whenever G has a positive diagonal, where the unfactorised kacc::solve::Sai is
/// not symmetric. G is lower triangular with a prescribed pattern, computed in fp64 on the
/// host and stored, with G^T, as CsrMatrices in a chosen format; applying M is two
/// kacc::sparse::spmv calls, in fp64.
///
/// Row i of G, with its nonzeros at the columns P (increasing, the last one i), is
/// g = h / sqrt(h_i) for the solution h of the local system A(P, P) h = e_i (a dense
/// Cholesky factorisation), so that (G A)(i, j) = 0 for j in P other than i and G A G^T has
/// a unit diagonal. This G minimises ||I - G L||_F over G's pattern, L being A's Cholesky
/// factor. The pattern is the lower triangle of A's, or of A^2's.

#include <kacc/solve/preconditioner/sai.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace kacc {
namespace solve {

namespace Impl {

/// coo's transpose.
inline sparse::CooMatrix transposed(const sparse::CooMatrix& coo) {
  sparse::CooMatrix t;
  t.num_rows = coo.num_cols;
  t.num_cols = coo.num_rows;
  t.row = coo.col;
  t.col = coo.row;
  t.val = coo.val;
  return t;
}

/// The rows of coo as a host_rows, sorted and merged.
inline host_rows rows_of(const sparse::CooMatrix& coo) {
  return columns_of(transposed(coo));
}

/// Entry (i, j) of h (0 where h has none).
inline double entry_of(const host_rows& h, std::int64_t i, std::int64_t j) {
  const auto begin = h.col.begin() + h.ptr[static_cast<std::size_t>(i)];
  const auto end = h.col.begin() + h.ptr[static_cast<std::size_t>(i) + 1];
  const auto at = std::lower_bound(begin, end, j);
  return at != end && *at == j ? h.val[static_cast<std::size_t>(at - h.col.begin())] : 0.0;
}

/// Solves the n x n symmetric system a h = e_{n-1} (a column-major, only its lower triangle
/// read, overwritten by its Cholesky factor) into h. Returns false when a is not
/// numerically positive definite (a pivot that is not positive and finite).
inline bool cholesky_solve_last_unit(std::vector<double>& a, int n, std::vector<double>& h) {
  auto at = [&](int i, int k) -> double& {
    return a[static_cast<std::size_t>(k) * static_cast<std::size_t>(n) +
             static_cast<std::size_t>(i)];
  };
  for (int k = 0; k < n; ++k) {
    double pivot = at(k, k);
    for (int c = 0; c < k; ++c) pivot -= at(k, c) * at(k, c);
    if (!(pivot > 0) || !std::isfinite(pivot)) return false;
    const double l = std::sqrt(pivot);
    at(k, k) = l;
    for (int i = k + 1; i < n; ++i) {
      double v = at(i, k);
      for (int c = 0; c < k; ++c) v -= at(i, c) * at(k, c);
      at(i, k) = v / l;
    }
  }
  // L y = e_{n-1} has y = e_{n-1} / L(n-1, n-1); then L^T h = y.
  h.assign(static_cast<std::size_t>(n), 0.0);
  h[static_cast<std::size_t>(n) - 1] = 1.0 / at(n - 1, n - 1);
  for (int k = n - 1; k >= 0; --k) {
    double v = h[static_cast<std::size_t>(k)];
    for (int i = k + 1; i < n; ++i) v -= at(i, k) * h[static_cast<std::size_t>(i)];
    h[static_cast<std::size_t>(k)] = v / at(k, k);
  }
  return std::all_of(h.begin(), h.end(), [](double v) { return std::isfinite(v); });
}

}  // namespace Impl

/// z = G^T G r with G the factorised sparse approximate inverse of an SPD A (see the file's
/// comment), G and G^T stored in Format (a scaled format holds one scale for each), applied
/// with two kacc::sparse::spmv calls in fp64.
template <class Format = double, class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class Fsai {
 public:
  using device_type = Device;
  using memory_space = typename Device::memory_space;
  /// G (or G^T) as stored.
  using matrix_type = sparse::CsrMatrix<double, Format, int, int, Device>;

  /// Computes G for the CsrMatrix a (any value format), which must be square and
  /// symmetric (each entry within 1e-12 of its mirror, relative to the larger), with the
  /// lower triangle of the given pattern, each row's local system in fp64 on the host (rows
  /// in parallel on the host execution space). Throws std::invalid_argument when a is not
  /// square or not symmetric (naming an entry), when a row of G would have more than
  /// max_row_entries entries (naming it), or when a row's local matrix is not positive
  /// definite, as for an A that is not (naming the row).
  template <class A, class F, class O, class S, class D>
  explicit Fsai(const sparse::CsrMatrix<A, F, O, S, D>& a, sai_pattern pattern = sai_pattern::a,
                int max_row_entries = 128) {
    static_assert(
        std::is_same<typename sparse::CsrMatrix<A, F, O, S, D>::memory_space, memory_space>::value,
        "kacc::solve::Fsai: A must live in the preconditioner's memory space");
    if (a.num_rows() != a.num_cols())
      detail::fail("Fsai", "A must be square; it is " + std::to_string(a.num_rows()) + " x " +
                               std::to_string(a.num_cols()));
    if (max_row_entries < 1)
      detail::fail("Fsai",
                   "max_row_entries = " + std::to_string(max_row_entries) + " must be positive");
    const sparse::CooMatrix g = compute_factor(sparse::to_coo(a), pattern, max_row_entries);
    g_ = sparse::make_csr<double, Format, int, int, Device>(g);
    g_transposed_ = sparse::make_csr<double, Format, int, int, Device>(Impl::transposed(g));
    work_ = Kokkos::View<double*, Device>("kacc::solve::Fsai::work", rows());
  }

  /// z = G^T (G r) in fp64 for r of any format. Throws std::invalid_argument when r or z
  /// does not have one entry per row of A. Not for concurrent use: G r goes to a work
  /// vector of the preconditioner's.
  template <class Exec, class R, class Z>
  void apply(const Exec& exec, const R& r, const Z& z) const {
    static_assert(is_view_v<R> && is_view_v<Z> && R::rank == 1 && Z::rank == 1,
                  "kacc::solve::Fsai::apply: r and z must be rank-1 views");
    if (r.extent(0) != rows() || z.extent(0) != rows())
      detail::fail("Fsai::apply", "r has " + std::to_string(r.extent(0)) + " and z " +
                                      std::to_string(z.extent(0)) + " entries; A has " +
                                      std::to_string(rows()) + " rows");
    sparse::spmv(exec, "N", 1.0, g_, r, 0.0, work_);
    sparse::spmv(exec, "N", 1.0, g_transposed_, work_, 0.0, z);
  }

  /// Rows of A.
  std::size_t rows() const { return static_cast<std::size_t>(g_.num_rows()); }
  /// G as stored (lower triangular).
  const matrix_type& factor() const { return g_; }
  /// G^T as stored (upper triangular).
  const matrix_type& factor_transposed() const { return g_transposed_; }

 private:
  static sparse::CooMatrix compute_factor(const sparse::CooMatrix& coo, sai_pattern pattern,
                                          int max_row_entries) {
    const Impl::host_rows by_row = Impl::rows_of(coo);
    const std::int64_t n = coo.num_rows;
    check_symmetric(by_row);
    // Row i's pattern: the columns up to i of row i of A (or of A^2).
    auto lower_pattern = [&](std::int64_t i) {
      auto p = Impl::sai_column_pattern(by_row, i, pattern);
      p.erase(std::upper_bound(p.begin(), p.end(), i), p.end());
      return p;
    };
    std::vector<std::int64_t> start(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t i = 0; i < n; ++i)
      start[static_cast<std::size_t>(i) + 1] =
          start[static_cast<std::size_t>(i)] + static_cast<std::int64_t>(lower_pattern(i).size());
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t length =
          start[static_cast<std::size_t>(i) + 1] - start[static_cast<std::size_t>(i)];
      if (length > max_row_entries)
        detail::fail(
            "Fsai", "row " + std::to_string(i) + " of G would have " + std::to_string(length) +
                        " entries, more than max_row_entries = " + std::to_string(max_row_entries));
    }
    sparse::CooMatrix g;
    g.num_rows = g.num_cols = n;
    const auto nnz = static_cast<std::size_t>(start.back());
    g.row.resize(nnz);
    g.col.resize(nnz);
    g.val.resize(nnz);
    std::int64_t first_failed = n;
    Kokkos::parallel_reduce(
        "kacc::solve::Fsai::rows", kacc::Impl::range(Kokkos::DefaultHostExecutionSpace(), 0, n),
        [&](const std::int64_t i, std::int64_t& failed) {
          const auto p = lower_pattern(i);
          const int m = static_cast<int>(p.size());
          std::vector<double> local(static_cast<std::size_t>(m) * static_cast<std::size_t>(m));
          for (int c = 0; c < m; ++c)
            for (int r = c; r < m; ++r)
              local[static_cast<std::size_t>(c) * static_cast<std::size_t>(m) +
                    static_cast<std::size_t>(r)] =
                  Impl::entry_of(by_row, p[static_cast<std::size_t>(r)],
                                 p[static_cast<std::size_t>(c)]);
          std::vector<double> h;
          if (m == 0 || p.back() != i || !Impl::cholesky_solve_last_unit(local, m, h) ||
              !(h.back() > 0)) {
            failed = std::min(failed, i);
            return;
          }
          const double scale = 1.0 / std::sqrt(h.back());
          for (int c = 0; c < m; ++c) {
            const auto e = static_cast<std::size_t>(start[static_cast<std::size_t>(i)] + c);
            g.row[e] = i;
            g.col[e] = p[static_cast<std::size_t>(c)];
            g.val[e] = h[static_cast<std::size_t>(c)] * scale;
          }
        },
        Kokkos::Min<std::int64_t>(first_failed));
    if (first_failed < n)
      detail::fail("Fsai", "the local matrix of row " + std::to_string(first_failed) +
                               " is not positive definite (or not finite): is A symmetric "
                               "positive definite, with a positive diagonal?");
    return g;
  }

  /// Throws std::invalid_argument naming the first entry (row by row) that is not finite
  /// or differs from its mirror by more than 1e-12 of the larger of the two.
  static void check_symmetric(const Impl::host_rows& by_row) {
    auto number = [](double v) {
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", v);
      return std::string(text);
    };
    for (std::int64_t i = 0; i < by_row.rows; ++i)
      for (auto e = by_row.ptr[static_cast<std::size_t>(i)];
           e < by_row.ptr[static_cast<std::size_t>(i) + 1]; ++e) {
        const std::int64_t j = by_row.col[static_cast<std::size_t>(e)];
        const std::string at = "A(" + std::to_string(i) + ", " + std::to_string(j) + ")";
        const double v = by_row.val[static_cast<std::size_t>(e)];
        if (!std::isfinite(v)) detail::fail("Fsai", at + " = " + number(v) + " is not finite");
        const double mirror = Impl::entry_of(by_row, j, i);
        if (!(std::fabs(v - mirror) <= 1e-12 * std::max(std::fabs(v), std::fabs(mirror))))
          detail::fail("Fsai", "A must be symmetric; " + at + " = " + number(v) + " but A(" +
                                   std::to_string(j) + ", " + std::to_string(i) +
                                   ") = " + number(mirror));
      }
  }

  matrix_type g_, g_transposed_;
  Kokkos::View<double*, Device> work_;
};

}  // namespace solve
}  // namespace kacc
