#pragma once
/// @file
/// kacc::sparse::spmv: y = alpha * op(A) * x + beta * y for CsrMatrix and EllMatrix with
/// values in any kacc format and x, y plain or kacc views of any formats. Products are
/// done in Arith (default: the common arithmetic type of A, x and y, fp64 when any of
/// them computes in fp64) and row sums accumulated in Acc (default: Arith;
/// `kacc::compensated<double>` gives a Neumaier sum); each entry is converted once, in
/// registers.
///
/// BLAS semantics: beta == 0 writes y without reading it (NaN in y does not propagate),
/// alpha == 0 scales y by beta without touching A or x.
///
/// CSR kernels (one templated source each, for every format):
///   - row: on CPUs four rows side by side per work item where the values' format has SIMD
///     block loads on this host, two otherwise (row_group_sum), each row's sum in a register
///     (values in a format with SIMD block loads on this host are decoded 8 at a time, same bits,
///     see row_sum; a plain fp64 sum adds each product with an FMA where the host has one,
///     add_row_product), in matrices of row_group_prefetch_min_entries_v entries or more the values
///     and column indices row_group_prefetch_distance entries ahead asked for
///     (prefetch_group_ahead); with exact<double>, double_double or compensated sums (fp64
///     arithmetic), 16 rows side by side per thread, each exact row sum in an expansion of a few
///     doubles rounded once, a long accumulator only for rows the expansion cannot hold or round
///     (csr_rows_side_by_side: same bits as a long accumulator per row); on GPUs one vector of
///     lanes per row (lanes read consecutive entries), the vector length a power of two near the
///     mean row length (1 to 32), the lanes' sums joined by a Kokkos vector reduction;
///   - load_balanced: merge-path (Merrill & Garland): the path through rows and nonzeros
///     is cut in equal pieces, so a row of 10^5 entries is shared by several threads;
///     partial sums of cut rows are carried to a fix-up pass that rounds each y entry once;
///     a piece's runs of entries are summed as the row kernel sums a row (row_sum).
/// ELL kernel: one thread per row; on the host a row's slots are adjacent and rows are
/// summed side by side as in the CSR row kernel (row_group_sum), with its prefetch.
/// SpmvAlgorithm::automatic picks load_balanced when the rows are irregular (longest row
/// > 8x the mean, or coefficient of variation of the row lengths > 1), else row.
/// Transpose ("T"): each row scatters its products with atomic adds into an Arith
/// workspace of length cols (so y may be stored in any format), then
/// y = alpha * workspace + beta * y. No transposed copy is made; the order of the atomic
/// adds is not fixed, so Acc does not apply to "T" (the sums are plain Arith sums). Arith
/// must be an arithmetic type (Kokkos has no atomic add of kacc::double_double or
/// quad_double): "T" with those throws std::invalid_argument.

#include <kacc/core/block_load.hpp>
#include <kacc/core/double_double.hpp>
#include <kacc/core/exact_lanes.hpp>
#include <kacc/core/kernel_support.hpp>
#include <kacc/core/pragma_simd.hpp>
#include <kacc/sparse/csr_matrix.hpp>
#include <kacc/sparse/ell_matrix.hpp>

#include <cmath>
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

namespace Impl {

using kacc::Impl::shape;

/// Writes alpha * sum + beta * y(i) into y(i), converting once; beta == 0 never reads y.
template <class T, class Y>
KOKKOS_FORCEINLINE_FUNCTION void update(const Y& y, const index_type i, const T& alpha,
                                        const T& sum, const T& beta) {
  using V = typename Y::non_const_value_type;
  if (beta == T(0)) {
    y(i) = convert<V>(alpha * sum);
  } else {
    y(i) = convert<V>(alpha * sum + beta * convert<T>(y(i)));
  }
}

/// "kacc::sparse::spmv[kernel,A=...,x=...,y=...,arith=...,acc=...]".
template <class T, class Acc, class Matrix, class X, class Y>
std::string kernel_label(const char* kernel) {
  return std::string("kacc::sparse::spmv[") + kernel +
         ",A=" + format_name<typename Matrix::format_type>() + ",x=" + kacc::Impl::format_of<X>() +
         ",y=" + kacc::Impl::format_of<Y>() + kacc::Impl::arith_suffix<T, Acc>();
}

template <class T, class Exec, class Y>
void scale_y(const std::string& label, const Exec& exec, const T& beta, const Y& y) {
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, y.extent(0)),
      KOKKOS_LAMBDA(const index_type i) { update(y, i, T(0), T(0), beta); });
}

/// Lanes per row of the team-shaped CSR kernel: the power of two nearest the mean row
/// length from below, 1 to the space's vector length (so short rows do not idle lanes).
template <class Exec>
int csr_vector_lanes(double mean_row_length) {
  const int most = kacc::Impl::vector_lanes<Exec>();
  int lanes = 1;
  while (lanes * 2 <= most && lanes * 2 <= mean_row_length) lanes *= 2;
  return lanes;
}

/// Rows (vectors of lanes) per team of the team-shaped CSR kernel.
constexpr int csr_team_rows = 8;

/// Hides a product from GCC's optimiser on x86 hosts (an empty asm that may change it), so
/// it is rounded before it is added (no FMA forms across the asm) and a row's loop stays
/// scalar: GCC 12 (tuning for znver3 on Zen 4/5) vectorised the fp32 plain loop into
/// gathers of 16 entries of x whose products were then added one lane at a time, in order.
/// SpMV with fp32 values on the 27-point stencil of 160^3 rows, 2 threads, binaries before
/// and after alternating: 32.2-34.3 -> 19.3-23.9 ms (CSR rows), 26.7-28.2 -> 19.0-22.0 ms
/// (ELL).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void keep_scalar(T& product) {
#if !defined(KACC_DEVICE_PASS) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
  __asm__("" : "+x"(product));
#else
  (void)product;
#endif
}

/// sum += a * b in a row of a host SpMV kernel, the same rounding in every loop that sums a
/// row. A plain fp64 sum fuses it (one FMA) on hosts with FMA (`__FMA__`); other plain sums
/// round the product, then add it (keep_scalar); other accumulators form the product their
/// own way (add_product). Explicit, because GCC 12 (tuned for znver3 here, whose
/// `avoid-fma-max-bits` keeps some sum chains unfused) fused the plain `sum += a * b` in
/// some loops and not in others: the loops over block loads and the rows' tails after them,
/// but not the plain row loop, so a row summed from fp16 values and from their fp64 copy
/// rounded differently. An FMA rather than a rounded product for fp64: one instruction where two
/// were, and the power-law matrix's merge path, whose pieces are short, took 86.7-94.2 ms
/// with rounded products and 69.4-77.6 with FMAs (2 threads, binaries alternating; GCC's
/// own loops 72.7-88.5).
template <class Acc, class T>
KOKKOS_FORCEINLINE_FUNCTION void add_row_product(Acc& sum, const T& a, const T& b) {
  using traits = accumulator_traits<Acc>;
#if defined(__FMA__) && !defined(KACC_DEVICE_PASS)
  constexpr bool fused =
      traits::is_plain && std::is_same<T, double>::value && std::is_same<Acc, double>::value;
#else
  constexpr bool fused = false;
#endif
  if constexpr (fused) {
    sum = std::fma(a, b, sum);
  } else if constexpr (traits::is_plain) {
    T product = a * b;
    keep_scalar(product);
    traits::add(sum, product);
  } else {
    traits::add_product(sum, a, b);
  }
}

