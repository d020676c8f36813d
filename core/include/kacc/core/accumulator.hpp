#pragma once
/// @file
/// Accumulation types as a template parameter of reduction kernels. A kernel keeps its
/// partial sums in `Acc` and talks to it only through `kacc::accumulator_traits<Acc>`:
/// `zero()`, `add(acc, value)`, `add_product(acc, a, b)` (by default `add(acc, a * b)`;
/// an accumulator may form the product exactly), `join(acc, other)` and `result(acc)`.
/// A plain arithmetic
/// type (the default) is the ordinary running sum; `kacc::compensated<T>` is a
/// Neumaier/TwoSum compensated sum that also works as the value type of
/// `Kokkos::parallel_reduce` (Kokkos::Sum), so a kernel gains compensated accumulation
/// without a second copy. `kacc::exact<double>` (kacc/core/exact.hpp) is a long
/// accumulator with a correctly rounded result. Further accumulators are one more
/// specialisation of accumulator_traits.

#include <kacc/core/config.hpp>
#include <kacc/core/error_free.hpp>
#include <kacc/core/exact.hpp>

namespace kacc {

/// Neumaier's compensated sum: `sum + comp` carries the rounding errors of the additions,
/// so the error of a long sum no longer grows with n. In kernels, products of two T go
/// through accumulator_traits::add_product, which adds their rounding errors too (Dot2).
template <class T>
struct compensated {
  T sum = T(0);
  T comp = T(0);

  KOKKOS_INLINE_FUNCTION void add(T v) {
    const T t = sum + v;
    // TwoSum error of sum + v, branch on magnitude (Neumaier) written as a select.
    comp += (math::fabs(sum) >= math::fabs(v)) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  KOKKOS_INLINE_FUNCTION T value() const { return sum + comp; }

  KOKKOS_INLINE_FUNCTION compensated& operator+=(const compensated& o) {
    add(o.sum);
    comp += o.comp;
    return *this;
  }
  // Kokkos 3.x joins reduction values through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile compensated& o) volatile {
    const T s = sum, v = o.sum;
    const T t = s + v;
    comp = comp + ((math::fabs(s) >= math::fabs(v)) ? (s - t) + v : (v - t) + s) + o.comp;
    sum = t;
  }
};

/// How a kernel uses an accumulation type; this primary template is the plain sum.
template <class Acc>
struct accumulator_traits {
  static_assert(std::is_arithmetic<Acc>::value,
                "kacc: an accumulation type is arithmetic or specialises accumulator_traits");
  using value_type = Acc;  // what result() returns
  KOKKOS_INLINE_FUNCTION static constexpr Acc zero() { return Acc(0); }
  template <class T>
  KOKKOS_INLINE_FUNCTION static void add(Acc& acc, const T& v) {
    acc += static_cast<Acc>(v);
  }
  template <class A, class B>
  KOKKOS_INLINE_FUNCTION static void add_product(Acc& acc, const A& a, const B& b) {
    add(acc, a * b);
  }
  KOKKOS_INLINE_FUNCTION static void join(Acc& acc, const Acc& other) { acc += other; }
  KOKKOS_INLINE_FUNCTION static Acc result(const Acc& acc) { return acc; }
  static constexpr bool is_plain = true;
};

template <class T>
struct accumulator_traits<compensated<T>> {
  using value_type = T;
  KOKKOS_INLINE_FUNCTION static compensated<T> zero() { return {}; }
  template <class V>
  KOKKOS_INLINE_FUNCTION static void add(compensated<T>& acc, const V& v) {
    acc.add(static_cast<T>(v));
  }
  /// Ogita, Rump and Oishi's Dot2 step: the product's rounding error (FMA TwoProduct)
  /// joins the compensation, so with the sum's TwoSum errors a dot product satisfies
  /// |result - x^T y| <= u |x^T y| + gamma_n^2 sum |x_i y_i| (no underflow). Factors of
  /// another type than T are multiplied as before, with a rounded product.
  template <class A, class B>
  KOKKOS_INLINE_FUNCTION static void add_product(compensated<T>& acc, const A& a, const B& b) {
    if constexpr (std::is_same<A, T>::value && std::is_same<B, T>::value) {
      T p, e;
      eft::two_prod(a, b, p, e);
      acc.add(p);
      acc.comp += e;
    } else {
      add(acc, a * b);
    }
  }
  KOKKOS_INLINE_FUNCTION static void join(compensated<T>& acc, const compensated<T>& other) {
    acc += other;
  }
  KOKKOS_INLINE_FUNCTION static T result(const compensated<T>& acc) { return acc.value(); }
  static constexpr bool is_plain = false;
};

/// The long accumulator: values and products are added exactly (widened to double, which
/// is exact for every kacc storage format), the result is rounded once.
template <>
struct accumulator_traits<exact<double>> {
  using value_type = double;
  KOKKOS_INLINE_FUNCTION static exact<double> zero() { return {}; }
  template <class V>
  KOKKOS_INLINE_FUNCTION static void add(exact<double>& acc, const V& v) {
    acc.add(static_cast<double>(v));
  }
  template <class A, class B>
  KOKKOS_INLINE_FUNCTION static void add_product(exact<double>& acc, const A& a, const B& b) {
    acc.add_product(static_cast<double>(a), static_cast<double>(b));
  }
  KOKKOS_INLINE_FUNCTION static void join(exact<double>& acc, const exact<double>& other) {
    acc += other;
  }
  KOKKOS_INLINE_FUNCTION static double result(const exact<double>& acc) { return acc.value(); }
  static constexpr bool is_plain = false;
};

/// The type an accumulator's result has (Acc itself for plain sums).
template <class Acc>
using accumulated_t = typename accumulator_traits<Acc>::value_type;

/// A short name for labels: "fp64", "comp-fp64", ...
template <class Acc>
struct accumulator_name {
  static constexpr const char* get() {
    return std::is_same<Acc, double>::value  ? "fp64"
           : std::is_same<Acc, float>::value ? "fp32"
                                             : "other";
  }
};
template <class T>
struct accumulator_name<compensated<T>> {
  static constexpr const char* get() {
    return std::is_same<T, double>::value  ? "comp-fp64"
           : std::is_same<T, float>::value ? "comp-fp32"
                                           : "comp";
  }
};
template <>
struct accumulator_name<exact<double>> {
  static constexpr const char* get() { return "exact-fp64"; }
};

}  // namespace kacc

namespace Kokkos {
/// Lets kacc::compensated be the value type of Kokkos::Sum reductions.
template <class T>
struct reduction_identity<kacc::compensated<T>> {
  KOKKOS_FORCEINLINE_FUNCTION static kacc::compensated<T> sum() { return {}; }
};
/// Lets kacc::exact<double> be the value type of Kokkos::Sum reductions.
template <>
struct reduction_identity<kacc::exact<double>> {
  KOKKOS_FORCEINLINE_FUNCTION static kacc::exact<double> sum() { return {}; }
};
}  // namespace Kokkos
