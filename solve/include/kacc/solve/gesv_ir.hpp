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
#include <vector>

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

/// A column of a rank-2 view (a rank-1 view is its own only column).
template <class V>
auto column_of(const V& v, index_type j) {
  if constexpr (V::rank == 1) {
    return v;
  } else {
    using kacc::subview;
    using Kokkos::subview;
    return subview(v, Kokkos::ALL(), j);
  }
}

/// The work gesv_ir shares between the right-hand sides of one A: the matrix the engine
/// factors (A itself, or a copy, scaled for 16-bit factors), the scaling and the
/// workspace vectors: factor() once, refine() per right-hand side and, for those whose
/// refinement fails, factor_fp64() once and solve_fp64() each, every right-hand side
/// loaded into bw first.
template <class Exec, class AV, class Engine>
class ir_refinement {
 public:
  /// Where the workspace lives.
  using memory_space = typename Exec::memory_space;
  /// The vectors of the workspace.
  using vector_type = Kokkos::View<double*, memory_space>;
  /// The matrix the engine factors.
  using matrix_type = Kokkos::View<double**, Kokkos::LayoutLeft, memory_space>;

  /// Takes A (n x n, ||A||_inf = norm_a, finite) and allocates the workspace.
  ir_refinement(const Exec& exec, const AV& A, double norm_a, const ir_options& options,
                Engine& engine)
      : xw("kacc::solve::gesv_ir_x", A.extent(0)),
        bw("kacc::solve::gesv_ir_b", A.extent(0)),
        exec_(exec),
        A_(A),
        norm_a_(norm_a),
        options_(options),
        engine_(engine),
        n_(A.extent(0)),
        r_("kacc::solve::gesv_ir_r", n_),
        d_("kacc::solve::gesv_ir_d", n_),
        xk_("kacc::solve::gesv_ir_kept", n_),
        rs_("kacc::solve::gesv_ir_row_scales", n_),
        cs_("kacc::solve::gesv_ir_column_scales", n_) {
    const factor_format format = options.factors;
    scaled_ = options.scale == scaling::always ||
              (options.scale == scaling::automatic &&
               (format == factor_format::fp16 || format == factor_format::bf16));
    tolerance_ = options.tolerance > 0 ? options.tolerance : 0x1p-53 * std::sqrt(double(n_));
    // A itself when it is a contiguous fp64 matrix of the engine's type and is not scaled
    // (an n^2 copy and its page faults saved), else a copy.
    if constexpr (std::is_convertible<AV, matrix_type>::value) {
      if (!scaled_ && A.span_is_contiguous()) W_ = A;
    }
    if (!W_.data()) {
      W_ = matrix_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::solve::gesv_ir_A"),
                       n_, n_);
      kacc::deep_copy(exec, W_, A);
    }
    // fp16's headroom for the LU's element growth: HPZ's 10x, or n^(2/3), partial pivoting's
    // average growth on random matrices (Trefethen and Schreiber), where that is larger.
    const double fp16_headroom = std::max(10.0, std::cbrt(double(n_) * double(n_)));
    if (scaled_)
      mu_ = Impl::scale_into_range(exec, W_, rs_, cs_,
                                   format == factor_format::fp16 ? 65504.0 / fp16_headroom : 1.0);
  }

  /// Factors the (scaled) A in options.factors; on success xw = A^{-1} bw from the
  /// factors, the first iterate of bw's refinement. Returns why it failed, or none.
  ir_reason factor() {
    const factor_format format = options_.factors;
    // ||A||_inf bounds every |a_ij|, so an unscaled A that it shows to fit needs no pass
    // over its entries.
    const double largest = detail::largest_value(format);
    if (!(!scaled_ && norm_a_ <= largest) && !(Impl::max_abs(exec_, W_) <= largest))
      return ir_reason::narrowing_overflow;
    // Scaled fp16 factors overflow where the LU's element growth exceeds the scaling's
    // headroom: the scaled matrix is then divided by 256 (exactly) and factored again, at
    // most twice.
    for (int retry = 0;; ++retry) {
      if (engine_.factor(exec_, W_, format) != 0) return ir_reason::factorization_failed;
      Kokkos::deep_copy(exec_, xw, bw);
      apply_m(xw);
      if (std::isfinite(Impl::norm_inf(exec_, xw))) return ir_reason::none;
      if (!scaled_ || format != factor_format::fp16 || retry == 2)
        return ir_reason::factorization_failed;
      Impl::scale_matrix(exec_, W_, 0x1p-8);
      mu_ *= 0x1p-8;
    }
  }

  /// Refines xw towards A^{-1} bw with the low-precision factors (xw = A^{-1} bw from them
  /// unless `started`), recording steps, GMRES iterations and residuals in `status`.
  /// Returns why it was given up, or none; residual_norm() is then that of xw.
  ir_reason refine(double norm_b, bool started, ir_status& status) {
    norm_b_ = norm_b;
    if (!started) {
      Kokkos::deep_copy(exec_, xw, bw);
      apply_m(xw);
    }
    double best = std::numeric_limits<double>::infinity(), kept = 0;
    int stale = 0;
    bool met = false, inner_exhausted = false;
    for (;;) {
      rn_ = residual();
      const double xn = Impl::norm_inf(exec_, xw);
      status.residual_history.push_back(rn_);
      // Polishing ends, as LAPACK's dgerfs does, once the backward error is at the unit
      // roundoff, that of rounding A and b to fp64 themselves.
      const bool at_roundoff = rn_ <= 0x1p-53 * (norm_a_ * xn + norm_b);
      if (met) {
        // Polishing: keep a step only if it met the tolerance and halved the residual.
        if (!(rn_ < 0.5 * kept && rn_ <= tolerance_ * xn * norm_a_)) {
          Kokkos::deep_copy(exec_, xw, xk_);
          rn_ = kept;
          return ir_reason::none;
        }
        if (at_roundoff) return ir_reason::none;
        kept = rn_;
        Kokkos::deep_copy(exec_, xk_, xw);
      } else {
        if (!std::isfinite(rn_) || !std::isfinite(xn)) return ir_reason::not_a_number;
        if (rn_ <= tolerance_ * xn * norm_a_) {
          if (!options_.polish || at_roundoff) return ir_reason::none;
          met = true;
          kept = rn_;
          Kokkos::deep_copy(exec_, xk_, xw);
        }
      }
      if (status.outer_iterations >= options_.max_outer)
        return met ? ir_reason::none : ir_reason::iteration_cap;
      if (!met) {
        if (rn_ <= 0.5 * best) {
          stale = 0;
        } else if (++stale >= options_.stagnation_steps || inner_exhausted) {
          return ir_reason::stagnation;
        }
        best = rn_ < best ? rn_ : best;
      }
      if (options_.method == refinement::gmres) {
        auto apply_a = [this](const vector_type& v, const vector_type& w) {
          blas::gemv<double>(exec_, "N", 1.0, A_, v, 0.0, w);
        };
        auto precondition = [this](const vector_type& v) { apply_m(v); };
        const int inner =
            Impl::gmres_correction(exec_, r_, d_, options_.gmres_restart, options_.gmres_tolerance,
                                   options_.gmres_max_inner, apply_a, precondition);
        status.inner_iterations += inner;
        inner_exhausted = inner >= options_.gmres_max_inner;
      } else {
        Kokkos::deep_copy(exec_, d_, r_);
        apply_m(d_);
      }
      blas::axpy(exec_, 1.0, d_, xw);
      ++status.outer_iterations;
    }
  }

  /// Factors A in fp64 (dgesv's factors; the low-precision ones are gone). Returns getrf's
  /// info.
  index_type factor_fp64() {
    if (scaled_) kacc::deep_copy(exec_, W_, A_);
    scaled_ = false;
    return engine_.factor(exec_, W_, factor_format::fp64);
  }

  /// xw = A^{-1} bw from the fp64 factors of factor_fp64(); its residual norm in
  /// residual_norm().
  void solve_fp64(double norm_b) {
    norm_b_ = norm_b;
    Kokkos::deep_copy(exec_, xw, bw);
    engine_.solve(exec_, xw);
    rn_ = residual();
  }

  /// ||bw - A xw||_inf of the last refine() or solve_fp64().
  double residual_norm() const { return rn_; }

  /// ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf) of xw with residual norm rn, for the
  /// ||b||_inf of the last refine() or solve_fp64().
  double backward_error(double rn) const {
    const double xn = Impl::norm_inf(exec_, xw);
    const double denominator = norm_a_ * xn + norm_b_;
    if (denominator == 0) return rn == 0 ? 0 : std::numeric_limits<double>::quiet_NaN();
    return rn / denominator;
  }

  /// The iterate.
  vector_type xw;
  /// The right-hand side being solved (load it before factor(), refine(), solve_fp64()).
  vector_type bw;

 private:
  /// r = bw - A xw in options.residual's precision; returns ||r||_inf.
  double residual() {
    Kokkos::deep_copy(exec_, r_, bw);
    if (options_.residual == residual_precision::double_double) {
      blas::gemv<double_double, double_double>(exec_, "N", double_double(-1.0), A_, xw,
                                               double_double(1.0), r_);
    } else {
      blas::gemv<double>(exec_, "N", -1.0, A_, xw, 1.0, r_);
    }
    return Impl::norm_inf(exec_, r_);
  }

  /// v <- A^{-1} v from the factors of mu R A S: A^{-1} = S (mu R A S)^{-1} mu R.
  void apply_m(const vector_type& v) {
    if (scaled_) Impl::scale_entries(exec_, v, mu_, rs_);
    engine_.solve(exec_, v);
    if (scaled_) Impl::scale_entries(exec_, v, 1.0, cs_);
  }

  Exec exec_;
  AV A_;
  double norm_a_;
  const ir_options& options_;
  Engine& engine_;
  index_type n_;
  vector_type r_, d_, xk_, rs_, cs_;
  matrix_type W_;
  bool scaled_ = false;
  double mu_ = 1, tolerance_ = 0, norm_b_ = 0, rn_ = 0;
};

