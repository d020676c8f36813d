#pragma once
/// @file
/// The operators kacc's Krylov solvers take: a kacc::sparse::CsrMatrix or EllMatrix (values
/// in any format, applied with kacc::sparse::spmv in fp64), or a user callable
/// `op(x, y)` that writes y = A x for `Kokkos::View<double*, Memory>` x and y (x must be
/// left unchanged). And the checks every solver makes of its arguments.

#include <kacc/blas/axpy.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/core/view_algorithms.hpp>
#include <kacc/solve/status.hpp>
#include <kacc/sparse/spmv.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kacc {
namespace solve {

/// The preconditioner that does nothing (M = I); the solvers skip it entirely.
struct Identity {
  /// z = r.
  template <class Exec, class R, class Z>
  void apply(const Exec& exec, const R& r, const Z& z) const {
    kacc::deep_copy(exec, z, r);
  }
};

namespace detail {

template <class Op>
inline constexpr bool is_sparse_matrix_v = sparse::is_csr<Op>::value || sparse::is_ell<Op>::value;

template <class M>
inline constexpr bool is_identity_v = std::is_same<M, Identity>::value;

[[noreturn]] inline void fail(const char* solver, const std::string& what) {
  throw std::invalid_argument(std::string("kacc::solve::") + solver + ": " + what);
}

/// Throws unless A is square with as many rows as b and x have entries (a user callable
/// is taken to have b's size).
template <class Op, class B, class X>
void check_sizes(const char* solver, const Op& A, const B& b, const X& x) {
  const std::size_t n = b.extent(0);
  if (x.extent(0) != n)
    fail(solver,
         "b has " + std::to_string(n) + " entries but x has " + std::to_string(x.extent(0)));
  if constexpr (is_sparse_matrix_v<Op>) {
    const auto rows = static_cast<std::size_t>(A.num_rows());
    const auto cols = static_cast<std::size_t>(A.num_cols());
    if (rows != cols)
      fail(solver,
           "A must be square; it is " + std::to_string(rows) + " x " + std::to_string(cols));
    if (rows != n)
      fail(solver, "A is " + std::to_string(rows) + " x " + std::to_string(cols) + " but b has " +
                       std::to_string(n) + " entries");
  }
}

/// Throws for a tolerance that is negative or NaN or a negative iteration cap.
inline void check_stopping(const char* solver, double tolerance, int max_iterations) {
  if (!(tolerance >= 0)) fail(solver, "tolerance = " + std::to_string(tolerance) + " must be >= 0");
  if (max_iterations < 0)
    fail(solver, "max_iterations = " + std::to_string(max_iterations) + " must be >= 0");
}

/// y = A x in fp64, a matrix's rows accumulated in Acc (void: fp64). A callable gets x as
/// an fp64 Kokkos View: other views are converted into `staging` first; exec is fenced
/// before the call, so the callable sees finished data.
template <class Acc = void, class Exec, class Op, class X, class Y, class Staging>
void apply_operator(const Exec& exec, const Op& A, const X& x, const Y& y, const Staging& staging) {
  if constexpr (is_sparse_matrix_v<Op>) {
    sparse::spmv<void, Acc>(exec, "N", 1.0, A, x, 0.0, y);
  } else {
    if constexpr (std::is_same<X, Staging>::value) {
      exec.fence();
      A(x, y);
    } else {
      kacc::deep_copy(exec, staging, x);
      exec.fence();
      A(staging, y);
    }
  }
}

inline bool finite(double v) {
  return std::isfinite(v);
}

}  // namespace detail
}  // namespace solve
}  // namespace kacc
