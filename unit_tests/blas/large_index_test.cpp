// Launches over more than 2^31 entries index correctly: a 32-bit launch index would wrap
// (Kokkos 3.4) or abort (Kokkos 4) past entry 2^31 - 1. One fp16 vector of 2^31 + 17
// entries (4 GiB), zero but for three entries, two of them past 2^31.
#include <kacc/blas/axpy.hpp>
#include <kacc/blas/dot.hpp>
#include <kacc/blas/nrm2.hpp>

#include <gtest/gtest.h>

namespace {

using Vec = kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<kacc::fp16>>;
constexpr std::int64_t n = (std::int64_t{1} << 31) + 17;

TEST(LargeIndex, Fp16VectorPast2To31Entries) {
  Vec x("x", n);
  x(5) = 1.0;
  x((std::int64_t{1} << 31) + 3) = 2.0;
  x(n - 1) = 4.0;
  EXPECT_EQ(kacc::blas::dot(Kokkos::DefaultHostExecutionSpace(), x, x), 21.0);
  kacc::blas::scal(Kokkos::DefaultHostExecutionSpace(), 0.5, x);
  Kokkos::fence();
  EXPECT_EQ(double(x(n - 1)), 2.0);
  EXPECT_EQ(kacc::blas::nrm2(Kokkos::DefaultHostExecutionSpace(), x), std::sqrt(5.25));
}

}  // namespace
