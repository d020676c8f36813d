// Block loads (block_load.hpp): every fp16 and bf16 bit pattern, NaN payloads included,
// read W at a time must give the bits the scalar path gives (convert<T>(v(i))), for each
// arithmetic type of the view and of the kernel, at every alignment and remainder length,
// for kacc views and plain Views, contiguous and strided. Block stores: the values around
// every pattern (each pattern's value, the midpoints to its neighbours, and values a few
// double ulps and one float rounding step either side of those), overflow and NaNs,
// written W at a time, must store the bits `v(i) = value` stores, under both IEEE and
// saturating overflow.
#include <kacc/core.hpp>
#include <kacc/core/block_load.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

namespace {
/// A user's own scaled format, stored in int16 as scaled<std::int16_t> is but with another
/// value: (2 s + 1) * scale, the odd multiples of the scale.
struct odd_int16 {};
}  // namespace

namespace kacc {
template <>
struct format_traits<odd_int16> {
  using storage_type = std::int16_t;
  static constexpr bool is_scaled = true;
  template <class T>
  KOKKOS_INLINE_FUNCTION static T decode(std::int16_t s, T scale) {
    return (T(2) * static_cast<T>(s) + T(1)) * scale;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static std::int16_t encode(T v, T scale) {
    const T q = std::nearbyint((v / scale - T(1)) / T(2));
    return static_cast<std::int16_t>(q < T(-32767) ? T(-32767) : q > T(32767) ? T(32767) : q);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static bool fits(T v, T scale) {
    const T q = (v / scale - T(1)) / T(2);
    return q >= T(-32767.5) && q <= T(32767.5);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T scale_for(T magnitude) {
    return magnitude / T(65535);
  }
  KOKKOS_INLINE_FUNCTION static constexpr double max_value() { return 65535.0; }
  static constexpr const char* name() { return "odd16"; }
};
}  // namespace kacc

namespace {

using Host = Kokkos::HostSpace;
constexpr std::size_t patterns = 65536;

template <class T>
std::uint64_t bits_of(T value) {
  std::uint64_t b = 0;
  std::memcpy(&b, &value, sizeof(T));
  return b;
}

// Compares load_block<W> at i = first, first + step, ... with the scalar reads of v.
template <int W, class T, class V>
void expect_same_bits(const V& v, std::size_t first, std::size_t step, const std::string& what) {
  const std::size_t n = v.extent(0);
  std::size_t mismatches = 0;
  for (std::size_t i = first; i + W <= n; i += step) {
    T block[W];
    kacc::Impl::load_block<W>(v, static_cast<kacc::index_type>(i), block);
    for (int l = 0; l < W; ++l) {
      const T scalar = kacc::convert<T>(v(i + l));
      if (bits_of(block[l]) != bits_of(scalar) && mismatches++ < 5) {
        ADD_FAILURE() << what << ": entry " << i + l << " block " << block[l] << " scalar "
                      << scalar;
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << what;
}

// block_store_simd_v: SIMD stores go only into writable kacc views of a format with SIMD
// conversions on this target, and only from the view's arithmetic type.
using fp16_floats = kacc::View<float*, Host, kacc::StoredAs<kacc::fp16>>;
static_assert(kacc::Impl::block_store_simd_v<fp16_floats, float> ==
              kacc::Impl::block_codec<kacc::fp16>::vectorised_stores);
static_assert(!kacc::Impl::block_store_simd_v<fp16_floats, double>);
static_assert(!kacc::Impl::block_store_simd_v<
              kacc::View<const float*, Host, kacc::StoredAs<kacc::fp16>>, float>);
static_assert(!kacc::Impl::block_store_simd_v<Kokkos::View<float*, Host>, float>);

// A kacc view holding every bit pattern of Format once, read in arithmetic type A.
template <class Format, class A>
kacc::View<A*, Host, kacc::StoredAs<Format>> all_patterns() {
  kacc::View<A*, Host, kacc::StoredAs<Format>> v("all", patterns);
  for (std::size_t i = 0; i < patterns; ++i)
    v.storage()(i) = Format::from_bits(static_cast<std::uint16_t>(i));
  return v;
}

template <class Format, class A, class T>
void check_every_pattern(const std::string& name) {
  const auto v = all_patterns<Format, A>();
  // 16: whole SIMD blocks, aligned and not; 13: a remainder after the SIMD part; 1: every
  // pattern through the one-entry widening of the remainder (SpMV's loads).
  expect_same_bits<16, T>(v, 0, 16, name + " W=16");
  expect_same_bits<16, T>(v, 3, 16, name + " W=16 offset 3");
  expect_same_bits<13, T>(v, 5, 13, name + " W=13");
  expect_same_bits<1, T>(v, 0, 1, name + " W=1");
  const kacc::View<const A*, Host, kacc::StoredAs<Format>> cv = v;  // values, not proxies
  expect_same_bits<16, T>(cv, 0, 16, name + " const W=16");
}

template <class Format>
void check_format(const std::string& name) {
  check_every_pattern<Format, double, double>(name + " A=fp64 T=fp64");
  check_every_pattern<Format, double, float>(name + " A=fp64 T=fp32");
  check_every_pattern<Format, float, double>(name + " A=fp32 T=fp64");
  check_every_pattern<Format, float, float>(name + " A=fp32 T=fp32");
  // Plain Views of the format: contiguous, and a row of a LayoutLeft matrix (stride 2).
  Kokkos::View<Format**, Kokkos::LayoutLeft, Host> m("m", 2, patterns);
  for (std::size_t i = 0; i < patterns; ++i) {
    m(0, i) = Format::from_bits(static_cast<std::uint16_t>(i));
    m(1, i) = Format::from_bits(static_cast<std::uint16_t>(~i));
  }
  const auto row = Kokkos::subview(m, 0, Kokkos::ALL());
  ASSERT_EQ(row.stride(0), 2u);
  expect_same_bits<16, double>(row, 0, 16, name + " plain strided");
  Kokkos::View<Format*, Host> plain("plain", patterns);
  Kokkos::deep_copy(plain, row);
  expect_same_bits<16, double>(plain, 0, 16, name + " plain contiguous");
}

TEST(BlockLoad, Fp16EveryPatternSameBitsAsScalar) {
  check_format<kacc::fp16>("fp16");
}

TEST(BlockLoad, Bf16EveryPatternSameBitsAsScalar) {
  check_format<kacc::bf16>("bf16");
}

// The other formats take the scalar path through the same entry point.
TEST(BlockLoad, ScaledAndWideFormatsReadAsScalar) {
  kacc::View<double*, Host, kacc::StoredAs<kacc::scaled<std::int16_t>>> s("s", 64);
  Kokkos::deep_copy(s.scales(), 0.25);
  for (std::size_t i = 0; i < 64; ++i) s.storage()(i) = static_cast<std::int16_t>(1000 - 37 * i);
  expect_same_bits<16, double>(s, 0, 16, "int16s");
  kacc::View<double*, Host, kacc::StoredAs<float>> f("f", 64);
  for (std::size_t i = 0; i < 64; ++i) f(i) = 0.1 * static_cast<double>(i) - 3;
  expect_same_bits<16, double>(f, 0, 16, "fp32");
}

// A scaled format of the user's own loads and stores through its own format_traits, as
// entry by entry: the SIMD scaled decoders and encoders, which compute integer * scale,
// are for kacc::scaled<Integer> only, although this format's storage is int16 as well.
TEST(BlockLoad, UserScaledFormatUsesItsOwnTraits) {
  constexpr int W = 16;
  kacc::View<double*, Host, kacc::StoredAs<odd_int16>> v("v", 2 * W);
  Kokkos::deep_copy(v.scales(), 0.25);
  for (int i = 0; i < 2 * W; ++i) v.storage()(i) = static_cast<std::int16_t>(100 - 7 * i);
  expect_same_bits<W, double>(v, 0, 1, "odd16");
  double out[W], in[W];
  kacc::Impl::load_block<W>(v, 0, out);
  for (int l = 0; l < W; ++l) EXPECT_EQ(out[l], (2.0 * (100 - 7 * l) + 1) * 0.25) << l;
  for (int l = 0; l < W; ++l) in[l] = (2.0 * (l - 5) + 1) * 0.25;
  kacc::Impl::store_block<W>(v, W, in);
  for (int l = 0; l < W; ++l) EXPECT_EQ(v.storage()(W + l), l - 5) << l;
  EXPECT_FALSE(v.saturated());
  kacc::View<double**, Kokkos::LayoutRight, Host, kacc::StoredAs<odd_int16>> m("m", 3, W);
  Kokkos::deep_copy(m.scales(), 0.5);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < W; ++j) m.storage()(i, j) = static_cast<std::int16_t>(i * W + j - 20);
  for (int i = 0; i < 3; ++i) {
    kacc::Impl::load_block<W>(m, i, 0, 1, out);
    for (int l = 0; l < W; ++l)
      EXPECT_EQ(out[l], (2.0 * (i * W + l - 20) + 1) * 0.5) << i << " " << l;
  }
}

// Runs of a scaled matrix (int8, int16 and int32; scales along columns, along rows, or one)
// load through the SIMD scaled decoders where they are consecutive in memory: against the
// run's one scale, or a scale per entry along the scale axis. Every run of W entries along
// each dimension from every start must have the bits of the entries read one by one. The
// entries reach the top of the integer's range (int32's beyond float's 24 bits).
template <class Integer, class Layout, class... Scales>
void expect_matrix_runs_same_bits(const char* name) {
  constexpr int W = 16;
  constexpr int n = 2 * W + 5;
  kacc::View<double**, Layout, Host, kacc::StoredAs<kacc::scaled<Integer>>, Scales...> m("m", n, n);
  const auto scales = m.scales();
  for (std::size_t j = 0; j < scales.extent(0); ++j) {
    scales(j) = std::ldexp(1.0 + 0.1 * static_cast<double>(j % 7), static_cast<int>(j % 5) - 2);
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const long long step = std::numeric_limits<Integer>::max() / 120;
      m.storage()(i, j) = static_cast<Integer>((i * 31 - j * 17) % 120 * step + i - j);
    }
  }
  for (int dim = 0; dim < 2; ++dim) {
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) {
        if ((dim == 0 ? r : c) + W > n) continue;
        double out[W];
        kacc::Impl::load_block<W>(m, r, c, dim, out);
        for (int l = 0; l < W; ++l) {
          const double want = dim == 0 ? m(r + l, c) : m(r, c + l);
          ASSERT_EQ(bits_of(out[l]), bits_of(want))
              << name << " dim " << dim << " run at (" << r << ", " << c << ") entry " << l;
        }
      }
    }
  }
}

TEST(BlockLoad, ScaledMatrixRunsSameBitsAsScalar) {
  using Right = Kokkos::LayoutRight;
  using Left = Kokkos::LayoutLeft;
  expect_matrix_runs_same_bits<std::int16_t, Right>("int16s right, scales along columns");
  expect_matrix_runs_same_bits<std::int16_t, Left>("int16s left, scales along columns");
  expect_matrix_runs_same_bits<std::int8_t, Right>("int8s right, scales along columns");
  expect_matrix_runs_same_bits<std::int16_t, Right, kacc::ScalesAlong<0>>(
      "int16s right, scales along rows");
  expect_matrix_runs_same_bits<std::int16_t, Left, kacc::ScalesAlong<0>>(
      "int16s left, scales along rows");
  expect_matrix_runs_same_bits<std::int16_t, Right, kacc::OneScale>("int16s right, one scale");
  expect_matrix_runs_same_bits<std::int32_t, Left>("int32s left, scales along columns");
  expect_matrix_runs_same_bits<std::int32_t, Right>("int32s right, scales along columns");
  expect_matrix_runs_same_bits<std::int32_t, Left, kacc::ScalesAlong<0>>(
      "int32s left, scales along rows");
}

// Doubles near bits u (a finite double): u itself and the doubles 1, 2, 3 ulps away, and
// those about one float ulp (2^29 double ulps) away, where round-to-odd through float
// decides; non-finite neighbours are left out.
void add_neighbours(std::vector<double>& xs, double x) {
  std::uint64_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  const std::uint64_t steps[] = {
      0, 1, 2, 3, (1u << 28), (1u << 29) - 1, (1u << 29), (1u << 29) + 1};
  for (const std::uint64_t d : steps) {
    for (const std::uint64_t v : {u + d, u - d}) {
      double y = 0;
      std::memcpy(&y, &v, sizeof y);
      if (std::isfinite(y) && (v >> 63) == (u >> 63)) xs.push_back(y);
    }
  }
}

// Every value around each pattern of Format (both signs), the largest finite value's tie
// with infinity, values beyond float's range and below its normals, infinities and NaNs
// of several payloads.
template <class Format>
std::vector<double> encode_sweep() {
  std::vector<double> xs;
  const auto value = [](std::uint32_t b) {
    return kacc::convert<double>(Format::from_bits(static_cast<std::uint16_t>(b)));
  };
  using codec = typename Format::codec;
  for (std::uint32_t sign : {0u, 0x8000u}) {
    for (std::uint32_t b = 0; b <= codec::max_finite_bits; ++b) {
      add_neighbours(xs, value(sign | b));
      const double next = b < codec::max_finite_bits
                              ? value(sign | (b + 1))
                              : value(sign | b) + (value(sign | b) - value(sign | (b - 1))) / 2;
      add_neighbours(xs, value(sign | b) + (next - value(sign | b)) / 2);
    }
  }
  for (double x : {static_cast<double>(FLT_MAX), DBL_MAX, 1e300, static_cast<double>(FLT_MIN),
                   1e-40, 1e-45, 1e-300, DBL_MIN, 4.9e-324, 0.0}) {
    add_neighbours(xs, x);
    add_neighbours(xs, -x);
  }
  for (double x : {HUGE_VAL, -HUGE_VAL}) xs.push_back(x);
  for (std::uint64_t nan : {0x7ff8000000000000ull, 0x7ff0000000000001ull, 0x7ff4000000000000ull,
                            0x7ffc0000deadbeefull, 0x7ff7ffffffffffffull, 0xfff8000000000000ull,
                            0xfff0000020000001ull, 0x7fffffffffffffffull}) {
    double x = 0;
    std::memcpy(&x, &nan, sizeof x);
    xs.push_back(x);
  }
  return xs;
}

// Stores xs (as A) W at a time with store_block at offset `first` and one by one with
// v(i) = x into views of the same type, and compares the stored bits.
template <int W, class A, class Format, class Policy>
void expect_same_store_bits(const std::vector<double>& xs, std::size_t first,
                            const std::string& what) {
  using V = kacc::View<A*, Host, kacc::StoredAs<Format, Policy>>;
  const std::size_t n = first + (xs.size() + W - 1) / W * W;
  V block("block", n), scalar("scalar", n);
  std::vector<A> in(n, A(0));
  for (std::size_t i = 0; i < xs.size(); ++i) in[first + i] = static_cast<A>(xs[i]);
  for (std::size_t i = first; i + W <= n; i += W) {
    kacc::Impl::store_block<W>(block, static_cast<kacc::index_type>(i), in.data() + i);
  }
  for (std::size_t i = first; i < n; ++i) scalar(i) = in[i];
  std::size_t mismatches = 0;
  for (std::size_t i = first; i < n; ++i) {
    if (block.storage()(i).bits != scalar.storage()(i).bits && mismatches++ < 5) {
      ADD_FAILURE() << what << ": value " << in[i] << " (bits 0x" << std::hex << bits_of(in[i])
                    << ") block 0x" << block.storage()(i).bits << " scalar 0x"
                    << scalar.storage()(i).bits << std::dec;
    }
  }
  EXPECT_EQ(mismatches, 0u) << what << " over " << xs.size() << " values";
}

template <class Format, class Policy>
void check_stores(const std::string& name) {
  const std::vector<double> xs = encode_sweep<Format>();
  // 16: whole SIMD blocks, aligned and not; 40: two blocks and a remainder; 13: scalar.
  expect_same_store_bits<16, double, Format, Policy>(xs, 0, name + " A=fp64 W=16");
  expect_same_store_bits<16, double, Format, Policy>(xs, 5, name + " A=fp64 W=16 offset 5");
  expect_same_store_bits<40, double, Format, Policy>(xs, 0, name + " A=fp64 W=40");
  expect_same_store_bits<13, double, Format, Policy>(xs, 0, name + " A=fp64 W=13");
  expect_same_store_bits<16, float, Format, Policy>(xs, 0, name + " A=fp32 W=16");
  expect_same_store_bits<40, float, Format, Policy>(xs, 3, name + " A=fp32 W=40 offset 3");
  // Floats on a stride through all 2^32 patterns (every exponent, many mantissas).
  std::vector<double> floats;
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 4093) {
    float f = 0;
    const auto b = static_cast<std::uint32_t>(u);
    std::memcpy(&f, &b, sizeof f);
    floats.push_back(static_cast<double>(f));
  }
  expect_same_store_bits<32, float, Format, Policy>(floats, 0, name + " A=fp32 strided floats");
}

TEST(BlockStore, Fp16AroundEveryPatternSameBitsAsScalar) {
  check_stores<kacc::fp16, kacc::overflow::ieee>("fp16 ieee");
  check_stores<kacc::fp16, kacc::overflow::saturate>("fp16 saturate");
}

TEST(BlockStore, Bf16AroundEveryPatternSameBitsAsScalar) {
  check_stores<kacc::bf16, kacc::overflow::ieee>("bf16 ieee");
  check_stores<kacc::bf16, kacc::overflow::saturate>("bf16 saturate");
}

// The i-th integer a scaled vector test stores: every int8 and int16 (i modulo 2^16); for
// int32 its extremes and 2^24 + 1 (the first that float rounds), then integers spread over
// its whole range (a multiplicative hash of i).
template <class Integer>
Integer integer_at(const std::size_t i) {
  if constexpr (sizeof(Integer) < sizeof(std::int32_t)) {
    return static_cast<Integer>(static_cast<std::uint16_t>(i));
  } else {
    constexpr Integer top = std::numeric_limits<Integer>::max();
    const Integer special[] = {top, -top, std::numeric_limits<Integer>::min(), (1 << 24) + 1};
    if (i < sizeof(special) / sizeof(special[0])) return special[i];
    return static_cast<Integer>(static_cast<std::uint32_t>(i * 2654435761u));
  }
}

// Scaled vectors (one scale) read every stored int8 and int16, and 2^16 int32 across its
// range, as the scalar path does, at scales whose products are exact, rounded, subnormal,
// overflowing and NaN, in blocks that are whole SIMD widths and blocks with a remainder,
// aligned and not.
template <class Integer, class A>
void check_single_scale_loads(const std::string& name, const A scale) {
  constexpr std::size_t count = std::size_t(1) << std::min<std::size_t>(16, 8 * sizeof(Integer));
  kacc::View<A*, Host, kacc::StoredAs<kacc::scaled<Integer>>> v("v", count + 40);
  Kokkos::deep_copy(v.scales(), scale);
  for (std::size_t i = 0; i < v.extent(0); ++i) v.storage()(i) = integer_at<Integer>(i);
  const std::string what = name + " scale " + std::to_string(scale);
  expect_same_bits<32, A>(v, 0, 32, what + " W=32");
  expect_same_bits<20, A>(v, 3, 20, what + " W=20 from 3");
  expect_same_bits<8, double>(v, 1, 8, what + " W=8 as double");
}

TEST(BlockLoad, SingleScaleEveryIntegerSameBitsAsScalar) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const double scale : {0.25, 3.0, 1.0 / 3, 0x1p-1070, 0x1p1020, nan}) {
    check_single_scale_loads<std::int16_t, double>("int16s A=fp64", scale);
    check_single_scale_loads<std::int8_t, double>("int8s A=fp64", scale);
    check_single_scale_loads<std::int32_t, double>("int32s A=fp64", scale);
  }
  for (const float scale : {0.25f, 3.0f, 1.0f / 3, 0x1p-140f, 0x1p120f, float(nan)}) {
    check_single_scale_loads<std::int16_t, float>("int16s A=fp32", scale);
    check_single_scale_loads<std::int8_t, float>("int8s A=fp32", scale);
    check_single_scale_loads<std::int32_t, float>("int32s A=fp32", scale);
  }
}

