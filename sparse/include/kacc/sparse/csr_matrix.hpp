#pragma once
/// @file
/// kacc::sparse::CsrMatrix: compressed sparse rows whose values are stored in one kacc
/// format (double, float, fp16, bf16, scaled int, ...) and read in the arithmetic type.
/// Row offsets and column indices are plain Kokkos Views. The row-length statistics are
/// computed once at construction: the SpMV picks its kernel from them.

#include <kacc/core/view_algorithms.hpp>
#include <kacc/sparse/matrix_market.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kacc {
namespace sparse {

/// Row-length statistics (on the stored rows).
struct RowStats {
  double mean = 0;  ///< nnz / rows
  double max = 0;   ///< longest row
  double cv = 0;    ///< coefficient of variation: standard deviation / mean
  std::size_t nnz = 0;
};

namespace detail {

template <class Exec, class RowMap>
RowStats row_stats(const Exec& exec, const RowMap& row_map, std::size_t rows) {
  RowStats s;
  if (rows == 0) return s;
  using Offset = typename RowMap::non_const_value_type;
  Offset longest = 0;
  double sum_sq = 0;
  Kokkos::parallel_reduce(
      "kacc::sparse::row_stats::max", kacc::Impl::range(exec, 0, rows),
      KOKKOS_LAMBDA(std::size_t i, Offset & m) {
        const Offset l = row_map(i + 1) - row_map(i);
        m = l > m ? l : m;
      },
      Kokkos::Max<Offset>(longest));
  Kokkos::parallel_reduce(
      "kacc::sparse::row_stats::sum_sq", kacc::Impl::range(exec, 0, rows),
      KOKKOS_LAMBDA(std::size_t i, double& acc) {
        const double l = static_cast<double>(row_map(i + 1) - row_map(i));
        acc += l * l;
      },
      sum_sq);
  Offset nnz = 0;
  Kokkos::deep_copy(exec, nnz, Kokkos::subview(row_map, rows));
  exec.fence();
  s.nnz = static_cast<std::size_t>(nnz);
  s.mean = static_cast<double>(nnz) / static_cast<double>(rows);
  s.max = static_cast<double>(longest);
  const double var = sum_sq / static_cast<double>(rows) - s.mean * s.mean;
  s.cv = s.mean > 0 ? std::sqrt(var > 0 ? var : 0) / s.mean : 0;
  return s;
}

template <class T>
void check_fits(const char* func, const char* what, long long v) {
  if (v < 0 || static_cast<unsigned long long>(v) >
                   static_cast<unsigned long long>(std::numeric_limits<T>::max())) {
    throw std::invalid_argument(std::string(func) + ": " + what + " = " + std::to_string(v) +
                                " does not fit the index type");
  }
}

/// The types every kacc sparse matrix names: the values in Format, read as Arith (a scaled
/// Format has one scale for all values), Ordinal column indices, Offset row offsets.
template <class Arith, class Format, class Ordinal, class Offset, class Device>
struct matrix_types {
  using arithmetic_type = Arith;
  using format_type = Format;
  using ordinal_type = Ordinal;
  using offset_type = Offset;
  using device_type = typename Kokkos::View<Ordinal*, Device>::device_type;
  using execution_space = typename device_type::execution_space;
  using memory_space = typename device_type::memory_space;
  using values_type = kacc::View<Arith*, device_type, kacc::StoredAs<Format>>;
  using const_values_type = kacc::View<const Arith*, device_type, kacc::StoredAs<Format>>;
  using entries_type = Kokkos::View<Ordinal*, device_type>;
};

}  // namespace detail

template <class Arith, class Format = Arith, class Ordinal = int, class Offset = int,
          class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class CsrMatrix : public detail::matrix_types<Arith, Format, Ordinal, Offset, Device> {
  using types = detail::matrix_types<Arith, Format, Ordinal, Offset, Device>;

 public:
  // The names the members below use; the others are inherited as they are.
  using typename types::device_type;
  using typename types::entries_type;
  using typename types::execution_space;
  using typename types::values_type;
  using row_map_type = Kokkos::View<Offset*, device_type>;

  CsrMatrix() = default;

  /// Takes the arrays as they are (no copy): row_map has rows + 1 non-decreasing offsets
  /// starting at 0, entries and values row_map(rows) entries, columns in [0, cols).
  CsrMatrix(Ordinal rows, Ordinal cols, const row_map_type& row_map, const entries_type& entries,
            const values_type& values)
      : rows_(rows), cols_(cols), row_map_(row_map), entries_(entries), values_(values) {
    const char* f = "kacc::sparse::CsrMatrix";
    if (rows < 0 || cols < 0) {
      throw std::invalid_argument(std::string(f) + ": rows = " + std::to_string(rows) +
                                  " and cols = " + std::to_string(cols) + " must be non-negative");
    }
    if (row_map.extent(0) != static_cast<std::size_t>(rows) + 1) {
      throw std::invalid_argument(
          std::string(f) + ": row_map has extent " + std::to_string(row_map.extent(0)) +
          ", expected rows + 1 = " + std::to_string(static_cast<long long>(rows) + 1));
    }
    if (entries.extent(0) != values.extent(0)) {
      throw std::invalid_argument(std::string(f) + ": entries has extent " +
                                  std::to_string(entries.extent(0)) + " but values has extent " +
                                  std::to_string(values.extent(0)));
    }
    stats_ = detail::row_stats(execution_space(), row_map_, static_cast<std::size_t>(rows));
    if (stats_.nnz != entries.extent(0)) {
      throw std::invalid_argument(
          std::string(f) + ": row_map(rows) = " + std::to_string(stats_.nnz) +
          " differs from the extent of entries " + std::to_string(entries.extent(0)));
    }
  }

