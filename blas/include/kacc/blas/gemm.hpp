#pragma once
/// @file
/// kacc::blas::gemm(exec, transA, transB, alpha, A, B, beta, C): C = alpha op(A) op(B) +
/// beta C for any storage formats of A, B and C, one source for every precision mix.
/// Host shape: each thread owns a tile of C and packs tiles of op(A) and op(B), converted
/// to the arithmetic type, into its scratch, so the inner kernel is a register-blocked
/// loop over plain arrays that compilers vectorise, whatever the formats; a C of at most
/// gemm_nr columns with op(A) contiguous down its columns (the residuals and triangular
/// updates of several right-hand sides) streams op(A) once instead. Team shape: a
/// team owns a tile of C and stages tiles of op(A) and op(B) through team scratch.

#include <kacc/blas/detail.hpp>

namespace kacc {
namespace blas {
namespace Impl {

using kacc::Impl::shape;

/// Rows of op(A) per register block of the host kernel.
constexpr index_type gemm_mr = 4;
/// Columns of op(B) per register block: two AVX-512 fp64 registers per row.
constexpr index_type gemm_nr = 16;
/// Rows of a host C tile: its op(A) tile (gemm_mc x gemm_kc) stays in L2.
constexpr index_type gemm_mc = 64;
/// Columns of a host C tile: its op(B) tile (gemm_kc x gemm_nc) stays in L2, and each
/// register block's gemm_kc x gemm_nr slice of it in L1.
constexpr index_type gemm_nc = 128;
/// Depth of the packed host tiles.
constexpr index_type gemm_kc = 256;
/// Entries of a column of op(B) converted at a time (by block loads) when packed.
constexpr int gemm_pack_stage = 16;
/// Rows of C one thread owns in the host kernel for narrow C (gemm_host_narrow): enough
/// work items for two threads from 512 rows on, and its sums (gemm_nr columns) fill 32 KiB.
constexpr index_type gemm_narrow_rows = 256;
/// Columns of op(A) the host kernel for narrow C converts per register block.
/// C = C - A X, A 4096^2 fp64 LayoutLeft, X 4096 x 16, 2 threads, medians of 7: 12.9 ms
/// with 256 rows and 8 columns, 13.2 ms with 256 and 32, 17.2 ms with 128 and 16, 11.2 ms
/// with 1024 and 8 (too few work items below 2048 rows); gemm_host 21.4 ms, dgemm 21.1 ms.
constexpr index_type gemm_narrow_depth = 8;
/// Rows and columns of a team-shape C tile, and depth of its staged tiles.
constexpr index_type gemm_team_tile = 32;
constexpr index_type gemm_team_depth = 32;

/// The scratch views of both plain-accumulator shapes: packed or staged tiles of op(A) and
/// op(B) in the arithmetic type T, and the C tile's sums in Acc.
template <class Exec, class T, class Acc>
struct gemm_scratch {
  /// A tile of op(A) or op(B).
  using tile_type = Kokkos::View<T*, typename Exec::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  /// The sums of a C tile.
  using sums_type = Kokkos::View<Acc*, typename Exec::scratch_memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
};

/// The host kernels' register block: sums[r * ld + s] += sum over kk < kb of
/// a[kk * gemm_mr + r] b[kk * gemm_nr + s], for r < gemm_mr and s < gemm_nr (a and b packed
/// k-major). One row of b in a local array, one entry of a at a time: GCC then keeps the
/// block's sums in registers (indexing both tiles inside the innermost loop measured 10x
/// slower: the sums went through memory).
template <class Acc, class T>
KOKKOS_FORCEINLINE_FUNCTION void add_register_block(const T* KOKKOS_RESTRICT a,
                                                    const T* KOKKOS_RESTRICT b, const index_type kb,
                                                    Acc* KOKKOS_RESTRICT sums,
                                                    const index_type ld) {
  constexpr index_type MR = gemm_mr, NR = gemm_nr;
  Acc c[MR][NR] = {};
  for (index_type kk = 0; kk < kb; ++kk) {
    T bv[NR];
    for (index_type s = 0; s < NR; ++s) bv[s] = b[kk * NR + s];
    for (index_type r = 0; r < MR; ++r) {
      const T av = a[kk * MR + r];
      for (index_type s = 0; s < NR; ++s) c[r][s] += av * bv[s];
    }
  }
  for (index_type r = 0; r < MR; ++r)
    for (index_type s = 0; s < NR; ++s) sums[r * ld + s] += c[r][s];
}

/// Host shape, plain accumulator: see the file comment. The C tile's sums are kept in Acc
/// in scratch across all of K, so C, whatever its format, is rounded once.
template <class T, class Acc, class Exec, class MA, class MB, class Out>
void gemm_host(const std::string& label, const Exec& exec, const MA& a, const MB& b, index_type m,
               index_type n, index_type k, const Out& out) {
  constexpr index_type MR = gemm_mr, NR = gemm_nr, MC = gemm_mc, NC = gemm_nc, KC = gemm_kc;
  using policy_type = kacc::Impl::team_policy<Exec>;
  using member_type = typename policy_type::member_type;
  using tile_type = typename gemm_scratch<Exec, T, Acc>::tile_type;
  using sums_type = typename gemm_scratch<Exec, T, Acc>::sums_type;
  const index_type tiles_i = (m + MC - 1) / MC, tiles_j = (n + NC - 1) / NC;
  auto kernel = KOKKOS_LAMBDA(const member_type& team) {
    const tile_type ap(team.team_scratch(1), MC * KC), bp(team.team_scratch(1), KC * NC);
    const sums_type sums(team.team_scratch(1), MC * NC);
    const index_type i0 = (team.league_rank() % tiles_i) * MC;
    const index_type j0 = (team.league_rank() / tiles_i) * NC;
    const index_type mb = m - i0 < MC ? m - i0 : MC, nb = n - j0 < NC ? n - j0 : NC;
    const index_type mp = (mb + MR - 1) / MR, np = (nb + NR - 1) / NR;
    for (index_type e = 0; e < MC * NC; ++e) sums(e) = Acc(0);
    for (index_type k0 = 0; k0 < k; k0 += KC) {
      const index_type kb = k - k0 < KC ? k - k0 : KC;
      // Register block p of op(A) is kb x MR, k-major; zero-padded past mb. Whole register
      // blocks are converted by block loads (SIMD conversions where the format has them).
      for (index_type kk = 0; kk < kb; ++kk) {
        index_type i = 0;
        for (; i + MR <= mb; i += MR)
          a.template load_along_i<MR>(i0 + i, k0 + kk, &ap(((i / MR) * kb + kk) * MR));
        for (; i < mp * MR; ++i)
          ap(((i / MR) * kb + kk) * MR + i % MR) = i < mb ? convert<T>(a(i0 + i, k0 + kk)) : T(0);
      }
      for (index_type j = 0; j < np * NR; ++j) {
        index_type kk = 0;
        if (j < nb) {
          T staged[gemm_pack_stage];
          for (; kk + gemm_pack_stage <= kb; kk += gemm_pack_stage) {
            b.template load_along_i<gemm_pack_stage>(k0 + kk, j0 + j, staged);
            for (index_type l = 0; l < gemm_pack_stage; ++l)
              bp(((j / NR) * kb + kk + l) * NR + j % NR) = staged[l];
          }
        }
        for (; kk < kb; ++kk)
          bp(((j / NR) * kb + kk) * NR + j % NR) = j < nb ? convert<T>(b(k0 + kk, j0 + j)) : T(0);
      }
      for (index_type q = 0; q < np; ++q)
        for (index_type p = 0; p < mp; ++p)
          add_register_block<Acc>(&ap(p * kb * MR), &bp(q * kb * NR), kb,
                                  &sums(p * MR * NC + q * NR), NC);
    }
    out.template store_tile<gemm_pack_stage>(i0, j0, mb, nb, sums, NC);
  };
  const std::size_t bytes = tile_type::shmem_size(MC * KC) + tile_type::shmem_size(KC * NC) +
                            sums_type::shmem_size(MC * NC);
  Kokkos::parallel_for(
      label, policy_type(exec, tiles_i * tiles_j, 1).set_scratch_size(1, Kokkos::PerTeam(bytes)),
      kernel);
}

/// Host shape, plain accumulator, C of at most gemm_nr columns and op(A) contiguous down
/// its columns: each thread owns gemm_narrow_rows rows of C and walks all of K, converting
/// gemm_narrow_depth columns of op(B) (zero-padded to gemm_nr) and then, a register block
/// of gemm_mr rows at a time, the same columns of op(A) straight from memory, so each of
/// those columns is read down gemm_narrow_rows rows in turn. gemm_host would pack every
/// op(A) tile for a single register block of C's columns. (Rows of op(A) contiguous read
/// slower this way: 41 against 33 ms in the shape of gemm_narrow_depth's figures, so they
/// keep gemm_host.)
template <class T, class Acc, class Exec, class MA, class MB, class Out>
void gemm_host_narrow(const std::string& label, const Exec& exec, const MA& a, const MB& b,
                      index_type m, index_type n, index_type k, const Out& out) {
  constexpr index_type MR = gemm_mr, NR = gemm_nr, RB = gemm_narrow_rows, G = gemm_narrow_depth;
  using policy_type = kacc::Impl::team_policy<Exec>;
  using member_type = typename policy_type::member_type;
  using tile_type = typename gemm_scratch<Exec, T, Acc>::tile_type;
  using sums_type = typename gemm_scratch<Exec, T, Acc>::sums_type;
  auto kernel = KOKKOS_LAMBDA(const member_type& team) {
    const tile_type bt(team.team_scratch(1), G * NR);
    const sums_type sums(team.team_scratch(1), RB * NR);
    T* const bp = &bt(0);
    Acc* const sp = &sums(0);
    const index_type i0 = team.league_rank() * RB;
    const index_type mb = m - i0 < RB ? m - i0 : RB, whole = mb / MR * MR;
    for (index_type e = 0; e < RB * NR; ++e) sp[e] = Acc(0);
    for (index_type k0 = 0; k0 < k; k0 += G) {
      const index_type kb = k - k0 < G ? k - k0 : G;
      for (index_type j = 0; j < NR; ++j) {
        index_type kk = 0;
        if (j < n && kb == G) {
          T staged[G];
          b.template load_along_i<G>(k0, j, staged);
          for (; kk < G; ++kk) bp[kk * NR + j] = staged[kk];
        }
        for (; kk < G; ++kk) bp[kk * NR + j] = j < n && kk < kb ? convert<T>(b(k0 + kk, j)) : T(0);
      }
      for (index_type i = 0; i < mb; i += MR) {
        // gemm_host's register block, over a kb x MR tile of op(A) converted into a local
        // array first: loading op(A) inside the FMA loop, with c loaded from the sums,
        // measured 3.5-4x slower (GCC's vectoriser permuted c between registers).
        T ar[G * MR];
        for (index_type kk = 0; kk < kb; ++kk) {
          if (i < whole) {
            a.template load_along_i<MR>(i0 + i, k0 + kk, &ar[kk * MR]);
          } else {
            for (index_type r = 0; r < MR; ++r)
              ar[kk * MR + r] = i + r < mb ? convert<T>(a(i0 + i + r, k0 + kk)) : T(0);
          }
        }
        add_register_block<Acc>(ar, bp, kb, sp + i * NR, NR);
      }
    }
    out.template store_tile<gemm_pack_stage>(i0, 0, mb, n, sums, NR);
  };
  const std::size_t bytes = tile_type::shmem_size(G * NR) + sums_type::shmem_size(RB * NR);
  Kokkos::parallel_for(
      label, policy_type(exec, (m + RB - 1) / RB, 1).set_scratch_size(1, Kokkos::PerTeam(bytes)),
      kernel);
}

/// Team shape, plain accumulator: a team owns a gemm_team_tile square of C; each step
/// stages a gemm_team_depth-deep tile of op(A) and of op(B) in team scratch (consecutive
/// threads loading consecutive rows of op(A)), and each thread adds those products to the
/// sums, kept in Acc in team scratch, of the C entries it owns.
template <class T, class Acc, class Exec, class MA, class MB, class Out>
void gemm_team(const std::string& label, const Exec& exec, const MA& a, const MB& b, index_type m,
               index_type n, index_type k, const Out& out) {
  constexpr index_type TT = gemm_team_tile, TK = gemm_team_depth;
  using policy_type = kacc::Impl::team_policy<Exec>;
  using member_type = typename policy_type::member_type;
  using tile_type = typename gemm_scratch<Exec, T, Acc>::tile_type;
  using sums_type = typename gemm_scratch<Exec, T, Acc>::sums_type;
  const index_type tiles_i = (m + TT - 1) / TT, tiles_j = (n + TT - 1) / TT;
  auto kernel = KOKKOS_LAMBDA(const member_type& team) {
    const tile_type as(team.team_scratch(0), TT * TK), bs(team.team_scratch(0), TK * TT);
    const sums_type sums(team.team_scratch(0), TT * TT);
    const index_type i0 = (team.league_rank() % tiles_i) * TT;
    const index_type j0 = (team.league_rank() / tiles_i) * TT;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TT * TT),
                         [&](const index_type e) { sums(e) = Acc(0); });
    for (index_type k0 = 0; k0 < k; k0 += TK) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TT * TK), [&](const index_type e) {
        const index_type i = e % TT, kk = e / TT;
        as(e) = i0 + i < m && k0 + kk < k ? convert<T>(a(i0 + i, k0 + kk)) : T(0);
      });
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TK * TT), [&](const index_type e) {
        const index_type kk = e % TK, j = e / TK;
        bs(e) = j0 + j < n && k0 + kk < k ? convert<T>(b(k0 + kk, j0 + j)) : T(0);
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TT * TT), [&](const index_type e) {
        const index_type i = e % TT, j = e / TT;
        Acc s = Acc(0);
        for (index_type kk = 0; kk < TK; ++kk) s += as(kk * TT + i) * bs(j * TK + kk);
        sums(e) += s;
      });
      team.team_barrier();
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, TT * TT), [&](const index_type e) {
      const index_type i = e % TT, j = e / TT;
      if (i0 + i < m && j0 + j < n) out(i0 + i, j0 + j, static_cast<T>(sums(e)));
    });
  };
  const std::size_t bytes = 2 * tile_type::shmem_size(TT * TK) + sums_type::shmem_size(TT * TT);
  const auto scratch = Kokkos::PerTeam(bytes);
  const int threads = kacc::Impl::team_threads(
      policy_type(exec, 1, 1, 1).set_scratch_size(0, scratch), kernel, 256);
  Kokkos::parallel_for(
      label, policy_type(exec, tiles_i * tiles_j, threads, 1).set_scratch_size(0, scratch), kernel);
}