// Strided views, other formats and plain Views take the scalar path through the same entry.
TEST(BlockStore, OtherViewsStoreAsScalar) {
  Kokkos::View<kacc::fp16**, Kokkos::LayoutLeft, Host> m("m", 2, 32);
  kacc::View<double**, Kokkos::LayoutLeft, Host, kacc::StoredAs<kacc::fp16>> km(m);
  const auto row = kacc::subview(km, 0, Kokkos::ALL());
  ASSERT_EQ(row.stride(0), 2u);
  double in[32];
  for (int l = 0; l < 32; ++l) in[l] = 0.1 * l - 1.3;
  kacc::Impl::store_block<32>(row, 0, in);
  for (int l = 0; l < 32; ++l) EXPECT_EQ(m(0, l).bits, kacc::fp16(in[l]).bits) << l;
  kacc::View<double*, Host, kacc::StoredAs<kacc::scaled<std::int16_t>>> s("s", 16);
  Kokkos::deep_copy(s.scales(), 0.25);
  kacc::Impl::store_block<16>(s, 0, in);
  for (int l = 0; l < 16; ++l) EXPECT_EQ(s.storage()(l), std::lrint(in[l] / 0.25)) << l;
  Kokkos::View<kacc::bf16*, Host> plain("plain", 16);
  kacc::Impl::store_block<16>(plain, 0, in);
  for (int l = 0; l < 16; ++l) EXPECT_EQ(plain(l).bits, kacc::bf16(in[l]).bits) << l;
}

