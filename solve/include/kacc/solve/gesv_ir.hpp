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

/// v(i, c) *= f * s(i) for every column c of v.
template <class Exec, class M, class Vec>
void scale_rows(const Exec& exec, const M& v, double f, const Vec& s) {
  const index_type n = v.extent(0);
  Kokkos::parallel_for(
      "kacc::solve::gesv_ir_scale_rows", kacc::Impl::range(exec, 0, n * v.extent(1)),
      KOKKOS_LAMBDA(const index_type e) { v(e % n, e / n) *= f * s(e % n); });
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

/// The stopping rules of one right-hand side's refinement (ir_options' tolerance, polish,
/// max_outer and stagnation_steps), told each residual in turn.
class refinement_control {
 public:
  /// What to do after a residual.
  enum class verdict {
    correct,      ///< take another correction (first save the iterate when keep())
    stop,         ///< stop with this iterate, for reason()
    restore_kept  ///< stop with the kept iterate, whose residual norm is kept_residual()
  };

  /// For ||A||_inf = norm_a, ||b||_inf = norm_b and the tolerance in effect.
  refinement_control(const ir_options& options, double tolerance, double norm_a, double norm_b)
      : options_(options), tolerance_(tolerance), norm_a_(norm_a), norm_b_(norm_b) {}

  /// Records the residual norm rn of the iterate (of norm xn) in status and rules on it;
  /// inner_exhausted: the correction that led to it ran GMRES' whole iteration cap.
  verdict next(double rn, double xn, bool inner_exhausted, ir_status& status) {
    keep_ = false;
    status.residual_history.push_back(rn);
    // Polishing ends, as LAPACK's dgerfs does, once the backward error is at the unit
    // roundoff, that of rounding A and b to fp64 themselves.
    const bool at_roundoff = rn <= 0x1p-53 * (norm_a_ * xn + norm_b_);
    if (met_) {
      // Polishing: keep a step only if it met the tolerance and halved the residual.
      if (!(rn < 0.5 * kept_ && rn <= tolerance_ * xn * norm_a_))
        return stop_with(ir_reason::none, verdict::restore_kept);
      if (at_roundoff) return stop_with(ir_reason::none, verdict::stop);
      kept_ = rn;
      keep_ = true;
    } else {
      if (!std::isfinite(rn) || !std::isfinite(xn))
        return stop_with(ir_reason::not_a_number, verdict::stop);
      if (rn <= tolerance_ * xn * norm_a_) {
        if (!options_.polish || at_roundoff) return stop_with(ir_reason::none, verdict::stop);
        met_ = true;
        kept_ = rn;
        keep_ = true;
      }
    }
    if (status.outer_iterations >= options_.max_outer)
      return stop_with(met_ ? ir_reason::none : ir_reason::iteration_cap, verdict::stop);
    if (!met_) {
      if (rn <= 0.5 * best_) {
        stale_ = 0;
      } else if (++stale_ >= options_.stagnation_steps || inner_exhausted) {
        return stop_with(ir_reason::stagnation, verdict::stop);
      }
      best_ = rn < best_ ? rn : best_;
    }
    return verdict::correct;
  }

  /// After verdict::correct: the iterate is to be kept (it met the tolerance, and any
  /// polishing step after it may be undone).
  bool keep() const { return keep_; }
  /// Why the refinement stopped (none: converged).
  ir_reason reason() const { return reason_; }
  /// The residual norm of the kept iterate.
  double kept_residual() const { return kept_; }

 private:
  verdict stop_with(ir_reason reason, verdict v) {
    reason_ = reason;
    return v;
  }

  const ir_options& options_;
  double tolerance_, norm_a_, norm_b_;
  double best_ = std::numeric_limits<double>::infinity(), kept_ = 0;
  int stale_ = 0;
  bool met_ = false, keep_ = false;
  ir_reason reason_ = ir_reason::none;
};

/// Engine has a multi-column solve(exec, V) for V = M (n x k, LayoutLeft fp64).
template <class Engine, class Exec, class M, class = void>
struct solves_columns : std::false_type {};
template <class Engine, class Exec, class M>
struct solves_columns<Engine, Exec, M,
                      std::void_t<decltype(std::declval<Engine&>().solve(
                          std::declval<const Exec&>(), std::declval<const M&>()))>>
    : std::true_type {};

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
    refinement_control control(options_, tolerance_, norm_a_, norm_b);
    bool inner_exhausted = false;
    for (;;) {
      rn_ = residual();
      switch (control.next(rn_, Impl::norm_inf(exec_, xw), inner_exhausted, status)) {
        case refinement_control::verdict::restore_kept:
          Kokkos::deep_copy(exec_, xw, xk_);
          rn_ = control.kept_residual();
          return control.reason();
        case refinement_control::verdict::stop:
          return control.reason();
        case refinement_control::verdict::correct:
          break;
      }
      if (control.keep()) Kokkos::deep_copy(exec_, xk_, xw);
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

  /// Classic refinement of the columns of B numbered `columns` together (their norms in
  /// norm_b, their statuses in statuses), after factor(): the first iterates from one
  /// multi-column solve with the factors, then per step one GEMM residual for all columns
  /// and one multi-column solve (both read A or the factors once for all columns, where
  /// refine() per column reads them once per column); each column follows refine()'s
  /// rules and leaves off when they stop it. Returns each column's reason; its iterate is
  /// column c of xs(), its residual norm columns_residual(c).
  template <class BV>
  std::vector<ir_reason> refine_together(const BV& B, const std::vector<index_type>& columns,
                                         const std::vector<double>& norm_b,
                                         std::vector<ir_status>& statuses) {
    const index_type k = columns.size();
    auto matrix = [&](const char* label) {
      return matrix_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n_,
                         k);
    };
    bs_ = matrix("kacc::solve::gesv_ir_B");
    xs_ = matrix("kacc::solve::gesv_ir_X");
    const matrix_type rs = matrix("kacc::solve::gesv_ir_R"),
                      kept = matrix("kacc::solve::gesv_ir_kept");
    for (index_type c = 0; c < k; ++c)
      kacc::deep_copy(exec_, column_of(bs_, c), column_of(B, columns[c]));
    Kokkos::deep_copy(exec_, xs_, bs_);
    apply_m_columns(xs_);
    std::vector<refinement_control> controls;
    for (const index_type j : columns)
      controls.emplace_back(options_, tolerance_, norm_a_, norm_b[j]);
    std::vector<ir_reason> reasons(k);
    std::vector<bool> refining(k, true);
    columns_rn_.assign(k, 0.0);
    for (;;) {
      Kokkos::deep_copy(exec_, rs, bs_);
      if (options_.residual == residual_precision::double_double) {
        for (index_type c = 0; c < k; ++c)
          blas::gemv<double_double, double_double>(exec_, "N", double_double(-1.0), A_,
                                                   column_of(xs_, c), double_double(1.0),
                                                   column_of(rs, c));
      } else {
        blas::gemm<double>(exec_, "N", "N", -1.0, A_, xs_, 1.0, rs);
      }
      bool any = false;
      for (index_type c = 0; c < k; ++c) {
        if (!refining[c]) continue;
        refinement_control& control = controls[c];
        const auto x = column_of(xs_, c);
        columns_rn_[c] = Impl::norm_inf(exec_, column_of(rs, c));
        const auto v =
            control.next(columns_rn_[c], Impl::norm_inf(exec_, x), false, statuses[columns[c]]);
        if (v == refinement_control::verdict::correct) {
          if (control.keep()) Kokkos::deep_copy(exec_, column_of(kept, c), x);
          any = true;
          continue;
        }
        if (v == refinement_control::verdict::restore_kept) {
          Kokkos::deep_copy(exec_, x, column_of(kept, c));
          columns_rn_[c] = control.kept_residual();
        }
        reasons[c] = control.reason();
        refining[c] = false;
      }
      if (!any) return reasons;
      apply_m_columns(rs);
      for (index_type c = 0; c < k; ++c) {
        if (!refining[c]) continue;
        blas::axpy(exec_, 1.0, column_of(rs, c), column_of(xs_, c));
        ++statuses[columns[c]].outer_iterations;
      }
    }
  }

  /// The iterates of refine_together(), a column per right-hand side.
  const matrix_type& xs() const { return xs_; }
  /// ||b - A x||_inf of column c of xs().
  double columns_residual(index_type c) const { return columns_rn_[c]; }

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
  double backward_error(double rn) const { return backward_error(xw, rn, norm_b_); }

  /// The backward error of an iterate x of residual norm rn for a b of norm norm_b.
  template <class V>
  double backward_error(const V& x, double rn, double norm_b) const {
    const double denominator = norm_a_ * Impl::norm_inf(exec_, x) + norm_b;
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

  /// apply_m for each column of v: one multi-column solve when the engine has one.
  void apply_m_columns(const matrix_type& v) {
    if constexpr (solves_columns<Engine, Exec, matrix_type>::value) {
      if (scaled_) Impl::scale_rows(exec_, v, mu_, rs_);
      engine_.solve(exec_, v);
      if (scaled_) Impl::scale_rows(exec_, v, 1.0, cs_);
    } else {
      for (index_type c = 0; c < static_cast<index_type>(v.extent(1)); ++c) {
        const vector_type column = Kokkos::subview(v, Kokkos::ALL(), c);
        apply_m(column);
      }
    }
  }

  Exec exec_;
  AV A_;
  double norm_a_;
  const ir_options& options_;
  Engine& engine_;
  index_type n_;
  vector_type r_, d_, xk_, rs_, cs_;
  matrix_type W_, bs_, xs_;
  std::vector<double> columns_rn_;
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

/// Classic refinement takes the columns of B together (refine_together) from this many
/// on. Measured on the host (kacc-perf-solve --sizes=4096 --kappas=1e2,1e6 --no-gemm
/// --variants="classic openblas", fp32 factors from sgetrf, 2 threads; time / dsgesv for
/// geometric and arithmetic sigma at kappa 1e2 and 1e6), one after another against
/// together: k = 2 0.95-0.99 against 1.04-1.23, k = 3 1.01-1.21 either way, k = 4
/// 1.09-1.41 against 0.98-1.17 (a GEMM residual of n x n x k, and the multi-column
/// solve, take about as long for any k up to 16).
constexpr index_type ir_together_columns = 4;

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
  auto store = [&](index_type j, const auto& v) {
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
  std::vector<index_type> finite;
  for (index_type j = 0; j < k; ++j) {
    if (std::isfinite(norm_b[j])) {
      finite.push_back(j);
    } else {
      fail_column(j, ir_reason::nonfinite_input);
    }
  }
  if (finite.empty()) return statuses;
  // The low-precision factors, computed with the first finite column loaded: their test
  // for overflow solves with it, which is its first iterate.
  kacc::deep_copy(exec, work.bw, column_of(B, finite.front()));
  const ir_reason factor_reason = work.factor();
  std::vector<index_type> fall_back;
  // Column j's refinement ended for `reason`, its iterate x of residual norm rn.
  auto finish = [&](index_type j, ir_reason reason, const auto& x, double rn) {
    ir_status& s = statuses[j];
    s.reason = reason;
    if (reason != ir_reason::none && options.fallback) {
      fall_back.push_back(j);
    } else {
      s.outcome = reason == ir_reason::none ? ir_outcome::converged : ir_outcome::not_converged;
      s.backward_error = work.backward_error(x, rn, norm_b[j]);
      store(j, x);
    }
  };
  if (factor_reason != ir_reason::none) {
    for (const index_type j : finite) {
      statuses[j].reason = factor_reason;
      if (options.fallback) {
        fall_back.push_back(j);
      } else {
        fail_column(j, factor_reason);  // no iterate to return
        statuses[j].outcome = ir_outcome::not_converged;
      }
    }
  } else if (options.method == refinement::classic &&
             static_cast<index_type>(finite.size()) >= ir_together_columns) {
    const auto reasons = work.refine_together(B, finite, norm_b, statuses);
    for (std::size_t c = 0; c < finite.size(); ++c)
      finish(finite[c], reasons[c], column_of(work.xs(), c), work.columns_residual(c));
  } else {
    for (const index_type j : finite) {
      const bool started = j == finite.front();
      if (!started) kacc::deep_copy(exec, work.bw, column_of(B, j));
      const ir_reason reason = work.refine(norm_b[j], started, statuses[j]);
      finish(j, reason, work.xw, work.residual_norm());
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
/// (n x k), A is factored once and each column of B refined by the rank-1 rules; classic
/// refinement of Impl::ir_together_columns or more columns takes them together (one GEMM
/// residual and one multi-column solve per step, the latter where the engine has a
/// solve(exec, V) for an n x k V; a double_double residual stays a GEMV per column), and
/// otherwise each column gets the rank-1 call's iterates bit for bit; the columns that
/// fail share one fp64 factorisation (fallback). Returns one ir_status per column
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
