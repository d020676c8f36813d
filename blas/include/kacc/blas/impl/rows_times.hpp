#pragma once
/// @file
/// The matrix-times-vector core of GEMV and of TRSV's block updates:
/// out(i, sum_{k in [k0,k1)} M(i,k) x(k)) for i in [i0,i1), in two memory shapes (M
/// contiguous along k: "dot"; along i: "axpy") and two loop shapes (Impl::shape). Entries
/// are read as `convert<Arith>(v(i))`, so plain and kacc views share the source.

#include <kacc/blas/detail.hpp>
#include <kacc/core/double_double.hpp>
#include <kacc/core/exact_lanes.hpp>
#include <kacc/core/pragma_simd.hpp>

namespace kacc {
namespace blas {
namespace Impl {

using kacc::Impl::shape;

/// Sum lanes per row in the host dot shape: two AVX-512 fp64 registers.
constexpr int host_lanes = 16;
/// Rows of one team in the team axpy shape: consecutive lanes read consecutive rows.
constexpr int team_rows = 32;
/// Bytes of level-0 scratch a team of the axpy shape may ask for: what every CUDA GPU
/// gives a block without opting in.
constexpr std::size_t team_scratch_budget = 48 * 1024;
/// Threads of one team in the team axpy shape (at most), each summing every
/// team_threads-th column.
constexpr int team_threads = 8;
/// Rows of one team in the team dot shape (at most; one thread, i.e. one vector of lanes,
/// per row).
constexpr int team_dot_rows = 4;

/// Adds a0 b0 + a1 b1 + a2 b2 + a3 b3: a plain sum adds the four products as one
/// pairwise-summed term (fewer dependent additions), any other accumulator adds each
/// product on its own, so an exact accumulator sees the exact products.
template <class Traits, class Acc, class T>
KOKKOS_INLINE_FUNCTION void add_four_products(Acc& acc, const T& a0, const T& b0, const T& a1,
                                              const T& b1, const T& a2, const T& b2, const T& a3,
                                              const T& b3) {
  if constexpr (Traits::is_plain) {
    Traits::add(acc, (a0 * b0 + a1 * b1) + (a2 * b2 + a3 * b3));
  } else {
    Traits::add_product(acc, a0, b0);
    Traits::add_product(acc, a1, b1);
    Traits::add_product(acc, a2, b2);
    Traits::add_product(acc, a3, b3);
  }
}

/// The storage format of the matrix M (detail::oriented), void for other kinds of M.
template <class M>
struct matrix_format {
  using type = void;
};
template <class AV, bool Trans>
struct matrix_format<detail::oriented<AV, Trans>> {
  using type = format_t<AV>;
};

/// Whether the products M(i, k) x(k) are exact in double (kacc::Impl::exact_products_v).
template <class M, class X>
inline constexpr bool exact_products_v =
    kacc::Impl::exact_products_v<typename matrix_format<M>::type, format_t<X>>;

/// Whether the host axpy shape stages M's columns through block loads: formats whose runs
/// load with SIMD conversions on this host, scaled matrices included. fp16's plain loop
/// decodes with integer operations (exact under denormals-are-zero), which cost more than
/// the block loads' vcvtph2ps: GEMV with fp16 storage, 16384^2, 2 threads, LayoutLeft-N
/// 64-74 ms plain against 34-40 ms staged.
template <class M>
inline constexpr bool axpy_staged_v = M::vectorised_runs;

/// Most rows one host thread keeps partial sums for in the host axpy shape, whatever M's
/// format: a chunk reads 4096 entries of each column it walks (32 KiB of fp64, 16 KiB of fp32,
/// 8 KiB of fp16), and plain fp64 sums of its rows fill 32 KiB of the core's L1. Shorter runs
/// down each column read slower. GEMV 16384^2, LayoutLeft-N, 2 threads: fp16 1024 rows 36-42
/// ms, 2048 rows 25-28 ms; medians of 21, in processes where the machine gave the lower
/// bandwidth, fp32 storage with fp64 arithmetic 2048 rows 31.0-33.0 ms, 4096 rows 28.7-29.9,
/// fp64 1024 rows 49.8-53.4 ms, 2048 rows 47.8-51.3, 4096 rows 43.3-46.1; 8192 rows no faster
/// than 4096 in either.
constexpr index_type axpy_rows = 4096;

/// Whether the host dot shape stages M and x through block loads: when either has SIMD
/// conversions on this host, except an x of a scaled format, whose plain loop (an integer
/// conversion and a product per entry) measured faster: GEMV with int16s storage, 16384^2,
/// 2 threads, 38 against 77-80 ms (LayoutLeft-T) and 42-44 against 79-82 ms (LayoutRight-N).
template <class M, class X>
inline constexpr bool rows_staged_v = M::vectorised_loads ||
                                      (kacc::Impl::block_load_vectorised_v<X> &&
                                       !kacc::Impl::single_scale_v<X>);

/// Rows one work item of the host dot shape sums side by side when it stages: each stage of
/// x, converted once, serves them all, and their runs of M keep more loads in flight. GEMV
/// with fp16 or bf16 storage, 16384^2, LayoutRight-N, 2 threads: 40 ms a row at a time,
/// 24 ms four rows, 20 ms eight (same bits).
constexpr int staged_rows = 8;
/// Entries per stage of the staged loops that ask the caches for each next stage (DOT, and
/// the host dot shape's rows side by side), half of kacc::Impl::block_stage: the next stage
/// is asked for in shorter bursts. Each loop alone in a standalone program, 2 threads, the
/// stage sizes side by side in one process, medians of 11: GEMV's rows on a 16384^2
/// LayoutRight matrix, fp16 15.3-15.4 ms with 256 entries, 13.8-13.9 ms with 128, bf16
/// 16.4-16.6 and 16.0-16.1 (64 entries: fp16 14.0-14.1, bf16 15.7-15.8); DOT n = 2^28, fp16
/// 36.0-36.6 and 31.4-32.2, bf16 35.0-35.7 and 33.5-34.8 (64: fp16 36.5-36.8, bf16 32.9-33.7;
/// 512: 44.6-46.5 for both).
constexpr int prefetched_stage = kacc::Impl::block_stage / 2;
/// The fewest entries per row for which the host dot shape takes rows side by side: TRSV's
/// updates, rows of one 256-entry stage, took 1.1-1.5x longer side by side.
constexpr index_type side_by_side_entries = 8 * kacc::Impl::block_stage;

/// The bytes per entry of M where its entries load without SIMD conversions on this host and
/// are summed in a plain accumulator; 0 otherwise.
template <class Acc, class M>
constexpr std::size_t plain_loaded_bytes() {
  using format = typename matrix_format<M>::type;
  if constexpr (std::is_void<format>::value) {
    return 0;
  } else {
    return !M::vectorised_loads && accumulator_traits<Acc>::is_plain
               ? kacc::bytes_per_entry<decltype(M::a)>()
               : 0;
  }
}
/// Whether M is stored in a format narrower than Arith without SIMD block loads on this host
/// (fp32 with fp64 arithmetic), summed in a plain accumulator.
template <class Arith, class Acc, class M>
inline constexpr bool narrow_plain_v =
    plain_loaded_bytes<Acc, M>() != 0 && plain_loaded_bytes<Acc, M>() < sizeof(Arith);
/// Whether the host dot shape takes plain_rows rows side by side, host_lanes entries at a
/// time (rows_dot_blocks_side_by_side): plain sums of entries that load without SIMD
/// conversions on this host, at most as wide as Arith (fp64 or fp32 storage with fp64
/// arithmetic, fp32 with fp32), where x does not stage either.
template <class Arith, class Acc, class M, class X>
inline constexpr bool plain_rows_v =
    plain_loaded_bytes<Acc, M>() != 0 && plain_loaded_bytes<Acc, M>() <= sizeof(Arith) &&
    !rows_staged_v<M, X>;
/// Rows the host dot shape sums side by side where plain_rows_v: each block of x serves them
/// all and their sums stay in registers. GEMV 16384^2, 2 threads, LayoutRight-N and
/// LayoutLeft-T, AMD EPYC, fp32 storage with fp64 arithmetic: 32 ms a row at a time, 23 ms
/// two rows, 18.7-19.1 ms four, 19.5 ms eight (plain fp32 GEMV 16-18 ms); fp64 storage there
/// (f004009's loops): 35 ms four rows against 29 ms one at a time. Intel Xeon, LayoutRight-N
/// fp64 (kacc-perf-accumulator-cost, three processes each, alternating, same bits): 109-112
/// ms one at a time, 79 ms two rows, 68-70 ms four, 68-69 ms eight (OpenBLAS dgemv 77-89 ms).
constexpr int plain_rows = 4;

/// kacc::Impl::prefetch_entries for the `count` entries of M from (i, k) along k, which the host
/// dot shape reads where they lie consecutive in memory.
template <class AV, bool Trans>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_along_k(const detail::oriented<AV, Trans>& m,
                                                  const index_type i, const index_type k,
                                                  const index_type count) {
  if constexpr (Trans) {
    kacc::Impl::prefetch_entries(kacc::Impl::storage_pointer(m.a, k, i), count);
  } else {
    kacc::Impl::prefetch_entries(kacc::Impl::storage_pointer(m.a, i, k), count);
  }
}

/// The staged part of row i of the host dot shape: while a whole stage of block_stage
/// entries is left in [k, k1), converts it through block loads and adds its products to
/// lane[entry % host_lanes], in the plain loop's order. Returns the first entry not added
/// (k itself when neither M nor x is staged). A function of its own: device lambdas may not
/// first capture a variable inside an if constexpr branch (nvcc).
template <class Arith, class Acc, class M, class X>
KOKKOS_INLINE_FUNCTION index_type rows_dot_staged(const M& m, const X& x, const index_type i,
                                                  index_type k, const index_type k1, Acc* lane) {
  if constexpr (rows_staged_v<M, X>) {
    using traits = accumulator_traits<Acc>;
    constexpr int S = kacc::Impl::block_stage, L = host_lanes;
    constexpr auto checked = kacc::Impl::subnormal_check::by_caller;
    // Every entry to the plain loop where block loads would flush subnormals.
    if (kacc::Impl::block_loads_flush_subnormals<Arith, decltype(m.a), X>()) return k;
    for (; k + S <= k1; k += S) {
      Arith ms[S], xs[S];
      KACC_PRAGMA_UNROLL(16)
      for (int j = 0; j < S; j += L) {
        m.template load_along_k<L, checked>(i, k + j, ms + j);
        kacc::Impl::load_block<L, checked>(x, k + j, xs + j);
      }
      for (int j = 0; j < S; j += L)
        for (int l = 0; l < L; ++l) traits::add_product(lane[l], ms[j + l], xs[j + l]);
    }
  } else {
    (void)m, (void)x, (void)i, (void)k1, (void)lane;
  }
  return k;
}

/// rows_dot_staged for the staged_rows rows from i side by side, in stages of
/// prefetched_stage entries: each stage of x is converted once, then each row's stage of
/// M in turn, its products added to lane[r][entry % host_lanes] in the plain loop's order,
/// after asking the caches for that row's next stage (GEMV 16384^2 with fp16 storage,
/// LayoutLeft-T and LayoutRight-N, 2 threads, stages of 256: 24.5-25.1 ms without,
/// 19.6-19.8 ms with; bf16 27.5-28.4 and 21.3-21.5). For formats that stage only.
template <class Arith, class Acc, class M, class X>
KOKKOS_INLINE_FUNCTION index_type rows_dot_staged_side_by_side(const M& m, const X& x,
                                                               const index_type i, index_type k,
                                                               const index_type k1,
                                                               Acc (*lane)[host_lanes]) {
  using traits = accumulator_traits<Acc>;
  constexpr int S = prefetched_stage, L = host_lanes;
  constexpr auto checked = kacc::Impl::subnormal_check::by_caller;
  if (kacc::Impl::block_loads_flush_subnormals<Arith, decltype(m.a), X>()) return k;
  for (; k + S <= k1; k += S) {
    Arith xs[S];
    KACC_PRAGMA_UNROLL(16)
    for (int j = 0; j < S; j += L) kacc::Impl::load_block<L, checked>(x, k + j, xs + j);
    for (int r = 0; r < staged_rows; ++r) {
      Arith ms[S];
      if (k + 2 * S <= k1) prefetch_along_k(m, i + r, k + S, S);
      KACC_PRAGMA_UNROLL(16)
      for (int j = 0; j < S; j += L) m.template load_along_k<L, checked>(i + r, k + j, ms + j);
      for (int j = 0; j < S; j += L)
        for (int l = 0; l < L; ++l) traits::add_product(lane[r][l], ms[j + l], xs[j + l]);
    }
  }
  return k;
}

/// The part of rows i .. i + R - 1 of the host dot shape, side by side, from entry k while a
/// whole block of host_lanes entries is left in [k, k1): each block of x is read once for the
/// R rows, each row's block through a block load, its products added to
/// lane[r][entry % host_lanes] in the plain loop's order. Returns the first entry not added.
/// Where a row's run has one scale, all R rows' blocks are loaded before any product: loaded
/// row by row between the products, GCC 12 took the decoded entries out of their vector
/// registers one by one and multiplied them as scalars (GEMV with int16s storage, 16384^2,
/// LayoutLeft-T, 2 threads: 42 ms, against 13 ms so). Rows scaled along k keep the row by
/// row order, which measured faster for them (LayoutRight-N: 13 against 15.6 ms).
template <int R, class Arith, class Acc, class M, class X>
KOKKOS_INLINE_FUNCTION index_type rows_dot_blocks_side_by_side(const M& m, const X& x,
                                                               const index_type i, index_type k,
                                                               const index_type k1,
                                                               Acc (*lane)[host_lanes]) {
  using traits = accumulator_traits<Acc>;
  constexpr int L = host_lanes;
  for (; k + L <= k1; k += L) {
    Arith xs[L];
    kacc::Impl::load_block<L>(x, k, xs);
    if constexpr (M::one_scale_along_k) {
      Arith ms[R][L];
      for (int r = 0; r < R; ++r) m.template load_along_k<L>(i + r, k, ms[r]);
      for (int r = 0; r < R; ++r)
        for (int l = 0; l < L; ++l) traits::add_product(lane[r][l], ms[r][l], xs[l]);
    } else {
      for (int r = 0; r < R; ++r) {
        Arith ms[L];
        m.template load_along_k<L>(i + r, k, ms);
        for (int l = 0; l < L; ++l) traits::add_product(lane[r][l], ms[l], xs[l]);
      }
    }
  }
  return k;
}

/// Finishes row i of the host dot shape from entry k: the rest of its entries in the plain
/// loop (16 lanes, as the stages add), then its lanes summed pairwise into out(i).
template <class Arith, class Acc, class M, class X, class Out>
KOKKOS_INLINE_FUNCTION void rows_dot_finish(const M& m, const X& x, const index_type i,
                                            index_type k, const index_type k1, Acc* lane,
                                            const Out& out) {
  using traits = accumulator_traits<Acc>;
  for (; k + host_lanes <= k1; k += host_lanes) {
    for (int l = 0; l < host_lanes; ++l)
      traits::add_product(lane[l], convert<Arith>(m(i, k + l)), convert<Arith>(x(k + l)));
  }
  for (int l = 0; k + l < k1; ++l)
    traits::add_product(lane[l], convert<Arith>(m(i, k + l)), convert<Arith>(x(k + l)));
  for (int w = host_lanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) traits::join(lane[l], lane[l + w]);
  out(i, static_cast<Arith>(traits::result(lane[0])));
}

/// The staged part of one block of the host DOT: as rows_dot_staged, for x . y over
/// [i, i1) in stages of prefetched_stage entries, each stage asking the caches for the next
/// one (n = 2^28, 2 threads, stages of 256: bf16 storage 42.5-45.9 ms without, 35.8-37.3 ms
/// with; fp16 35.4-39.2 and 33.9-35.2; OpenBLAS ddot 134-138).
template <class T, class Acc, class X, class Y>
KOKKOS_INLINE_FUNCTION index_type dot_staged(const X& x, const Y& y, index_type i,
                                             const index_type i1, Acc* lane) {
  if constexpr (kacc::Impl::block_load_vectorised_v<X> || kacc::Impl::block_load_vectorised_v<Y>) {
    using traits = accumulator_traits<Acc>;
    constexpr int S = prefetched_stage, L = host_lanes;
    constexpr auto checked = kacc::Impl::subnormal_check::by_caller;
    // Every entry to the plain loop where block loads would flush subnormals.
    if (kacc::Impl::block_loads_flush_subnormals<T, X, Y>()) return i;
    for (; i + S <= i1; i += S) {
      if (i + 2 * S <= i1) {
        kacc::Impl::prefetch_entries(kacc::Impl::storage_pointer(x, i + S), S);
        kacc::Impl::prefetch_entries(kacc::Impl::storage_pointer(y, i + S), S);
      }
      T xs[S], ys[S];
      for (int j = 0; j < S; j += L) {
        kacc::Impl::load_block<L, checked>(x, i + j, xs + j);
        kacc::Impl::load_block<L, checked>(y, i + j, ys + j);
      }
      for (int j = 0; j < S; j += L)
        for (int l = 0; l < L; ++l) traits::add_product(lane[l], xs[j + l], ys[j + l]);
    }
  } else {
    (void)x, (void)y, (void)i1, (void)lane;
  }
  return i;
}

/// Entries ahead of their use that the host loops with exact or double_double sums ask the
/// caches for: their sums are slow enough that the hardware prefetchers fall behind.
constexpr index_type prefetch_distance = 512;

/// Asks the host's caches for the host_lanes entries of M from (i, k) along i (AlongI) or
/// along k, ahead of their use (a hint: no effect on results; none in device code). Locality
/// as __builtin_prefetch's: 3 into every level, 2 into L2 and beyond.
template <bool AlongI, int Locality = 3, class AV, bool Trans>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_group(const detail::oriented<AV, Trans>& m,
                                                const index_type i, const index_type k) {
#if !defined(KACC_DEVICE_PASS) && (defined(__GNUC__) || defined(__clang__))
  constexpr index_type last = host_lanes - 1;
  const index_type il = AlongI ? i + last : i, kl = AlongI ? k : k + last;
  if constexpr (Trans) {
    __builtin_prefetch(kacc::Impl::storage_pointer(m.a, k, i), 0, Locality);
    __builtin_prefetch(kacc::Impl::storage_pointer(m.a, kl, il), 0, Locality);
  } else {
    __builtin_prefetch(kacc::Impl::storage_pointer(m.a, i, k), 0, Locality);
    __builtin_prefetch(kacc::Impl::storage_pointer(m.a, il, kl), 0, Locality);
  }
#else
  (void)m, (void)i, (void)k;
#endif
}

/// Adds M(i + r, k) x(k) for k in [k0, k1) to the double_double sums lane[r host_lanes + k %
/// host_lanes] of the R rows i .. i + R - 1 of the host dot shape, in the order of k (whole
/// groups of host_lanes through double_double_lanes with add_finite, the R rows' groups side
/// by side so they vectorise and their chains of dependent additions overlap, then one by
/// one). Rows whose sums do not stay finite are summed again with double_double's checked
/// additions: the bits are always those of adding each product to its lane with
/// accumulator_traits<double_double>::add_product. With 512-bit vectors
/// (KACC_HOST_WIDE_VECTORS) the sums of four rows stay in registers; with GCC's 256-bit
/// ones they were loaded and stored for every group. GEMV 16384^2, LayoutRight-N, 2
/// threads, Intel Xeon: 79.6-82.8 -> 76.6-76.9 ms (plain fp64 67.0-67.6); same bits.
template <int R, class Arith, class M, class X>
KACC_HOST_WIDE_VECTORS KOKKOS_INLINE_FUNCTION void rows_dot_double_double(const M& m, const X& x,
                                                                          const index_type i,
                                                                          const index_type k0,
                                                                          const index_type k1,
                                                                          double_double* lane) {
  using traits = accumulator_traits<double_double>;
  constexpr int L = host_lanes, W = R * L;
  // Row r's group of M at ms[r L ..], x's group repeated for every row.
  const auto load = [&](const index_type k, Arith(&ms)[W], Arith(&xs)[W]) {
    for (int r = 0; r < R; ++r) m.template load_along_k<L>(i + r, k, ms + r * L);
    kacc::Impl::load_block<L>(x, k, xs);
    for (int r = 1; r < R; ++r)
      for (int l = 0; l < L; ++l) xs[r * L + l] = xs[l];
  };
  index_type k = k0;
  kacc::Impl::double_double_lanes<W, true> lanes(lane);
  for (; k + L <= k1; k += L) {
    Arith ms[W], xs[W];
    if (k + prefetch_distance < k1)
      for (int r = 0; r < R; ++r) prefetch_group<false>(m, i + r, k + prefetch_distance);
    load(k, ms, xs);
    lanes.add_products(ms, xs);
  }
  if (lanes.finite()) {
    lanes.store(lane);
  } else {
    kacc::Impl::double_double_lanes<W> checked(lane);
    for (k = k0; k + L <= k1; k += L) {
      Arith ms[W], xs[W];
      load(k, ms, xs);
      checked.add_products(ms, xs);
    }
    checked.store(lane);
  }
  for (int r = 0; r < R; ++r)
    for (int l = 0; k + l < k1; ++l)
      traits::add_product(lane[r * L + l], convert<Arith>(m(i + r, k + l)),
                          convert<Arith>(x(k + l)));
}

/// Rows the host dot shape with kacc::double_double sums side by side: one row's two
/// registers of sums wait on their chains of dependent additions. GEMV 16384^2,
/// LayoutRight-N, 2 threads, AMD EPYC: 56 ms a row at a time, 46 ms two or four rows (plain
/// fp64 40 ms); Intel Xeon (kacc-perf-accumulator-cost, three processes each, alternating,
/// same bits): 86.9-93.0 ms two rows, 83.0-85.0 four (plain fp64 69-73 ms).
constexpr int double_double_dot_rows = 4;

/// Joins the host_lanes double_double sums of row i pairwise and writes the row.
template <class Arith, class Out>
KOKKOS_INLINE_FUNCTION void finish_double_double_row(const Out& out, const index_type i,
                                                     double_double* lane) {
  for (int w = host_lanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] += lane[l + w];
  out(i, static_cast<Arith>(lane[0]));
}

/// The host dot shape with kacc::double_double: one work item per double_double_dot_rows
/// rows, each row 16 sums side by side (rows_dot_double_double), joined pairwise at the end.
template <class Arith, class Exec, class M, class X, class Out>
void rows_dot_host_double_double(const std::string& label, const Exec& exec, const M& m,
                                 index_type i0, index_type i1, index_type k0, index_type k1,
                                 const X& x, const Out& out) {
  constexpr int R = double_double_dot_rows;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, (i1 - i0 + R - 1) / R), KOKKOS_LAMBDA(const index_type g) {
        const index_type i = i0 + g * R;
        double_double lane[R * host_lanes];
        if (i + R <= i1) {
          rows_dot_double_double<R, Arith>(m, x, i, k0, k1, lane);
          for (int r = 0; r < R; ++r)
            finish_double_double_row<Arith>(out, i + r, lane + r * host_lanes);
        } else {
          for (index_type row = i; row < i1; ++row) {
            double_double row_lane[host_lanes];
            rows_dot_double_double<1, Arith>(m, x, row, k0, k1, row_lane);
            finish_double_double_row<Arith>(out, row, row_lane);
          }
        }
      });
}

/// The side-by-side part of the R rows from i of the host dot shape: staged where
/// rows_staged_v, else in blocks of host_lanes entries. A function of its own: device
/// lambdas may not first capture a variable inside an if constexpr branch (nvcc).
template <int R, class Arith, class Acc, class M, class X>
KOKKOS_INLINE_FUNCTION index_type rows_dot_group_side_by_side(const M& m, const X& x,
                                                              const index_type i,
                                                              const index_type k,
                                                              const index_type k1,
                                                              Acc (*lane)[host_lanes]) {
  if constexpr (rows_staged_v<M, X>) {
    return rows_dot_staged_side_by_side<Arith>(m, x, i, k, k1, lane);
  } else {
    return rows_dot_blocks_side_by_side<R, Arith>(m, x, i, k, k1, lane);
  }
}

/// The rows first .. first + rows - 1 (rows <= R) of the host dot shape over [k0, k1): the
/// staged part of a whole group of R side by side (rows_staged_v; else its blocks of
/// host_lanes entries, plain_rows_v), then each row's rest (rows_dot_finish); a partial
/// group, and every row where R is 1, row by row. With 512-bit vectors
/// (KACC_HOST_WIDE_VECTORS; GEMV 16384^2, 2 threads, Intel Xeon, LayoutLeft-T and
/// LayoutRight-N: fp16 storage 22.8-24.0 -> 21.3-21.9 ms, bf16 24.8-25.3 -> 22.1-22.9, fp32
/// storage with fp64 arithmetic 46.9-47.7 -> 44.4-45.3; same bits).
template <int R, class Arith, class Acc, class M, class X, class Out>
KACC_HOST_WIDE_VECTORS KOKKOS_INLINE_FUNCTION void rows_dot_group(
    const M& m, const X& x, const index_type first, const int rows, const index_type k0,
    const index_type k1, const Out& out) {
  using traits = accumulator_traits<Acc>;
  Acc lane[R][host_lanes];
  for (int r = 0; r < R; ++r)
    for (int l = 0; l < host_lanes; ++l) lane[r][l] = traits::zero();
  const bool whole = R > 1 && rows == R;
  const index_type staged =
      whole ? rows_dot_group_side_by_side<R, Arith>(m, x, first, k0, k1, lane) : k0;
  for (int r = 0; r < rows; ++r) {
    const index_type i = first + r;
    const index_type k = whole ? staged : rows_dot_staged<Arith>(m, x, i, k0, k1, lane[r]);
    rows_dot_finish<Arith>(m, x, i, k, k1, lane[r], out);
  }
}

/// Rows [i0, i1) of the host dot shape R at a time, one group per work item
/// (rows_dot_group).
template <int R, class Arith, class Acc, class Exec, class M, class X, class Out>
void rows_dot_host_side_by_side(const std::string& label, const Exec& exec, const M& m,
                                const index_type i0, const index_type i1, const index_type k0,
                                const index_type k1, const X& x, const Out& out) {
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, (i1 - i0 + R - 1) / R), KOKKOS_LAMBDA(const index_type g) {
        const index_type first = i0 + g * R;
        const int rows = first + R <= i1 ? R : static_cast<int>(i1 - first);
        rows_dot_group<R, Arith, Acc>(m, x, first, rows, k0, k1, out);
      });
}

