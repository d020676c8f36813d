// kacc-perf-blas: speed and accuracy of kacc DOT, GEMV and TRSV in every storage
// configuration against OpenBLAS and Kokkos Kernels on the same data, with the STREAM read
// bandwidth of the same run, and each format's conversion throughput per core next to the
// rate a core must convert at to keep up with memory. Writes blas_speed.csv,
// blas_accuracy.csv, blas_summary.csv, conversion.csv and blas.json into --out DIR;
// --quick is a smoke run, --full adds larger sizes.
// --accumulators also times DOT and GEMV with the accumulators of "Accuracy as a choice"
// (configs fp64+comp, fp64+dd, fp64+qd, fp64+exact, fp64<-fp32+dd, fp64<-fp32+exact) and
// measures their errors, also on GenDot data of condition 1e16 (distribution cond1e16).
//
// OpenBLAS runs on as many threads as Kokkos, on the same CPUs (openblas_threads.hpp);
// every row says how many threads its implementation used. A timing that is missing is
// NaN, and a target computed from it is MISSING, never met.
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/blas/trsv.hpp>
#include <kacc/core/quad_double.hpp>
#include <kacc_perf/run_info.hpp>
#include <kacc_perf/stream.hpp>
#include <kacc_perf/targets.hpp>
#include <kacc_testing/gendot.hpp>

#include "blas_reference.hpp"
#include "openblas_threads.hpp"

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>
#ifdef KACC_HAVE_KOKKOSKERNELS
#include <KokkosBlas1_dot.hpp>
#include <KokkosBlas2_gemv.hpp>
#endif

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>

namespace {

volatile double sink = 0;  // keeps the dot results alive
constexpr double missing = std::numeric_limits<double>::quiet_NaN();

// Threads each implementation runs on: Kokkos's concurrency for kacc and Kokkos Kernels,
// what OpenBLAS reports for OpenBLAS (set in main).
int kokkos_threads = 0, openblas_threads = 0;
// --accumulators: also the accumulator variants of DOT and GEMV.
bool with_accumulators = false;
// --no-accuracy: the speed table alone (the accuracy table's references take minutes on one
// host core; a GPU run wants its device time for the kernels).
bool with_accuracy = true;
// --benchmark_list_tests: the variants' names, once each; none timed, no file written.
bool listing = false;
int threads_of(const std::string& impl) {
  return impl == "openblas" ? openblas_threads : kokkos_threads;
}

using Exec = Kokkos::DefaultExecutionSpace;
using kacc_perf::level;

// Deterministic uniform [-1,1] data, generated in parallel where it lives.
KOKKOS_INLINE_FUNCTION double hash_uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1p-52 - 1.0;
}

// A scaled rank-1 dst filled with the fp64 data of src under one scale for the vector,
// chosen by hand (kacc::deep_copy lacks rank-1 scaled). A function of its own: device
// lambdas may not first capture a variable inside an if constexpr branch (nvcc).
template <class Dst, class Src>
void fill_scaled_vector(const Dst& dst, const Src& src) {
  // In dst's space: the conversion table's vectors live in host memory in every build.
  using Exec = typename Dst::execution_space;
  double m = 0;
  Kokkos::parallel_reduce(
      "fill_max", Kokkos::RangePolicy<Exec>(0, src.extent(0)),
      KOKKOS_LAMBDA(std::size_t i, double& v) {
        const double a = kacc::math::fabs(src(i));
        v = a > v ? a : v;
      },
      Kokkos::Max<double>(m));
  Kokkos::deep_copy(dst.scales(), m > 0 ? m / 32767.0 : 1.0);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec>(0, src.extent(0)),
      KOKKOS_LAMBDA(std::size_t i) { dst(i) = src(i); });
  Exec().fence();
}

// dst (any format, rank 1 or 2) filled with the fp64 data of src, converted once.
template <class Dst, class Src>
void fill_from(const Dst& dst, const Src& src) {
  if constexpr (kacc::is_kacc_view_v<Dst>) {
    if constexpr (Dst::is_scaled && Dst::rank == 1) {
      fill_scaled_vector(dst, src);
    } else {
      kacc::deep_copy(dst, src);
    }
  } else {
    kacc::deep_copy(dst, src);
  }
}

struct variant {
  std::string kernel, impl, config, layout, trans;
  std::int64_t m = 0, n = 0;
  int threads = 0;
  double bytes = 0, flops = 0;
  std::function<void()> run, reset;
  std::vector<double> times;
};
std::vector<std::unique_ptr<variant>> variants;

// OpenBLAS reads host memory: where the views live on a GPU it has no part in the run,
// and the targets against it read MISSING.
constexpr bool openblas_reads_views =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;

void add(variant v) {
  if (v.impl == "openblas" && !openblas_reads_views) return;
  variants.push_back(std::make_unique<variant>(std::move(v)));
}

// Runs every registered variant once per repetition through Google Benchmark (manual time,
// one iteration), so the variants interleave repetition by repetition; when listing, lists
// them once.
void run_all(int repetitions) {
  if (listing) repetitions = 0;
  for (std::size_t k = 0; k < variants.size(); ++k) {
    variant* v = variants[k].get();
    benchmark::RegisterBenchmark((v->kernel + "/" + v->impl + "/" + v->config + "/" + v->layout +
                                  v->trans + "/" + std::to_string(v->n))
                                     .c_str(),
                                 [v](benchmark::State& state) {
                                   for (auto _ : state) {
                                     if (v->reset) v->reset();
                                     Kokkos::fence();
                                     Kokkos::Timer t;
                                     v->run();
                                     Kokkos::fence();
                                     const double s = t.seconds();
                                     state.SetIterationTime(s);
                                     v->times.push_back(s);
                                   }
                                 })
        ->Iterations(1)
        ->UseManualTime();
  }
  struct quiet : benchmark::BenchmarkReporter {
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>&) override {}
  } reporter;
  for (int r = 0; r <= repetitions; ++r) {  // r = 0 warms up
    benchmark::RunSpecifiedBenchmarks(&reporter);
    if (r == 0)
      for (auto& v : variants) v->times.clear();
  }
  benchmark::ClearRegisteredBenchmarks();
}

