// kacc-roofline: the experimental roofline of plain and accessor memory access
// (Grützmacher, Anzt, Quintana-Ortí 2021, section 3), mixbench style.
//
// One kernel (kacc_roofline::mix_kernel) runs at swept arithmetic intensity over one
// buffer, viewed as plain fp64/fp32 Kokkos::Views and as kacc views of every storage
// format. Configurations are interleaved repetition by repetition at each intensity, so
// a noisy machine shifts them all alike; STREAM and a register-only FMA loop, measured
// in the same run, give the bandwidth and compute roofs.
//
//   kacc-roofline [--quick|--full] [--out DIR] [--configs a,b,...] [--bytes N[KMG]]
//                 [--reps N] [--iterations 0,1,2,...] [--no-plot] [--python PATH]
#include <kacc_perf/run_info.hpp>
#include <kacc_perf/stream.hpp>
#include <kacc_roofline/kernel.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
template <class T>
using plain = Kokkos::View<T*, Mem, Unmanaged>;
template <class A, class F>
using acc = kacc::View<A*, Mem, Unmanaged, kacc::StoredAs<F>>;

// ---------------------------------------------------------------------------------------
// Configurations: one view type each, all over the same buffer.

struct configuration {
  std::string name, label, arith, storage;
  std::size_t n = 0, bytes_per_value = 0;
  virtual ~configuration() = default;
  virtual void initialise() = 0;
  virtual void run(int iterations) = 0;
};

template <class V>
struct configuration_of final : configuration {
  V x;
  configuration_of(const std::string& name_, const std::string& label_, char* buffer,
                   std::size_t bytes) {
    using T = kacc::arithmetic_t<V>;
    using S = typename kacc::format_traits<kacc::storage_t<V>>::storage_type;
    name = name_;
    label = label_;
    arith = kacc::format_name<T>();
    storage = kacc::format_name<kacc::storage_t<V>>();
    n = bytes / sizeof(S) / 128 * 128;  // whole work items for every lane count
    bytes_per_value = kacc_roofline::bytes_per_value<V>();
    if constexpr (kacc::is_kacc_view_v<V>) {
      x = V(typename V::storage_view_type(reinterpret_cast<S*>(buffer), n));
    } else {
      x = V(reinterpret_cast<S*>(buffer), n);
    }
  }
  void initialise() override { kacc_roofline::initialise(x); }
  void run(int iterations) override { kacc_roofline::run(x, iterations); }
};

template <class V>
std::unique_ptr<configuration> make(const char* name, const char* label, char* buffer,
                                    std::size_t bytes) {
  return std::make_unique<configuration_of<V>>(name, label, buffer, bytes);
}

struct known_configuration {
  const char* name;
  const char* label;
  std::unique_ptr<configuration> (*create)(const char*, const char*, char*, std::size_t);
};

const known_configuration known[] = {
    {"fp64", "fp64", make<plain<double>>},
    {"fp32", "fp32", make<plain<float>>},
    {"acc_fp64_fp64", "Acc<fp64,fp64>", make<acc<double, double>>},
    {"acc_fp64_fp32", "Acc<fp64,fp32>", make<acc<double, float>>},
    {"acc_fp64_fp16", "Acc<fp64,fp16>", make<acc<double, kacc::fp16>>},
    {"acc_fp64_bf16", "Acc<fp64,bf16>", make<acc<double, kacc::bf16>>},
    {"acc_fp32_fp32", "Acc<fp32,fp32>", make<acc<float, float>>},
    {"acc_fp32_fp16", "Acc<fp32,fp16>", make<acc<float, kacc::fp16>>},
    {"acc_fp32_bf16", "Acc<fp32,bf16>", make<acc<float, kacc::bf16>>},
    {"acc_fp64_int16s", "Acc<fp64,int16s>", make<acc<double, kacc::scaled<std::int16_t>>>},
};

// ---------------------------------------------------------------------------------------
// The compute roof: the kernel's FMA rounds with no memory traffic at all.

