#pragma once
/// @file
/// What every kacc kernel launch shares, in blas and sparse alike: 64-bit launch indices,
/// the choice between the loop shapes for CPUs and for GPUs, the check that a view can be
/// reached from the execution space that runs the kernel, the argument checks of the
/// entry points (modes, aliasing) and the pieces of kernel labels.

#include <kacc/core/accumulator.hpp>
#include <kacc/core/traits.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kacc {

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

}  // namespace Impl
}  // namespace kacc

/// Refuses, at compile time and naming the function and the argument, a view that the
/// execution space cannot reach (a host View passed to a CUDA launch would fault).
#define KACC_REQUIRE_ACCESSIBLE(Exec, V, function, argument)    \
  static_assert(::kacc::is_accessible_from_v<Exec, V>, function \
                ": the memory space of " argument " is not accessible from the execution space")