template <class S>
const char* storage_name() {
  return kacc::format_name<S>();
}

// ---------------------------------------------------------------- GEMV
template <class Layout>
void register_gemv(std::int64_t n, std::uint64_t seed) {
  const std::string lay = std::is_same<Layout, Kokkos::LayoutLeft>::value ? "L" : "R";
  Kokkos::View<double**, Layout> A64("A64", n, n);
  Kokkos::View<double*> x64("x64", n), y64("y64", n);
  Kokkos::parallel_for(
      "gen", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {n, n}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { A64(i, j) = hash_uniform(seed, i * n + j); });
  Kokkos::parallel_for(
      "gen", n, KOKKOS_LAMBDA(std::int64_t i) { x64(i) = hash_uniform(seed + 1, i); });
  Kokkos::View<float**, Layout> A32("A32", n, n);
  Kokkos::View<float*> x32("x32", n), y32("y32", n);
  fill_from(A32, A64);
  fill_from(x32, x64);
  const double nn = static_cast<double>(n) * n;
  auto base = [&](const std::string& impl, const std::string& config, const char* t, double abytes,
                  double vbytes) {
    variant v;
    v.kernel = "gemv";
    v.impl = impl;
    v.threads = threads_of(impl);
    v.config = config;
    v.layout = lay;
    v.trans = t;
    v.m = v.n = n;
    v.bytes = nn * abytes + 2.0 * n * vbytes;
    v.flops = 2 * nn;
    return v;
  };
  for (const char* t : {"N", "T"}) {
    const bool tr = t[0] == 'T';
    const auto order = lay == "L" ? CblasColMajor : CblasRowMajor;
    const auto ct = tr ? CblasTrans : CblasNoTrans;
    auto v = base("kacc", "fp64", t, 8, 8);
    v.run = [=] { kacc::blas::gemv(t, 1.0, A64, x64, 0.0, y64); };
    add(v);
    v = base("kacc", "fp32", t, 4, 4);
    v.run = [=] { kacc::blas::gemv(t, 1.0f, A32, x32, 0.0f, y32); };
    add(v);
    v = base("openblas", "fp64", t, 8, 8);
    v.run = [=] {
      cblas_dgemv(order, ct, n, n, 1.0, A64.data(), n, x64.data(), 1, 0.0, y64.data(), 1);
    };
    add(v);
    v = base("openblas", "fp32", t, 4, 4);
    v.run = [=] {
      cblas_sgemv(order, ct, n, n, 1.0f, A32.data(), n, x32.data(), 1, 0.0f, y32.data(), 1);
    };
    add(v);
#ifdef KACC_HAVE_KOKKOSKERNELS
    v = base("kokkoskernels", "fp64", t, 8, 8);
    v.run = [=] { KokkosBlas::gemv(t, 1.0, A64, x64, 0.0, y64); };
    add(v);
    v = base("kokkoskernels", "fp32", t, 4, 4);
    v.run = [=] { KokkosBlas::gemv(t, 1.0f, A32, x32, 0.0f, y32); };
    add(v);
    v = base("kokkoskernels", "fp64<-fp32", t, 4, 8);
    v.run = [=] { KokkosBlas::gemv(t, 1.0, A32, x64, 0.0, y64); };
    add(v);
#endif
  }
  // kacc accessor configurations: A and x stored in S, arithmetic T, y in T.
  auto acc = [&](auto s_tag, auto t_tag, const std::string& config) {
    using S = decltype(s_tag);
    using T = decltype(t_tag);
    kacc::View<T**, Layout, kacc::StoredAs<S>> A("A", n, n);
    kacc::View<T*, kacc::StoredAs<S>> x("x", n);
    kacc::View<T*> y("y", n);
    fill_from(A, A64);
    fill_from(x, x64);
    for (const char* t : {"N", "T"}) {
      auto v = base("kacc", config, t, sizeof(typename decltype(A)::storage_type),
                    sizeof(typename decltype(x)::storage_type));
      v.run = [=] { kacc::blas::gemv(t, T(1), A, x, T(0), y); };
      add(v);
    }
  };
  acc(float(), double(), "fp64<-fp32");
  acc(kacc::fp16(), double(), "fp64<-fp16");
  acc(kacc::bf16(), double(), "fp64<-bf16");
  acc(kacc::fp16(), float(), "fp32<-fp16");
  acc(kacc::scaled<std::int16_t>(), double(), "fp64<-int16s");
  if (!with_accumulators) return;
  for (const char* t : {"N", "T"}) {
    auto v = base("kacc", "fp64+comp", t, 8, 8);
    v.run = [=] {
      kacc::blas::gemv<double, kacc::compensated<double>>(t, 1.0, A64, x64, 0.0, y64);
    };
    add(v);
    v = base("kacc", "fp64+dd", t, 8, 8);
    v.run = [=] { kacc::blas::gemv<double, kacc::double_double>(t, 1.0, A64, x64, 0.0, y64); };
    add(v);
    v = base("kacc", "fp64+qd", t, 8, 8);
    v.run = [=] { kacc::blas::gemv<double, kacc::quad_double>(t, 1.0, A64, x64, 0.0, y64); };
    add(v);
    v = base("kacc", "fp64+exact", t, 8, 8);
    v.run = [=] { kacc::blas::gemv<double, kacc::exact<double>>(t, 1.0, A64, x64, 0.0, y64); };
    add(v);
    v = base("kacc", "fp64<-fp32+dd", t, 4, 4);
    v.run = [=] { kacc::blas::gemv<double, kacc::double_double>(t, 1.0, A32, x32, 0.0, y64); };
    add(v);
    v = base("kacc", "fp64<-fp32+exact", t, 4, 4);
    v.run = [=] { kacc::blas::gemv<double, kacc::exact<double>>(t, 1.0, A32, x32, 0.0, y64); };
    add(v);
  }
}

