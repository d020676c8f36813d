#pragma once
/// @file
/// kacc::sparse::EllMatrix: every row padded to the longest row's length with explicit
/// zeros (column index of the row's last entry, or 0), so each row has the same number of
/// slots; the row lengths are kept beside (for conversion back, not read by the SpMV). Slots are
/// laid out row after row on the host (one thread reads one row's slots contiguously) and slot
/// after slot on GPUs (neighbouring threads read neighbouring rows), following the execution
/// space's default array layout. Padding can blow the storage up on irregular matrices: from_csr
/// refuses a padding factor (slots / nnz) above a settable limit with std::invalid_argument. Inf or
/// NaN in x at a padding slot's column propagates (0 * Inf), as in any ELL format.

#include <kacc/sparse/csr_matrix.hpp>

namespace kacc {
namespace sparse {

template <class Arith, class Format = Arith, class Ordinal = int, class Offset = int,
          class Device = typename Kokkos::DefaultExecutionSpace::device_type>
class EllMatrix : public detail::matrix_types<Arith, Format, Ordinal, Offset, Device> {
  using types = detail::matrix_types<Arith, Format, Ordinal, Offset, Device>;

 public:
  /// Stored entries per row, one per row.
  using lengths_type = typename types::entries_type;
  /// true: slot k of row i at i * width + k; false: at k * rows + i.
  static constexpr bool row_major =
      std::is_same<typename types::execution_space::array_layout, Kokkos::LayoutRight>::value;
  // The names the members below use; the others are inherited as they are.
  using typename types::device_type;
  using typename types::entries_type;
  using typename types::execution_space;
  using typename types::values_type;

  EllMatrix() = default;
  /// row_lengths(i): stored entries of row i (slots past it are padding); nnz their sum.
  EllMatrix(Ordinal rows, Ordinal cols, Offset width, std::size_t nnz,
            const lengths_type& row_lengths, const entries_type& entries, const values_type& values)
      : rows_(rows),
        cols_(cols),
        width_(width),
        nnz_(nnz),
        lengths_(row_lengths),
        entries_(entries),
        values_(values) {
    if (row_lengths.extent(0) != static_cast<std::size_t>(rows)) {
      throw std::invalid_argument("kacc::sparse::EllMatrix: row_lengths has extent " +
                                  std::to_string(row_lengths.extent(0)) +
                                  ", expected rows = " + std::to_string(rows));
    }
    const std::size_t slots = static_cast<std::size_t>(rows) * static_cast<std::size_t>(width);
    if (entries.extent(0) != slots || values.extent(0) != slots) {
      throw std::invalid_argument("kacc::sparse::EllMatrix: entries (" +
                                  std::to_string(entries.extent(0)) + ") and values (" +
                                  std::to_string(values.extent(0)) +
                                  ") need rows * width = " + std::to_string(slots) + " slots");
    }
  }

  KOKKOS_INLINE_FUNCTION Ordinal num_rows() const { return rows_; }
  KOKKOS_INLINE_FUNCTION Ordinal num_cols() const { return cols_; }
  KOKKOS_INLINE_FUNCTION Offset width() const { return width_; }
  /// Stored entries of the source matrix (padding excluded).
  std::size_t nnz() const { return nnz_; }
  std::size_t slots() const { return entries_.extent(0); }
  /// Explicit zeros added by padding.
  std::size_t padding() const { return slots() - nnz_; }
  /// slots / nnz (1 = no padding).
  double padding_factor() const {
    return nnz_ ? static_cast<double>(slots()) / static_cast<double>(nnz_) : 1.0;
  }
  const entries_type& entries() const { return entries_; }
  const values_type& values() const { return values_; }
  const lengths_type& row_lengths() const { return lengths_; }
  KOKKOS_INLINE_FUNCTION std::size_t slot(std::size_t i, std::size_t k) const {
    if constexpr (row_major) {
      return i * static_cast<std::size_t>(width_) + k;
    } else {
      return k * static_cast<std::size_t>(rows_) + i;
    }
  }
  std::size_t bytes() const {
    return slots() * (sizeof(typename values_type::storage_type) + sizeof(Ordinal));
  }

