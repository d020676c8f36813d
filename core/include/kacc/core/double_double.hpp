#pragma once
/// @file
/// `kacc::double_double`: an unevaluated sum hi + lo of two doubles with |lo| <= ulp(hi)/2,
/// about 106 significant bits, built from error-free transformations (FMA TwoProduct).
/// The algorithms and their relative error bounds (u = 2^-53, no over- or underflow) are
/// Joldes, Muller and Popescu, "Tight and rigorous error bounds for basic building blocks
/// of double-word arithmetic", ACM TOMS 44(2), 2017:
///   double_double + double: 2u^2 (Alg. 4), double_double + double_double: 3u^2 (Alg. 6),
///   double_double * double: 2u^2 (Alg. 9), double_double * double_double: 4u^2 (Alg. 12),
///   double_double / double: 3u^2 (Alg. 15), double_double / double_double: 15u^2 (Alg. 17);
/// and double_double + an exact product of doubles (add_exact_product, Alg. 4 with the
/// product's low part added to the low part first): 3u^2 (|x| + |product|) (1 + 4u), absolute.
/// sqrt is one Newton step on the double square root; its tested bound is 4u^2. An
/// infinite or NaN result of an operation is returned as (result, 0), so IEEE special
/// values propagate as in double arithmetic (inf - inf = NaN).
///
/// Usable as an arithmetic type (`Arith`) and as an accumulator (`Acc`, with
/// accumulator_traits and Kokkos::reduction_identity); format_traits below lets kernels
/// convert to and from it and name it in labels. (Not yet a storage format of kacc::View,
/// whose arithmetic type must be a built-in one.) A wider expansion (see
/// quad_double.hpp) plugs in the same way: arithmetic operators, a constructor from
/// double, an explicit conversion to double, an accumulator_traits specialisation, a
/// Kokkos::reduction_identity specialisation and, for storage, a format_traits one.

#include <kacc/core/accumulator.hpp>
#include <kacc/core/compound_operators.hpp>
#include <kacc/core/error_free.hpp>
#include <kacc/core/format_traits.hpp>

#include <cmath>
#include <ostream>
#include <sstream>
#include <string>

namespace kacc {

/// hi + lo, |lo| <= ulp(hi) / 2 (see the file comment).
struct double_double : detail::arithmetic_from_compound<double_double> {
  /// The value rounded to double.
  double hi = 0;
  /// The rounding error of hi.
  double lo = 0;

  /// Zero.
  double_double() = default;
  /// The double v (exact).
  KOKKOS_INLINE_FUNCTION constexpr double_double(double v) : hi(v), lo(0) {}
  /// hi + lo for an already normalised pair (|lo| <= ulp(hi) / 2).
  KOKKOS_INLINE_FUNCTION constexpr double_double(double h, double l) : hi(h), lo(l) {}
  /// The value rounded to nearest double.
  KOKKOS_INLINE_FUNCTION explicit operator double() const { return hi; }
  /// The value rounded to float (through double).
  KOKKOS_INLINE_FUNCTION explicit operator float() const { return static_cast<float>(hi); }

  /// Normalises the sum s + e with |s| >= |e| (or s = 0); non-finite s passes through.
  /// Bit-mask selects rather than branches or ?:, which GCC keeps as branches under
  /// -ftrapping-math, so loops of additions vectorise.
  KOKKOS_INLINE_FUNCTION static double_double renormalize(double s, double e) {
    double h, l;
    eft::fast_two_sum(s, e, h, l);
    const std::uint64_t finite = std::uint64_t{0} - static_cast<std::uint64_t>(s - s == 0);
    const std::uint64_t hi_bits =
        (kacc::bit_cast<std::uint64_t>(h) & finite) | (kacc::bit_cast<std::uint64_t>(s) & ~finite);
    return double_double(kacc::bit_cast<double>(hi_bits),
                         kacc::bit_cast<double>(kacc::bit_cast<std::uint64_t>(l) & finite));
  }

