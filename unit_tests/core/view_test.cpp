// kacc::View on the host: proxy reference semantics, identity views, traits, subviews,
// mirrors, converting deep_copy across layouts and view kinds, and argument errors.
#include "format_reference.hpp"

#include <kacc/core.hpp>
#include <kacc_testing/invalid_argument.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using Host = Kokkos::HostSpace;
template <class Data, class Format, class... P>
using HView = kacc::View<Data, P..., Host, kacc::StoredAs<Format>>;

// The value x takes when stored in Format (the format codecs are verified in format_test).
template <class Format, class Arith>
Arith rounded(Arith x) {
  return kacc::convert<Arith>(kacc::convert<Format>(x));
}

// What an empty member (the scale of an unscaled format in a proxy) adds after a member of
// type T on this compiler: nothing where KACC_NO_UNIQUE_ADDRESS is [[no_unique_address]];
// padding to T's alignment where the compiler lacks the attribute (nvcc, MSVC).
template <class T>
constexpr std::size_t empty_member_cost() {
  struct probe {
    T member;
    KACC_NO_UNIQUE_ADDRESS kacc::detail::no_scale empty;
  };
  return sizeof(probe) - sizeof(T);
}

}  // namespace

// --- proxy references ----------------------------------------------------------------

template <class Format>
class Proxy : public ::testing::Test {};
using ProxyFormats = ::testing::Types<kacc::fp16, kacc::bf16, float, kacc::float_format<6, 9>>;
TYPED_TEST_SUITE(Proxy, ProxyFormats);

TYPED_TEST(Proxy, ReadWriteAndEveryCompoundOperator) {
  using F = TypeParam;
  HView<double*, F> v("v", 4);
  using Ref = decltype(v(0));
  static_assert(kacc::is_reference_v<Ref>, "non-identity storage hands out a proxy");
  static_assert(std::is_same<decltype(v(0).get()), double>::value, "");
  static_assert(std::is_same<decltype(kacc::value(v(0))), double>::value, "");

  v(0) = 1.0 / 3;
  EXPECT_EQ(v(0).get(), (rounded<F>(1.0 / 3)));
  EXPECT_EQ(kacc::value(v(0)), v(0).get());
  const double read = v(0);  // implicit conversion
  EXPECT_EQ(read, v(0).get());
  // The write landed in the storage entry, in the storage format.
  EXPECT_EQ(v(0).storage_pointer(), v.data());
  EXPECT_EQ(kacc::convert<double>(*v.data()), read);

  // Each compound operator reads, computes in double, and rounds once on the store.
  double expected = rounded<F>(1.5);
  v(1) = 1.5;
  v(1) += 1.0 / 3;
  expected = rounded<F>(expected + 1.0 / 3);
  EXPECT_EQ(v(1).get(), expected);
  v(1) -= 0.1;
  expected = rounded<F>(expected - 0.1);
  EXPECT_EQ(v(1).get(), expected);
  v(1) *= 1.7;
  expected = rounded<F>(expected * 1.7);
  EXPECT_EQ(v(1).get(), expected);
  v(1) /= 3.0;
  expected = rounded<F>(expected / 3.0);
  EXPECT_EQ(v(1).get(), expected);
  // Assignments return the value stored (rounded), as reading a double& after it would.
  const double stored = (v(2) = 1.0 / 3);
  EXPECT_EQ(stored, (rounded<F>(1.0 / 3)));
  EXPECT_EQ((v(2) += 1.0), (rounded<F>(stored + 1.0)));
  v(2) = 2.0;
  EXPECT_EQ(++v(2), 3.0);
  EXPECT_EQ(v(2)++, 3.0);
  EXPECT_EQ(v(2).get(), 4.0);
  EXPECT_EQ(--v(2), 3.0);
  EXPECT_EQ(v(2)--, 3.0);
  EXPECT_EQ(v(2).get(), 2.0);
  v(2) += 1.0;
  EXPECT_EQ(v(2).get(), 3.0);
  // Proxy to proxy of the same view copies the value, not the proxy.
  v(3) = v(1);
  EXPECT_EQ(v(3).get(), v(1).get());
  v(3) = -v(2);
  EXPECT_EQ(v(3).get(), -3.0);
}

