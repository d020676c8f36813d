// The roofline kernel on bf16 subnormals, in a program built with -ffast-math, which sets
// denormals-are-zero for the whole process at start-up. Its block loads widen bf16 through
// float, which reads a subnormal float as zero under that flag, so its work items must then
// take the entry-by-entry path, exact under any flags. (Block stores of such values are
// checked against the scalar encoder in core_block_load_tests.)
#include <kacc_roofline/kernel.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

namespace {

TEST(RooflineFastMath, DenormalsAreZeroIsOn) {
  volatile float tiny = 0x1p-140f;
  EXPECT_EQ(static_cast<double>(tiny), 0.0) << "this binary does not run with denormals-are-zero";
}

// At zero rounds an entry becomes the mean of eight copies of itself, which is itself in any
// order of the additions. Two entries in three are bf16 subnormals (m 2^-133, either sign),
// the third a normal value, so every block mixes both: the kernel must keep every entry's
// bits. 1000 entries: 15 whole work items of 64 entries and a short last one.
TEST(RooflineFastMath, ZeroRoundsKeepBf16Subnormals) {
  using V = kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<kacc::bf16>>;
  const std::size_t n = 1000;
  V x("x", n);
  const auto bits = [](std::size_t i) {
    const auto sign = static_cast<std::uint16_t>(i % 2 == 0 ? 0 : 0x8000);
    const auto magnitude = static_cast<std::uint16_t>(i % 3 == 2 ? 0x3f80 + i % 100 : 1 + i % 127);
    return static_cast<std::uint16_t>(sign | magnitude);
  };
  for (std::size_t i = 0; i < n; ++i) x.storage()(i) = kacc::bf16::from_bits(bits(i));
  kacc_roofline::run<0>(x);
  Kokkos::fence();
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (x.storage()(i).bits != bits(i) && ++mismatches <= 5) {
      ADD_FAILURE() << "entry " << i << ": stored 0x" << std::hex << x.storage()(i).bits
                    << ", was 0x" << bits(i);
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