/// Bytes of M ahead of their use that the host dot shape with kacc::exact<double> asks the
/// caches for: prefetch_distance entries of fp64, twice as many of fp32. GEMV 16384^2 with
/// fp32 storage, LayoutRight-N, 2 threads, Intel Xeon: 84.6-86.0 ms 512 entries ahead,
/// 79.3-83.4 this far (fp64 unchanged: 131.5-133.5, 130.8-135.4).
constexpr index_type exact_prefetch_bytes = prefetch_distance * sizeof(double);

/// Entries of M that exact_prefetch_bytes span.
template <class M>
inline constexpr index_type exact_prefetch_entries_v = exact_prefetch_bytes /
                                                       kacc::bytes_per_entry<decltype(M::a)>();

/// Row i of the host dot shape with kacc::exact<double> over [k0, k1): host_lanes exact lanes
/// (kacc::Impl::exact_lanes) in one pass along the row, rounded once. With 512-bit vectors
/// (KACC_HOST_WIDE_VECTORS), GCC writes the converted blocks of entries in whole registers,
/// which the lanes then read straight from registers: GEMV 16384^2, LayoutRight-N, 2
/// threads, Intel Xeon: fp32 storage 95.1-99.4 -> 83.6-86.9 ms, fp64 140.6-149.6 ->
/// 133.8-140.9; same bits.
template <class Arith, class M, class X, class Out>
KACC_HOST_WIDE_VECTORS KOKKOS_INLINE_FUNCTION void rows_dot_exact_row(const M& m, const X& x,
                                                                      const index_type i,
                                                                      const index_type k0,
                                                                      const index_type k1,
                                                                      const Out& out) {
  constexpr index_type ahead = exact_prefetch_entries_v<M>;
  kacc::Impl::exact_lanes<host_lanes, false, exact_products_v<M, X>> lanes;
  const index_type groups = (k1 - k0) / host_lanes;
  lanes.add_product_groups(groups, [&](const index_type g, Arith* ms, Arith* xs) {
    const index_type k = k0 + g * host_lanes;
    if (k + ahead < k1) prefetch_group<false>(m, i, k + ahead);
    m.template load_along_k<host_lanes>(i, k, ms);
    kacc::Impl::load_block<host_lanes>(x, k, xs);
  });
  for (index_type k = k0 + groups * host_lanes; k < k1; ++k)
    lanes.add_product(convert<Arith>(m(i, k)), convert<Arith>(x(k)));
  out(i, static_cast<Arith>(lanes.value()));
}