/// Any non-plain accumulator (compensated, exact), both shapes: one C entry per thread,
/// its whole sum over K in one Acc, so every product reaches the accumulator as it is
/// (a compensated or exact sum is chosen for accuracy, not speed).
template <class T, class Acc, class Exec, class MA, class MB, class Out>
void gemm_entries(const std::string& label, const Exec& exec, const MA& a, const MB& b,
                  index_type m, index_type n, index_type k, const Out& out) {
  using traits = accumulator_traits<Acc>;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, m * n), KOKKOS_LAMBDA(const index_type e) {
        const index_type i = e % m, j = e / m;
        Acc s = traits::zero();
        for (index_type kk = 0; kk < k; ++kk)
          traits::add_product(s, convert<T>(a(i, kk)), convert<T>(b(kk, j)));
        out(i, j, static_cast<T>(traits::result(s)));
      });
}

/// Where the kernels put their sums s: C(i, j) = alpha s + beta C(i, j), C not read when
/// beta == 0, one entry at a time or a run of W entries down a column (block loads and
/// stores: SIMD conversions where C's format has them on the host, rounding as the
/// entry-by-entry stores do).
template <class T, class CV>
struct gemm_output {
  CV C;            ///< the output matrix
  T alpha;         ///< factor of the sums
  T beta;          ///< factor of C's old entries
  bool beta_zero;  ///< beta == 0: C's old entries are not read (NaN does not propagate)

