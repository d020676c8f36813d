#pragma once
/// @file
/// kacc::solve::local_space: the seam between kacc's Krylov solvers and where their vectors
/// live. A "space" (not a Kokkos space) computes a solver's reductions and applies its
/// operator; the solvers do everything else (updates, Givens rotations, stopping) the same
/// way whatever the space. local_space is one process; kacc::mpi::distributed_space runs the
/// same solver source over MPI ranks, each holding a block of rows.
///
/// A space S provides, for the fp64 vectors of the solver's memory:
/// - `S.check(f)`: runs the argument checks f (which throw std::invalid_argument);
/// - `S.check_sizes(solver, A, b, x, M)`: throws unless A, b, x (and M) fit together;
/// - `S.dot(exec, x, y)` and `S.nrm2(exec, x)`;
/// - `S.project(exec, v0, V, w, h)`: returns v0 . w and sets h = V^T w (V may have no columns);
/// - `S.apply(exec, A, x, y, staging)`: y = A x.
/// Every value a space returns must be the same on every process that takes part, since
/// each one decides the solver's next step from it.

#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/solve/operator.hpp>

namespace kacc {
namespace solve {

/// One process: the reductions are kacc::blas::dot, nrm2 and gemv("T") accumulated in Acc
/// (void: the arithmetic type, fp64), the operator kacc::sparse::spmv accumulated in Acc (or
/// the user's callable). With `kacc::exact<double>` every reduction and every row of A x is
/// correctly rounded, which is what makes kacc::mpi::distributed_space<kacc::exact<double>>
/// give the same iterates.
template <class Acc = void>
struct local_space {
  /// Runs the checks; they throw on this process alone.
  template <class Checks>
  void check(Checks&& checks) const {
    checks();
  }

  /// detail::check_sizes (M is applied later and checks its own extents).
  template <class Op, class B, class X, class M>
  void check_sizes(const char* solver, const Op& A, const B& b, const X& x, const M&) const {
    detail::check_sizes(solver, A, b, x);
  }

  /// x . y.
  template <class Exec, class X, class Y>
  double dot(const Exec& exec, const X& x, const Y& y) const {
    return blas::dot<void, Acc>(exec, x, y);
  }

  /// ||x||_2.
  template <class Exec, class X>
  double nrm2(const Exec& exec, const X& x) const {
    return blas::nrm2<void, Acc>(exec, x);
  }

  /// Returns v0 . w; h = V^T w when V has columns.
  template <class Exec, class V0, class V, class W, class H>
  double project(const Exec& exec, const V0& v0, const V& v, const W& w, const H& h) const {
    const double h0 = dot(exec, v0, w);
    if (v.extent(1) > 0) blas::gemv<void, Acc>(exec, "T", 1.0, v, w, 0.0, h);
    return h0;
  }

  /// y = A x (detail::apply_operator).
  template <class Exec, class Op, class X, class Y, class Staging>
  void apply(const Exec& exec, const Op& A, const X& x, const Y& y, const Staging& staging) const {
    detail::apply_operator<Acc>(exec, A, x, y, staging);
  }
};

namespace detail {

/// r = b - A x in fp64; returns ||r||.
template <class Space, class Exec, class Op, class B, class X, class Vector>
double residual(const Space& space, const Exec& exec, const Op& A, const B& b, const X& x,
                const Vector& r, const Vector& staging) {
  space.apply(exec, A, x, r, staging);
  blas::scal(exec, -1.0, r);
  blas::axpy(exec, 1.0, b, r);
  return space.nrm2(exec, r);
}

/// b64 = b; returns ||b||. For b = 0 sets x = 0 and status to zero_rhs (converged), for a
/// non-finite b status to not_finite (x unchanged), and returns 0 or NaN: the solve is over.
template <class Space, class Exec, class B, class X, class Vector>
double copy_rhs(const Space& space, const Exec& exec, const B& b, const X& x, const Vector& b64,
                SolverStatus& status) {
  kacc::deep_copy(exec, b64, b);
  const double b_norm = space.nrm2(exec, b64);
  if (!finite(b_norm)) {
    status.reason = stop_reason::not_finite;
    status.residual = std::nan("");
    status.message = "b holds NaN or infinity; x is unchanged";
    return std::nan("");
  }
  if (b_norm == 0) {
    blas::scal(exec, 0.0, x);  // writes zeros without reading x
    exec.fence();
    status.converged = true;
    status.reason = stop_reason::zero_rhs;
    status.message = "b = 0, so x = 0";
  }
  return b_norm;
}

}  // namespace detail
}  // namespace solve
}  // namespace kacc
