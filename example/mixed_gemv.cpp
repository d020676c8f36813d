// Mixed-precision GEMV in an application loop: a Jacobi iteration for A x = b whose
// matrix is STORED in fp32 while the vectors and all arithmetic are fp64.
//
// A dense matrix-vector product is memory bound and the matrix is almost all of its
// traffic, so fp32 storage halves the bytes per iteration. Because kacc::blas::gemv
// converts each entry to double in registers and accumulates in double, the iteration
// still converges to fp64 accuracy for the stored matrix (residual near 1e-16), where an
// all-fp32 solver would stall near 1e-7. What fp32 storage costs is a perturbation of the
// data by at most 2^-24 per entry, which moves the solution by about cond(A) * 2^-24.

#include <kacc/blas/gemv.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/core/view_algorithms.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

using Exec = Kokkos::DefaultExecutionSpace;
using Vector = Kokkos::View<double*>;

// Jacobi sweeps x += D^-1 (b - A x) until ||b - A x|| <= tol ||b||. Written once for any
// matrix view: A(i, i) reads as double whatever the storage format.
template <class Matrix>
int jacobi(const Exec& exec, const Matrix& A, const Vector& b, const Vector& x, double tol,
           int max_iterations) {
  const int n = static_cast<int>(b.extent(0));
  Vector r(Kokkos::view_alloc(Kokkos::WithoutInitializing, "example::r"), n);
  const double b_norm = kacc::blas::nrm2(exec, b);
  Kokkos::deep_copy(exec, x, 0.0);
  for (int iteration = 0; iteration < max_iterations; ++iteration) {
    Kokkos::deep_copy(exec, r, b);
    kacc::blas::gemv(exec, "N", -1.0, A, x, 1.0, r);  // r = b - A x: fp32 A, fp64 math
    const double r_norm = kacc::blas::nrm2(exec, r);
    if (r_norm <= tol * b_norm) return iteration;
    Kokkos::parallel_for(
        "example::jacobi_update", Kokkos::RangePolicy<Exec>(exec, 0, n),
        KOKKOS_LAMBDA(const int i) { x(i) += r(i) / kacc::convert<double>(A(i, i)); });
  }
  return -1;  // not converged
}

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);  // the application owns Kokkos
  int status = EXIT_SUCCESS;
  {
    const Exec exec;
    const int n = 400;

    // A diagonally dominant matrix (off-diagonal row sums below 0.65 of the diagonal),
    // assembled in fp64 by the application...
    Kokkos::View<double**> A64("example::A64", n, n);
    Kokkos::parallel_for(
        "example::assemble", Kokkos::RangePolicy<Exec>(exec, 0, n), KOKKOS_LAMBDA(const int i) {
          for (int j = 0; j < n; ++j) {
            const double d = i > j ? i - j : j - i;
            A64(i, j) = i == j ? 1.0 + 0.1 * (i % 7) : 0.5 / ((1.0 + d) * (1.0 + d));
          }
        });
    // ... and kept in fp32: half the memory, half the traffic of every GEMV.
    kacc::View<double**, kacc::StoredAs<float>> A32("example::A32", n, n);
    kacc::deep_copy(exec, A32, A64);

    Vector b("example::b", n), x64("example::x64", n), x32("example::x32", n);
    Kokkos::deep_copy(exec, b, 1.0);

    const double tol = 1e-14;
    const int it64 = jacobi(exec, A64, b, x64, tol, 200);
    const int it32 = jacobi(exec, A32, b, x32, tol, 200);

    // The two solutions differ by the fp32 rounding of the matrix, amplified by cond(A)
    // (below (1 + 0.65) / (1 - 0.65) < 5 for this matrix).
    Vector diff("example::diff", n);
    Kokkos::parallel_for(
        "example::difference", Kokkos::RangePolicy<Exec>(exec, 0, n),
        KOKKOS_LAMBDA(const int i) { diff(i) = x32(i) - x64(i); });
    const double relative_difference = kacc::blas::nrm2(exec, diff) / kacc::blas::nrm2(exec, x64);
    const double bound = 5 * 2 * std::ldexp(1.0, -24);

    std::printf("A: %d x %d, %zu bytes/entry stored (%zu for fp64)\n", n, n,
                kacc::bytes_per_entry<decltype(A32)>(), kacc::bytes_per_entry<decltype(A64)>());
    std::printf("Jacobi to ||b - Ax|| <= %.0e ||b||: fp64 A in %d iterations, fp32 A in %d\n", tol,
                it64, it32);
    std::printf("||x32 - x64|| / ||x64|| = %.3e (data rounding bound %.3e)\n", relative_difference,
                bound);
    if (it64 < 0 || it32 < 0 || !(relative_difference <= bound)) {
      std::printf("FAILED\n");
      status = EXIT_FAILURE;
    }
  }
  return status;
}
