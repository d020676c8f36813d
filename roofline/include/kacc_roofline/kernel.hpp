#pragma once
/// @file
/// The mixbench-style kernel of the experimental roofline, written once for every view
/// type: per entry it reads a value, runs `iterations` rounds of `chains` independent
/// fused multiply-adds, averages the chains and writes the result back in place. A plain
/// Kokkos::View and a kacc::View run exactly the same arithmetic in the same order; only
/// the loads and stores differ (the view type selects them; the round count is the
/// intensity).
///
/// The recurrence is the real quadratic map t = t * t + c with c in its chaotic range
/// (-1.99 .. -1.90): it neither converges nor grows, so every round changes the value and
/// 8, 16 or 32 rounds give different results even after rounding to a 2-byte format (a
/// converging recurrence would make those round counts indistinguishable).
///
/// As in mixbench, the rounds are a compile-time count. On host back ends the kernel
/// updates blocks of `lanes` entries, two vector registers wide: each chain is one loop
/// over the block, so a round issues chains x 2 independent vector FMAs, enough to cover
/// FMA latency x throughput (4 x 2 on current x86 cores) and reach the FMA peak in the
/// compute-bound region. On GPUs one item is one entry.

#include <kacc/core/block_load.hpp>
#include <kacc/core/error_free.hpp>
#include <kacc/core/traits.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

// chain_round and update_block are also instantiated by the unit tests with a host-only
// type that counts FLOPs; this keeps nvcc from warning about those host-only instances.
#if defined(__CUDACC__)
#define KACC_ROOFLINE_ANY_ARITHMETIC _Pragma("nv_exec_check_disable")
#else
#define KACC_ROOFLINE_ANY_ARITHMETIC
#endif

// Unrolls the copy of a block into its chains completely, so the chains live in vector
// registers: GCC 12 kept the fp32 block (8 chains x 32 lanes) in a 1 KiB stack array
// otherwise, and plain fp32 ran at a third of plain fp64's bandwidth at low intensity.
// The final mean stays a loop: unrolled, GCC 12 rebuilt it from scalar additions for
// the fp16 and bf16 blocks. The host pass of nvcc knows neither pragma, and a CUDA
// build's kernel runs on the device.
#if defined(__CUDA_ARCH__) || defined(__clang__)
#define KACC_ROOFLINE_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__CUDACC__)
#define KACC_ROOFLINE_UNROLL _Pragma("GCC unroll 64")
#else
#define KACC_ROOFLINE_UNROLL
#endif