  KOKKOS_INLINE_FUNCTION Ordinal num_rows() const { return rows_; }
  KOKKOS_INLINE_FUNCTION Ordinal num_cols() const { return cols_; }
  KOKKOS_INLINE_FUNCTION std::size_t nnz() const { return entries_.extent(0); }
  const row_map_type& row_map() const { return row_map_; }
  const entries_type& entries() const { return entries_; }
  const values_type& values() const { return values_; }
  const RowStats& row_stats() const { return stats_; }
  /// Bytes of values + column indices + row offsets.
  std::size_t bytes() const {
    return nnz() * (sizeof(typename values_type::storage_type) + sizeof(Ordinal)) +
           row_map_.extent(0) * sizeof(Offset);
  }

 private:
  Ordinal rows_ = 0, cols_ = 0;
  row_map_type row_map_;
  entries_type entries_;
  values_type values_;
  RowStats stats_;
};

/// Builds a CsrMatrix from a host COO matrix sorted by (row, column) as read_matrix_market
/// returns it; unsorted input is sorted first. Values are converted once to Format (a
/// scaled format gets its scale from the largest magnitude).
template <class Arith, class Format = Arith, class Ordinal = int, class Offset = int,
          class Device = typename Kokkos::DefaultExecutionSpace::device_type>
CsrMatrix<Arith, Format, Ordinal, Offset, Device> make_csr(const CooMatrix& coo) {
  using M = CsrMatrix<Arith, Format, Ordinal, Offset, Device>;
  const char* f = "kacc::sparse::make_csr";
  detail::check_fits<Ordinal>(f, "rows", coo.num_rows);
  detail::check_fits<Ordinal>(f, "cols", coo.num_cols);
  detail::check_fits<Offset>(f, "nnz", static_cast<long long>(coo.nnz()));
  if (coo.row.size() != coo.nnz() || coo.col.size() != coo.nnz()) {
    throw std::invalid_argument(std::string(f) + ": row, col and val have different lengths");
  }
  const std::size_t rows = static_cast<std::size_t>(coo.num_rows), nnz = coo.nnz();
  typename M::row_map_type row_map("kacc::sparse::row_map", rows + 1);
  typename M::entries_type entries(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::entries"), nnz);
  typename M::values_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::values"), nnz);
  auto h_row_map = Kokkos::create_mirror_view(row_map);
  auto h_entries = Kokkos::create_mirror_view(entries);
  Kokkos::View<double*, Kokkos::HostSpace> h_values("kacc::sparse::values_fp64", nnz);
  Kokkos::deep_copy(h_row_map, Offset(0));
  for (std::size_t k = 0; k < nnz; ++k) {
    if (coo.row[k] < 0 || coo.row[k] >= coo.num_rows || coo.col[k] < 0 ||
        coo.col[k] >= coo.num_cols) {
      throw std::invalid_argument(std::string(f) + ": entry " + std::to_string(k) +
                                  " lies outside the matrix");
    }
    ++h_row_map(static_cast<std::size_t>(coo.row[k]) + 1);
  }
  for (std::size_t i = 0; i < rows; ++i) h_row_map(i + 1) += h_row_map(i);
  std::vector<Offset> next(h_row_map.data(), h_row_map.data() + rows);
  for (std::size_t k = 0; k < nnz; ++k) {
    const Offset p = next[static_cast<std::size_t>(coo.row[k])]++;
    h_entries(p) = static_cast<Ordinal>(coo.col[k]);
    h_values(p) = coo.val[k];
  }
  Kokkos::deep_copy(row_map, h_row_map);
  Kokkos::deep_copy(entries, h_entries);
  kacc::deep_copy(values, h_values);
  return M(static_cast<Ordinal>(coo.num_rows), static_cast<Ordinal>(coo.num_cols), row_map, entries,
           values);
}

/// The matrix on the host in COO form, values widened to double (for writing, checks).
template <class A, class F, class O, class S, class D>
CooMatrix to_coo(const CsrMatrix<A, F, O, S, D>& a) {
  auto h_row_map = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.row_map());
  auto h_entries = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.entries());
  Kokkos::View<double*, Kokkos::HostSpace> h_values("kacc::sparse::to_coo", a.nnz());
  kacc::deep_copy(h_values, a.values());
  CooMatrix c;
  c.num_rows = a.num_rows();
  c.num_cols = a.num_cols();
  c.row.resize(a.nnz());
  c.col.resize(a.nnz());
  c.val.resize(a.nnz());
  for (std::size_t i = 0; i < static_cast<std::size_t>(a.num_rows()); ++i) {
    for (auto k = h_row_map(i); k < h_row_map(i + 1); ++k) {
      c.row[k] = static_cast<std::int64_t>(i);
      c.col[k] = h_entries(k);
      c.val[k] = h_values(k);
    }
  }
  return c;
}

/// Writes a CsrMatrix (any format) as Matrix Market 'coordinate real general'.
template <class A, class F, class O, class S, class D>
void write_matrix_market(const std::string& path, const CsrMatrix<A, F, O, S, D>& a) {
  write_matrix_market(path, to_coo(a));
}

/// The same matrix with its values in another format (and arithmetic type); the index
/// arrays are shared, not copied.
template <class Arith2, class Format2, class A, class F, class O, class S, class D>
CsrMatrix<Arith2, Format2, O, S, D> convert_values(const CsrMatrix<A, F, O, S, D>& a) {
  using M = CsrMatrix<Arith2, Format2, O, S, D>;
  typename M::values_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::values"), a.nnz());
  kacc::deep_copy(values, typename CsrMatrix<A, F, O, S, D>::const_values_type(a.values()));
  return M(a.num_rows(), a.num_cols(), a.row_map(), a.entries(), values);
}

}  // namespace sparse
}  // namespace kacc
