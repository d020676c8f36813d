#pragma once
/// @file
/// kacc::solve::cg: preconditioned conjugate gradients for symmetric positive definite A
/// (and M), in fp64, with the operators and preconditioners kacc::solve::gmres takes.
///
/// The recurrence's residual decides when to look: once ||r|| / ||b|| reaches the
/// tolerance, the explicit b - A x is computed in fp64, and only it decides convergence;
/// when it is not yet small enough CG restarts from it (a counted restart).

#include <kacc/blas/dot.hpp>
#include <kacc/solve/operator.hpp>
#include <kacc/solve/space.hpp>
#include <kacc/solve/status.hpp>

#include <cmath>
#include <cstdio>
#include <string>

namespace kacc {
namespace solve {

/// kacc::solve::cg(exec, A, b, x, options, M) (below) with its reductions and operator
/// taken from `space` (see kacc/solve/space.hpp), as for kacc::solve::gmres.
template <class Space, class Exec, class Op, class B, class X, class Preconditioner = Identity,
          class Enable = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
SolverStatus cg(const Space& space, const Exec& exec, const Op& A, const B& b, const X& x,
                const CgOptions& options = CgOptions(),
                const Preconditioner& M = Preconditioner()) {
  static_assert(is_view_v<B> && is_view_v<X>, "kacc::solve::cg: b and x must be views");
  static_assert(B::rank == 1 && X::rank == 1, "kacc::solve::cg: b and x must be rank 1");
  static_assert(!std::is_const<typename X::value_type>::value,
                "kacc::solve::cg: x must be writable");
  KACC_REQUIRE_ACCESSIBLE(Exec, B, "kacc::solve::cg", "b");
  KACC_REQUIRE_ACCESSIBLE(Exec, X, "kacc::solve::cg", "x");
  using Vector = Kokkos::View<double*, typename Exec::memory_space>;
  constexpr bool identity = detail::is_identity_v<Preconditioner>;
  const char* solver = "cg";
  space.check([&] {
    space.check_sizes(solver, A, b, x, M);
    detail::check_stopping(solver, options.tolerance, options.max_iterations);
  });

  const std::size_t n = b.extent(0);
  SolverStatus status;
  auto alloc = [](const char* label) {
    return Kokkos::view_alloc(Kokkos::WithoutInitializing,
                              std::string("kacc::solve::cg::") + label);
  };
  Vector b64(alloc("b"), n), x64(alloc("x"), n), r(alloc("r"), n), z(alloc("z"), n),
      p(alloc("p"), n), q(alloc("q"), n), staging(alloc("staging"), n);
  const double b_norm = detail::copy_rhs(space, exec, b, x, b64, status);
  if (!(b_norm > 0)) return status;  // b = 0 or not finite: status says which
  kacc::deep_copy(exec, x64, x);

  status.reason = stop_reason::iteration_limit;
  for (int start = 0;; ++start) {
    double r_norm = detail::residual(space, exec, A, b64, x64, r, staging);
    if (!detail::finite(r_norm)) {
      status.reason = stop_reason::not_finite;
      break;
    }
    if (status.residual_history.empty()) status.residual_history.push_back(r_norm / b_norm);
    if (r_norm <= options.tolerance * b_norm) {
      status.converged = true;
      status.reason = stop_reason::converged;
      break;
    }
    if (status.iterations >= options.max_iterations) break;
    if (start > 0) ++status.restarts;
    // p = z = M^-1 r
    double rz = 0;
    bool stop = false;
    for (bool first = true; status.iterations < options.max_iterations; first = false) {
      if constexpr (identity) {
        Kokkos::deep_copy(exec, z, r);
      } else {
        M.apply(exec, r, z);
      }
      const double rz_next = space.dot(exec, r, z);
      if (!detail::finite(rz_next) || rz_next <= 0) {
        status.reason = detail::finite(rz_next) ? stop_reason::breakdown : stop_reason::not_finite;
        stop = true;
        break;
      }
      if (first) {
        Kokkos::deep_copy(exec, p, z);
      } else {
        blas::scal(exec, rz_next / rz, p);
        blas::axpy(exec, 1.0, z, p);
      }
      rz = rz_next;
      space.apply(exec, A, p, q, staging);
      ++status.iterations;
      const double pq = space.dot(exec, p, q);
      if (!detail::finite(pq) || pq <= 0) {
        status.reason = detail::finite(pq) ? stop_reason::breakdown : stop_reason::not_finite;
        stop = true;
        break;
      }
      const double alpha = rz / pq;
      blas::axpy(exec, alpha, p, x64);
      blas::axpy(exec, -alpha, q, r);
      r_norm = space.nrm2(exec, r);
      status.residual_history.push_back(r_norm / b_norm);
      if (!detail::finite(r_norm)) {
        status.reason = stop_reason::not_finite;
        stop = true;
        break;
      }
      if (r_norm <= options.tolerance * b_norm) break;  // confirmed explicitly above
    }
    if (stop) break;
  }

  kacc::deep_copy(exec, x, x64);
  status.residual = detail::residual(space, exec, A, b64, x, r, staging) / b_norm;
  exec.fence();
  char line[200];
  std::snprintf(line, sizeof line,
                "%s after %d iterations (%d restarts): ||b - A x|| / ||b|| = %.3e",
                reason_name(status.reason), status.iterations, status.restarts, status.residual);
  status.message = line;
  return status;
}

/// Solves A x = b for SPD A by conjugate gradients preconditioned by M (SPD; applied as
/// `M.apply(exec, r, z)`, z = M^-1 r; Identity skips it), in fp64. A, b, x, the return
/// value and the exceptions as for kacc::solve::gmres; status.restarts counts the restarts
/// from an explicit residual. Breakdown: p^T A p <= 0 or r^T z <= 0, i.e. A or M is not
/// positive definite on the Krylov space (reason breakdown).
template <class Exec, class Op, class B, class X, class Preconditioner = Identity,
          class Enable = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
SolverStatus cg(const Exec& exec, const Op& A, const B& b, const X& x,
                const CgOptions& options = CgOptions(),
                const Preconditioner& M = Preconditioner()) {
  return cg(local_space<>(), exec, A, b, x, options, M);
}

/// cg in the default execution space instance of x's memory.
template <class Op, class B, class X, class Preconditioner = Identity,
          class Enable = std::enable_if_t<is_view_v<B>>>
SolverStatus cg(const Op& A, const B& b, const X& x, const CgOptions& options = CgOptions(),
                const Preconditioner& M = Preconditioner()) {
  return cg(typename X::execution_space(), A, b, x, options, M);
}

}  // namespace solve
}  // namespace kacc
