#pragma once
/// @file
/// kacc::sparse::spmv: y = alpha * op(A) * x + beta * y for CsrMatrix and EllMatrix with
/// values in any kacc format and x, y plain or kacc views of any formats. Products and
/// sums are done in the common arithmetic type of A, x and y (fp64 when any of them
/// computes in fp64); each entry is converted once, in registers.
///
/// BLAS semantics: beta == 0 writes y without reading it (NaN in y does not propagate),
/// alpha == 0 scales y by beta without touching A or x.
///
/// CSR kernels (one templated source each, for every format):
///   - row: one thread per row, the row's sum in a register;
///   - load_balanced: merge-path (Merrill & Garland): the path through rows and nonzeros
///     is cut in equal pieces, so a row of 10^5 entries is shared by several threads;
///     partial sums of cut rows are carried to a fix-up pass that rounds each y entry once.
/// SpmvAlgorithm::automatic picks load_balanced when the rows are irregular (longest row
/// > 8x the mean, or coefficient of variation of the row lengths > 1), else row.
/// Transpose ("T"): each row scatters its products with atomic adds into an Arith
/// workspace of length cols (so y may be stored in any format), then
/// y = alpha * workspace + beta * y. No transposed copy is made.

#include <kacc/sparse/csr_matrix.hpp>
#include <kacc/sparse/ell_matrix.hpp>

#include <string>

