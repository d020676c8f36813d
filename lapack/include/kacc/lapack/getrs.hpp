#pragma once
/// @file
/// kacc::lapack::getrs(exec, A, ipiv, b): solves A x = b (or A X = B, k right-hand sides)
/// with the factors of getrf.

#include <kacc/blas/trsv.hpp>
#include <kacc/lapack/getrf.hpp>

namespace kacc {
namespace lapack {

namespace Impl {

/// The diagonal blocks of getrs_columns: rows [j0, j1) of one column c of B solved with
/// the block of L (unit diagonal) or U on those rows and columns, in T, each entry of B
/// rounded to its format once. On the host, factors whose columns are contiguous are read
/// down their columns, the block of B kept in a local array (the row-by-row loop strides
/// through such factors, an entry per cache line). (A member, not code in the kernel's
/// lambda: nvcc rejects an extended lambda's first capture of a variable inside
/// `if constexpr`.)
template <class T, shape Shape, class AV, class BV>
struct diagonal_block_solve {
  using BT = typename BV::non_const_value_type;
  /// Rows of a diagonal block, at most.
  static constexpr index_type block = getrf_block<Shape>;
  AV A;                     ///< the factors
  BV B;                     ///< the right-hand sides, solved in place
  bool columns_contiguous;  ///< whether A's columns are contiguous in memory

  /// Rows [j0, j1) of column c of B into y[0, j1 - j0), in T.
  KOKKOS_INLINE_FUNCTION void load(const index_type j0, const index_type j1, const index_type c,
                                   T* const y) const {
    for (index_type r = j0; r < j1; ++r) y[r - j0] = convert<T>(B(r, c));
  }

  /// y (rows [j0, j1) of column c, as load gave them) back into rows [from, j1) of B, each
  /// rounded to B's format once.
  KOKKOS_INLINE_FUNCTION void store(const index_type j0, const index_type from, const index_type j1,
                                    const index_type c, const T* const y) const {
    for (index_type r = from; r < j1; ++r) B(r, c) = convert<BT>(y[r - j0]);
  }

  /// The unit lower block: forward substitution.
  KOKKOS_INLINE_FUNCTION void lower(const index_type j0, const index_type j1,
                                    const index_type c) const {
    if constexpr (Shape == shape::host) {
      if (columns_contiguous) {
        T y[block];
        load(j0, j1, c, y);
        for (index_type q = j0; q < j1; ++q)
          for (index_type r = q + 1; r < j1; ++r) y[r - j0] -= convert<T>(A(r, q)) * y[q - j0];
        store(j0, j0 + 1, j1, c, y);
        return;
      }
    }
    for (index_type r = j0 + 1; r < j1; ++r) {
      T s = convert<T>(B(r, c));
      for (index_type q = j0; q < r; ++q) s -= convert<T>(A(r, q)) * convert<T>(B(q, c));
      B(r, c) = convert<BT>(s);
    }
  }