// ---------------------------------------------------------------- DOT
void register_dot(std::int64_t n, std::uint64_t seed) {
  Kokkos::View<double*> x64("x64", n), y64("y64", n);
  Kokkos::parallel_for(
      "gen", n, KOKKOS_LAMBDA(std::int64_t i) {
        x64(i) = hash_uniform(seed, i);
        y64(i) = hash_uniform(seed + 1, i);
      });
  Kokkos::View<float*> x32("x32", n), y32("y32", n);
  fill_from(x32, x64);
  fill_from(y32, y64);
  auto base = [&](const std::string& impl, const std::string& config, double bytes) {
    variant v;
    v.kernel = "dot";
    v.impl = impl;
    v.threads = threads_of(impl);
    v.config = config;
    v.layout = "-";
    v.trans = "-";
    v.m = 1;
    v.n = n;
    v.bytes = 2.0 * n * bytes;
    v.flops = 2.0 * n;
    return v;
  };
  auto v = base("kacc", "fp64", 8);
  v.run = [=] { sink = kacc::blas::dot(x64, y64); };
  add(v);
  v = base("kacc", "fp32", 4);
  v.run = [=] { sink = kacc::blas::dot(x32, y32); };
  add(v);
  v = base("openblas", "fp64", 8);
  v.run = [=] { sink = cblas_ddot(n, x64.data(), 1, y64.data(), 1); };
  add(v);
  v = base("openblas", "fp32", 4);
  v.run = [=] { sink = cblas_sdot(n, x32.data(), 1, y32.data(), 1); };
  add(v);
#ifdef KACC_HAVE_KOKKOSKERNELS
  v = base("kokkoskernels", "fp64", 8);
  v.run = [=] { sink = KokkosBlas::dot(x64, y64); };
  add(v);
  v = base("kokkoskernels", "fp32", 4);
  v.run = [=] { sink = KokkosBlas::dot(x32, y32); };
  add(v);
#endif
  auto acc = [&](auto s_tag, auto t_tag, const std::string& config) {
    using S = decltype(s_tag);
    using T = decltype(t_tag);
    kacc::View<T*, kacc::StoredAs<S>> x("x", n), y("y", n);
    fill_from(x, x64);
    fill_from(y, y64);
    auto w = base("kacc", config, sizeof(typename decltype(x)::storage_type));
    w.run = [=] { sink = kacc::blas::dot(x, y); };
    add(w);
  };
  acc(float(), double(), "fp64<-fp32");
  acc(kacc::fp16(), double(), "fp64<-fp16");
  acc(kacc::bf16(), double(), "fp64<-bf16");
  acc(kacc::fp16(), float(), "fp32<-fp16");
  acc(kacc::scaled<std::int16_t>(), double(), "fp64<-int16s");
  if (!with_accumulators) return;
  v = base("kacc", "fp64+comp", 8);
  v.run = [=] { sink = kacc::blas::dot<double, kacc::compensated<double>>(x64, y64); };
  add(v);
  v = base("kacc", "fp64+dd", 8);
  v.run = [=] { sink = kacc::blas::dot<double, kacc::double_double>(x64, y64); };
  add(v);
  v = base("kacc", "fp64+qd", 8);
  v.run = [=] { sink = kacc::blas::dot<double, kacc::quad_double>(x64, y64); };
  add(v);
  v = base("kacc", "fp64+exact", 8);
  v.run = [=] { sink = kacc::blas::dot<double, kacc::exact<double>>(x64, y64); };
  add(v);
  v = base("kacc", "fp64<-fp32+dd", 4);
  v.run = [=] { sink = kacc::blas::dot<double, kacc::double_double>(x32, y32); };
  add(v);
  v = base("kacc", "fp64<-fp32+exact", 4);
  v.run = [=] { sink = kacc::blas::dot<double, kacc::exact<double>>(x32, y32); };
  add(v);
}