TYPED_TEST(Proxy, NamedProxyReadsTheEntryButCannotWrite) {
  using F = TypeParam;
  HView<double*, F> v("v", 2);
  v(0) = 1.0;
  // auto deduces the proxy, which refers to the entry; it reads, but writing through it
  // (`alias = 4.0`) does not compile: see reference_test.cpp.
  auto alias = v(0);
  static_assert(kacc::is_reference_v<decltype(alias)>, "auto keeps a proxy");
  double snapshot = v(0);
  auto copy = kacc::value(v(0));
  static_assert(std::is_same<decltype(copy), double>::value, "kacc::value gives a value");
  v(0) = 2.0;
  EXPECT_EQ(alias.get(), 2.0);  // sees the later write
  EXPECT_EQ(snapshot, 1.0);
  EXPECT_EQ(copy, 1.0);
  std::move(alias) = 4.0;  // an explicit move writes through, never rebinds
  EXPECT_EQ(v(0).get(), 4.0);
  EXPECT_EQ(v(1).get(), 0.0);
  // A proxy costs one pointer when the format has no scale.
  EXPECT_EQ(sizeof(alias), sizeof(void*) + empty_member_cost<void*>());
}

TEST(Proxy, MixedProxiesComputeInTheCommonArithmeticType) {
  HView<double*, kacc::fp16> v("v", 3);
  HView<double*, kacc::bf16> w("w", 3);
  HView<float*, kacc::fp16> f("f", 3);
  Kokkos::View<float*, Host> plain("plain", 3);
  for (int i = 0; i < 3; ++i) {
    v(i) = 1.0 / (i + 3);
    w(i) = 1.0 / (i + 7);
    f(i) = 1.0f / static_cast<float>(i + 11);
    plain(i) = 1.0f / static_cast<float>(i + 13);
  }
  static_assert(std::is_same<decltype(v(0) * w(1)), double>::value, "");
  static_assert(std::is_same<decltype(v(0) * f(1)), double>::value, "");
  static_assert(std::is_same<decltype(f(0) * f(1)), float>::value, "");
  static_assert(std::is_same<decltype(f(0) + plain(1)), float>::value, "");
  static_assert(std::is_same<decltype(2 * f(0)), float>::value, "");
  const double vd = v(0).get(), wd = w(1).get();
  const float fd = f(2).get();
  EXPECT_EQ(v(0) * w(1), vd * wd);
  EXPECT_EQ(v(0) + w(1), vd + wd);
  EXPECT_EQ(v(0) - w(1), vd - wd);
  EXPECT_EQ(v(0) / w(1), vd / wd);
  EXPECT_EQ(v(0) * f(2), vd * static_cast<double>(fd));
  EXPECT_EQ(f(2) * f(2), fd * fd);
  EXPECT_EQ(f(2) + plain(0), fd + plain(0));
  EXPECT_EQ(2.0 * v(0) + w(1), 2.0 * vd + wd);
  EXPECT_TRUE(w(1) < v(0));
  EXPECT_TRUE(v(0) == vd);
  EXPECT_FALSE(v(0) != v(0));
  // Compound assignment and assignment from another proxy type convert through values.
  v(1) = w(2);
  EXPECT_EQ(v(1).get(), (rounded<kacc::fp16>(w(2).get())));
  const double before = v(2).get();
  v(2) += f(0) * w(0);
  EXPECT_EQ(v(2).get(),
            (rounded<kacc::fp16>(before + static_cast<double>(f(0).get()) * w(0).get())));
  // Generic math takes kacc::value.
  EXPECT_EQ(std::max(kacc::value(v(0)), kacc::value(w(0))), vd);
  EXPECT_EQ(kacc::math::fabs(kacc::value(-v(0))), vd);
}