// Rank 2: runs down a column of a column-major matrix (consecutive in memory: block_codec)
// and along a row (strided: one by one) store the same bits as entry-by-entry stores.
template <class Format>
void check_matrix_stores(const std::string& name) {
  using M = kacc::View<double**, Kokkos::LayoutLeft, Host, kacc::StoredAs<Format>>;
  constexpr int W = 16;
  const std::vector<double> xs = encode_sweep<Format>();
  const std::size_t rows = (xs.size() + W - 1) / W * W;
  M block("block", rows, 3), scalar("scalar", rows, 3);
  std::vector<double> in(rows, 0.0);
  std::copy(xs.begin(), xs.end(), in.begin());
  for (std::size_t i = 0; i < rows; i += W)
    kacc::Impl::store_block<W>(block, static_cast<kacc::index_type>(i), 1, 0, in.data() + i);
  for (std::size_t i = 0; i < rows; ++i) scalar(i, 1) = in[i];
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < rows; ++i)
    mismatches += block.storage()(i, 1).bits != scalar.storage()(i, 1).bits;
  EXPECT_EQ(mismatches, 0u) << name << " down a column, over " << xs.size() << " values";
  // Along row 5 (stride rows): the scalar path; columns 0 and 2 of the other rows untouched.
  const double row[3] = {1.0 / 3, -65519.0, 7e-8};
  kacc::Impl::store_block<3>(block, 5, 0, 1, row);
  for (int c = 0; c < 3; ++c) {
    scalar(5, c) = row[c];
    EXPECT_EQ(block.storage()(5, c).bits, scalar.storage()(5, c).bits) << name << " column " << c;
  }
  EXPECT_EQ(block.storage()(4, 0).bits, 0) << name;
  EXPECT_EQ(block.storage()(6, 2).bits, 0) << name;
}