  /// Whether column_run stores with SIMD conversions on this target. Where it would store
  /// entry by entry, store_tile stores entry by entry itself: W unrolled scalar
  /// conversions inside a loop made GCC 11's induction-variable optimisation take minutes
  /// per instantiation (host code of CUDA builds, compiled without -march).
  static constexpr bool simd_column_runs = kacc::Impl::block_store_simd_v<CV, T>;

  /// C(i0 + i, j0 + j) = alpha s + beta C(i0 + i, j0 + j) for i < mb, j < nb, s the entry
  /// i * ld + j of sums: runs of W entries down each column where simd_column_runs, entry
  /// by entry otherwise. (A member, not code in the kernel's lambda: nvcc rejects an
  /// extended lambda's first capture of a variable inside `if constexpr`.)
  template <int W, class Sums>
  KOKKOS_INLINE_FUNCTION void store_tile(const index_type i0, const index_type j0,
                                         const index_type mb, const index_type nb, const Sums& sums,
                                         const index_type ld) const {
    for (index_type j = 0; j < nb; ++j) {
      index_type i = 0;
      if constexpr (simd_column_runs) {
        for (; i + W <= mb; i += W) {
          T column[W];
          for (index_type l = 0; l < W; ++l) column[l] = static_cast<T>(sums((i + l) * ld + j));
          column_run<W>(i0 + i, j0 + j, column);
        }
      }
      for (; i < mb; ++i) (*this)(i0 + i, j0 + j, static_cast<T>(sums(i * ld + j)));
    }
  }