  /// Adds y (Alg. 6).
  KOKKOS_INLINE_FUNCTION double_double& operator+=(const double_double& y) {
    double sh, sl, th, tl;
    eft::two_sum(hi, y.hi, sh, sl);
    eft::two_sum(lo, y.lo, th, tl);
    const double_double v = renormalize(sh, sl + th);
    *this = renormalize(v.hi, tl + v.lo);
    return *this;
  }
  /// Kokkos 3.x joins reduction values through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile double_double& y) volatile {
    double_double self(hi, lo);
    self += double_double(y.hi, y.lo);
    hi = self.hi;
    lo = self.lo;
  }
  /// Adds the double y (Alg. 4).
  KOKKOS_INLINE_FUNCTION double_double& operator+=(double y) {
    double sh, sl;
    eft::two_sum(hi, y, sh, sl);
    *this = renormalize(sh, lo + sl);
    return *this;
  }
  /// Adds p + e, a product of doubles as TwoProduct gives it (|e| <= ulp(p) / 2): Alg. 4
  /// for p with e added to the low part first, 11 additions where Alg. 6 takes 20. The
  /// error is at most 3u^2 (|x| + |p + e|) (1 + 4u) for x the sum before (absolute, not
  /// relative to the result as Alg. 6's: n such additions stay within 3nu^2 times the sum
  /// of the products' magnitudes to first order, Alg. 6's bound for a sum of n products too).
  KOKKOS_INLINE_FUNCTION double_double& add_exact_product(double p, double e) {
    lo += e;
    return *this += p;
  }
  /// Subtracts y.
  KOKKOS_INLINE_FUNCTION double_double& operator-=(const double_double& y) {
    return *this += double_double(-y.hi, -y.lo);
  }
  /// Multiplies by y (Alg. 12).
  KOKKOS_INLINE_FUNCTION double_double& operator*=(const double_double& y) {
    double ch, cl1;
    eft::two_prod(hi, y.hi, ch, cl1);
    const double tl1 = math::fma(hi, y.lo, lo * y.lo);
    const double cl2 = math::fma(lo, y.hi, tl1);
    *this = renormalize(ch, cl1 + cl2);
    return *this;
  }
  /// Multiplies by the double y (Alg. 9).
  KOKKOS_INLINE_FUNCTION double_double& operator*=(double y) {
    double ch, cl1;
    eft::two_prod(hi, y, ch, cl1);
    *this = renormalize(ch, math::fma(lo, y, cl1));
    return *this;
  }
  /// Divides by y (Alg. 17).
  KOKKOS_INLINE_FUNCTION double_double& operator/=(const double_double& y) {
    const double th = hi / y.hi;
    double_double r = y;
    r *= th;
    const double delta = (hi - r.hi) + (lo - r.lo);
    *this = renormalize(th, delta / y.hi);
    return *this;
  }
  /// Divides by the double y (Alg. 15).
  KOKKOS_INLINE_FUNCTION double_double& operator/=(double y) {
    const double th = hi / y;
    double ph, pl;
    eft::two_prod(th, y, ph, pl);
    const double delta = ((hi - ph) - pl) + lo;
    *this = renormalize(th, delta / y);
    return *this;
  }
};

// The operator mixin is an empty base: 2 doubles, no more.
static_assert(sizeof(double_double) == 2 * sizeof(double), "double_double: 2 doubles");

/// -x (exact).
KOKKOS_INLINE_FUNCTION double_double operator-(const double_double& x) {
  return double_double(-x.hi, -x.lo);
}

/// Comparisons of the exact values (normalised pairs compare lexicographically).
KOKKOS_INLINE_FUNCTION bool operator==(const double_double& x, const double_double& y) {
  return x.hi == y.hi && x.lo == y.lo;
}
/// x != y.
KOKKOS_INLINE_FUNCTION bool operator!=(const double_double& x, const double_double& y) {
  return !(x == y);
}
/// x < y.
KOKKOS_INLINE_FUNCTION bool operator<(const double_double& x, const double_double& y) {
  return x.hi < y.hi || (x.hi == y.hi && x.lo < y.lo);
}
/// x > y.
KOKKOS_INLINE_FUNCTION bool operator>(const double_double& x, const double_double& y) {
  return y < x;
}
/// x <= y.
KOKKOS_INLINE_FUNCTION bool operator<=(const double_double& x, const double_double& y) {
  return x.hi < y.hi || (x.hi == y.hi && x.lo <= y.lo);
}
/// x >= y.
KOKKOS_INLINE_FUNCTION bool operator>=(const double_double& x, const double_double& y) {
  return y <= x;
}

/// |x|.
KOKKOS_INLINE_FUNCTION double_double abs(const double_double& x) {
  return x.hi < 0 ? -x : x;
}
/// The square root: one Newton step on the double square root (NaN for x < 0).
KOKKOS_INLINE_FUNCTION double_double sqrt(const double_double& x) {
  if (!(x.hi > 0)) return double_double(x.hi == 0 ? x.hi : math::sqrt(x.hi), 0.0);
  const double s = math::sqrt(x.hi);
  double p, e;
  eft::two_prod(s, s, p, e);
  return double_double::renormalize(s, (((x.hi - p) - e) + x.lo) / (2 * s));
}

