#pragma once
/// @file
/// kacc::blas::dot(exec, x, y): sum_i x(i) y(i) for vectors of any storage formats,
/// computed in the common arithmetic type (or Arith) and accumulated in Acc.

#include <algorithm>

#include <kacc/blas/impl/rows_times.hpp>
#include <kacc/core/exact_shared.hpp>

namespace kacc {
namespace blas {
namespace Impl {

/// Entries per block of the host shape: each block is a lane-split sum (vectorises).
constexpr index_type dot_host_block = 4096;
/// Entries per block of the host shape with exact lanes: their final join into one exact
/// accumulator costs about a tenth of 4096 entries' products, so blocks are larger.
constexpr index_type dot_exact_block = 32768;

/// Entries per block of the host shape for Acc and arithmetic T.
template <class Acc, class T>
inline constexpr index_type dot_block_v =
    kacc::Impl::uses_exact_lanes_v<Acc, T> ? dot_exact_block : dot_host_block;

/// Asks the host's caches for the L entries of x and of y prefetch_distance entries ahead of
/// k, where they lie in the vectors: with exact<double> or double_double the sums are slow
/// enough that the hardware prefetchers fall behind (n = 2^27, 2 threads, an Intel Xeon:
/// exact<double> with fp32 storage took 117-124 ms without, 44-46 ms with). Past the end of
/// k's block too, into the next one, which the same thread sums next (a static schedule hands
/// each thread consecutive blocks): stopping at the block's end left the first
/// prefetch_distance entries of every block of 4096 to the hardware (double_double, AMD EPYC
/// Zen 4, four processes each: 61.8-93.5 -> 49.2-78.3 ms, 1.17-1.29x -> 1.00-1.13x plain fp64
/// in the same processes; exact<double>, in blocks of 32768, within the spread).
template <int L, class X, class Y>
KOKKOS_FORCEINLINE_FUNCTION void dot_prefetch_ahead(const X& x, const Y& y, const index_type k) {
  if (k + prefetch_distance + L <= static_cast<index_type>(x.extent(0))) {
    kacc::Impl::prefetch_entries(kacc::Impl::storage_pointer(x, k + prefetch_distance), L);
    kacc::Impl::prefetch_entries(kacc::Impl::storage_pointer(y, k + prefetch_distance), L);
  }
}

/// Adds x(i) y(i) for i in [i, i1) to sum: one block of the host shape. With exact<double>,
/// the products go 16 at a time into exact lanes, which skip the FMA errors when both
/// formats are float-valued; otherwise each block is a lane-split sum, formats with SIMD
/// conversions on this host are converted prefetched_stage entries at a time through block
/// loads first, and double_double lanes sit side by side, adding by add_finite (a block whose
/// sums do not stay finite is summed again by double_double::add_exact_product, whose bits
/// they then are). With 512-bit vectors (KACC_HOST_WIDE_VECTORS; DOT n = 2^27, 2 threads,
/// Intel Xeon: double_double with fp32 storage 71.9-76.8 -> 54.0-55.1 ms, the other
/// accumulators and formats unchanged; same bits).
template <class T, class Acc, class X, class Y>
KACC_HOST_WIDE_VECTORS KOKKOS_INLINE_FUNCTION void dot_host_block_sum(const X& x, const Y& y,
                                                                      index_type i,
                                                                      const index_type i1,
                                                                      Acc& sum) {
  using traits = accumulator_traits<Acc>;
  constexpr int L = host_lanes;
  if constexpr (kacc::Impl::uses_exact_lanes_v<Acc, T>) {
    kacc::Impl::exact_lanes<L, false, kacc::Impl::exact_products_v<format_t<X>, format_t<Y>>> lanes;
    const index_type first = i, groups = (i1 - i) / L;
    lanes.add_product_groups(groups, [&](const index_type g, T* xs, T* ys) {
      const index_type k = first + g * L;
      dot_prefetch_ahead<L>(x, y, k);
      kacc::Impl::load_block<L>(x, k, xs);
      kacc::Impl::load_block<L>(y, k, ys);
    });
    for (i = first + groups * L; i < i1; ++i) lanes.add_product(convert<T>(x(i)), convert<T>(y(i)));
    lanes.add_into(sum);
  } else {
    Acc lane[L];
    for (int l = 0; l < L; ++l) lane[l] = traits::zero();
    i = dot_staged<T>(x, y, i, i1, lane);
    if constexpr (kacc::Impl::uses_double_double_lanes_v<Acc, T>) {
      const index_type start = i;
      const auto add_groups = [&](auto& lanes) {
        for (i = start; i + L <= i1; i += L) {
          T xs[L], ys[L];
          dot_prefetch_ahead<L>(x, y, i);
          kacc::Impl::load_block<L>(x, i, xs);
          kacc::Impl::load_block<L>(y, i, ys);
          lanes.add_products(xs, ys);
        }
      };
      kacc::Impl::double_double_lanes<L, true> lanes(lane);
      add_groups(lanes);
      if (lanes.finite()) {
        lanes.store(lane);
      } else {
        kacc::Impl::double_double_lanes<L> checked(lane);
        add_groups(checked);
        checked.store(lane);
      }
    }
    for (; i + L <= i1; i += L)
      for (int l = 0; l < L; ++l)
        traits::add_product(lane[l], convert<T>(x(i + l)), convert<T>(y(i + l)));
    for (int l = 0; i + l < i1; ++l)
      traits::add_product(lane[l], convert<T>(x(i + l)), convert<T>(y(i + l)));
    for (int w = L / 2; w > 0; w /= 2)
      for (int l = 0; l < w; ++l) traits::join(lane[l], lane[l + w]);
    traits::join(sum, lane[0]);
  }
}

/// Entries of x and y that one thread of the team shape reads per step: one 16-byte
/// chunk of the narrower format where device block loads move whole chunks (two fp64,
/// eight fp16), so that each step reads whole chunks of both; one otherwise.
template <class X, class Y>
inline constexpr int dot_team_width_v = (std::max)(kacc::Impl::detail::device_chunk_entries_v<X>,
                                                   kacc::Impl::detail::device_chunk_entries_v<Y>);

/// Teams of `threads` threads for a grid-stride loop over `steps` steps: as many as the
/// space holds at once, one step per thread at most. (On an H200, fp64 DOT's steps as the
/// iterations of a Kokkos range reduction read 1.8 TB/s; this loop reads 3.5.)
template <class Exec>
index_type dot_team_league(const Exec& exec, index_type steps, index_type threads) {
  const index_type resident = exec.concurrency() / threads;
  const index_type needed = (steps + threads - 1) / threads;
  const index_type league = needed < resident ? needed : resident;
  return league > 1 ? league : 1;
}

/// Calls add(x(i), y(i)) (converted to T) for the entries of one thread of a grid-stride
/// loop over n entries in steps of W (the thread's first step `first`, then every `stride`
/// steps), and then, one by one, for those of the last n % W entries that fall to it.
template <class T, int W, class X, class Y, class Add>
KOKKOS_FORCEINLINE_FUNCTION void dot_thread_products(const X& x, const Y& y, const index_type n,
                                                     const index_type first,
                                                     const index_type stride, Add&& add) {
  const index_type steps = n / W;
  for (index_type s = first; s < steps; s += stride) {
    T xs[W], ys[W];
    kacc::Impl::load_block<W>(x, s * W, xs);
    kacc::Impl::load_block<W>(y, s * W, ys);
    for (int l = 0; l < W; ++l) add(xs[l], ys[l]);
  }
  for (index_type i = steps * W + first; i < n; i += stride)
    add(convert<T>(x(i)), convert<T>(y(i)));
}

/// Threads per team of the exact team shape.
constexpr int dot_exact_team_threads = 256;
/// Most entries one team of the exact team shape adds: each adds at most three word
/// additions to any of the team's words, which hold 2^30 (exact_shared_words).
constexpr index_type dot_exact_team_entries = index_type{1} << 26;

/// sum_i x(i) y(i) for n > 0 in exact<double>, in the team shape: each thread adds the
/// products of its steps (dot_team_width_v entries each, steps a grid apart) to an
/// exact_expansion in registers, whose remainders and final terms go to its team's
/// exact_shared_words in scratch memory; the teams' words meet in device memory by atomic
/// additions, and the host rounds their sum once. `teams`: how many teams (by default as
/// many as the space holds at once, one step per thread at most); at least enough to keep
/// each team within dot_exact_team_entries.
template <class T, class Exec, class X, class Y>
exact<double> dot_exact_team(const std::string& label, const Exec& exec, const X& x, const Y& y,
                             index_type teams = 0) {
  using words_type = kacc::Impl::exact_shared_words;
  using word_type = words_type::word_type;
  using expansion_type =
      kacc::Impl::exact_expansion<kacc::Impl::exact_products_v<format_t<X>, format_t<Y>>>;
  using policy_type = kacc::Impl::team_policy<Exec>;
  using scratch_type = Kokkos::View<word_type*, typename Exec::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr int W = dot_team_width_v<X, Y>;
  const index_type n = x.extent(0), steps = n / W;
  const Kokkos::View<word_type*, typename Exec::memory_space> total(
      Kokkos::view_alloc(label + " words", exec), words_type::size);
  auto kernel = KOKKOS_LAMBDA(const kacc::Impl::team_member<Exec>& team) {
    const scratch_type scratch(team.team_scratch(0), words_type::size);
    const words_type shared{scratch.data()};
    for (int k = team.team_rank(); k < words_type::size; k += team.team_size()) scratch(k) = 0;
    team.team_barrier();
    const index_type stride = static_cast<index_type>(team.league_size()) * team.team_size();
    expansion_type sum;
    dot_thread_products<T, W>(x, y, n, kacc::Impl::team_thread(team), stride,
                              [&](const T a, const T b) { sum.add_product(a, b, shared); });
    sum.flush(shared);
    team.team_barrier();
    const words_type all{total.data()};
    for (int k = team.team_rank(); k < words_type::size; k += team.team_size())
      shared.add_word_into(all, k);
  };
  const auto scratch = Kokkos::PerTeam(scratch_type::shmem_size(words_type::size));
  const index_type threads = kacc::Impl::team_threads(
      policy_type(exec, 1, 1).set_scratch_size(0, scratch), kernel, dot_exact_team_threads);
  index_type league = teams > 0 ? teams : dot_team_league(exec, steps, threads);
  const index_type fewest = (n + dot_exact_team_entries - 1) / dot_exact_team_entries;
  if (league < fewest) league = fewest;
  Kokkos::parallel_for(
      label, policy_type(exec, league, static_cast<int>(threads)).set_scratch_size(0, scratch),
      kernel);
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), total);
  exec.fence();
  return words_type{host.data()}.value();
}

/// sum_i x(i) y(i) for n > 0, accumulated in Acc, in the loop shape Shape. The host shape
/// gives each thread blocks of dot_block_v entries (dot_host_block_sum); the team shape
/// gives every thread the space holds at once steps of dot_team_width_v consecutive entries,
/// a grid apart (consecutive threads, consecutive steps; dot_team_league), whose sums meet
/// in a Kokkos team reduction, and sums in exact<double> through dot_exact_team.
template <class T, class Acc, shape Shape, class Exec, class X, class Y>
Acc dot(const std::string& label, const Exec& exec, const X& x, const Y& y) {
  using traits = accumulator_traits<Acc>;
  const index_type n = x.extent(0);
  Acc result = traits::zero();
  if constexpr (Shape == shape::host) {
    constexpr index_type B = dot_block_v<Acc, T>;
    Kokkos::parallel_reduce(
        label, kacc::Impl::range(exec, 0, (n + B - 1) / B),
        KOKKOS_LAMBDA(const index_type b, Acc& sum) {
          const index_type i0 = b * B;
          dot_host_block_sum<T>(x, y, i0, i0 + B < n ? i0 + B : n, sum);
        },
        kacc::Impl::sum_reducer<Acc>(result));
  } else if constexpr (kacc::Impl::uses_exact_lanes_v<Acc, T>) {
    return dot_exact_team<T>(label, exec, x, y);
  } else {
    using policy_type = kacc::Impl::team_policy<Exec>;
    constexpr int W = dot_team_width_v<X, Y>;
    const index_type steps = n / W;
    auto kernel = KOKKOS_LAMBDA(const kacc::Impl::team_member<Exec>& team, Acc& sum) {
      const index_type stride = static_cast<index_type>(team.league_size()) * team.team_size();
      dot_thread_products<T, W>(x, y, n, kacc::Impl::team_thread(team), stride,
                                [&](const T a, const T b) { traits::add_product(sum, a, b); });
    };
    const index_type threads =
        policy_type(exec, 1, 1).team_size_recommended(kernel, Kokkos::ParallelReduceTag());
    Kokkos::parallel_reduce(
        label, policy_type(exec, dot_team_league(exec, steps, threads), static_cast<int>(threads)),
        kernel, kacc::Impl::sum_reducer<Acc>(result));
  }
  exec.fence();
  return result;
}

}  // namespace Impl

