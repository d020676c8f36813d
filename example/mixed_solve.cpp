// A dense system solved to fp64 accuracy from LU factors in a lower precision:
// kacc::solve::gesv_ir factors A in fp32 (classic iterative refinement, as LAPACK's
// dsgesv) and in fp16 (GMRES-IR, with the matrix scaled into fp16's range first), and
// reports how each solve ended; then it solves for three right-hand sides at once (one
// fp32 factorisation, as dsgesv with NRHS = 3). A is a 2D Laplacian-like matrix with
// entries of size 1e5, which would overflow fp16 (largest 65504) without the scaling.
//
// The program fails unless every solve reports "converged" with a backward error below
// 1e-15.

#include <kacc/solve.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <vector>

using Exec = Kokkos::DefaultExecutionSpace;

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const int n = 300;
  Kokkos::View<double**, Kokkos::LayoutLeft> A("A", n, n);
  Kokkos::View<double*> b("b", n), x("x", n);
  Kokkos::View<double**, Kokkos::LayoutLeft> B("B", n, 3), X("X", n, 3);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(const int i) {
        A(i, i) = 4.5e5;
        if (i > 0) A(i, i - 1) = -1e5;
        if (i + 1 < n) A(i, i + 1) = -1e5;
        if (i >= 17) A(i, i - 17) = -1e5;
        if (i + 17 < n) A(i, i + 17) = -1e5;
        b(i) = 1.0 + (i % 7);
        for (int j = 0; j < 3; ++j) B(i, j) = j == 0 ? 1.0 : (i % (j + 2)) - 0.5 * j;
      });

  int failures = 0;
  auto report = [&](const char* what, const kacc::solve::ir_status& s) {
    std::printf("%-26s %-10s reason %-20s steps %d (GMRES %d)  backward error %.2e\n", what,
                kacc::solve::to_string(s.outcome), kacc::solve::to_string(s.reason),
                s.outer_iterations, s.inner_iterations, s.backward_error);
    if (s.outcome != kacc::solve::ir_outcome::converged || !(s.backward_error < 1e-15)) ++failures;
  };

  kacc::solve::ir_options fp32;  // the defaults: fp32 factors, classic refinement
  report("fp32 LU, classic", kacc::solve::gesv_ir(Exec(), A, b, x, fp32));

  kacc::solve::ir_options fp16;
  fp16.factors = kacc::solve::factor_format::fp16;
  fp16.method = kacc::solve::refinement::gmres;
  report("fp16 LU (scaled), GMRES-IR", kacc::solve::gesv_ir(Exec(), A, b, x, fp16));

  const std::vector<kacc::solve::ir_status> columns = kacc::solve::gesv_ir(Exec(), A, B, X, fp32);
  for (const auto& s : columns) report("fp32 LU, classic, B(:, j)", s);
  return failures == 0 ? 0 : 1;
}
