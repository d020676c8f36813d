#pragma once
/// @file
/// What every kacc kernel launch shares, in blas and sparse alike: 64-bit launch indices,
/// the choice between the loop shapes for CPUs and for GPUs, the check that a view can be
/// reached from the execution space that runs the kernel, the argument checks of the
/// entry points (modes, aliasing), the overflow policies of the views they write and the
/// pieces of kernel labels.

#include <kacc/core/accumulator.hpp>
#include <kacc/core/traits.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace kacc {

namespace detail {
/// dst(i...) = src(i...) converted to dst's arithmetic type, in exec; the extents are
/// equal and both views reachable from exec. A scaled dst whose scales cover only its own
/// entries first gets them re-picked from src's finite entries (format_traits::scale_for,
/// as kacc::deep_copy picks them), so every finite entry fits, and a non-finite one
/// saturates and raises dst's flag. Defined in view_algorithms.hpp (which every entry
/// point's header includes), next to the deep_copy it shares its kernels with.
template <class Exec, class Dst, class Src>
void copy_converted(const Exec& exec, const Dst& dst, const Src& src);
}  // namespace detail

/// The index type of every kacc launch. Kokkos' default is 32-bit on CUDA and HIP, which
/// would wrap (Kokkos 3.4) or abort (Kokkos 4) past 2^31 entries.
using index_type = std::int64_t;

/// Whether kernels launched in Exec can read and write the memory of view type V.
template <class Exec, class V>
inline constexpr bool is_accessible_from_v =
    Kokkos::SpaceAccessibility<Exec, typename V::memory_space>::accessible;

namespace Impl {

/// The loop shapes a kernel is written in. `host`: few threads, each streaming a long
/// contiguous stretch with vectorisable inner loops. `team`: many threads, consecutive
/// threads (vector lanes) reading consecutive addresses, reductions through Kokkos
/// nested parallelism. Both are correct on every space; the kernels pick by
/// default_shape_v, and the tests run both shapes on the host.
enum class shape { host, team };

/// The shape for Exec: `team` for spaces that cannot reach host memory (GPUs).
template <class Exec>
inline constexpr shape default_shape_v =
    Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible ? shape::host : shape::team;

template <class Exec>
using range_policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_type>>;
template <class Exec>
using team_policy = Kokkos::TeamPolicy<Exec, Kokkos::IndexType<index_type>>;
/// The team handle a team_policy<Exec> kernel receives.
template <class Exec>
using team_member = typename team_policy<Exec>::member_type;

/// The index of the calling thread among all threads of a team_policy launch: team after
/// team, thread by thread within a team.
template <class Member>
KOKKOS_INLINE_FUNCTION index_type team_thread(const Member& team) {
  return team.league_rank() * static_cast<index_type>(team.team_size()) + team.team_rank();
}

/// [begin, end) in exec with 64-bit indices.
template <class Exec>
range_policy<Exec> range(const Exec& exec, index_type begin, index_type end) {
  return range_policy<Exec>(exec, begin, end);
}

/// Lanes per vector in the team shape: a warp on CUDA, at most what the space allows.
template <class Exec>
int vector_lanes() {
  const int most = team_policy<Exec>::vector_length_max();
  return most < 32 ? most : 32;
}

/// `wanted` threads per team of policy's kind for kernel, or as many as the space allows
/// when that is fewer (a host space has as many as its thread pool).
template <class Policy, class Kernel>
int team_threads(const Policy& policy, const Kernel& kernel, int wanted) {
  const int most = policy.team_size_max(kernel, Kokkos::ParallelForTag());
  return wanted < most ? wanted : most;
}

/// The Kokkos reducer that sums accumulators of type Acc (plain or compensated).
template <class Acc>
using sum_reducer = Kokkos::Sum<Acc>;

/// The storage format of V for kernel labels ("fp32", "e8m15", ...).
template <class V>
const char* format_of() {
  using F = format_t<V>;
  if constexpr (is_format_v<F>) {
    return format_name<F>();
  } else {
    return "other";
  }
}

/// "L", "R" or "S": V's layout for kernel labels.
template <class V>
std::string layout_of() {
  using L = typename V::array_layout;
  return std::is_same<L, Kokkos::LayoutLeft>::value    ? "L"
         : std::is_same<L, Kokkos::LayoutRight>::value ? "R"
                                                       : "S";
}

/// ",arith=...,acc=...]": the end of a kernel label.
template <class Arith, class Acc>
std::string arith_suffix() {
  return std::string(",arith=") + format_name<Arith>() + ",acc=" + accumulator_name<Acc>::get() +
         "]";
}

/// "(e0,e1,...)": V's extents for error messages.
template <class V>
std::string extents_of(const V& v) {
  std::string s = "(";
  for (unsigned r = 0; r < static_cast<unsigned>(V::rank); ++r)
    s += (r ? "," : "") + std::to_string(v.extent(r));
  return s + ")";
}

/// Whether the memory of views a and b overlaps.
template <class A, class B>
bool overlaps(const A& a, const B& b) {
  if (a.span() == 0 || b.span() == 0) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a.data());
  const auto b0 = reinterpret_cast<std::uintptr_t>(b.data());
  const auto a1 = a0 + a.span() * sizeof(std::remove_pointer_t<decltype(a.data())>);
  const auto b1 = b0 + b.span() * sizeof(std::remove_pointer_t<decltype(b.data())>);
  return a0 < b1 && b0 < a1;
}