namespace kacc {
namespace sparse {

enum class SpmvAlgorithm { automatic, row, load_balanced };

inline const char* algorithm_name(SpmvAlgorithm a) {
  return a == SpmvAlgorithm::row             ? "row"
         : a == SpmvAlgorithm::load_balanced ? "load_balanced"
                                             : "automatic";
}

/// The CSR kernel SpmvAlgorithm::automatic takes for these row statistics.
inline SpmvAlgorithm choose_algorithm(const RowStats& s) {
  const bool irregular = s.max > 8 * s.mean || s.cv > 1.0;
  return irregular && s.max > 32 ? SpmvAlgorithm::load_balanced : SpmvAlgorithm::row;
}

template <class T>
struct is_csr : std::false_type {};
template <class A, class F, class O, class S, class D>
struct is_csr<CsrMatrix<A, F, O, S, D>> : std::true_type {};
template <class T>
struct is_ell : std::false_type {};
template <class A, class F, class O, class S, class D>
struct is_ell<EllMatrix<A, F, O, S, D>> : std::true_type {};

namespace detail {

/// Writes alpha * sum + beta * y(i) into y(i), converting once; beta == 0 never reads y.
template <class T, class Y, class I>
KOKKOS_FORCEINLINE_FUNCTION void update(const Y& y, const I& i, const T& alpha, const T& sum,
                                        const T& beta) {
  using V = typename Y::non_const_value_type;
  if (beta == T(0)) {
    y(i) = convert<V>(alpha * sum);
  } else {
    y(i) = convert<V>(alpha * sum + beta * convert<T>(y(i)));
  }
}

template <class Matrix>
std::string kernel_label(const char* kernel) {
  return std::string("kacc::sparse::spmv[") + kernel + "," +
         format_name<typename Matrix::format_type>() + "]";
}

template <class T, class Exec, class Y>
void scale_y(const Exec& exec, const T& beta, const Y& y) {
  Kokkos::parallel_for(
      "kacc::sparse::spmv[scale_y]", Kokkos::RangePolicy<Exec>(exec, 0, y.extent(0)),
      KOKKOS_LAMBDA(std::size_t i) { update(y, i, T(0), T(0), beta); });
}

template <class T, class Exec, class M, class X, class Y>
void csr_row(const Exec& exec, const T& alpha, const M& a, const X& x, const T& beta, const Y& y) {
  using O = typename M::ordinal_type;
  using S = typename M::offset_type;
  const auto row_map = a.row_map();
  const auto entries = a.entries();
  const typename M::const_values_type values = a.values();
  Kokkos::parallel_for(
      kernel_label<M>("csr_row"), Kokkos::RangePolicy<Exec>(exec, 0, a.num_rows()),
      KOKKOS_LAMBDA(const O i) {
        T sum = 0;
        const S end = row_map(i + 1);
        for (S k = row_map(i); k < end; ++k) {
          sum += convert<T>(values(k)) * convert<T>(x(entries(k)));
        }
        update(y, i, alpha, sum, beta);
      });
}

/// First point (row ends consumed, nonzeros consumed) of merge-path diagonal d.
template <class RowMap, class O, class S>
KOKKOS_INLINE_FUNCTION void merge_path_search(const RowMap& row_map, O rows, S nnz, S d, O& i,
                                              S& j) {
  S lo = d > nnz ? d - nnz : S(0);
  S hi = d < static_cast<S>(rows) ? d : static_cast<S>(rows);
  while (lo < hi) {
    const S mid = lo + (hi - lo) / 2;
    if (row_map(mid + 1) <= d - mid - 1) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  i = static_cast<O>(lo);
  j = d - lo;
}

template <class T, class Exec, class M, class X, class Y>
void csr_merge_path(const Exec& exec, const T& alpha, const M& a, const X& x, const T& beta,
                    const Y& y) {
  using O = typename M::ordinal_type;
  using S = typename M::offset_type;
  using Mem = typename M::memory_space;
  const O rows = a.num_rows();
  const S nnz = static_cast<S>(a.nnz());
  const long long total = static_cast<long long>(rows) + static_cast<long long>(nnz);
  if (total == 0) return;
  const long long wanted = static_cast<long long>(exec.concurrency()) * 4;
  const long long chunks_ll = std::max(1LL, std::min(wanted, (total + 63) / 64));
  const long long per_ll = (total + chunks_ll - 1) / chunks_ll;
  const S per = static_cast<S>(per_ll);
  const std::size_t chunks = static_cast<std::size_t>((total + per_ll - 1) / per_ll);
  Kokkos::View<O*, Mem> carry_row(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kacc::sparse::carry_row"), chunks);
  Kokkos::View<T*, Mem> carry(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kacc::sparse::carry"), chunks);
  Kokkos::View<O*, Mem> head_row(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kacc::sparse::head_row"), chunks);
  Kokkos::View<T*, Mem> head(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kacc::sparse::head"), chunks);
  const auto row_map = a.row_map();
  const auto entries = a.entries();
  const typename M::const_values_type values = a.values();
  const S end_diag = static_cast<S>(total);
  Kokkos::parallel_for(
      kernel_label<M>("csr_merge_path"), Kokkos::RangePolicy<Exec>(exec, 0, chunks),
      KOKKOS_LAMBDA(const std::size_t t) {
        const S d0 = static_cast<S>(t) * per;
        const S d1 = end_diag - d0 > per ? d0 + per : end_diag;
        O i, i1;
        S j, j1;
        merge_path_search(row_map, rows, nnz, d0, i, j);
        merge_path_search(row_map, rows, nnz, d1, i1, j1);
        const O i0 = i;
        const bool started_mid = i0 < rows && j > row_map(i0);
        head_row(t) = -1;
        T sum = 0;
        for (; i < i1; ++i) {
          const S end = row_map(i + 1);
          for (; j < end; ++j) sum += convert<T>(values(j)) * convert<T>(x(entries(j)));
          if (i == i0 && started_mid) {
            head(t) = sum;
            head_row(t) = i;
          } else {
            update(y, i, alpha, sum, beta);
          }
          sum = 0;
        }
        for (; j < j1; ++j) sum += convert<T>(values(j)) * convert<T>(x(entries(j)));
        carry_row(t) = i1;
        carry(t) = sum;
      });
  Kokkos::parallel_for(
      kernel_label<M>("csr_merge_path_fixup"), Kokkos::RangePolicy<Exec>(exec, 0, chunks),
      KOKKOS_LAMBDA(const std::size_t t) {
        const O r = head_row(t);
        if (r < 0) return;
        T sum = head(t);
        for (std::size_t u = t; u > 0 && carry_row(u - 1) == r; --u) sum += carry(u - 1);
        update(y, r, alpha, sum, beta);
      });
}

template <class T, class Exec, class M, class X, class Y>
void ell_row(const Exec& exec, const T& alpha, const M& a, const X& x, const T& beta, const Y& y) {
  using O = typename M::ordinal_type;
  const auto entries = a.entries();
  const typename M::const_values_type values = a.values();
  const M shape = a;
  const O width = static_cast<O>(a.width());
  Kokkos::parallel_for(
      kernel_label<M>("ell_row"), Kokkos::RangePolicy<Exec>(exec, 0, a.num_rows()),
      KOKKOS_LAMBDA(const O i) {
        T sum = 0;
        for (O k = 0; k < width; ++k) {
          const std::size_t s = shape.slot(i, k);
          sum += convert<T>(values(s)) * convert<T>(x(entries(s)));
        }
        update(y, i, alpha, sum, beta);
      });
}

template <class T, class Exec, class M, class X, class Y>
void transpose(const Exec& exec, const T& alpha, const M& a, const X& x, const T& beta,
               const Y& y) {
  using O = typename M::ordinal_type;
  Kokkos::View<T*, typename M::memory_space> work("kacc::sparse::spmv_transpose_work",
                                                  static_cast<std::size_t>(a.num_cols()));
  const auto entries = a.entries();
  const typename M::const_values_type values = a.values();
  if constexpr (is_csr<M>::value) {
    using S = typename M::offset_type;
    const auto row_map = a.row_map();
    Kokkos::parallel_for(
        kernel_label<M>("csr_transpose_atomic"), Kokkos::RangePolicy<Exec>(exec, 0, a.num_rows()),
        KOKKOS_LAMBDA(const O i) {
          const T xi = convert<T>(x(i));
          for (S k = row_map(i); k < row_map(i + 1); ++k) {
            Kokkos::atomic_add(&work(entries(k)), convert<T>(values(k)) * xi);
          }
        });
  } else {
    const M shape = a;
    const auto lengths = a.row_lengths();
    Kokkos::parallel_for(
        kernel_label<M>("ell_transpose_atomic"), Kokkos::RangePolicy<Exec>(exec, 0, a.num_rows()),
        KOKKOS_LAMBDA(const O i) {
          const T xi = convert<T>(x(i));
          for (O k = 0; k < lengths(i); ++k) {
            const std::size_t s = shape.slot(i, k);
            Kokkos::atomic_add(&work(entries(s)), convert<T>(values(s)) * xi);
          }
        });
  }
  Kokkos::parallel_for(
      kernel_label<M>("transpose_update"), Kokkos::RangePolicy<Exec>(exec, 0, y.extent(0)),
      KOKKOS_LAMBDA(const std::size_t j) { update(y, j, alpha, work(j), beta); });
}

}  // namespace detail

/// y = alpha * op(A) * x + beta * y in exec; mode "N" (A) or "T" (A transposed).
/// Throws std::invalid_argument for an unknown mode or extents that do not match.
template <class Exec, class Matrix, class X, class Y, class Alpha, class Beta,
          class = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
void spmv(const Exec& exec, const char mode[], const Alpha& alpha, const Matrix& A, const X& x,
          const Beta& beta, const Y& y, SpmvAlgorithm algorithm = SpmvAlgorithm::automatic) {
  static_assert(is_csr<Matrix>::value || is_ell<Matrix>::value,
                "kacc::sparse::spmv: A must be a kacc::sparse::CsrMatrix or EllMatrix");
  static_assert(is_view_v<X> && is_view_v<Y>, "kacc::sparse::spmv: x and y must be views");
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::sparse::spmv: x and y must be rank 1");
  static_assert(!std::is_const<typename Y::value_type>::value,
                "kacc::sparse::spmv: y must be writable");
  using T = std::common_type_t<typename Matrix::arithmetic_type, arithmetic_t<X>, arithmetic_t<Y>>;
  const std::string m = mode ? mode : "";
  const bool trans = m == "T" || m == "t" || m == "C" || m == "c";
  if (!trans && m != "N" && m != "n") {
    throw std::invalid_argument("kacc::sparse::spmv: mode is '" + m + "'; use \"N\" or \"T\"");
  }
  const std::size_t rows = static_cast<std::size_t>(A.num_rows());
  const std::size_t cols = static_cast<std::size_t>(A.num_cols());
  const std::size_t x_len = trans ? rows : cols, y_len = trans ? cols : rows;
  if (x.extent(0) != x_len || y.extent(0) != y_len) {
    throw std::invalid_argument("kacc::sparse::spmv: mode '" + m + "' with A of extents (" +
                                std::to_string(rows) + ", " + std::to_string(cols) +
                                ") needs x of extent " + std::to_string(x_len) +
                                " and y of extent " + std::to_string(y_len) + "; got x " +
                                std::to_string(x.extent(0)) + ", y " + std::to_string(y.extent(0)));
  }
  const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
  if (y_len == 0) return;
  if (a == T(0)) {
    detail::scale_y(exec, b, y);
    return;
  }
  if (trans) {
    detail::transpose(exec, a, A, x, b, y);
  } else if constexpr (is_ell<Matrix>::value) {
    (void)algorithm;
    detail::ell_row(exec, a, A, x, b, y);
  } else {
    if (algorithm == SpmvAlgorithm::automatic) algorithm = choose_algorithm(A.row_stats());
    if (algorithm == SpmvAlgorithm::load_balanced) {
      detail::csr_merge_path(exec, a, A, x, b, y);
    } else {
      detail::csr_row(exec, a, A, x, b, y);
    }
  }
}

/// spmv in the matrix's default execution space instance, fenced.
template <class Matrix, class X, class Y, class Alpha, class Beta>
void spmv(const char mode[], const Alpha& alpha, const Matrix& A, const X& x, const Beta& beta,
          const Y& y, SpmvAlgorithm algorithm = SpmvAlgorithm::automatic) {
  using Exec = typename Matrix::execution_space;
  spmv(Exec(), mode, alpha, A, x, beta, y, algorithm);
  Exec().fence();
}

}  // namespace sparse
}  // namespace kacc