namespace detail {
/// `digits` significant decimal digits of the expansion x (a type with abs, comparisons
/// and arithmetic with double), in scientific notation, the last digit truncated.
template <class X>
std::string expansion_to_string(X x, double lead, int digits) {
  if (lead != lead) return "nan";
  if (lead - lead != 0) return lead > 0 ? "inf" : "-inf";
  std::string out = lead < 0 || (lead == 0 && std::signbit(lead)) ? "-" : "";
  if (lead == 0) return out + "0";
  if (lead < 0) x = -x;
  int exponent = static_cast<int>(std::floor(std::log10(std::fabs(lead))));
  for (int k = 0; k < exponent; ++k) x /= 10.0;
  for (int k = 0; k > exponent; --k) x *= 10.0;
  if (static_cast<double>(x) >= 10.0) {
    x /= 10.0;
    ++exponent;
  } else if (static_cast<double>(x) < 1.0) {
    x *= 10.0;
    --exponent;
  }
  for (int k = 0; k < digits; ++k) {
    int d = static_cast<int>(std::floor(static_cast<double>(x)));
    if (X(static_cast<double>(d)) > x) --d;  // the lead double rounded up
    d = d < 0 ? 0 : d > 9 ? 9 : d;
    out += static_cast<char>('0' + d);
    if (k == 0) out += '.';
    x = (x - static_cast<double>(d)) * 10.0;
  }
  return out + "e" + std::to_string(exponent);
}
}  // namespace detail

/// 32 significant decimal digits (host only).
inline std::string to_string(const double_double& x) {
  return detail::expansion_to_string(x, x.hi, 32);
}
/// Writes to_string(x) (host only).
inline std::ostream& operator<<(std::ostream& os, const double_double& x) {
  return os << to_string(x);
}

/// double_double as an accumulator: values are added with Alg. 4 / Alg. 6, exact products
/// (TwoProduct) of doubles with double_double::add_exact_product, double_double products
/// with Alg. 12 and Alg. 6.
template <>
struct accumulator_traits<double_double> {
  using value_type = double_double;
  KOKKOS_INLINE_FUNCTION static double_double zero() { return {}; }
  template <class V>
  KOKKOS_INLINE_FUNCTION static void add(double_double& acc, const V& v) {
    if constexpr (std::is_same<V, double_double>::value) {
      acc += v;
    } else {
      acc += static_cast<double>(v);
    }
  }
  template <class A, class B>
  KOKKOS_INLINE_FUNCTION static void add_product(double_double& acc, const A& a, const B& b) {
    if constexpr (std::is_same<A, double_double>::value || std::is_same<B, double_double>::value) {
      acc += double_double(a) * double_double(b);
    } else {
      double p, e;
      eft::two_prod(static_cast<double>(a), static_cast<double>(b), p, e);
      acc.add_exact_product(p, e);
    }
  }
  KOKKOS_INLINE_FUNCTION static void join(double_double& acc, const double_double& other) {
    acc += other;
  }
  KOKKOS_INLINE_FUNCTION static double_double result(const double_double& acc) { return acc; }
  static constexpr bool is_plain = false;
};