/// Host dot shape: one work item per row, each row a lane-split dot product so the inner
/// loop vectorises without reassociation flags. Formats with SIMD conversions on this
/// host are first converted block_stage entries at a time through block loads, because
/// compilers do not vectorise their scalar conversions inside this reduction, and then, for
/// many long rows, a work item takes staged_rows rows side by side; plain sums of formats that
/// do not stage take plain_rows rows side by side.
template <class Arith, class Acc, class Exec, class M, class X, class Out>
void rows_dot_host(const std::string& label, const Exec& exec, const M& m, index_type i0,
                   index_type i1, index_type k0, index_type k1, const X& x, const Out& out) {
  if constexpr (kacc::Impl::uses_exact_lanes_v<Acc, Arith>) {
    Kokkos::parallel_for(
        label, kacc::Impl::range(exec, i0, i1),
        KOKKOS_LAMBDA(const index_type i) { rows_dot_exact_row<Arith>(m, x, i, k0, k1, out); });
    return;
  } else if constexpr (kacc::Impl::uses_double_double_lanes_v<Acc, Arith>) {
    rows_dot_host_double_double<Arith>(label, exec, m, i0, i1, k0, k1, x, out);
    return;
  }
  if constexpr (rows_staged_v<M, X> || plain_rows_v<Arith, Acc, M, X>) {
    // Rows side by side only where every thread still gets several groups of them (the
    // GMRES basis's V^T w has at most a few hundred rows), and only long ones.
    constexpr int R = rows_staged_v<M, X> ? staged_rows : plain_rows;
    const index_type threads = exec.concurrency() > 0 ? exec.concurrency() : 1;
    if (i1 - i0 >= 4 * R * threads && k1 - k0 >= side_by_side_entries) {
      rows_dot_host_side_by_side<R, Arith, Acc>(label, exec, m, i0, i1, k0, k1, x, out);
      return;
    }
  }
  using traits = accumulator_traits<Acc>;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, i0, i1), KOKKOS_LAMBDA(const index_type i) {
        Acc lane[host_lanes];
        for (int l = 0; l < host_lanes; ++l) lane[l] = traits::zero();
        const index_type k = rows_dot_staged<Arith>(m, x, i, k0, k1, lane);
        rows_dot_finish<Arith>(m, x, i, k, k1, lane, out);
      });
}

