#pragma once
// Independent references for the core format tests: a decoder written from the IEEE 754
// definition with std::ldexp, and correct rounding of a double into any IEEE-like binary
// format by MPFR (precision, exponent range and subnormals set the way MPFR documents
// for emulating a narrower format).
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace core_test {

/// Bits of a double, so results can be compared including the sign of zero.
inline std::uint64_t bits_of(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

/// Same value, same sign of zero, or both NaN.
inline bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return bits_of(a) == bits_of(b);
}

/// The value of a format with E exponent and M mantissa bits, from the definition:
/// (-1)^s * 2^(e - bias) * 1.m for normal numbers, (-1)^s * 2^(1 - bias) * 0.m for subnormal.
template <int E, int M>
double decode_by_definition(std::uint64_t bits) {
  const int bias = (1 << (E - 1)) - 1;
  const bool negative = (bits >> (E + M)) & 1;
  const std::uint64_t e = (bits >> M) & ((std::uint64_t{1} << E) - 1);
  const std::uint64_t m = bits & ((std::uint64_t{1} << M) - 1);
  double magnitude;
  if (e == (std::uint64_t{1} << E) - 1) {
    magnitude =
        m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    magnitude = std::ldexp(static_cast<double>(m), 1 - bias - M);
  } else {
    magnitude = std::ldexp(static_cast<double>(m + (std::uint64_t{1} << M)),
                           static_cast<int>(e) - bias - M);
  }
  return negative ? -magnitude : magnitude;
}

/// `x` rounded to nearest even into the format with E exponent and M mantissa bits, as a
/// double (exact: every such value is a double). MPFR's exponent convention is
/// x = 0.1b... * 2^e, so the largest finite value has e = bias + 1 and the smallest
/// subnormal 2^(1 - bias - M) has e = 2 - bias - M.
template <int E, int M>
double round_by_mpfr(double x) {
  if (std::isnan(x)) return x;
  const int bias = (1 << (E - 1)) - 1;
  const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
  mpfr_set_emin(2 - bias - M);
  mpfr_set_emax(bias + 1);
  mpfr_t r;
  mpfr_init2(r, M + 1);
  int ternary = mpfr_set_d(r, x, MPFR_RNDN);
  ternary = mpfr_check_range(r, ternary, MPFR_RNDN);
  mpfr_subnormalize(r, ternary, MPFR_RNDN);
  const double result = mpfr_get_d(r, MPFR_RNDN);
  mpfr_clear(r);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  return result;
}

}  // namespace core_test