TEST(ConstView, ReturnsValues) {
  HView<double*, kacc::fp16> v("v", 2);
  v(0) = 0.1;
  v(1) = -7.25;
  HView<const double*, kacc::fp16> c = v;
  static_assert(std::is_same<decltype(c(0)), double>::value, "const storage reads values");
  EXPECT_EQ(c(0), v(0).get());
  EXPECT_EQ(c(1), -7.25);
  EXPECT_EQ(c.data(), v.data());
  // Const identity views read values, too.
  kacc::View<const double*, Host> ci = kacc::View<double*, Host>("d", 1);
  static_assert(std::is_same<decltype(ci(0)), double>::value, "");
  // Const scaled views read with the scale.
  HView<double*, kacc::scaled<std::int16_t>> s("s", 2);
  Kokkos::deep_copy(s.scales(), 0.5);
  s(0) = 3.0;
  HView<const double*, kacc::scaled<std::int16_t>> cs = s;
  EXPECT_EQ(cs(0), 3.0);
  EXPECT_EQ(*s.data(), 6);
  // A const scaled view over raw storage reads with the scales it is given (it once read
  // scales(0) of an unallocated view); wrapping integers without scales does not compile.
  Kokkos::View<std::int16_t*, Host> raw("raw", 2);
  raw(1) = -5;
  const Kokkos::View<const std::int16_t*, Host> const_raw = raw;
  Kokkos::View<double*, Host> one_scale("one_scale", 1);
  one_scale(0) = 0.25;
  using CS = HView<const double*, kacc::scaled<std::int16_t>>;
  const CS wrapped(const_raw, one_scale);
  ASSERT_EQ(wrapped.scales().extent(0), 1u);
  EXPECT_EQ(wrapped(1), -1.25);
  Kokkos::View<double*, Host> two_scales("two_scales", 2);
  EXPECT_THROW(CS(const_raw, two_scales), std::invalid_argument);
  EXPECT_THROW(CS(const_raw, Kokkos::View<double*, Host>()), std::invalid_argument);
}

// --- identity views and traits --------------------------------------------------------

TEST(IdentityView, HandsOutRealReferencesAtNoCost) {
  kacc::View<double*, Host> d("d", 3);
  kacc::View<float**, Kokkos::LayoutLeft, Host, kacc::StoredAs<float>> f("f", 2, 2);
  static_assert(std::is_same<decltype(d(0)), double&>::value, "identity gives double&");
  static_assert(std::is_same<decltype(f(0, 1)), float&>::value, "identity gives float&");
  static_assert(decltype(d)::is_identity && decltype(f)::is_identity, "");
  // The scale state of an unscaled format is an empty base: no bytes, on every compiler.
  static_assert(sizeof(kacc::View<double*, Host>) == sizeof(Kokkos::View<double*, Host>),
                "an identity view costs exactly a Kokkos View");
  static_assert(sizeof(kacc::View<double**, Kokkos::LayoutRight>) ==
                    sizeof(Kokkos::View<double**, Kokkos::LayoutRight>),
                "");
  static_assert(sizeof(HView<double*, kacc::fp16>) == sizeof(Kokkos::View<kacc::fp16*, Host>),
                "unscaled formats add no state");
  double& r = d(1);
  r = 2.5;
  d(2) += 1.0;
  EXPECT_EQ(d(1), 2.5);
  EXPECT_EQ(d.data()[1], 2.5);
  EXPECT_EQ(d(2), 1.0);
  EXPECT_EQ(&f(1, 0), f.data() + 1);
}

