// kacc::reference, the proxy: what compiles on it and what does not, checked at compile
// time with the detection idiom, and the run-time results of the operators it adds (the
// ADL math functions, the read-only proxy).
#include <kacc/core.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <utility>

namespace {

using Host = Kokkos::HostSpace;

// --- the detection idiom ---------------------------------------------------------------

template <class, template <class...> class Op, class... Args>
struct detector : std::false_type {};
template <template <class...> class Op, class... Args>
struct detector<std::void_t<Op<Args...>>, Op, Args...> : std::true_type {};
/// Whether Op<Args...> is a valid type, i.e. the expression it names compiles.
template <template <class...> class Op, class... Args>
inline constexpr bool compiles = detector<void, Op, Args...>::value;

// Each alias names one expression; A and B are the operand types as written (a prvalue
// proxy is `Ref`, a named one `Ref&`, a plain entry `double&`).
template <class A, class B>
using assign_t = decltype(std::declval<A>() = std::declval<B>());
template <class A, class B>
using add_assign_t = decltype(std::declval<A>() += std::declval<B>());
template <class A, class B>
using sub_assign_t = decltype(std::declval<A>() -= std::declval<B>());
template <class A, class B>
using mul_assign_t = decltype(std::declval<A>() *= std::declval<B>());
template <class A, class B>
using div_assign_t = decltype(std::declval<A>() /= std::declval<B>());
template <class A, class B>
using add_t = decltype(std::declval<A>() + std::declval<B>());
template <class A, class B>
using sub_t = decltype(std::declval<A>() - std::declval<B>());
template <class A, class B>
using mul_t = decltype(std::declval<A>() * std::declval<B>());
template <class A, class B>
using div_t = decltype(std::declval<A>() / std::declval<B>());
template <class A, class B>
using eq_t = decltype(std::declval<A>() == std::declval<B>());
template <class A, class B>
using ne_t = decltype(std::declval<A>() != std::declval<B>());
template <class A, class B>
using lt_t = decltype(std::declval<A>() < std::declval<B>());
template <class A, class B>
using le_t = decltype(std::declval<A>() <= std::declval<B>());
template <class A, class B>
using gt_t = decltype(std::declval<A>() > std::declval<B>());
template <class A, class B>
using ge_t = decltype(std::declval<A>() >= std::declval<B>());
template <class A, class B>
using and_t = decltype(std::declval<A>() && std::declval<B>());
template <class A, class B>
using or_t = decltype(std::declval<A>() || std::declval<B>());
template <class A>
using plus_t = decltype(+std::declval<A>());
template <class A>
using minus_t = decltype(-std::declval<A>());
template <class A>
using not_t = decltype(!std::declval<A>());
template <class A>
using pre_inc_t = decltype(++std::declval<A>());
template <class A>
using pre_dec_t = decltype(--std::declval<A>());
template <class A>
using post_inc_t = decltype(std::declval<A>()++);
template <class A>
using post_dec_t = decltype(std::declval<A>()--);
template <class A>
using if_t = decltype(std::declval<A>() ? 1 : 0);
template <class A>
using to_float_t = decltype(static_cast<float>(std::declval<A>()));
template <class A>
using to_int_t = decltype(static_cast<int>(std::declval<A>()));
template <class A>
using to_double_t = decltype(double{std::declval<A>()});
template <class A>
using std_fabs_t = decltype(std::fabs(std::declval<A>()));
template <class A>
using std_sqrt_t = decltype(std::sqrt(std::declval<A>()));
template <class A>
using kacc_fabs_t = decltype(kacc::math::fabs(std::declval<A>()));
template <class A>
using swap_t = decltype(std::swap(std::declval<A&>(), std::declval<A&>()));
template <class A>
using copy_t = decltype(A(std::declval<const A&>()));
namespace adl {
using std::abs;
using std::fabs;
using std::sqrt;
template <class A>
using abs_t = decltype(abs(std::declval<A>()));
template <class A>
using fabs_t = decltype(fabs(std::declval<A>()));
template <class A>
using sqrt_t = decltype(sqrt(std::declval<A>()));
}  // namespace adl

/// Op<A, B> compiles for a proxy exactly when it does for a plain entry, with the same
/// type where the plain entry's result is a value (the assigning operators of a double&
/// return the double&; a proxy's return the value stored).
template <template <class, class> class Op, class Plain, class Proxy, class B>
constexpr bool same_binary() {
  if constexpr (!compiles<Op, Plain, B>) {
    return !compiles<Op, Proxy, B>;
  } else if constexpr (!compiles<Op, Proxy, B>) {
    return false;
  } else {
    return std::is_same<std::decay_t<Op<Plain, B>>, Op<Proxy, B>>::value;
  }
}
template <template <class> class Op, class Plain, class Proxy>
constexpr bool same_unary() {
  if constexpr (!compiles<Op, Plain>) {
    return !compiles<Op, Proxy>;
  } else if constexpr (!compiles<Op, Proxy>) {
    return false;
  } else {
    return std::is_same<std::decay_t<Op<Plain>>, Op<Proxy>>::value;
  }
}

/// Every binary operator with right operand B: a proxy behaves as the plain entry.
template <class Plain, class Proxy, class B>
constexpr bool every_binary_operator() {
  return same_binary<assign_t, Plain, Proxy, B>() && same_binary<add_assign_t, Plain, Proxy, B>() &&
         same_binary<sub_assign_t, Plain, Proxy, B>() &&
         same_binary<mul_assign_t, Plain, Proxy, B>() &&
         same_binary<div_assign_t, Plain, Proxy, B>() && same_binary<add_t, Plain, Proxy, B>() &&
         same_binary<sub_t, Plain, Proxy, B>() && same_binary<mul_t, Plain, Proxy, B>() &&
         same_binary<div_t, Plain, Proxy, B>() && same_binary<eq_t, Plain, Proxy, B>() &&
         same_binary<ne_t, Plain, Proxy, B>() && same_binary<lt_t, Plain, Proxy, B>() &&
         same_binary<le_t, Plain, Proxy, B>() && same_binary<gt_t, Plain, Proxy, B>() &&
         same_binary<ge_t, Plain, Proxy, B>() && same_binary<and_t, Plain, Proxy, B>() &&
         same_binary<or_t, Plain, Proxy, B>() &&
         // and with the proxy on the right
         std::is_same<std::decay_t<add_t<B, Plain>>, add_t<B, Proxy>>::value &&
         std::is_same<std::decay_t<mul_t<B, Plain>>, mul_t<B, Proxy>>::value &&
         std::is_same<std::decay_t<div_t<B, Plain>>, div_t<B, Proxy>>::value &&
         std::is_same<std::decay_t<sub_t<B, Plain>>, sub_t<B, Proxy>>::value &&
         std::is_same<lt_t<B, Plain>, lt_t<B, Proxy>>::value &&
         std::is_same<eq_t<B, Plain>, eq_t<B, Proxy>>::value;
}

/// Every unary operator, conversion and math function: a proxy behaves as the plain entry.
template <class Plain, class Proxy>
constexpr bool every_unary_operator() {
  return same_unary<plus_t, Plain, Proxy>() && same_unary<minus_t, Plain, Proxy>() &&
         same_unary<not_t, Plain, Proxy>() && same_unary<pre_inc_t, Plain, Proxy>() &&
         same_unary<pre_dec_t, Plain, Proxy>() && same_unary<post_inc_t, Plain, Proxy>() &&
         same_unary<post_dec_t, Plain, Proxy>() && same_unary<if_t, Plain, Proxy>() &&
         same_unary<to_float_t, Plain, Proxy>() && same_unary<to_int_t, Plain, Proxy>() &&
         same_unary<to_double_t, Plain, Proxy>() && same_unary<std_fabs_t, Plain, Proxy>() &&
         same_unary<std_sqrt_t, Plain, Proxy>() && same_unary<kacc_fabs_t, Plain, Proxy>() &&
         same_unary<adl::abs_t, Plain, Proxy>() && same_unary<adl::fabs_t, Plain, Proxy>() &&
         same_unary<adl::sqrt_t, Plain, Proxy>();
}

template <class Arith, class Format>
using writable = kacc::reference<Arith, Format>;
template <class Arith, class Format>
using read_only = kacc::reference<const Arith, Format>;

using Fp16Ref = writable<double, kacc::fp16>;
using FloatRef = writable<float, kacc::bf16>;
using ScaledRef = writable<double, kacc::scaled<std::int16_t>>;
using ReadRef = read_only<double, kacc::fp16>;

// The proxy a view hands out is the one tested here.
static_assert(
    std::is_same<
        decltype(std::declval<kacc::View<double*, Host, kacc::StoredAs<kacc::fp16>>&>()(0)),
        Fp16Ref>::value,
    "");

// --- misuse that no longer compiles ------------------------------------------------------

// `auto r = v(i); r = 2;`: a named proxy does not write, by any assignment.
static_assert(!compiles<assign_t, Fp16Ref&, double>, "a named proxy must not write");
static_assert(!compiles<assign_t, Fp16Ref&, int>, "");
static_assert(!compiles<add_assign_t, Fp16Ref&, double>, "");
static_assert(!compiles<mul_assign_t, Fp16Ref&, Fp16Ref>, "");
static_assert(!compiles<pre_inc_t, Fp16Ref&>, "");
static_assert(!compiles<post_dec_t, Fp16Ref&>, "");
static_assert(!compiles<assign_t, Fp16Ref&, Fp16Ref>, "no rebinding either");
static_assert(!compiles<assign_t, Fp16Ref&, const Fp16Ref&>, "");
// A proxy is not copyable, so a second handle cannot be made by copying ...
static_assert(!std::is_copy_constructible<Fp16Ref>::value, "");
static_assert(!compiles<copy_t, Fp16Ref>, "");
static_assert(std::is_move_constructible<Fp16Ref>::value, "returned and forwarded by move");
// ... and std::swap of two named proxies (which would store one value twice) is refused.
static_assert(!compiles<swap_t, Fp16Ref>, "std::swap of named proxies must not compile");
static_assert(!compiles<swap_t, ScaledRef>, "");
// The read-only proxy never assigns, named or not.
static_assert(!compiles<assign_t, ReadRef, double>, "");
static_assert(!compiles<assign_t, ReadRef, ReadRef>, "");
static_assert(!compiles<add_assign_t, ReadRef, double>, "");
static_assert(!compiles<pre_inc_t, ReadRef>, "");
static_assert(!compiles<post_inc_t, ReadRef>, "");
static_assert(!compiles<swap_t, ReadRef>, "");

// --- everything written on a double& works on v(i) --------------------------------------

// Operands: values of every arithmetic kind, the same proxy, other proxies, plain entries.
static_assert(every_binary_operator<double&, Fp16Ref, double>(), "");
static_assert(every_binary_operator<double&, Fp16Ref, float>(), "");
static_assert(every_binary_operator<double&, Fp16Ref, int>(), "");
static_assert(every_binary_operator<double&, Fp16Ref, long>(), "");
static_assert(every_binary_operator<double&, Fp16Ref, unsigned>(), "");
static_assert(every_binary_operator<double&, Fp16Ref, bool>(), "");
static_assert(every_binary_operator<double&, Fp16Ref, double&>(), "");
static_assert(every_binary_operator<double&, Fp16Ref, const float&>(), "");
static_assert(every_binary_operator<double&, ScaledRef, double>(), "");
static_assert(every_binary_operator<double&, ScaledRef, int>(), "");
static_assert(every_binary_operator<float&, FloatRef, float>(), "");
static_assert(every_binary_operator<float&, FloatRef, double>(), "float * double is double");
static_assert(every_binary_operator<float&, FloatRef, int>(), "");
static_assert(every_binary_operator<const double&, ReadRef, double>(), "reads, no writes");
static_assert(every_binary_operator<const double&, ReadRef, int>(), "");
static_assert(every_unary_operator<double&, Fp16Ref>(), "");
static_assert(every_unary_operator<double&, ScaledRef>(), "");
static_assert(every_unary_operator<float&, FloatRef>(), "");
static_assert(every_unary_operator<const double&, ReadRef>(), "");

/// Proxy-with-proxy expressions have the types of the same expressions on plain entries.
template <class PlainA, class ProxyA, class PlainB, class ProxyB>
constexpr bool proxies_combine() {
  return std::is_same<std::decay_t<add_t<PlainA, PlainB>>, add_t<ProxyA, ProxyB>>::value &&
         std::is_same<std::decay_t<mul_t<PlainA, PlainB>>, mul_t<ProxyA, ProxyB>>::value &&
         std::is_same<std::decay_t<sub_t<PlainA, PlainB>>, sub_t<ProxyA, ProxyB>>::value &&
         std::is_same<std::decay_t<div_t<PlainA, PlainB>>, div_t<ProxyA, ProxyB>>::value &&
         std::is_same<lt_t<PlainA, PlainB>, lt_t<ProxyA, ProxyB>>::value &&
         std::is_same<eq_t<PlainA, PlainB>, eq_t<ProxyA, ProxyB>>::value &&
         std::is_same<ge_t<PlainA, PlainB>, ge_t<ProxyA, ProxyB>>::value &&
         std::is_same<std::decay_t<assign_t<PlainA, PlainB>>, assign_t<ProxyA, ProxyB>>::value &&
         std::is_same<std::decay_t<add_assign_t<PlainA, PlainB>>,
                      add_assign_t<ProxyA, ProxyB>>::value &&
         std::is_same<std::decay_t<div_assign_t<PlainA, PlainB>>,
                      div_assign_t<ProxyA, ProxyB>>::value;
}
static_assert(proxies_combine<double&, Fp16Ref, double&, Fp16Ref>(), "same proxy type");
static_assert(proxies_combine<double&, Fp16Ref, float&, FloatRef>(), "double with float");
static_assert(proxies_combine<float&, FloatRef, double&, Fp16Ref>(), "float with double");
static_assert(proxies_combine<double&, Fp16Ref, double&, ScaledRef>(), "");
static_assert(proxies_combine<double&, Fp16Ref, double&, Fp16Ref&>(), "a named proxy reads");

}  // namespace