/// Entries per block load in row_sum.
constexpr int row_block = 8;

/// Adds the products of entries [k, end) of values and entries, which lie side by side in
/// memory (a CSR row, a merge-path piece of one, a host ELL row), to sum in order, each by
/// add_row_product. Where the values' format has SIMD conversions on this host (fp16, bf16,
/// one-scale int8 and int16), row_block values at a time are widened by one block load,
/// unless this thread reads subnormals as zero: then the plain loop decodes them with
/// integer operations. The rest of the row is widened a value at a time by the hardware
/// (load_block<1>: F16C's conversion, bf16's shift), or, for scaled formats, by the plain
/// loop (an integer conversion and a product per value, measured faster). The same values
/// and the same additions in the same order either way, so the sum has the plain loop's
/// bits. Blocks of 8 rather than single values: one conversion for 8 values, each lane then
/// taken from the register, where a single value cost four instructions; the 27-point stencil
/// of 160^3 rows, 2 threads, binaries before and after alternating (the blocks alone, a row
/// at a time; rows in pairs came after): CSR fp16 25.2-26.2 ->
/// 19.5-20.8 ms, bf16 28.8-29.8 -> 20.2-21.9, int16s 24.4-26.0 -> 20.4-22.0, ELL fp16
/// 25.0-26.2 -> 19.2-20.3. (Blocks of 32 were 1.1-1.3x slower than single values with bf16:
/// the stencil's rows of 27 entries never filled one.) A function of its own: device lambdas
/// may not first capture a variable inside an if constexpr branch (nvcc); forced inline,
/// because GCC 12 called it once per row from the merge-path kernel (fp16 values of the 4
/// M-row power-law matrix: 205-213 ms called, 145-164 ms inlined, 2 threads).
template <class T, class Acc, class Values, class Entries, class X>
KOKKOS_FORCEINLINE_FUNCTION void row_sum(const Values& values, const Entries& entries, const X& x,
                                         index_type k, const index_type end, Acc& sum) {
  if constexpr (kacc::Impl::block_load_vectorised_v<Values>) {
    constexpr bool scaled = kacc::Impl::single_scale_v<Values>;
    if (!kacc::Impl::block_loads_flush_subnormals<T, Values>()) {
      for (; k + row_block <= end; k += row_block) {
        T block[row_block];
        kacc::Impl::load_block<row_block, kacc::Impl::subnormal_check::by_caller>(values, k, block);
        for (int l = 0; l < row_block; ++l) {
          add_row_product(sum, block[l], convert<T>(x(entries(k + l))));
        }
      }
      if constexpr (!scaled) {
        for (; k < end; ++k) {
          T value;
          kacc::Impl::load_block<1, kacc::Impl::subnormal_check::by_caller>(values, k, &value);
          add_row_product(sum, value, convert<T>(x(entries(k))));
        }
        return;
      }
    }
  }
  for (; k < end; ++k) add_row_product(sum, convert<T>(values(k)), convert<T>(x(entries(k))));
}

/// Rows a work item of the host CSR row and ELL kernels with plain sums takes side by side
/// (row_group_sum): four where the values' format has SIMD block loads on this host (fp16,
/// bf16, one-scale int8 and int16), two otherwise. On an AMD EPYC of family 25 (Zen 4, 3.65
/// GHz), the 27-point stencil of 160^3 rows with fp16 values took 2.0 cycles per entry with
/// rows in pairs, what two chains of FMAs of 4 cycles allow. A standalone program timing
/// this kernel and a copy of the one before it alternately in one process (2 threads,
/// medians of 11, same bits), in ms, pairs -> four rows: fp16 29.3-30.1 -> 25.3-25.8, bf16
/// 30.2-30.8 -> 26.4-26.5, int16s 30.0-30.5 -> 26.6-26.7 (eight rows, in an earlier copy:
/// fp16 25.0-25.2, no better). fp32 values read through block loads took 28.9 ms with four
/// rows as with two (33.0 with eight), and fp64 is bound by memory.
template <class Values>
inline constexpr int row_group_v = kacc::Impl::block_load_vectorised_v<Values> ? 4 : 2;

/// Adds the entries [start[r], start[r + 1]) of R consecutive rows to sum[r], each as
/// row_sum adds them (the same products, in the same order), the rows' first entries (as
/// many as the shortest row has) side by side: R independent chains of dependent FMAs, so a
/// row's chain (27 FMAs of 4 cycles each on the stencil) need not drain before the next
/// row's can start. 27-point stencil of 160^3 rows, fp64, 2 threads, in processes where
/// Kokkos Kernels took 23.3-24.8 ms: FMA rows one at a time 28.0-29.1 ms (ELL) and
/// 28.3-28.8 (CSR), in pairs 24.2-25.1 and 26.8-27.6. The loops over the rows and over a
/// block's lanes are unrolled, so every lane is taken from its register: GCC 12 left the
/// lanes' loop of four rows rolled and read the blocks back from the stack (fp16, the
/// stencil above: 35 ms against 25).
template <int R, class T, class Acc, class Values, class Entries, class X>
KOKKOS_FORCEINLINE_FUNCTION void row_group_sum(const Values& values, const Entries& entries,
                                               const X& x, const index_type (&start)[R + 1],
                                               Acc (&sum)[R]) {
  index_type n = start[1] - start[0];
  KACC_PRAGMA_UNROLL(4)
  for (int r = 1; r < R; ++r) n = start[r + 1] - start[r] < n ? start[r + 1] - start[r] : n;
  index_type j = 0;
  if constexpr (kacc::Impl::block_load_vectorised_v<Values>) {
    if (!kacc::Impl::block_loads_flush_subnormals<T, Values>()) {
      for (; j + row_block <= n; j += row_block) {
        T block[R][row_block];
        KACC_PRAGMA_UNROLL(4)
        for (int r = 0; r < R; ++r) {
          kacc::Impl::load_block<row_block, kacc::Impl::subnormal_check::by_caller>(
              values, start[r] + j, block[r]);
        }
        KACC_PRAGMA_UNROLL(8)
        for (int l = 0; l < row_block; ++l) {
          KACC_PRAGMA_UNROLL(4)
          for (int r = 0; r < R; ++r) {
            add_row_product(sum[r], block[r][l], convert<T>(x(entries(start[r] + j + l))));
          }
        }
      }
    }
  } else {
    for (; j < n; ++j) {
      for (int r = 0; r < R; ++r) {
        add_row_product(sum[r], convert<T>(values(start[r] + j)),
                        convert<T>(x(entries(start[r] + j))));
      }
    }
  }
  KACC_PRAGMA_UNROLL(4)
  for (int r = 0; r < R; ++r) row_sum<T>(values, entries, x, start[r] + j, start[r + 1], sum[r]);
}