TEST(Traits, DescribeKaccAndPlainViews) {
  using V = HView<double*, kacc::fp16>;
  using F = HView<float**, kacc::bf16>;
  using S = HView<double**, kacc::scaled<std::int16_t>>;
  using P = Kokkos::View<float*, Host>;
  using PH = Kokkos::View<kacc::fp16*, Host>;
  static_assert(std::is_same<kacc::arithmetic_t<V>, double>::value, "");
  static_assert(std::is_same<kacc::format_t<V>, kacc::fp16>::value, "");
  static_assert(std::is_same<kacc::arithmetic_t<F>, float>::value, "");
  static_assert(std::is_same<kacc::format_t<S>, kacc::scaled<std::int16_t>>::value, "");
  static_assert(std::is_same<kacc::arithmetic_t<P>, float>::value, "");
  static_assert(std::is_same<kacc::format_t<P>, float>::value, "");
  static_assert(std::is_same<kacc::arithmetic_t<PH>, float>::value, "");
  static_assert(std::is_same<kacc::format_t<PH>, kacc::fp16>::value, "");
  static_assert(kacc::is_view_v<V> && kacc::is_view_v<P> && kacc::is_view_v<const V>, "");
  static_assert(kacc::is_kacc_view_v<V> && !kacc::is_kacc_view_v<P>, "");
  static_assert(!kacc::is_view_v<double> && !kacc::is_kacc_view_v<double*>, "");
  static_assert(std::is_same<kacc::common_arithmetic_t<F, P>, float>::value, "");
  static_assert(std::is_same<kacc::common_arithmetic_t<F, V, P>, double>::value, "");
  static_assert(kacc::bytes_per_entry<V>() == 2 && kacc::bytes_per_entry<S>() == 2 &&
                    kacc::bytes_per_entry<P>() == 4 && V::bytes_per_entry() == 2,
                "");
  static_assert(std::is_same<kacc::view_over_t<P, double>,
                             kacc::View<double*, Kokkos::LayoutRight, P::device_type,
                                        P::memory_traits, kacc::StoredAs<float>>>::value,
                "");
  EXPECT_STREQ(kacc::format_name<double>(), "fp64");
  EXPECT_STREQ(kacc::format_name<float>(), "fp32");
  EXPECT_STREQ(kacc::format_name<kacc::fp16>(), "fp16");
  EXPECT_STREQ(kacc::format_name<kacc::bf16>(), "bf16");
  EXPECT_STREQ(kacc::format_name<kacc::scaled<std::int16_t>>(), "int16s");
  EXPECT_STREQ(kacc::format_name<kacc::scaled<std::int8_t>>(), "int8s");
}

TEST(MakeView, WrapsExistingStorageWithoutCopy) {
  Kokkos::View<float*, Host> f("f", 3);
  auto v = kacc::make_view<double>(f);
  static_assert(std::is_same<kacc::arithmetic_t<decltype(v)>, double>::value, "");
  static_assert(std::is_same<kacc::format_t<decltype(v)>, float>::value, "");
  v(1) = 1.0 / 3;
  EXPECT_EQ(f(1), 1.0f / 3);
  f(2) = 0.25f;
  EXPECT_EQ(v(2).get(), 0.25);
  EXPECT_EQ(v.data(), f.data());
  Kokkos::View<kacc::fp16*, Host> h("h", 2);
  auto hv = kacc::make_view<double>(h);
  hv(0) = 65520.0;
  EXPECT_EQ(h(0).bits, 0x7c00u);
  auto sat = kacc::make_view<double, kacc::fp16, kacc::overflow::saturate>(h);
  sat(1) = 1e9;
  EXPECT_EQ(static_cast<double>(h(1)), 65504.0);
  // Scaled storage with its scales.
  Kokkos::View<std::int16_t**, Host> q("q", 2, 3);
  Kokkos::View<double*, Host> scales("scales", 3);
  for (int j = 0; j < 3; ++j) scales(j) = std::ldexp(1.0, -j);
  q(1, 2) = 100;
  auto s = kacc::make_view<double, kacc::scaled<std::int16_t>>(q, scales);
  EXPECT_EQ(s(1, 2).get(), 25.0);
  s(0, 1) = 3.0;
  EXPECT_EQ(q(0, 1), 6);
  Kokkos::View<double*, Host> too_few("too_few", 2);
  EXPECT_THROW((kacc::make_view<double, kacc::scaled<std::int16_t>>(q, too_few)),
               std::invalid_argument);
}

