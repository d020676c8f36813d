// Every one of the 2^32 float bit patterns encoded to fp16 and bf16, compared with
// (a) the integer reference codec kacc::detail::ieee_codec and (b) the hardware
// conversion: F16C's vcvtps2ph for fp16, AVX512-BF16's vcvtneps2bf16 for bf16; each also
// through the block stores (16 at a time, from float and from double), compared with the
// one-value store; and to
// scaled<int8_t> at scale 1/8, compared with ties-to-even rounding computed on floor.
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
//
// The hardware comparison needs the instruction compiled in (__F16C__, __AVX512BF16__,
// e.g. from -march=native). A binary built without it on a CPU that has it would compare
// nothing with the hardware and still pass, so that is a failure; on a CPU without the
// instruction the test says that it compared with the reference codec only.

#include <kacc/core.hpp>
#include <kacc/core/block_load.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__F16C__) || defined(__AVX512BF16__)
#include <immintrin.h>
#endif

namespace {

// Per-check counters; "info" checks document behaviour and are not failures.
enum Check : int {
  codec_mismatch,     // kacc(f) != reference codec, non-NaN f
  hw_mismatch,        // kacc(f) != hardware, non-NaN f (non-subnormal f for bf16)
  nan_lost,           // NaN f gave a non-NaN
  double_mismatch,    // kacc(double(f)) != kacc(f): the direct path from double's bits
  block_mismatch,     // a block store of 16 floats, or of them as doubles, != kacc(f)
  nan_codec_bits,     // info: NaN payload bits differ from the codec
  nan_hw_bits,        // info: NaN payload bits differ from the hardware
  hw_subnormal_diff,  // info: bf16 hardware differs on a subnormal input
  check_count
};
const char* const check_names[check_count] = {"codec mismatch",
                                              "hardware mismatch",
                                              "NaN lost",
                                              "double-path mismatch",
                                              "block-store mismatch",
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
    std::printf("[ %s ] 2^32 floats in %.1f s (%d threads)\n", name, seconds,
                Kokkos::DefaultHostExecutionSpace().concurrency());
    for (int c = 0; c < check_count; ++c) {
      const bool needs_hardware = c == hw_mismatch || c == nan_hw_bits || c == hw_subnormal_diff;
      if (needs_hardware && !hardware) {
        std::printf("    %-44s not compared\n", check_names[c]);
        continue;
      }
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

// Stores the 16 floats with patterns first .. first + 15 through Format's block stores
// (store_block's codec, SIMD where the target has it), from float and from the same values
// as doubles, and records each result that differs from the one-value store.
template <class Format>
void check_block_stores(const Sweep& s, const std::uint32_t chunk, const std::uint32_t first) {
  using codec = kacc::Impl::block_codec<Format>;
  float in[16];
  double wide[16];
  for (std::uint32_t k = 0; k < 16; ++k) {
    in[k] = kacc::bit_cast<float>(first + k);
    wide[k] = static_cast<double>(in[k]);
  }
  Format from_float[16], from_double[16];
  codec::template encode<16, float, kacc::overflow::ieee>(in, from_float);
  codec::template encode<16, double, kacc::overflow::ieee>(wide, from_double);
  for (std::uint32_t k = 0; k < 16; ++k) {
    const std::uint16_t one = Format(in[k]).bits;
    if (from_float[k].bits != one || from_double[k].bits != one)
      s.record(chunk, block_mismatch, first + k);
  }
}

// Whether the CPU running the test has an instruction set extension, from the flags the
// Linux kernel reports in /proc/cpuinfo (e.g. "f16c", "avx512_bf16"); "unknown" elsewhere.
enum class cpu_flag { present, absent, unknown };
cpu_flag cpu_has(const std::string& flag) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string word; words >> word;)
      if (word == flag) return cpu_flag::present;
    return cpu_flag::absent;
  }
  return cpu_flag::unknown;
}