/// Rows per thread's chunk in the host axpy shapes: two chunks per thread, a multiple of 16,
/// at most MaxRows.
template <index_type MaxRows, class Exec>
index_type axpy_chunk_rows(const Exec& exec, const index_type rows) {
  const index_type threads = exec.concurrency() > 0 ? exec.concurrency() : 1;
  index_type chunk = (rows + 2 * threads - 1) / (2 * threads);
  chunk = ((chunk + 15) / 16) * 16;
  if (chunk > MaxRows) chunk = MaxRows;
  return chunk < 16 ? 16 : chunk;
}

/// Most rows in one panel of the host axpy shape with kacc::exact<double>: 8 KiB of each
/// column (1024 fp64 entries, 2048 fp32 ones), at most 2048 rows so the panel's expansions
/// stay in the core's L2 cache. Panels of 256 rows took 1.1-1.2x longer in fp64 and with fp32
/// storage (GEMV 16384^2, LayoutLeft-N, 2 threads); 2048 rows of fp64 were no faster than
/// 1024 (93.4-100.9 against 95.1-95.7 ms, where the plain axpy shape gained from longer runs).
template <class Format>
constexpr index_type exact_panel_rows_for() {
  constexpr index_type fewest = 1024, most = 2048;
  if constexpr (std::is_void<Format>::value) {
    return fewest;
  } else {
    constexpr index_type rows = 8192 / sizeof(typename format_traits<Format>::storage_type);
    return rows < fewest ? fewest : rows > most ? most : rows;
  }
}
/// exact_panel_rows_for the storage format of M.
template <class M>
inline constexpr index_type exact_panel_rows_v =
    exact_panel_rows_for<typename matrix_format<M>::type>();
/// Columns one group of that shape takes at a time, its expansions in registers.
constexpr index_type exact_panel_columns = 16;

/// Rows [g0, r1) (at most host_lanes) of the host axpy shape with kacc::exact<double>,
/// walking all columns with the rows' exact sums side by side (exact_lanes, one lane per
/// row, each with a long accumulator): what a group of rows falls back to when its
/// expansions alone cannot hold its sums.
template <class Arith, bool ExactProducts, class M, class X, class Out>
KOKKOS_INLINE_FUNCTION void rows_axpy_group_exact(const M& m, const index_type g0,
                                                  const index_type r1, const index_type k0,
                                                  const index_type k1, const X& x, const Out& out) {
  constexpr int L = host_lanes;
  kacc::Impl::exact_lanes<L, true, ExactProducts> sums;
  for (index_type k = k0; k < k1; ++k) {
    const Arith xk = convert<Arith>(x(k));
    Arith ms[L], xs[L];
    // Rows past r1 read as zero and are never written.
    for (int l = 0; l < L; ++l) {
      ms[l] = g0 + l < r1 ? convert<Arith>(m(g0 + l, k)) : Arith(0);
      xs[l] = xk;
    }
    sums.add_products(ms, xs);
  }
  for (int l = 0; l < L && g0 + l < r1; ++l) {
    exact<double> row;
    sums.add_lane_into(l, row);
    out(g0 + l, static_cast<Arith>(row.value()));
  }
}