TEST(BlockStore, MatrixRunsSameBitsAsScalar) {
  check_matrix_stores<kacc::fp16>("fp16");
  check_matrix_stores<kacc::bf16>("bf16");
  Kokkos::View<double**, Kokkos::LayoutLeft, Host> plain("plain", 16, 2);
  double in[16];
  for (int l = 0; l < 16; ++l) in[l] = 0.1 * l - 0.7;
  kacc::Impl::store_block<16>(plain, 0, 1, 0, in);
  for (int l = 0; l < 16; ++l) EXPECT_EQ(plain(l, 1), in[l]) << l;
}

// Scaled vectors (one scale) store a block against that scale, read once, and raise the
// saturation flag once: the same integers as entry-by-entry stores, and the flag raised
// exactly when one of them would raise it. Values: ties (k + 1/2) of both parities, the
// integer range's edges and beyond, infinities, NaN, subnormals, signed zeros, and for int8
// and int16 every integer and the quarters between. Blocks of W = 16 are whole AVX-512
// widths, W = 20 leave a remainder.
template <class Integer, class A, int W>
void check_single_scale_stores(const std::string& name, const double scale) {
  using V = kacc::View<A*, Host, kacc::StoredAs<kacc::scaled<Integer>>>;
  const double top = static_cast<double>(std::numeric_limits<Integer>::max());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0, -0.0, 4.9e-324, -4.9e-324, 1e-300, nan, inf, -inf};
  for (double k : {0.0, 1.0, 2.0, 3.0, 100.0, top - 2, top - 1, top}) {
    for (double d : {-0.5, 0.0, 0.5}) {
      xs.push_back((k + d) * scale);
      xs.push_back(-(k + d) * scale);
    }
  }
  xs.push_back((top + 1) * scale);
  xs.push_back(-(top + 1) * scale);
  xs.push_back(1e30);
  if (sizeof(Integer) <= 2) {
    for (double k = -top - 2; k <= top + 2; ++k) {
      for (double d : {0.0, 0.25, 0.5, 0.75}) xs.push_back((k + d) * scale);
    }
  }
  // Blocks that fit come first (so a block that fits is checked to leave the flag alone),
  // then the whole sweep.
  const double limit = std::ldexp(1.0, std::numeric_limits<Integer>::digits);
  std::vector<double> fitting;
  // At the largest scales nearly every value overflows to the same infinity: each distinct
  // misfit is tried once, in one view.
  std::unordered_set<std::uint64_t> misfits_tried;
  V alone("alone", W);
  Kokkos::deep_copy(alone.scales(), static_cast<A>(scale));
  for (const double x : xs) {
    const A a = static_cast<A>(x);
    if (std::isfinite(a) && std::fabs(std::nearbyint(a / static_cast<A>(scale))) < limit) {
      fitting.push_back(x);
    } else if (misfits_tried.insert(bits_of(a)).second) {
      // Alone in a block of zeros, in any lane, each value that does not fit raises the flag.
      for (int lane = 0; lane < W; ++lane) {
        alone.clear_saturated();
        A in[W] = {};
        in[lane] = a;
        kacc::Impl::store_block<W>(alone, 0, in);
        EXPECT_TRUE(alone.saturated()) << name << ": value " << a << " in lane " << lane;
      }
    }
  }
  for (const std::vector<double>* values : {&fitting, &xs}) {
    const std::size_t n = (values->size() + W - 1) / W * W;
    V block("block", n), scalar("scalar", n);
    Kokkos::deep_copy(block.scales(), static_cast<A>(scale));
    Kokkos::deep_copy(scalar.scales(), static_cast<A>(scale));
    std::vector<A> in(n, A(0));
    for (std::size_t i = 0; i < values->size(); ++i) in[i] = static_cast<A>((*values)[i]);
    for (std::size_t i = 0; i < n; i += W) {
      kacc::Impl::store_block<W>(block, static_cast<kacc::index_type>(i), in.data() + i);
    }
    for (std::size_t i = 0; i < n; ++i) scalar(i) = in[i];
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(block.storage()(i), scalar.storage()(i)) << name << ": value " << in[i];
    }
    EXPECT_EQ(block.saturated(), scalar.saturated()) << name;
    EXPECT_EQ(block.saturated(), values == &xs) << name;
  }
}

