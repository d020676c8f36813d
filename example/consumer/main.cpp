// The smallest kacc application: a vector stored in fp32 and used in fp64.
#include <kacc/core/view_algorithms.hpp>
#include <kacc/version.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);  // kacc initialises nothing; the application does
  int status = EXIT_SUCCESS;
  {
    const int n = 1000;
    kacc::View<double*, kacc::StoredAs<float>> x("app::x", n);  // 4 bytes/entry, fp64 math
    Kokkos::parallel_for(
        "app::fill", n, KOKKOS_LAMBDA(const int i) { x(i) = 0.5 * (i + 1); });  // exact in fp32
    double sum = 0;
    Kokkos::parallel_reduce(
        "app::sum", n, KOKKOS_LAMBDA(const int i, double& s) { s += x(i); }, sum);
    const double expected = 0.25 * n * (n + 1.0);
    std::printf("kacc %s: sum = %.1f (expected %.1f)\n", KACC_VERSION_STRING, sum, expected);
    if (sum != expected) status = EXIT_FAILURE;
  }
  return status;
}