  /// C(i, j) = alpha s + beta C(i, j).
  KOKKOS_INLINE_FUNCTION void operator()(const index_type i, const index_type j, const T& s) const {
    using CT = typename CV::non_const_value_type;
    C(i, j) = convert<CT>(beta_zero ? alpha * s : alpha * s + beta * convert<T>(C(i, j)));
  }
  /// C(i + l, j) = alpha s[l] + beta C(i + l, j) for l in [0, W).
  template <int W>
  KOKKOS_INLINE_FUNCTION void column_run(const index_type i, const index_type j, const T* s) const {
    T c[W];
    if (beta_zero) {
      for (int l = 0; l < W; ++l) c[l] = alpha * s[l];
    } else {
      kacc::Impl::load_block<W>(C, i, j, 0, c);
      for (int l = 0; l < W; ++l) c[l] = alpha * s[l] + beta * c[l];
    }
    kacc::Impl::store_block<W>(C, i, j, 0, c);
  }
};

/// GEMM after the argument checks, for C of extents (m, n), m and n non-zero, in the loop
/// shape Shape. Also the trailing update of kacc::lapack::getrf, whose operands are
/// disjoint blocks of one matrix (so it skips the public entry's aliasing check).
template <class T, class Acc, shape Shape, bool TA, bool TB, class Exec, class AV, class BV,
          class CV>
