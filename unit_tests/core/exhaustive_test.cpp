// Every one of the 2^32 float bit patterns encoded to fp16 and bf16, compared with
// (a) the integer reference codec kacc::detail::ieee_codec and (b) the hardware
// conversion: F16C's vcvtps2ph for fp16, AVX512-BF16's vcvtneps2bf16 for bf16.
// Runs in parallel on the default host execution space; ctest label `exhaustive`.
//
// Findings this test pins down (printed with the counts on every run; measured on a
// Xeon with F16C and AVX512-BF16, 2 OpenMP threads: about 20 s per format):
//  - Every non-NaN float: kacc, the reference codec and the hardware agree bit for bit.
//  - NaN inputs: the result is always a NaN with the sign and top payload bits kept and
//    the quiet bit set; kacc, the codec and both hardware instructions agree bit for bit,
//    so the NaN bits are counted (info) rather than required.
//  - vcvtneps2bf16 flushes subnormal inputs to zero (it ignores MXCSR and never produces
//    bf16 subnormals): it differs from correct rounding on the 16,711,678 subnormal
//    patterns whose magnitude rounds to a nonzero bf16 (0x8001 ... 0x7fffff and their
//    negatives). Those are compared with the codec only and the differences counted.

#include <kacc/core.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#if defined(__F16C__) || defined(__AVX512BF16__)
#include <immintrin.h>
#endif

namespace {

// Per-check counters; "info" checks document behaviour and are not failures.
enum Check : int {
  codec_mismatch,     // kacc(f) != reference codec, non-NaN f
  hw_mismatch,        // kacc(f) != hardware, non-NaN f (non-subnormal f for bf16)
  nan_lost,           // NaN f gave a non-NaN
  double_mismatch,    // kacc(double(f)) != kacc(f): the round-to-odd path
  nan_codec_bits,     // info: NaN payload bits differ from the codec
  nan_hw_bits,        // info: NaN payload bits differ from the hardware
  hw_subnormal_diff,  // info: bf16 hardware differs on a subnormal input
  check_count
};
const char* const check_names[check_count] = {"codec mismatch",
                                              "hardware mismatch",
                                              "NaN lost",
                                              "double-path mismatch",
                                              "NaN bits vs codec (info)",
                                              "NaN bits vs hardware (info)",
                                              "hardware differs on subnormal input (info)"};

constexpr std::uint32_t chunks = 1u << 16;  // chunk hi covers patterns hi << 16 | lo

struct Sweep {
  Kokkos::View<std::uint32_t* [check_count], Kokkos::HostSpace> count;
  Kokkos::View<std::uint32_t* [check_count], Kokkos::HostSpace> first;
  Sweep() : count("count", chunks), first("first", chunks) {}

  void record(std::uint32_t chunk, int check, std::uint32_t pattern) const {
    if (count(chunk, check)++ == 0) first(chunk, check) = pattern;
  }