// ---------------------------------------------------------------- TRSV (lower, N, non-unit)
void register_trsv(std::int64_t n, std::uint64_t seed) {
  // Well conditioned: off-diagonal uniform/n, unit-sized diagonal; b reset every repetition.
  Kokkos::View<double**, Kokkos::LayoutLeft> L64("L64", n, n);
  Kokkos::View<double*> b0("b0", n), b64("b64", n);
  Kokkos::parallel_for(
      "gen", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {n, n}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        L64(i, j) = i == j ? 1.5 + 0.5 * hash_uniform(seed, i * n + j)
                           : (j < i ? hash_uniform(seed, i * n + j) / n : 0.0);
      });
  Kokkos::parallel_for(
      "gen", n, KOKKOS_LAMBDA(std::int64_t i) { b0(i) = hash_uniform(seed + 1, i); });
  Kokkos::View<float**, Kokkos::LayoutLeft> L32("L32", n, n);
  Kokkos::View<float*> b32("b32", n);
  fill_from(L32, L64);
  const double nn = 0.5 * n * static_cast<double>(n);
  auto base = [&](const std::string& impl, const std::string& config, double abytes) {
    variant v;
    v.kernel = "trsv";
    v.impl = impl;
    v.threads = threads_of(impl);
    v.config = config;
    v.layout = "L";
    v.trans = "N";
    v.m = v.n = n;
    v.bytes = nn * abytes;
    v.flops = 2 * nn;
    return v;
  };
  auto v = base("kacc", "fp64", 8);
  v.reset = [=] { Kokkos::deep_copy(b64, b0); };
  v.run = [=] { kacc::blas::trsv("L", "N", "N", L64, b64); };
  add(v);
  v = base("openblas", "fp64", 8);
  v.run = [=] {
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, L64.data(), n, b64.data(),
                1);
  };
  add(v);
  auto r32 = [=] { fill_from(b32, b0); };
  v = base("kacc", "fp32", 4);
  v.reset = r32;
  v.run = [=] { kacc::blas::trsv("L", "N", "N", L32, b32); };
  add(v);
  v = base("openblas", "fp32", 4);
  v.reset = r32;
  v.run = [=] {
    cblas_strsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, L32.data(), n, b32.data(),
                1);
  };
  add(v);
  auto acc = [&](auto s_tag, auto t_tag, const std::string& config) {
    using S = decltype(s_tag);
    using T = decltype(t_tag);
    kacc::View<T**, Kokkos::LayoutLeft, kacc::StoredAs<S>> L("L", n, n);
    kacc::View<T*> b("b", n);
    fill_from(L, L64);
    auto w = base("kacc", config, sizeof(typename decltype(L)::storage_type));
    w.reset = [=] { fill_from(b, b0); };
    w.run = [=] { kacc::blas::trsv("L", "N", "N", L, b); };
    add(w);
  };
  acc(float(), double(), "fp64<-fp32");
  acc(kacc::fp16(), double(), "fp64<-fp16");
  acc(kacc::bf16(), double(), "fp64<-bf16");
  acc(kacc::fp16(), float(), "fp32<-fp16");
  acc(kacc::scaled<std::int16_t>(), double(), "fp64<-int16s");
}

// ---------------------------------------------------------------- conversion throughput
// One core widening stored entries to fp64 inside a lane-split sum, as the reduction
// kernels do: "scalar" reads convert<double>(v(i)) (the kernels' plain loops), "block"
// reads through kacc::Impl::load_block (SIMD conversions where this host has them).
// The buffer stays in L1/L2, so the time is the conversion's, not memory's.
constexpr std::int64_t convert_entries = 4096, convert_passes = 256;

template <bool Block, class V>
double convert_and_sum(const V& v) {
  constexpr int L = kacc::blas::Impl::host_lanes;
  double lane[L] = {};
  for (std::int64_t pass = 0; pass < convert_passes; ++pass) {
    for (std::int64_t i = 0; i < convert_entries; i += L) {
      if constexpr (Block) {
        double block[L];
        kacc::Impl::load_block<L>(v, i, block);
        for (int l = 0; l < L; ++l) lane[l] += block[l];
      } else {
        for (int l = 0; l < L; ++l) lane[l] += kacc::convert<double>(v(i + l));
      }
    }
  }
  double s = 0;
  for (int l = 0; l < L; ++l) s += lane[l];
  return s;
}

template <class S>
void register_conversion_format(const std::string& config) {
  kacc::View<double*, Kokkos::HostSpace, kacc::StoredAs<S>> v("convert", convert_entries);
  Kokkos::View<double*, Kokkos::HostSpace> src("src", convert_entries);
  for (std::int64_t i = 0; i < convert_entries; ++i) src(i) = hash_uniform(15, i);
  fill_from(v, src);
  auto base = [&](const std::string& impl) {
    variant w;
    w.kernel = "convert";
    w.impl = impl;
    w.threads = 1;
    w.config = config;
    w.layout = "-";
    w.trans = "-";
    w.m = convert_passes;  // m x n values per call, as the report reads conversion rows
    w.n = convert_entries;
    w.bytes = static_cast<double>(convert_entries) * convert_passes *
              sizeof(typename decltype(v)::storage_type);
    w.flops = static_cast<double>(convert_entries) * convert_passes;  // values converted
    return w;
  };
  auto w = base("scalar");
  w.run = [=] { sink = convert_and_sum<false>(v); };
  add(w);
  w = base("block");
  w.run = [=] { sink = convert_and_sum<true>(v); };
  add(w);
}

void register_conversion() {
  register_conversion_format<double>("fp64");
  register_conversion_format<float>("fp32");
  register_conversion_format<kacc::fp16>("fp16");
  register_conversion_format<kacc::bf16>("bf16");
  register_conversion_format<kacc::scaled<std::int16_t>>("int16s");
  register_conversion_format<kacc::scaled<std::int8_t>>("int8s");
}

// ---------------------------------------------------------------- accuracy
struct acc_row {
  std::string kernel, config, dist;
  std::size_t n;
  std::vector<double> errors;
};

template <class S, class T, class A = T>
struct acc_config {
  using storage = S;
  using arith = T;
  using accumulator = A;
};

// Relative errors of every configuration for one problem, against the exact reference.
template <class F>
void for_configs(F&& f) {
  f(acc_config<double, double>(), "fp64");
  f(acc_config<float, float>(), "fp32");
  f(acc_config<float, double>(), "fp64<-fp32");
  f(acc_config<kacc::fp16, double>(), "fp64<-fp16");
  f(acc_config<kacc::bf16, double>(), "fp64<-bf16");
  f(acc_config<kacc::fp16, float>(), "fp32<-fp16");
  f(acc_config<kacc::scaled<std::int16_t>, double>(), "fp64<-int16s");
}

