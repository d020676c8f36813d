#pragma once
/// @file
/// The compute roof of the roofline: a register-resident fused multiply-add probe in the
/// style of mixbench-cpu. Every thread runs `accumulators` independent chains of
/// `acc = fma(acc, multiplier, addend)`, each chain one full vector register wide on host
/// back ends, so the FMA pipes never wait on a result: with FMA latency L cycles and P
/// pipes a core needs L * P chains in flight (4 * 2 = 8 on current x86 cores); the probe
/// keeps twice that. No memory is touched inside the timed loop, so the probe measures
/// what the cores can do, not what any kernel's code generation reaches.

#include <kacc_roofline/kernel.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace kacc_roofline {

/// One work item per thread: `repeats` rounds of `accumulators` x `lanes` independent FMAs.
template <class T, class ExecutionSpace = Kokkos::DefaultExecutionSpace>
struct fma_peak_probe {
  /// Independent vector chains per thread (2x the latency-throughput product of x86 cores).
  static constexpr int accumulators = 16;
  /// Values per chain: one 512-bit register on host back ends, one value per GPU thread.
  static constexpr int lanes =
      std::is_same<typename ExecutionSpace::memory_space, Kokkos::HostSpace>::value
          ? static_cast<int>(64 / sizeof(T))
          : 1;

  /// One value per work item: the chains' sum, so the compiler must compute every chain.
  Kokkos::View<T*, typename ExecutionSpace::memory_space> sums;
  /// Rounds of FMAs per work item.
  int repeats = 1;
  /// Slightly below one, with addend chosen so the chains settle near 1 (no overflow, no
  /// subnormals); runtime values, so the compiler cannot fold the loop.
  T multiplier = T(0.999), addend = T(0.001);

  /// FLOPs of one work item: 2 per FMA.
  double flops_per_item() const { return 2.0 * accumulators * lanes * repeats; }

  /// One FMA on every lane of chains C.. accumulators - 1: one loop over the lanes per
  /// chain, written out by recursion. Loops with a compile-time chain index keep the
  /// repeat loop from being a perfect nest, which compilers would interchange (leaving one
  /// latency-bound chain per register) or fail to vectorise.
  template <int C>
  KOKKOS_FORCEINLINE_FUNCTION static void round(T (&acc)[accumulators][lanes], T m, T a) {
    if constexpr (C < accumulators) {
      for (int w = 0; w < lanes; ++w) acc[C][w] = kacc_roofline::fma(acc[C][w], m, a);
      round<C + 1>(acc, m, a);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t item) const {
    T acc[accumulators][lanes];
    for (int c = 0; c < accumulators; ++c) {
      for (int w = 0; w < lanes; ++w) acc[c][w] = T(0.5) + T(0.001) * T(c * lanes + w + item);
    }
    const T m = multiplier, a = addend;
    for (int r = 0; r < repeats; ++r) round<0>(acc, m, a);
    T sum = 0;
    for (int c = 0; c < accumulators; ++c) {
      for (int w = 0; w < lanes; ++w) sum += acc[c][w];
    }
    sums(item) = sum;
  }
};

}  // namespace kacc_roofline
