#pragma once
// Test and harness support for the BLAS kernels: random data, views of any format filled
// from fp64 data, the values as stored, a host LU with partial pivoting, and exact (MPFR)
// references: dot products, matrix-vector products and triangular solves.
#include <kacc/core/view_algorithms.hpp>
#include <kacc_testing/exact.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kacc_blas_ref {

enum class distribution { uniform, normal };
inline const char* name(distribution d) {
  return d == distribution::uniform ? "uniform" : "normal";
}

/// n values, uniform in [-1, 1] or normal(0, 1), from a fixed seed.
inline std::vector<double> random_values(std::size_t n, std::uint64_t seed,
                                         distribution d = distribution::uniform) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<double> v(n);
  for (auto& e : v) e = d == distribution::uniform ? u(gen) : g(gen);
  return v;
}

/// A view V (plain or kacc, any format and layout) holding `values` (row-major for rank 2).
template <class V>
V make_vector(const std::vector<double>& values) {
  Kokkos::View<double*, Kokkos::HostSpace> h("h", values.size());
  for (std::size_t i = 0; i < values.size(); ++i) h(i) = values[i];
  V v("v", values.size());
  kacc::deep_copy(v, h);
  return v;
}
template <class V>
V make_matrix(const std::vector<double>& rowmajor, std::size_t m, std::size_t n) {
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> h("h", m, n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) h(i, j) = rowmajor[i * n + j];
  V v("A", m, n);
  kacc::deep_copy(v, h);
  return v;
}

/// The values a view holds, as fp64 (row-major for rank 2).
template <class V>
std::vector<double> stored(const V& v) {
  std::vector<double> out;
  if constexpr (V::rank == 1) {
    Kokkos::View<double*, Kokkos::HostSpace> h("h", v.extent(0));
    kacc::deep_copy(h, v);
    out.assign(h.data(), h.data() + h.extent(0));
  } else {
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> h("h", v.extent(0), v.extent(1));
    kacc::deep_copy(h, v);
    out.assign(h.data(), h.data() + h.size());
  }
  return out;
}

/// P A = L U with partial pivoting of the row-major n x n matrix a (blocked, the trailing
/// update in parallel on the host). Returns L (unit lower, diagonal stored as 1) and U,
/// row-major, zeros elsewhere.
inline void lu_factors(std::vector<double> a, std::size_t n, std::vector<double>& L,
                       std::vector<double>& U) {
  constexpr std::size_t nb = 48;
  double* A = a.data();
  for (std::size_t k0 = 0; k0 < n; k0 += nb) {
    const std::size_t k1 = std::min(n, k0 + nb);
    for (std::size_t k = k0; k < k1; ++k) {  // panel, with whole-row swaps
      std::size_t p = k;
      for (std::size_t i = k + 1; i < n; ++i)
        if (std::fabs(A[i * n + k]) > std::fabs(A[p * n + k])) p = i;
      if (p != k)
        for (std::size_t j = 0; j < n; ++j) std::swap(A[k * n + j], A[p * n + j]);
      const double pivot = A[k * n + k];
      for (std::size_t i = k + 1; i < n; ++i) {
        const double l = A[i * n + k] /= pivot;
        for (std::size_t j = k + 1; j < k1; ++j) A[i * n + j] -= l * A[k * n + j];
      }
    }
    for (std::size_t k = k0; k < k1; ++k)  // U12 = L11^{-1} A12
      for (std::size_t i = k + 1; i < k1; ++i) {
        const double l = A[i * n + k];
        for (std::size_t j = k1; j < n; ++j) A[i * n + j] -= l * A[k * n + j];
      }
    Kokkos::parallel_for(  // A22 -= L21 U12
        "kacc_blas_ref::lu_update", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(k1, n),
        [=](std::size_t i) {
          double* ri = A + i * n;
          std::size_t k = k0;
          for (; k + 4 <= k1; k += 4) {  // four rows of U12 per pass over row i
            const double l0 = ri[k], l1 = ri[k + 1], l2 = ri[k + 2], l3 = ri[k + 3];
            const double *r0 = A + k * n, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
            for (std::size_t j = k1; j < n; ++j)
              ri[j] -= (l0 * r0[j] + l1 * r1[j]) + (l2 * r2[j] + l3 * r3[j]);
          }
          for (; k < k1; ++k) {
            const double l = ri[k];
            const double* rk = A + k * n;
            for (std::size_t j = k1; j < n; ++j) ri[j] -= l * rk[j];
          }
        });
    Kokkos::fence();
  }
  L.assign(n * n, 0.0);
  U.assign(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (j < i) L[i * n + j] = A[i * n + j];
      if (j == i) L[i * n + j] = 1.0;
      if (j >= i) U[i * n + j] = A[i * n + j];
    }
}

