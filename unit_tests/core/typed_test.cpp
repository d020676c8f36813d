// Every (arithmetic, storage) pair on every enabled execution space: kernels write through
// the view, read it back through a compound update and a reduction, and the host compares
// the mirror exactly with the values rounded through the storage format by an independent
// reference (MPFR, the compiler's own double-to-float conversion, or integer rounding).
#include "format_reference.hpp"

#include <kacc/core.hpp>
#include <kacc_testing/exec_spaces.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace {

template <class Arith, class Format, class Exec>
struct Case {
  using arithmetic = Arith;
  using format = Format;
  using exec = Exec;
};

template <class... Lists>
struct concat;
template <class... A>
struct concat<::testing::Types<A...>> {
  using type = ::testing::Types<A...>;
};
template <class... A, class... B, class... Rest>
struct concat<::testing::Types<A...>, ::testing::Types<B...>, Rest...>
    : concat<::testing::Types<A..., B...>, Rest...> {};

using Int16s = kacc::scaled<std::int16_t>;
template <class Exec>
using cases_for = ::testing::Types<Case<double, double, Exec>, Case<double, float, Exec>,
                                   Case<double, kacc::fp16, Exec>, Case<double, kacc::bf16, Exec>,
                                   Case<double, Int16s, Exec>, Case<float, double, Exec>,
                                   Case<float, float, Exec>, Case<float, kacc::fp16, Exec>,
                                   Case<float, kacc::bf16, Exec>, Case<float, Int16s, Exec>>;

template <class ExecList>
struct all_cases;
template <class... Exec>
struct all_cases<::testing::Types<Exec...>> : concat<cases_for<Exec>...> {};

using AllCases = typename all_cases<kacc_testing::ExecSpaces>::type;

// Scaled views get a fixed scale (a power of two, so the host expectation is exact).
constexpr double fixed_scale = 1.0 / 64;

// The value stored for x, rounded by a reference that shares no code with kacc: MPFR for
// fp16 and bf16, a static_cast for fp32, and for scaled formats the nearest multiple of the
// fixed scale (x / scale and the product are exact: the scale is a power of two; the data
// never fall on a tie, see input()).
template <class Arith, class Format>
Arith stored(Arith x) {
  if constexpr (kacc::format_traits<Format>::is_scaled) {
    const Arith s = static_cast<Arith>(fixed_scale);
    return std::nearbyint(x / s) * s;
  } else if constexpr (std::is_same<Format, double>::value) {
    return x;  // double holds every float and double
  } else if constexpr (std::is_same<Format, float>::value) {
    return static_cast<Arith>(static_cast<float>(x));
  } else if constexpr (std::is_same<Format, kacc::fp16>::value) {
    return static_cast<Arith>(core_test::round_by_mpfr<5, 10>(static_cast<double>(x)));
  } else {
    static_assert(std::is_same<Format, kacc::bf16>::value, "a reference for this format");
    return static_cast<Arith>(core_test::round_by_mpfr<8, 7>(static_cast<double>(x)));
  }
}

// Data every backend computes identically: one exact subtraction, one rounded division.
// Scaled by 64, (i - n/2) / 7 is never within rounding of a half-integer (it is a multiple
// of 64/7 = 9.142857...), so the reference's rounding of ties does not matter.
template <class Arith>
KOKKOS_INLINE_FUNCTION Arith input(int i, int n) {
  return (static_cast<Arith>(i) - static_cast<Arith>(n / 2)) / static_cast<Arith>(7);
}

template <class View>
void set_scales(const View& v) {
  if constexpr (View::is_scaled) {
    Kokkos::deep_copy(v.scales(), static_cast<kacc::arithmetic_t<View>>(fixed_scale));
  }
}

// The kernels live in free functions, not in the test bodies: nvcc refuses a device lambda
// inside a GoogleTest body (a private member function of the generated class).

