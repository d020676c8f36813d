#pragma once
/// @file
/// `kacc::quad_double`: an unevaluated sum x[0] + x[1] + x[2] + x[3] of four doubles, each
/// below half an ulp of the one before, about 212 significant bits. Every operation forms
/// its partial results with error-free transformations (TwoSum, FMA TwoProduct), drops
/// only terms of relative size u^4 (u = 2^-53) and below, and renormalises the rest by
/// sorting them by magnitude and summing them into four components through a two-double
/// running sum (the accumulation idea of Hida, Li and Bailey's QD library). The relative
/// error bounds tested against MPFR (no over- or underflow) are 2^-208 for +, -, * and
/// 2^-205 for / and sqrt. Infinite or NaN results propagate as in double arithmetic.
/// quad_double is an arithmetic type (`Arith`) and an accumulator (`Acc`) like
/// double_double (see double_double.hpp for the extension point).

#include <kacc/core/double_double.hpp>

namespace kacc {

/// x[0] + x[1] + x[2] + x[3] (see the file comment).
struct quad_double : detail::arithmetic_from_compound<quad_double> {
  /// The components, by decreasing magnitude; x[0] is the value rounded to double.
  double x[4] = {0, 0, 0, 0};

  /// Zero.
  quad_double() = default;
  /// The double v (exact).
  KOKKOS_INLINE_FUNCTION constexpr quad_double(double v) : x{v, 0, 0, 0} {}
  /// The double_double v (exact).
  KOKKOS_INLINE_FUNCTION constexpr quad_double(const double_double& v) : x{v.hi, v.lo, 0, 0} {}
  /// The value rounded to double.
  KOKKOS_INLINE_FUNCTION explicit operator double() const { return x[0]; }
  /// The value rounded to float (through double).
  KOKKOS_INLINE_FUNCTION explicit operator float() const { return static_cast<float>(x[0]); }
  /// The value rounded to double_double.
  KOKKOS_INLINE_FUNCTION explicit operator double_double() const {
    return double_double::renormalize(x[0], x[1] + x[2]);
  }

  /// The four-component sum of t[0..m) (m <= 16; t is reordered). `lead` is the rounded
  /// result the operation would give in double: if it is not finite, it is the result.
  KOKKOS_INLINE_FUNCTION static quad_double from_terms(double* t, int m, double lead) {
    quad_double r;
    if (!(lead - lead == 0)) {
      r.x[0] = lead;
      return r;
    }
    for (int i = 1; i < m; ++i) {  // by decreasing magnitude
      const double v = t[i];
      int j = i;
      for (; j > 0 && math::fabs(t[j - 1]) < math::fabs(v); --j) t[j] = t[j - 1];
      t[j] = v;
    }
    // A two-double running sum (u, v): when adding a term leaves three non-zero parts, the
    // leading one is final and becomes the next component.
    double out[4] = {0, 0, 0, 0};
    int k = 0;
    double u = t[0], v = 0;
    int i = 1;
    for (; i < m && k < 4; ++i) {
      double s1, v1, s, u1;
      eft::two_sum(v, t[i], s1, v1);
      eft::two_sum(u, s1, s, u1);
      if (u1 != 0 && v1 != 0) {
        out[k++] = s;
        u = u1;
        v = v1;
      } else {
        u = s;
        v = u1 != 0 ? u1 : v1;
      }
    }
    double rest = 0;
    for (; i < m; ++i) rest += t[i];
    if (k < 4) {
      out[k++] = u;
      u = v;
    }
    if (k < 4) {
      out[k++] = u;
      u = 0;
    }
    out[3] += u + rest;
    return renormalize(out);
  }

  /// Makes c nonoverlapping: a TwoSum pass from the bottom, then one from the top that
  /// skips zeros.
  KOKKOS_INLINE_FUNCTION static quad_double renormalize(double* c) {
    double s = c[3];
    for (int i = 2; i >= 0; --i) eft::two_sum(c[i], s, s, c[i + 1]);
    c[0] = s;
    quad_double r;
    int k = 0;
    s = c[0];
    for (int i = 1; i < 4; ++i) {
      double h, e;
      eft::two_sum(s, c[i], h, e);
      if (e != 0 && k < 3) {
        r.x[k++] = h;
        s = e;
      } else {
        s = h + e;
      }
    }
    r.x[k] = s;
    return r;
  }