/// The host axpy shape with kacc::exact<double>: each thread owns panels of up to
/// exact_panel_rows_v rows, in groups of 32 rows, and walks a panel's columns
/// exact_panel_columns at a time; within such a block each group of rows keeps its exact sums
/// side by side (lanes_try_add_product_groups, one lane per row: with AVX-512 in registers),
/// so a block reads contiguous stretches of each column, and the group's chains of dependent
/// additions overlap. GEMV 16384^2, LayoutLeft-N, 2 threads, the Zen 4 EPYC (plain fp64
/// 48-66 ms in these processes): groups of 32 rows took 121.5-121.6 ms in fp64 and
/// 65.5-65.9 with fp32 storage and vector, 16 rows 218-231 and 192-195, 64 rows with fp32
/// storage 74.7-74.8; with the sums kept in memory between columns (32 rows, 64 with fp32
/// storage) 144.9-145.7 and 86.6-88.9. The expansions alone hold the sums on most data; a
/// group whose sums would need a long accumulator (products out of range, special values, a
/// cascade remainder) is summed again by rows_axpy_group_exact, 16 rows at a time. A row's
/// expansion is rounded by round_terms_to_nearest, through an exact<double> only where that
/// leaves it undecided.
template <class Arith, class Exec, class M, class X, class Out>
void rows_axpy_host_exact(const std::string& label, const Exec& exec, const M& m, index_type i0,
                          index_type i1, index_type k0, index_type k1, const X& x, const Out& out) {
  constexpr bool exact_products = exact_products_v<M, X>;
  constexpr int L = 2 * host_lanes;
  constexpr int G = static_cast<int>(exact_panel_rows_v<M> / L);
  constexpr int T = kacc::Impl::exact_lane_terms<exact_products>::terms;
  constexpr index_type C = exact_panel_columns;
  const index_type P = axpy_chunk_rows<exact_panel_rows_v<M>>(exec, i1 - i0);
  const index_type panels = (i1 - i0 + P - 1) / P;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, panels), KOKKOS_LAMBDA(const index_type c) {
        const index_type r0 = i0 + c * P;
        const index_type r1 = r0 + P < i1 ? r0 + P : i1;
        const int groups = static_cast<int>((r1 - r0 + L - 1) / L);
        double state[G][T][L] = {};
        bool held[G];
        for (int g = 0; g < G; ++g) held[g] = true;
        for (index_type kb = k0; kb < k1; kb += C) {
          const int nc = static_cast<int>(kb + C < k1 ? C : k1 - kb);
          Arith xb[C];
          for (int j = 0; j < nc; ++j) xb[j] = convert<Arith>(x(kb + j));
          for (int g = 0; g < groups; ++g) {
            if (!held[g]) continue;
            const index_type g0 = r0 + g * L;
            held[g] = kacc::Impl::lanes_try_add_product_groups<exact_products, L>(
                &state[g][0][0], nc, [&](const index_type j, Arith* ms, Arith* xs) {
                  if (g0 + L <= r1) {
                    m.template load_along_i<L>(g0, kb + j, ms);
                    // The same rows of the next block's column: a block ahead of their use.
                    if (kb + C + j < k1)
                      for (int h = 0; h < L; h += host_lanes)
                        prefetch_group<true>(m, g0 + h, kb + C + j);
                  } else {
                    for (int l = 0; l < L; ++l)  // rows past r1 read as zero
                      ms[l] = g0 + l < r1 ? convert<Arith>(m(g0 + l, kb + j)) : Arith(0);
                  }
                  for (int l = 0; l < L; ++l) xs[l] = xb[j];
                });
          }
        }
        for (int g = 0; g < groups; ++g) {
          const index_type g0 = r0 + g * L;
          if (!held[g]) {
            for (index_type h = g0; h < g0 + L && h < r1; h += host_lanes)
              rows_axpy_group_exact<Arith, exact_products>(m, h, r1, k0, k1, x, out);
            continue;
          }
          for (int l = 0; l < L && g0 + l < r1; ++l) {
            double terms[T], rounded;
            for (int t = 0; t < T; ++t) terms[t] = state[g][t][l];
            if (!kacc::Impl::round_terms_to_nearest<T>(terms, rounded)) {
              exact<double> row;
              for (int t = 0; t < T; ++t) row.add(state[g][t][l]);
              rounded = row.value();
            }
            out(g0 + l, static_cast<Arith>(rounded));
          }
        }
      });
}

/// Rows of the host axpy shape with kacc::double_double that add their products together:
/// four AVX-512 registers of sums, whose chains of dependent additions the core overlaps.
/// In cache (GEMV 1024^2, one thread) 1.24x faster than the vectorised loop over all rows.
constexpr int double_double_rows = 2 * host_lanes;

/// Adds M(r0 + r, k) x(k) for k in [k0, k1) to the double_double sums (hi[r], lo[r]) of rows
/// r in [0, nr), in the order of k, with double_double's checked additions (Checked) or
/// add_finite's. Four columns per pass over the rows, so each sum is loaded and stored once
/// per four products; double_double_rows rows at a time, each block asking the caches for
/// its entries of the next pass's columns (the sums are slow enough that the hardware
/// prefetchers fall behind: GEMV 16384^2, LayoutLeft-N, 2 threads, 85-89 ms without, 54-58
/// with, plain fp64 39-51 ms).
template <bool Checked, class Arith, class M, class X>
KOKKOS_INLINE_FUNCTION void rows_axpy_double_double(const M& m, const index_type r0,
                                                    const index_type nr, const index_type k0,
                                                    const index_type k1, const X& x, double* hi,
                                                    double* lo) {
  // The sum in locals while a row takes its products: stores through hi and lo might alias M.
  const auto add = [](double& h, double& l, const Arith& a, const Arith& b) {
    double p, e;
    eft::two_prod(a, b, p, e);
    if constexpr (Checked) {
      double_double sum(h, l);
      sum.add_exact_product(p, e);
      h = sum.hi;
      l = sum.lo;
    } else {
      kacc::Impl::add_finite(h, l, p, e);
    }
  };
  constexpr int R = double_double_rows;
  index_type k = k0;
  for (; k + 4 <= k1; k += 4) {
    const Arith xk[4] = {convert<Arith>(x(k)), convert<Arith>(x(k + 1)), convert<Arith>(x(k + 2)),
                         convert<Arith>(x(k + 3))};
    const bool next_pass = k + 8 <= k1;
    index_type r = 0;
    for (; r + R <= nr; r += R) {
      double h[R], l[R];
      for (int j = 0; j < R; ++j) h[j] = hi[r + j], l[j] = lo[r + j];
      for (int c = 0; c < 4; ++c)
        for (int j = 0; j < R; ++j) add(h[j], l[j], convert<Arith>(m(r0 + r + j, k + c)), xk[c]);
      for (int j = 0; j < R; ++j) hi[r + j] = h[j], lo[r + j] = l[j];
      if (next_pass)
        for (int g = 0; g < R; g += host_lanes)
          for (int c = 4; c < 8; ++c) prefetch_group<true>(m, r0 + r + g, k + c);
    }
    for (; r < nr; ++r) {
      double h = hi[r], l = lo[r];
      for (int c = 0; c < 4; ++c) add(h, l, convert<Arith>(m(r0 + r, k + c)), xk[c]);
      hi[r] = h;
      lo[r] = l;
    }
  }
  for (; k < k1; ++k) {
    const Arith xk = convert<Arith>(x(k));
    for (index_type r = 0; r < nr; ++r) add(hi[r], lo[r], convert<Arith>(m(r0 + r, k)), xk);
  }
}

/// The host axpy shape with kacc::double_double: each thread owns a chunk of up to axpy_rows
/// rows whose sums sit as his and los side by side (rows_axpy_double_double); each row adds
/// its products in column order, as the generic shape does, so the bits are the same. A chunk
/// whose sums do not all stay finite is summed again with the checked additions. GEMV
/// 16384^2, LayoutLeft-N, 2 threads, processes where plain fp64 took 47 ms: chunks of 1024
/// rows 57.6-59.1 ms, 2048 rows 55.0, 4096 rows 52.3.
template <class Arith, class Exec, class M, class X, class Out>
void rows_axpy_host_double_double(const std::string& label, const Exec& exec, const M& m,
                                  index_type i0, index_type i1, index_type k0, index_type k1,
                                  const X& x, const Out& out) {
  const index_type chunk = axpy_chunk_rows<axpy_rows>(exec, i1 - i0);
  const index_type chunks = (i1 - i0 + chunk - 1) / chunk;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, chunks), KOKKOS_LAMBDA(const index_type c) {
        const index_type r0 = i0 + c * chunk;
        const index_type nr = (r0 + chunk < i1 ? r0 + chunk : i1) - r0;
        double hi[axpy_rows], lo[axpy_rows];
        for (index_type r = 0; r < nr; ++r) hi[r] = lo[r] = 0;
        rows_axpy_double_double<false, Arith>(m, r0, nr, k0, k1, x, hi, lo);
        index_type finite = 0;
        for (index_type r = 0; r < nr; ++r) finite += hi[r] - hi[r] == 0;
        if (finite != nr) {
          for (index_type r = 0; r < nr; ++r) hi[r] = lo[r] = 0;
          rows_axpy_double_double<true, Arith>(m, r0, nr, k0, k1, x, hi, lo);
        }
        for (index_type r = 0; r < nr; ++r)
          out(r0 + r, static_cast<Arith>(double_double(hi[r], lo[r])));
      });
}