/// gesv_ir's argument checks, for b and x of rank 1 or B and X of rank 2.
template <class AV, class BV, class XV>
void check_gesv_ir_arguments(const AV& A, const BV& b, const XV& x, const ir_options& options) {
  using kacc::Impl::extents_of;
  const index_type n = A.extent(0);
  const char* b_name = BV::rank == 1 ? "b" : "B";
  const char* x_name = XV::rank == 1 ? "x" : "X";
  if (static_cast<index_type>(A.extent(1)) != n)
    detail::fail("A must be square but has extents " + extents_of(A));
  if (static_cast<index_type>(b.extent(0)) != n)
    detail::fail("A has extents " + extents_of(A) + " but " + b_name + " has extents " +
                 extents_of(b));
  if (x.extent(0) != b.extent(0) || (XV::rank == 2 && x.extent(1) != b.extent(1)))
    detail::fail(std::string(b_name) + " has extents " + extents_of(b) + " but " + x_name +
                 " has extents " + extents_of(x));
  if (kacc::Impl::overlaps(x, A)) detail::fail(std::string(x_name) + " aliases A");
  if (kacc::Impl::overlaps(x, b)) detail::fail(std::string(x_name) + " aliases " + b_name);
  if (options.max_outer < 0 || options.stagnation_steps < 1 || options.gmres_restart < 1 ||
      options.gmres_max_inner < 1 || !(options.tolerance >= 0) || !(options.gmres_tolerance > 0))
    detail::fail(
        "options out of range (max_outer >= 0, stagnation_steps >= 1, gmres_restart "
        ">= 1, gmres_max_inner >= 1, tolerance >= 0, gmres_tolerance > 0)");
}

