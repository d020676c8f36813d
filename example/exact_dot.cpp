// Accuracy as a choice: one ill-conditioned dot product with each of kacc's
// accumulators. x . y is 1 exactly, but the terms reach 2^100 and cancel in pairs, so
// the condition number 2 sum |x_i y_i| / |x . y| is about 1e35:
//
//   double                      a plain fp64 sum: the rounding errors of the large terms
//                               swamp the result;
//   kacc::compensated<double>   Dot2 (Ogita-Rump-Oishi): as if computed in twice the
//                               working precision; not enough for every condition number;
//   kacc::double_double         106-bit accumulation: the same order of accuracy;
//   kacc::exact<double>         the correctly rounded exact sum, here 1, for every
//                               input, thread count and layout.
//
// The program fails unless exact<double> gives 1, in the default execution space and on
// the host.

#include <kacc/blas/dot.hpp>
#include <kacc/core/double_double.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>

using Exec = Kokkos::DefaultExecutionSpace;
using Vector = Kokkos::View<double*>;

// x = (1, a_1, a_1, a_2, a_2, ...), y = (1, b_1, -b_1, b_2, -b_2, ...): every a_k b_k is
// cancelled by a_k (-b_k), but they land in different partial sums.
void fill(const Vector& x, const Vector& y) {
  auto hx = Kokkos::create_mirror_view(x);
  auto hy = Kokkos::create_mirror_view(y);
  const int n = static_cast<int>(x.extent(0));
  hx(0) = 1.0;
  hy(0) = 1.0;
  for (int i = 1; i + 1 < n; i += 2) {
    const double a = std::ldexp(1.0 + (i % 97) / 128.0, 50 - (i % 37));
    const double b = std::ldexp(1.0 + (i % 89) / 64.0, 49 - (i % 41));
    hx(i) = a;
    hy(i) = b;
    hx(i + 1) = a;
    hy(i + 1) = -b;
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(y, hy);
}

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int n = 100001;  // odd: 1 and 50000 pairs
  Vector x("x", n), y("y", n);
  fill(x, y);
  const Exec exec;
  const double plain = kacc::blas::dot<double, double>(exec, x, y);
  const double comp = kacc::blas::dot<double, kacc::compensated<double>>(exec, x, y);
  const double dd = kacc::blas::dot<double, kacc::double_double>(exec, x, y);
  const double exact = kacc::blas::dot<double, kacc::exact<double>>(exec, x, y);
  std::printf("accumulator               x . y\n");
  std::printf("double                    %.17g\n", plain);
  std::printf("kacc::compensated<double> %.17g\n", comp);
  std::printf("kacc::double_double       %.17g\n", dd);
  std::printf("kacc::exact<double>       %.17g\n", exact);
  // The same exact value on the host, with its own split of the work.
  const double exact_host = kacc::blas::dot<double, kacc::exact<double>>(
      Kokkos::DefaultHostExecutionSpace(),
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x),
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y));
  if (exact != 1.0 || exact_host != 1.0) {
    std::printf("exact<double> is not 1: %.17g (host: %.17g)\n", exact, exact_host);
    return 1;
  }
  return 0;
}