// The accumulator variants of --accumulators, named as in the speed rows.
template <class F>
void for_accumulator_configs(F&& f) {
  f(acc_config<double, double, kacc::compensated<double>>(), "fp64+comp");
  f(acc_config<double, double, kacc::double_double>(), "fp64+dd");
  f(acc_config<double, double, kacc::quad_double>(), "fp64+qd");
  f(acc_config<double, double, kacc::exact<double>>(), "fp64+exact");
  f(acc_config<float, double, kacc::double_double>(), "fp64<-fp32+dd");
  f(acc_config<float, double, kacc::exact<double>>(), "fp64<-fp32+exact");
}

// What the ill-conditioned rows compare with the accumulators: plain fp64 accumulation of
// fp64 and of fp32 data (fp16, bf16 and int16s cannot hold GenDot's exponent range).
template <class F>
void for_plain_fp64_configs(F&& f) {
  f(acc_config<double, double>(), "fp64");
  f(acc_config<float, double>(), "fp64<-fp32");
}

// Condition number of the ill-conditioned rows: where plain fp64 loses every digit and the
// accumulators differ visibly.
constexpr double ill_condition = 1e16;
constexpr const char* ill_distribution = "cond1e16";

template <class C>
using vec_t = kacc::View<typename C::arith*, kacc::StoredAs<typename C::storage>>;
template <class C>
using mat_t =
    kacc::View<typename C::arith**, Kokkos::LayoutLeft, kacc::StoredAs<typename C::storage>>;

// Relative error of configuration C's DOT of x and y against the correctly rounded ref.
template <class C>
double dot_error(C, const std::vector<double>& x, const std::vector<double>& y, double ref) {
  const double r = kacc::blas::dot<typename C::arith, typename C::accumulator>(
      kacc_blas_ref::make_vector<vec_t<C>>(x), kacc_blas_ref::make_vector<vec_t<C>>(y));
  return std::fabs(r - ref) / std::fabs(ref);
}

// Relative 1-norm error of configuration C's GEMV "N" of the row-major n x n A against ref.
template <class C>
double gemv_error(C, const std::vector<double>& A, std::size_t n, const std::vector<double>& x,
                  const std::vector<double>& ref) {
  Kokkos::View<typename C::arith*> y("y", n);
  kacc::blas::gemv<typename C::arith, typename C::accumulator>(
      "N", 1, kacc_blas_ref::make_matrix<mat_t<C>>(A, n, n),
      kacc_blas_ref::make_vector<vec_t<C>>(x), 0, y);
  return kacc_blas_ref::rel_error_1norm(kacc_blas_ref::stored(y), ref);
}

std::vector<acc_row> accuracy(level lv) {
  using namespace kacc_blas_ref;
  const std::vector<std::size_t> gemv_n = lv == level::quick ? std::vector<std::size_t>{256}
                                          : lv == level::full
                                              ? std::vector<std::size_t>{1024, 4096, 8192}
                                              : std::vector<std::size_t>{1024, 4096};
  const std::vector<std::size_t> dot_n = lv == level::quick ? std::vector<std::size_t>{1 << 14}
                                         : lv == level::full
                                             ? std::vector<std::size_t>{1 << 16, 1 << 20, 1 << 24}
                                             : std::vector<std::size_t>{1 << 16, 1 << 20, 1 << 22};
  const std::vector<std::size_t> trsv_n = lv == level::quick ? std::vector<std::size_t>{256}
                                          : lv == level::full
                                              ? std::vector<std::size_t>{1024, 2048, 4096}
                                              : std::vector<std::size_t>{1024, 2048};
  const int seeds = 10;
  std::map<std::string, acc_row> rows;
  auto record = [&](const std::string& k, const std::string& c, distribution d, std::size_t n,
                    double e) {
    auto& r = rows[k + c + name(d) + std::to_string(n)];
    r.kernel = k, r.config = c, r.dist = name(d), r.n = n;
    r.errors.push_back(e);
  };
  for (const auto d : {distribution::uniform, distribution::normal}) {
    for (int s = 0; s < seeds; ++s) {
      for (std::size_t n : dot_n) {
        const auto x = random_values(n, 1000 + s, d), y = random_values(n, 2000 + s, d);
        const double ref = kacc_testing::exact_dot(n, x.data(), y.data()).rounded();
        for_configs([&](auto c, const char* name) {
          using C = decltype(c);
          const double r = kacc::blas::dot(make_vector<vec_t<C>>(x), make_vector<vec_t<C>>(y));
          record("dot", name, d, n, std::fabs(r - ref) / std::fabs(ref));
        });
        if (with_accumulators)
          for_accumulator_configs([&](auto c, const char* name) {
            record("dot", name, d, n, dot_error(c, x, y, ref));
          });
      }
      for (std::size_t n : gemv_n) {
        const auto A = random_values(n * n, 3000 + s, d), x = random_values(n, 4000 + s, d);
        const auto ref = exact_matvec(A, n, n, x);
        for_configs([&](auto c, const char* name) {
          using C = decltype(c);
          Kokkos::View<typename C::arith*> y("y", n);
          kacc::blas::gemv("N", 1, make_matrix<mat_t<C>>(A, n, n), make_vector<vec_t<C>>(x), 0, y);
          record("gemv", name, d, n, rel_error_1norm(stored(y), ref));
        });
        if (with_accumulators)
          for_accumulator_configs([&](auto c, const char* name) {
            record("gemv", name, d, n, gemv_error(c, A, n, x, ref));
          });
      }
      for (std::size_t n : trsv_n) {
        std::vector<double> L, U;
        lu_factors(random_values(n * n, 5000 + s, d), n, L, U);
        const auto b = random_values(n, 6000 + s, d);
        for (const bool lower : {true, false}) {
          const auto& T = lower ? L : U;
          const auto ref = exact_trsv(T, n, lower, b);
          for_configs([&](auto c, const char* name) {
            using C = decltype(c);
            auto bv = make_vector<Kokkos::View<typename C::arith*>>(b);
            kacc::blas::trsv(lower ? "L" : "U", "N", lower ? "U" : "N",
                             make_matrix<mat_t<C>>(T, n, n), bv);
            record(lower ? "trsv_L" : "trsv_U", name, d, n, rel_error_1norm(stored(bv), ref));
          });
        }
      }
    }
  }
  if (with_accumulators) {
    // GenDot data (Ogita, Rump and Oishi) of condition ill_condition, at the smallest sizes:
    // generating it takes one MPFR operation per entry.
    const auto record_ill = [&](const std::string& k, const char* c, std::size_t n, double e) {
      auto& r = rows[k + c + ill_distribution + std::to_string(n)];
      r.kernel = k, r.config = c, r.dist = ill_distribution, r.n = n;
      r.errors.push_back(e);
    };
    const int ill_seeds = 3;
    for (int s = 0; s < ill_seeds; ++s) {
      const std::size_t n = dot_n.front();
      std::vector<double> x, y;
      kacc_testing::gen_dot(n, ill_condition, 7000 + s, x, y);
      const double ref = kacc_testing::exact_dot(n, x.data(), y.data()).rounded();
      const auto each = [&](auto c, const char* name) {
        record_ill("dot", name, n, dot_error(c, x, y, ref));
      };
      for_plain_fp64_configs(each);
      for_accumulator_configs(each);
    }
    for (int s = 0; s < ill_seeds; ++s) {
      const std::size_t n = gemv_n.front();
      std::vector<double> x, A;
      kacc_testing::gen_dot_rows(n, n, ill_condition, 8000 + s, x, A);
      const auto ref = exact_matvec(A, n, n, x);
      const auto each = [&](auto c, const char* name) {
        record_ill("gemv", name, n, gemv_error(c, A, n, x, ref));
      };
      for_plain_fp64_configs(each);
      for_accumulator_configs(each);
    }
  }
  std::vector<acc_row> out;
  for (auto& [k, r] : rows) out.push_back(r);
  return out;
}

