#pragma once
/// @file
/// kacc::blas::trsv(exec, uplo, trans, diag, A, b): b <- op(A)^{-1} b for a triangular A
/// of any storage format. Blocked and parallel. Host shape: the inverses of all diagonal
/// blocks are formed at once, in parallel, up front; then each block's entries are one
/// small parallel GEMV with its inverse, followed by a parallel GEMV-shaped update of all
/// rows still to be solved. Team shape, and the host shape with a compensated or exact
/// accumulator: each diagonal block is solved by substitution, then the same update.

#include <kacc/blas/impl/rows_times.hpp>

namespace kacc {
namespace blas {
namespace Impl {

/// Rows per diagonal block of the team shape: large enough that the per-block launches are
/// cheap next to the update, small enough that the block solve is a small part of the work.
constexpr index_type trsv_block = 256;
/// Rows per diagonal block of the host shape. Inverting all blocks costs n * b^2 / 6
/// multiply-adds (cache-resident), the solve n^2 / 2 (memory-bound), and there are two
/// launches per block: 64 keeps both the inversion and the launches a few percent of the
/// solve at n = 16384.
constexpr index_type trsv_host_block = 64;

/// Solves the diagonal block [b0, b1) of the triangle of m in place in w. Host shape: one
/// thread, row by row, each row a sum in Acc (the host trsv uses it for blocks with a
/// zero or non-finite pivot, and for every block with a non-plain Acc). Team shape: one team; every
/// row of the block keeps its sum in Acc in team scratch, and after each solved entry the team adds
/// that column's products to the rows still open (the same terms in the same order).
template <class T, class Acc, shape Shape, class Exec, class M, class W>
void trsv_diagonal_block(const std::string& label, const Exec& exec, bool lower, bool unit,
                         const M& m, index_type b0, index_type b1, const W& w) {
  using traits = accumulator_traits<Acc>;
  const index_type nb = b1 - b0;
  if constexpr (Shape == shape::host) {
    Kokkos::parallel_for(
        label, kacc::Impl::range(exec, 0, 1), KOKKOS_LAMBDA(const index_type) {
          for (index_type q = 0; q < nb; ++q) {
            const index_type i = lower ? b0 + q : b1 - 1 - q;
            Acc acc = traits::zero();
            traits::add(acc, w(i));
            const index_type k0 = lower ? b0 : i + 1, k1 = lower ? i : b1;
            for (index_type k = k0; k < k1; ++k)
              traits::add_product(acc, -convert<T>(m(i, k)), w(k));
            const T r = static_cast<T>(traits::result(acc));
            // A zero pivot divides by zero: IEEE inf/NaN, never a trap or a hang.
            w(i) = unit ? r : r / convert<T>(m(i, i));
          }
        });
  } else {
    using policy_type = kacc::Impl::team_policy<Exec>;
    using scratch_type = Kokkos::View<Acc*, typename Exec::scratch_memory_space,
                                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const auto scratch = Kokkos::PerTeam(scratch_type::shmem_size(nb));
    auto kernel = KOKKOS_LAMBDA(const kacc::Impl::team_member<Exec>& team) {
      const scratch_type acc(team.team_scratch(0), nb);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nb), [&](const index_type q) {
        acc(q) = traits::zero();
        traits::add(acc(q), w(b0 + q));
      });
      team.team_barrier();
      for (index_type q = 0; q < nb; ++q) {
        const index_type j = lower ? b0 + q : b1 - 1 - q;
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          const T r = static_cast<T>(traits::result(acc(j - b0)));
          // A zero pivot divides by zero: IEEE inf/NaN, never a trap or a hang.
          w(j) = unit ? r : r / convert<T>(m(j, j));
        });
        team.team_barrier();
        const T wj = w(j);
        // Rows still open: after j for a lower triangle, before it for an upper one.
        const index_type r0 = lower ? j + 1 : b0, r1 = lower ? b1 : j;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r0, r1), [&](const index_type i) {
          traits::add_product(acc(i - b0), -convert<T>(m(i, j)), wj);
        });
        team.team_barrier();
      }
    };
    const int threads = kacc::Impl::team_threads(
        policy_type(exec, 1, 1, 1).set_scratch_size(0, scratch), kernel, 128);
    Kokkos::parallel_for(label, policy_type(exec, 1, threads, 1).set_scratch_size(0, scratch),
                         kernel);
  }
}

