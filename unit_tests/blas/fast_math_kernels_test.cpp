// DOT, GEMV (all four shapes), TRSV and SpMV (CSR and ELL) on bf16 subnormals, in a program built
// with -ffast-math, which sets denormals-are-zero for the whole process at start-up, as any
// application built with it does to the header-only kacc it includes. The kernels' block
// loads widen bf16 through float, and a float-to-double conversion reads a subnormal float
// as zero under that flag, so they must leave such data to the scalar decoding, which is
// exact under any flags. Every stored value is m 2^-133 (a bf16 subnormal, m < 128) and x
// holds multiples of 2^133, so every product and sum is an integer: exact in any order
// -ffast-math lets the compiler choose, and compared for equality.
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/blas/trsv.hpp>
#include <kacc/sparse/ell_matrix.hpp>
#include <kacc/sparse/spmv.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using Plain = Kokkos::View<double*, Kokkos::HostSpace>;
constexpr double two_133 = 0x1p133;

// The bf16 subnormal m 2^-133 for 0 < m < 128, made on the bits.
kacc::bf16 subnormal(int m) {
  return kacc::bf16::from_bits(static_cast<std::uint16_t>(m));
}

// A mantissa in [1, 127] that varies with i and j.
int mantissa(std::int64_t i, std::int64_t j) {
  return 1 + static_cast<int>((i * 31 + j * 7) % 127);
}

TEST(FastMath, DenormalsAreZeroIsOn) {
  volatile float tiny = 0x1p-140f;
  EXPECT_EQ(static_cast<double>(tiny), 0.0) << "this binary does not run with denormals-are-zero";
}

TEST(FastMath, DotReadsBf16SubnormalsExactly) {
  const std::int64_t n = 100003;
  kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<kacc::bf16>> x("x", n);
  Plain y("y", n);
  std::int64_t expected = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    x.storage()(i) = subnormal(mantissa(i, 0));
    y(i) = two_133;
    expected += mantissa(i, 0);
  }
  EXPECT_EQ(kacc::blas::dot<double>(Host(), x, y), static_cast<double>(expected));
  EXPECT_EQ(kacc::blas::dot<double>(Host(), y, x), static_cast<double>(expected));
}

// y = A x and y = A^T x for A (stored in Layout) of m 2^-133 entries and x = 2^133: long
// rows (2304 entries) and many of them, so that the host dot shape takes rows side by side.
template <class Layout>
void check_gemv() {
  SCOPED_TRACE((std::is_same<Layout, Kokkos::LayoutLeft>::value ? "LayoutLeft" : "LayoutRight"));
  const std::int64_t n = 2304;
  kacc::View<double**, Layout, Kokkos::HostSpace, kacc::StoredAs<kacc::bf16>> A("A", n, n);
  Plain x("x", n), y("y", n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) A.storage()(i, j) = subnormal(mantissa(i, j));
  Kokkos::deep_copy(x, two_133);
  for (const char* trans : {"N", "T"}) {
    kacc::blas::gemv(Host(), trans, 1.0, A, x, 0.0, y);
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t expected = 0;
      for (std::int64_t j = 0; j < n; ++j)
        expected += trans[0] == 'N' ? mantissa(i, j) : mantissa(j, i);
      ASSERT_EQ(y(i), static_cast<double>(expected)) << trans << " row " << i;
    }
  }
}

TEST(FastMath, GemvReadsBf16SubnormalsExactly) {
  check_gemv<Kokkos::LayoutLeft>();
  check_gemv<Kokkos::LayoutRight>();
}

// L x = b for lower-triangular L of bf16 subnormals: the diagonal 2^(i % 7) 2^-133 (a power
// of two, so dividing by it is exact), entries below it m 2^-133 outside the 256 x 256
// diagonal blocks (so inverting a block is exact too) and zero inside; x = c 2^133 with c
// in {1, 2, 3}, b = L x an integer. The updates between blocks go through the GEMV core.
template <class Layout>
void check_trsv() {
  SCOPED_TRACE((std::is_same<Layout, Kokkos::LayoutLeft>::value ? "LayoutLeft" : "LayoutRight"));
  const std::int64_t n = 1024, block = 256;
  kacc::View<double**, Layout, Kokkos::HostSpace, kacc::StoredAs<kacc::bf16>> L("L", n, n);
  Plain b("b", n);
  for (std::int64_t i = 0; i < n; ++i) {
    const int diagonal = 1 << (i % 7);
    std::int64_t sum = diagonal * (1 + i % 3);
    for (std::int64_t j = 0; j < n; ++j) {
      const bool below = j < i && j / block != i / block;
      L.storage()(i, j) = subnormal(j == i ? diagonal : below ? mantissa(i, j) : 0);
      if (below) sum += mantissa(i, j) * (1 + j % 3);
    }
    b(i) = static_cast<double>(sum);
  }
  kacc::blas::trsv(Host(), "L", "N", "N", L, b);
  for (std::int64_t i = 0; i < n; ++i)
    ASSERT_EQ(b(i), static_cast<double>(1 + i % 3) * two_133) << "row " << i;
}

TEST(FastMath, TrsvReadsBf16SubnormalsExactly) {
  check_trsv<Kokkos::LayoutLeft>();
  check_trsv<Kokkos::LayoutRight>();
}

TEST(FastMath, SpmvReadsBf16SubnormalsExactly) {
  namespace ks = kacc::sparse;
  const std::int64_t rows = 5000, per_row = 40;
  ks::CooMatrix coo;
  coo.num_rows = coo.num_cols = rows;
  std::vector<std::int64_t> expected(rows, 0);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t k = 0; k < per_row; ++k) {
      const std::int64_t j = (i + k * 97) % rows;
      coo.row.push_back(i);
      coo.col.push_back(j);
      coo.val.push_back(mantissa(i, k) * 0x1p-133);
      expected[i] += mantissa(i, k);
    }
  }
  const auto a = ks::make_csr<double, kacc::bf16, int, int, Host::device_type>(coo);
  Plain x("x", rows), y("y", rows);
  Kokkos::deep_copy(x, two_133);
  for (const auto algorithm : {ks::SpmvAlgorithm::row, ks::SpmvAlgorithm::load_balanced}) {
    ks::spmv(Host(), "N", 1.0, a, x, 0.0, y, algorithm);
    for (std::int64_t i = 0; i < rows; ++i)
      ASSERT_EQ(y(i), static_cast<double>(expected[i]))
          << ks::algorithm_name(algorithm) << ": row " << i;
  }
  ks::spmv(Host(), "N", 1.0, ks::ell_from_csr(a), x, 0.0, y);
  for (std::int64_t i = 0; i < rows; ++i)
    ASSERT_EQ(y(i), static_cast<double>(expected[i])) << "ell: row " << i;
}

}  // namespace