namespace Impl {

/// Whether host loops accumulating in Acc with arithmetic T use double_double_lanes.
template <class Acc, class T>
inline constexpr bool uses_double_double_lanes_v =
    std::is_same<Acc, double_double>::value&& std::is_same<T, double>::value;

/// a + b rounded once, on a host with FMA as fma(a, 1, b): the same bits (a times 1 is
/// exact), computed by the FMA units, which AMD's Zen cores keep apart from the adders (two
/// of each on Zen 4), so that add_finite's additions share both. Elsewhere a + b.
KOKKOS_FORCEINLINE_FUNCTION double add_on_fma_units(const double a, const double b) {
#if defined(__FMA__) && !defined(KACC_DEVICE_PASS)
  return math::fma(a, 1.0, b);
#else
  return a + b;
#endif
}
/// a - b rounded once, on a host with FMA as fma(b, -1, a) (add_on_fma_units).
KOKKOS_FORCEINLINE_FUNCTION double subtract_on_fma_units(const double a, const double b) {
#if defined(__FMA__) && !defined(KACC_DEVICE_PASS)
  return math::fma(b, -1.0, a);
#else
  return a - b;
#endif
}

/// Adds the exact product p + e to the double_double (hi, lo) as
/// double_double::add_exact_product does, without renormalize's selects for infinities and
/// NaN: the same bits while every sum stays finite. Once a sum is not, hi stays infinite or
/// NaN (where add_exact_product might keep an infinity, this may give NaN), so a loop of
/// these additions checks its sums at the end and adds again with add_exact_product when
/// any is not finite. TwoSum's error term goes to the FMA units (add_on_fma_units), 4 of
/// the 11 additions: 32 sums side by side on the Zen 4 EPYC, one thread, in registers,
/// 0.33 ns per product (Alg. 6 with half of its 20 additions so: 0.54; all 11 on the
/// adders: 0.39-0.40; the low part's two additions on the FMA units too: 0.40-0.47).
KOKKOS_INLINE_FUNCTION void add_finite(double& hi, double& lo, double p, double e) {
  const double sh = hi + p, p_part = sh - hi;
  const double sl = add_on_fma_units(subtract_on_fma_units(hi, subtract_on_fma_units(sh, p_part)),
                                     subtract_on_fma_units(p, p_part));
  eft::fast_two_sum(sh, sl + (lo + e), hi, lo);
}

/// W double_double sums side by side (his and los in arrays of their own), so that adding W
/// products, each by accumulator_traits<double_double>::add_product's steps, is one loop the
/// compiler vectorises; the same operations per lane, so the same bits as W separate sums.
/// With Finite, the additions are add_finite's: the caller checks finite() at the end.
template <int W, bool Finite = false>
struct double_double_lanes {
  /// The sums' leading parts.
  double hi[W];
  /// The sums' trailing parts.
  double lo[W];

  /// Starts from the sums lane[0 .. W).
  KOKKOS_INLINE_FUNCTION explicit double_double_lanes(const double_double* lane) {
    for (int l = 0; l < W; ++l) {
      hi[l] = lane[l].hi;
      lo[l] = lane[l].lo;
    }
  }
  /// Adds the product a b to the sum (h, o) (FMA TwoProduct, then
  /// double_double::add_exact_product): one lane's step.
  KOKKOS_FORCEINLINE_FUNCTION static void add_product(double& h, double& o, const double a,
                                                      const double b) {
    double p, e;
    eft::two_prod(a, b, p, e);
    if constexpr (Finite) {
      add_finite(h, o, p, e);
    } else {
      double_double sum(h, o);
      sum.add_exact_product(p, e);
      h = sum.hi;
      o = sum.lo;
    }
  }
  /// Adds a[l] b[l] to sum l.
  KOKKOS_INLINE_FUNCTION void add_products(const double* a, const double* b) {
    for (int l = 0; l < W; ++l) add_product(hi[l], lo[l], a[l], b[l]);
  }
  /// Adds a[l] b[l] to sum l where add[l]; the other sums keep their bits, whatever a[l] and
  /// b[l] hold (a select per lane, so the loop still vectorises).
  KOKKOS_INLINE_FUNCTION void add_products_where(const double* a, const double* b,
                                                 const bool* add) {
    for (int l = 0; l < W; ++l) {
      double h = hi[l], o = lo[l];
      add_product(h, o, a[l], b[l]);
      hi[l] = add[l] ? h : hi[l];
      lo[l] = add[l] ? o : lo[l];
    }
  }
  /// Whether every sum is finite (with Finite: whether they are add_exact_product's bits).
  KOKKOS_INLINE_FUNCTION bool finite() const {
    int n = 0;
    for (int l = 0; l < W; ++l) n += hi[l] - hi[l] == 0;
    return n == W;
  }
  /// Writes the sums back to lane[0 .. W).
  KOKKOS_INLINE_FUNCTION void store(double_double* lane) const {
    for (int l = 0; l < W; ++l) lane[l] = double_double(hi[l], lo[l]);
  }
};

}  // namespace Impl

template <>
struct accumulator_name<double_double> {
  static constexpr const char* get() { return "dd"; }
};

/// A kacc::View may compute in double_double.
template <>
struct is_arithmetic_type<double_double> : std::true_type {};

/// Conversions to and from double_double (kacc::convert, and views that store it:
/// StoredAs<double_double>, 16 bytes per entry), and its name in kernel labels.
template <>
struct format_traits<double_double> : detail::cast_format_traits<double_double> {
  KOKKOS_INLINE_FUNCTION static constexpr double max_value() { return DBL_MAX; }
  static constexpr const char* name() { return "dd"; }
};

}  // namespace kacc

namespace Kokkos {
/// Lets kacc::double_double be the value type of Kokkos::Sum reductions.
template <>
struct reduction_identity<kacc::double_double> {
  KOKKOS_FORCEINLINE_FUNCTION static kacc::double_double sum() { return {}; }
};
}  // namespace Kokkos