// The kernel's FMA rounds on values that stay in L1: per 64 rounds of 16 independent
// FMAs, one load and one store. Same chains, same code generation, no memory traffic.
template <class T>
struct fma_peak_kernel {
  static constexpr int half = 128 / sizeof(T);
  static constexpr int rounds = 64;
  Kokkos::View<T*, Mem> values;  // 2 * half per item
  int repeats = 1;
  T f[kacc_roofline::chains];

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t item) const {
    T* v = &values(item * 2 * half);
    for (int r = 0; r < repeats; ++r) {
      for (int w = 0; w < half; ++w) {
        const T a[2] = {v[w], v[half + w]};
        kacc_roofline::chain_state<T, 2> t(a);
        kacc_roofline::unrolled_rounds<rounds>::run(t, f);
        v[w] = t.mean(0);
        v[half + w] = t.mean(1);
      }
    }
  }
};

struct peak_result {
  double median = 0, best = 0;
};

template <class T>
peak_result measure_fma_peak(int repetitions, double target_seconds) {
  using K = fma_peak_kernel<T>;
  K k;
  const std::size_t items = static_cast<std::size_t>(Exec().concurrency()) * 16;
  k.values = Kokkos::View<T*, Mem>("fma_peak_values", items * 2 * K::half);
  auto values = k.values;
  Kokkos::parallel_for(
      "kacc_roofline::fma_peak_init", Kokkos::RangePolicy<Exec>(0, values.extent(0)),
      KOKKOS_LAMBDA(std::size_t i) {
        values(i) = static_cast<T>(kacc_roofline::initial_value(i));
      });
  for (int c = 0; c < kacc_roofline::chains; ++c) k.f[c] = kacc_roofline::chain_constant<T>(c);
  auto time = [&](int repeats) {
    k.repeats = repeats;
    Kokkos::fence();
    Kokkos::Timer t;
    Kokkos::parallel_for("kacc_roofline::fma_peak", Kokkos::RangePolicy<Exec>(0, items), k);
    Kokkos::fence();
    return t.seconds();
  };
  int repeats = 16;
  for (double t = time(repeats); t < target_seconds / 4 && repeats < (1 << 24); t = time(repeats)) {
    repeats *= 2;
  }
  repeats = std::max(1, static_cast<int>(repeats * target_seconds / std::max(time(repeats), 1e-6)));
  const double flops = static_cast<double>(items) * 2 * K::half * repeats * K::rounds *
                       (2.0 * kacc_roofline::chains);
  std::vector<double> rates;
  for (int r = 0; r < repetitions; ++r) rates.push_back(flops / time(repeats) * 1e-9);
  return {kacc_perf::median(rates), *std::max_element(rates.begin(), rates.end())};
}

// ---------------------------------------------------------------------------------------
// Options.

// The last-level cache one core sees, from sysfs (sysconf can report the whole package's
// L3 in a virtual machine: 384 MiB on a 2-core Zen 5 guest whose L3 is 32 MiB).
std::size_t last_level_cache() {
  std::size_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::FILE* lf = std::fopen((dir + "/level").c_str(), "r");
    std::FILE* sf = std::fopen((dir + "/size").c_str(), "r");
    int level = 0;
    unsigned long kib = 0;
    char unit = 'K';
    const bool ok = lf && sf && std::fscanf(lf, "%d", &level) == 1 &&
                    std::fscanf(sf, "%lu%c", &kib, &unit) >= 1;
    if (lf) std::fclose(lf);
    if (sf) std::fclose(sf);
    if (ok && level >= best_level) {
      best_level = level;
      best = kib * (unit == 'M' ? 1024 * 1024 : 1024);
    }
  }
  return best ? best : kacc_perf::last_level_cache_bytes();
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) parts.push_back(item);
  }
  return parts;
}

std::size_t parse_bytes(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  double scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1024.0;
  if (*end == 'M' || *end == 'm') scale = 1024.0 * 1024;
  if (*end == 'G' || *end == 'g') scale = 1024.0 * 1024 * 1024;
  if (end == s.c_str() || v <= 0) {
    throw std::invalid_argument("kacc-roofline: --bytes needs a positive size, e.g. 2G; got '" + s +
                                "'");
  }
  return static_cast<std::size_t>(v * scale);
}

struct settings {
  std::vector<std::string> configs;
  std::vector<int> iterations;
  std::size_t bytes = 0;
  int reps = 0;
  bool plot = true;
  std::string python;
};