/// Rows side by side in the host CSR row kernel with double_double, exact<double> or
/// compensated<double> sums:
/// independent sums, so their dependent additions overlap and their steps vectorise (two
/// AVX-512 registers; 4 and 8 measured slower, 32 no faster). The lanes' entries are read
/// one by one: AVX-512 gathers of the values, column indices and x took twice as long on
/// the AMD EPYC (double_double SpMV on the 7-point stencil of 128^3 rows, 2 threads: 14.0-19.9 ms
/// one by one, 27.3-28.5 ms gathered).
constexpr int csr_row_lanes = 16;

/// Whether the host CSR and ELL kernels sum csr_row_lanes rows side by side
/// (csr_rows_side_by_side) in Acc: exact<double>, double_double and compensated<double> sums of
/// fp64 products.
template <class T, class Acc>
inline constexpr bool sums_rows_side_by_side_v = kacc::Impl::uses_exact_lanes_v<Acc, T> ||
                                                 kacc::Impl::uses_double_double_lanes_v<Acc, T> ||
                                                 (std::is_same<Acc, compensated<double>>::value &&
                                                  std::is_same<T, double>::value);

/// Entries ahead of a group of csr_row_lanes rows whose values and column indices the host
/// CSR and ELL kernels with exact<double>, double_double or compensated<double> sums asks the
/// caches for: its sums are slow enough that the hardware prefetchers fall behind. SpMV on
/// the 7-point stencil of a 128^3 grid, 2 threads, double_double: 12.9-13.6 ms without,
/// 10.3-10.8 ms with the values 512, 1024 or 2048 entries ahead (plain fp64 8.2-8.5 ms);
/// asking for the column indices too made no difference there, but on the 27-point stencil
/// of 128^3 rows (2 threads, three processes each, alternating, same bits) double_double
/// took 63-70 ms (2.64-2.71x plain fp64) with the values alone and 47-62 ms (1.78-2.11x)
/// with both, compensated 2.31-2.38x and 1.49-1.62x, exact<double> 4.15-4.33x and
/// 2.97-3.34x (the 7-point stencil, double_double: 1.49-1.53x and 1.39-1.43x).
constexpr index_type csr_prefetch_distance = 1024;

/// Most entries a group of csr_row_lanes rows may span for csr_prefetch_distance's hints to
/// fill every cache level; a longer group's fill L2 and beyond (prefetcht1). On an AMD EPYC
/// of family 25 (Zen 4), 2 threads, the 27-point stencil of 160^3 rows (groups of 432
/// entries), double_double with the rows' rests side by side (csr_rows_side_by_side): 121 ms
/// into every level, 86-89 ms into L2, 109 ms with no hints (plain fp64 40-47 ms); the
/// 7-point stencil of 128^3 rows (groups of 112 entries): double_double 13.5-13.7 ms into
/// every level, 15.8-16.0 into L2, compensated 12.7-12.8 and 14.4-14.6, exact<double>
/// 33.1-33.3 and 34.9-35.2 (plain fp64 11-12 ms).
constexpr index_type csr_prefetch_l1_span = 256;

/// Asks the host's caches for the entries [k0, k1) of v, the matrix's values or column
/// indices (clipped to its nnz entries), a cache line at a time (a hint: no effect on
/// results; none in device code). Locality as kacc::Impl::prefetch_entries'.
template <int Locality = 3, class V>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_run(const V& v, const index_type k0, index_type k1,
                                              const index_type nnz) {
  if (k1 > nnz) k1 = nnz;
  if (k0 < k1)
    kacc::Impl::prefetch_entries<false, Locality>(kacc::Impl::storage_pointer(v, k0), k1 - k0);
}

/// Entries ahead of a group of rows whose values and column indices the host CSR row and
/// ELL kernels with plain sums ask the caches for (prefetch_group_ahead): without, their
/// loads left the hardware prefetchers behind. 27-point stencil of 160^3 rows (110 M
/// entries), 2 threads, Intel Xeon, an interleaved timer, binaries before and after
/// alternating, same bits: CSR fp64 64-68 -> 49-52 ms, fp16 43-45 -> 30.5-33, bf16 45-47 ->
/// 30-36, int16s 43-46 -> 32-33, ELL fp16 42-43 -> 29.5-30 (Kokkos Kernels fp64 72-78; 1024
/// entries ahead 2-6% slower, the values alone 1-5 ms faster than nothing, one hint per
/// line rather than per 64 bytes of entries no faster; on the 4 M-row power-law matrix no
/// change beyond noise). Those were rows in pairs; with four rows (the same stencil, AMD
/// EPYC of family 25, 2 threads, the distances side by side in one process, fp16 and bf16
/// values, two processes each) 512 entries took 24.9-26.8 ms, 256 27.1-27.8, 1024
/// 26.3-27.4, 2048 28.2-29.3 and 128 28.9-29.8.
constexpr index_type row_group_prefetch_distance = 512;

/// Entries from which on the host CSR row and ELL kernels prefetch (prefetch_group_ahead)
/// where they take rows in pairs (row_group_v): below, the hints cost more than they saved.
/// Measured with rows in pairs on an Intel Xeon: the same timer, the 27-point stencil with
/// several products per timing, time with the hints over time without: 40^3 rows (1.7 M
/// entries) fp64 0.95x, fp16 0.97x, bf16 1.1x, int16s 1.13x; 64^3 rows (7 M) fp64
/// 0.53-0.69x, fp16 0.83-0.92x, bf16 1.0-1.07x, int16s 1.1x; 100^3 rows (27 M) 0.66-0.77x
/// and 128^3 rows (56 M) 0.68-0.78x in every format. The repository's matrices (at most
/// 0.4 M entries, 200 products per timing) took up to 1.4x as long with them (Pd fp64 1.4
/// -> 2.0 ms, cvxbqp1 with 16-bit values 23.8 -> 31).
constexpr index_type row_pair_prefetch_min_entries = index_type(1) << 24;

/// Entries from which on the host CSR row and ELL kernels prefetch where the values' format
/// takes rows four at a time: fewer than with pairs, as measured (the faster loop leaves the
/// hardware prefetchers behind on smaller matrices). AMD EPYC of family 25 (Zen 4), 2 threads,
/// the 27-point stencil of n^3 rows with the variants alternating in one process (several
/// products per timing, same bits), fp16 and bf16 values, ms with the hints and without: n =
/// 48 (2.7 M entries) 21.4-22.0 and 19.6-20.7, n = 52 (3.5 M) 21.7 and 20.0-20.5, n = 56 (4.6
/// M) 21.6-22.1 and 21.2-24.8, n = 64 (7.0 M) 23.1-23.9 and 25.6-29.6, n = 80 (13.7 M)
/// 23.8-24.6 and 28.9-30.8 (rows in pairs, without hints: 27.8-29.5).
template <class Values>
inline constexpr index_type row_group_prefetch_min_entries_v = row_group_v<Values> == 4
                                                                   ? index_type(1) << 22
                                                                   : row_pair_prefetch_min_entries;