// Scales: a power of two (blocks multiply by its reciprocal), one that is not (blocks
// divide), and the largest power of two of each type, whose reciprocal is subnormal
// (blocks divide).
template <int W>
void check_single_scale_stores_of_every_type() {
  const std::string w = " W=" + std::to_string(W);
  for (const double scale : {0.125, 0.1, 0x1p1023}) {
    check_single_scale_stores<std::int8_t, double, W>("int8s A=fp64" + w, scale);
    check_single_scale_stores<std::int16_t, double, W>("int16s A=fp64" + w, scale);
    check_single_scale_stores<std::int32_t, double, W>("int32s A=fp64" + w, scale);
    check_single_scale_stores<std::int64_t, double, W>("int64s A=fp64" + w, scale);
  }
  for (const double scale : {0.125, 0.1, 0x1p127}) {
    check_single_scale_stores<std::int8_t, float, W>("int8s A=fp32" + w, scale);
    check_single_scale_stores<std::int16_t, float, W>("int16s A=fp32" + w, scale);
    check_single_scale_stores<std::int32_t, float, W>("int32s A=fp32" + w, scale);
  }
}

TEST(BlockStore, SingleScaleSameIntegersAndFlagAsScalar) {
  check_single_scale_stores_of_every_type<16>();
  check_single_scale_stores_of_every_type<20>();
}

