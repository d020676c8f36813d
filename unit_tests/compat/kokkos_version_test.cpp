// What differs between Kokkos versions: the math aliases in config.hpp, the View's rank
// and types under Kokkos 5's mdspan-based View, and the mdspan accessor policy where
// Kokkos has View::to_mdspan (4.4 and newer).
#include <kacc/kacc.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

// The kacc::math aliases evaluated in a kernel of the default execution space, one flag
// per check (1: holds). A free function, not the test body: nvcc refuses a device lambda
// inside a GoogleTest body (a private member function of the generated class).
Kokkos::View<int*, Kokkos::HostSpace> math_alias_checks_in_kernel() {
  Kokkos::View<int*> flags("flags", 4);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Kokkos::parallel_for(
      "compat::math", 1, KOKKOS_LAMBDA(int) {
        flags(0) = kacc::math::isnan(nan);
        flags(1) = kacc::math::isinf(1.0 / kacc::math::fabs(-0.0));
        flags(2) = kacc::math::isfinite(kacc::math::sqrt(2.0));
        flags(3) = kacc::math::fabs(-2.5) == 2.5;
      });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flags);
}

}  // namespace

TEST(KokkosCompat, MathAliasesWorkInKernels) {
  const auto h = math_alias_checks_in_kernel();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(h(i), 1) << "check " << i;
}

TEST(KokkosCompat, ViewTypesMatchKokkos) {
  using V = kacc::View<double**, Kokkos::LayoutLeft, kacc::StoredAs<kacc::bf16>>;
  static_assert(V::rank == 2, "rank follows the data type");
  static_assert(std::is_same<V::storage_view_type::array_layout, Kokkos::LayoutLeft>::value,
                "layout passes through");
  static_assert(std::is_same<V::storage_view_type::non_const_value_type, kacc::bf16>::value,
                "stored as bf16");
  V a("a", 3, 5);
  EXPECT_EQ(a.extent(0), 3u);
  EXPECT_EQ(a.extent(1), 5u);
  EXPECT_EQ(a.stride(1), a.storage().stride(1));
  EXPECT_EQ(a.label(), "a");
}

// The accessor policy on its own, on every Kokkos version.
TEST(KokkosCompat, MdspanAccessorPolicyHandsOutProxies) {
  using A = kacc::mdspan_accessor<double, kacc::fp16>;
  kacc::fp16 storage[2] = {kacc::fp16(0.0), kacc::fp16(0.0)};
  A acc;
  acc.access(acc.offset(storage, 1), 0) = 0.1;
  EXPECT_EQ(static_cast<double>(storage[1]), static_cast<double>(kacc::fp16(0.1)));
  EXPECT_EQ(static_cast<double>(storage[0]), 0.0);
}

// Through View::to_mdspan, which Kokkos has from 4.4 on (older versions have no such
// function, so there is nothing to test there).
#if KACC_KOKKOS_VERSION_AT_LEAST(4, 4)
TEST(KokkosCompat, MdspanAccessorThroughToMdspan) {
  Kokkos::View<float*, Kokkos::HostSpace> f("f", 3);
  auto m = f.to_mdspan(kacc::mdspan_accessor<double, float>{});
  m(1) = 1.0 / 3;
  EXPECT_EQ(f(1), static_cast<float>(1.0 / 3));
  const double widened = m(1);
  EXPECT_EQ(widened, static_cast<double>(static_cast<float>(1.0 / 3)));
  m(2) += 0.5;
  EXPECT_EQ(f(2), 0.5f);
}
#endif
