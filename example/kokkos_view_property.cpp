// Existing Kokkos code, new storage: a function template written for
// Kokkos::View<double*, P...> takes a Kokkos::View<double*, kacc::StoredAs<float>>
// unchanged, reading and writing doubles while the entries are stored as floats.
//
// Only on a Kokkos whose View has the customization hooks (KACC_HAS_KOKKOS_VIEW_PROPERTY:
// Kokkos develop 4.6.99 from June 2025 on, Kokkos 5), where kacc/core/kokkos_view_property.hpp
// makes StoredAs a View property; elsewhere kacc::View<double*, kacc::StoredAs<float>>
// is the spelling. This program is built only there (example/CMakeLists.txt).

#include <kacc/core/kokkos_view_property.hpp>
#include <kacc/kacc.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

// The user's code, as it was written for fp64 Views: nothing in it knows about kacc.
template <class... Properties>
double norm2_squared(const Kokkos::View<double*, Properties...>& x) {
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "user::norm2_squared", x.extent(0),
      KOKKOS_LAMBDA(const int i, double& partial) { partial += x(i) * x(i); }, sum);
  return sum;
}

template <class... Properties>
void scale(const Kokkos::View<double*, Properties...>& x, double a) {
  Kokkos::parallel_for(
      "user::scale", x.extent(0), KOKKOS_LAMBDA(const int i) { x(i) *= a; });
}

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  {
    const int n = 1000;
    Kokkos::View<double*> x64("example::x64", n);
    Kokkos::parallel_for(
        "example::fill", n, KOKKOS_LAMBDA(const int i) { x64(i) = 1.0 / (1 + i); });

    // The same vector with 4-byte entries: a Kokkos View, filled by Kokkos::deep_copy
    // (which rounds each entry once to float), sliced by Kokkos::subview.
    Kokkos::View<double*, kacc::StoredAs<float>> x32("example::x32", n);
    Kokkos::deep_copy(x32, x64);
    scale(Kokkos::subview(x32, Kokkos::make_pair(0, n / 2)), 2.0);  // exact in float
    scale(Kokkos::subview(x64, Kokkos::make_pair(0, n / 2)), 2.0);

    const double reference = norm2_squared(x64);
    const double stored = norm2_squared(x32);
    // kacc's kernels take it too: the same sum through kacc::blas::dot.
    const double by_kacc = kacc::blas::dot(x32, x32);

    // Each entry carries a relative error of at most u = 2^-24 from storage, so each
    // square at most 2u + u^2, and so does the sum of these positive terms (summation
    // error in fp64 aside: n 2^-53 is far below it).
    const double u = 0x1p-24, bound = 2 * u + u * u + n * 0x1p-53;
    const double error = std::abs(stored - reference) / reference;
    std::printf("entries of %s: %zu bytes each (Kokkos::View<double*> %zu)\n",
                kacc::format_name<kacc::format_t<decltype(x32)>>(),
                kacc::bytes_per_entry<decltype(x32)>(), sizeof(double));
    std::printf("sum of squares: fp64 %.17g, float storage %.17g, kacc::blas::dot %.17g\n",
                reference, stored, by_kacc);
    std::printf("relative error %.3e (bound %.3e)\n", error, bound);
    if (!(error <= bound) || !(std::abs(by_kacc - stored) <= n * 0x1p-52 * stored)) {
      std::printf("FAILED\n");
      return EXIT_FAILURE;
    }
  }
  return EXIT_SUCCESS;
}
