#pragma once
/// @file
/// What kacc::solve::gesv_ir is asked to do (ir_options) and what it reports (ir_status).

#include <string>
#include <vector>

namespace kacc {
namespace solve {

/// The storage format of the low-precision LU factors.
enum class factor_format { fp64, fp32, fp16, bf16 };
/// How the solution is refined: classic iterative refinement (each correction one solve
/// with the LU factors) or GMRES-IR (each correction from GMRES on A, preconditioned by the
/// LU factors, Carson and Higham).
enum class refinement { classic, gmres };
/// The precision of the residual b - A x: fp64, or accumulated and subtracted in
/// kacc::double_double and rounded to fp64 once.
enum class residual_precision { fp64, double_double };
/// Scaling before the factors are narrowed. `automatic`: for fp16 and bf16 factors only.
/// The scaling is Higham, Pranesh and Zounon's: two-sided diagonal equilibration (Ruiz
/// iterations, scales rounded to powers of two so they are exact), then a power-of-two
/// multiplier that brings the largest entry to fp16's largest value divided by a headroom
/// for the LU's element growth, max(10, n^(2/3)) (HPZ's 10, or partial pivoting's average
/// growth on random matrices, Trefethen and Schreiber), or to 1 for bf16, whose range is
/// fp32's. fp16 factors that overflow nonetheless (growth beyond that headroom) are
/// computed again with the multiplier divided by 256, at most twice.
enum class scaling { automatic, always, never };

/// Options of gesv_ir. The defaults are LAPACK dsgesv's: fp32 factors, classic
/// refinement, at most 30 refinement steps, fallback to an fp64 factorisation.
struct ir_options {
  factor_format factors = factor_format::fp32;             ///< format of the LU factors
  refinement method = refinement::classic;                 ///< classic or GMRES-IR
  residual_precision residual = residual_precision::fp64;  ///< precision of b - A x
  scaling scale = scaling::automatic;                      ///< see scaling
  /// Converged when ||b - A x||_inf <= tolerance * ||x||_inf * ||A||_inf; 0 (the default)
  /// means dsgesv's eps * sqrt(n), eps = 2^-53.
  double tolerance = 0;
  /// Most refinement steps (corrections) before giving up: dsgesv's 30.
  int max_outer = 30;
  /// After meeting the tolerance, keep refining while a step halves the residual norm and
  /// the backward error ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf) is above the
  /// unit roundoff 2^-53 (within max_outer steps in all; LAPACK dgerfs' rule), so x is as
  /// accurate as the refinement can make it (the step that fails to halve the residual is
  /// undone but counted, and its residual is in the history). Off: stop at the tolerance,
  /// as dsgesv.
  bool polish = true;
  /// A refinement stagnates, and is given up, when `stagnation_steps` steps in a row fail
  /// to halve the smallest residual norm seen before them. With GMRES-IR, one such step
  /// whose GMRES ran all `gmres_max_inner` iterations is enough: the steps after it have
  /// not been seen to move the residual (it stays flat to two digits) and each costs
  /// `gmres_max_inner` products with A and with the factors.
  int stagnation_steps = 3;
  /// GMRES-IR: Krylov vectors before a restart (n x (restart + 1) fp64 of workspace).
  /// Restarting early stalls on the ill-conditioned systems GMRES-IR is for.
  int gmres_restart = 100;
  /// GMRES-IR: GMRES stops when the preconditioned residual falls by this factor.
  double gmres_tolerance = 1e-8;
  /// GMRES-IR: most GMRES iterations per refinement step.
  int gmres_max_inner = 200;
  /// On failure of the low-precision solve, solve again with fp64 LU factors (dgesv).
  bool fallback = true;
};

/// How a gesv_ir call ended.
enum class ir_outcome {
  converged,      ///< the low-precision refinement met the tolerance
  fell_back,      ///< it did not (see reason); x is from the fp64 factorisation
  not_converged,  ///< it did not and the fallback is off: x is the last iterate, not a
                  ///< solution (NaN when no factors could be computed)
  failed          ///< no solution: bad input, or A is singular in fp64 too (see reason)
};

/// Why the low-precision solve was given up (or why it all failed).
enum class ir_reason {
  none,                  ///< converged
  narrowing_overflow,    ///< an entry of the (scaled) A overflows the factor format
  factorization_failed,  ///< zero pivot, or non-finite factors, in the factor format
  iteration_cap,         ///< max_outer refinement steps without convergence
  stagnation,            ///< the residual stopped falling (see ir_options::stagnation_steps)
  not_a_number,          ///< the iterate or its residual became NaN or infinite
  nonfinite_input,       ///< A or b holds NaN or infinity (x is set to NaN)
  singular               ///< the fp64 factorisation found an exactly zero pivot
};

/// A short name for reports: "iteration_cap", ...
inline const char* to_string(ir_reason r) {
  switch (r) {
    case ir_reason::none:
      return "none";
    case ir_reason::narrowing_overflow:
      return "narrowing_overflow";
    case ir_reason::factorization_failed:
      return "factorization_failed";
    case ir_reason::iteration_cap:
      return "iteration_cap";
    case ir_reason::stagnation:
      return "stagnation";
    case ir_reason::not_a_number:
      return "not_a_number";
    case ir_reason::nonfinite_input:
      return "nonfinite_input";
    case ir_reason::singular:
      return "singular";
  }
  return "?";
}

/// A short name for reports: "converged", ...
inline const char* to_string(ir_outcome o) {
  switch (o) {
    case ir_outcome::converged:
      return "converged";
    case ir_outcome::fell_back:
      return "fell_back";
    case ir_outcome::not_converged:
      return "not_converged";
    case ir_outcome::failed:
      return "failed";
  }
  return "?";
}

/// What gesv_ir reports.
struct ir_status {
  ir_outcome outcome = ir_outcome::failed;  ///< how it ended
  ir_reason reason = ir_reason::none;       ///< why the low-precision solve was given up
  int outer_iterations = 0;                 ///< refinement steps (corrections) taken
  int inner_iterations = 0;                 ///< GMRES iterations over all steps
  /// ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf) of the returned x, with the
  /// residual in the chosen precision (NaN when x is NaN).
  double backward_error = 0;
  /// ||b - A x||_inf of each low-precision iterate, the first one included.
  std::vector<double> residual_history;
  /// Whether x is a solution: the refinement met the tolerance, or the fp64 factors gave a
  /// finite x (as dgesv's; fell_back).
  bool ok() const { return outcome == ir_outcome::converged || outcome == ir_outcome::fell_back; }
};

}  // namespace solve
}  // namespace kacc