/// Inverts every diagonal block of the triangle op(A) = m (blocks of trsv_host_block rows,
/// the last one possibly shorter), all blocks in parallel: inv(s, i, j) is entry (i, j) of
/// the inverse of block s in the arithmetic type T, zero outside its triangle. Row i of the
/// inverse is (e_i - sum_k m(i,k) inv(k,:)) / m(i,i) over the rows k solved before it, each
/// entry a sum in Acc. singular(s) is set when block s has a zero or non-finite pivot.
template <class T, class Acc, class Exec, class M, class Inv, class Singular>
void trsv_invert_blocks(const std::string& label, const Exec& exec, bool lower, bool unit,
                        const M& m, index_type n, const Inv& inv, const Singular& singular) {
  using traits = accumulator_traits<Acc>;
  constexpr index_type D = trsv_host_block;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, (n + D - 1) / D), KOKKOS_LAMBDA(const index_type s) {
        const index_type b0 = s * D, nb = n - b0 < D ? n - b0 : D;
        bool zero_pivot = false;
        Acc acc[D];
        for (index_type q = 0; q < nb; ++q) {
          // Forward through a lower block, backward through an upper one; row i of the
          // inverse has entries in columns [j0, j1) only.
          const index_type i = lower ? q : nb - 1 - q;
          const index_type j0 = lower ? 0 : i, j1 = lower ? i + 1 : nb;
          for (index_type j = j0; j < j1; ++j) acc[j] = traits::zero();
          traits::add(acc[i], T(1));
          for (index_type k = lower ? 0 : i + 1; k < (lower ? i : nb); ++k) {
            const T a = convert<T>(m(b0 + i, b0 + k));
            const index_type c0 = lower ? 0 : k, c1 = lower ? k + 1 : nb;
            for (index_type j = c0; j < c1; ++j) traits::add(acc[j], -(a * inv(s, k, j)));
          }
          const T pivot = unit ? T(1) : convert<T>(m(b0 + i, b0 + i));
          // pivot - pivot is NaN for inf and NaN pivots, zero otherwise.
          zero_pivot = zero_pivot || pivot == T(0) || !(pivot - pivot == T(0));
          for (index_type j = 0; j < D; ++j)
            inv(s, i, j) =
                j0 <= j && j < j1 ? static_cast<T>(traits::result(acc[j])) / pivot : T(0);
        }
        for (index_type i = nb; i < D; ++i)
          for (index_type j = 0; j < D; ++j) inv(s, i, j) = T(0);
        singular(s) = zero_pivot;
      });
}

/// Block s of the inverses as a matrix of the global indices [s*D, s*D + D): the shape
/// rows_times reads.
template <class Inv>
struct inverse_block {
  Inv inv;        ///< all diagonal blocks' inverses (trsv_invert_blocks)
  index_type s;   ///< which block
  index_type b0;  ///< its first row
  /// The inverse is in the arithmetic type: nothing to convert.
  static constexpr bool vectorised_loads = false;
  /// Nor do its runs.
  static constexpr bool vectorised_runs = false;
  /// Entry (i, k) of the inverse, in the matrix's row and column indices.
  KOKKOS_FORCEINLINE_FUNCTION auto operator()(const index_type i, const index_type k) const {
    return inv(s, i - b0, k - b0);
  }
  /// The inverse is stored row by row.
  bool k_contiguous() const { return true; }
};