// --- shape queries --------------------------------------------------------------------

TEST(Shape, ExtentsStridesSpanSizeLabel) {
  HView<double***, kacc::fp16, Kokkos::LayoutRight> r("right", 2, 3, 4);
  static_assert(decltype(r)::rank == 3, "");
  EXPECT_EQ(r.extent(0), 2u);
  EXPECT_EQ(r.extent(1), 3u);
  EXPECT_EQ(r.extent(2), 4u);
  EXPECT_EQ(r.extent_int(2), 4);
  EXPECT_EQ(r.size(), 24u);
  EXPECT_EQ(r.span(), 24u);
  EXPECT_EQ(r.stride(0), 12u);
  EXPECT_EQ(r.stride(1), 4u);
  EXPECT_EQ(r.stride(2), 1u);
  EXPECT_TRUE(r.span_is_contiguous());
  EXPECT_TRUE(r.is_allocated());
  EXPECT_EQ(r.label(), "right");
  EXPECT_EQ(&r(1, 2, 3).storage_pointer()[0], r.data() + 23);
  HView<float**, kacc::bf16, Kokkos::LayoutLeft> l("left", 5, 3);
  EXPECT_EQ(l.stride(0), 1u);
  EXPECT_EQ(l.stride(1), 5u);
  EXPECT_EQ(l(4, 2).storage_pointer(), l.data() + 14);
  HView<double*, kacc::fp16> empty;
  EXPECT_FALSE(empty.is_allocated());
  EXPECT_EQ(empty.size(), 0u);
  HView<double*, kacc::fp16> zero("zero", 0);
  EXPECT_EQ(zero.size(), 0u);
  // Allocation properties pass through to Kokkos.
  HView<double*, kacc::fp16> uninit(Kokkos::view_alloc(Kokkos::WithoutInitializing, "uninit"), 7);
  EXPECT_EQ(uninit.extent(0), 7u);
  EXPECT_EQ(uninit.label(), "uninit");
}

// --- subviews -------------------------------------------------------------------------

template <class Layout>
class Subview : public ::testing::Test {};
using Layouts = ::testing::Types<Kokkos::LayoutLeft, Kokkos::LayoutRight>;
TYPED_TEST_SUITE(Subview, Layouts);

TYPED_TEST(Subview, ColumnsRowsAndRangesOfAPlainFormat) {
  HView<double**, kacc::fp16, TypeParam> a("a", 5, 4);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) a(i, j) = i + 10 * j;
  auto col = kacc::subview(a, Kokkos::ALL, 2);
  auto row = kacc::subview(a, 3, Kokkos::ALL);
  auto block = kacc::subview(a, Kokkos::make_pair(1, 4), Kokkos::make_pair(0, 2));
  static_assert(kacc::is_kacc_view_v<decltype(col)> && decltype(col)::rank == 1, "");
  static_assert(std::is_same<kacc::format_t<decltype(row)>, kacc::fp16>::value, "");
  ASSERT_EQ(col.extent(0), 5u);
  ASSERT_EQ(row.extent(0), 4u);
  ASSERT_EQ(block.extent(0), 3u);
  ASSERT_EQ(block.extent(1), 2u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(col(i).get(), i + 20.0);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(row(j).get(), 3 + 10.0 * j);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(block(i, j).get(), (i + 1) + 10.0 * j);
  // Writes through subviews round into the parent's storage.
  col(1) = 0.1;
  row(0) = 1.0 / 3;
  block(2, 1) = -2.2;
  EXPECT_EQ(a(1, 2).get(), (rounded<kacc::fp16>(0.1)));
  EXPECT_EQ(a(3, 0).get(), (rounded<kacc::fp16>(1.0 / 3)));
  EXPECT_EQ(a(3, 1).get(), (rounded<kacc::fp16>(-2.2)));
  // Subviews of an identity view stay identity.
  kacc::View<double**, TypeParam, Host> d("d", 3, 3);
  auto dc = kacc::subview(d, Kokkos::ALL, 1);
  static_assert(std::is_same<decltype(dc(0)), double&>::value, "");
  dc(2) = 9.0;
  EXPECT_EQ(d(2, 1), 9.0);
}