/// gesv_ir for each column of B (b itself when rank 1): one low-precision factorisation,
/// then each column refined; the columns that fail share one fp64 factorisation.
template <class Exec, class AV, class BV, class XV, class Engine>
std::vector<ir_status> gesv_ir_columns(const Exec& exec, const AV& A, const BV& B, const XV& X,
                                       const ir_options& options, Engine& engine) {
  using vector_type = Kokkos::View<double*, typename Exec::memory_space>;
  const index_type n = A.extent(0);
  const index_type k = BV::rank == 1 ? 1 : B.extent(1);
  std::vector<ir_status> statuses(k);
  if (n == 0 || k == 0) {
    for (auto& s : statuses) s.outcome = ir_outcome::converged;
    return statuses;
  }
  const double norm_a = Impl::matrix_norm_inf(exec, A);
  std::vector<double> norm_b(k);
  for (index_type j = 0; j < k; ++j) norm_b[j] = Impl::norm_inf(exec, column_of(B, j));
  auto store = [&](index_type j, const vector_type& v) {
    kacc::deep_copy(exec, column_of(X, j), v);
    exec.fence();
  };
  vector_type nans;
  // No solution for column j: its x is NaN, its outcome `failed` for `reason`.
  auto fail_column = [&](index_type j, ir_reason reason) {
    if (!nans.data()) {
      nans = vector_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::solve::nans"), n);
      Kokkos::deep_copy(exec, nans, std::numeric_limits<double>::quiet_NaN());
    }
    statuses[j].outcome = ir_outcome::failed;
    statuses[j].reason = reason;
    statuses[j].backward_error = std::numeric_limits<double>::quiet_NaN();
    store(j, nans);
  };
  if (!std::isfinite(norm_a)) {
    for (index_type j = 0; j < k; ++j) fail_column(j, ir_reason::nonfinite_input);
    return statuses;
  }
  ir_refinement<Exec, AV, Engine> work(exec, A, norm_a, options, engine);
  // The low-precision solves. The factors are computed with the first finite column
  // loaded: their test for overflow solves with it, which is its first iterate.
  std::vector<index_type> fall_back;
  bool factored = false;
  ir_reason factor_reason = ir_reason::none;
  for (index_type j = 0; j < k; ++j) {
    ir_status& s = statuses[j];
    if (!std::isfinite(norm_b[j])) {
      fail_column(j, ir_reason::nonfinite_input);
      continue;
    }
    kacc::deep_copy(exec, work.bw, column_of(B, j));
    const bool started = !factored;
    if (!factored) {
      factor_reason = work.factor();
      factored = true;
    }
    s.reason =
        factor_reason != ir_reason::none ? factor_reason : work.refine(norm_b[j], started, s);
    if (s.reason != ir_reason::none && options.fallback) {
      fall_back.push_back(j);
    } else if (factor_reason != ir_reason::none) {
      fail_column(j, factor_reason);  // no iterate to return
      s.outcome = ir_outcome::not_converged;
    } else {
      s.outcome = s.reason == ir_reason::none ? ir_outcome::converged : ir_outcome::not_converged;
      s.backward_error = work.backward_error(work.residual_norm());
      store(j, work.xw);
    }
  }
  if (fall_back.empty()) return statuses;
  const bool singular = work.factor_fp64() != 0;
  for (const index_type j : fall_back) {
    ir_status& s = statuses[j];
    if (singular) {
      fail_column(j, ir_reason::singular);
      continue;
    }
    kacc::deep_copy(exec, work.bw, column_of(B, j));
    work.solve_fp64(norm_b[j]);
    const double rn = work.residual_norm();
    if (!std::isfinite(rn) || !std::isfinite(Impl::norm_inf(exec, work.xw))) {
      s.outcome = ir_outcome::failed;
      s.reason = ir_reason::not_a_number;
    } else {
      s.outcome = ir_outcome::fell_back;
    }
    s.backward_error = work.backward_error(rn);
    store(j, work.xw);
  }
  return statuses;
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
///
/// Several right-hand sides, as LAPACK's dsgesv with NRHS = k: with B and X of rank 2
/// (n x k), A is factored once and each column of B refined as a rank-1 b is; the columns
/// that fail share one fp64 factorisation (fallback). Returns one ir_status per column
/// (an ir_status for rank-1 b and x). A non-finite column of B fails alone (its column of
/// X is NaN); a non-finite A, or one singular in fp64 too, fails every column; a
/// low-precision factorisation that fails sends every column to the fallback.
template <class Exec, class AV, class BV, class XV, class Engine,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<BV> && is_view_v<XV>>>
auto gesv_ir(const Exec& exec, const AV& A, const BV& b, const XV& x, const ir_options& options,
             Engine& engine) {
  static_assert(AV::rank == 2, "kacc::solve::gesv_ir: A must be rank 2");
  static_assert((BV::rank == 1 || BV::rank == 2) && XV::rank == BV::rank,
                "kacc::solve::gesv_ir: b and x must be rank 1, or B and X rank 2");
  KACC_REQUIRE_ACCESSIBLE(Exec, AV, "kacc::solve::gesv_ir", "A");
  KACC_REQUIRE_ACCESSIBLE(Exec, BV, "kacc::solve::gesv_ir", "b (B)");
  KACC_REQUIRE_ACCESSIBLE(Exec, XV, "kacc::solve::gesv_ir", "x (X)");
  Impl::check_gesv_ir_arguments(A, b, x, options);
  auto statuses = Impl::gesv_ir_columns(exec, A, b, x, options, engine);
  if constexpr (BV::rank == 1) {
    return statuses.front();
  } else {
    return statuses;
  }
}

/// gesv_ir with kacc's portable LU engine (kacc_lu), for one right-hand side (rank-1 b
/// and x: an ir_status) or several (rank-2 B and X: one ir_status per column).
template <class Exec, class AV, class BV, class XV,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<BV> && is_view_v<XV>>>
auto gesv_ir(const Exec& exec, const AV& A, const BV& b, const XV& x,
             const ir_options& options = {}) {
  kacc_lu<Exec> engine;
  return gesv_ir(exec, A, b, x, options, engine);
}

}  // namespace solve
}  // namespace kacc
