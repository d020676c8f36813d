#pragma once
/// @file
/// The mixbench-style kernel of the experimental roofline, written once for every view
/// type: per entry it reads a value, runs `iterations` rounds of `chains` independent
/// fused multiply-adds (t = t * t + f, independent chains so the FMA pipes stay busy),
/// averages the chains and writes the result back in place. A plain Kokkos::View and a
/// kacc::View run exactly the same arithmetic in the same order; only the loads and
/// stores differ (the view type is the only template parameter).
///
/// On host back ends one work item updates `lanes` consecutive entries, and every
/// per-entry step is a loop over those lanes, so the compiler vectorises across entries
/// no matter how the back end schedules its range loop. On GPUs one item is one entry.

#include <kacc/core/traits.hpp>

#include <cstddef>
#include <type_traits>

namespace kacc_roofline {

/// Independent FMA chains per entry (mixbench uses 8: enough to cover FMA latency).
inline constexpr int chains = 8;

/// Fused multiply-add, rounded once, on every back end.
template <class T>
KOKKOS_INLINE_FUNCTION T fma(T a, T b, T c) {
#if KACC_KOKKOS_VERSION_AT_LEAST(4, 0)
  return Kokkos::fma(a, b, c);
#else
  return std::fma(a, b, c);  // Kokkos 3 has no portable fma; its host back ends use this
#endif
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

/// Entries one work item updates: a 64-byte vector of the arithmetic type on host
/// back ends, one entry on devices (neighbouring threads then touch neighbouring entries).
template <class V>
constexpr int lanes() {
  using memory_space = typename V::memory_space;
  return std::is_same<memory_space, Kokkos::HostSpace>::value
             ? static_cast<int>(128 / sizeof(kacc::arithmetic_t<V>))
             : 1;
}

/// The constants the chains add: distinct, in (0, 0.25) so t = t * t + f stays in
/// (0, 0.5) for any start in [-0.5, 0.5] (no overflow, no subnormals).
template <class T>
KOKKOS_INLINE_FUNCTION T chain_constant(int c) {
  return static_cast<T>(0.01 * (c + 1));
}

/// The eight chains of W neighbouring entries. Each step is a loop over the W lanes
/// with nothing else in it, so the compiler turns every step into vector instructions
/// across entries and keeps the chains in registers for the whole round loop.
template <class T, int W>
struct chain_state {
  T t0[W], t1[W], t2[W], t3[W], t4[W], t5[W], t6[W], t7[W];

  KOKKOS_FORCEINLINE_FUNCTION explicit chain_state(const T (&a)[W]) {
    for (int w = 0; w < W; ++w) {
      t0[w] = a[w];
      t1[w] = a[w];
      t2[w] = a[w];
      t3[w] = a[w];
      t4[w] = a[w];
      t5[w] = a[w];
      t6[w] = a[w];
      t7[w] = a[w];
    }
  }

  /// One round: one FMA per chain and lane, t = t * t + f.
  KOKKOS_FORCEINLINE_FUNCTION void round(const T (&f)[chains]) {
    for (int w = 0; w < W; ++w) {
      t0[w] = kacc_roofline::fma(t0[w], t0[w], f[0]);
      t1[w] = kacc_roofline::fma(t1[w], t1[w], f[1]);
      t2[w] = kacc_roofline::fma(t2[w], t2[w], f[2]);
      t3[w] = kacc_roofline::fma(t3[w], t3[w], f[3]);
      t4[w] = kacc_roofline::fma(t4[w], t4[w], f[4]);
      t5[w] = kacc_roofline::fma(t5[w], t5[w], f[5]);
      t6[w] = kacc_roofline::fma(t6[w], t6[w], f[6]);
      t7[w] = kacc_roofline::fma(t7[w], t7[w], f[7]);
    }
  }

  /// Lane w's pairwise sum ((t0+t1)+(t2+t3))+((t4+t5)+(t6+t7)), times 1/8.
  KOKKOS_FORCEINLINE_FUNCTION T mean(int w) const {
    return (((t0[w] + t1[w]) + (t2[w] + t3[w])) + ((t4[w] + t5[w]) + (t6[w] + t7[w]))) *
           (T(1) / T(chains));
  }
};
static_assert(chains == 8, "chain_state spells out eight chains");

/// The kernel: x(i) <- mean over chains of `iterations` rounds of t = t * t + f from x(i).
template <class V>
struct mix_kernel {
  using arith = kacc::arithmetic_t<V>;
  static constexpr int width = lanes<V>();

  V x;
  int iterations = 0;
  arith f[chains] = {};

  mix_kernel(const V& x_, int iterations_) : x(x_), iterations(iterations_) {
    for (int c = 0; c < chains; ++c) f[c] = chain_constant<arith>(c);
  }

  /// Work items for x.extent(0) entries.
  std::size_t items() const { return (x.extent(0) + width - 1) / width; }

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t item) const {
    const std::size_t first = item * width;
    if (first + width <= x.extent(0)) {
      update<width>(first);
    } else {
      for (std::size_t i = first; i < x.extent(0); ++i) update<1>(i);
    }
  }

  /// Entries first .. first + W - 1; the same arithmetic per entry for every W.
  template <int W>
  KOKKOS_FORCEINLINE_FUNCTION void update(std::size_t first) const {
    arith fl[chains];
    for (int c = 0; c < chains; ++c) fl[c] = f[c];
    arith a[W];
    for (int w = 0; w < W; ++w) a[w] = static_cast<arith>(x(first + w));
    chain_state<arith, W> t(a);
    for (int j = 0; j < iterations; ++j) t.round(fl);
    for (int w = 0; w < W; ++w) x(first + w) = t.mean(w);
  }
};

/// Runs the kernel once on the execution space of V (asynchronously; fence to time it).
template <class V>
void run(const V& x, int iterations) {
  using exec = typename V::execution_space;
  const mix_kernel<V> k(x, iterations);
  Kokkos::parallel_for("kacc_roofline::mix", Kokkos::RangePolicy<exec>(0, k.items()), k);
}

/// The value entry i starts from: multiples of 1/1024 in [-0.5, 0.5), spread by a hash.
KOKKOS_INLINE_FUNCTION double initial_value(std::size_t i) {
  const std::size_t h = (i * 2654435761u) >> 7;
  return static_cast<double>(h % 1024) / 1024.0 - 0.5;
}

/// Fills x with initial_value(i) in parallel (first touch where x is fresh). Scaled
/// views get the scale that maps 0.5 to the largest integer.
template <class V>
void initialise(const V& x) {
  using exec = typename V::execution_space;
  using arith = kacc::arithmetic_t<V>;
  if constexpr (kacc::is_kacc_view_v<V>) {
    if constexpr (V::is_scaled) {
      using traits = kacc::format_traits<typename V::format_type>;
      Kokkos::deep_copy(x.scales(), static_cast<arith>(0.5 / static_cast<double>(traits::largest)));
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