/// With Prefetch, asks the host's caches for the values and column indices
/// row_group_prefetch_distance entries ahead of the entries [k0, k1) of a work item, at most
/// that many (a longer row's later entries are left to the hardware prefetchers; n: the
/// number of entries); without, nothing.
template <bool Prefetch, class Values, class Entries>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_group_ahead(const Values& values, const Entries& entries,
                                                      const index_type k0, const index_type k1,
                                                      const index_type n) {
  if constexpr (Prefetch) {
    constexpr index_type ahead = row_group_prefetch_distance;
    const index_type last = k1 - k0 < ahead ? k1 : k0 + ahead;
    prefetch_run(values, k0 + ahead, last + ahead, n);
    prefetch_run(entries, k0 + ahead, last + ahead, n);
  } else {
    (void)values, (void)entries, (void)k0, (void)k1, (void)n;
  }
}

/// Row i's sum in Acc by accumulator_traits, product after product: what a row of the
/// side-by-side kernels falls back to.
template <class T, class Acc, class RowMap, class Values, class Entries, class X>
KOKKOS_INLINE_FUNCTION T csr_row_traits_sum(const RowMap& row_map, const Values& values,
                                            const Entries& entries, const X& x,
                                            const index_type i) {
  using traits = accumulator_traits<Acc>;
  Acc sum = traits::zero();
  for (index_type k = row_map(i); k < index_type(row_map(i + 1)); ++k)
    traits::add_product(sum, convert<T>(values(k)), convert<T>(x(entries(k))));
  return static_cast<T>(traits::result(sum));
}

/// Rows [i0, i0 + nr), nr <= csr_row_lanes, of the host CSR and ELL kernels (the CSR row
/// kernel, the whole rows of a merge-path piece, ELL rows) with exact<double> (T = double),
/// double_double or compensated<double> (Acc) sums, one lane per row: the rows' first entries (as
/// many as the shortest row has) side by side, then, with exact<double> and compensated sums,
/// each row's rest on its own. double_double goes on side by side to the end of the longest
/// row, the sums of rows without an entry at a step kept by selects
/// (double_double_lanes::add_products_where): on the Zen 4 EPYC, 27-point stencil of 160^3
/// rows (whose groups at the grid's faces mix rows of 27 and 18 entries), 2 threads, 96.7-97.1
/// ms with each rest on its own, 88.0-89.9 ms so (same bits). Measured slower on other
/// machines, with double_double (7-point stencil of 128^3 rows, one thread's CPU time,
/// against 1.14-1.32x plain fp64 as here before the column indices were asked for ahead too):
/// the others' sums fed zero products (2.05-2.23x); the lanes' entries staged 8 at a time
/// through a buffer (1.46-1.61x); selects while a quarter of the lanes had entries took
/// 1.26-1.30x there.
/// exact<double>: each row's exact sum in a floating-point expansion of a few doubles
/// (lanes_try_add_products, exact_lanes' terms), rounded by round_terms_to_nearest; when
/// the group's expansions cannot hold a sum (products out of their range, special values, a
/// cascade remainder), each row is summed again in an expansion of its own, and a row that
/// one cannot hold or round either is summed by exact<double>: a row of a few entries need
/// not clear and round a long accumulator.
/// double_double: each sum by add_finite (double_double_lanes); a row whose sum is not
/// finite is summed again by add_exact_product. compensated<double>: each row's sum by
/// accumulator_traits (the rows' steps interleave: SpMV on the 7-point stencil of a 128^3
/// grid, 2 threads, 25.5 ms a row at a time, 10.0-10.7 ms side by side, plain fp64 8.5 ms).
/// Each row's result has the bits of accumulator_traits<Acc>'s sum of its products. The
/// values and column indices csr_prefetch_distance entries ahead of the group's are asked
/// for first (of the matrix's nnz entries).
template <class T, class Acc, bool ExactProducts, class RowMap, class Values, class Entries,
          class X, class Y>
KOKKOS_FORCEINLINE_FUNCTION void csr_rows_side_by_side(const RowMap& row_map, const Values& values,
                                                       const Entries& entries, const X& x,
                                                       const index_type i0, const int nr,
                                                       const index_type nnz, const T& alpha,
                                                       const T& beta, const Y& y) {
  using compensated_traits = accumulator_traits<compensated<double>>;
  constexpr int W = csr_row_lanes;
  constexpr bool is_exact = std::is_same<Acc, exact<double>>::value;
  constexpr bool is_double_double = std::is_same<Acc, double_double>::value;
  constexpr int Terms = kacc::Impl::exact_lane_terms<ExactProducts>::terms;
  // Lanes past nr repeat row i0 (never written), so every lane reads without a check. A
  // whole group apart: GCC 12 made the select's loads one AVX-512 gather per group, slow on
  // the AMD EPYC (double_double SpMV, 7-point stencil of 128^3 rows, one thread's CPU time, eight
  // processes each, alternating: 1.22-1.37x plain fp64 with the gather, 1.14-1.27x without).
  index_type start[W], end[W];
  if (nr == W) {
    for (int l = 0; l < W; ++l) {
      start[l] = row_map(i0 + l);
      end[l] = row_map(i0 + l + 1);
    }
  } else {
    for (int l = 0; l < W; ++l) {
      start[l] = row_map(l < nr ? i0 + l : i0);
      end[l] = row_map(l < nr ? i0 + l + 1 : i0 + 1);
    }
  }
  index_type common = end[0] - start[0], longest = common;
  int longest_lane = 0;
  for (int l = 1; l < nr; ++l) {
    if (end[l] - start[l] < common) common = end[l] - start[l];
    if (end[l] - start[l] > longest) longest = end[l] - start[l], longest_lane = l;
  }
  const index_type ahead = start[0] + csr_prefetch_distance;
  const index_type ahead_end = end[nr - 1] + csr_prefetch_distance;
  if (end[nr - 1] - start[0] <= csr_prefetch_l1_span) {
    prefetch_run(values, ahead, ahead_end, nnz);
    prefetch_run(entries, ahead, ahead_end, nnz);
  } else {
    prefetch_run<2>(values, ahead, ahead_end, nnz);
    prefetch_run<2>(entries, ahead, ahead_end, nnz);
  }
  double a[W], b[W];
  double terms[Terms][W] = {};
  const double_double zero[W];
  kacc::Impl::double_double_lanes<W, true> dd(zero);
  compensated<double> sums[W];
  bool held = true;
  for (index_type j = 0; j < common && held; ++j) {
    for (int l = 0; l < W; ++l) {
      a[l] = convert<T>(values(start[l] + j));
      b[l] = convert<T>(x(entries(start[l] + j)));
    }
    if constexpr (is_exact) {
      held = kacc::Impl::lanes_try_add_products<ExactProducts, W>(&terms[0][0], a, b);
    } else if constexpr (is_double_double) {
      dd.add_products(a, b);
    } else {
      for (int l = 0; l < W; ++l) compensated_traits::add_product(sums[l], a[l], b[l]);
    }
  }
  if constexpr (is_double_double) {
    // Lanes past a row's end read an entry of the longest row (one that exists) and discard it.
    for (index_type j = common; j < longest; ++j) {
      bool has[W];
      for (int l = 0; l < W; ++l) {
        has[l] = start[l] + j < end[l];
        const index_type k = has[l] ? start[l] + j : start[longest_lane] + j;
        a[l] = convert<T>(values(k));
        b[l] = convert<T>(x(entries(k)));
      }
      dd.add_products_where(a, b, has);
    }
  } else {
    (void)longest, (void)longest_lane;
  }
  for (int l = 0; l < nr; ++l) {
    const index_type i = i0 + l;
    T sum = 0;
    bool done = true;
    if constexpr (is_exact) {
      // When the group's expansions could not hold every sum, each row starts again on its
      // own, so only the rows that need one take a long accumulator.
      double t[Terms];
      for (int u = 0; u < Terms; ++u) t[u] = held ? terms[u][l] : 0.0;
      for (index_type k = held ? start[l] + common : start[l]; k < end[l] && done; ++k) {
        const double ak = convert<T>(values(k)), bk = convert<T>(x(entries(k)));
        done = kacc::Impl::lanes_try_add_products<ExactProducts, 1>(t, &ak, &bk);
      }
      done = done && kacc::Impl::round_terms_to_nearest<Terms>(t, sum);
    } else if constexpr (is_double_double) {
      done = dd.hi[l] - dd.hi[l] == 0;
      sum = static_cast<T>(double_double(dd.hi[l], dd.lo[l]));
    } else {
      for (index_type k = start[l] + common; k < end[l]; ++k)
        compensated_traits::add_product(sums[l], convert<T>(values(k)), convert<T>(x(entries(k))));
      sum = static_cast<T>(compensated_traits::result(sums[l]));
    }
    if (!done) sum = csr_row_traits_sum<T, Acc>(row_map, values, entries, x, i);
    update(y, i, alpha, sum, beta);
  }
}