TYPED_TEST(Subview, ScaledSubviewsFollowTheColumnScales) {
  HView<double**, kacc::scaled<std::int16_t>, TypeParam> s("s", 6, 3);
  auto scales = s.scales();
  ASSERT_EQ(scales.extent(0), 3u);
  scales(0) = 0.5;
  scales(1) = 0.25;
  scales(2) = std::ldexp(1.0, -10);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) s(i, j) = i - 2.0 * j;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j) ASSERT_EQ(s(i, j).get(), i - 2.0 * j);
  EXPECT_EQ(s.storage()(5, 0), 10);  // 5 / 0.5
  auto col = kacc::subview(s, Kokkos::ALL, 1);
  auto row = kacc::subview(s, 2, Kokkos::ALL);
  auto block = kacc::subview(s, Kokkos::make_pair(1, 3), Kokkos::make_pair(1, 3));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(col(i).get(), i - 2.0);
    EXPECT_EQ(col.scale_at(i), 0.25);
  }
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(row(j).get(), 2 - 2.0 * j);
    EXPECT_EQ(row.scale_at(j), scales(j));
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(block(i, j).get(), (i + 1) - 2.0 * (j + 1));
      EXPECT_EQ(block.scale_at(i, j), scales(j + 1));
    }
  // Writing through a subview uses that entry's scale.
  col(0) = 0.3;  // 0.3 / 0.25 = 1.2 -> 1
  EXPECT_EQ(s.storage()(0, 1), 1);
  EXPECT_EQ(s(0, 1).get(), 0.25);
  block(1, 1) = 0.3;  // column 2, scale 2^-10
  EXPECT_EQ(s.storage()(2, 2), 307);
  // Changing a scale through the subview's view of it changes the parent's column.
  col.scales()(0) = 1.0;
  EXPECT_EQ(scales(1), 1.0);
  EXPECT_EQ(s(0, 1).get(), 1.0);
}

// --- mirrors and deep_copy ----------------------------------------------------------------

TEST(Mirror, HostMirrorOfHostViewSharesTheData) {
  HView<double*, kacc::fp16> v("v", 4);
  auto m = kacc::create_mirror_view(v);
  static_assert(std::is_same<kacc::format_t<decltype(m)>, kacc::fp16>::value, "");
  static_assert(std::is_same<kacc::arithmetic_t<decltype(m)>, double>::value, "");
  EXPECT_EQ(m.data(), v.data());
  m(2) = 0.7;
  EXPECT_EQ(v(2).get(), (rounded<kacc::fp16>(0.7)));
  // Mirrors of scaled views carry the scales along.
  HView<double**, kacc::scaled<std::int16_t>> s("s", 2, 2);
  s.scales()(1) = 0.5;
  s(1, 1) = 3.0;
  auto ms = kacc::create_mirror_view(s);
  EXPECT_EQ(ms(1, 1).get(), 3.0);
  EXPECT_EQ(ms.scale_at(0, 1), 0.5);
  EXPECT_EQ(ms.scale_at(0, 0), 1.0);
}

namespace {
double pattern(int i, int j = 0, int k = 0) {
  return (i + 1) / 3.0 - 0.7 * j + 100.0 * k;
}
}  // namespace