  /// Adds y.
  KOKKOS_INLINE_FUNCTION quad_double& operator+=(const quad_double& y) {
    double t[8];
    for (int i = 0; i < 4; ++i) {
      t[i] = x[i];
      t[4 + i] = y.x[i];
    }
    *this = from_terms(t, 8, x[0] + y.x[0]);
    return *this;
  }
  /// Kokkos 3.x joins reduction values through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile quad_double& y) volatile {
    quad_double self, other;
    for (int i = 0; i < 4; ++i) {
      self.x[i] = x[i];
      other.x[i] = y.x[i];
    }
    self += other;
    for (int i = 0; i < 4; ++i) x[i] = self.x[i];
  }
  /// Adds the double y.
  KOKKOS_INLINE_FUNCTION quad_double& operator+=(double y) {
    double t[5] = {x[0], x[1], x[2], x[3], y};
    *this = from_terms(t, 5, x[0] + y);
    return *this;
  }
  /// Subtracts y.
  KOKKOS_INLINE_FUNCTION quad_double& operator-=(const quad_double& y) {
    quad_double n;
    for (int i = 0; i < 4; ++i) n.x[i] = -y.x[i];
    return *this += n;
  }
  /// Multiplies by y: the products x[i] y[j] for i + j <= 2 exactly, for i + j = 3
  /// rounded, the rest (below u^4 relative) dropped.
  KOKKOS_INLINE_FUNCTION quad_double& operator*=(const quad_double& y) {
    double t[16];
    int m = 0;
    for (int i = 0; i <= 2; ++i)
      for (int j = 0; i + j <= 2; ++j) {
        eft::two_prod(x[i], y.x[j], t[m], t[m + 1]);
        m += 2;
      }
    for (int i = 0; i <= 3; ++i) t[m++] = x[i] * y.x[3 - i];
    *this = from_terms(t, m, x[0] * y.x[0]);
    return *this;
  }
  /// Multiplies by the double y.
  KOKKOS_INLINE_FUNCTION quad_double& operator*=(double y) {
    double t[7];
    for (int i = 0; i < 3; ++i) eft::two_prod(x[i], y, t[2 * i], t[2 * i + 1]);
    t[6] = x[3] * y;
    *this = from_terms(t, 7, x[0] * y);
    return *this;
  }
  /// Divides by y: long division, one double quotient digit per step.
  KOKKOS_INLINE_FUNCTION quad_double& operator/=(const quad_double& y) {
    const double q0 = x[0] / y.x[0];
    if (!(q0 - q0 == 0)) {
      *this = quad_double(q0);
      return *this;
    }
    double q[5];
    quad_double r = *this;
    for (int k = 0; k < 5; ++k) {
      q[k] = r.x[0] / y.x[0];
      quad_double p = y;
      p *= q[k];
      r -= p;
    }
    *this = from_terms(q, 5, q0);
    return *this;
  }
};

// The operator mixin is an empty base: 4 doubles, no more.
static_assert(sizeof(quad_double) == 4 * sizeof(double), "quad_double: 4 doubles");

/// -x (exact).
KOKKOS_INLINE_FUNCTION quad_double operator-(const quad_double& x) {
  quad_double n;
  for (int i = 0; i < 4; ++i) n.x[i] = -x.x[i];
  return n;
}