 private:
  Ordinal rows_ = 0, cols_ = 0;
  Offset width_ = 0;
  std::size_t nnz_ = 0;
  lengths_type lengths_;
  entries_type entries_;
  values_type values_;
};

/// Default limit of the padding factor (slots / nnz) accepted by ell_from_csr.
inline constexpr double default_max_padding_factor = 3.0;

/// ELL copy of a CSR matrix in the same formats. Throws std::invalid_argument naming
/// max_padding_factor when slots / nnz would exceed it.
template <class A, class F, class O, class S, class D>
EllMatrix<A, F, O, S, D> ell_from_csr(const CsrMatrix<A, F, O, S, D>& csr,
                                      double max_padding_factor = default_max_padding_factor) {
  using E = EllMatrix<A, F, O, S, D>;
  using Exec = typename E::execution_space;
  const std::size_t rows = static_cast<std::size_t>(csr.num_rows());
  const std::size_t width = static_cast<std::size_t>(csr.row_stats().max);
  const std::size_t slots = rows * width;
  const double factor =
      csr.nnz() ? static_cast<double>(slots) / static_cast<double>(csr.nnz()) : 1.0;
  if (factor > max_padding_factor) {
    throw std::invalid_argument(
        "kacc::sparse::ell_from_csr: padding factor " + std::to_string(factor) + " (rows " +
        std::to_string(rows) + " x width " + std::to_string(width) + " slots for " +
        std::to_string(csr.nnz()) +
        " entries) exceeds max_padding_factor = " + std::to_string(max_padding_factor));
  }
  typename E::entries_type entries(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::ell_entries"), slots);
  typename E::values_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::ell_values"), slots);
  // Scales first (same as the CSR's), then a copy slot by slot in the stored format.
  if constexpr (E::values_type::is_scaled) {
    Kokkos::deep_copy(values.scales(), csr.values().scales());
  }
  typename E::lengths_type lengths(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::ell_row_lengths"), rows);
  const E shape(static_cast<O>(rows), csr.num_cols(), static_cast<S>(width), csr.nnz(), lengths,
                entries, values);
  const auto row_map = csr.row_map();
  const auto src_entries = csr.entries();
  const auto src = csr.values().storage();
  const auto dst = values.storage();
  using Storage = typename E::values_type::storage_type;
  Kokkos::parallel_for(
      "kacc::sparse::ell_from_csr", kacc::Impl::range(Exec(), 0, rows),
      KOKKOS_LAMBDA(std::size_t i) {
        const S begin = row_map(i), end = row_map(i + 1);
        lengths(i) = static_cast<O>(end - begin);
        O pad_col = end > begin ? src_entries(end - 1) : O(0);
        for (std::size_t k = 0; k < width; ++k) {
          const std::size_t s = shape.slot(i, k);
          if (begin + static_cast<S>(k) < end) {
            entries(s) = src_entries(begin + k);
            dst(s) = src(begin + k);
          } else {
            entries(s) = pad_col;
            dst(s) = Storage{};
          }
        }
      });
  Exec().fence();
  return shape;
}

/// CSR copy of an ELL matrix: the padding slots are dropped (the row lengths are kept
/// with the ELL matrix), explicit zeros of the source stay.
template <class A, class F, class O, class S, class D>
CsrMatrix<A, F, O, S, D> csr_from_ell(const EllMatrix<A, F, O, S, D>& ell) {
  using M = CsrMatrix<A, F, O, S, D>;
  using Exec = typename M::execution_space;
  const std::size_t rows = static_cast<std::size_t>(ell.num_rows());
  const auto lengths = ell.row_lengths();
  typename M::row_map_type row_map("kacc::sparse::row_map", rows + 1);
  Kokkos::parallel_scan(
      "kacc::sparse::csr_from_ell::offsets", kacc::Impl::range(Exec(), 0, rows),
      KOKKOS_LAMBDA(std::size_t i, S & partial, bool final) {
        partial += static_cast<S>(lengths(i));
        if (final) row_map(i + 1) = partial;
      });
  typename M::entries_type entries(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::entries"), ell.nnz());
  typename M::values_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::values"), ell.nnz());
  if constexpr (M::values_type::is_scaled) {
    Kokkos::deep_copy(values.scales(), ell.values().scales());
  }
  const auto src = ell.values().storage();
  const auto src_entries = ell.entries();
  const auto dst = values.storage();
  Kokkos::parallel_for(
      "kacc::sparse::csr_from_ell", kacc::Impl::range(Exec(), 0, rows),
      KOKKOS_LAMBDA(std::size_t i) {
        const S begin = row_map(i);
        for (O k = 0; k < lengths(i); ++k) {
          entries(begin + k) = src_entries(ell.slot(i, k));
          dst(begin + k) = src(ell.slot(i, k));
        }
      });
  Exec().fence();
  return M(ell.num_rows(), ell.num_cols(), row_map, entries, values);
}

}  // namespace sparse
}  // namespace kacc
