// What kacc refuses at compile time for Kokkos::View<T, kacc::StoredAs<F>>, one case per
// KACC_REFUSED_CASE; each must fail to compile with kacc's message (see CMakeLists.txt).
#include <kacc/core/kokkos_view_property.hpp>

using Fp16Cube = Kokkos::View<double***, kacc::StoredAs<kacc::fp16>>;
using Fp16View = Kokkos::View<double*, kacc::StoredAs<kacc::fp16>>;

void refused(const Fp16Cube& a, const Fp16Cube& b, const Fp16View& v) {
#if KACC_REFUSED_CASE == 1
  Kokkos::deep_copy(a, b);  // rank 3
  (void)v;
#elif KACC_REFUSED_CASE == 2
  auto m = Kokkos::create_mirror_view(Kokkos::view_alloc(Kokkos::WithoutInitializing), v);
  (void)a, (void)b, (void)m;
#elif KACC_REFUSED_CASE == 3
  Kokkos::deep_copy(v, a);  // ranks differ
#endif
}