// How much faster cblas_dgemv on an n x n matrix runs at all of OpenBLAS's threads than at
// one: the measurement that shows the peer's threads really run in parallel. Best of 20
// each, the two thread counts alternating, so a busy machine slows both alike.
double openblas_dgemv_speedup(int n) {
#ifdef KACC_HAVE_OPENBLAS
  std::vector<double> a(static_cast<std::size_t>(n) * n, 0.5), x(n, 1.0), y(n, 0.0);
  double best_one = missing, best_all = missing;
  for (int r = 0; r <= 20; ++r) {  // r = 0 warms up
    for (const int threads : {1, openblas_threads}) {
      openblas_set_num_threads(threads);
      Kokkos::Timer t;
      cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, a.data(), n, x.data(), 1, 0.0, y.data(),
                  1);
      const double s = t.seconds();
      double& best = threads == 1 ? best_one : best_all;
      if (r > 0 && !(s >= best)) best = s;
    }
  }
  openblas_set_num_threads(openblas_threads);
  return best_one / best_all;
#else
  (void)n;
  return missing;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (kacc_perf::answer_help(
          argc, argv,
          "kacc-perf-blas [--quick|--full] [--accumulators] [--no-accuracy] [--out DIR]\n"
          "               [--benchmark_filter=REGEX ...]\n"
          "speed and accuracy of kacc DOT, GEMV and TRSV in every storage configuration against\n"
          "OpenBLAS and Kokkos Kernels; writes blas_speed.csv, blas_accuracy.csv,\n"
          "blas_summary.csv and blas.json into DIR (default: the current folder).\n"
          "  --quick  smoke run, one size per kernel; --full  larger sizes, more repetitions\n"
          "  --accumulators  also DOT and GEMV summed in compensated, double_double, quad_double\n"
          "           and exact<double>: time, and error on the usual data and on GenDot data of\n"
          "           condition 1e16 (distribution cond1e16)\n"
          "  --no-accuracy  speed only: blas_accuracy.csv holds its header alone and the accuracy\n"
          "           targets read MISSING\n"
          "  --benchmark_*  Google Benchmark's options; --benchmark_list_tests prints the\n"
          "           benchmarks' names (each size set up in turn) and writes no file\n"))
    return 0;
  Kokkos::initialize(argc, argv);
  int rc = 0;
  {
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--accumulators")) {
        with_accumulators = true;
      } else if (!std::strcmp(argv[i], "--no-accuracy")) {
        with_accuracy = false;
      } else {
        argv[kept++] = argv[i];
      }
    }
    argc = kept;
    argv[argc] = nullptr;
    const auto parsed = kacc_perf::parse_options_or_report(argc, argv, "kacc-perf-blas");
    if (!parsed) {
      Kokkos::finalize();
      return 2;
    }
    const kacc_perf::options& opt = *parsed;
    listing = opt.list_only;
    benchmark::Initialize(&argc, argv);
    const level lv = opt.run_level;
    const std::size_t llc = kacc_perf::last_level_cache_bytes();
    kokkos_threads = Exec().concurrency();
    const auto peer = kacc_perf::equalise_openblas_threads();
    openblas_threads = peer.reported;
    // 2048^2 doubles (32 MiB): past the private caches, quick to run.
    const double dgemv_speedup = openblas_dgemv_speedup(2048);
    fmt::print(
        "OpenBLAS: {} threads (Kokkos {} on CPUs {}), dgemv 2048 at {} threads {:.2f}x "
        "faster than at 1{}\n",
        peer.reported, kokkos_threads, peer.kokkos_cpus, openblas_threads, dgemv_speedup,
        peer.equal ? "" : "; NOT EQUAL THREADS: " + peer.note);
    const auto stream = kacc_perf::measure_stream<Exec>(
        lv == level::quick ? (std::size_t{64} << 20)
                           : std::max<std::size_t>(8 * llc, std::size_t{512} << 20),
        lv == level::quick ? 5 : 20);
    fmt::print("STREAM read {:.1f} GB/s, copy {:.1f}, triad {:.1f}\n", stream.read_gbs,
               stream.copy_gbs, stream.triad_gbs);
    const int reps = lv == level::quick ? 3 : lv == level::full ? 15 : 5;
    const std::vector<std::int64_t> gemv_n = lv == level::quick ? std::vector<std::int64_t>{1024}
                                             : lv == level::full
                                                 ? std::vector<std::int64_t>{8192, 16384, 23168}
                                                 : std::vector<std::int64_t>{8192, 16384};
    const std::vector<std::int64_t> dot_n =
        lv == level::quick  ? std::vector<std::int64_t>{1 << 20}
        : lv == level::full ? std::vector<std::int64_t>{1 << 25, 1 << 27, 1 << 28}
                            : std::vector<std::int64_t>{1 << 25, 1 << 27};
    const std::vector<std::int64_t> trsv_n = lv == level::quick ? std::vector<std::int64_t>{1024}
                                             : lv == level::full
                                                 ? std::vector<std::int64_t>{8192, 16384, 23168}
                                                 : std::vector<std::int64_t>{8192, 16384};
    std::string speed =
        "kernel,impl,config,layout,trans,m,n,threads,time_median_s,time_min_s,gflops,gbs,"
        "frac_read_bw\n";
    std::map<std::string, double> med;  // kernel/impl/config/layout/trans/n -> median time
    auto flush = [&] {
      for (auto& v : variants) {
        const double t = kacc_perf::median(v->times);  // NaN when it never ran
        const double tmin =
            v->times.empty() ? missing : *std::min_element(v->times.begin(), v->times.end());
        const double gbs = v->bytes / t * 1e-9;
        speed += fmt::format("{},{},{},{},{},{},{},{},{:.6e},{:.6e},{:.3f},{:.3f},{:.3f}\n",
                             v->kernel, v->impl, v->config, v->layout, v->trans, v->m, v->n,
                             v->threads, t, tmin, v->flops / t * 1e-9, gbs, gbs / stream.read_gbs);
        med[v->kernel + "/" + v->impl + "/" + v->config + "/" + v->layout + v->trans + "/" +
            std::to_string(v->n)] = t;
      }
      variants.clear();
    };
    // One problem size at a time keeps memory bounded; variants interleave within it.
    for (auto n : gemv_n) {
      register_gemv<Kokkos::LayoutLeft>(n, 11);
      run_all(reps);
      flush();
      register_gemv<Kokkos::LayoutRight>(n, 12);
      run_all(reps);
      flush();
    }
    for (auto n : dot_n) {
      register_dot(n, 13);
      run_all(reps);
      flush();
    }
    for (auto n : trsv_n) {
      register_trsv(n, 14);
      run_all(reps);
      flush();
    }
    // Conversion throughput per core next to the rate one core must convert at to keep up
    // with its share of the STREAM read bandwidth: a format pays off only where the first
    // is well above the second.
    register_conversion();
    run_all(reps);
    if (listing) {
      variants.clear();  // their views, before Kokkos finalizes
      Kokkos::finalize();
      return 0;
    }
    std::string conversion =
        "format,bytes_per_value,scalar_values_per_ns,block_values_per_ns,"
        "needed_values_per_ns_per_core\n";
    fmt::print("{:<8} {:>14} {:>14} {:>22}\n", "format", "scalar val/ns", "block val/ns",
               "needed val/ns/core");
    for (std::size_t k = 0; k + 1 < variants.size(); k += 2) {
      const variant& sc = *variants[k];
      const variant& bl = *variants[k + 1];
      const double values = sc.flops, bytes = sc.bytes / sc.flops;
      const double scalar = values / kacc_perf::median(sc.times) * 1e-9;
      const double block = values / kacc_perf::median(bl.times) * 1e-9;
      const double needed = stream.read_gbs / kokkos_threads / bytes;
      conversion +=
          fmt::format("{},{:.0f},{:.3f},{:.3f},{:.3f}\n", sc.config, bytes, scalar, block, needed);
      fmt::print("{:<8} {:>14.3f} {:>14.3f} {:>22.3f}\n", sc.config, scalar, block, needed);
    }
    flush();
    kacc_perf::write_file(opt.out_dir + "/conversion.csv", conversion);
    kacc_perf::write_file(opt.out_dir + "/blas_speed.csv", speed);

    const auto acc = with_accuracy ? accuracy(lv) : std::vector<acc_row>{};
    std::string acsv = "kernel,config,distribution,n,median_rel_error,max_rel_error,seeds\n";
    std::map<std::string, double> amed;  // kernel/config/dist/n
    for (const auto& r : acc) {
      const double m = kacc_perf::median(r.errors);
      acsv += fmt::format("{},{},{},{},{:.4e},{:.4e},{}\n", r.kernel, r.config, r.dist, r.n, m,
                          *std::max_element(r.errors.begin(), r.errors.end()), r.errors.size());
      amed[r.kernel + "/" + r.config + "/" + r.dist + "/" + std::to_string(r.n)] = m;
    }
    kacc_perf::write_file(opt.out_dir + "/blas_accuracy.csv", acsv);

    // Targets of the issue, at the largest size of each kernel. A target whose inputs are
    // missing (NaN) is MISSING; one against a peer without equal threads says so.
    std::string summary = kacc_perf::summary_csv_header;
    const std::string unequal = peer.equal ? "" : "; OpenBLAS NOT on equal threads: " + peer.note;
    auto check = [&](const std::string& name, double measured, double target, bool upper,
                     const std::string& note, bool vs_openblas = false) {
      const kacc_perf::target goal{name, measured, target, !upper,
                                   note + (vs_openblas ? unequal : "")};
      summary += kacc_perf::summary_csv_row(goal);
      kacc_perf::print_target(goal, 48);
    };
    auto t = [&](const std::string& key) { return med.count(key) ? med[key] : missing; };
    const auto gn = std::to_string(gemv_n.back()), dn = std::to_string(dot_n.back()),
               tn = std::to_string(trsv_n.back());
    for (const char* lt : {"LN", "LT", "RN", "RT"}) {
      const std::string s = std::string("/") + lt + "/" + gn;
      const double a = t("gemv/kacc/fp64<-fp32" + s);
      const std::string note = std::string("gemv layout ") + lt + " n=" + gn;
      check(std::string("gemv_") + lt + "_acc64_32_vs_dgemv", a / t("gemv/openblas/fp64" + s), 0.55,
            true, note, true);
      check(std::string("gemv_") + lt + "_acc64_32_vs_sgemv", a / t("gemv/openblas/fp32" + s), 1.05,
            true, note, true);
      const double bytes = double(gemv_n.back()) * gemv_n.back() * 4 + 16.0 * gemv_n.back();
      check(std::string("gemv_") + lt + "_acc64_32_frac_read_bw",
            bytes / a * 1e-9 / stream.read_gbs, 0.9, false, note);
      check(std::string("gemv_") + lt + "_acc64_16_vs_dgemv",
            t("gemv/kacc/fp64<-fp16" + s) / t("gemv/openblas/fp64" + s), 0.30, true, note, true);
      check(std::string("gemv_") + lt + "_acc64_bf16_vs_dgemv",
            t("gemv/kacc/fp64<-bf16" + s) / t("gemv/openblas/fp64" + s), 0.30, true, note, true);
    }
    {
      const std::string s = "/--/" + dn, note = "dot n=" + dn;
      const double a = t("dot/kacc/fp64<-fp32" + s);
      check("dot_acc64_32_vs_ddot", a / t("dot/openblas/fp64" + s), 0.55, true, note, true);
      check("dot_acc64_32_vs_sdot", a / t("dot/openblas/fp32" + s), 1.05, true, note, true);
      check("dot_acc64_32_frac_read_bw", 8.0 * dot_n.back() / a * 1e-9 / stream.read_gbs, 0.9,
            false, note);
      check("dot_acc64_16_vs_ddot", t("dot/kacc/fp64<-fp16" + s) / t("dot/openblas/fp64" + s), 0.30,
            true, note, true);
      check("dot_acc64_bf16_vs_ddot", t("dot/kacc/fp64<-bf16" + s) / t("dot/openblas/fp64" + s),
            0.30, true, note, true);
    }
    {
      const std::string s = "/LN/" + tn, note = "trsv lower n=" + tn;
      const double a = t("trsv/kacc/fp64<-fp32" + s);
      check("trsv_acc64_32_vs_dtrsv", a / t("trsv/openblas/fp64" + s), 0.8, true, note, true);
      check("trsv_acc64_32_vs_strsv", a / t("trsv/openblas/fp32" + s), 1.25, true, note, true);
    }
    for (const char* k : {"gemv", "dot", "trsv_L", "trsv_U"}) {
      for (const char* d : {"uniform", "normal"}) {
        std::size_t nmax = 0;
        for (const auto& r : acc)
          if (r.kernel == k) nmax = std::max(nmax, r.n);
        const std::string s = std::string("/") + d + "/" + std::to_string(nmax);
        auto error_of = [&](const std::string& key) {
          const auto it = amed.find(key);
          return it == amed.end() ? missing : it->second;
        };
        const double p = error_of(std::string(k) + "/fp32" + s);
        check(std::string(k) + "_" + d + "_err_acc64_32_vs_fp32",
              p > 0 ? error_of(std::string(k) + "/fp64<-fp32" + s) / p : missing, 0.7, true,
              std::string("median rel error n=") + std::to_string(nmax) +
                  (nmax < 4096 ? " (n < 4096 at this level)" : ""));
      }
    }
    kacc_perf::write_file(opt.out_dir + "/blas_summary.csv", summary);
    kacc_perf::write_file(
        opt.out_dir + "/blas.json",
        kacc_perf::run_json("kacc-perf-blas",
                            {{"level", kacc_perf::level_name(lv)},
                             {"repetitions", std::to_string(reps)},
                             {"accumulators", with_accumulators ? "yes" : "no"},
                             {"stream_read_gbs", fmt::format("{:.3f}", stream.read_gbs)},
                             {"stream_copy_gbs", fmt::format("{:.3f}", stream.copy_gbs)},
                             {"stream_triad_gbs", fmt::format("{:.3f}", stream.triad_gbs)},
                             {"stream_read_gbs_max", fmt::format("{:.3f}", stream.read_gbs_max)},
                             {"stream_bytes_per_array", std::to_string(stream.bytes_per_array)},
                             {"kokkos_threads", std::to_string(kokkos_threads)},
                             {"kokkos_cpus", peer.kokkos_cpus},
                             {"openblas_threads_requested", std::to_string(peer.requested)},
                             {"openblas_threads", std::to_string(peer.reported)},
                             {"openblas_threads_at_start", std::to_string(peer.at_start)},
                             {"openblas_cpus", peer.peer_cpus},
                             {"openblas_equal_threads", peer.equal ? "yes" : "no"},
                             {"openblas_note", peer.note},
                             {"openblas_dgemv_2048_speedup_all_threads_over_one",
                              fmt::format("{:.3f}", dgemv_speedup)}}));
  }
  Kokkos::finalize();
  return rc;
}
