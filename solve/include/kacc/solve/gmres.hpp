#pragma once
/// @file
/// kacc::solve::gmres: restarted GMRES(m) whose Krylov basis is stored in a chosen format
/// (CB-GMRES, "compressed basis GMRES", Aliaga, Anzt et al. 2021, seed 003) while every
/// operation computes in fp64.
///
/// The basis is a `kacc::View<double**, Kokkos::LayoutLeft, Memory, kacc::StoredAs<F>>` of
/// n x (m - 1) holding v_1 .. v_{m-1}; v_0, the normalised residual each cycle starts
/// from, stays in fp64, so that r_0 = beta v_0 holds as the least-squares problem assumes
/// (on the tests' problems this changed the iteration counts little: the rounding of the
/// later vectors dominates), and the vector the operator is applied to is the fp64 one
/// (as in Ginkgo). One cycle lowers the true residual only to about F's rounding times
/// the residual it started from (measured on the tests' problems: 3e-8 to 3e-7 for fp32,
/// 3e-4 to 3e-3 for fp16, also with an fp64 copy of the basis for the update x += V y, so
/// the rounding enters through the Arnoldi relation); see GmresOptions::early_restart.
/// Each new vector is orthogonalised in fp64 by classical Gram-Schmidt with one
/// reorthogonalisation (CGS2: two passes of h = V^T w, w -= V h with kacc::blas::gemv
/// reading V in F), normalised in fp64 and rounded once into its column. A scaled integer
/// basis (`kacc::scaled<std::int32_t>`, `kacc::scaled<std::int16_t>`) gets one scale per
/// column, chosen by kacc::deep_copy from the column's largest magnitude, so each column
/// uses the whole integer range whatever the size of the problem. A format with a
/// narrower exponent range than fp32 (fp16) stores its columns times one power of two (see
/// Impl::basis_scale), for the same reason. The Hessenberg matrix,
/// its Givens rotations and the small triangular solve stay on the host in fp64.
///
/// Stopping: a cycle ends when the least-squares residual of the recurrence reaches the
/// tolerance (converted to an estimate of ||b - A x|| with the ratio of the two norms at
/// the start of the cycle, which is 1 for right preconditioning), when m vectors are used,
/// on breakdown, or (a compressed basis) at GmresOptions::early_restart's target. After
/// each cycle the explicit residual b - A x is computed in fp64; only it decides
/// convergence (||b - A x|| / ||b|| <= tolerance), so a basis stored in low precision can
/// cost iterations, or convergence (stop_reason::stagnation), but not the accuracy of a
/// converged x: the next cycle starts from the true residual.

