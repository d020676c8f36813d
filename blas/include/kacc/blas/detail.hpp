#pragma once
/// @file
/// Shared machinery of the kacc BLAS kernels: type selection (arithmetic and accumulation
/// type), kernel labels, argument checks, and the two loop shapes every matrix-vector
/// kernel reduces to. Entries are always read as `kacc::convert<Arith>(v(i))`, so plain
/// Kokkos Views and kacc views of any format go through the same source.

#include <kacc/core/accumulator.hpp>
#include <kacc/core/traits.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kacc {
namespace blas {
namespace detail {

/// Arith if named, else the common arithmetic type of the views.
template <class Arith, class... V>
using arith_t = std::conditional_t<std::is_void<Arith>::value, common_arithmetic_t<V...>, Arith>;
/// Acc if named, else the arithmetic type.
template <class Acc, class Arith>
using acc_t = std::conditional_t<std::is_void<Acc>::value, Arith, Acc>;

template <class V>
const char* format_of() {
  using F = storage_t<V>;
  if constexpr (is_format_v<F>) {
    return format_name<F>();
  } else {
    return "other";
  }
}

template <class V>
std::string layout_of() {
  using L = typename V::array_layout;
  return std::is_same<L, Kokkos::LayoutLeft>::value    ? "L"
         : std::is_same<L, Kokkos::LayoutRight>::value ? "R"
                                                       : "S";
}

template <class Arith, class Acc>
std::string arith_suffix() {
  return std::string(",arith=") + format_name<Arith>() + ",acc=" + accumulator_name<Acc>::get() +
         "]";
}

template <class V>
std::string extents_of(const V& v) {
  std::string s = "(";
  for (unsigned r = 0; r < static_cast<unsigned>(V::rank); ++r)
    s += (r ? "," : "") + std::to_string(v.extent(r));
  return s + ")";
}

[[noreturn]] inline void fail(const std::string& function, const std::string& message) {
  throw std::invalid_argument("kacc::blas::" + function + ": " + message);
}

/// The upper-cased first character of a mode string if it is one of `allowed`.
inline char mode_char(const std::string& function, const char* argument, const char* mode,
                      const char* allowed) {
  const std::string m = mode ? mode : "";
  if (m.size() == 1) {
    const char c = (m[0] >= 'a' && m[0] <= 'z') ? static_cast<char>(m[0] - 'a' + 'A') : m[0];
    for (const char* a = allowed; *a; ++a)
      if (*a == c) return c;
  }
  fail(function, std::string("argument ") + argument + " is \"" + m + "\"; expected one of \"" +
                     allowed + "\" (one character)");
}

/// Whether the memory of views a and b overlaps.
template <class A, class B>
bool overlaps(const A& a, const B& b) {
  if (a.span() == 0 || b.span() == 0) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a.data());
  const auto b0 = reinterpret_cast<std::uintptr_t>(b.data());
  const auto a1 = a0 + a.span() * bytes_per_entry<A>();
  const auto b1 = b0 + b.span() * bytes_per_entry<B>();
  return a0 < b1 && b0 < a1;
}

/// Matrix entry (i, k) of op(A): A(i, k), or A(k, i) when Trans.
template <class AV, bool Trans>
struct oriented {
  AV a;
  template <class I, class K>
  KOKKOS_FORCEINLINE_FUNCTION decltype(auto) operator()(const I& i, const K& k) const {
    if constexpr (Trans) {
      return a(k, i);
    } else {
      return a(i, k);
    }
  }
  /// Whether consecutive k are closer in memory than consecutive i.
  bool k_contiguous() const {
    return Trans ? a.stride(0) <= a.stride(1) : a.stride(1) <= a.stride(0);
  }
};

/// Sum lanes per row: lane count of the vector loops (two AVX-512 fp64 registers).
constexpr int lanes = 16;
/// Most rows one thread keeps partial sums for in the column-walking shape.
constexpr int max_chunk_rows = 1024;

/// r(i) = sum_{k in [k0,k1)} M(i,k) x(k) for i in [i0,i1), then out(i, r(i)) ("dot shape":
/// M contiguous along k). Each row is a lane-split dot product, so the loop vectorises
/// without reassociation flags.
template <class Arith, class Acc, class Exec, class M, class X, class Out>
void rows_dot(const std::string& label, const Exec& exec, const M& m, std::int64_t i0,
              std::int64_t i1, std::int64_t k0, std::int64_t k1, const X& x, const Out& out) {
  using traits = accumulator_traits<Acc>;
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<Exec>(exec, i0, i1), KOKKOS_LAMBDA(const std::int64_t i) {
        Acc lane[lanes];
        for (int l = 0; l < lanes; ++l) lane[l] = traits::zero();
        std::int64_t k = k0;
        for (; k + lanes <= k1; k += lanes) {
          for (int l = 0; l < lanes; ++l)
            traits::add(lane[l], convert<Arith>(m(i, k + l)) * convert<Arith>(x(k + l)));
        }
        for (int l = 0; k + l < k1; ++l)
          traits::add(lane[l], convert<Arith>(m(i, k + l)) * convert<Arith>(x(k + l)));
        for (int w = lanes / 2; w > 0; w /= 2)
          for (int l = 0; l < w; ++l) traits::join(lane[l], lane[l + w]);
        out(i, traits::result(lane[0]));
      });
}

