// CG on a symmetric positive definite system with preconditioners whose data is stored
// compressed: Jacobi, block-Jacobi (in fp64, in fp16, and with a format per block) and the
// factorised sparse approximate inverse M = G^T G (FSAI, the symmetric relative of SAI that
// CG needs; in fp64 and fp16, with A's pattern and A^2's), every operation in fp64.
//
//   example_spd_cg                                   a generated 3-D Poisson problem
//   example_spd_cg [matrix.mtx[.gz] | generated] [max_iterations]
//
// It solves A x = b with b = A * ones to ||b - A x|| / ||b|| <= 1e-10 and prints per
// preconditioner the iterations, why CG stopped and the explicit residual. Building a
// preconditioner can fail on a matrix that is not SPD (FSAI names the entry or row): the
// example then says so and goes on.

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

/// -div(k grad u) on an n^3 grid, 7-point differences, with a coefficient k that varies
/// from 1 to 100 across the grid (so the diagonal varies, which Jacobi sees).
ks::CooMatrix variable_poisson_3d(int n) {
  ks::CooMatrix a;
  a.num_rows = a.num_cols = std::int64_t(n) * n * n;
  const std::int64_t stride[3] = {1, n, std::int64_t(n) * n};
  auto k = [n](int x, int y, int z) { return 1.0 + 99.0 * (x + y + z) / (3.0 * n); };
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const std::int64_t i = x + stride[1] * y + stride[2] * z;
        double diagonal = 0;
        auto couple = [&](int d, int step) {
          int o[3] = {x, y, z};
          o[d] += step;
          // The face coefficient is the mean of both sides: the matrix stays symmetric.
          const double face = 0.5 * (k(x, y, z) + k(o[0], o[1], o[2]));
          diagonal += face;
          if (o[d] >= 0 && o[d] < n) {
            a.row.push_back(i);
            a.col.push_back(i + step * stride[d]);
            a.val.push_back(-face);
          }
        };
        for (int d = 2; d >= 0; --d) couple(d, -1);
        for (int d = 0; d < 3; ++d) couple(d, +1);
        a.row.push_back(i);
        a.col.push_back(i);
        a.val.push_back(diagonal);
      }
  return a;
}

/// Solves with M (built by `make`, which may throw for a matrix that is not SPD).
template <class Matrix, class Make>
void run(const char* name, const Matrix& A, const Vector& b, const kso::CgOptions& options,
         const Make& make) {
  try {
    const auto M = make();
    Vector x("example::x", b.extent(0));  // x0 = 0
    const kso::SolverStatus s = kso::cg(Exec(), A, b, x, options, M);
    std::printf("  %-18s %5d iterations, %-15s ||b - A x|| / ||b|| = %.2e\n", name, s.iterations,
                kso::reason_name(s.reason), s.residual);
  } catch (const std::invalid_argument& e) {
    std::printf("  %-18s not built: %s\n", name, e.what());
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);  // the application owns Kokkos
  try {
    const std::string file = argc > 1 && std::string(argv[1]) != "generated" ? argv[1] : "";
    kso::CgOptions options;  // tolerance 1e-10
    if (argc > 2) options.max_iterations = std::atoi(argv[2]);
    const ks::CooMatrix coo = file.empty() ? variable_poisson_3d(24) : ks::read_matrix_market(file);
    const auto A = ks::make_csr<double>(coo);
    Vector ones("example::ones", coo.num_cols), b("example::b", coo.num_rows);
    Kokkos::deep_copy(ones, 1.0);
    ks::spmv("N", 1.0, A, ones, 0.0, b);
    std::printf("%s: %lld rows, %zu entries\n",
                file.empty() ? "variable-coefficient Poisson 24^3" : file.c_str(),
                static_cast<long long>(coo.num_rows), coo.nnz());
    run("none", A, b, options, [] { return kso::Identity(); });
    run("Jacobi", A, b, options, [&] { return kso::Jacobi<>(A); });
    run("block-Jacobi", A, b, options, [&] { return kso::BlockJacobi<>(A); });
    run("block-Jacobi fp16", A, b, options, [&] { return kso::BlockJacobi<kacc::fp16>(A); });
    run("adaptive BJ", A, b, options, [&] { return kso::AdaptiveBlockJacobi<>(A); });
    run("FSAI", A, b, options, [&] { return kso::Fsai<>(A); });
    run("FSAI fp16", A, b, options, [&] { return kso::Fsai<kacc::fp16>(A); });
    run("FSAI(A^2) fp16", A, b, options,
        [&] { return kso::Fsai<kacc::fp16>(A, kso::sai_pattern::a_squared); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
