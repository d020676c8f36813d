// Kokkos::View<double*, kacc::StoredAs<kacc::fp16>> as a real Kokkos View, where Kokkos
// has the View customization hooks (KACC_HAS_KOKKOS_VIEW_PROPERTY): 2-byte storage,
// proxies in kernels, user function templates written for Kokkos::View<double*> taking
// it, const conversion sharing the allocation. Elsewhere this file has no tests.
#include <kacc/core/kokkos_view_property.hpp>
#include <kacc/kacc.hpp>

#include <gtest/gtest.h>

#include <vector>

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

using Fp16Reference = kacc::reference<double, kacc::fp16, kacc::overflow::ieee>;
using Fp16Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, kacc::StoredAs<kacc::fp16>>;

// Every slice of a StoredAs View hands out kacc proxies over the same 2-byte entries.
template <class V>
constexpr bool keeps_fp16 = std::is_same_v<typename V::reference_type, Fp16Reference>&&
    std::is_same_v<typename V::pointer_type, kacc::fp16*>;
static_assert(keeps_fp16<Kokkos::Subview<Fp16View, Kokkos::pair<int, int>>>, "range");
static_assert(keeps_fp16<Kokkos::Subview<Fp16Matrix, Kokkos::ALL_t, int>>, "column");
static_assert(keeps_fp16<Kokkos::Subview<Fp16Matrix, int, Kokkos::ALL_t>>, "row");
static_assert(keeps_fp16<Kokkos::Subview<Fp16Matrix, Kokkos::pair<int, int>, Kokkos::ALL_t>>,
              "block");
static_assert(keeps_fp16<Kokkos::Subview<Fp16Matrix, int, int>>, "entry");
static_assert(
    keeps_fp16<Kokkos::Subview<
        Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace, kacc::StoredAs<kacc::fp16>>,
        Kokkos::ALL_t>>,
    "with a layout and a space");

// v(0) = value, in a kernel.
template <class V>
void write_first(const V& v, double value) {
  Kokkos::parallel_for(
      "compat::write_first", 1, KOKKOS_LAMBDA(int) { v(0) = value; });
  Kokkos::fence();
}

// Writes m(i, j) = i + 100 j through a row subview per i (a strided slice of LayoutLeft).
void fill_by_rows(const Fp16Matrix& m) {
  for (int i = 0; i < static_cast<int>(m.extent(0)); ++i) {
    auto row = Kokkos::subview(m, i, Kokkos::ALL);
    Kokkos::parallel_for(
        "compat::fill_row", row.extent(0), KOKKOS_LAMBDA(int j) { row(j) = i + 100.0 * j; });
  }
  Kokkos::fence();
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

TEST(KokkosViewProperty, SubviewsKeepTheFormat) {
  Fp16View v("v", 16);
  ASSERT_EQ(fill_and_count_mismatches(v), 0);
  auto tail = Kokkos::subview(v, Kokkos::make_pair(4, 16));
  EXPECT_EQ(static_cast<const void*>(tail.data()), static_cast<const void*>(v.data() + 4));
  EXPECT_EQ(tail.extent(0), 12u);
  // 2049 is not an fp16 value (11 significant bits): the write through the subview rounds
  // to 2048 (ties to even), which the parent then reads.
  user_scale(tail, 0.0);
  write_first(tail, 2049.0);
  EXPECT_EQ(static_cast<double>(v(4)), 2048.0);
  EXPECT_EQ(static_cast<double>(v(5)), 0.0);
  EXPECT_EQ(static_cast<double>(v(3)), static_cast<double>(kacc::fp16(0.3)));

  Fp16Matrix m("m", 3, 5);
  fill_by_rows(m);
  auto column = Kokkos::subview(m, Kokkos::ALL, 2);
  auto block = Kokkos::subview(m, Kokkos::make_pair(1, 3), Kokkos::make_pair(3, 5));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(static_cast<double>(column(i)), i + 200.0) << i;
    for (int j = 0; j < 5; ++j) EXPECT_EQ(static_cast<double>(m(i, j)), i + 100.0 * j);
  }
  EXPECT_EQ(static_cast<double>(block(1, 1)), 2 + 400.0);
  EXPECT_EQ(user_sum(column), 600.0 + 3.0);
}

namespace {

using FloatView = Kokkos::View<double*, kacc::StoredAs<float>>;

// Reads a View of any kind on the host, entry by entry, as doubles.
template <class V>
std::vector<double> values(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out(v.extent(0));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(h(i));
  return out;
}

// 0.1 + i, and 2049 at i = 3 (which fp16 rounds to 2048, float keeps).
Kokkos::View<double*> doubles(int n) {
  Kokkos::View<double*> d("d", n);
  Kokkos::parallel_for(
      "compat::doubles", n, KOKKOS_LAMBDA(int i) { d(i) = i == 3 ? 2049.0 : 0.1 + i; });
  Kokkos::fence();
  return d;
}

}  // namespace