TEST(DeepCopy, AcrossLayoutsFormatsAndViewKinds) {
  const int n = 7, m = 5;
  Kokkos::View<double**, Kokkos::LayoutRight, Host> src("src", n, m);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) src(i, j) = pattern(i, j);
  // Plain Kokkos (Right, fp64) -> kacc Left fp16.
  HView<double**, kacc::fp16, Kokkos::LayoutLeft> left("left", n, m);
  kacc::deep_copy(left, src);
  // kacc Left fp16 -> kacc Right float (converting and transposing the layout).
  HView<double**, float, Kokkos::LayoutRight> right("right", n, m);
  kacc::deep_copy(right, left);
  // kacc Right float -> kacc LayoutStride bf16 over every other column of a wider array.
  Kokkos::View<kacc::bf16**, Kokkos::LayoutLeft, Host> wide("wide", n, 2 * m);
  auto strided_storage = Kokkos::View<kacc::bf16**, Kokkos::LayoutStride, Host>(
      wide.data(), Kokkos::LayoutStride(n, 1, m, 2 * n));
  auto strided = kacc::make_view<double>(strided_storage);
  static_assert(std::is_same<decltype(strided)::array_layout, Kokkos::LayoutStride>::value, "");
  kacc::deep_copy(strided, right);
  // kacc LayoutStride bf16 -> plain Kokkos fp32 and a plain View of fp16 entries.
  Kokkos::View<float**, Kokkos::LayoutLeft, Host> out("out", n, m);
  kacc::deep_copy(out, strided);
  Kokkos::View<kacc::fp16**, Kokkos::LayoutRight, Host> out16("out16", n, m);
  kacc::deep_copy(out16, left);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      const double l = rounded<kacc::fp16>(pattern(i, j));
      EXPECT_EQ(left(i, j).get(), l);
      EXPECT_EQ(right(i, j).get(), l);  // fp16 values are exact in float
      const double b = rounded<kacc::bf16>(l);
      EXPECT_EQ(strided(i, j).get(), b);
      EXPECT_EQ(static_cast<double>(wide(i, 2 * j)), b);
      EXPECT_EQ(static_cast<double>(wide(i, 2 * j + 1)), 0.0);  // untouched gaps
      EXPECT_EQ(static_cast<double>(out(i, j)), b);
      EXPECT_EQ(out16(i, j).bits, left.storage()(i, j).bits);
    }
  // A kacc view converts to its LayoutStride form without copying.
  HView<double**, kacc::fp16, Kokkos::LayoutStride> as_stride = left;
  EXPECT_EQ(as_stride(3, 4).get(), left(3, 4).get());
  EXPECT_EQ(as_stride.data(), left.data());
}

TEST(DeepCopy, RanksOneToThree) {
  Kokkos::View<double*, Host> s1("s1", 9);
  Kokkos::View<double***, Kokkos::LayoutLeft, Host> s3("s3", 3, 4, 2);
  for (int i = 0; i < 9; ++i) s1(i) = pattern(i);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 2; ++k) s3(i, j, k) = pattern(i, j, k);
  HView<float*, kacc::bf16> v1("v1", 9);
  HView<double***, kacc::fp16, Kokkos::LayoutRight> v3("v3", 3, 4, 2);
  kacc::deep_copy(v1, s1);
  kacc::deep_copy(v3, s3);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(v1(i).get(), (rounded<kacc::bf16>(static_cast<float>(pattern(i)))));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 2; ++k)
        EXPECT_EQ(v3(i, j, k).get(), (rounded<kacc::fp16>(pattern(i, j, k))));
  // Same format and layout: the raw copy path; the two views stay independent.
  HView<double***, kacc::fp16, Kokkos::LayoutRight> c3("c3", 3, 4, 2);
  kacc::deep_copy(c3, v3);
  v3(0, 0, 0) = 42.0;
  EXPECT_EQ(c3(0, 0, 0).get(), (rounded<kacc::fp16>(pattern(0))));
  EXPECT_EQ(c3(2, 3, 1).get(), v3(2, 3, 1).get());
  // With an explicit execution space instance.
  HView<double*, float> f1("f1", 9);
  kacc::deep_copy(Kokkos::DefaultHostExecutionSpace(), f1, v1);
  Kokkos::DefaultHostExecutionSpace().fence();
  for (int i = 0; i < 9; ++i) EXPECT_EQ(f1(i).get(), v1(i).get());
}