void gemm(const std::string& label, const Exec& exec, const T& alpha, const AV& A, const BV& B,
          const T& beta, const CV& C) {
  using CT = typename CV::non_const_value_type;
  const index_type m = C.extent(0), n = C.extent(1), k = A.extent(TA ? 0 : 1);
  const bool beta_zero = beta == T(0);
  if (alpha == T(0) || k == 0) {
    Kokkos::parallel_for(
        label + "_scale_c", kacc::Impl::range(exec, 0, m * n), KOKKOS_LAMBDA(const index_type e) {
          const index_type i = e % m, j = e / m;
          C(i, j) = convert<CT>(beta_zero ? T(0) : beta * convert<T>(C(i, j)));
        });
    return;
  }
  const gemm_output<T, CV> out{C, alpha, beta, beta_zero};
  const detail::oriented<AV, TA> a{A};
  const detail::oriented<BV, TB> b{B};
  if constexpr (!accumulator_traits<Acc>::is_plain) {
    gemm_entries<T, Acc>(label, exec, a, b, m, n, k, out);
  } else if constexpr (Shape == shape::host) {
    if (n <= gemm_nr && !a.k_contiguous()) {
      gemm_host_narrow<T, Acc>(label, exec, a, b, m, n, k, out);
    } else {
      gemm_host<T, Acc>(label, exec, a, b, m, n, k, out);
    }
  } else {
    gemm_team<T, Acc>(label, exec, a, b, m, n, k, out);
  }
}

/// gemm<T, Acc, Shape> with the transposes as run-time flags.
template <class T, class Acc, shape Shape, class Exec, class AV, class BV, class CV>
void gemm(const std::string& label, const Exec& exec, bool ta, bool tb, const T& alpha, const AV& A,
          const BV& B, const T& beta, const CV& C) {
  if (ta && tb) {
    gemm<T, Acc, Shape, true, true>(label, exec, alpha, A, B, beta, C);
  } else if (ta) {
    gemm<T, Acc, Shape, true, false>(label, exec, alpha, A, B, beta, C);
  } else if (tb) {
    gemm<T, Acc, Shape, false, true>(label, exec, alpha, A, B, beta, C);
  } else {
    gemm<T, Acc, Shape, false, false>(label, exec, alpha, A, B, beta, C);
  }
}

}  // namespace Impl