/// csr_rows_side_by_side with 512-bit vectors (KACC_HOST_WIDE_VECTORS), which pay for
/// exact<double> sums only. Intel Xeon, 2 threads, same bits: on the 27-point stencil of
/// 128^3 rows exact<double> 95.5-97.6 -> 84.8-90.8 ms, double_double and compensated
/// unchanged; on the 7-point stencil double_double 16.5-17.4 -> 17.6-18.0 ms and compensated
/// 17.0-18.3 -> 17.9-19.6 ms slower.
template <class T, class Acc, bool ExactProducts, class RowMap, class Values, class Entries,
          class X, class Y>
KACC_HOST_WIDE_VECTORS KOKKOS_INLINE_FUNCTION void csr_rows_side_by_side_wide(
    const RowMap& row_map, const Values& values, const Entries& entries, const X& x,
    const index_type i0, const int nr, const index_type nnz, const T& alpha, const T& beta,
    const Y& y) {
  csr_rows_side_by_side<T, Acc, ExactProducts>(row_map, values, entries, x, i0, nr, nnz, alpha,
                                               beta, y);
}

/// csr_rows_side_by_side, through csr_rows_side_by_side_wide for exact<double> sums. A
/// function of its own: device lambdas may not first capture a variable inside an if
/// constexpr branch (nvcc).
template <class T, class Acc, bool ExactProducts, class RowMap, class Values, class Entries,
          class X, class Y>
KOKKOS_FORCEINLINE_FUNCTION void csr_rows_group(const RowMap& row_map, const Values& values,
                                                const Entries& entries, const X& x,
                                                const index_type i0, const int nr,
                                                const index_type nnz, const T& alpha, const T& beta,
                                                const Y& y) {
  if constexpr (std::is_same<Acc, exact<double>>::value) {
    csr_rows_side_by_side_wide<T, Acc, ExactProducts>(row_map, values, entries, x, i0, nr, nnz,
                                                      alpha, beta, y);
  } else {
    csr_rows_side_by_side<T, Acc, ExactProducts>(row_map, values, entries, x, i0, nr, nnz, alpha,
                                                 beta, y);
  }
}

/// The host CSR row and ELL kernels with exact<double>, double_double or compensated<double>
/// sums (T = double): csr_row_lanes rows per iteration, csr_rows_side_by_side. row_starts(i):
/// where row i's entries start among the count entries of values and entries.
template <class T, class Acc, class Exec, class RowStarts, class Values, class Entries, class X,
          class Y>
void rows_side_by_side(const std::string& label, const Exec& exec, const RowStarts& row_starts,
                       const Values& values, const Entries& entries, const index_type rows,
                       const index_type count, const T& alpha, const X& x, const T& beta,
                       const Y& y) {
  constexpr int W = csr_row_lanes;
  constexpr bool exact_products = kacc::Impl::exact_products_v<format_t<Values>, format_t<X>>;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, (rows + W - 1) / W), KOKKOS_LAMBDA(const index_type g) {
        const index_type i0 = g * W;
        const int nr = rows - i0 < W ? static_cast<int>(rows - i0) : W;
        csr_rows_group<T, Acc, exact_products>(row_starts, values, entries, x, i0, nr, count, alpha,
                                               beta, y);
      });
}

/// The host CSR row and ELL kernels with plain sums: row_group_v<Values> rows per work item
/// (row_group_sum; a last group of fewer rows a row at a time), with Prefetch each group
/// first asking for the entries ahead (prefetch_group_ahead). row_starts(i): where row i's
/// entries start among the count entries of values and entries. Instantiated with and
/// without the hints, so that without them the loop has no trace of them: a run-time flag
/// tested in the loop made the repository's matrices up to 1.2x slower with the hints off
/// (cvxbqp1 with fp16 values 23.7 -> 27.6 ms). A group's first row is updated after the
/// branch, in one place for both, and the hints are asked for inside the full groups' branch:
/// with every row's update inside the branches, GCC 12's code for rows in pairs (fp64, fp32)
/// was 6-8% slower on the 27-point stencil of 40^3 rows (standalone, 2 threads) and 10-24%
/// on the repository's small matrices, and with the hints before the branch four rows took
/// 27.1-28.1 ms on the stencil of 160^3 rows where they take 25.2-25.8. The short loops
/// over a group's rows are unrolled explicitly: left to GCC 12, four rows of fp16 values
/// took 21.3-21.4 ms on the 40^3 stencil (several products per timing) instead of 20.1-20.2.
template <bool Prefetch, class T, class Acc, class Exec, class RowStarts, class Values,
          class Entries, class X, class Y>