/// Throws std::invalid_argument "<where>: <message>"; `where` names the entry point, e.g.
/// "kacc::blas::gemv".
[[noreturn]] inline void fail(const std::string& where, const std::string& message) {
  throw std::invalid_argument(where + ": " + message);
}

/// The upper-cased character of a one-character mode string if it is one of `allowed`;
/// otherwise fails naming the argument, what it was and what is allowed.
inline char mode_char(const std::string& where, const char* argument, const char* mode,
                      const char* allowed) {
  const std::string m = mode ? mode : "";
  if (m.size() == 1) {
    const char c = (m[0] >= 'a' && m[0] <= 'z') ? static_cast<char>(m[0] - 'a' + 'A') : m[0];
    for (const char* a = allowed; *a; ++a)
      if (*a == c) return c;
  }
  fail(where, std::string("argument ") + argument + " is \"" + m + "\"; expected one of \"" +
                  allowed + "\" (one character)");
}

/// Fails when the output view `out` shares memory with the input `in`: "<where>: y
/// (extents (3)) aliases x (extents (3))".
template <class Out, class In>
void check_no_alias(const std::string& where, const char* out_name, const Out& out,
                    const char* in_name, const In& in) {
  if (overlaps(out, in)) {
    fail(where, std::string(out_name) + " (extents " + extents_of(out) + ") aliases " + in_name +
                    " (extents " + extents_of(in) + ")");
  }
}

/// For a view whose overflow policy is overflow::throw_on_host: fences exec and throws
/// std::overflow_error naming `where` and the argument when the view's saturation flag is
/// set. Nothing (not even the fence) for other views.
template <class Exec, class V>
void throw_if_saturated(const std::string& where, const char* argument, const Exec& exec,
                        const V& v) {
  if constexpr (is_kacc_view_v<V>) {
    if constexpr (std::is_same<typename V::overflow_policy, overflow::throw_on_host>::value) {
      exec.fence();
      if (v.saturated()) {
        throw std::overflow_error(where + ": a write into " + argument + " ('" + v.label() +
                                  "') did not fit its scale and saturated (the view's "
                                  "saturation flag is set; clear_saturated() resets it)");
      }
    }
  }
}

/// Whether V is a kacc view whose overflow policy is Policy.
template <class V, class Policy, bool = is_kacc_view_v<V>>
struct has_overflow_policy : std::false_type {};
template <class V, class Policy>
struct has_overflow_policy<V, Policy, true> : std::is_same<typename V::overflow_policy, Policy> {};

/// T with Rank pointers: the data type of a View of rank Rank with run-time extents.
template <class T, unsigned Rank>
struct dynamic_data {
  using type = typename dynamic_data<T, Rank - 1>::type*;
};
template <class T>
struct dynamic_data<T, 0> {
  using type = T;
};

/// What overflow::rescale_on_host reruns a kernel into: a Kokkos View of V's arithmetic
/// type and rank in V's memory space and layout (LayoutLeft for a strided V), so the
/// kernel computes and rounds every entry as it does for V, up to the final encode.
template <class V>
using rescale_workspace_t = Kokkos::View<
    typename dynamic_data<typename V::non_const_value_type, rank_v<V>>::type,
    std::conditional_t<std::is_same<typename V::array_layout, Kokkos::LayoutStride>::value,
                       Kokkos::LayoutLeft, typename V::array_layout>,
    typename V::memory_space>;

