#pragma once
/// @file
/// What kacc's Krylov solvers (gmres, cg) report: whether they converged and why they
/// stopped, the iterations and restarts taken, the residual history and the explicit
/// relative residual ||b - A x|| / ||b|| of the returned x; and the options they take.

#include <string>
#include <vector>

namespace kacc {
namespace solve {

/// Why a solver stopped.
enum class stop_reason {
  converged,        ///< the explicit ||b - A x|| / ||b|| is at most the tolerance
  zero_rhs,         ///< b == 0: x = 0 is returned, converged with 0 iterations
  iteration_limit,  ///< max_iterations reached before the tolerance
  breakdown,        ///< no further progress is possible (singular Hessenberg matrix in
                    ///< GMRES, p^T A p <= 0 or r^T z <= 0 in CG: A or M not as required)
  not_finite,       ///< a NaN or infinity appeared (in b, A, x0 or the preconditioner's output)
  stagnation        ///< GMRES: 5 restart cycles in a row did not lower the smallest
                    ///< ||b - A x|| seen (x is the iterate that had it): a basis format
                    ///< too coarse for the problem
};

/// "converged", "zero_rhs", "iteration_limit", "breakdown", "not_finite" or "stagnation".
inline const char* reason_name(stop_reason r) {
  switch (r) {
    case stop_reason::converged:
      return "converged";
    case stop_reason::zero_rhs:
      return "zero_rhs";
    case stop_reason::iteration_limit:
      return "iteration_limit";
    case stop_reason::breakdown:
      return "breakdown";
    case stop_reason::not_finite:
      return "not_finite";
    case stop_reason::stagnation:
      return "stagnation";
  }
  return "unknown";
}

/// The outcome of a solve.
struct SolverStatus {
  bool converged = false;                             ///< reason is converged or zero_rhs
  stop_reason reason = stop_reason::iteration_limit;  ///< why the solver stopped
  int iterations = 0;  ///< Krylov iterations (one operator application each)
  int restarts = 0;  ///< GMRES cycles begun after the first; CG restarts from an explicit residual
  /// The relative residual after each iteration as the recurrence knows it (GMRES: the
  /// least-squares residual, of the preconditioned system for left preconditioning; CG: the
  /// updated residual), entry 0 before the first iteration.
  std::vector<double> residual_history;
  /// The explicit ||b - A x|| / ||b|| of the returned x, computed in fp64 after the last
  /// iteration (0 for zero_rhs, NaN when b is not finite).
  double residual = 0;
  std::string message;  ///< one line saying why the solver stopped, with the numbers
};

/// Which side the preconditioner M is applied on. The stopping test is always on the
/// unpreconditioned ||b - A x|| / ||b||.
enum class side {
  right,  ///< solve A M^-1 u = b, x = M^-1 u (the residual the recurrence sees is b - A x)
  left    ///< solve M^-1 A x = M^-1 b (the recurrence sees M^-1 (b - A x))
};

/// Options of kacc::solve::gmres.
struct GmresOptions {
  int restart = 100;                       ///< Krylov vectors per cycle, m of GMRES(m)
  int max_iterations = 10000;              ///< iterations over all cycles
  double tolerance = 1e-10;                ///< stop when ||b - A x|| / ||b|| <= tolerance
  side preconditioner_side = side::right;  ///< where M is applied
  /// With a basis format other than double: end a cycle (and restart from the explicit
  /// residual) once the recurrence's residual has dropped by about 4x the measured rounding
  /// error of a basis vector. A cycle cannot take the true residual much below that (the
  /// rounding of the stored vectors enters the Arnoldi relation), so going on only lowers
  /// the estimate; restarting there saved 20-45% of the iterations of fp16 and bf16 bases
  /// on the tests' 2-D and 3-D problems. false: cycles run to m vectors or to the tolerance.
  bool early_restart = true;
};

/// Options of kacc::solve::cg.
struct CgOptions {
  int max_iterations = 10000;  ///< iterations over all restarts
  double tolerance = 1e-10;    ///< stop when ||b - A x|| / ||b|| <= tolerance
};

}  // namespace solve
}  // namespace kacc