settings parse(int argc, char** argv, const kacc_perf::options& o) {
  settings s;
  const std::size_t llc = last_level_cache();
  const std::size_t gib = std::size_t(1) << 30;
  const int top = o.run_level == kacc_perf::level::full ? kacc_roofline::max_iterations : 64;
  if (o.run_level == kacc_perf::level::quick) {
    s.bytes = std::size_t(64) << 20;  // quick: a smoke test, not a measurement
    s.iterations = {0, 1, 4, 16, 64};
    s.reps = 3;
  } else {
    s.bytes = std::max(gib, 8 * llc);
    s.iterations.push_back(0);
    for (int k = 1; k <= top; k *= 2) s.iterations.push_back(k);
    s.reps = o.run_level == kacc_perf::level::full ? 10 : 3;
  }
  for (const auto& k : known) s.configs.push_back(k.name);
  s.python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument("kacc-roofline: " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--configs") {
      s.configs = split(value());
    } else if (a == "--bytes") {
      s.bytes = parse_bytes(value());
    } else if (a == "--reps") {
      s.reps = std::max(1, std::atoi(value().c_str()));
    } else if (a == "--iterations") {
      s.iterations.clear();
      for (const auto& k : split(value()))
        s.iterations.push_back(std::max(0, std::atoi(k.c_str())));
    } else if (a == "--no-plot") {
      s.plot = false;
    } else if (a == "--python") {
      s.python = value();
    } else if (a == "--help" || a == "-h") {
      std::cout
          << "kacc-roofline [--quick|--full] [--out DIR] [--configs a,b,...] [--bytes N[KMG]]\n"
             "              [--reps N] [--iterations 0,1,2,...] [--no-plot] [--python PATH]\n"
             "configurations:";
      for (const auto& k : known) std::cout << ' ' << k.name;
      std::cout << '\n';
      std::exit(0);
    } else {
      throw std::invalid_argument("kacc-roofline: unknown argument '" + a + "' (try --help)");
    }
  }
  for (const auto& c : s.configs) {
    if (std::none_of(std::begin(known), std::end(known),
                     [&](const known_configuration& k) { return c == k.name; })) {
      throw std::invalid_argument("kacc-roofline: unknown configuration '" + c + "' (try --help)");
    }
  }
  for (int k : s.iterations) {
    if (!kacc_roofline::supported_iterations(k)) {
      throw std::invalid_argument("kacc-roofline: --iterations " + std::to_string(k) +
                                  " is not compiled in; use 0 and powers of two up to " +
                                  std::to_string(kacc_roofline::max_iterations));
    }
  }
  if (s.configs.empty() || s.iterations.empty()) {
    throw std::invalid_argument("kacc-roofline: --configs and --iterations must not be empty");
  }
  return s;
}

// ---------------------------------------------------------------------------------------
// Results.

struct point {
  std::vector<double> times;
};

std::string fmt(double v, int digits = 4) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

std::string duration(double s) {
  char b[32];
  if (s < 90) {
    std::snprintf(b, sizeof b, "%.0f s", s);
  } else {
    std::snprintf(b, sizeof b, "%.0f min %02.0f s", std::floor(s / 60), std::fmod(s, 60));
  }
  return b;
}