  // Sums the chunks; fails the test on the failing checks and prints everything.
  void report(const char* name, double seconds, bool hardware) const {
    std::printf("[ %s ] 2^32 floats in %.1f s (%d threads)%s\n", name, seconds,
                Kokkos::DefaultHostExecutionSpace().concurrency(),
                hardware ? "" : "; no hardware conversion compiled in");
    for (int c = 0; c < check_count; ++c) {
      unsigned long long total = 0;
      std::uint32_t first_pattern = 0;
      bool seen = false;
      for (std::uint32_t h = 0; h < chunks; ++h) {
        total += count(h, c);
        if (!seen && count(h, c)) first_pattern = first(h, c), seen = true;
      }
      std::printf("    %-44s %llu%s", check_names[c], total, seen ? "" : "\n");
      if (seen) std::printf(" (first pattern 0x%08x)\n", first_pattern);
      if (c < nan_codec_bits) {
        EXPECT_EQ(total, 0u) << check_names[c] << ", first float pattern 0x" << std::hex
                             << first_pattern;
      }
    }
  }
};

bool is_nan_bits(std::uint32_t u) {
  return (u & 0x7fffffffu) > 0x7f800000u;
}
bool is_subnormal_bits(std::uint32_t u) {
  return (u & 0x7f800000u) == 0 && (u & 0x7fffffu);
}

template <class F>
double elapsed(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(Exhaustive, Fp16FromEveryFloat) {
  using codec = kacc::detail::ieee_codec<5, 10>;
  Sweep s;
#if defined(__F16C__)
  constexpr bool hardware = true;
#else
  constexpr bool hardware = false;
#endif
  const double seconds = elapsed([&] {
    Kokkos::parallel_for(
        "fp16 sweep", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, chunks),
        [=](std::uint32_t hi) {
          for (std::uint32_t lo = 0; lo < 65536; ++lo) {
            const std::uint32_t u = hi << 16 | lo;
            const float f = kacc::bit_cast<float>(u);
            const std::uint16_t got = kacc::fp16(f).bits;
            const auto ref = static_cast<std::uint16_t>(codec::encode(static_cast<double>(f)));
#if defined(__F16C__)
            const std::uint16_t hw = _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#else
            const std::uint16_t hw = got;
#endif
            if (kacc::fp16(static_cast<double>(f)).bits != got) s.record(hi, double_mismatch, u);
            if (is_nan_bits(u)) {
              if ((got & 0x7fffu) <= 0x7c00u) s.record(hi, nan_lost, u);
              if (got != ref) s.record(hi, nan_codec_bits, u);
              if (got != hw) s.record(hi, nan_hw_bits, u);
            } else {
              if (got != ref) s.record(hi, codec_mismatch, u);
              if (got != hw) s.record(hi, hw_mismatch, u);
            }
          }
        });
  });
  s.report("fp16", seconds, hardware);
}

TEST(Exhaustive, Bf16FromEveryFloat) {
  using codec = kacc::detail::ieee_codec<8, 7>;
  Sweep s;
#if defined(__AVX512BF16__)
  constexpr bool hardware = true;
#else
  constexpr bool hardware = false;
#endif
  const double seconds = elapsed([&] {
    Kokkos::parallel_for(
        "bf16 sweep", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, chunks),
        [=](std::uint32_t hi) {
          for (std::uint32_t lo = 0; lo < 65536; lo += 16) {
            std::uint16_t hw[16];
#if defined(__AVX512BF16__)
            const __m512i patterns = _mm512_add_epi32(
                _mm512_set1_epi32(static_cast<int>(hi << 16 | lo)),
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
            const __m256bh converted = _mm512_cvtneps_pbh(_mm512_castsi512_ps(patterns));
            std::memcpy(hw, &converted, sizeof hw);
#endif
            for (std::uint32_t k = 0; k < 16; ++k) {
              const std::uint32_t u = hi << 16 | (lo + k);
              const float f = kacc::bit_cast<float>(u);
              const std::uint16_t got = kacc::bf16(f).bits;
              const auto ref = static_cast<std::uint16_t>(codec::encode(static_cast<double>(f)));
              if (!hardware) hw[k] = got;
              if (kacc::bf16(static_cast<double>(f)).bits != got) s.record(hi, double_mismatch, u);
              if (is_nan_bits(u)) {
                if ((got & 0x7fffu) <= 0x7f80u) s.record(hi, nan_lost, u);
                if (got != ref) s.record(hi, nan_codec_bits, u);
                if (got != hw[k]) s.record(hi, nan_hw_bits, u);
              } else {
                if (got != ref) s.record(hi, codec_mismatch, u);
                if (got != hw[k])
                  s.record(hi, is_subnormal_bits(u) ? hw_subnormal_diff : hw_mismatch, u);
              }
            }
          }
        });
  });
  s.report("bf16", seconds, hardware);
  if (!hardware) GTEST_SKIP() << "compared with the reference codec only: no AVX512-BF16";
}