/// x == y (renormalised components compare one by one).
KOKKOS_INLINE_FUNCTION bool operator==(const quad_double& x, const quad_double& y) {
  for (int i = 0; i < 4; ++i)
    if (x.x[i] != y.x[i]) return false;
  return true;
}
/// x != y.
KOKKOS_INLINE_FUNCTION bool operator!=(const quad_double& x, const quad_double& y) {
  return !(x == y);
}
/// x < y: the sign of the leading component of x - y.
KOKKOS_INLINE_FUNCTION bool operator<(const quad_double& x, const quad_double& y) {
  return (x - y).x[0] < 0;
}
/// x > y.
KOKKOS_INLINE_FUNCTION bool operator>(const quad_double& x, const quad_double& y) {
  return y < x;
}
/// x <= y.
KOKKOS_INLINE_FUNCTION bool operator<=(const quad_double& x, const quad_double& y) {
  return !(y < x);
}
/// x >= y.
KOKKOS_INLINE_FUNCTION bool operator>=(const quad_double& x, const quad_double& y) {
  return !(x < y);
}

/// |x|.
KOKKOS_INLINE_FUNCTION quad_double abs(const quad_double& x) {
  return x.x[0] < 0 ? -x : x;
}
/// The square root: two Newton steps s + (x - s^2) / (2 s) from the double_double root.
KOKKOS_INLINE_FUNCTION quad_double sqrt(const quad_double& x) {
  if (!(x.x[0] > 0) || !(x.x[0] - x.x[0] == 0)) {
    return quad_double(x.x[0] == 0 ? x.x[0] : math::sqrt(x.x[0]));
  }
  quad_double s(sqrt(static_cast<double_double>(x)));
  for (int k = 0; k < 2; ++k) s += (x - s * s) / (s * 2.0);
  return s;
}

/// 64 significant decimal digits (host only).
inline std::string to_string(const quad_double& x) {
  return detail::expansion_to_string(x, x.x[0], 64);
}
/// Writes to_string(x) (host only).
inline std::ostream& operator<<(std::ostream& os, const quad_double& x) {
  return os << to_string(x);
}

/// quad_double as an accumulator: values and exact products (TwoProduct) of doubles.
template <>
struct accumulator_traits<quad_double> {
  using value_type = quad_double;
  KOKKOS_INLINE_FUNCTION static quad_double zero() { return {}; }
  template <class V>
  KOKKOS_INLINE_FUNCTION static void add(quad_double& acc, const V& v) {
    if constexpr (std::is_same<V, quad_double>::value) {
      acc += v;
    } else {
      acc += static_cast<double>(v);
    }
  }
  template <class A, class B>
  KOKKOS_INLINE_FUNCTION static void add_product(quad_double& acc, const A& a, const B& b) {
    if constexpr (std::is_same<A, quad_double>::value || std::is_same<B, quad_double>::value) {
      acc += quad_double(a) * quad_double(b);
    } else {
      const double da = static_cast<double>(a), db = static_cast<double>(b);
      double t[6] = {acc.x[0], acc.x[1], acc.x[2], acc.x[3], 0, 0};
      eft::two_prod(da, db, t[4], t[5]);
      acc = quad_double::from_terms(t, 6, acc.x[0] + t[4]);
    }
  }
  KOKKOS_INLINE_FUNCTION static void join(quad_double& acc, const quad_double& other) {
    acc += other;
  }
  KOKKOS_INLINE_FUNCTION static quad_double result(const quad_double& acc) { return acc; }
  static constexpr bool is_plain = false;
};

template <>
struct accumulator_name<quad_double> {
  static constexpr const char* get() { return "qd"; }
};

/// A kacc::View may compute in quad_double.
template <>
struct is_arithmetic_type<quad_double> : std::true_type {};

/// Conversions to and from quad_double (kacc::convert, and views that store it:
/// StoredAs<quad_double>, 32 bytes per entry), and its name in kernel labels.
template <>
struct format_traits<quad_double> : detail::cast_format_traits<quad_double> {
  KOKKOS_INLINE_FUNCTION static constexpr double max_value() { return DBL_MAX; }
  static constexpr const char* name() { return "qd"; }
};

}  // namespace kacc

namespace Kokkos {
/// Lets kacc::quad_double be the value type of Kokkos::Sum reductions.
template <>
struct reduction_identity<kacc::quad_double> {
  KOKKOS_FORCEINLINE_FUNCTION static kacc::quad_double sum() { return {}; }
};
}  // namespace Kokkos