namespace kacc_roofline {

/// Independent FMA chains per entry (mixbench uses 8).
inline constexpr int chains = 8;

/// Fused multiply-add, rounded once, on every back end (kacc::math::fma). The kernel calls
/// it unqualified, so a test's counting arithmetic type can supply its own through
/// argument-dependent lookup.
template <class T>
KOKKOS_INLINE_FUNCTION T fma(T a, T b, T c) {
  return kacc::math::fma(a, b, c);
}

/// FLOPs per entry at `iterations`: 2 per FMA, then chains - 1 adds and one multiply
/// to average the chains. Format conversions are not counted (they are memory access).
KOKKOS_INLINE_FUNCTION constexpr long long flops_per_value(int iterations) {
  return 2LL * chains * iterations + chains;
}

/// Bytes per entry: one read and one write in the storage format (scales not counted).
template <class V>
constexpr std::size_t bytes_per_value() {
  return 2 * kacc::bytes_per_entry<V>();
}

/// Bytes of one host vector register for the target the compiler builds for.
inline constexpr int host_vector_bytes =
#if defined(__AVX512F__)
    64;
#elif defined(__AVX__)
    32;
#else
    16;
#endif

/// Entries one work item updates: two vector registers of the arithmetic type on host
/// back ends (chains x 2 independent FMAs per round); on devices the entries of one wide
/// memory access (16 bytes of storage: neighbouring threads then touch neighbouring
/// chunks), or one entry where the format has no wide block access (scaled formats).
template <class V>
constexpr int lanes() {
  using memory_space = typename V::memory_space;
  using storage = typename kacc::format_traits<kacc::format_t<V>>::storage_type;
  constexpr int wide = kacc::Impl::detail::device_access_bytes / static_cast<int>(sizeof(storage));
  if constexpr (std::is_same<memory_space, Kokkos::HostSpace>::value) {
    return static_cast<int>(2 * host_vector_bytes / sizeof(kacc::arithmetic_t<V>));
  } else if constexpr (wide > 1 && kacc::Impl::detail::device_wide_block_v<V, wide>) {
    return wide;
  } else {
    return 1;
  }
}

/// The constant chain c adds: -1.99 + 0.0123 c, all in the chaotic range of t * t + c,
/// away from its periodic windows. Every start in [-1.947, 1.947] stays there (the mean of
/// the chains' invariant intervals), so the kernel can run again on its own output with
/// no overflow and no subnormals.
template <class T>
KOKKOS_INLINE_FUNCTION T chain_constant(int c) {
  return static_cast<T>(-1.99 + 0.0123 * c);
}

namespace detail {
/// One round on chains C .. chains - 1 of a block: one loop over the block per chain,
/// written out by recursion. The loops with a compile-time chain index keep the round
/// loop from being a perfect nest, which compilers interchange (leaving one latency-bound
/// chain per register) or fail to vectorise.
KACC_ROOFLINE_ANY_ARITHMETIC
template <int C, class T, int W>
KOKKOS_FORCEINLINE_FUNCTION void chain_round(T (&t)[chains][W], const T (&f)[chains]) {
  if constexpr (C < chains) {
    for (int w = 0; w < W; ++w) t[C][w] = fma(t[C][w], t[C][w], f[C]);
    chain_round<C + 1>(t, f);
  }
}
}  // namespace detail

/// The arithmetic of the kernel on a block of W entries, in place: each entry starts
/// `chains` chains, runs Rounds rounds of t = t * t + f[c] on each, and becomes the
/// chains' pairwise sum ((t0+t1)+(t2+t3))+((t4+t5)+(t6+t7)) times 1/8. Public so a test
/// can run it on a counting arithmetic type.
KACC_ROOFLINE_ANY_ARITHMETIC
template <int Rounds, class T, int W>
KOKKOS_FORCEINLINE_FUNCTION void update_block(T (&a)[W], const T (&f)[chains]) {
  static_assert(chains == 8, "the mean spells out eight chains");
  T t[chains][W];
  KACC_ROOFLINE_UNROLL
  for (int c = 0; c < chains; ++c) {
    KACC_ROOFLINE_UNROLL
    for (int w = 0; w < W; ++w) t[c][w] = a[w];
  }
  for (int r = 0; r < Rounds; ++r) detail::chain_round<0>(t, f);
  const T eighth(0.125);
  for (int w = 0; w < W; ++w) {
    a[w] = (((t[0][w] + t[1][w]) + (t[2][w] + t[3][w])) +
            ((t[4][w] + t[5][w]) + (t[6][w] + t[7][w]))) *
           eighth;
  }
}

/// The intensities the kernel is compiled for: 0 and powers of two up to max_iterations.
inline constexpr int max_iterations = 128;
inline constexpr bool supported_iterations(int k) {
  return k == 0 || (k > 0 && k <= max_iterations && (k & (k - 1)) == 0);
}

/// The kernel: x(i) <- update_block of Rounds rounds from x(i). On host back ends a work
/// item takes `blocks_per_item` blocks of `width` entries in turn, converts each into the
/// arithmetic type, updates it and converts it back, so the compute loop keeps every chain in
/// registers whatever the storage format. Formats with SIMD block conversions on this host (fp16
/// and bf16 on x86) convert through kacc's block loads and stores: a loop over their proxies
/// vectorises only at the 2-byte entries' width, with the scalar encoder's 64-bit integer rounding,
/// several times the instructions of vcvtph2ps / vcvtps2ph. Scaled formats with one scale
/// go through them too, so the block reads its scale once and raises the saturation flag
/// once. The other formats keep plain loops, which compilers vectorise whole.
template <class V, int Rounds>
struct mix_kernel {
  using arith = kacc::arithmetic_t<V>;
  static constexpr int width = lanes<V>();
  /// Whether x lives in a device's memory.
  static constexpr bool on_device =
      !std::is_same<typename V::memory_space, Kokkos::HostSpace>::value;
  /// Whether blocks are read through kacc's block loads: SIMD conversions on this host,
  /// one scale, or wide device accesses.
  static constexpr bool loads_by_block = kacc::Impl::block_load_vectorised_v<V> ||
                                         kacc::Impl::single_scale_v<V> || (on_device && width > 1);
  /// Whether blocks are written through kacc's block stores, for the same reasons.
  static constexpr bool stores_by_block = kacc::Impl::block_store_vectorised_v<V> ||
                                          kacc::Impl::single_scale_v<V> || (on_device && width > 1);
  /// Blocks one work item updates: eight where the block converts through SIMD block
  /// loads and stores, whose blocks are a few dozen instructions, so the call per work
  /// item (GCC 12 does not inline it into the OpenMP loop: register saves, the constants
  /// set up again, vzeroupper) cost as much as the block (eight rather than four: 1.5 GiB,
  /// 2 threads, the AMD EPYC, GFLOP/s at intensity 0 Acc<fp64,fp16> 52 -> 56-57, Acc<fp64,bf16>
  /// 41-42 -> 41-45, Acc<fp64,int16s> 35 -> 37-38); one elsewhere, because GCC 12
  /// vectorises the plain loops only one block per function (with four, Acc<fp64,fp32>
  /// became scalar code). Devices take one block (one wide access) per item.
  static constexpr int blocks_per_item = !on_device && width > 1 && loads_by_block ? 8 : 1;
  /// Entries one work item updates.
  static constexpr int entries_per_item = width * blocks_per_item;
  /// Entries ahead of its own whose cache lines a host work item that converts through
  /// block loads asks for, to write: without, the conversions between its loads left the
  /// hardware prefetchers behind. 2 threads, 1.5 GiB, GFLOP/s at 0 and 1 iterations:
  /// Acc<fp64,fp16> 51-53 -> 67-68 and 43 -> 80, Acc<fp64,bf16> 36-37 -> 46 and 38 -> 71,
  /// Acc<fp64,int16s> 33 -> 37 and 38 -> 61 (256 and 512 entries ahead gave less at 0
  /// iterations, 2048 and 4096 too; hints to read, not write, the same).
  static constexpr std::size_t prefetch_ahead = 1024;