#include <kacc/blas/gemv.hpp>
#include <kacc/solve/givens_least_squares.hpp>
#include <kacc/solve/operator.hpp>
#include <kacc/solve/space.hpp>
#include <kacc/solve/status.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace kacc {
namespace solve {

namespace Impl {

/// GMRES stops (reason stagnation) after this many cycles in a row that did not lower the
/// smallest explicit residual seen, and returns the iterate that had it.
constexpr int stagnation_cycles = 5;

/// A cycle with a compressed basis ends when the recurrence's residual has fallen to this
/// many times the basis rounding error (relative to the cycle's start). 4 and 16 gave the
/// fewest iterations on the unit tests' generated problems (1 and 64 slightly more).
constexpr double early_restart_factor = 4.0;

/// The factor every column of a BasisFormat basis is stored times. A unit vector's
/// entries lie in [-1, 1], the top of fp16's range (largest 65504, smallest normal 6.1e-5):
/// at 262 144 rows a typical entry (1/sqrt(n) = 2e-3) is 32 times the smallest normal, and
/// the smaller entries lose digits as subnormals or become 0. Times 2^15, the largest power
/// of two fp16 holds, they use the whole exponent range (normal down to 1.9e-9), and a
/// power of two makes the scaling exact. Formats whose range reaches fp32's (fp32, bf16,
/// fp64) hold such entries as normal numbers, and scaled integers choose their own
/// per-column scales: 1 for those.
template <class BasisFormat>
double basis_scale() {
  using traits = format_traits<BasisFormat>;
  if constexpr (traits::is_scaled) {
    return 1.0;
  } else {
    const double largest = traits::max_value();
    return largest < std::ldexp(1.0, 127) ? kacc::detail::power_of_two_below(largest) : 1.0;
  }
}

/// store_column's loop: a functor, since nvcc refuses extended lambdas that first capture
/// inside `if constexpr`.
template <class Column, class Vector>
struct store_scaled {
  Column column;  ///< a basis column
  Vector w;       ///< the fp64 vector stored into it
  double scale;   ///< basis_scale of the column's format
  /// column(i) = scale * w(i), rounded once into the column's format.
  KOKKOS_INLINE_FUNCTION void operator()(index_type i) const { column(i) = scale * w(i); }
};

/// column = scale * w, rounded once into the basis format; for a scaled integer format
/// kacc::deep_copy, which chooses the column's own scale (basis_scale is 1 there).
template <class Exec, class Column, class Vector>
void store_column(const Exec& exec, const Column& column, const Vector& w, double scale) {
  if constexpr (format_traits<format_t<Column>>::is_scaled) {
    kacc::deep_copy(exec, column, w);
  } else {
    Kokkos::parallel_for("kacc::solve::gmres::store_column",
                         kacc::Impl::range(exec, 0, w.extent(0)),
                         store_scaled<Column, Vector>{column, w, scale});
  }
}

/// h = V^T w, w -= V h for the basis [v0, v(:, 1..j)] (v0 in fp64, the others stored
/// times `scale`), twice (CGS2); the sum of both passes' coefficients lands in
/// column[0..j].
template <class Space, class Exec, class Vector, class Basis, class HostVector>
void orthogonalise(const Space& space, const Exec& exec, const Vector& v0, const Basis& v,
                   double scale, int j, const Vector& w, const Vector& h, const HostVector& h_host,
                   double* column) {
  const auto vj = kacc::subview(v, Kokkos::ALL, Kokkos::pair<std::size_t, std::size_t>(0, j));
  const auto hj = Kokkos::subview(h, Kokkos::pair<std::size_t, std::size_t>(1, j + 1));
  for (int i = 0; i <= j; ++i) column[i] = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const double h0 = space.project(exec, v0, vj, w, hj);
    if (j > 0) {
      // hj = (scale V)^T w = scale h, so w -= V h is w -= (scale V) hj / scale^2.
      blas::gemv(exec, "N", -1.0 / (scale * scale), vj, hj, 1.0, w);
      Kokkos::deep_copy(
          exec, Kokkos::subview(h_host, Kokkos::pair<std::size_t, std::size_t>(1, j + 1)), hj);
    }
    blas::axpy(exec, -h0, v0, w);
    exec.fence();
    column[0] += h0;
    for (int i = 1; i <= j; ++i) column[i] += h_host(i) / scale;
  }
}

/// w = A M^-1 v (right), M^-1 A v (left) or A v (M = Identity); z is scratch.
template <class Space, class Exec, class Op, class Preconditioner, class V, class Vector>
void expand(const Space& space, const Exec& exec, const Op& A, const Preconditioner& M, bool left,
            const V& v, const Vector& w, const Vector& z, const Vector& staging) {
  if constexpr (detail::is_identity_v<Preconditioner>) {
    space.apply(exec, A, v, w, staging);
  } else if (left) {
    space.apply(exec, A, v, z, staging);
    M.apply(exec, z, w);
  } else {
    M.apply(exec, v, z);
    space.apply(exec, A, z, w, staging);
  }
}

}  // namespace Impl

/// kacc::solve::gmres(exec, A, b, x, options, M) (below) with its reductions and operator
/// taken from `space` (see kacc/solve/space.hpp): local_space<Acc> on one process,
/// kacc::mpi::distributed_space over MPI ranks, where b and x are each rank's block. The
/// Hessenberg matrix and its rotations are computed redundantly on every process from the
/// space's reductions, so every process takes the same steps.
template <class BasisFormat = double, class Space, class Exec, class Op, class B, class X,
          class Preconditioner = Identity,
          class Enable = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
