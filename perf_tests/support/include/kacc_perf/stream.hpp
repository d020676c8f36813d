#pragma once
// STREAM-like bandwidth of an execution space, measured in the same run as the kernels
// it is compared with: read (sum), copy, triad and an in-place update over arrays well
// past the last-level cache, first-touch initialised in parallel, repetitions
// interleaved, median and best.
//
// Copy and triad are counted as McCalpin's STREAM counts them (2 and 3 arrays per pass).
// Their stores first read the line they write (write-allocate: the compilers kacc is
// built with emit no non-temporal stores for these loops), so the memory traffic is 3 and
// 4 arrays per pass; stream_result also gives that traffic, named *_write_allocate. The
// update (a = s * a, 2 arrays, no write-allocate because the line was just read) is the
// access pattern of the roofline kernel.
#include <kacc/core/pragma_simd.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace kacc_perf {

/// GB/s of each STREAM kernel: medians and best repetitions.
struct stream_result {
  /// Medians, McCalpin's counting (copy 2, triad 3 arrays per pass; read 1; update 2).
  double read_gbs = 0, copy_gbs = 0, triad_gbs = 0, update_gbs = 0;
  /// Best repetitions, same counting.
  double read_gbs_max = 0, copy_gbs_max = 0, triad_gbs_max = 0, update_gbs_max = 0;
  std::size_t bytes_per_array = 0;

  /// Write-allocate factors: memory traffic / McCalpin's count for copy (3/2), triad (4/3).
  static constexpr double copy_write_allocate = 1.5, triad_write_allocate = 4.0 / 3.0;

  /// The highest memory traffic any of the kernels sustained in its best repetition,
  /// write-allocate included: the bandwidth roof for kernels whose counted bytes are all
  /// the bytes they move (reads, and in-place writes of lines just read).
  double traffic_roof_gbs() const {
    return std::max({read_gbs_max, update_gbs_max, copy_gbs_max * copy_write_allocate,
                     triad_gbs_max * triad_write_allocate});
  }
};

inline double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();  // no measurement
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

KACC_SIMD_LOOPS_BEGIN
template <class Exec = Kokkos::DefaultExecutionSpace>
stream_result measure_stream(std::size_t bytes_per_array, int repetitions = 10) {
  using View = Kokkos::View<double*, typename Exec::memory_space>;
  const std::size_t n = bytes_per_array / sizeof(double);
  View a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream_a"), n);
  View b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream_b"), n);
  View c(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream_c"), n);
  const Kokkos::RangePolicy<Exec> all(0, n);
  const std::size_t block = 4096;
  const std::size_t blocks = (n + block - 1) / block;
  Kokkos::parallel_for(
      "kacc_perf::stream_init", all, KOKKOS_LAMBDA(std::size_t i) {
        a(i) = 1.0;
        b(i) = 2.0;
        c(i) = 0.0;
      });
  Kokkos::fence();
  std::vector<double> read, copy, triad, update;
  const double bytes = static_cast<double>(n * sizeof(double));
  for (int r = -1; r < repetitions; ++r) {  // r = -1 warms up
    Kokkos::Timer t;
    double sum = 0;
    // Sixteen partial sums per block: one running sum would be bound by the add latency
    // (it cannot be vectorised without reassociation), not by memory. Without
    // KACC_PRAGMA_SIMD GCC 12 leaves the sixteen scalar (16 vaddsd per 128 bytes): 17-20
    // GB/s on a Sapphire Rapids with 2 threads, 26-29 vectorised.
    Kokkos::parallel_reduce(
        "kacc_perf::stream_read", Kokkos::RangePolicy<Exec>(0, blocks),
        KOKKOS_LAMBDA(std::size_t b, double& s) {
          double partial[16] = {};
          const std::size_t end = (b + 1) * block < n ? (b + 1) * block : n;
          std::size_t i = b * block;
          for (; i + 16 <= end; i += 16) {
            KACC_PRAGMA_SIMD
            for (int k = 0; k < 16; ++k) partial[k] += a(i + k);
          }
          for (; i < end; ++i) partial[0] += a(i);
          for (int k = 0; k < 16; ++k) s += partial[k];
        },
        sum);
    Kokkos::fence();
    const double t_read = t.seconds();
    t.reset();
    Kokkos::parallel_for(
        "kacc_perf::stream_copy", all, KOKKOS_LAMBDA(std::size_t i) { c(i) = a(i); });
    Kokkos::fence();
    const double t_copy = t.seconds();
    t.reset();
    Kokkos::parallel_for(
        "kacc_perf::stream_triad", all, KOKKOS_LAMBDA(std::size_t i) { a(i) = b(i) + 3.0 * c(i); });
    Kokkos::fence();
    const double t_triad = t.seconds();
    t.reset();
    // Alternates between 1.25 and 0.8 so the values stay bounded over repetitions.
    const double scale = r % 2 ? 0.8 : 1.25;
    Kokkos::parallel_for(
        "kacc_perf::stream_update", all, KOKKOS_LAMBDA(std::size_t i) { b(i) = scale * b(i); });
    Kokkos::fence();
    const double t_update = t.seconds();
    if (r < 0 || sum < 0) continue;
    read.push_back(bytes / t_read * 1e-9);
    copy.push_back(2 * bytes / t_copy * 1e-9);
    triad.push_back(3 * bytes / t_triad * 1e-9);
    update.push_back(2 * bytes / t_update * 1e-9);
  }
  stream_result res;
  res.bytes_per_array = n * sizeof(double);
  res.read_gbs = median(read);
  res.copy_gbs = median(copy);
  res.triad_gbs = median(triad);
  res.update_gbs = median(update);
  res.read_gbs_max = *std::max_element(read.begin(), read.end());
  res.copy_gbs_max = *std::max_element(copy.begin(), copy.end());
  res.triad_gbs_max = *std::max_element(triad.begin(), triad.end());
  res.update_gbs_max = *std::max_element(update.begin(), update.end());
  return res;
}
KACC_SIMD_LOOPS_END

}  // namespace kacc_perf
