// CB-GMRES: GMRES whose Krylov basis is stored compressed (fp32, fp16, bf16, scaled int32
// or int16) while every operation computes in fp64 (seed 003, Ginkgo's CB-GMRES).
//
//   example_cb_gmres                                   a generated 3-D convection-diffusion problem
//   example_cb_gmres [matrix.mtx[.gz] | generated] [PRECONDITIONER] [max_iterations]
//
// PRECONDITIONER: none, jacobi (the default), block-jacobi, adaptive-block-jacobi (each
// inverted block in the narrowest of fp16, bf16, fp32, fp64 that keeps it accurate), sai
// (sparse approximate inverse with A's pattern, fp64) or sai-fp16 (the same stored in fp16).
//
// For each basis format it solves A x = b with b = A * ones to ||b - A x|| / ||b|| <= 1e-10
// with GMRES(100) and prints iterations, restarts, why it stopped and the explicit
// residual. The basis is most of GMRES's memory traffic (each iteration reads it twice
// for the classical Gram-Schmidt and twice more for the reorthogonalisation), so a basis
// of half or a quarter of the bytes makes memory-bound iterations cheaper; the price is
// the rounding of the stored vectors, which can cost iterations but never accuracy: the
// explicit fp64 residual decides convergence.

#include <kacc/solve.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Vector = Kokkos::View<double*>;
namespace ks = kacc::sparse;
namespace kso = kacc::solve;

/// -laplace(u) + (1, 1, 1) . grad(u) on an n^3 grid, 7-point differences, upwind
/// convection with mesh Peclet number 0.5.
ks::CooMatrix convection_diffusion_3d(int n) {
  ks::CooMatrix a;
  a.num_rows = a.num_cols = std::int64_t(n) * n * n;
  const double pe = 0.5;
  const std::int64_t stride[3] = {1, n, std::int64_t(n) * n};
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const int c[3] = {x, y, z};
        const std::int64_t i = x + stride[1] * y + stride[2] * z;
        auto add = [&](std::int64_t j, double v) {
          a.row.push_back(i);
          a.col.push_back(j);
          a.val.push_back(v);
        };
        for (int d = 2; d >= 0; --d)
          if (c[d] > 0) add(i - stride[d], -1 - pe);
        add(i, 6 + 3 * pe);
        for (int d = 0; d < 3; ++d)
          if (c[d] + 1 < n) add(i + stride[d], -1);
      }
  return a;
}

template <class Format, class Matrix, class Preconditioner>
void run(const Matrix& A, const Vector& b, const kso::GmresOptions& options,
         const Preconditioner& M) {
  const Exec exec;
  Vector x("example::x", b.extent(0));  // x0 = 0
  const kso::SolverStatus s = kso::gmres<Format>(exec, A, b, x, options, M);
  std::printf("  %-7s basis: %5d iterations, %3d restarts, %-15s ||b - A x|| / ||b|| = %.2e\n",
              kacc::format_name<Format>(), s.iterations, s.restarts, kso::reason_name(s.reason),
              s.residual);
}

template <class Matrix, class Preconditioner>
void run_all(const Matrix& A, const Vector& b, const kso::GmresOptions& options,
             const Preconditioner& M) {
  run<double>(A, b, options, M);
  run<float>(A, b, options, M);
  run<kacc::fp16>(A, b, options, M);
  run<kacc::bf16>(A, b, options, M);
  run<kacc::scaled<std::int32_t>>(A, b, options, M);
  run<kacc::scaled<std::int16_t>>(A, b, options, M);
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);  // the application owns Kokkos
  try {
    const std::string file = argc > 1 && std::string(argv[1]) != "generated" ? argv[1] : "";
    const std::string preconditioner = argc > 2 ? argv[2] : "jacobi";
    kso::GmresOptions options;  // GMRES(100), tolerance 1e-10, right preconditioning
    if (argc > 3) options.max_iterations = std::atoi(argv[3]);
    const ks::CooMatrix coo =
        file.empty() ? convection_diffusion_3d(20) : ks::read_matrix_market(file);
    const auto A = ks::make_csr<double>(coo);
    Vector ones("example::ones", coo.num_cols), b("example::b", coo.num_rows);
    Kokkos::deep_copy(ones, 1.0);
    ks::spmv("N", 1.0, A, ones, 0.0, b);
    std::printf("%s: %lld rows, %zu entries, %s preconditioner\n",
                file.empty() ? "convection-diffusion 20^3" : file.c_str(),
                static_cast<long long>(coo.num_rows), coo.nnz(), preconditioner.c_str());
    if (preconditioner == "none") {
      run_all(A, b, options, kso::Identity());
    } else if (preconditioner == "jacobi") {
      run_all(A, b, options, kso::Jacobi<>(A));
    } else if (preconditioner == "block-jacobi") {
      run_all(A, b, options, kso::BlockJacobi<>(A));
    } else if (preconditioner == "adaptive-block-jacobi") {
      const kso::AdaptiveBlockJacobi<> M(A);
      std::printf("  blocks in fp16 %zu, bf16 %zu, fp32 %zu, fp64 %zu (%zu bytes)\n",
                  M.blocks_in(kso::block_format::fp16), M.blocks_in(kso::block_format::bf16),
                  M.blocks_in(kso::block_format::fp32), M.blocks_in(kso::block_format::fp64),
                  M.bytes());
      run_all(A, b, options, M);
    } else if (preconditioner == "sai") {
      run_all(A, b, options, kso::Sai<>(A));
    } else if (preconditioner == "sai-fp16") {
      run_all(A, b, options, kso::Sai<kacc::fp16>(A));
    } else {
      std::fprintf(stderr, "unknown preconditioner '%s'\n", preconditioner.c_str());
      return EXIT_FAILURE;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
