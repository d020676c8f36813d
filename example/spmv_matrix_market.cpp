// SpMV on a Matrix Market file: the matrix values stored in fp32, the vectors in fp64.
//
//   example_spmv_matrix_market path/to/matrix.mtx
//   example_spmv_matrix_market sparse/data/matrices/bcsstk13.mtx.gz   (gzip is read directly)
//
// Sparse matrix-vector products are memory bound; with 4-byte column indices, fp32
// values cut the bytes per nonzero from 12 to 8. The product is still accumulated in
// fp64, so the only difference from an fp64 matrix is the rounding of each stored value
// (relative 2^-24): |y32(i) - y64(i)| <= 2^-24 (|A| |x|)(i), plus fp64 rounding.

#include <kacc/sparse/csr_matrix.hpp>
#include <kacc/sparse/matrix_market.hpp>
#include <kacc/sparse/spmv.hpp>

#include <Kokkos_Core.hpp>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);  // the application owns Kokkos
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s matrix.mtx\n", argv[0]);
    return EXIT_FAILURE;
  }
  int status = EXIT_SUCCESS;
  try {
    using Exec = Kokkos::DefaultExecutionSpace;
    const Exec exec;

    // Read on the host (double), then build the device matrices: the fp32 one rounds each
    // value once, here, and never again.
    const kacc::sparse::CooMatrix coo = kacc::sparse::read_matrix_market(argv[1]);
    const auto A32 = kacc::sparse::make_csr<double, float>(coo);
    const auto A64 = kacc::sparse::make_csr<double>(coo);
    const int rows = A32.num_rows(), cols = A32.num_cols();

    // x(j) = 1 + j / cols, an fp64 vector; y = A x with each matrix.
    Kokkos::View<double*> x("example::x", cols), y32("example::y32", rows),
        y64("example::y64", rows);
    Kokkos::parallel_for(
        "example::fill_x", Kokkos::RangePolicy<Exec>(exec, 0, cols),
        KOKKOS_LAMBDA(const int j) { x(j) = 1.0 + double(j) / cols; });
    kacc::sparse::spmv(exec, "N", 1.0, A32, x, 0.0, y32);
    kacc::sparse::spmv(exec, "N", 1.0, A64, x, 0.0, y64);
    exec.fence();

    // Check every row against the storage-rounding bound, with |A| |x| from the file.
    auto h32 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y32);
    auto h64 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y64);
    std::vector<double> abs_ax(rows, 0.0);
    for (std::size_t k = 0; k < coo.nnz(); ++k)
      abs_ax[coo.row[k]] += std::fabs(coo.val[k]) * (1.0 + double(coo.col[k]) / cols);
    const double u32 = std::ldexp(1.0, -24);
    double worst = 0;  // largest error in units of the bound
    for (int i = 0; i < rows; ++i) {
      const double bound = (u32 + 64 * DBL_EPSILON) * abs_ax[i];
      const double error = std::fabs(h32(i) - h64(i));
      const double ratio = bound > 0 ? error / bound : (error > 0 ? INFINITY : 0.0);
      worst = ratio > worst ? ratio : worst;
    }

    std::printf("%s: %d x %d, %zu nonzeros\n", argv[1], rows, cols, A32.nnz());
    std::printf("matrix bytes: fp32 values %zu, fp64 values %zu\n", A32.bytes(), A64.bytes());
    std::printf("y(0): fp32 storage %.17g, fp64 storage %.17g\n", h32(0), h64(0));
    std::printf("largest |y32 - y64| relative to its bound: %.3f (must be <= 1)\n", worst);
    if (!(worst <= 1.0)) {
      std::printf("FAILED\n");
      status = EXIT_FAILURE;
    }
  } catch (const std::exception& e) {  // a missing or malformed file, bad arguments
    std::fprintf(stderr, "error: %s\n", e.what());
    status = EXIT_FAILURE;
  }
  return status;
}
