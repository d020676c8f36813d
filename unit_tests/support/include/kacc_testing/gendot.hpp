#pragma once
// Ill-conditioned dot products with a prescribed condition number: Ogita, Rump and Oishi,
// "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005, Algorithm 6.1 (GenDot).
// The second half of y cancels the running exact dot product, so cond(x^T y) =
// 2 |x|^T |y| / |x^T y| comes out near `cond`.
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kacc_testing {

/// A vector x of length n >= 6 and the m x n row-major matrix Y whose every row y has a
/// dot product x^T y of condition number about `cond` (the same exponent pattern, fresh
/// random digits per row, one column permutation for all).
inline void gen_dot_rows(std::size_t m, std::size_t n, double cond, std::uint64_t seed,
                         std::vector<double>& x, std::vector<double>& Y) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double b = std::log2(cond);
  const std::size_t n2 = n / 2, rest = n - n2;
  std::vector<int> e(n);
  for (std::size_t i = 0; i < n2; ++i) e[i] = static_cast<int>(std::lround(unit(gen) * b / 2));
  e[0] = static_cast<int>(std::lround(b / 2)) + 1;
  e[n2 - 1] = 0;
  for (std::size_t i = n2; i < n; ++i) {
    const double t = rest > 1 ? static_cast<double>(i - n2) / static_cast<double>(rest - 1) : 1.0;
    e[i] = static_cast<int>(std::lround(b / 2 * (1 - t)));
  }
  x.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) x[i] = std::ldexp(2 * unit(gen) - 1, e[i]);
  Y.assign(m * n, 0.0);
  // The running sum of products, exact for condition numbers up to about 2^600.
  mpfr_t sum, xi, yi;
  mpfr_init2(sum, 1400);
  mpfr_init2(xi, 53);
  mpfr_init2(yi, 53);
  for (std::size_t r = 0; r < m; ++r) {
    double* y = &Y[r * n];
    mpfr_set_zero(sum, 1);
    for (std::size_t i = 0; i < n; ++i) {
      const double v = std::ldexp(2 * unit(gen) - 1, e[i]);
      // The second half cancels the sum so far, leaving a small remainder.
      y[i] = i < n2 ? v : (v - mpfr_get_d(sum, MPFR_RNDN)) / x[i];
      mpfr_set_d(xi, x[i], MPFR_RNDN);
      mpfr_set_d(yi, y[i], MPFR_RNDN);
      mpfr_fma(sum, xi, yi, sum, MPFR_RNDN);
    }
  }
  mpfr_clear(sum);
  mpfr_clear(xi);
  mpfr_clear(yi);
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), gen);
  const std::vector<double> x0 = x, Y0 = Y;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = x0[order[i]];
    for (std::size_t r = 0; r < m; ++r) Y[r * n + i] = Y0[r * n + order[i]];
  }
}

/// x and y of length n >= 6 whose dot product has condition number about `cond`.
inline void gen_dot(std::size_t n, double cond, std::uint64_t seed, std::vector<double>& x,
                    std::vector<double>& y) {
  gen_dot_rows(1, n, cond, seed, x, y);
}

/// Values whose exponents span the whole double range: normal numbers from 2^-1022 to
/// near DBL_MAX, subnormals and signed zeros, with random signs.
inline std::vector<double> wide_range_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> unit(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-1080, 1023);
  std::uniform_int_distribution<int> kind(0, 15);
  std::vector<double> v(n);
  for (auto& e : v) {
    const int k = kind(gen);
    if (k == 0) {
      e = (gen() & 1) ? -0.0 : 0.0;
    } else if (k == 1) {
      e = std::ldexp(static_cast<double>(gen() % (std::uint64_t{1} << 52)), -1074);  // subnormal
    } else {
      e = std::ldexp(unit(gen), exponent(gen));
    }
    if (gen() & 1) e = -e;
  }
  return v;
}

}  // namespace kacc_testing