  V x;
  arith f[chains] = {};

  explicit mix_kernel(const V& x_) : x(x_) {
    for (int c = 0; c < chains; ++c) f[c] = chain_constant<arith>(c);
  }

  /// Work items for x.extent(0) entries.
  std::size_t items() const { return (x.extent(0) + entries_per_item - 1) / entries_per_item; }

  /// Updates work item `item`: its blocks, loaded one by one and stored together (one
  /// test of the stored values where the format needs one, one scale read and one
  /// saturation flag raised: for int16s and fp16 at zero rounds 1.3x and 1.1x the speed of
  /// four stores), or entry by entry if it is the last, short one or its block loads would
  /// read subnormals as zero on this thread (tested once per item, not per block).
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t item) const {
    const std::size_t first = item * entries_per_item;
    const std::size_t end = x.extent(0);
    if (first + entries_per_item <= end && !kacc::Impl::block_loads_flush_subnormals<arith, V>()) {
      if constexpr (loads_by_block && !on_device) {
        if (first + prefetch_ahead + entries_per_item <= end)
          kacc::Impl::prefetch_entries<true>(
              kacc::Impl::storage_pointer(x, static_cast<kacc::index_type>(first + prefetch_ahead)),
              entries_per_item);
      }
      arith fl[chains];
      for (int c = 0; c < chains; ++c) fl[c] = f[c];
      arith updated[entries_per_item];
      KACC_ROOFLINE_UNROLL
      for (int b = 0; b < blocks_per_item; ++b) {
        arith a[width];
        load(first + b * width, a);
        update_block<Rounds>(a, fl);
        for (int w = 0; w < width; ++w) updated[b * width + w] = a[w];
      }
      store(first, updated);
    } else if constexpr (width > 1) {
      update_entries(first, first + entries_per_item < end ? first + entries_per_item : end);
    }
  }

  /// Entries [first, last) one at a time. Devices never need it (one entry per item, and
  /// their loads do not flush subnormals), and nvcc 11.8's optimiser never finishes this
  /// dead loop for scaled formats at zero rounds, so it is instantiated on host back ends
  /// only.
  KOKKOS_INLINE_FUNCTION void update_entries(const std::size_t first,
                                             const std::size_t last) const {
    arith fl[chains];
    for (int c = 0; c < chains; ++c) fl[c] = f[c];
    for (std::size_t i = first; i < last; ++i) {
      arith a[1] = {static_cast<arith>(x(i))};
      update_block<Rounds>(a, fl);
      x(i) = a[0];
    }
  }

