#pragma once
/// @file
/// kacc::blas::trsv(exec, uplo, trans, diag, A, b): b <- op(A)^{-1} b for a triangular A
/// of any storage format. Blocked and parallel: a solve per diagonal block (one thread on
/// CPUs, one team on GPUs), then a parallel GEMV-shaped update of all rows still to be
/// solved.

#include <kacc/blas/impl/rows_times.hpp>

namespace kacc {
namespace blas {
namespace Impl {

/// Rows per diagonal block: large enough that the per-block launches are cheap next to
/// the update, small enough that the block solve is a small part of the work.
constexpr index_type trsv_block = 256;

/// Solves the diagonal block [b0, b1) of the triangle of m in place in w. Host shape: one
/// thread, row by row, each row a sum in Acc. Team shape: one team; every row of the block
/// keeps its sum in Acc in team scratch, and after each solved entry the team adds that
/// column's products to the rows still open (the same terms in the same order).
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
    using member_type = typename policy_type::member_type;
    using scratch_type = Kokkos::View<Acc*, typename Exec::scratch_memory_space,
                                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const auto scratch = Kokkos::PerTeam(scratch_type::shmem_size(nb));
    auto kernel = KOKKOS_LAMBDA(const member_type& team) {
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

/// Blocked substitution with op(A) = m: each diagonal block is solved, then the rows still
/// to be solved subtract that block's columns (a GEMV-shaped update).
template <class T, class Acc, shape Shape, bool Trans, class Exec, class AV, class W>
void trsv(const std::string& label, const Exec& exec, bool lower, bool unit, const AV& A,
          const W& w) {
  const detail::oriented<AV, Trans> m{A};
  const index_type n = A.extent(0);
  const index_type nb = (n + trsv_block - 1) / trsv_block;
  auto update = KOKKOS_LAMBDA(const index_type i, const T& s) {
    w(i) -= s;
  };
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
  using WT = accumulated_t<Ac>;
  using BV = typename B::non_const_value_type;
  Kokkos::View<WT*, typename Exec::memory_space> w(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::blas::trsv_workspace"), n);
  Kokkos::parallel_for(
      label + "_load", kacc::Impl::range(exec, 0, n),
      KOKKOS_LAMBDA(const index_type i) { w(i) = convert<WT>(convert<T>(b(i))); });
  const bool tr = t != 'N';
  const bool lower = (u == 'L') != tr;  // the triangle op(A) has
  constexpr auto shape = kacc::Impl::default_shape_v<Exec>;
  if (tr) {
    Impl::trsv<T, Ac, shape, true>(label, exec, lower, d == 'U', A, w);
  } else {
    Impl::trsv<T, Ac, shape, false>(label, exec, lower, d == 'U', A, w);
  }
  Kokkos::parallel_for(
      label + "_store", kacc::Impl::range(exec, 0, n),
      KOKKOS_LAMBDA(const index_type i) { b(i) = convert<BV>(w(i)); });
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