SolverStatus gmres(const Space& space, const Exec& exec, const Op& A, const B& b, const X& x,
                   const GmresOptions& options = GmresOptions(),
                   const Preconditioner& M = Preconditioner()) {
  static_assert(is_view_v<B> && is_view_v<X>, "kacc::solve::gmres: b and x must be views");
  static_assert(B::rank == 1 && X::rank == 1, "kacc::solve::gmres: b and x must be rank 1");
  static_assert(!std::is_const<typename X::value_type>::value,
                "kacc::solve::gmres: x must be writable");
  KACC_REQUIRE_ACCESSIBLE(Exec, B, "kacc::solve::gmres", "b");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::solve::gmres", "x");
  using Memory = typename Exec::memory_space;
  using Vector = Kokkos::View<double*, Memory>;
  using Basis = kacc::View<double**, Kokkos::LayoutLeft, Memory, kacc::StoredAs<BasisFormat>>;
  constexpr bool identity = detail::is_identity_v<Preconditioner>;
  const char* solver = "gmres";
  space.check([&] {
    space.check_sizes(solver, A, b, x, M);
    detail::check_stopping(solver, options.tolerance, options.max_iterations);
    if (options.restart < 1)
      detail::fail(solver, "restart = " + std::to_string(options.restart) + " must be >= 1");
  });

  const std::size_t n = b.extent(0);
  const bool left = options.preconditioner_side == side::left && !identity;
  SolverStatus status;
  auto alloc = [](const char* label) {
    return Kokkos::view_alloc(Kokkos::WithoutInitializing,
                              std::string("kacc::solve::gmres::") + label);
  };
  Vector b64(alloc("b"), n), x64(alloc("x"), n), r(alloc("r"), n), w(alloc("w"), n),
      z(alloc("z"), n), staging(alloc("staging"), n), latest(alloc("latest"), n),
      x_best(alloc("x_best"), n);
  const double b_norm = detail::copy_rhs(space, exec, b, x, b64, status);
  if (!(b_norm > 0)) return status;  // b = 0 or not finite: status says which
  kacc::deep_copy(exec, x64, x);

  const int m = options.restart;
  Basis v(alloc("basis"), n, static_cast<std::size_t>(m) - 1);
  const double scale = Impl::basis_scale<BasisFormat>();
  Vector v0(alloc("v0"), n), h(alloc("h"), static_cast<std::size_t>(m) + 1);
  auto h_host = Kokkos::create_mirror_view(h);
  Impl::GivensLeastSquares ls(m);
  std::vector<double> column(static_cast<std::size_t>(m) + 1), y(static_cast<std::size_t>(m));

  // Until the loop says otherwise, the cap is what stops it.
  status.reason = stop_reason::iteration_limit;
  // The iterate with the smallest explicit residual so far: cycles with a coarse basis
  // can raise the residual and later cycles recover, but x never ends worse than it was.
  double best_r_norm = 0;
  bool have_best = false;
  int cycles_without_progress = 0;
  for (int cycle = 0;; ++cycle) {
    const double r_norm = detail::residual(space, exec, A, b64, x64, r, staging);
    const bool finite = detail::finite(r_norm);
    if (finite && (!have_best || r_norm < best_r_norm)) {
      best_r_norm = r_norm;
      have_best = true;
      cycles_without_progress = 0;
      Kokkos::deep_copy(exec, x_best, x64);
    } else {
      ++cycles_without_progress;
    }
    if (finite && r_norm <= options.tolerance * b_norm) {
      status.converged = true;
      status.reason = stop_reason::converged;
      break;
    }
    const bool stagnated = cycles_without_progress >= Impl::stagnation_cycles;
    if (!finite || stagnated || status.iterations >= options.max_iterations) {
      status.reason = !finite     ? stop_reason::not_finite
                      : stagnated ? stop_reason::stagnation
                                  : stop_reason::iteration_limit;
      if (have_best && cycles_without_progress > 0) Kokkos::deep_copy(exec, x64, x_best);
      break;
    }
    if (cycle > 0) ++status.restarts;
    // The recurrence's residual: r, or M^-1 r for left preconditioning.
    double beta = r_norm;
    if (left) {
      M.apply(exec, r, z);
      Kokkos::deep_copy(exec, r, z);
      beta = space.nrm2(exec, r);
      if (!detail::finite(beta) || beta == 0) {
        status.reason = detail::finite(beta) ? stop_reason::breakdown : stop_reason::not_finite;
        break;
      }
    }
    // Estimates of ||b - A x|| are the recurrence's norms times this ratio.
    const double to_true = r_norm / beta;
    const double target = options.tolerance * b_norm / to_true;
    if (status.residual_history.empty()) status.residual_history.push_back(r_norm / b_norm);
    blas::scal(exec, 1.0 / beta, r);
    Kokkos::deep_copy(exec, v0, r);
    ls.reset(beta);
    // The relative error of one normalised vector rounded to the basis format (measured,
    // so scaled formats count their per-column scale): the cycle ends once the recurrence
    // has gained early_restart_factor times that, since the true residual cannot follow
    // further (see GmresOptions::early_restart).
    double rounding = 0;
    if constexpr (!std::is_same<BasisFormat, double>::value) {
      if (m > 1 && options.early_restart) {
        const auto scratch = kacc::subview(v, Kokkos::ALL, 0);
        Impl::store_column(exec, scratch, v0, scale);
        Kokkos::deep_copy(exec, staging, v0);
        blas::axpy(exec, -1.0 / scale, scratch, staging);
        rounding = space.nrm2(exec, staging);
      }
    }
    const double cycle_target =
        std::fmax(target, beta * std::fmin(Impl::early_restart_factor * rounding, 0.1));

    int k = 0;  // basis vectors whose Hessenberg columns are in ls
    bool broke_down = false, not_finite = false;
    for (int j = 0; j < m && status.iterations < options.max_iterations; ++j) {
      // w = A M^-1 v_j (right), M^-1 A v_j (left) or A v_j.
      Impl::expand(space, exec, A, M, left, j == 0 ? v0 : latest, w, z, staging);
      ++status.iterations;
      Impl::orthogonalise(space, exec, v0, v, scale, j, w, h, h_host, column.data());
      const double next = space.nrm2(exec, w);
      column[j + 1] = next;
      double w_norm_sq = 0;  // ||w|| before orthogonalisation, from the coefficients
      for (int i = 0; i <= j + 1; ++i) w_norm_sq += column[i] * column[i];
      if (!detail::finite(w_norm_sq)) {
        not_finite = true;
        break;
      }
      const double estimate = ls.add_column(j, column.data());
      k = j + 1;
      status.residual_history.push_back(estimate * to_true / b_norm);
      // An invariant subspace: the next vector would be rounding noise.
      if (next <= 1e-14 * std::sqrt(w_norm_sq)) {
        broke_down = true;
        break;
      }
      if (estimate <= cycle_target) break;
      if (j + 1 < m) {
        blas::scal(exec, 1.0 / next, w);
        Impl::store_column(exec, kacc::subview(v, Kokkos::ALL, j), w, scale);
        std::swap(w, latest);
      }
    }

    // x += V_k y (right: x += M^-1 V_k y) with the columns whose triangle is nonsingular.
    const int usable = ls.nonsingular_columns(k);
    if (usable > 0) {
      ls.solve(usable, y.data());
      for (int i = 1; i < usable; ++i) h_host(i - 1) = y[static_cast<std::size_t>(i)];
      const auto cols =
          Kokkos::pair<std::size_t, std::size_t>(0, static_cast<std::size_t>(usable) - 1);
      const auto y_dev = Kokkos::subview(h, cols);
      Kokkos::deep_copy(exec, y_dev, Kokkos::subview(h_host, cols));
      const auto vk = kacc::subview(v, Kokkos::ALL, cols);
      // The correction V y: straight into x, or through w and M^-1 (right).
      const Vector& target = identity || left ? x64 : w;
      if (!identity && !left) Kokkos::deep_copy(exec, w, 0.0);
      blas::axpy(exec, y[0], v0, target);
      if (usable > 1) blas::gemv(exec, "N", 1.0 / scale, vk, y_dev, 1.0, target);
      if (!identity && !left) {
        M.apply(exec, w, z);
        if (detail::finite(space.nrm2(exec, z))) {
          blas::axpy(exec, 1.0, z, x64);
        } else {
          not_finite = true;
        }
      }
    }
    if (not_finite) {
      status.reason = stop_reason::not_finite;
      break;
    }
    if (usable < k || (broke_down && usable == 0)) {
      status.reason = stop_reason::breakdown;
      break;
    }
  }

  kacc::deep_copy(exec, x, x64);
  status.residual = detail::residual(space, exec, A, b64, x, r, staging) / b_norm;
  exec.fence();
  if (status.reason == stop_reason::breakdown && status.residual <= options.tolerance) {
    status.converged = true;
    status.reason = stop_reason::converged;
  }
  char line[200];
  std::snprintf(line, sizeof line,
                "%s after %d iterations (%d restarts): ||b - A x|| / ||b|| = %.3e",
                reason_name(status.reason), status.iterations, status.restarts, status.residual);
  status.message = line;
  return status;
}