/// Same result as rows_dot for M contiguous along i ("axpy shape"): each thread owns a
/// chunk of rows and walks the columns four at a time, so it streams contiguous memory
/// instead of reading each row with a stride.
template <class Arith, class Acc, class Exec, class M, class X, class Out>
void rows_axpy(const std::string& label, const Exec& exec, const M& m, std::int64_t i0,
               std::int64_t i1, std::int64_t k0, std::int64_t k1, const X& x, const Out& out) {
  using traits = accumulator_traits<Acc>;
  const std::int64_t rows = i1 - i0;
  const std::int64_t threads = exec.concurrency() > 0 ? exec.concurrency() : 1;
  std::int64_t chunk = (rows + 2 * threads - 1) / (2 * threads);
  chunk = ((chunk + 15) / 16) * 16;
  if (chunk > max_chunk_rows) chunk = max_chunk_rows;
  if (chunk < 16) chunk = 16;
  const std::int64_t chunks = (rows + chunk - 1) / chunk;
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<Exec>(exec, 0, chunks), KOKKOS_LAMBDA(const std::int64_t c) {
        const std::int64_t r0 = i0 + c * chunk;
        const std::int64_t r1 = r0 + chunk < i1 ? r0 + chunk : i1;
        const std::int64_t nr = r1 - r0;
        Acc acc[max_chunk_rows];
        for (std::int64_t r = 0; r < nr; ++r) acc[r] = traits::zero();
        std::int64_t k = k0;
        for (; k + 4 <= k1; k += 4) {
          const Arith x0 = convert<Arith>(x(k)), x1 = convert<Arith>(x(k + 1));
          const Arith x2 = convert<Arith>(x(k + 2)), x3 = convert<Arith>(x(k + 3));
          for (std::int64_t r = 0; r < nr; ++r) {
            const std::int64_t i = r0 + r;
            traits::add(acc[r],
                        (convert<Arith>(m(i, k)) * x0 + convert<Arith>(m(i, k + 1)) * x1) +
                            (convert<Arith>(m(i, k + 2)) * x2 + convert<Arith>(m(i, k + 3)) * x3));
          }
        }
        for (; k < k1; ++k) {
          const Arith xk = convert<Arith>(x(k));
          for (std::int64_t r = 0; r < nr; ++r)
            traits::add(acc[r], convert<Arith>(m(r0 + r, k)) * xk);
        }
        for (std::int64_t r = 0; r < nr; ++r) out(r0 + r, traits::result(acc[r]));
      });
}

/// Dispatches to the shape that streams M's memory.
template <class Arith, class Acc, class Exec, class M, class X, class Out>
void rows_times(const std::string& label, const Exec& exec, const M& m, std::int64_t i0,
                std::int64_t i1, std::int64_t k0, std::int64_t k1, const X& x, const Out& out) {
  if (i1 <= i0) return;
  if (m.k_contiguous()) {
    rows_dot<Arith, Acc>(label, exec, m, i0, i1, k0, k1, x, out);
  } else {
    rows_axpy<Arith, Acc>(label, exec, m, i0, i1, k0, k1, x, out);
  }
}

}  // namespace detail
}  // namespace blas
}  // namespace kacc