// Fails when the CPU has the instruction but the binary was built without it; otherwise
// prints what the test compares with.
void check_hardware_comparison(const char* format, const char* instruction,
                               const char* cpuinfo_flag, const char* macro, bool compiled) {
  const cpu_flag cpu = cpu_has(cpuinfo_flag);
  if (compiled) {
    std::printf("[ %s ] compared with the reference codec and the hardware (%s)\n", format,
                instruction);
  } else if (cpu == cpu_flag::present) {
    ADD_FAILURE() << "this CPU has " << instruction << " (/proc/cpuinfo flag " << cpuinfo_flag
                  << ") but the test was compiled without it (" << macro
                  << " undefined): the hardware comparison would compare nothing. Build with "
                     "-march=native (KACC_ENABLE_NATIVE=ON) or the instruction's -m flag.";
  } else {
    std::printf(
        "[ %s ] compared with the reference codec only: %s not compiled in (%s "
        "undefined) and the CPU %s\n",
        format, instruction, macro,
        cpu == cpu_flag::absent ? "lacks it" : "cannot be asked (no /proc/cpuinfo)");
  }
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
  check_hardware_comparison("fp16", "F16C (vcvtps2ph)", "f16c", "__F16C__", hardware);
  const double seconds = elapsed([&] {
    Kokkos::parallel_for(
        "fp16 sweep", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, chunks),
        [=](std::uint32_t hi) {
          for (std::uint32_t lo = 0; lo < 65536; ++lo) {
            const std::uint32_t u = hi << 16 | lo;
            const float f = kacc::bit_cast<float>(u);
            const std::uint16_t got = kacc::fp16(f).bits;
            const auto ref = static_cast<std::uint16_t>(codec::encode(static_cast<double>(f)));
            if (kacc::fp16(static_cast<double>(f)).bits != got) s.record(hi, double_mismatch, u);
            if (is_nan_bits(u)) {
              if ((got & 0x7fffu) <= 0x7c00u) s.record(hi, nan_lost, u);
              if (got != ref) s.record(hi, nan_codec_bits, u);
            } else if (got != ref) {
              s.record(hi, codec_mismatch, u);
            }
#if defined(__F16C__)
            const std::uint16_t hw = _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
            if (got != hw) s.record(hi, is_nan_bits(u) ? nan_hw_bits : hw_mismatch, u);
#endif
          }
          for (std::uint32_t lo = 0; lo < 65536; lo += 16) {
            check_block_stores<kacc::fp16>(s, hi, hi << 16 | lo);
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
  check_hardware_comparison("bf16", "AVX512-BF16 (vcvtneps2bf16)", "avx512_bf16", "__AVX512BF16__",
                            hardware);
  const double seconds = elapsed([&] {
    Kokkos::parallel_for(
        "bf16 sweep", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, chunks),
        [=](std::uint32_t hi) {
          for (std::uint32_t lo = 0; lo < 65536; lo += 16) {
            [[maybe_unused]] std::uint16_t hw[16];
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
              if (kacc::bf16(static_cast<double>(f)).bits != got) s.record(hi, double_mismatch, u);
              if (is_nan_bits(u)) {
                if ((got & 0x7fffu) <= 0x7f80u) s.record(hi, nan_lost, u);
                if (got != ref) s.record(hi, nan_codec_bits, u);
              } else if (got != ref) {
                s.record(hi, codec_mismatch, u);
              }
              if (hardware && got != hw[k]) {
                s.record(hi,
                         is_nan_bits(u)         ? nan_hw_bits
                         : is_subnormal_bits(u) ? hw_subnormal_diff
                                                : hw_mismatch,
                         u);
              }
            }
            check_block_stores<kacc::bf16>(s, hi, hi << 16 | lo);
          }
        });
  });
  s.report("bf16", seconds, hardware);
}

namespace {

// The int8 a float f must be stored as at scale 2^-3, computed without nearbyint: f * 8 is
// exact in double, its floor and fraction are exact, and the tie goes to the even integer;
// then saturation to [-127, 127], NaN to 0.
std::int8_t int8s_reference(float f) {
  const double q = static_cast<double>(f) * 8;
  if (q != q) return 0;
  if (q >= 127) return 127;
  if (q <= -127) return -127;
  double r = std::floor(q);
  const double fraction = q - r;
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  return static_cast<std::int8_t>(r);
}

}  // namespace

TEST(Exhaustive, Int8sFromEveryFloat) {
  // Every float pattern through scaled<int8_t>'s encode in float at scale 1/8, against the
  // reference above: ties to even, one rounding, saturation, NaN.
  using traits = kacc::format_traits<kacc::scaled<std::int8_t>>;
  unsigned long long mismatches = 0;
  Kokkos::parallel_reduce(
      "int8s sweep", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, chunks),
      [=](std::uint32_t hi, unsigned long long& bad) {
        for (std::uint32_t lo = 0; lo < 65536; ++lo) {
          const float f = kacc::bit_cast<float>(hi << 16 | lo);
          bad += traits::encode<float>(f, 0.125f) != int8s_reference(f);
        }
      },
      mismatches);
  EXPECT_EQ(mismatches, 0u);
}