  /// a[w] = x(first + w): block loads where the format has SIMD conversions on this host
  /// or one scale, the plain loop (which compilers vectorise whole) otherwise. The caller
  /// has checked that block loads do not flush subnormals here.
  KOKKOS_INLINE_FUNCTION void load(const std::size_t first, arith (&a)[width]) const {
    if constexpr (loads_by_block) {
      kacc::Impl::load_block<width, kacc::Impl::subnormal_check::by_caller>(
          x, static_cast<kacc::index_type>(first), a);
    } else {
      for (int w = 0; w < width; ++w) a[w] = static_cast<arith>(x(first + w));
    }
  }

  /// x(first + w) = a[w] for a work item's entries: block stores where the format has
  /// SIMD conversions on this host or one scale, the plain loop otherwise.
  KOKKOS_INLINE_FUNCTION void store(const std::size_t first,
                                    const arith (&a)[entries_per_item]) const {
    if constexpr (stores_by_block) {
      kacc::Impl::store_block<entries_per_item>(x, static_cast<kacc::index_type>(first), a);
    } else {
      for (int w = 0; w < entries_per_item; ++w) x(first + w) = a[w];
    }
  }
};

namespace detail {
template <int Rounds, class V>
void launch(const V& x) {
  using exec = typename V::execution_space;
  const mix_kernel<V, Rounds> k(x);
  Kokkos::parallel_for("kacc_roofline::mix", Kokkos::RangePolicy<exec>(0, k.items()), k);
}
}  // namespace detail

/// Runs the kernel once at a compile-time number of rounds, asynchronously. Tests use
/// this to instantiate only the intensities they check.
template <int Rounds, class V>
void run(const V& x) {
  detail::launch<Rounds>(x);
}

/// Runs the kernel once at `iterations` (one of supported_iterations) on the execution
/// space of V, asynchronously: fence to time it.
template <class V>
void run(const V& x, int iterations) {
  switch (iterations) {
    case 0:
      return detail::launch<0>(x);
    case 1:
      return detail::launch<1>(x);
    case 2:
      return detail::launch<2>(x);
    case 4:
      return detail::launch<4>(x);
    case 8:
      return detail::launch<8>(x);
    case 16:
      return detail::launch<16>(x);
    case 32:
      return detail::launch<32>(x);
    case 64:
      return detail::launch<64>(x);
    case 128:
      return detail::launch<128>(x);
    default:
      throw std::invalid_argument("kacc_roofline::run: iterations is " +
                                  std::to_string(iterations) +
                                  "; supported are 0 and powers of two up to 128");
  }
}
static_assert(max_iterations == 128, "run() dispatches up to 128 iterations");

/// The value entry i starts from: multiples of 1/1024 in [-0.5, 0.5), spread by a hash.
KOKKOS_INLINE_FUNCTION double initial_value(std::size_t i) {
  const std::size_t h = (i * 2654435761u) >> 7;
  return static_cast<double>(h % 1024) / 1024.0 - 0.5;
}

/// Fills x with initial_value(i) in parallel (first touch where x is fresh). Scaled
/// views get the scale kacc::deep_copy gives data of largest magnitude 2 (a power of
/// two: the kernel's results stay within +-1.95), so stores encode as they do for data
/// a user copies in.
template <class V>
void initialise(const V& x) {
  using exec = typename V::execution_space;
  using arith = kacc::arithmetic_t<V>;
  if constexpr (kacc::is_kacc_view_v<V>) {
    if constexpr (V::is_scaled) {
      using traits = kacc::format_traits<typename V::format_type>;
      Kokkos::deep_copy(x.scales(), traits::template scale_for<arith>(arith(2)));
    }
  }
  constexpr int width = lanes<V>();
  const std::size_t n = x.extent(0);
  // Same item split as the kernel, so each thread first-touches the pages it updates.
  Kokkos::parallel_for(
      "kacc_roofline::init", Kokkos::RangePolicy<exec>(0, (n + width - 1) / width),
      KOKKOS_LAMBDA(std::size_t item) {
        const std::size_t end = item * width + width < n ? item * width + width : n;
        for (std::size_t i = item * width; i < end; ++i) {
          x(i) = static_cast<arith>(initial_value(i));
        }
      });
}

}  // namespace kacc_roofline
