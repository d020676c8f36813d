#pragma once
/// @file
/// kacc::solve::gesv_ir(exec, A, b, x, options): solves A x = b to fp64 accuracy from LU
/// factors in a lower precision (fp32, fp16, bf16), refined by classic iterative
/// refinement or GMRES-IR (Haidar, Tomov, Dongarra and Higham; Carson and Higham), with
/// an honest report of how it ended and a fallback to fp64 factors (as LAPACK's dsgesv).

#include <kacc/blas/axpy.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/core/double_double.hpp>
#include <kacc/solve/gesv_ir_engine.hpp>
#include <kacc/solve/gesv_ir_gmres.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kacc {
namespace solve {
namespace detail {

[[noreturn]] inline void fail(const std::string& message) {
  throw std::invalid_argument("kacc::solve::gesv_ir: " + message);
}

/// The largest finite value of a factor format.
inline double largest_value(factor_format f) {
  switch (f) {
    case factor_format::fp64:
      return DBL_MAX;
    case factor_format::fp32:
      return FLT_MAX;
    case factor_format::fp16:
      return 65504.0;
    case factor_format::bf16:
      return 0x1.fep127;
  }
  return DBL_MAX;
}

/// The power of two nearest to x (x > 0, finite), rounding on a log scale.
inline double nearest_power_of_two(double x) {
  int e;
  const double f = std::frexp(x, &e);  // x = f 2^e, f in [0.5, 1)
  return std::ldexp(1.0, f >= 0.70710678118654752 ? e : e - 1);
}

/// The largest power of two <= x (x > 0, finite).
inline double power_of_two_below(double x) {
  int e;
  std::frexp(x, &e);
  return std::ldexp(1.0, e - 1);
}

}  // namespace detail

namespace Impl {

/// |a| as a double, with NaN mapped to +inf so that the row sums and row and column maxima
/// below flag it (Kokkos::Max drops NaN).
KOKKOS_INLINE_FUNCTION double magnitude(const double a) {
  return a == a ? (a < 0 ? -a : a) : HUGE_VAL;
}

/// ||v||_inf of a rank-1 view: blas's maximum, NaN when v holds a NaN.
template <class Exec, class V>
double norm_inf(const Exec& exec, const V& v) {
  return blas::Impl::max_magnitude<double>("kacc::solve::norm_inf", exec, v);
}

/// ||A||_inf (largest row sum of magnitudes); +inf when A holds a NaN or an infinity. On
/// the host each thread sums a block of rows column by column, so a column-major A is read
/// in consecutive runs (a row at a time, it would be one cache line per entry); GPU
/// threads take a row each, consecutive threads reading consecutive entries.
template <class Exec, class AV>
double matrix_norm_inf(const Exec& exec, const AV& A) {
  constexpr index_type rows_per_thread =
      kacc::Impl::default_shape_v<Exec> == kacc::Impl::shape::host ? 16 : 1;
  const index_type m = A.extent(0), n = A.extent(1);
  double most = 0;
  Kokkos::parallel_reduce(
      "kacc::solve::matrix_norm_inf",
      kacc::Impl::range(exec, 0, (m + rows_per_thread - 1) / rows_per_thread),
      KOKKOS_LAMBDA(const index_type block, double& largest) {
        const index_type i0 = block * rows_per_thread;
        const index_type rows = m - i0 < rows_per_thread ? m - i0 : rows_per_thread;
        double sums[rows_per_thread] = {};
        for (index_type j = 0; j < n; ++j)
          for (index_type r = 0; r < rows; ++r) sums[r] += magnitude(convert<double>(A(i0 + r, j)));
        for (index_type r = 0; r < rows; ++r)
          if (sums[r] > largest) largest = sums[r];
      },
      Kokkos::Max<double>(most));
  return most;
}

/// max |W(i,j)| of a contiguous plain matrix, NaN when W holds a NaN: norm_inf of its
/// entries as one vector.
template <class Exec, class W>
double max_abs(const Exec& exec, const W& w) {
  const Kokkos::View<const double*, typename W::memory_space, Kokkos::MemoryUnmanaged> entries(
      w.data(), w.size());
  return norm_inf(exec, entries);
}

/// Higham, Pranesh and Zounon's scaling of W in place: W <- mu R W S with R and S diagonal
/// (rs, cs) from Ruiz equilibration (each step divides rows and columns by the square
/// root of their largest magnitude, rounded to a power of two, so every scaling is exact),
/// then mu, a power of two that brings max |W| to at most `target`. Returns mu.
template <class Exec, class W, class Vec>
double scale_into_range(const Exec& exec, const W& w, const Vec& rs, const Vec& cs, double target) {
  const index_type n = w.extent(0);
  Kokkos::deep_copy(exec, rs, 1.0);
  Kokkos::deep_copy(exec, cs, 1.0);
  Vec rf("kacc::solve::row_factors", n), cf("kacc::solve::column_factors", n);
  auto rf_h = Kokkos::create_mirror_view(rf);
  auto cf_h = Kokkos::create_mirror_view(cf);
  for (int step = 0; step < 20; ++step) {
    Kokkos::parallel_for(
        "kacc::solve::row_max", kacc::Impl::range(exec, 0, n), KOKKOS_LAMBDA(const index_type i) {
          double r = 0, c = 0;
          for (index_type j = 0; j < n; ++j) {
            const double a = magnitude(w(i, j)), b = magnitude(w(j, i));
            r = a > r ? a : r;
            c = b > c ? b : c;
          }
          rf(i) = r;
          cf(i) = c;
        });
    Kokkos::deep_copy(exec, rf_h, rf);
    Kokkos::deep_copy(exec, cf_h, cf);
    exec.fence();
    bool changed = false;
    for (index_type i = 0; i < n; ++i) {
      for (double* f : {&rf_h(i), &cf_h(i)}) {
        *f = *f > 0 && std::isfinite(*f) ? detail::nearest_power_of_two(1 / std::sqrt(*f)) : 1.0;
        changed = changed || *f != 1.0;
      }
    }
    if (!changed) break;
    Kokkos::deep_copy(exec, rf, rf_h);
    Kokkos::deep_copy(exec, cf, cf_h);
    Kokkos::parallel_for(
        "kacc::solve::equilibrate", kacc::Impl::range(exec, 0, n * n),
        KOKKOS_LAMBDA(const index_type e) {
          const index_type i = e % n, j = e / n;
          w(i, j) *= rf(i) * cf(j);
          if (j == 0) rs(i) *= rf(i);
          if (i == 0) cs(j) *= cf(j);
        });
  }
  const double most = max_abs(exec, w);
  if (!(most > 0) || !std::isfinite(most)) return 1.0;
  const double mu = detail::power_of_two_below(target / most);
  Kokkos::parallel_for(
      "kacc::solve::multiply_into_range", kacc::Impl::range(exec, 0, n * n),
      KOKKOS_LAMBDA(const index_type e) { w(e % n, e / n) *= mu; });
  return mu;
}

/// v(i) *= f * s(i).
template <class Exec, class Vec>
void scale_entries(const Exec& exec, const Vec& v, double f, const Vec& s) {
  Kokkos::parallel_for(
      "kacc::solve::gesv_ir_scale", kacc::Impl::range(exec, 0, v.extent(0)),
      KOKKOS_LAMBDA(const index_type i) { v(i) *= f * s(i); });
}

/// w <- f w for a square w.
template <class Exec, class W>
void scale_matrix(const Exec& exec, const W& w, double f) {
  const index_type n = w.extent(0);
  Kokkos::parallel_for(
      "kacc::solve::gesv_ir_rescale", kacc::Impl::range(exec, 0, n * n),
      KOKKOS_LAMBDA(const index_type e) { w(e % n, e / n) *= f; });
}

}  // namespace Impl

/// Solves A x = b (A n x n, b and x of extent n; any storage formats, fp64 arithmetic)
/// by LU factors in options.factors, refined to the tolerance ||b - A x||_inf <=
/// tolerance * ||x||_inf * ||A||_inf (default: dsgesv's eps * sqrt(n)). Each refinement
/// step computes the residual in options.residual and a correction: one solve with the
/// factors (classic) or GMRES on A preconditioned by them (gmres). 16-bit factors are of
/// the scaled matrix mu R A S (see scaling), so they neither overflow nor lose small
/// entries to underflow; fp16 factors that overflow all the same (element growth) are
/// computed again with mu divided by 256, at most twice. The low-precision solve is given up, with
/// the reason reported, when the scaled A overflows the factor format, the factorisation finds a
/// zero pivot or non-finite factors, the iterate turns NaN, max_outer steps pass, or the residual
/// stagnates; then, with options.fallback (the default), x is solved again with fp64
/// factors (outcome fell_back), otherwise the last iterate is returned (not_converged).
/// NaN or infinity in A or b: outcome failed (nonfinite_input), x set to NaN. A singular
/// in fp64 too: outcome failed (singular), x set to NaN. "converged" is reported only
/// when the tolerance was met. A and b are only read. The engine factors and solves (see
/// kacc_lu, the default): factor(exec, S, format) must leave S unchanged (S may be A
/// itself), and solve must apply the factors in fp64 arithmetic (GMRES-IR stagnates when
/// its preconditioner is applied in the factors' precision). Throws std::invalid_argument
/// (naming the argument) for a non-square A, b or x of another extent, x sharing memory with
/// A or b, or options out of range.
template <class Exec, class AV, class BV, class XV, class Engine,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<BV> && is_view_v<XV>>>
ir_status gesv_ir(const Exec& exec, const AV& A, const BV& b, const XV& x,
                  const ir_options& options, Engine& engine) {
  static_assert(AV::rank == 2, "kacc::solve::gesv_ir: A must be rank 2");
  static_assert(BV::rank == 1 && XV::rank == 1, "kacc::solve::gesv_ir: b and x must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, AV, "kacc::solve::gesv_ir", "A");
  KACC_REQUIRE_ACCESSIBLE(Exec, BV, "kacc::solve::gesv_ir", "b");
  KACC_REQUIRE_ACCESSIBLE(Exec, XV, "kacc::solve::gesv_ir", "x");
  using kacc::Impl::extents_of;
  const index_type n = A.extent(0);
  if (static_cast<index_type>(A.extent(1)) != n)
    detail::fail("A must be square but has extents " + extents_of(A));
  if (static_cast<index_type>(b.extent(0)) != n)
    detail::fail("A has extents " + extents_of(A) + " but b has extents " + extents_of(b));
  if (static_cast<index_type>(x.extent(0)) != n)
    detail::fail("A has extents " + extents_of(A) + " but x has extents " + extents_of(x));
  if (kacc::Impl::overlaps(x, A)) detail::fail("x aliases A");
  if (kacc::Impl::overlaps(x, b)) detail::fail("x aliases b");
  if (options.max_outer < 0 || options.stagnation_steps < 1 || options.gmres_restart < 1 ||
      options.gmres_max_inner < 1 || !(options.tolerance >= 0) || !(options.gmres_tolerance > 0))
    detail::fail(
        "options out of range (max_outer >= 0, stagnation_steps >= 1, gmres_restart "
        ">= 1, gmres_max_inner >= 1, tolerance >= 0, gmres_tolerance > 0)");
  ir_status status;
  if (n == 0) {
    status.outcome = ir_outcome::converged;
    return status;
  }
  using memory_space = typename Exec::memory_space;
  using vector_type = Kokkos::View<double*, memory_space>;
  using matrix_type = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double norm_a = Impl::matrix_norm_inf(exec, A), norm_b = Impl::norm_inf(exec, b);
  auto finish = [&](const vector_type& xw, double rn) {
    const double xn = Impl::norm_inf(exec, xw);
    status.backward_error = rn / (norm_a * xn + norm_b);
    if (norm_a * xn + norm_b == 0) status.backward_error = rn == 0 ? 0 : nan;
    kacc::deep_copy(exec, x, xw);
    exec.fence();
    return status;
  };
  vector_type xw("kacc::solve::gesv_ir_x", n), bw("kacc::solve::gesv_ir_b", n),
      r("kacc::solve::gesv_ir_r", n), d("kacc::solve::gesv_ir_d", n),
      xk("kacc::solve::gesv_ir_kept", n);
  if (!std::isfinite(norm_a) || !std::isfinite(norm_b)) {
    status.reason = ir_reason::nonfinite_input;
    Kokkos::deep_copy(exec, xw, nan);
    return finish(xw, nan);
  }
  kacc::deep_copy(exec, bw, b);
  // r = b - A xw in the chosen precision; returns ||r||_inf.
  auto residual = [&]() {
    Kokkos::deep_copy(exec, r, bw);
    if (options.residual == residual_precision::double_double) {
      blas::gemv<double_double, double_double>(exec, "N", double_double(-1.0), A, xw,
                                               double_double(1.0), r);
    } else {
      blas::gemv<double>(exec, "N", -1.0, A, xw, 1.0, r);
    }
    return Impl::norm_inf(exec, r);
  };
  const double tol = options.tolerance > 0 ? options.tolerance : 0x1p-53 * std::sqrt(double(n));
  const factor_format format = options.factors;
  const bool sixteen = format == factor_format::fp16 || format == factor_format::bf16;
  const bool scaled =
      options.scale == scaling::always || (options.scale == scaling::automatic && sixteen);
  // The matrix the engine factors: A itself when it is a contiguous fp64 matrix of the
  // engine's type and is not scaled (an n^2 copy and its page faults saved), else a copy.
  matrix_type W;
  if constexpr (std::is_convertible<AV, matrix_type>::value) {
    if (!scaled && A.span_is_contiguous()) W = A;
  }
  if (!W.data()) {
    W = matrix_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::solve::gesv_ir_A"), n,
                    n);
    kacc::deep_copy(exec, W, A);
  }
  vector_type rs("kacc::solve::gesv_ir_row_scales", n), cs("kacc::solve::gesv_ir_column_scales", n);
  double mu = 1;
  // fp16's headroom for the LU's element growth: HPZ's 10x, or n^(2/3), partial pivoting's
  // average growth on random matrices (Trefethen and Schreiber), where that is larger.
  const double fp16_headroom = std::max(10.0, std::cbrt(double(n) * double(n)));
  if (scaled)
    mu = Impl::scale_into_range(exec, W, rs, cs,
                                format == factor_format::fp16 ? 65504.0 / fp16_headroom : 1.0);
  // v <- A^{-1} v from the factors of mu R A S: A^{-1} = S (mu R A S)^{-1} mu R.
  auto apply_m = [&](const vector_type& v) {
    if (scaled) Impl::scale_entries(exec, v, mu, rs);
    engine.solve(exec, v);
    if (scaled) Impl::scale_entries(exec, v, 1.0, cs);
  };
  auto apply_a = [&](const vector_type& v, const vector_type& w) {
    blas::gemv<double>(exec, "N", 1.0, A, v, 0.0, w);
  };

  double rn = nan;
  // The low-precision solve: returns why it was given up, or none.
  auto refine = [&]() {
    // ||A||_inf bounds every |a_ij|, so an unscaled A that it shows to fit needs no pass
    // over its entries.
    const double largest = detail::largest_value(format);
    if (!(!scaled && norm_a <= largest) && !(Impl::max_abs(exec, W) <= largest))
      return ir_reason::narrowing_overflow;
    // Scaled fp16 factors overflow where the LU's element growth exceeds the scaling's
    // headroom: the scaled matrix is then divided by 256 (exactly) and factored again, at
    // most twice.
    for (int retry = 0;; ++retry) {
      if (engine.factor(exec, W, format) != 0) return ir_reason::factorization_failed;
      Kokkos::deep_copy(exec, xw, bw);
      apply_m(xw);
      if (std::isfinite(Impl::norm_inf(exec, xw))) break;
      if (!scaled || format != factor_format::fp16 || retry == 2)
        return ir_reason::factorization_failed;
      Impl::scale_matrix(exec, W, 0x1p-8);
      mu *= 0x1p-8;
    }
    double best = std::numeric_limits<double>::infinity(), kept = 0;
    int stale = 0;
    bool met = false, inner_exhausted = false;
    for (;;) {
      rn = residual();
      const double xn = Impl::norm_inf(exec, xw);
      status.residual_history.push_back(rn);
      // Polishing ends, as LAPACK's dgerfs does, once the backward error is at the unit
      // roundoff, that of rounding A and b to fp64 themselves.
      const bool at_roundoff = rn <= 0x1p-53 * (norm_a * xn + norm_b);
      if (met) {
        // Polishing: keep a step only if it met the tolerance and halved the residual.
        if (!(rn < 0.5 * kept && rn <= tol * xn * norm_a)) {
          Kokkos::deep_copy(exec, xw, xk);
          rn = kept;
          return ir_reason::none;
        }
        if (at_roundoff) return ir_reason::none;
        kept = rn;
        Kokkos::deep_copy(exec, xk, xw);
      } else {
        if (!std::isfinite(rn) || !std::isfinite(xn)) return ir_reason::not_a_number;
        if (rn <= tol * xn * norm_a) {
          if (!options.polish || at_roundoff) return ir_reason::none;
          met = true;
          kept = rn;
          Kokkos::deep_copy(exec, xk, xw);
        }
      }
      if (status.outer_iterations >= options.max_outer)
        return met ? ir_reason::none : ir_reason::iteration_cap;
      if (!met) {
        if (rn <= 0.5 * best) {
          stale = 0;
        } else if (++stale >= options.stagnation_steps || inner_exhausted) {
          return ir_reason::stagnation;
        }
        best = rn < best ? rn : best;
      }
      if (options.method == refinement::gmres) {
        const int inner =
            Impl::gmres_correction(exec, r, d, options.gmres_restart, options.gmres_tolerance,
                                   options.gmres_max_inner, apply_a, apply_m);
        status.inner_iterations += inner;
        inner_exhausted = inner >= options.gmres_max_inner;
      } else {
        Kokkos::deep_copy(exec, d, r);
        apply_m(d);
      }
      blas::axpy(exec, 1.0, d, xw);
      ++status.outer_iterations;
    }
  };
  status.reason = refine();
  if (status.reason == ir_reason::none) {
    status.outcome = ir_outcome::converged;
    return finish(xw, rn);
  }
  if (!options.fallback) {
    status.outcome = ir_outcome::not_converged;
    return finish(xw, rn);
  }
  if (scaled) kacc::deep_copy(exec, W, A);
  if (engine.factor(exec, W, factor_format::fp64) != 0) {
    status.outcome = ir_outcome::failed;
    status.reason = ir_reason::singular;
    Kokkos::deep_copy(exec, xw, nan);
    return finish(xw, nan);
  }
  Kokkos::deep_copy(exec, xw, bw);
  engine.solve(exec, xw);
  rn = residual();
  if (!std::isfinite(rn) || !std::isfinite(Impl::norm_inf(exec, xw))) {
    status.outcome = ir_outcome::failed;
    status.reason = ir_reason::not_a_number;
    return finish(xw, rn);
  }
  status.outcome = ir_outcome::fell_back;
  return finish(xw, rn);
}

/// gesv_ir with kacc's portable LU engine (kacc_lu).
template <class Exec, class AV, class BV, class XV,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<BV> && is_view_v<XV>>>
ir_status gesv_ir(const Exec& exec, const AV& A, const BV& b, const XV& x,
                  const ir_options& options = {}) {
  kacc_lu<Exec> engine;
  return gesv_ir(exec, A, b, x, options, engine);
}

}  // namespace solve
}  // namespace kacc