/// Returns x . y. Arith defaults to the common arithmetic type of x and y, Acc to Arith
/// (e.g. `dot<double, kacc::compensated<double>>(exec, x, y)`). Empty vectors give 0.
/// Throws std::invalid_argument when the extents differ.
template <class Arith = void, class Acc = void, class Exec, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
detail::arith_t<Arith, X, Y> dot(const Exec& exec, const X& x, const Y& y) {
  using T = detail::arith_t<Arith, X, Y>;
  using A = detail::acc_t<Acc, T>;
  static_assert(X::rank == 1 && Y::rank == 1, "kacc::blas::dot: x and y must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::blas::dot", "x");
  KACC_REQUIRE_ACCESSIBLE(Exec, Y, "kacc::blas::dot", "y");
  if (x.extent(0) != y.extent(0)) {
    detail::fail("dot", "x has extents " + detail::extents_of(x) + " but y has extents " +
                            detail::extents_of(y));
  }
  if (x.extent(0) == 0) return T(0);
  const std::string label = std::string("kacc::blas::dot[x=") + detail::format_of<X>() +
                            ",y=" + detail::format_of<Y>() + detail::arith_suffix<T, A>();
  const A sum = Impl::dot<T, A, kacc::Impl::default_shape_v<Exec>>(label, exec, x, y);
  return static_cast<T>(accumulator_traits<A>::result(sum));
}

/// dot(x, y) in x's default execution space.
template <class Arith = void, class Acc = void, class X, class Y,
          class Enable = std::enable_if_t<is_view_v<X> && is_view_v<Y>>>
detail::arith_t<Arith, X, Y> dot(const X& x, const Y& y) {
  return dot<Arith, Acc>(typename X::execution_space(), x, y);
}

}  // namespace blas
}  // namespace kacc