TEST(KokkosViewProperty, DeepCopyConvertsOrCopiesBytes) {
  const int n = 8;
  auto d = doubles(n);
  Fp16View v("v", n);
  Kokkos::deep_copy(v, d);  // rounds once to fp16: not a bytewise copy of doubles
  std::vector<double> expected(n);
  for (int i = 0; i < n; ++i)
    expected[i] = static_cast<double>(kacc::fp16(i == 3 ? 2049.0 : 0.1 + i));
  EXPECT_EQ(values(v), expected);
  EXPECT_EQ(expected[3], 2048.0);

  Fp16View w("w", n);  // same format: bytes
  Kokkos::deep_copy(w, v);
  EXPECT_EQ(values(w), expected);

  Kokkos::View<double*> back("back", n);  // fp16 to double: exact
  Kokkos::deep_copy(back, v);
  EXPECT_EQ(values(back), expected);

  FloatView f("f", n);  // fp16 to float entry by entry, then float to fp16 again
  Kokkos::deep_copy(Kokkos::DefaultExecutionSpace(), f, v);
  Kokkos::DefaultExecutionSpace().fence();
  EXPECT_EQ(values(f), expected);
  Kokkos::deep_copy(f, d);
  EXPECT_EQ(values(f)[3], 2049.0);
  Kokkos::deep_copy(w, f);
  EXPECT_EQ(values(w), expected);

  Kokkos::deep_copy(w, 0.1);
  EXPECT_EQ(values(w), std::vector<double>(n, static_cast<double>(kacc::fp16(0.1))));

  Fp16View shorter("shorter", n - 1);
  EXPECT_THROW(Kokkos::deep_copy(shorter, v), std::invalid_argument);
}

TEST(KokkosViewProperty, DeepCopyOfStridedSubviews) {
  Fp16Matrix m("m", 3, 5);
  fill_by_rows(m);
  Fp16Matrix copy("copy", 3, 5);
  Kokkos::deep_copy(copy, m);
  Fp16View row("row", 5);
  Kokkos::deep_copy(row, Kokkos::subview(copy, 1, Kokkos::ALL));  // stride 3: entry by entry
  EXPECT_EQ(values(row), (std::vector<double>{1.0, 101.0, 201.0, 301.0, 401.0}));
  Kokkos::deep_copy(Kokkos::subview(m, 2, Kokkos::ALL), row);
  EXPECT_EQ(static_cast<double>(m(2, 4)), 401.0);
  EXPECT_EQ(static_cast<double>(m(1, 4)), 401.0);
}

TEST(KokkosViewProperty, MirrorsKeepTheFormat) {
  auto d = doubles(6);
  Fp16View v("v", 6);
  Kokkos::deep_copy(v, d);
  auto view = Kokkos::create_mirror_view(v);  // host memory already: the same allocation
  static_assert(keeps_fp16<decltype(view)>, "create_mirror_view keeps fp16");
  EXPECT_EQ(static_cast<const void*>(view.data()), static_cast<const void*>(v.data()));

  auto mirror = Kokkos::create_mirror(v);  // a new allocation of 2-byte entries
  static_assert(keeps_fp16<decltype(mirror)>, "create_mirror keeps fp16");
  EXPECT_NE(static_cast<const void*>(mirror.data()), static_cast<const void*>(v.data()));
  EXPECT_EQ(mirror.label(), "v_mirror");
  Kokkos::deep_copy(mirror, v);
  EXPECT_EQ(values(mirror), values(v));

  auto in_space = Kokkos::create_mirror(Kokkos::HostSpace(), v);
  static_assert(keeps_fp16<decltype(in_space)>, "create_mirror(space, v) keeps fp16");
  auto same = Kokkos::create_mirror_view(Kokkos::HostSpace(), v);
  static_assert(keeps_fp16<decltype(same)>, "create_mirror_view(space, v) keeps fp16");
  EXPECT_EQ(static_cast<const void*>(same.data()), static_cast<const void*>(v.data()));
  auto copied = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  static_assert(keeps_fp16<decltype(copied)>, "create_mirror_view_and_copy keeps fp16");
  EXPECT_EQ(static_cast<const void*>(copied.data()), static_cast<const void*>(v.data()));

  auto raw = Kokkos::create_mirror(Kokkos::WithoutInitializing, Kokkos::HostSpace(), v);
  static_assert(keeps_fp16<decltype(raw)>, "create_mirror(WithoutInitializing, space, v)");
  EXPECT_EQ(raw.extent(0), v.extent(0));
  auto raw_view = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, v);
  static_assert(keeps_fp16<decltype(raw_view)>, "create_mirror_view(WithoutInitializing, v)");
  EXPECT_EQ(static_cast<const void*>(raw_view.data()), static_cast<const void*>(v.data()));

  // A read-only View gets a writable mirror of its own.
  Kokkos::View<const double*, kacc::StoredAs<kacc::fp16>> c = v;
  auto writable = Kokkos::create_mirror_view(c);
  static_assert(keeps_fp16<decltype(writable)>, "create_mirror_view of a const View");
  EXPECT_NE(static_cast<const void*>(writable.data()), static_cast<const void*>(v.data()));
  Kokkos::deep_copy(writable, c);
  EXPECT_EQ(values(writable), values(v));
}

#endif