void row_groups(const std::string& label, const Exec& exec, const RowStarts& row_starts,
                const Values& values, const Entries& entries, const index_type rows,
                const index_type count, const T& alpha, const X& x, const T& beta, const Y& y) {
  using traits = accumulator_traits<Acc>;
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, (rows + row_group_v<Values> - 1) / row_group_v<Values>),
      KOKKOS_LAMBDA(const index_type g) {
        constexpr int R = row_group_v<Values>;
        const index_type i = R * g;
        Acc sum[R];
        KACC_PRAGMA_UNROLL(4)
        for (int r = 0; r < R; ++r) sum[r] = traits::zero();
        if (i + R <= rows) {
          index_type start[R + 1];
          KACC_PRAGMA_UNROLL(5)
          for (int r = 0; r <= R; ++r) start[r] = index_type(row_starts(i + r));
          prefetch_group_ahead<Prefetch>(values, entries, start[0], start[R], count);
          row_group_sum<R, T>(values, entries, x, start, sum);
          KACC_PRAGMA_UNROLL(4)
          for (int r = 1; r < R; ++r) {
            update(y, i + r, alpha, static_cast<T>(traits::result(sum[r])), beta);
          }
        } else {
          row_sum<T>(values, entries, x, index_type(row_starts(i)), index_type(row_starts(i + 1)),
                     sum[0]);
          for (index_type r = i + 1; r < rows; ++r) {
            Acc rest = traits::zero();
            row_sum<T>(values, entries, x, index_type(row_starts(r)), index_type(row_starts(r + 1)),
                       rest);
            update(y, r, alpha, static_cast<T>(traits::result(rest)), beta);
          }
        }
        update(y, i, alpha, static_cast<T>(traits::result(sum[0])), beta);
      });
}

template <class T, class Acc, shape Shape, class Exec, class M, class X, class Y>
void csr_row(const std::string& label, const Exec& exec, const T& alpha, const M& a, const X& x,
             const T& beta, const Y& y) {
  using traits = accumulator_traits<Acc>;
  const auto row_map = a.row_map();
  const auto entries = a.entries();
  const typename M::const_values_type values = a.values();
  const index_type rows = a.num_rows();
  if constexpr (Shape == shape::host && sums_rows_side_by_side_v<T, Acc>) {
    rows_side_by_side<T, Acc>(label, exec, row_map, values, entries, rows, a.nnz(), alpha, x, beta,
                              y);
  } else if constexpr (Shape == shape::host) {
    if (a.nnz() >= row_group_prefetch_min_entries_v<typename M::const_values_type>) {
      row_groups<true, T, Acc>(label, exec, row_map, values, entries, rows, a.nnz(), alpha, x, beta,
                               y);
    } else {
      row_groups<false, T, Acc>(label, exec, row_map, values, entries, rows, a.nnz(), alpha, x,
                                beta, y);
    }
  } else {
    using policy_type = kacc::Impl::team_policy<Exec>;
    auto kernel = KOKKOS_LAMBDA(const kacc::Impl::team_member<Exec>& team) {
      const index_type i = kacc::Impl::team_thread(team);
      if (i >= rows) return;  // no team barrier follows
      Acc sum = traits::zero();
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, index_type(row_map(i)), index_type(row_map(i + 1))),
          [&](const index_type k, Acc& s) {
            traits::add_product(s, convert<T>(values(k)), convert<T>(x(entries(k))));
          },
          kacc::Impl::sum_reducer<Acc>(sum));
      Kokkos::single(Kokkos::PerThread(team),
                     [&]() { update(y, i, alpha, static_cast<T>(traits::result(sum)), beta); });
    };
    const int lanes = csr_vector_lanes<Exec>(a.row_stats().mean);
    const int team_rows =
        kacc::Impl::team_threads(policy_type(exec, 1, 1, lanes), kernel, csr_team_rows);
    Kokkos::parallel_for(
        label, policy_type(exec, (rows + team_rows - 1) / team_rows, team_rows, lanes), kernel);
  }
}