/// Solves A x = b by restarted GMRES(options.restart) with the Krylov basis stored in
/// BasisFormat (double, float, kacc::fp16, kacc::bf16, kacc::scaled<std::int32_t>,
/// kacc::scaled<std::int16_t>, or any other kacc format) and all arithmetic in fp64,
/// preconditioned by M (applied as `M.apply(exec, r, z)`: z = M^-1 r; Identity skips it)
/// on options.preconditioner_side. x holds the initial guess and receives the solution.
///
/// A: a square kacc::sparse::CsrMatrix or EllMatrix (values in any format), or a callable
/// `A(x, y)` writing y = A x for `Kokkos::View<double*, Memory>`. b and x: rank-1 views of
/// any format with A's row count of entries; b is never written.
///
/// Returns the SolverStatus: converged when the explicit ||b - A x|| / ||b|| of the fp64
/// iterate is at most options.tolerance; `residual` is that of the returned x (the same
/// unless x is stored in a narrower format). b == 0: x = 0, reason zero_rhs, converged,
/// 0 iterations. b, x0 or A x0 not finite, or a NaN or infinity in a Krylov vector (a
/// preconditioner returning inf, A holding NaN): reason not_finite, x the last finite
/// iterate (x0 if none). Breakdown (a singular Hessenberg matrix, e.g. A = 0): reason
/// breakdown, x updated with the nonsingular part. Unless converged, x is the iterate with
/// the smallest explicit residual seen at the start of a cycle; after 5 cycles in a row
/// without a new smallest residual (a basis format too coarse for the problem) GMRES stops
/// with reason stagnation. Throws std::invalid_argument for
/// mismatched sizes, a non-square A, restart < 1, max_iterations < 0 or a negative or NaN
/// tolerance; and whatever M.apply throws.
template <class BasisFormat = double, class Exec, class Op, class B, class X,
          class Preconditioner = Identity,
          class Enable = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
SolverStatus gmres(const Exec& exec, const Op& A, const B& b, const X& x,
                   const GmresOptions& options = GmresOptions(),
                   const Preconditioner& M = Preconditioner()) {
  return gmres<BasisFormat>(local_space<>(), exec, A, b, x, options, M);
}

/// gmres in the default execution space instance of x's memory.
template <class BasisFormat = double, class Op, class B, class X, class Preconditioner = Identity,
          class Enable = std::enable_if_t<is_view_v<B>>>
SolverStatus gmres(const Op& A, const B& b, const X& x,
                   const GmresOptions& options = GmresOptions(),
                   const Preconditioner& M = Preconditioner()) {
  return gmres<BasisFormat>(typename X::execution_space(), A, b, x, options, M);
}

}  // namespace solve
}  // namespace kacc