/// v(i) = input(i, n) in a kernel of Exec.
template <class Exec, class View>
void fill_rank1(const View& v, int n) {
  using A = kacc::arithmetic_t<View>;
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(int i) { v(i) = input<A>(i, n); });
}

/// v(i) += addend in a kernel of Exec: read, compute in the arithmetic type, round once.
template <class Exec, class View>
void add_in_kernel(const View& v, int n, kacc::arithmetic_t<View> addend) {
  Kokkos::parallel_for(
      "update", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(int i) { v(i) += addend; });
}

/// max over i of c(i), read through a view of const storage inside a reduction (max is
/// order independent).
template <class Exec, class ConstView>
kacc::arithmetic_t<ConstView> max_in_kernel(const ConstView& c, int n) {
  using A = kacc::arithmetic_t<ConstView>;
  A max_value = 0;
  Kokkos::parallel_reduce(
      "max", Kokkos::RangePolicy<Exec>(0, n),
      KOKKOS_LAMBDA(int i, A& m) { m = c(i) > m ? c(i) : m; }, Kokkos::Max<A>(max_value));
  return max_value;
}

/// v(i, j) = input(i + n j, n m) in a kernel of Exec, one thread per row.
template <class Exec, class View>
void fill_rank2(const View& v, int n, int m) {
  using A = kacc::arithmetic_t<View>;
  Kokkos::parallel_for(
      "fill2", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(int i) {
        for (int j = 0; j < m; ++j) v(i, j) = input<A>(i + n * j, n * m);
      });
}

}  // namespace

template <class C>
class EveryPairEverySpace : public ::testing::Test {};
TYPED_TEST_SUITE(EveryPairEverySpace, AllCases);

TYPED_TEST(EveryPairEverySpace, Rank1KernelsWriteUpdateAndReduce) {
  using A = typename TypeParam::arithmetic;
  using F = typename TypeParam::format;
  using E = typename TypeParam::exec;
  const int n = 1001;
  kacc::View<A*, E, kacc::StoredAs<F>> v("v", n);
  static_assert(std::is_same<typename decltype(v)::execution_space, E>::value, "");
  set_scales(v);
  fill_rank1<E>(v, n);
  auto host = kacc::create_mirror_view(v);
  kacc::deep_copy(host, v);
  for (int i = 0; i < n; ++i) {
    const A expected = stored<A, F>(input<A>(i, n));
    ASSERT_EQ(host(i), expected) << "i=" << i;
  }
  // A compound update reads, computes in A, and rounds once.
  const A third = A(1) / A(3);
  add_in_kernel<E>(v, n, third);
  const kacc::View<const A*, E, kacc::StoredAs<F>> c = v;
  const A max_value = max_in_kernel<E>(c, n);
  kacc::deep_copy(host, v);
  A expected_max = 0;
  for (int i = 0; i < n; ++i) {
    const A expected = stored<A, F>(stored<A, F>(input<A>(i, n)) + third);
    ASSERT_EQ(host(i), expected) << "i=" << i;
    expected_max = expected > expected_max ? expected : expected_max;
  }
  EXPECT_EQ(max_value, expected_max);
}

TYPED_TEST(EveryPairEverySpace, Rank2KernelsWriteAndDeepCopyToPlainViews) {
  using A = typename TypeParam::arithmetic;
  using F = typename TypeParam::format;
  using E = typename TypeParam::exec;
  const int n = 37, m = 5;
  kacc::View<A**, Kokkos::LayoutLeft, E, kacc::StoredAs<F>> v("v", n, m);
  set_scales(v);
  fill_rank2<E>(v, n, m);
  // Into a plain Kokkos View of the arithmetic type, in another layout, on the host.
  Kokkos::View<A**, Kokkos::LayoutRight, Kokkos::HostSpace> plain("plain", n, m);
  kacc::deep_copy(plain, v);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      ASSERT_EQ(plain(i, j), (stored<A, F>(input<A>(i + n * j, n * m)))) << i << ", " << j;
}