/// First point (row ends consumed i, nonzeros consumed j) of merge-path diagonal d. All
/// coordinates are 64-bit, whatever the matrix's offset type: rows + nnz may pass 2^31.
template <class RowMap>
KOKKOS_INLINE_FUNCTION void merge_path_search(const RowMap& row_map, index_type rows,
                                              index_type nnz, index_type d, index_type& i,
                                              index_type& j) {
  index_type lo = d > nnz ? d - nnz : 0;
  index_type hi = d < rows ? d : rows;
  while (lo < hi) {
    const index_type mid = lo + (hi - lo) / 2;
    if (index_type(row_map(mid + 1)) <= d - mid - 1) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  i = lo;
  j = d - lo;
}

/// Length (rows + nonzeros) of the pieces of a merge path of length total on an execution
/// space of the given concurrency: four pieces per thread, none shorter than 64 (the last
/// may be).
inline index_type merge_path_piece_length(const index_type concurrency, const index_type total) {
  const index_type pieces = std::max<index_type>(1, std::min(concurrency * 4, (total + 63) / 64));
  return (total + pieces - 1) / pieces;
}

/// Rows [i, i1) of a merge-path piece, each whole: csr_row_lanes at a time side by side
/// (csr_rows_side_by_side) where the host CSR row kernel sums them so (SideBySide), else
/// one after another (row_sum). Power-law matrix of 4 M rows and 34 M entries, 2 threads,
/// four processes a row at a time and three side by side: double_double 0.91-1.22 and
/// 0.22-0.28 s, exact<double> 1.96-2.24 and 0.31-0.33 s, compensated<double> 0.34-0.44 and
/// 0.18-0.20 s (plain fp64 0.09-0.16 s). A function of its own for the reason
/// row_sum is one.
template <class T, class Acc, bool SideBySide, bool ExactProducts, class RowMap, class Values,
          class Entries, class X, class Y>
KOKKOS_FORCEINLINE_FUNCTION void merge_path_rows(const RowMap& row_map, const Values& values,
                                                 const Entries& entries, const X& x, index_type i,
                                                 const index_type i1, const index_type nnz,
                                                 const T& alpha, const T& beta, const Y& y) {
  if constexpr (SideBySide) {
    for (; i < i1; i += csr_row_lanes) {
      const int nr = i1 - i < csr_row_lanes ? static_cast<int>(i1 - i) : csr_row_lanes;
      csr_rows_side_by_side<T, Acc, ExactProducts>(row_map, values, entries, x, i, nr, nnz, alpha,
                                                   beta, y);
    }
  } else {
    using traits = accumulator_traits<Acc>;
    index_type j = row_map(i);
    for (; i < i1; ++i) {
      const index_type end = row_map(i + 1);
      Acc sum = traits::zero();
      row_sum<T>(values, entries, x, j, end, sum);
      j = end;
      update(y, i, alpha, static_cast<T>(traits::result(sum)), beta);
    }
  }
}

/// Merge-path CSR (Merrill & Garland): equal pieces of the path through rows and
/// nonzeros; rows cut between pieces are finished in a fix-up pass that rounds each y
/// entry once. A piece's whole rows are summed as the CSR row kernel sums them
/// (merge_path_rows).
template <class T, class Acc, shape Shape, class Exec, class M, class X, class Y>
void csr_merge_path(const std::string& label, const Exec& exec, const T& alpha, const M& a,
                    const X& x, const T& beta, const Y& y) {
  using traits = accumulator_traits<Acc>;
  using Mem = typename M::memory_space;
  constexpr bool side_by_side = Shape == shape::host && sums_rows_side_by_side_v<T, Acc>;
  constexpr bool exact_products =
      kacc::Impl::exact_products_v<typename M::format_type, format_t<X>>;
  const index_type rows = a.num_rows();
  const index_type nnz = a.nnz();
  const index_type total = rows + nnz;
  if (total == 0) return;
  const index_type per =
      merge_path_piece_length(static_cast<index_type>(exec.concurrency()), total);
  const index_type chunks = (total + per - 1) / per;
  Kokkos::View<index_type*, Mem> carry_row(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kacc::sparse::carry_row"), chunks);
  Kokkos::View<Acc*, Mem> carry(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kacc::sparse::carry"), chunks);
  Kokkos::View<index_type*, Mem> head_row(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kacc::sparse::head_row"), chunks);
  Kokkos::View<Acc*, Mem> head(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "kacc::sparse::head"), chunks);
  const auto row_map = a.row_map();
  const auto entries = a.entries();
  const typename M::const_values_type values = a.values();
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, chunks), KOKKOS_LAMBDA(const index_type t) {
        const index_type d0 = t * per;
        const index_type d1 = total - d0 > per ? d0 + per : total;
        index_type i, i1, j, j1;
        merge_path_search(row_map, rows, nnz, d0, i, j);
        merge_path_search(row_map, rows, nnz, d1, i1, j1);
        const bool whole_rows = i < i1;
        head_row(t) = -1;
        if (whole_rows && j > index_type(row_map(i))) {
          Acc sum = traits::zero();
          row_sum<T>(values, entries, x, j, index_type(row_map(i + 1)), sum);
          head(t) = sum;
          head_row(t) = i;
          ++i;
        }
        merge_path_rows<T, Acc, side_by_side, exact_products>(row_map, values, entries, x, i, i1,
                                                              nnz, alpha, beta, y);
        Acc sum = traits::zero();
        row_sum<T>(values, entries, x, whole_rows ? index_type(row_map(i1)) : j, j1, sum);
        carry_row(t) = i1;
        carry(t) = sum;
      });
  Kokkos::parallel_for(
      label + "_fixup", kacc::Impl::range(exec, 0, chunks), KOKKOS_LAMBDA(const index_type t) {
        const index_type r = head_row(t);
        if (r < 0) return;
        Acc sum = head(t);
        for (index_type u = t; u > 0 && carry_row(u - 1) == r; --u) traits::join(sum, carry(u - 1));
        update(y, r, alpha, static_cast<T>(traits::result(sum)), beta);
      });
}

/// What the ELL kernels read, captured by value: where slot k of row i lies, its column
/// and its value (through the const view, so reads take the value path).
template <class M>
struct ell_arrays {
  M matrix;
  typename M::entries_type entries;
  typename M::const_values_type values;
  explicit ell_arrays(const M& a) : matrix(a), entries(a.entries()), values(a.values()) {}
  KOKKOS_INLINE_FUNCTION std::size_t slot(index_type i, index_type k) const {
    return matrix.slot(i, k);
  }
};

/// Adds the products of row i's width slots to sum in slot order. A function of its own
/// for the reason row_sum is one (nvcc's captures in if constexpr branches).
template <class T, class M, class X, class Acc>
KOKKOS_INLINE_FUNCTION void ell_row_sum(const ell_arrays<M>& ell, const X& x, const index_type i,
                                        const index_type width, Acc& sum) {
  if constexpr (M::row_major) {
    row_sum<T>(ell.values, ell.entries, x, i * width, (i + 1) * width, sum);
  } else {
    using traits = accumulator_traits<Acc>;
    for (index_type k = 0; k < width; ++k) {
      const std::size_t s = ell.slot(i, k);
      traits::add_product(sum, convert<T>(ell.values(s)), convert<T>(x(ell.entries(s))));
    }
  }
}

/// Where the rows of a row-major ELL matrix start among its slots, as a CSR row map says
/// where a CSR matrix's rows start: row i at i * width.
struct ell_row_starts {
  index_type width;
  KOKKOS_INLINE_FUNCTION index_type operator()(const index_type i) const { return i * width; }
};

/// ELL: one thread per row on GPUs, where the slots of consecutive rows are adjacent, so
/// consecutive threads read consecutive memory; on the host a row's slots are adjacent, and
/// a work item sums rows side by side as the CSR row kernel does (row_groups), or, with the sums
/// the host CSR kernels take csr_row_lanes rows at a time, csr_row_lanes rows (rows_side_by_side,
/// every slot of a row, padding included).
template <class T, class Acc, class Exec, class M, class X, class Y>
void ell_row(const std::string& label, const Exec& exec, const T& alpha, const M& a, const X& x,
             const T& beta, const Y& y) {
  using traits = accumulator_traits<Acc>;
  const ell_arrays<M> ell(a);
  const index_type width = a.width();
  const index_type rows = a.num_rows();
  if constexpr (M::row_major && sums_rows_side_by_side_v<T, Acc>) {
    rows_side_by_side<T, Acc>(label, exec, ell_row_starts{width}, ell.values, ell.entries, rows,
                              rows * width, alpha, x, beta, y);
  } else if constexpr (M::row_major) {
    if (rows * width >= row_group_prefetch_min_entries_v<typename M::const_values_type>) {
      row_groups<true, T, Acc>(label, exec, ell_row_starts{width}, ell.values, ell.entries, rows,
                               rows * width, alpha, x, beta, y);
    } else {
      row_groups<false, T, Acc>(label, exec, ell_row_starts{width}, ell.values, ell.entries, rows,
                                rows * width, alpha, x, beta, y);
    }
  } else {
    Kokkos::parallel_for(
        label, kacc::Impl::range(exec, 0, rows), KOKKOS_LAMBDA(const index_type i) {
          Acc sum = traits::zero();
          ell_row_sum<T>(ell, x, i, width, sum);
          update(y, i, alpha, static_cast<T>(traits::result(sum)), beta);
        });
  }
}

template <class T, class Exec, class M, class X, class Work>
void csr_scatter(const std::string& label, const Exec& exec, const M& a, const X& x,
                 const Work& work) {
  const auto row_map = a.row_map();
  const auto entries = a.entries();
  const typename M::const_values_type values = a.values();
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, a.num_rows()), KOKKOS_LAMBDA(const index_type i) {
        const T xi = convert<T>(x(i));
        for (index_type k = row_map(i); k < index_type(row_map(i + 1)); ++k)
          Kokkos::atomic_add(&work(entries(k)), convert<T>(values(k)) * xi);
      });
}

template <class T, class Exec, class M, class X, class Work>
void ell_scatter(const std::string& label, const Exec& exec, const M& a, const X& x,
                 const Work& work) {
  const ell_arrays<M> ell(a);
  const auto lengths = a.row_lengths();
  Kokkos::parallel_for(
      label, kacc::Impl::range(exec, 0, a.num_rows()), KOKKOS_LAMBDA(const index_type i) {
        const T xi = convert<T>(x(i));
        for (index_type k = 0; k < index_type(lengths(i)); ++k) {
          const std::size_t s = ell.slot(i, k);
          Kokkos::atomic_add(&work(ell.entries(s)), convert<T>(ell.values(s)) * xi);
        }
      });
}

