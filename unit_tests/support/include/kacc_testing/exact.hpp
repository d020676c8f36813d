#pragma once
// Exact references with MPFR: sums of products of doubles computed with as many bits as
// the operands' exponent range needs, so the result is exact, not merely accurate.
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace kacc_testing {

/// An MPFR number with value semantics.
class exact_value {
 public:
  explicit exact_value(mpfr_prec_t bits = 64) {
    mpfr_init2(v_, bits);
    mpfr_set_zero(v_, 1);
  }
  exact_value(const exact_value& o) {
    mpfr_init2(v_, mpfr_get_prec(o.v_));
    mpfr_set(v_, o.v_, MPFR_RNDN);
  }
  exact_value& operator=(const exact_value& o) {
    if (this != &o) {
      mpfr_set_prec(v_, mpfr_get_prec(o.v_));
      mpfr_set(v_, o.v_, MPFR_RNDN);
    }
    return *this;
  }
  ~exact_value() { mpfr_clear(v_); }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  /// Correctly rounded to double.
  double rounded() const { return mpfr_get_d(v_, MPFR_RNDN); }
  /// |computed - this|, rounded up: never understates an error.
  double abs_error(double computed) const {
    mpfr_t d;
    mpfr_init2(d, mpfr_get_prec(v_) + 64);
    mpfr_sub_d(d, v_, computed, MPFR_RNDN);  // exact: enough bits
    mpfr_abs(d, d, MPFR_RNDN);
    const double e = mpfr_get_d(d, MPFR_RNDU);
    mpfr_clear(d);
    return e;
  }

 private:
  mpfr_t v_;
};

/// Bits that make c + sum a_k*b_k exact, from the operands' exponents.
inline mpfr_prec_t exact_bits(std::size_t n, const double* a, const double* b, double c) {
  int hi = std::numeric_limits<int>::min(), lo = std::numeric_limits<int>::max();
  auto account = [&](int e_high, int e_low) {
    hi = std::max(hi, e_high);
    lo = std::min(lo, e_low);
  };
  for (std::size_t k = 0; k < n; ++k) {
    if (a[k] == 0 || b[k] == 0 || !std::isfinite(a[k]) || !std::isfinite(b[k])) continue;
    int ea, eb;
    std::frexp(a[k], &ea);
    std::frexp(b[k], &eb);
    account(ea + eb, ea + eb - 106);
  }
  if (c != 0 && std::isfinite(c)) {
    int ec;
    std::frexp(c, &ec);
    account(ec, ec - 53);
  }
  if (hi < lo) return 64;
  int log2n = 1;
  while ((std::size_t{1} << log2n) < n + 1) ++log2n;
  return static_cast<mpfr_prec_t>(hi - lo + log2n + 8);
}

/// Exact c + sum_k a[k] * b[k].
inline exact_value exact_dot(std::size_t n, const double* a, const double* b, double c = 0) {
  exact_value acc(exact_bits(n, a, b, c));
  mpfr_set_d(acc.get(), c, MPFR_RNDN);
  mpfr_t ta, tb;
  mpfr_init2(ta, 53);
  mpfr_init2(tb, 53);
  for (std::size_t k = 0; k < n; ++k) {
    mpfr_set_d(ta, a[k], MPFR_RNDN);
    mpfr_set_d(tb, b[k], MPFR_RNDN);
    mpfr_fma(acc.get(), ta, tb, acc.get(), MPFR_RNDN);  // exact at this precision
  }
  mpfr_clear(ta);
  mpfr_clear(tb);
  return acc;
}

}  // namespace kacc_testing
