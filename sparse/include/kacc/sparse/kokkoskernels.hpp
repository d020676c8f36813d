#pragma once
/// @file
/// Conversion between kacc::sparse::CsrMatrix and KokkosSparse::CrsMatrix (needs the
/// kacc::kokkoskernels target). The index arrays are shared when their types match, so a
/// Kokkos Kernels user brings a matrix in with one call and one value copy.

#include <kacc/sparse/csr_matrix.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

namespace kacc {
namespace sparse {

/// A CsrMatrix<Arith, Format> holding kk's pattern; values converted once into Format.
template <class Arith, class Format = Arith, class Scalar, class Ordinal, class Device, class MT,
          class Size>
CsrMatrix<Arith, Format, std::remove_const_t<Ordinal>, std::remove_const_t<Size>,
          typename KokkosSparse::CrsMatrix<Scalar, Ordinal, Device, MT, Size>::device_type>
from_kokkos(const KokkosSparse::CrsMatrix<Scalar, Ordinal, Device, MT, Size>& kk) {
  using KK = KokkosSparse::CrsMatrix<Scalar, Ordinal, Device, MT, Size>;
  using M = CsrMatrix<Arith, Format, std::remove_const_t<Ordinal>, std::remove_const_t<Size>,
                      typename KK::device_type>;
  typename M::row_map_type row_map("kacc::sparse::row_map", kk.graph.row_map.extent(0));
  typename M::entries_type entries("kacc::sparse::entries", kk.graph.entries.extent(0));
  Kokkos::deep_copy(row_map, kk.graph.row_map);
  Kokkos::deep_copy(entries, kk.graph.entries);
  typename M::values_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::values"), kk.nnz());
  kacc::deep_copy(values, kk.values);
  return M(kk.numRows(), kk.numCols(), row_map, entries, values);
}

/// A KokkosSparse::CrsMatrix<Scalar> sharing a's row offsets and column indices, values
/// converted into Scalar.
template <class Scalar, class A, class F, class O, class S, class D>
KokkosSparse::CrsMatrix<Scalar, O, typename CsrMatrix<A, F, O, S, D>::device_type, void, S>
to_kokkos(const CsrMatrix<A, F, O, S, D>& a) {
  using KK =
      KokkosSparse::CrsMatrix<Scalar, O, typename CsrMatrix<A, F, O, S, D>::device_type, void, S>;
  typename KK::values_type::non_const_type values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::sparse::kk_values"), a.nnz());
  kacc::deep_copy(values, a.values());
  return KK("kacc::sparse::to_kokkos", a.num_rows(), a.num_cols(),
            static_cast<typename KK::size_type>(a.nnz()), values, a.row_map(), a.entries());
}

}  // namespace sparse
}  // namespace kacc