/// C = alpha * op(A) * op(B) + beta * C with op(X) = X ("N") or X^T ("T", "C"; lower case
/// too). Arith defaults to the common arithmetic type of A, B and C, Acc to Arith; each
/// entry of C is one sum in Acc over all of K, rounded to C's format once. BLAS rules:
/// beta == 0 does not read C (NaN or inf in C does not propagate), alpha == 0 or K == 0
/// does not read A or B (C = beta C), and m == 0 or n == 0 returns at once. With a
/// compensated or exact Acc each entry is summed by one thread in k order (slower; the
/// exact result does not depend on the thread count).
/// Throws std::invalid_argument for an unknown transA or transB, mismatched extents, or C
/// sharing memory with A or B.
template <class Arith = void, class Acc = void, class Exec, class AV, class BV, class CV,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<BV> && is_view_v<CV>>>
void gemm(const Exec& exec, const char transA[], const char transB[],
          const typename detail::arith_t<Arith, AV, BV, CV>& alpha, const AV& A, const BV& B,
          const typename detail::arith_t<Arith, AV, BV, CV>& beta, const CV& C) {
  using T = detail::arith_t<Arith, AV, BV, CV>;
  using Ac = detail::acc_t<Acc, T>;
  static_assert(AV::rank == 2 && BV::rank == 2 && CV::rank == 2,
                "kacc::blas::gemm: A, B and C must be rank 2");
  KACC_REQUIRE_ACCESSIBLE(Exec, AV, "kacc::blas::gemm", "A");
  KACC_REQUIRE_ACCESSIBLE(Exec, BV, "kacc::blas::gemm", "B");
  KACC_REQUIRE_ACCESSIBLE(Exec, CV, "kacc::blas::gemm", "C");
  const char ta = detail::mode_char("gemm", "transA", transA, "NTC");
  const char tb = detail::mode_char("gemm", "transB", transB, "NTC");
  const std::int64_t m = A.extent(ta != 'N' ? 1 : 0), k = A.extent(ta != 'N' ? 0 : 1);
  const std::int64_t kb = B.extent(tb != 'N' ? 1 : 0), n = B.extent(tb != 'N' ? 0 : 1);
  if (kb != k || static_cast<std::int64_t>(C.extent(0)) != m ||
      static_cast<std::int64_t>(C.extent(1)) != n) {
    detail::fail("gemm", std::string("transA \"") + ta + "\", transB \"" + tb +
                             "\": A has extents " + detail::extents_of(A) + ", B has extents " +
                             detail::extents_of(B) + " and C has extents " + detail::extents_of(C) +
                             "; op(A) (m x k) times op(B) (k x n) needs C m x n");
  }
  detail::check_no_alias("gemm", "C", C, "A", A);
  detail::check_no_alias("gemm", "C", C, "B", B);
  if (m == 0 || n == 0) return;
  const std::string label = std::string("kacc::blas::gemm[") + ta + tb +
                            ",A=" + detail::format_of<AV>() + "/" + detail::layout_of<AV>() +
                            ",B=" + detail::format_of<BV>() + "/" + detail::layout_of<BV>() +
                            ",C=" + detail::format_of<CV>() + detail::arith_suffix<T, Ac>();
  kacc::Impl::write_with_overflow_policy(
      "kacc::blas::gemm", "C", exec, C, beta != T(0), [&](const auto& out) {
        Impl::gemm<T, Ac, kacc::Impl::default_shape_v<Exec>>(label, exec, ta != 'N', tb != 'N',
                                                             alpha, A, B, beta, out);
      });
}

/// gemm in C's default execution space instance, fenced.
template <class Arith = void, class Acc = void, class AV, class BV, class CV,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<BV> && is_view_v<CV>>>
void gemm(const char transA[], const char transB[],
          const typename detail::arith_t<Arith, AV, BV, CV>& alpha, const AV& A, const BV& B,
          const typename detail::arith_t<Arith, AV, BV, CV>& beta, const CV& C) {
  using Exec = typename CV::execution_space;
  gemm<Arith, Acc>(Exec(), transA, transB, alpha, A, B, beta, C);
  Exec().fence();
}

}  // namespace blas
}  // namespace kacc