struct check {
  std::string name;
  double measured;
  std::string target;
  bool holds;
  std::string note;
};

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const auto options = kacc_perf::parse_options(argc, argv);
    const settings set = parse(argc, argv, options);
    const std::size_t llc = last_level_cache();
    const bool quick = options.run_level == kacc_perf::level::quick;
    Kokkos::Timer wall;

    // Roofs first: STREAM (arrays of at least 4x the last-level cache) and the FMA loop.
    const std::size_t stream_bytes = std::max(set.bytes / 2, 4 * llc);
    const int stream_reps = quick ? 5 : 10;
    std::cerr << "[roofline] STREAM, " << 3 * stream_bytes / (1 << 20) << " MiB ...\n";
    const auto stream_start = kacc_perf::measure_stream<Exec>(stream_bytes, stream_reps);
    std::cerr << "[roofline] FMA peak (register-only) ...\n";
    const double peak_seconds = quick ? 0.05 : 0.25;
    auto peak64 = measure_fma_peak<double>(quick ? 3 : 7, peak_seconds);
    auto peak32 = measure_fma_peak<float>(quick ? 3 : 7, peak_seconds);

    // One buffer, viewed in every configuration's format; first touched in parallel by
    // the first configuration's initialisation (same split as the kernel).
    Kokkos::View<char*, Mem> buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "roofline"),
                                    set.bytes);
    std::vector<std::unique_ptr<configuration>> configs;
    for (const auto& name : set.configs) {
      for (const auto& k : known) {
        if (name == k.name) configs.push_back(k.create(k.name, k.label, buffer.data(), set.bytes));
      }
    }
    const std::size_t nc = configs.size(), ni = set.iterations.size();
    std::vector<std::vector<point>> results(nc, std::vector<point>(ni));

    // Progress: predicted cost of one step from the roofs, corrected by what was measured.
    const double bw_guess =
        std::max({stream_start.read_gbs, stream_start.copy_gbs, stream_start.triad_gbs}) * 1e9;
    auto predicted = [&](int iterations) {
      double t = 0;
      for (const auto& c : configs) {
        const double peak = (c->arith == std::string("fp64") ? peak64.median : peak32.median) * 1e9;
        t += c->n * (c->bytes_per_value + 0.5 * c->bytes_per_value) / bw_guess +
             c->n * static_cast<double>(kacc_roofline::flops_per_value(iterations)) / peak;
      }
      return t;
    };
    double predicted_total = 0, predicted_done = 0;
    for (int k : set.iterations) predicted_total += (set.reps + 1) * predicted(k);
    const double sweep_start = wall.seconds();

    std::string on_buffer;  // storage currently held by the buffer ("" = nothing valid)
    for (std::size_t ii = 0; ii < ni; ++ii) {
      const int k = set.iterations[ii];
      for (int r = -1; r < set.reps; ++r) {  // r = -1 warms up
        for (std::size_t j = 0; j < nc; ++j) {
          // Rotate the order each repetition so no configuration always runs first.
          const std::size_t c = (j + static_cast<std::size_t>(r + 1)) % nc;
          auto& cfg = *configs[c];
          if (on_buffer != cfg.storage) {  // another format: refill (not timed)
            cfg.initialise();
            on_buffer = cfg.storage;
          }
          Kokkos::fence();
          Kokkos::Timer t;
          cfg.run(k);
          Kokkos::fence();
          const double seconds = t.seconds();
          if (r >= 0) results[c][ii].times.push_back(seconds);
        }
        predicted_done += predicted(k);
        const double elapsed = wall.seconds() - sweep_start;
        const double left = elapsed / predicted_done * (predicted_total - predicted_done);
        std::fprintf(stderr,
                     "\r[roofline] intensity %zu/%zu (%d iterations, %lld FLOPs/value), rep %d/%d, "
                     "%s elapsed, about %s left   ",
                     ii + 1, ni, k, kacc_roofline::flops_per_value(k), r + 2, set.reps + 1,
                     duration(wall.seconds()).c_str(), duration(left).c_str());
        std::fflush(stderr);
      }
    }
    std::fprintf(stderr, "\n");
    std::cerr << "[roofline] STREAM again ...\n";
    const auto stream_end = kacc_perf::measure_stream<Exec>(stream_bytes, stream_reps);
    // The FMA loop again; the roof is the best of both (a shared machine only slows it).
    {
      const auto again64 = measure_fma_peak<double>(quick ? 3 : 7, peak_seconds);
      const auto again32 = measure_fma_peak<float>(quick ? 3 : 7, peak_seconds);
      peak64 = {std::max(peak64.median, again64.median), std::max(peak64.best, again64.best)};
      peak32 = {std::max(peak32.median, again32.median), std::max(peak32.best, again32.best)};
    }

    // Roofs and balance.
    const double read = 0.5 * (stream_start.read_gbs + stream_end.read_gbs);
    const double copy = 0.5 * (stream_start.copy_gbs + stream_end.copy_gbs);
    const double triad = 0.5 * (stream_start.triad_gbs + stream_end.triad_gbs);
    const double bw = std::max({read, copy, triad});
    const double balance64 = peak64.best / bw, balance32 = peak32.best / bw;

    // roofline.csv
    std::ostringstream csv;
    csv << "config,arith,storage,iterations,flops_per_value,flops_per_byte,time_median_s,"
           "time_min_s,gflops_median,gflops_best,gbs_median\n";
    auto index_of = [&](const std::string& name) -> int {
      for (std::size_t c = 0; c < nc; ++c) {
        if (configs[c]->name == name) return static_cast<int>(c);
      }
      return -1;
    };
    struct row {
      double fpb, gflops, gflops_best, gbs;
    };
    std::vector<std::vector<row>> rows(nc, std::vector<row>(ni));
    for (std::size_t c = 0; c < nc; ++c) {
      const auto& cfg = *configs[c];
      for (std::size_t ii = 0; ii < ni; ++ii) {
        const auto& times = results[c][ii].times;
        const double med = kacc_perf::median(times);
        const double best = *std::min_element(times.begin(), times.end());
        const double fpv = static_cast<double>(kacc_roofline::flops_per_value(set.iterations[ii]));
        const double flops = fpv * cfg.n, bytes = static_cast<double>(cfg.bytes_per_value) * cfg.n;
        rows[c][ii] = {fpv / cfg.bytes_per_value, flops / med * 1e-9, flops / best * 1e-9,
                       bytes / med * 1e-9};
        csv << cfg.name << ',' << cfg.arith << ',' << cfg.storage << ',' << set.iterations[ii]
            << ',' << fpv << ',' << fmt(rows[c][ii].fpb, 6) << ',' << fmt(med, 6) << ','
            << fmt(best, 6) << ',' << fmt(rows[c][ii].gflops, 6) << ','
            << fmt(rows[c][ii].gflops_best, 6) << ',' << fmt(rows[c][ii].gbs, 6) << '\n';
      }
    }

    // roofline_stream.csv
    std::ostringstream scsv;
    scsv << "phase,kind,gbs_median,gbs_best,bytes_per_array\n";
    for (const auto& [phase, s] :
         {std::make_pair("start", stream_start), std::make_pair("end", stream_end)}) {
      scsv << phase << ",read," << fmt(s.read_gbs, 6) << ',' << fmt(s.read_gbs_max, 6) << ','
           << s.bytes_per_array << '\n';
      scsv << phase << ",copy," << fmt(s.copy_gbs, 6) << ',' << fmt(s.copy_gbs_max, 6) << ','
           << s.bytes_per_array << '\n';
      scsv << phase << ",triad," << fmt(s.triad_gbs, 6) << ',' << fmt(s.triad_gbs_max, 6) << ','
           << s.bytes_per_array << '\n';
    }

    // roofline_summary.csv: one row per target of the issue.
    std::vector<check> checks;
    auto ratio_check = [&](const std::string& name, const std::string& a, const std::string& b,
                           auto select, double lo, double hi, const std::string& target,
                           const std::string& note, bool worst_is_min) {
      const int ia = index_of(a), ib = index_of(b);
      if (ia < 0 || ib < 0) {
        checks.push_back({name, NAN, target, false, "not run (needs " + a + " and " + b + ")"});
        return;
      }
      double worst = NAN;
      for (std::size_t ii = 0; ii < ni; ++ii) {
        if (!select(ii, ib)) continue;
        const double q = rows[ia][ii].gflops / rows[ib][ii].gflops;
        if (std::isnan(worst) ||
            (worst_is_min ? q < worst : std::fabs(q - 1) > std::fabs(worst - 1)))
          worst = q;
      }
      checks.push_back({name, worst, target, !std::isnan(worst) && worst >= lo && worst <= hi,
                        std::isnan(worst) ? "no intensity in range; " + note : note});
    };
    auto all = [](std::size_t, int) { return true; };
    // Memory bound: below half the fp64 machine balance (the curve rounds off near the ridge).
    // The lowest intensity always counts (8 FLOPs per value is memory bound on any machine).
    const std::size_t lowest = static_cast<std::size_t>(
        std::min_element(set.iterations.begin(), set.iterations.end()) - set.iterations.begin());
    auto memory_bound = [&](std::size_t ii, int c) {
      return ii == lowest || rows[c][ii].fpb < 0.5 * balance64;
    };
    auto above_balance = [&](std::size_t ii, int c) { return rows[c][ii].fpb > balance64; };
    ratio_check("acc_fp64_fp64 / fp64, every intensity (GFLOP/s medians, worst)", "acc_fp64_fp64",
                "fp64", all, 0.98, 1.02, "0.98 .. 1.02",
                "accessor with identical storage costs nothing", false);
    ratio_check("acc_fp64_fp32 / fp32, memory-bound region (min)", "acc_fp64_fp32", "fp32",
                memory_bound, 0.95, 1e9, ">= 0.95",
                "memory bound = lowest intensity and FLOPs/byte below half the fp64 balance", true);
    ratio_check("acc_fp64_fp32 / fp64, above the machine balance (min)", "acc_fp64_fp32", "fp64",
                above_balance, 0.98, 1e9, ">= 0.98 (not below fp64, 2% noise)",
                "above balance = fp64's FLOPs/byte above the fp64 machine balance", true);
    auto bw_check = [&](const std::string& name, const std::string& cfg_name) {
      const int c = index_of(cfg_name);
      if (c < 0) {
        checks.push_back({name, NAN, ">= 0.90", false, "not run"});
        return;
      }
      double worst = NAN;
      for (std::size_t ii = 0; ii < ni; ++ii) {
        if (!memory_bound(ii, c)) continue;
        const double q = rows[c][ii].gbs / bw;
        if (std::isnan(worst) || q < worst) worst = q;
      }
      checks.push_back({name, worst, ">= 0.90", !std::isnan(worst) && worst >= 0.9,
                        "GB/s in its storage format / bandwidth roof, memory-bound region"});
    };
    bw_check("acc_fp64_fp16 bandwidth / roof, memory-bound region (min)", "acc_fp64_fp16");
    bw_check("acc_fp64_bf16 bandwidth / roof, memory-bound region (min)", "acc_fp64_bf16");
    auto zero_check = [&](const std::string& name, const std::string& cfg_name) {
      const int c = index_of(cfg_name);
      const auto it = std::find(set.iterations.begin(), set.iterations.end(), 0);
      if (c < 0 || it == set.iterations.end()) {
        checks.push_back(
            {name, NAN, ">= 0.90", false, "not run (needs the config and iterations 0)"});
        return;
      }
      const double q = rows[c][it - set.iterations.begin()].gbs / bw;
      checks.push_back({name, q, ">= 0.90", q >= 0.9, "GB/s at 0 iterations / bandwidth roof"});
    };
    zero_check("fp64 bandwidth / roof at intensity 0", "fp64");
    zero_check("fp32 bandwidth / roof at intensity 0", "fp32");
    auto plateau = [&](const std::string& cfg_name) {
      const int c = index_of(cfg_name);
      double p = NAN;
      if (c >= 0) {
        for (std::size_t ii = 0; ii < ni; ++ii)
          p = std::isnan(p) ? rows[c][ii].gflops : std::max(p, rows[c][ii].gflops);
      }
      return p;
    };
    const double plateau64 = plateau("fp64"), plateau32 = plateau("fp32");
    const std::string plateau_note =
        "best repetition at the best intensity / best repetition of the FMA loop (best on both "
        "sides: a shared machine only slows things down)";
    checks.push_back({"fp64 plateau / FMA-loop peak", plateau64 / peak64.best, ">= 0.90",
                      plateau64 / peak64.best >= 0.9, plateau_note});
    checks.push_back({"fp32 plateau / FMA-loop peak", plateau32 / peak32.best, ">= 0.90",
                      plateau32 / peak32.best >= 0.9, plateau_note});
    std::ostringstream sum;
    sum << "check,measured,target,holds,note\n";
    for (const auto& ch : checks) {
      sum << '"' << ch.name << "\"," << fmt(ch.measured, 4) << ",\"" << ch.target << "\","
          << (ch.holds ? "yes" : "no") << ",\"" << ch.note << "\"\n";
    }

    // roofline.json
    auto stream_json = [](const kacc_perf::stream_result& s) {
      return "{\"read_gbs\": " + fmt(s.read_gbs, 6) + ", \"copy_gbs\": " + fmt(s.copy_gbs, 6) +
             ", \"triad_gbs\": " + fmt(s.triad_gbs, 6) +
             ", \"read_gbs_best\": " + fmt(s.read_gbs_max, 6) +
             ", \"copy_gbs_best\": " + fmt(s.copy_gbs_max, 6) +
             ", \"triad_gbs_best\": " + fmt(s.triad_gbs_max, 6) +
             ", \"bytes_per_array\": " + std::to_string(s.bytes_per_array) + "}";
    };
    std::string its = "[", names = "[", labels = "{";
    for (std::size_t ii = 0; ii < ni; ++ii)
      its += (ii ? "," : "") + std::to_string(set.iterations[ii]);
    for (std::size_t c = 0; c < nc; ++c) {
      names += (c ? ",\"" : "\"") + configs[c]->name + "\"";
      labels += (c ? ",\"" : "\"") + configs[c]->name + "\": \"" + configs[c]->label + "\"";
    }
    const std::map<std::string, std::string> extra = {
        {"level", kacc_perf::level_name(options.run_level)},
        {"buffer_bytes", std::to_string(set.bytes)},
        {"repetitions", std::to_string(set.reps)},
        {"iterations", its + "]"},
        {"configs", names + "]"},
        {"config_labels", labels + "}"},
        {"chains", std::to_string(kacc_roofline::chains)},
        {"last_level_cache_bytes_sysfs", std::to_string(llc)},
        {"stream_start", stream_json(stream_start)},
        {"stream_end", stream_json(stream_end)},
        {"bandwidth_roof_gbs", fmt(bw, 6)},
        {"fma_peak_fp64_gflops", fmt(peak64.best, 6)},
        {"fma_peak_fp64_gflops_median", fmt(peak64.median, 6)},
        {"fma_peak_fp32_gflops", fmt(peak32.best, 6)},
        {"fma_peak_fp32_gflops_median", fmt(peak32.median, 6)},
        {"plateau_fp64_gflops_best", std::isnan(plateau64) ? "null" : fmt(plateau64, 6)},
        {"plateau_fp32_gflops_best", std::isnan(plateau32) ? "null" : fmt(plateau32, 6)},
        {"machine_balance_fp64_flops_per_byte", fmt(balance64, 6)},
        {"machine_balance_fp32_flops_per_byte", fmt(balance32, 6)},
        {"flop_counting", "2 per FMA; conversions not counted"},
        {"byte_counting", "one read and one write per value in the storage format"},
    };
    std::string json = kacc_perf::run_json("kacc-roofline", extra);
    // run_json writes "null" as a string; make it JSON null.
    for (std::size_t p; (p = json.find("\"null\"")) != std::string::npos;)
      json.replace(p, 6, "null");

    const std::string dir = options.out_dir;
    kacc_perf::write_file(dir + "/roofline.csv", csv.str());
    kacc_perf::write_file(dir + "/roofline_stream.csv", scsv.str());
    kacc_perf::write_file(dir + "/roofline_summary.csv", sum.str());
    kacc_perf::write_file(dir + "/roofline.json", json);

    // Summary on the terminal.
    std::printf("\nkacc-roofline (%s, %s, %d threads), %zu MiB buffer, %d repetitions, %s\n",
                kacc_perf::level_name(options.run_level), Exec::name(), Exec().concurrency(),
                set.bytes >> 20, set.reps, duration(wall.seconds()).c_str());
    std::printf("bandwidth roof %.1f GB/s (STREAM medians read %.1f, copy %.1f, triad %.1f)\n", bw,
                read, copy, triad);
    std::printf(
        "FMA-loop peak (best) fp64 %.1f GFLOP/s, fp32 %.1f GFLOP/s; machine balance fp64 %.2f, "
        "fp32 %.2f FLOPs/byte\n",
        peak64.best, peak32.best, balance64, balance32);
    std::printf("\n%-18s", "GFLOP/s median");
    for (int k : set.iterations) std::printf(" %8lld", kacc_roofline::flops_per_value(k));
    std::printf("   <- FLOPs/value\n");
    for (std::size_t c = 0; c < nc; ++c) {
      std::printf("%-18s", configs[c]->label.c_str());
      for (std::size_t ii = 0; ii < ni; ++ii) std::printf(" %8.1f", rows[c][ii].gflops);
      std::printf("\n");
    }
    std::printf("%-18s", "GB/s median");
    std::printf("\n");
    for (std::size_t c = 0; c < nc; ++c) {
      std::printf("%-18s", configs[c]->label.c_str());
      for (std::size_t ii = 0; ii < ni; ++ii) std::printf(" %8.1f", rows[c][ii].gbs);
      std::printf("\n");
    }
    std::printf("\nsummary (roofline_summary.csv):\n");
    for (const auto& ch : checks) {
      std::printf("  %-4s %-66s %8s  target %s\n", ch.holds ? "yes" : "NO", ch.name.c_str(),
                  fmt(ch.measured, 4).c_str(), ch.target.c_str());
    }

    if (set.plot) {
      const std::string cmd = set.python + " '" + KACC_ROOFLINE_PLOT_SCRIPT + "' '" + dir + "'";
      if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "[roofline] plotting failed: %s (needs matplotlib)\n", cmd.c_str());
      }
    }
    std::printf("results in %s\n", dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