// --- run time: what the operators compute ---------------------------------------------------

template <class Format>
using HView = kacc::View<double*, Host, kacc::StoredAs<Format>>;

TEST(Reference, AdlMathReadsTheEntry) {
  HView<kacc::fp16> v("v", 2);
  v(0) = -2.25;
  v(1) = 6.25;
  using std::abs;
  using std::fabs;
  using std::sqrt;
  EXPECT_EQ(abs(v(0)), 2.25);
  EXPECT_EQ(fabs(v(0)), 2.25);
  EXPECT_EQ(sqrt(v(1)), 2.5);
  EXPECT_EQ(kacc::math::fabs(v(0)), 2.25);
  EXPECT_EQ(std::fabs(v(0)), 2.25);
  // -0 has magnitude +0.
  v(0) = -0.0;
  EXPECT_FALSE(std::signbit(fabs(v(0))));
  EXPECT_FALSE(std::signbit(abs(v(0))));
  kacc::View<int*, Host, kacc::StoredAs<double>> integers("i", 1);
  integers(0) = -3;
  static_assert(std::is_same<decltype(abs(integers(0))), int>::value, "abs keeps int");
  EXPECT_EQ(abs(integers(0)), 3);
}

TEST(Reference, ReadOnlyProxyReadsAndCompares) {
  HView<kacc::bf16> v("v", 2);
  v(0) = 1.5;
  v(1) = -4.0;
  const kacc::reference<const double, kacc::bf16> r(v.data(), {});
  EXPECT_EQ(r.get(), 1.5);
  EXPECT_EQ(r * 2, 3.0);
  EXPECT_TRUE(r > v(1));
  EXPECT_TRUE(v(1) < r);
  EXPECT_EQ(-r, -1.5);
  EXPECT_EQ(r.storage_pointer(), v.data());
}

TEST(Reference, MixedOperandsComputeAsPlainValues) {
  HView<kacc::fp16> v("v", 2);
  kacc::View<float*, Host, kacc::StoredAs<kacc::bf16>> f("f", 1);
  v(0) = 0.75;
  v(1) = 3.0;
  f(0) = 0.5f;
  EXPECT_EQ(v(0) * 2, 1.5);
  EXPECT_EQ(2 / v(1), 2.0 / 3);
  EXPECT_EQ(v(1) - f(0), 2.5);
  EXPECT_EQ(f(0) * v(1), 1.5);
  EXPECT_TRUE(v(0) != 1);
  EXPECT_TRUE(1 > v(0));
  EXPECT_TRUE(v(0) && true);
  v(0) += 1;     // an int operand
  v(0) *= f(0);  // a proxy operand of another type
  EXPECT_EQ(v(0).get(), 0.875);
  v(1) = f(0);
  EXPECT_EQ(v(1).get(), 0.5);
}