namespace {
std::vector<std::string> parallel_for_labels;
void record_parallel_for(const char* label, std::uint32_t, std::uint64_t* id) {
  parallel_for_labels.emplace_back(label);
  *id = 0;
}
}  // namespace

// Two plain Kokkos Views of different value types: kacc::deep_copy converts them itself
// (its kernel's label says so), so a device View<float*> takes host doubles; Kokkos's own
// deep_copy, which argument-dependent lookup would otherwise pick, refuses that pair on a
// GPU ("would require a temporary allocation").
TEST(DeepCopy, PlainViewsOfOtherTypesConvertThroughKacc) {
  Kokkos::View<double*, Host> h("h", 3);
  h(0) = 1.5;
  h(1) = -2.0;
  h(2) = 0.1;
  Kokkos::View<float*> d("d", 3);
  parallel_for_labels.clear();
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(record_parallel_for);
  kacc::deep_copy(d, h);
  Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
  EXPECT_TRUE(std::any_of(parallel_for_labels.begin(), parallel_for_labels.end(),
                          [](const std::string& l) { return l.rfind("kacc::deep_copy[", 0) == 0; }))
      << "kernels launched: " << ::testing::PrintToString(parallel_for_labels);
  Kokkos::View<double*, Host> back("back", 3);
  kacc::deep_copy(back, d);
  EXPECT_EQ(back(0), 1.5);
  EXPECT_EQ(back(1), -2.0);
  EXPECT_EQ(back(2), double(0.1f));
}

// --- errors ---------------------------------------------------------------------------

TEST(Errors, DeepCopyWithMismatchedExtentsNamesThem) {
  HView<double*, kacc::fp16> a("a", 3);
  Kokkos::View<double*, Host> b("b", 4);
  EXPECT_THROW(kacc::deep_copy(a, b), std::invalid_argument);
  const std::string m1 = kacc_testing::invalid_argument_message([&] { kacc::deep_copy(a, b); });
  EXPECT_NE(m1.find("kacc::deep_copy"), std::string::npos) << m1;
  EXPECT_NE(m1.find("(3)"), std::string::npos) << m1;
  EXPECT_NE(m1.find("(4)"), std::string::npos) << m1;
  HView<double**, kacc::bf16> c("c", 3, 4);
  HView<double**, float> d("d", 4, 3);
  const std::string m2 = kacc_testing::invalid_argument_message([&] { kacc::deep_copy(c, d); });
  EXPECT_NE(m2.find("(3, 4)"), std::string::npos) << m2;
  EXPECT_NE(m2.find("(4, 3)"), std::string::npos) << m2;
  // Nothing was written.
  EXPECT_EQ(c(0, 0).get(), 0.0);
}

TEST(Errors, NegativeExtentThrows) {
  EXPECT_THROW((HView<double*, kacc::fp16>("neg", -1)), std::invalid_argument);
  const std::string m =
      kacc_testing::invalid_argument_message([] { HView<double**, kacc::bf16>("neg2", 3, -5); });
  EXPECT_NE(m.find("neg2"), std::string::npos) << m;
  EXPECT_NE(m.find("-5"), std::string::npos) << m;
  EXPECT_NE(m.find("extent 1"), std::string::npos) << m;
  EXPECT_THROW((kacc::View<double*, Host>("neg", -3)), std::invalid_argument);
  EXPECT_THROW((HView<double*, kacc::scaled<std::int16_t>>(
                   Kokkos::view_alloc(Kokkos::WithoutInitializing, "neg"), -2)),
               std::invalid_argument);
}