/// Blocked substitution with op(A) = m, solved in place in w. Host shape: the diagonal
/// blocks' inverses are formed first (trsv_invert_blocks); each block's entries are then
/// x = inv * w over the block (a small GEMV in Acc) and the rows still to be solved
/// subtract that block's columns times x (a GEMV-shaped update). A block with a zero or
/// non-finite pivot is solved by substitution instead, so that such a pivot gives the
/// IEEE results of reference BLAS (inf where it divides, not the NaN of inf - inf in the
/// inverse). Team shape, and the host with any accumulator other than a plain sum: each
/// diagonal block solved by substitution (one team; one thread on the host), then the
/// same update.
template <class T, class Acc, shape Shape, bool Trans, class Exec, class AV, class W>
void trsv(const std::string& label, const Exec& exec, bool lower, bool unit, const AV& A,
          const W& w) {
  const detail::oriented<AV, Trans> m{A};
  const index_type n = A.extent(0);
  auto update = KOKKOS_LAMBDA(const index_type i, const T& s) {
    w(i) -= s;
  };
  // An inverse rounds its entries before they multiply b, so a compensated or exact
  // accumulator, chosen for its accuracy, gets substitution, where every x(i) comes from a
  // residual summed in Acc.
  if constexpr (Shape == shape::host && accumulator_traits<Acc>::is_plain) {
    constexpr index_type D = trsv_host_block;
    const index_type nb = (n + D - 1) / D;
    using memory_space = typename Exec::memory_space;
    Kokkos::View<T***, Kokkos::LayoutRight, memory_space> inv(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::blas::trsv_inverses"), nb, D, D);
    Kokkos::View<bool*, memory_space> singular(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::blas::trsv_singular"), nb);
    using WT = typename W::non_const_value_type;
    Kokkos::View<WT*, memory_space> x(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::blas::trsv_solution"), n);
    trsv_invert_blocks<T, Acc>(label + "_invert", exec, lower, unit, m, n, inv, singular);
    exec.fence();  // singular is read here, on the host
    auto solved = KOKKOS_LAMBDA(const index_type i, const T& s) {
      x(i) = s;
    };
    for (index_type step = 0; step < nb; ++step) {
      // Forward substitution for lower op(A), backward for upper.
      const index_type s = lower ? step : nb - 1 - step;
      const index_type b0 = s * D, b1 = b0 + D < n ? b0 + D : n;
      if (singular(s)) {
        trsv_diagonal_block<T, Acc, Shape>(label + "_diag", exec, lower, unit, m, b0, b1, w);
        Kokkos::parallel_for(
            label + "_diag_copy", kacc::Impl::range(exec, b0, b1),
            KOKKOS_LAMBDA(const index_type i) { x(i) = w(i); });
      } else {
        const inverse_block<decltype(inv)> block{inv, s, b0};
        rows_times<T, Acc, Shape>(label + "_diag", exec, block, b0, b1, b0, b1, w, solved);
      }
      if (lower) {
        rows_times<T, Acc, Shape>(label, exec, m, b1, n, b0, b1, x, update);
      } else {
        rows_times<T, Acc, Shape>(label, exec, m, 0, b0, b0, b1, x, update);
      }
    }
    Kokkos::parallel_for(
        label + "_copy", kacc::Impl::range(exec, 0, n),
        KOKKOS_LAMBDA(const index_type i) { w(i) = x(i); });
  } else {
    const index_type nb = (n + trsv_block - 1) / trsv_block;
    for (index_type s = 0; s < nb; ++s) {
      // Forward substitution for lower op(A), backward for upper.
      const index_type blk = lower ? s : nb - 1 - s;
      const index_type b0 = blk * trsv_block, b1 = b0 + trsv_block < n ? b0 + trsv_block : n;
      trsv_diagonal_block<T, Acc, Shape>(label + "_diag", exec, lower, unit, m, b0, b1, w);
      if (lower) {
        rows_times<T, Acc, Shape>(label, exec, m, b1, n, b0, b1, w, update);
      } else {
        rows_times<T, Acc, Shape>(label, exec, m, 0, b0, b0, b1, w, update);
      }
    }
  }
}

/// b = op(A)^-1 b after the argument checks, b not empty: b is loaded into an
/// Acc-typed workspace, solved there and rounded once into b.
template <class T, class Acc, class Exec, class AV, class B>
void trsv_in_place(const std::string& label, const Exec& exec, bool tr, bool lower, bool unit,
                   const AV& A, const B& b) {
  using WT = accumulated_t<Acc>;
  using BV = typename B::non_const_value_type;
  const index_type n = b.extent(0);
  Kokkos::View<WT*, typename Exec::memory_space> w(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::blas::trsv_workspace"), n);
  Kokkos::parallel_for(
      label + "_load", kacc::Impl::range(exec, 0, n),
      KOKKOS_LAMBDA(const index_type i) { w(i) = convert<WT>(convert<T>(b(i))); });
  constexpr auto shape = kacc::Impl::default_shape_v<Exec>;
  if (tr) {
    trsv<T, Acc, shape, true>(label, exec, lower, unit, A, w);
  } else {
    trsv<T, Acc, shape, false>(label, exec, lower, unit, A, w);
  }
  Kokkos::parallel_for(
      label + "_store", kacc::Impl::range(exec, 0, n),
      KOKKOS_LAMBDA(const index_type i) { b(i) = convert<BV>(w(i)); });
}

}  // namespace Impl

/// Solves op(A) x = b in place (b <- x) for triangular A: uplo "L"/"U" names the triangle
/// of A that is read, trans "N"/"T"/"C" gives op(A), diag "U" takes a unit diagonal
/// without reading it, "N" divides by A(i,i). A zero on a non-unit diagonal gives IEEE
/// results (inf or NaN in b), as in reference BLAS. b is solved in an Acc-typed
/// workspace, so a low-precision b is rounded once at the end, not at every update.
/// Throws std::invalid_argument for unknown modes, a non-square A or a b of wrong extent.
template <class Arith = void, class Acc = void, class Exec, class AV, class B,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<B>>>
void trsv(const Exec& exec, const char uplo[], const char trans[], const char diag[], const AV& A,
          const B& b) {
  using T = detail::arith_t<Arith, AV, B>;
  using Ac = detail::acc_t<Acc, T>;
  static_assert(AV::rank == 2, "kacc::blas::trsv: A must be rank 2");
  static_assert(B::rank == 1, "kacc::blas::trsv: b must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, AV, "kacc::blas::trsv", "A");
  KACC_REQUIRE_ACCESSIBLE(Exec, B, "kacc::blas::trsv", "b");
  const char u = detail::mode_char("trsv", "uplo", uplo, "LU");
  const char t = detail::mode_char("trsv", "trans", trans, "NTC");
  const char d = detail::mode_char("trsv", "diag", diag, "NU");
  if (A.extent(0) != A.extent(1))
    detail::fail("trsv", "A must be square but has extents " + detail::extents_of(A));
  if (b.extent(0) != A.extent(0))
    detail::fail("trsv", "A has extents " + detail::extents_of(A) + " but b has extents " +
                             detail::extents_of(b));
  const index_type n = A.extent(0);
  if (n == 0) return;
  const std::string label = std::string("kacc::blas::trsv[") + u + t + d +
                            ",A=" + detail::format_of<AV>() + "/" + detail::layout_of<AV>() +
                            ",b=" + detail::format_of<B>() + detail::arith_suffix<T, Ac>();
  const bool tr = t != 'N';
  const bool lower = (u == 'L') != tr;  // the triangle op(A) has
  kacc::Impl::write_with_overflow_policy(
      "kacc::blas::trsv", "b", exec, b, true, [&](const auto& out) {
        Impl::trsv_in_place<T, Ac>(label, exec, tr, lower, d == 'U', A, out);
      });
}

/// trsv in b's default execution space instance, fenced.
template <class Arith = void, class Acc = void, class AV, class B,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<B>>>
void trsv(const char uplo[], const char trans[], const char diag[], const AV& A, const B& b) {
  using Exec = typename B::execution_space;
  trsv<Arith, Acc>(Exec(), uplo, trans, diag, A, b);
  Exec().fence();
}

}  // namespace blas
}  // namespace kacc
