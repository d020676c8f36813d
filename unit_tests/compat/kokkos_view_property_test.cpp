// Kokkos::View<double*, kacc::StoredAs<kacc::fp16>> as a real Kokkos View, where Kokkos
// has the View customization hooks (KACC_HAS_KOKKOS_VIEW_PROPERTY): 2-byte storage,
// proxies in kernels, user function templates written for Kokkos::View<double*> taking
// it, const conversion sharing the allocation. Elsewhere this file has no tests.
#include <kacc/core/kokkos_view_property.hpp>
#include <kacc/kacc.hpp>

#include <gtest/gtest.h>

#if defined(KACC_HAS_KOKKOS_VIEW_PROPERTY)

namespace {

using Fp16View = Kokkos::View<double*, kacc::StoredAs<kacc::fp16>>;
static_assert(Kokkos::is_view_v<Fp16View>, "a Kokkos::View");
static_assert(std::is_same_v<Fp16View::value_type, double>, "values are doubles");
static_assert(
    std::is_same_v<std::remove_pointer_t<decltype(std::declval<Fp16View>().data())>, kacc::fp16>,
    "entries are stored as fp16");

// What a user's existing code looks like: written for Kokkos::View<double*, ...>.
template <class... Properties>
double user_sum(const Kokkos::View<double*, Properties...>& v) {
  double s = 0.0;
  Kokkos::parallel_reduce(
      "compat::user_sum", v.extent(0), KOKKOS_LAMBDA(int i, double& acc) { acc += v(i); }, s);
  return s;
}

// ... and its read-only variant.
template <class... Properties>
double user_sum_const(const Kokkos::View<const double*, Properties...>& v) {
  double s = 0.0;
  Kokkos::parallel_reduce(
      "compat::user_sum_const", v.extent(0), KOKKOS_LAMBDA(int i, double& acc) { acc += v(i); }, s);
  return s;
}

// ... or generic over the view type.
template <class ViewType>
void user_scale(const ViewType& v, double a) {
  Kokkos::parallel_for(
      "compat::user_scale", v.extent(0), KOKKOS_LAMBDA(int i) { v(i) *= a; });
}

// Fills v(i) = i / 10 in a kernel; returns how many entries differ from fp16(i / 10).
int fill_and_count_mismatches(const Fp16View& v) {
  Kokkos::parallel_for(
      "compat::fill", v.extent(0), KOKKOS_LAMBDA(int i) { v(i) = i / 10.0; });
  int bad = 0;
  Kokkos::parallel_reduce(
      "compat::check", v.extent(0),
      KOKKOS_LAMBDA(int i, int& count) {
        count += static_cast<double>(v(i)) != static_cast<double>(kacc::fp16(i / 10.0));
      },
      bad);
  return bad;
}

}  // namespace

TEST(KokkosViewProperty, StoresTwoBytesAndRoundsOnceInKernels) {
  const int n = 16;
  Fp16View v("v", n);
  EXPECT_EQ(v.label(), "v");
  EXPECT_EQ(v.span(), static_cast<std::size_t>(n));
  EXPECT_EQ(fill_and_count_mismatches(v), 0);
}

TEST(KokkosViewProperty, UserTemplatesTakeIt) {
  const int n = 16;
  Fp16View v("v", n);
  ASSERT_EQ(fill_and_count_mismatches(v), 0);
  // fp16(i / 10) has at most 11 significant bits and is below 2: the sum is exact in double.
  double expected = 0.0;
  for (int i = 0; i < n; ++i) expected += static_cast<double>(kacc::fp16(i / 10.0));
  EXPECT_EQ(user_sum(v), expected);
  user_scale(v, 2.0);  // doubling is exact in fp16 below 65504
  EXPECT_EQ(user_sum(v), 2.0 * expected);
}

TEST(KokkosViewProperty, ConstViewSharesTheAllocation) {
  Fp16View v("v", 4);
  ASSERT_EQ(fill_and_count_mismatches(v), 0);
  Kokkos::View<const double*, kacc::StoredAs<kacc::fp16>> c = v;
  EXPECT_EQ(static_cast<const void*>(c.data()), static_cast<const void*>(v.data()));
  EXPECT_EQ(v.use_count(), 2);
  EXPECT_EQ(user_sum_const(c), user_sum(v));
}

#endif
