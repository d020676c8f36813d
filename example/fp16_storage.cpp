// Store in fp16, compute in fp64.
//
// A vector kept in IEEE half precision takes a quarter of the memory (and of the memory
// traffic) of fp64, while every read converts the entry to double in registers, so the
// arithmetic, the accumulation and the result stay fp64. Only the storage rounding of
// each entry (relative 2^-11) remains; that is the whole price.
//
// Build: link kacc::kacc (find_package(kacc)); this program initialises Kokkos itself
// because it is the application: kacc never calls Kokkos::initialize.

#include <kacc/core/view_algorithms.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

// One kernel source for every storage format: read entries with kacc::convert<double>
// (or static_cast<double>) and the same template takes a plain Kokkos::View<double*>
// and a kacc::View stored in fp16.
template <class Exec, class V>
double sum_of_squares(const Exec& exec, const V& x) {
  double sum = 0;
  Kokkos::parallel_reduce(
      "example::sum_of_squares", Kokkos::RangePolicy<Exec>(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(const int i, double& partial) {
        const double xi = kacc::convert<double>(x(i));  // fp16 -> fp64 in a register
        partial += xi * xi;
      },
      sum);
  return sum;
}

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);  // the application owns Kokkos
  {
    using Exec = Kokkos::DefaultExecutionSpace;
    const Exec exec;  // kacc runs wherever the application's instance says
    const int n = 1 << 20;

    // The application's data, in fp64.
    Kokkos::View<double*> x64("example::x64", n);
    Kokkos::parallel_for(
        "example::fill", Kokkos::RangePolicy<Exec>(exec, 0, n),
        KOKKOS_LAMBDA(const int i) { x64(i) = 1.0 + 1.0 / (1 + i % 97); });

    // The same vector stored in fp16: 2 bytes per entry, read and written as double.
    kacc::View<double*, kacc::StoredAs<kacc::fp16>> x16("example::x16", n);
    kacc::deep_copy(exec, x16, x64);  // rounds each entry to fp16, in parallel in exec

    // Writes through the view round to fp16 (here exactly: halving is exact in fp16).
    Kokkos::parallel_for(
        "example::scale", Kokkos::RangePolicy<Exec>(exec, 0, n),
        KOKKOS_LAMBDA(const int i) { x16(i) *= 0.5; });
    Kokkos::parallel_for(
        "example::scale64", Kokkos::RangePolicy<Exec>(exec, 0, n),
        KOKKOS_LAMBDA(const int i) { x64(i) *= 0.5; });

    const double reference = sum_of_squares(exec, x64);
    const double mixed = sum_of_squares(exec, x16);
    exec.fence();

    // Each entry carries a relative error of at most u = 2^-11 from storage, so each
    // square at most 2u + u^2, and so does the sum of positive terms.
    const double u = std::ldexp(1.0, -11);
    const double bound = 2 * u + u * u;
    const double relative_error = std::fabs(mixed - reference) / reference;
    std::printf(
        "n = %d, storage %s (%zu bytes/entry) vs %s (%zu bytes/entry)\n", n,
        kacc::format_name<kacc::format_t<decltype(x16)>>(), kacc::bytes_per_entry<decltype(x16)>(),
        kacc::format_name<kacc::format_t<decltype(x64)>>(), kacc::bytes_per_entry<decltype(x64)>());
    std::printf("sum of squares: fp64 storage %.17g, fp16 storage %.17g\n", reference, mixed);
    std::printf("relative error %.3e (bound %.3e)\n", relative_error, bound);
    if (!(relative_error <= bound)) {
      std::printf("FAILED: error above the storage-rounding bound\n");
      return EXIT_FAILURE;
    }
  }
  return EXIT_SUCCESS;
}