/// Whether the transpose can scatter in T: Kokkos adds atomically the arithmetic types;
/// kacc::double_double and quad_double are not among them (Kokkos 3.4 copies the generic
/// type through volatile references).
template <class T>
inline constexpr bool scatters_atomically_v = std::is_arithmetic<T>::value;

/// y = alpha A^T x + beta y: atomic scatter of each row's products into a workspace.
template <class T, class Acc, class Exec, class M, class X, class Y>
void transpose(const Exec& exec, const T& alpha, const M& a, const X& x, const T& beta,
               const Y& y) {
  Kokkos::View<T*, typename M::memory_space> work("kacc::sparse::spmv_transpose_work",
                                                  static_cast<std::size_t>(a.num_cols()));
  if constexpr (is_csr<M>::value) {
    csr_scatter<T>(kernel_label<T, Acc, M, X, Y>("csr_transpose_atomic"), exec, a, x, work);
  } else {
    ell_scatter<T>(kernel_label<T, Acc, M, X, Y>("ell_transpose_atomic"), exec, a, x, work);
  }
  Kokkos::parallel_for(
      kernel_label<T, Acc, M, X, Y>("transpose_update"), kacc::Impl::range(exec, 0, y.extent(0)),
      KOKKOS_LAMBDA(const index_type j) { update(y, j, alpha, work(j), beta); });
}

/// y = alpha op(A) x + beta y after the argument checks, alpha != 0, y not empty.
template <class T, class Acc, shape Shape, class Exec, class Matrix, class X, class Y>
void spmv(const Exec& exec, bool trans, const T& alpha, const Matrix& A, const X& x, const T& beta,
          const Y& y, SpmvAlgorithm algorithm) {
  if (trans) {
    if constexpr (scatters_atomically_v<T>) transpose<T, Acc>(exec, alpha, A, x, beta, y);
  } else if constexpr (is_ell<Matrix>::value) {
    ell_row<T, Acc>(kernel_label<T, Acc, Matrix, X, Y>("ell_row"), exec, alpha, A, x, beta, y);
  } else {
    if (algorithm == SpmvAlgorithm::automatic) algorithm = choose_algorithm(A.row_stats());
    if (algorithm == SpmvAlgorithm::load_balanced) {
      csr_merge_path<T, Acc, Shape>(kernel_label<T, Acc, Matrix, X, Y>("csr_merge_path"), exec,
                                    alpha, A, x, beta, y);
    } else {
      csr_row<T, Acc, Shape>(kernel_label<T, Acc, Matrix, X, Y>("csr_row"), exec, alpha, A, x, beta,
                             y);
    }
  }
}

}  // namespace Impl

/// y = alpha * op(A) * x + beta * y in exec; mode "N" (A) or "T" (A transposed). Arith
/// and Acc as in the file comment. Throws std::invalid_argument for an unknown mode, "T"
/// with an Arith that is not an arithmetic type, extents that do not match, or y sharing memory
/// with x or with A's arrays. Empty y: nothing happens; empty A with non-empty y: y = beta y.
template <class Arith = void, class Acc = void, class Exec, class Matrix, class X, class Y,
          class Alpha, class Beta,
          class Enable = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
void spmv(const Exec& exec, const char mode[], const Alpha& alpha, const Matrix& A, const X& x,
          const Beta& beta, const Y& y, SpmvAlgorithm algorithm = SpmvAlgorithm::automatic) {
  static_assert(is_csr<Matrix>::value || is_ell<Matrix>::value,
                "kacc::sparse::spmv: A must be a kacc::sparse::CsrMatrix or EllMatrix");
  static_assert(is_view_v<X> && is_view_v<Y>, "kacc::sparse::spmv: x and y must be views");
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::sparse::spmv: x and y must be rank 1");
  static_assert(!std::is_const<typename Y::value_type>::value,
                "kacc::sparse::spmv: y must be writable");
  KACC_REQUIRE_ACCESSIBLE(Exec, typename Matrix::entries_type, "kacc::sparse::spmv", "A");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::sparse::spmv", "x");
  KACC_REQUIRE_ACCESSIBLE(Exec, Y, "kacc::sparse::spmv", "y");
  using T = std::conditional_t<
      std::is_void<Arith>::value,
      std::common_type_t<typename Matrix::arithmetic_type, arithmetic_t<X>, arithmetic_t<Y>>,
      Arith>;
  using Ac = std::conditional_t<std::is_void<Acc>::value, T, Acc>;
  const char m = kacc::Impl::mode_char("kacc::sparse::spmv", "mode", mode, "NTC");
  const bool trans = m != 'N';
  if (trans && !Impl::scatters_atomically_v<T>) {
    kacc::Impl::fail(
        "kacc::sparse::spmv",
        std::string("mode '") + m +
            "' adds into y with Kokkos atomics, which Arith = " + kacc::format_name<T>() +
            " does not have; use Arith = double (Acc may stay wider) or mode 'N' "
            "with the transposed matrix");
  }
  const std::size_t rows = static_cast<std::size_t>(A.num_rows());
  const std::size_t cols = static_cast<std::size_t>(A.num_cols());
  const std::size_t x_len = trans ? rows : cols, y_len = trans ? cols : rows;
  if (x.extent(0) != x_len || y.extent(0) != y_len) {
    kacc::Impl::fail("kacc::sparse::spmv", std::string("mode '") + m + "' with A of extents (" +
                                               std::to_string(rows) + ", " + std::to_string(cols) +
                                               ") needs x of extent " + std::to_string(x_len) +
                                               " and y of extent " + std::to_string(y_len) +
                                               "; got x " + std::to_string(x.extent(0)) + ", y " +
                                               std::to_string(y.extent(0)));
  }
  kacc::Impl::check_no_alias("kacc::sparse::spmv", "y", y, "x", x);
  kacc::Impl::check_no_alias("kacc::sparse::spmv", "y", y, "the values of A", A.values());
  kacc::Impl::check_no_alias("kacc::sparse::spmv", "y", y, "the column indices of A", A.entries());
  const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
  if (y_len == 0) return;
  kacc::Impl::write_with_overflow_policy(
      "kacc::sparse::spmv", "y", exec, y, b != T(0), [&](const auto& out) {
        using Out = std::decay_t<decltype(out)>;
        if (a == T(0)) {
          Impl::scale_y(Impl::kernel_label<T, Ac, Matrix, X, Out>("scale_y"), exec, b, out);
        } else {
          Impl::spmv<T, Ac, kacc::Impl::default_shape_v<Exec>>(exec, trans, a, A, x, b, out,
                                                               algorithm);
        }
      });
}

/// spmv in the matrix's default execution space instance, fenced.
template <class Arith = void, class Acc = void, class Matrix, class X, class Y, class Alpha,
          class Beta>
void spmv(const char mode[], const Alpha& alpha, const Matrix& A, const X& x, const Beta& beta,
          const Y& y, SpmvAlgorithm algorithm = SpmvAlgorithm::automatic) {
  using Exec = typename Matrix::execution_space;
  spmv<Arith, Acc>(Exec(), mode, alpha, A, x, beta, y, algorithm);
  Exec().fence();
}

}  // namespace sparse
}  // namespace kacc