// exact_reciprocal: 1 / scale for powers of two with a normal reciprocal, 0 otherwise.
TEST(BlockStore, ExactReciprocalOnlyForPowersOfTwo) {
  using traits = kacc::format_traits<kacc::scaled<std::int16_t>>;
  EXPECT_EQ(traits::exact_reciprocal(0.125), 8.0);
  EXPECT_EQ(traits::exact_reciprocal(0x1p-1022), 0x1p1022);
  EXPECT_EQ(traits::exact_reciprocal(0.1), 0.0);
  EXPECT_EQ(traits::exact_reciprocal(3.0), 0.0);
  EXPECT_EQ(traits::exact_reciprocal(0x1p1023), 0.0);
  EXPECT_EQ(traits::exact_reciprocal(0x1p-1074), 0.0);
  EXPECT_EQ(traits::exact_reciprocal(0.0), 0.0);
  EXPECT_EQ(traits::exact_reciprocal(-0.125), 0.0);
  EXPECT_EQ(traits::exact_reciprocal(0x1p127f), 0.0f);
  EXPECT_EQ(traits::exact_reciprocal(0x1p126f), 0x1p-126f);
}

// Which path this build tested: the SIMD one wherever the target has the instructions.
TEST(BlockLoad, SimdPathCompiledWhereTheTargetHasIt) {
#if defined(__F16C__) && defined(__AVX__)
  EXPECT_TRUE(kacc::Impl::block_codec<kacc::fp16>::vectorised);
#else
  EXPECT_FALSE(kacc::Impl::block_codec<kacc::fp16>::vectorised);
#endif
#if defined(__AVX2__)
  EXPECT_TRUE(kacc::Impl::block_codec<kacc::bf16>::vectorised);
#else
  EXPECT_FALSE(kacc::Impl::block_codec<kacc::bf16>::vectorised);
#endif
  EXPECT_FALSE(kacc::Impl::block_codec<float>::vectorised);
#if defined(__AVX2__)
  EXPECT_TRUE(kacc::Impl::detail::scaled_block_decoder<std::int32_t>::vectorised);
  EXPECT_TRUE(kacc::Impl::detail::scaled_block_decoder<std::int16_t>::vectorised);
  EXPECT_TRUE(kacc::Impl::detail::scaled_block_decoder<std::int8_t>::vectorised);
#else
  EXPECT_FALSE(kacc::Impl::detail::scaled_block_decoder<std::int32_t>::vectorised);
  EXPECT_FALSE(kacc::Impl::detail::scaled_block_decoder<std::int16_t>::vectorised);
  EXPECT_FALSE(kacc::Impl::detail::scaled_block_decoder<std::int8_t>::vectorised);
#endif
#if defined(__AVX512F__)
  EXPECT_TRUE((kacc::Impl::detail::simd_scaled_store_v<std::int16_t, double, double>));
  EXPECT_TRUE((kacc::Impl::detail::simd_scaled_store_v<std::int8_t, float, float>));
  EXPECT_FALSE((kacc::Impl::detail::simd_scaled_store_v<std::int32_t, double, double>));
#endif
#if defined(__AVX512F__) && defined(__F16C__)
  EXPECT_TRUE(kacc::Impl::block_codec<kacc::fp16>::vectorised_stores);
  EXPECT_TRUE(kacc::Impl::block_codec<kacc::bf16>::vectorised_stores);
#else
  EXPECT_FALSE(kacc::Impl::block_codec<kacc::fp16>::vectorised_stores);
  EXPECT_FALSE(kacc::Impl::block_codec<kacc::bf16>::vectorised_stores);
#endif
  EXPECT_FALSE(kacc::Impl::block_codec<float>::vectorised_stores);
}

}  // namespace
