#pragma once
/// @file
/// The mixbench-style kernel of the experimental roofline, written once for every view
/// type: per entry it reads a value, runs `iterations` rounds of `chains` independent
/// fused multiply-adds (t = t * t + f, independent chains so the FMA pipes stay busy),
/// averages the chains and writes the result back in place. A plain Kokkos::View and a
/// kacc::View run exactly the same arithmetic in the same order; only the loads and
/// stores differ (the view type selects them; the round count is the intensity).
///
/// As in mixbench, the rounds are a compile-time count, so the per-entry body is
/// straight-line code. On host back ends one work item runs a loop over `lanes`
/// consecutive entries that the compiler vectorises across entries, whatever the back
/// end's own range loop looks like; on GPUs one item is one entry.

#include <kacc/core/traits.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
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
             ? static_cast<int>(256 / sizeof(kacc::arithmetic_t<V>))
             : 1;
}

/// The constants the chains add: distinct, in (0, 0.25) so t = t * t + f stays in
/// (0, 0.5) for any start in [-0.5, 0.5] (no overflow, no subnormals).
template <class T>
KOKKOS_INLINE_FUNCTION T chain_constant(int c) {
  return static_cast<T>(0.01 * (c + 1));
}

/// The eight chains of P entries, written out: the body of the entry loop is then
/// straight-line code and the compiler vectorises that loop across entries with every
/// chain in a register. P = 2 interleaves two entries (16 independent FMAs per round),
/// enough to keep two FMA pipes of latency 4 busy.
template <class T, int P>
struct chain_state {
  T t0[P], t1[P], t2[P], t3[P], t4[P], t5[P], t6[P], t7[P];

  KOKKOS_FORCEINLINE_FUNCTION explicit chain_state(const T (&a)[P]) {
    for (int p = 0; p < P; ++p) {
      t0[p] = t1[p] = t2[p] = t3[p] = t4[p] = t5[p] = t6[p] = t7[p] = a[p];
    }
  }

  /// One round: one FMA per chain and entry, t = t * t + f.
  KOKKOS_FORCEINLINE_FUNCTION void round(const T (&f)[chains]) {
    for (int p = 0; p < P; ++p) {
      t0[p] = kacc_roofline::fma(t0[p], t0[p], f[0]);
      t1[p] = kacc_roofline::fma(t1[p], t1[p], f[1]);
      t2[p] = kacc_roofline::fma(t2[p], t2[p], f[2]);
      t3[p] = kacc_roofline::fma(t3[p], t3[p], f[3]);
      t4[p] = kacc_roofline::fma(t4[p], t4[p], f[4]);
      t5[p] = kacc_roofline::fma(t5[p], t5[p], f[5]);
      t6[p] = kacc_roofline::fma(t6[p], t6[p], f[6]);
      t7[p] = kacc_roofline::fma(t7[p], t7[p], f[7]);
    }
  }

  /// Entry p's pairwise sum ((t0+t1)+(t2+t3))+((t4+t5)+(t6+t7)), times 1/8.
  KOKKOS_FORCEINLINE_FUNCTION T mean(int p) const {
    return (((t0[p] + t1[p]) + (t2[p] + t3[p])) + ((t4[p] + t5[p]) + (t6[p] + t7[p]))) *
           (T(1) / T(chains));
  }
};
static_assert(chains == 8, "chain_state spells out eight chains");

/// N rounds as straight-line code (mixbench's compile-time compute iterations).
template <int N>
struct unrolled_rounds {
  template <class S, class T>
  KOKKOS_FORCEINLINE_FUNCTION static void run(S& s, const T (&f)[chains]) {
    unrolled_rounds<N / 2>::run(s, f);
    unrolled_rounds<N - N / 2>::run(s, f);
  }
};
template <>
struct unrolled_rounds<1> {
  template <class S, class T>
  KOKKOS_FORCEINLINE_FUNCTION static void run(S& s, const T (&f)[chains]) {
    s.round(f);
  }
};
template <>
struct unrolled_rounds<0> {
  template <class S, class T>
  KOKKOS_FORCEINLINE_FUNCTION static void run(S&, const T (&)[chains]) {}
};

/// The intensities the kernel is compiled for: 0 and powers of two up to max_iterations.
inline constexpr int max_iterations = 128;
inline constexpr bool supported_iterations(int k) {
  return k == 0 || (k > 0 && k <= max_iterations && (k & (k - 1)) == 0);
}

/// The kernel: x(i) <- mean over chains of Rounds rounds of t = t * t + f from x(i).
/// On host back ends a work item updates `width` entries as pairs (i, i + width / 2).
template <class V, int Rounds>
struct mix_kernel {
  using arith = kacc::arithmetic_t<V>;
  static constexpr int width = lanes<V>();
  static constexpr int half = width > 1 ? width / 2 : 1;
  // Compilers vectorise a loop with one register size, chosen by its narrowest type:
  // with narrower storage the arithmetic values of one step would fill several
  // registers each and the chains would spill. Those views go through a small buffer.
  static constexpr bool interleave = kacc::bytes_per_entry<V>() == sizeof(arith);

  V x;
  arith f[chains] = {};

  explicit mix_kernel(const V& x_) : x(x_) {
    for (int c = 0; c < chains; ++c) f[c] = chain_constant<arith>(c);
  }

  /// Work items for x.extent(0) entries.
  std::size_t items() const { return (x.extent(0) + width - 1) / width; }

  KOKKOS_FORCEINLINE_FUNCTION void single(std::size_t i, const arith (&fl)[chains]) const {
    const arith a[1] = {static_cast<arith>(x(i))};
    chain_state<arith, 1> t(a);
    unrolled_rounds<Rounds>::run(t, fl);
    x(i) = t.mean(0);
  }

  /// Entries i and j, interleaved.
  KOKKOS_FORCEINLINE_FUNCTION void pair(std::size_t i, std::size_t j,
                                        const arith (&fl)[chains]) const {
    const arith a[2] = {static_cast<arith>(x(i)), static_cast<arith>(x(j))};
    chain_state<arith, 2> t(a);
    unrolled_rounds<Rounds>::run(t, fl);
    x(i) = t.mean(0);
    x(j) = t.mean(1);
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t item) const {
    arith fl[chains];
    for (int c = 0; c < chains; ++c) fl[c] = f[c];
    const std::size_t first = item * width;
    if (width > 1 && first + width <= x.extent(0)) {
      if constexpr (interleave) {
        for (int w = 0; w < half; ++w) pair(first + w, first + half + w, fl);
      } else {
        // Convert in, compute, convert out: three loops, each vectorised at its own
        // width, so the compute loop keeps all chains in registers.
        alignas(64) arith a[width];
        for (int w = 0; w < width; ++w) a[w] = static_cast<arith>(x(first + w));
        for (int w = 0; w < half; ++w) {
          const arith in[2] = {a[w], a[half + w]};
          chain_state<arith, 2> t(in);
          unrolled_rounds<Rounds>::run(t, fl);
          a[w] = t.mean(0);
          a[half + w] = t.mean(1);
        }
        for (int w = 0; w < width; ++w) x(first + w) = a[w];
      }
    } else {
      const std::size_t end = first + width < x.extent(0) ? first + width : x.extent(0);
      for (std::size_t i = first; i < end; ++i) single(i, fl);
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