/// Columns ahead of their use whose entries the host axpy shape asks L2 for, for formats
/// narrower than its arithmetic: the hardware prefetchers do not keep up with its short runs
/// down many columns. GEMV 16384^2, 2 threads, LayoutLeft-N and LayoutRight-T: fp16 and bf16
/// storage 17.6-18.8 ms without, 13.3-15.2 ms sixteen columns ahead (13.6-15.2 eight); fp32
/// storage with fp64 arithmetic 29.8-32.4 ms without, 24.0-26.5 ms sixteen ahead, in the
/// processes where plain fp64 took 37-40 ms (no change where it took 50 ms). Into L1 as
/// well: no faster than without.
constexpr index_type axpy_prefetch_columns = 16;

/// Asks L2 for the host_lanes entries from row i of the four columns axpy_prefetch_columns
/// after k, where those lie before k1.
template <class M>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_columns_ahead(const M& m, const index_type i,
                                                        const index_type k, const index_type k1) {
  const index_type ahead = k + axpy_prefetch_columns;
  if (ahead + 4 <= k1) {
    for (int c = 0; c < 4; ++c) prefetch_group<true, 2>(m, i, ahead + c);
  }
}

/// The block-loaded part of four columns k .. k + 3 (of the columns before k1) in the host
/// axpy shape: rows r0 + r for r in [0, nr) host_lanes at a time, each column's entries
/// converted with one block load after asking L2 for those axpy_prefetch_columns ahead, their
/// products added as the plain loop adds them (same bits). Returns the first r not done. For
/// formats where axpy_staged_v<M> only (compilers vectorise the plain loop whole for the
/// others, and staging those measured slower).
template <class Arith, class Acc, class M>
KOKKOS_INLINE_FUNCTION index_type rows_axpy_staged(const M& m, const index_type r0,
                                                   const index_type nr, const index_type k,
                                                   const index_type k1, const Arith (&xk)[4],
                                                   Acc* acc) {
  using traits = accumulator_traits<Acc>;
  constexpr int L = host_lanes;
  constexpr auto checked = kacc::Impl::subnormal_check::by_caller;
  // Every row to the plain loop where block loads would flush subnormals.
  if (kacc::Impl::block_loads_flush_subnormals<Arith, decltype(m.a)>()) return 0;
  index_type r = 0;
  for (; r + L <= nr; r += L) {
    prefetch_columns_ahead(m, r0 + r, k, k1);
    Arith c0[L], c1[L], c2[L], c3[L];
    m.template load_along_i<L, checked>(r0 + r, k, c0);
    m.template load_along_i<L, checked>(r0 + r, k + 1, c1);
    m.template load_along_i<L, checked>(r0 + r, k + 2, c2);
    m.template load_along_i<L, checked>(r0 + r, k + 3, c3);
    for (int l = 0; l < L; ++l)
      add_four_products<traits>(acc[r + l], c0[l], xk[0], c1[l], xk[1], c2[l], xk[2], c3[l], xk[3]);
  }
  return r;
}

/// Adds M(i, k + c) xk[c], c = 0 .. 3, to acc as the plain loop of the host axpy shape does
/// (each entry converted on its own).
template <class Arith, class Acc, class M>
KOKKOS_FORCEINLINE_FUNCTION void add_four_columns(const M& m, const index_type i,
                                                  const index_type k, const Arith (&xk)[4],
                                                  Acc& acc) {
  add_four_products<accumulator_traits<Acc>>(
      acc, convert<Arith>(m(i, k)), xk[0], convert<Arith>(m(i, k + 1)), xk[1],
      convert<Arith>(m(i, k + 2)), xk[2], convert<Arith>(m(i, k + 3)), xk[3]);
}

/// Rows r0 + r for r in [0, nr) of four columns k .. k + 3 in the host axpy shape where
/// narrow_plain_v, host_lanes at a time, each block of rows first asking L2 for its entries
/// axpy_prefetch_columns ahead; the products added as the plain loop adds them (same bits).
/// Returns the first r not done.
template <class Arith, class Acc, class M>
KOKKOS_INLINE_FUNCTION index_type rows_axpy_narrow(const M& m, const index_type r0,
                                                   const index_type nr, const index_type k,
                                                   const index_type k1, const Arith (&xk)[4],
                                                   Acc* acc) {
  constexpr int L = host_lanes;
  index_type r = 0;
  for (; r + L <= nr; r += L) {
    prefetch_columns_ahead(m, r0 + r, k, k1);
    for (int l = 0; l < L; ++l) add_four_columns(m, r0 + r + l, k, xk, acc[r + l]);
  }
  return r;
}

/// Columns per pass over a chunk's sums in the host axpy shape where narrow_plain_v (fp32
/// storage, fp64 arithmetic) and for formats with SIMD block loads (rows_axpy_passes):
/// each sum is loaded and stored once per eight columns instead of four, the products added
/// in the same order (same bits). GEMV 16384^2 with fp32 storage, 2 threads,
/// a timer alternating kacc's call and sgemv's (OpenBLAS on the same 2 threads), three
/// processes of each alternating, time over sgemv's in the same process (Intel Xeon):
/// LayoutLeft-N 1.049-1.076 with four columns, 1.015-1.026 with eight; LayoutRight-T 1.051-1.079
/// and 1.015-1.024.
constexpr index_type axpy_pass_columns = 8;

/// Whether the host axpy shape walks axpy_pass_columns columns per pass: fp32 storage with
/// fp64 arithmetic and plain sums (narrow_plain_v), and formats with SIMD block loads (not
/// scaled ones: GEMV with int16s storage, 16384^2, LayoutLeft-N, 2 threads, 17.1 ms with four
/// columns per pass, 17.5-17.7 ms with eight).
template <class Arith, class Acc, class M>
inline constexpr bool axpy_passes_v =
    (narrow_plain_v<Arith, Acc, M> && !axpy_staged_v<M>) || M::vectorised_loads;

/// Adds M(i, k + c) first[c] and then M(i, k + 4 + c) second[c], c = 0 .. 3, to acc[l] for
/// the host_lanes rows i = r0 + l, as two four-column passes add them. Formats with SIMD block
/// loads (fp16, bf16) convert each column's entries of the block with one block load, the
/// others entry by entry. Eight columns instead of four per load and store of the rows' sums,
/// GEMV 16384^2, LayoutLeft-N, 2 threads: fp16 17.1-17.4 -> 13.3-13.5 ms, bf16 17.5-17.9 ->
/// 15.4-15.6 ms (LayoutRight-T unchanged, 13.0-13.2 and 14.8-15.2 ms).
template <class Arith, class Acc, class M>
KOKKOS_FORCEINLINE_FUNCTION void add_eight_columns_of_block(const M& m, const index_type r0,
                                                            const index_type k,
                                                            const Arith (&first)[4],
                                                            const Arith (&second)[4], Acc* acc) {
  constexpr int L = host_lanes;
  if constexpr (M::vectorised_loads) {
    using traits = accumulator_traits<Acc>;
    constexpr auto checked = kacc::Impl::subnormal_check::by_caller;
    Arith c[8][L];
    for (int j = 0; j < 8; ++j) m.template load_along_i<L, checked>(r0, k + j, c[j]);
    for (int l = 0; l < L; ++l) {
      Acc sum = acc[l];
      add_four_products<traits>(sum, c[0][l], first[0], c[1][l], first[1], c[2][l], first[2],
                                c[3][l], first[3]);
      add_four_products<traits>(sum, c[4][l], second[0], c[5][l], second[1], c[6][l], second[2],
                                c[7][l], second[3]);
      acc[l] = sum;
    }
  } else {
    for (int l = 0; l < L; ++l) {
      Acc sum = acc[l];
      add_four_columns(m, r0 + l, k, first, sum);
      add_four_columns(m, r0 + l, k + 4, second, sum);
      acc[l] = sum;
    }
  }
}