/// op(A) of a row-major m x n matrix, row-major.
inline std::vector<double> op(const std::vector<double>& a, std::size_t m, std::size_t n,
                              bool trans) {
  if (!trans) return a;
  std::vector<double> t(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) t[j * m + i] = a[i * n + j];
  return t;
}

/// Exact c_i + M x for a row-major m x n matrix M, rounded to fp64; also |M||x| per row.
inline std::vector<double> exact_matvec(const std::vector<double>& M, std::size_t m, std::size_t n,
                                        const std::vector<double>& x,
                                        const std::vector<double>& c = {},
                                        std::vector<double>* abs_out = nullptr) {
  std::vector<double> y(m);
  if (abs_out) abs_out->assign(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    y[i] = kacc_testing::exact_dot(n, &M[i * n], x.data(), c.empty() ? 0.0 : c[i]).rounded();
    if (abs_out)
      for (std::size_t k = 0; k < n; ++k) (*abs_out)[i] += std::fabs(M[i * n + k] * x[k]);
  }
  return y;
}

/// The solution of the triangular row-major system T x = b by substitution in MPFR with
/// `bits` bits (lower or upper, T's diagonal as given), rounded to fp64.
inline std::vector<double> exact_trsv(const std::vector<double>& T, std::size_t n, bool lower,
                                      const std::vector<double>& b, mpfr_prec_t bits = 160) {
  // exact_value, not a vector of mpfr_t: mpfr_t is an array type, which nvcc refuses to
  // value-initialise in std::vector.
  std::vector<kacc_testing::exact_value> x(n, kacc_testing::exact_value(bits));
  mpfr_t s, t;
  mpfr_init2(s, bits);
  mpfr_init2(t, bits);
  for (std::size_t q = 0; q < n; ++q) {
    const std::size_t i = lower ? q : n - 1 - q;
    mpfr_set_d(s, b[i], MPFR_RNDN);
    const std::size_t k0 = lower ? 0 : i + 1, k1 = lower ? i : n;
    for (std::size_t k = k0; k < k1; ++k) {
      mpfr_mul_d(t, x[k].get(), T[i * n + k], MPFR_RNDN);
      mpfr_sub(s, s, t, MPFR_RNDN);
    }
    mpfr_div_d(x[i].get(), s, T[i * n + i], MPFR_RNDN);
  }
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = x[i].rounded();
  mpfr_clear(s);
  mpfr_clear(t);
  return out;
}

/// sum |a - ref| / sum |ref|.
inline double rel_error_1norm(const std::vector<double>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::fabs(a[i] - ref[i]);
    den += std::fabs(ref[i]);
  }
  return num / den;
}

/// The unit roundoff of storage format S (double, float, kacc::fp16, kacc::bf16).
template <class S>
constexpr double unit_roundoff() {
  if constexpr (std::is_same<S, double>::value) {
    return 0x1p-53;
  } else if constexpr (std::is_same<S, float>::value) {
    return 0x1p-24;
  } else if constexpr (std::is_same<S, kacc::fp16>::value) {
    return 0x1p-11;
  } else {
    static_assert(std::is_same<S, kacc::bf16>::value, "unit_roundoff: a format it knows");
    return 0x1p-8;
  }
}

/// gamma_n = n u / (1 - n u) for unit roundoff u.
inline double gamma(std::size_t n, double u) {
  return n * u / (1 - n * u);
}

}  // namespace kacc_blas_ref