/// A rescale_workspace_t<V> W with the extents of `like`, zero-filled or not.
template <class W, class V, std::size_t... R>
W rescale_workspace(const V& like, bool zeroed, std::index_sequence<R...>) {
  const std::string label = "kacc::rescale_on_host::workspace";
  return zeroed ? W(label, like.extent(R)...)
                : W(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), like.extent(R)...);
}

/// Runs `write(out)`, the kernels by which the host entry point `where` writes its
/// argument `out` (named `argument`), and applies out's overflow policy:
/// - overflow::throw_on_host: throw_if_saturated afterwards.
/// - overflow::rescale_on_host: the kernels first run into out as they are, counting
///   saturation in out's flag, cleared for them and restored afterwards (so what earlier
///   writes left in it neither triggers a rerun nor is cleared). When a write saturated,
///   they run again into a
///   rescale_workspace_t, which is then stored into out with its scales re-picked
///   (detail::copy_converted). Kernels that read out's old values (`reads_out`: beta != 0,
///   axpy, scal, trsv's in-place b) find them in the workspace, decoded into it before the
///   first run. The cost, for such views only: a fence and two reads of the flag per
///   call (and two writes, a clear and a restore, when it was raised before); with
///   reads_out a read of out and a write of the workspace before the first run; when
///   something saturated, the kernels once more, two reads of the workspace (scales,
///   store), a write of out and the flag cleared and read once more. A subview whose scales also
///   cover entries outside it (shared) cannot re-pick them: its writes saturate and raise out's
///   flag, with nothing decoded or rerun.
/// - any other policy: nothing.
/// `write` receives views of two types, so it is a generic lambda, in which nvcc allows no
/// device lambdas: it calls a named function that launches the kernels.
template <class Exec, class V, class Write>
void write_with_overflow_policy(const std::string& where, const char* argument, const Exec& exec,
                                const V& out, bool reads_out, const Write& write) {
  if constexpr (has_overflow_policy<V, overflow::rescale_on_host>::value) {
    (void)where;
    (void)argument;
    using W = rescale_workspace_t<V>;
    const auto dims = std::make_index_sequence<rank_v<V>>();
    const auto& state = out.scale_state();
    W work;
    if (reads_out && !state.shared) {
      work = rescale_workspace<W>(out, false, dims);
      detail::copy_converted(exec, work, out);
    }
    // The kernels count into out's own flag, cleared for them and restored after (a view
    // built without one gets a flag for the call).
    typename V::flag_view_type flag = state.saturated;
    int raised_before = 0;
    if (flag.is_allocated()) {
      Kokkos::deep_copy(raised_before, flag);
      if (raised_before != 0) Kokkos::deep_copy(flag, 0);
    } else {
      flag = typename V::flag_view_type("kacc::rescale_on_host::saturated");
    }
    write(V(out.storage(), typename V::scale_state_type{state.scales, flag, state.shared}));
    exec.fence();
    int saturated = 0;
    Kokkos::deep_copy(saturated, flag);
    int raised_after = saturated | raised_before;
    if (saturated != 0 && !state.shared) {
      if (!reads_out) work = rescale_workspace<W>(out, true, dims);
      write(work);
      // Storing with new scales raises the flag only for non-finite results.
      if (flag.data() == state.saturated.data()) Kokkos::deep_copy(flag, 0);
      detail::copy_converted(exec, out, work);
      if (flag.data() == state.saturated.data()) Kokkos::deep_copy(saturated, flag);
      raised_after = saturated | raised_before;
    }
    if (raised_after != saturated && state.saturated.is_allocated()) {
      Kokkos::deep_copy(state.saturated, raised_after);
    }
  } else {
    write(out);
    throw_if_saturated(where, argument, exec, out);
  }
}

}  // namespace Impl
}  // namespace kacc

/// Refuses, at compile time and naming the function and the argument, a view that the
/// execution space cannot reach (a host View passed to a CUDA launch would fault).
#define KACC_REQUIRE_ACCESSIBLE(Exec, V, function, argument)    \
  static_assert(::kacc::is_accessible_from_v<Exec, V>, function \
                ": the memory space of " argument " is not accessible from the execution space")