/// Columns k, k + 1, ... of the host axpy shape where axpy_passes_v, axpy_pass_columns per
/// pass over rows r0 .. r0 + nr - 1 (the first four of a pass, then the other four, row by
/// row, as the four-column passes add them), host_lanes rows at a time
/// (add_eight_columns_of_block), each block asking L2 for its entries axpy_prefetch_columns
/// ahead. Returns the first column not done (k itself for other formats and sums, and where
/// block loads would flush subnormals). A function of its own for nvcc, as rows_axpy_blocks,
/// with 512-bit vectors (KACC_HOST_WIDE_VECTORS; GEMV 16384^2, 2 threads, Intel Xeon,
/// LayoutLeft-N and LayoutRight-T: fp16 storage 24.5-24.9 -> 22.3-22.8 ms, bf16 26.2-27.5 ->
/// 22.6-23.9; fp32 storage unchanged, 43-44 ms; same bits).
template <class Arith, class Acc, class M, class X>
KACC_HOST_WIDE_VECTORS KOKKOS_INLINE_FUNCTION index_type
rows_axpy_passes(const M& m, const X& x, const index_type r0, const index_type nr, index_type k,
                 const index_type k1, Acc* acc) {
  if constexpr (axpy_passes_v<Arith, Acc, M>) {
    static_assert(axpy_pass_columns == 8, "a pass adds two groups of four columns");
    constexpr int L = host_lanes;
    if constexpr (M::vectorised_loads) {
      if (kacc::Impl::block_loads_flush_subnormals<Arith, decltype(m.a)>()) return k;
    }
    for (; k + axpy_pass_columns <= k1; k += axpy_pass_columns) {
      const Arith first[4] = {convert<Arith>(x(k)), convert<Arith>(x(k + 1)),
                              convert<Arith>(x(k + 2)), convert<Arith>(x(k + 3))};
      const Arith second[4] = {convert<Arith>(x(k + 4)), convert<Arith>(x(k + 5)),
                               convert<Arith>(x(k + 6)), convert<Arith>(x(k + 7))};
      index_type r = 0;
      for (; r + L <= nr; r += L) {
        prefetch_columns_ahead(m, r0 + r, k, k1);
        prefetch_columns_ahead(m, r0 + r, k + 4, k1);
        add_eight_columns_of_block<Arith>(m, r0 + r, k, first, second, acc + r);
      }
      for (; r < nr; ++r) {
        add_four_columns(m, r0 + r, k, first, acc[r]);
        add_four_columns(m, r0 + r, k + 4, second, acc[r]);
      }
    }
  } else {
    (void)m, (void)x, (void)r0, (void)nr, (void)k1, (void)acc;
  }
  return k;
}

/// The rows of four columns k .. k + 3 in the host axpy shape that go in blocks of
/// host_lanes (rows_axpy_staged where axpy_staged_v, rows_axpy_narrow where narrow_plain_v);
/// returns the first r left to the plain loop. A function of its own: device lambdas may not
/// first capture a variable inside an if constexpr branch (nvcc).
template <class Arith, class Acc, class M>
KOKKOS_INLINE_FUNCTION index_type rows_axpy_blocks(const M& m, const index_type r0,
                                                   const index_type nr, const index_type k,
                                                   const index_type k1, const Arith (&xk)[4],
                                                   Acc* acc) {
  if constexpr (axpy_staged_v<M>) {
    return rows_axpy_staged<Arith>(m, r0, nr, k, k1, xk, acc);
  } else if constexpr (narrow_plain_v<Arith, Acc, M>) {
    return rows_axpy_narrow<Arith>(m, r0, nr, k, k1, xk, acc);
  } else {
    (void)m, (void)r0, (void)nr, (void)k, (void)k1, (void)xk, (void)acc;
    return 0;
  }
}

/// Host axpy shape: each thread owns a chunk of rows and walks the columns a few at a time,
/// streaming contiguous memory instead of reading each row with a stride. Formats with SIMD
/// block loads on this host convert each column's entries host_lanes at a time through them,
/// eight columns per pass (rows_axpy_passes, then rows_axpy_staged for four left over; scaled
/// formats four at a time throughout); narrower formats without them and plain sums walk
/// eight columns at a time (rows_axpy_passes, then rows_axpy_narrow for four left over) and
/// ask L2 for columns ahead; the others keep the plain loop, four columns at a time.
template <class Arith, class Acc, class Exec, class M, class X, class Out>
void rows_axpy_host(const std::string& label, const Exec& exec, const M& m, index_type i0,
                    index_type i1, index_type k0, index_type k1, const X& x, const Out& out) {
  using traits = accumulator_traits<Acc>;
  if constexpr (kacc::Impl::uses_exact_lanes_v<Acc, Arith>) {
    rows_axpy_host_exact<Arith>(label, exec, m, i0, i1, k0, k1, x, out);
    return;
  } else if constexpr (kacc::Impl::uses_double_double_lanes_v<Acc, Arith>) {
    rows_axpy_host_double_double<Arith>(label, exec, m, i0, i1, k0, k1, x, out);
    return;
  }
  const index_type chunk = axpy_chunk_rows<axpy_rows>(exec, i1 - i0);
  const index_type chunks = (i1 - i0 + chunk - 1) / chunk;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, chunks), KOKKOS_LAMBDA(const index_type c) {
        const index_type r0 = i0 + c * chunk;
        const index_type r1 = r0 + chunk < i1 ? r0 + chunk : i1;
        const index_type nr = r1 - r0;
        Acc acc[axpy_rows];
        for (index_type r = 0; r < nr; ++r) acc[r] = traits::zero();
        index_type k = rows_axpy_passes<Arith>(m, x, r0, nr, k0, k1, acc);
        for (; k + 4 <= k1; k += 4) {
          const Arith xk[4] = {convert<Arith>(x(k)), convert<Arith>(x(k + 1)),
                               convert<Arith>(x(k + 2)), convert<Arith>(x(k + 3))};
          for (index_type r = rows_axpy_blocks<Arith>(m, r0, nr, k, k1, xk, acc); r < nr; ++r)
            add_four_columns(m, r0 + r, k, xk, acc[r]);
        }
        for (; k < k1; ++k) {
          const Arith xk = convert<Arith>(x(k));
          for (index_type r = 0; r < nr; ++r)
            traits::add_product(acc[r], convert<Arith>(m(r0 + r, k)), xk);
        }
        for (index_type r = 0; r < nr; ++r) out(r0 + r, static_cast<Arith>(traits::result(acc[r])));
      });
}

/// Team dot shape: one vector of lanes per row; consecutive lanes read consecutive k,
/// and the lanes' sums meet in a Kokkos vector reduction.
template <class Arith, class Acc, class Exec, class M, class X, class Out>
void rows_dot_team(const std::string& label, const Exec& exec, const M& m, index_type i0,
                   index_type i1, index_type k0, index_type k1, const X& x, const Out& out) {
  using traits = accumulator_traits<Acc>;
  using policy_type = kacc::Impl::team_policy<Exec>;
  auto kernel = KOKKOS_LAMBDA(const kacc::Impl::team_member<Exec>& team) {
    const index_type i = i0 + kacc::Impl::team_thread(team);
    if (i >= i1) return;  // no team barrier follows
    Acc sum = traits::zero();
    Kokkos::parallel_reduce(
        Kokkos::ThreadVectorRange(team, k1 - k0),
        [&](const index_type kk, Acc& s) {
          traits::add_product(s, convert<Arith>(m(i, k0 + kk)), convert<Arith>(x(k0 + kk)));
        },
        kacc::Impl::sum_reducer<Acc>(sum));
    Kokkos::single(Kokkos::PerThread(team),
                   [&]() { out(i, static_cast<Arith>(traits::result(sum))); });
  };
  const int lanes = kacc::Impl::vector_lanes<Exec>();
  const int rows = kacc::Impl::team_threads(policy_type(exec, 1, 1, lanes), kernel, team_dot_rows);
  Kokkos::parallel_for(label, policy_type(exec, (i1 - i0 + rows - 1) / rows, rows, lanes), kernel);
}