  /// The upper block: backward substitution.
  KOKKOS_INLINE_FUNCTION void upper(const index_type j0, const index_type j1,
                                    const index_type c) const {
    if constexpr (Shape == shape::host) {
      if (columns_contiguous) {
        T y[block];
        load(j0, j1, c, y);
        for (index_type q = j1 - 1; q >= j0; --q) {
          y[q - j0] /= convert<T>(A(q, q));
          for (index_type r = j0; r < q; ++r) y[r - j0] -= convert<T>(A(r, q)) * y[q - j0];
        }
        store(j0, j0, j1, c, y);
        return;
      }
    }
    for (index_type r = j1 - 1; r >= j0; --r) {
      T s = convert<T>(B(r, c));
      for (index_type q = r + 1; q < j1; ++q) s -= convert<T>(A(r, q)) * convert<T>(B(q, c));
      B(r, c) = convert<BT>(s / convert<T>(A(r, r)));
    }
  }
};

/// Columns of B up to which getrs solves a rank-2 B a column at a time, each as a rank-1
/// b, rather than by getrs_columns: its diagonal blocks take a column per thread, so one or
/// two columns leave threads idle. Host, n = 4096, fp32 factors, fp64 arithmetic, 2
/// threads, medians of 7 in five rounds, by blocks against column by column: k = 1 11.1-12.8
/// against 4.5-6.0 ms, k = 2 11.0-12.5 against 9.0-11.4, k = 3 11.4-12.7 against 14.1-17.2.
constexpr index_type getrs_columns_one_by_one = 2;

/// getrs for the k columns of B after the argument checks (n, k non-zero): the
/// interchanges and the two triangular solves by blocks of getrf's width, each diagonal
/// block solved a column per thread and the rows past it updated by one GEMM, so the
/// factors are read once for all columns (a rank-1 solve per column would read them k
/// times).
template <class T, class Acc, shape Shape, class Exec, class AV, class IV, class BV>
void getrs_columns(const std::string& label, const Exec& exec, const AV& A, const IV& ipiv,
                   const BV& B) {
  constexpr index_type NB = getrf_block<Shape>;
  using BT = typename BV::non_const_value_type;
  const index_type n = A.extent(0), k = B.extent(1);
  const diagonal_block_solve<T, Shape, AV, BV> diagonal{A, B, A.stride(0) <= A.stride(1)};
  Kokkos::parallel_for(
      label + "_pivots", kacc::Impl::range(exec, 0, k), KOKKOS_LAMBDA(const index_type c) {
        for (index_type i = 0; i < n; ++i) {
          const index_type p = static_cast<index_type>(ipiv(i)) - 1;
          if (p != i) {
            const BT t = B(i, c);
            B(i, c) = BT(B(p, c));
            B(p, c) = t;
          }
        }
      });
  // L y = P b: forward, L's unit diagonal not stored. The blocks of B below and above a
  // diagonal block are disjoint rows of B, so the updates skip gemm's aliasing check.
  for (index_type j0 = 0; j0 < n; j0 += NB) {
    const index_type j1 = j0 + NB < n ? j0 + NB : n;
    Kokkos::parallel_for(
        label + "_l11", kacc::Impl::range(exec, 0, k),
        KOKKOS_LAMBDA(const index_type c) { diagonal.lower(j0, j1, c); });
    if (j1 < n)
      blas::Impl::gemm<T, Acc, Shape, false, false>(
          label + "_l21", exec, T(-1), detail::block(A, j1, n, j0, j1),
          detail::block(B, j0, j1, 0, k), T(1), detail::block(B, j1, n, 0, k));
  }
  // U x = y: backward.
  for (index_type j1 = n; j1 > 0; j1 = j1 > NB ? j1 - NB : 0) {
    const index_type j0 = j1 > NB ? j1 - NB : 0;
    Kokkos::parallel_for(
        label + "_u11", kacc::Impl::range(exec, 0, k),
        KOKKOS_LAMBDA(const index_type c) { diagonal.upper(j0, j1, c); });
    if (j0 > 0)
      blas::Impl::gemm<T, Acc, Shape, false, false>(
          label + "_u12", exec, T(-1), detail::block(A, 0, j0, j0, j1),
          detail::block(B, j0, j1, 0, k), T(1), detail::block(B, 0, j0, 0, k));
  }
}

}  // namespace Impl

/// Solves A x = b in place (b <- x) from getrf's factors P A = L U in A and its 1-based
/// pivots ipiv: b's rows are interchanged as ipiv says, then kacc::blas::trsv solves with
/// L (unit diagonal) and with U, computing in Arith and accumulating in Acc (defaults:
/// the common arithmetic type of A and b, and Arith). With a rank-2 B (n x k, LAPACK's
/// NRHS = k) every column is solved: up to Impl::getrs_columns_one_by_one columns each as
/// a rank-1 b (the same bits), more with the factors read once for all of them: the
/// triangular solves go by diagonal blocks, the rows past each block updated by one
/// kacc::blas::gemm (so a column's rounding differs from its rank-1 solve's). A zero on
/// U's diagonal (getrf's info > 0) gives IEEE results (inf or NaN in b), as in trsv.
/// Throws std::invalid_argument for a non-square A or extents of ipiv or b (B's rows)
/// other than A's.
template <class Arith = void, class Acc = void, class Exec, class AV, class IV, class B,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<B>>>
void getrs(const Exec& exec, const AV& A, const IV& ipiv, const B& b) {
  static_assert(AV::rank == 2, "kacc::lapack::getrs: A must be rank 2");
  static_assert(IV::rank == 1, "kacc::lapack::getrs: ipiv must be rank 1");
  static_assert(B::rank == 1 || B::rank == 2, "kacc::lapack::getrs: b must be rank 1 or 2");
  KACC_REQUIRE_ACCESSIBLE(Exec, IV, "kacc::lapack::getrs", "ipiv");
  KACC_REQUIRE_ACCESSIBLE(Exec, B, "kacc::lapack::getrs", "b");
  const index_type n = A.extent(0);
  if (static_cast<index_type>(A.extent(1)) != n)
    detail::fail("getrs", "A must be square but has extents " + detail::extents_of(A));
  if (static_cast<index_type>(ipiv.extent(0)) != n || static_cast<index_type>(b.extent(0)) != n)
    detail::fail("getrs", "A has extents " + detail::extents_of(A) + " but ipiv has extents " +
                              detail::extents_of(ipiv) + (B::rank == 1 ? " and b" : " and B") +
                              " has extents " + detail::extents_of(b));
  if constexpr (B::rank == 2) {
    KACC_REQUIRE_ACCESSIBLE(Exec, AV, "kacc::lapack::getrs", "A");
    const index_type k = b.extent(1);
    if (n == 0 || k == 0) return;
    if (k <= Impl::getrs_columns_one_by_one) {
      for (index_type c = 0; c < k; ++c) getrs<Arith, Acc>(exec, A, ipiv, detail::column(b, c));
      return;
    }
    using T = blas::detail::arith_t<Arith, AV, B>;
    const std::string label = std::string("kacc::lapack::getrs[A=") + kacc::Impl::format_of<AV>() +
                              "/" + kacc::Impl::layout_of<AV>() +
                              ",B=" + kacc::Impl::format_of<B>() + ",arith=" + format_name<T>() +
                              "]";
    Impl::getrs_columns<T, blas::detail::acc_t<Acc, T>, kacc::Impl::default_shape_v<Exec>>(
        label, exec, A, ipiv, b);
  } else {
    if (n == 0) return;
    using BT = typename B::non_const_value_type;
    // The interchanges are sequential: one thread applies them all.
    Kokkos::parallel_for(
        "kacc::lapack::getrs_pivots", kacc::Impl::range(exec, 0, 1),
        KOKKOS_LAMBDA(const index_type) {
          for (index_type i = 0; i < n; ++i) {
            const index_type p = static_cast<index_type>(ipiv(i)) - 1;
            if (p != i) {
              const BT t = b(i);
              b(i) = BT(b(p));
              b(p) = t;
            }
          }
        });
    blas::trsv<Arith, Acc>(exec, "L", "N", "U", A, b);
    blas::trsv<Arith, Acc>(exec, "U", "N", "N", A, b);
  }
}

/// getrs in b's default execution space instance, fenced.
template <class Arith = void, class Acc = void, class AV, class IV, class B,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<B>>>
void getrs(const AV& A, const IV& ipiv, const B& b) {
  using Exec = typename B::execution_space;
  getrs<Arith, Acc>(Exec(), A, ipiv, b);
  Exec().fence();
}

}  // namespace lapack
}  // namespace kacc