/// Team axpy shape: a team owns team_rows consecutive rows, one per lane, so every column
/// step reads team_rows consecutive entries; its threads split the columns and their
/// partial sums meet in team scratch memory. No per-thread arrays.
template <class Arith, class Acc, class Exec, class M, class X, class Out>
void rows_axpy_team(const std::string& label, const Exec& exec, const M& m, index_type i0,
                    index_type i1, index_type k0, index_type k1, const X& x, const Out& out) {
  using traits = accumulator_traits<Acc>;
  using policy_type = kacc::Impl::team_policy<Exec>;
  using scratch_type = Kokkos::View<Acc**, Kokkos::LayoutRight, typename Exec::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  auto kernel = KOKKOS_LAMBDA(const kacc::Impl::team_member<Exec>& team) {
    const scratch_type partial(team.team_scratch(0), team.team_size(), team_rows);
    const index_type r0 = i0 + team.league_rank() * team_rows;
    const index_type nr = i1 - r0 < team_rows ? i1 - r0 : team_rows;
    const int t = team.team_rank(), threads = team.team_size();
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, nr), [&](const index_type r) {
      Acc s = traits::zero();
      for (index_type k = k0 + t; k < k1; k += threads)
        traits::add_product(s, convert<Arith>(m(r0 + r, k)), convert<Arith>(x(k)));
      partial(t, r) = s;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, nr), [&](const index_type r) {
      Kokkos::single(Kokkos::PerThread(team), [&]() {
        Acc s = partial(0, r);
        for (int u = 1; u < threads; ++u) traits::join(s, partial(u, r));
        out(r0 + r, static_cast<Arith>(traits::result(s)));
      });
    });
  };
  const int lanes = kacc::Impl::vector_lanes<Exec>();
  // Every thread's partial sums of the team's rows sit in level-0 scratch, which a GPU
  // block holds up to 48 KiB of: wide accumulators (exact<double>, about 1 KiB each) get
  // fewer threads, so the launch fits.
  const int fit = static_cast<int>(team_scratch_budget / scratch_type::shmem_size(1, team_rows));
  const int wanted = fit < 1 ? 1 : fit < team_threads ? fit : team_threads;
  const auto scratch = Kokkos::PerTeam(scratch_type::shmem_size(wanted, team_rows));
  const int threads = kacc::Impl::team_threads(
      policy_type(exec, 1, 1, lanes).set_scratch_size(0, scratch), kernel, wanted);
  Kokkos::parallel_for(label,
                       policy_type(exec, (i1 - i0 + team_rows - 1) / team_rows, threads, lanes)
                           .set_scratch_size(0, scratch),
                       kernel);
}

/// Entries of k per piece in the host split dot shape (rows_dot_split): half a MiB of fp64
/// x, which stays in L2 while the piece's rows read it. GEMV "T" of a LayoutLeft basis of
/// 2^21 rows and 100 columns, 2 threads, fp64: 4096 entries took 1.46x the time of 65536
/// (115.7 against 78.8-79.1 ms; each column's run of a piece restarts the hardware
/// prefetchers), 16384 1.06x.
constexpr index_type split_entries = 65536;
/// Entries of k per piece (one team) in the team split dot shape: 256 teams for 2^21.
constexpr index_type team_split_entries = 8192;
/// Rows of one host work item in the split dot shape: a piece's rows are split among work
/// items too, so that many threads find work; consecutive work items share a piece.
constexpr index_type split_block_rows = 32;
/// The split dot shape takes at most this many rows...
constexpr index_type split_most_rows = 1024;
/// ... of at least this many entries (2 MiB of fp64 x).
constexpr index_type split_least_entries = 4 * split_entries;

/// Whether rows_dot_split serves `rows` rows of `entries` entries of a matrix contiguous
/// along k (in plain sums): few rows and long ones, whose work items in the dot shapes (one
/// per row or group of rows) are few, each reading all of x again (the GMRES basis's
/// V^T w: at most a few hundred rows of millions of entries). By the extents alone, so a
/// result does not depend on the number of threads.
inline bool split_applies(const index_type rows, const index_type entries) {
  return rows <= split_most_rows && entries >= split_least_entries;
}

/// The split dot shape: [k0, k1) cut into pieces (of split_entries on the host, of
/// team_split_entries in the team shape), each summed for every row into partial(i, piece)
/// while its part of x stays in cache: on the host one work item per piece and block of
/// split_block_rows rows, through rows_dot_group's staged and side-by-side paths as in
/// rows_dot_host; in the team shape one team per piece. Then each row's pieces are added in
/// their order. The pieces and their order are fixed by the extents, so the bits are the
/// same for every number of threads. Plain sums only: each piece's sum is rounded to Acc.
template <class Arith, class Acc, shape Shape, class Exec, class M, class X, class Out>
void rows_dot_split(const std::string& label, const Exec& exec, const M& m, index_type i0,
                    index_type i1, index_type k0, index_type k1, const X& x, const Out& out) {
  using traits = accumulator_traits<Acc>;
  static_assert(traits::is_plain, "kacc: the split dot shape adds plain sums");
  constexpr index_type piece = Shape == shape::host ? split_entries : team_split_entries;
  const index_type pieces = (k1 - k0 + piece - 1) / piece;
  const Kokkos::View<Acc**, Kokkos::LayoutRight, typename Exec::memory_space> partial(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, label + "_pieces"), i1 - i0, pieces);
  if constexpr (Shape == shape::host) {
    constexpr int R = rows_staged_v<M, X>              ? staged_rows
                      : plain_rows_v<Arith, Acc, M, X> ? plain_rows
                                                       : 1;
    const index_type blocks = (i1 - i0 + split_block_rows - 1) / split_block_rows;
    Kokkos::parallel_for(
        label + "_split", kacc::Impl::range(exec, 0, pieces * blocks),
        KOKKOS_LAMBDA(const index_type item) {
          const index_type p = item / blocks;
          const index_type p0 = k0 + p * piece, p1 = k1 - p0 < piece ? k1 : p0 + piece;
          const index_type b0 = i0 + (item % blocks) * split_block_rows;
          const index_type b1 = i1 - b0 < split_block_rows ? i1 : b0 + split_block_rows;
          const auto piece_out = [&](const index_type i, const Arith& s) {
            partial(i - i0, p) = static_cast<Acc>(s);
          };
          for (index_type first = b0; first < b1; first += R) {
            const int rows = first + R <= b1 ? R : static_cast<int>(b1 - first);
            rows_dot_group<R, Arith, Acc>(m, x, first, rows, p0, p1, piece_out);
          }
        });
  } else {
    using policy_type = kacc::Impl::team_policy<Exec>;
    const int lanes = kacc::Impl::vector_lanes<Exec>();
    auto kernel = KOKKOS_LAMBDA(const kacc::Impl::team_member<Exec>& team) {
      const index_type p = team.league_rank();
      const index_type p0 = k0 + p * piece;
      const index_type length = k1 - p0 < piece ? k1 - p0 : piece;
      const index_type steps = (length + lanes - 1) / lanes;
      for (index_type i = i0; i < i1; ++i) {
        Acc sum = traits::zero();
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, steps),
            [&](const index_type step, Acc& thread_sum) {
              Acc step_sum = traits::zero();
              Kokkos::parallel_reduce(
                  Kokkos::ThreadVectorRange(team, lanes),
                  [&](const int l, Acc& s) {
                    const index_type k = p0 + step * lanes + l;
                    if (k < p0 + length)
                      traits::add_product(s, convert<Arith>(m(i, k)), convert<Arith>(x(k)));
                  },
                  kacc::Impl::sum_reducer<Acc>(step_sum));
              traits::join(thread_sum, step_sum);
            },
            kacc::Impl::sum_reducer<Acc>(sum));
        Kokkos::single(Kokkos::PerTeam(team), [&]() { partial(i - i0, p) = sum; });
      }
    };
    const int threads =
        kacc::Impl::team_threads(policy_type(exec, 1, 1, lanes), kernel, team_threads);
    Kokkos::parallel_for(label + "_split", policy_type(exec, pieces, threads, lanes), kernel);
  }
  Kokkos::parallel_for(
      label + "_split_sum", kacc::Impl::range(exec, i0, i1), KOKKOS_LAMBDA(const index_type i) {
        Acc s = traits::zero();
        for (index_type p = 0; p < pieces; ++p) traits::join(s, partial(i - i0, p));
        out(i, static_cast<Arith>(traits::result(s)));
      });
}

/// out(i, sum_k M(i,k) x(k)) for i in [i0,i1): the memory shape that streams M, in the
/// loop shape Shape (by default the one for Exec).
template <class Arith, class Acc, shape Shape, class Exec, class M, class X, class Out>
void rows_times(const std::string& label, const Exec& exec, const M& m, index_type i0,
                index_type i1, index_type k0, index_type k1, const X& x, const Out& out) {
  if (i1 <= i0) return;
  const bool k_contiguous = m.k_contiguous();
  if constexpr (Shape == shape::host) {
    if (k_contiguous) {
      rows_dot_host<Arith, Acc>(label, exec, m, i0, i1, k0, k1, x, out);
    } else {
      rows_axpy_host<Arith, Acc>(label, exec, m, i0, i1, k0, k1, x, out);
    }
  } else {
    if (k_contiguous) {
      rows_dot_team<Arith, Acc>(label, exec, m, i0, i1, k0, k1, x, out);
    } else {
      rows_axpy_team<Arith, Acc>(label, exec, m, i0, i1, k0, k1, x, out);
    }
  }
}

}  // namespace Impl
}  // namespace blas
}  // namespace kacc
