// kacc-roofline: the experimental roofline of plain and accessor memory access
// (Grützmacher, Anzt, Quintana-Ortí 2021, section 3), mixbench style.
//
// One kernel (kacc_roofline::mix_kernel) runs at swept arithmetic intensity over one
// buffer, viewed as plain fp64/fp32 Kokkos::Views and as kacc views of every storage
// format. Configurations are interleaved repetition by repetition at each intensity, so
// a noisy machine shifts them all alike. The roofs are measured in the same run,
// independently of the kernel: STREAM (the highest memory traffic, write-allocate
// included, before and after the sweep, and STREAM's in-place update after every timed point
// along it) and a register-resident FMA probe with enough independent chains to cover
// FMA latency x throughput (kacc_roofline::fma_peak_probe). A measured point more than 5%
// above a roof means a roof does not bound: it is reported, marked in the summary, and
// the program exits with status 2.
//
//   kacc-roofline [--quick|--full] [--out DIR] [--configs a,b,...] [--bytes N[KMG]]
//                 [--reps N] [--iterations 0,1,2,...] [--no-plot] [--python PATH]
#include <kacc_perf/run_info.hpp>
#include <kacc_perf/stream.hpp>
#include <kacc_roofline/kernel.hpp>
#include <kacc_roofline/peak.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
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
    using S = typename kacc::format_traits<kacc::format_t<V>>::storage_type;
    name = name_;
    label = label_;
    arith = kacc::format_name<T>();
    storage = kacc::format_name<kacc::format_t<V>>();
    n = bytes / sizeof(S) / 128 * 128;  // whole work items for every lane count
    bytes_per_value = kacc_roofline::bytes_per_value<V>();
    if constexpr (kacc::is_kacc_view_v<V>) {
      const typename V::storage_view_type storage(reinterpret_cast<S*>(buffer), n);
      if constexpr (V::is_scaled) {
        // initialise() sets the one scale.
        x = V(storage, typename V::scale_view_type("kacc_roofline::scale", 1));
      } else {
        x = V(storage);
      }
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
// Roofs are rates sampled before, during and after the sweep: a shared machine only slows
// a probe down, so the best sample is the roof.

/// The samples of one roof's probe: what fma_peak and update_peak share.
class sampled_rate {
 public:
  /// The best sample: the roof (NaN before the first sample, a missing measurement).
  double best() const {
    return rates_.empty() ? NAN : *std::max_element(rates_.begin(), rates_.end());
  }
  /// The median sample.
  double median() const { return kacc_perf::median(rates_); }
  /// How many samples were taken.
  std::size_t samples() const { return rates_.size(); }

 protected:
  std::vector<double> rates_;
};

// ---------------------------------------------------------------------------------------
// The compute roof: the register-resident FMA probe, in every thread.

// Samples of the probe's rate (GFLOP/s).
template <class T>
class fma_peak : public sampled_rate {
 public:
  /// Calibrates the probe so that one sample takes about `seconds_per_sample`.
  explicit fma_peak(double seconds_per_sample) {
    probe_.sums = decltype(probe_.sums)("fma_peak_sums", items_);
    int repeats = 1024;
    for (double t = time(repeats); t < seconds_per_sample / 4 && repeats < (1 << 28);
         t = time(repeats)) {
      repeats *= 2;
    }
    probe_.repeats =
        std::max(1, static_cast<int>(repeats * seconds_per_sample / std::max(time(repeats), 1e-6)));
  }

  /// Times the probe `count` times and keeps the rates.
  void sample(int count = 1) {
    for (int k = 0; k < count; ++k) {
      const double seconds = time(probe_.repeats);
      rates_.push_back(probe_.flops_per_item() * static_cast<double>(items_) / seconds * 1e-9);
    }
  }

 private:
  double time(int repeats) {
    probe_.repeats = repeats;
    // One item per thread: a static schedule hands each thread exactly one.
    const Kokkos::RangePolicy<Exec, Kokkos::Schedule<Kokkos::Static>> one_per_thread(0, items_);
    Kokkos::fence();
    Kokkos::Timer t;
    Kokkos::parallel_for("kacc_roofline::fma_peak", one_per_thread, probe_);
    Kokkos::fence();
    return t.seconds();
  }

  std::size_t items_ = static_cast<std::size_t>(Exec().concurrency());
  kacc_roofline::fma_peak_probe<T, Exec> probe_;
};

// ---------------------------------------------------------------------------------------
// The bandwidth roof along the sweep: STREAM's in-place update, the roofline kernel's own
// access pattern, over the sweep's own buffer.

/// values(i) ^= mask, which with a mask of 0 that the compiler cannot see reads and writes
/// every line and leaves the data as it was. (A CUDA kernel's functor must not be a private
/// member.)
struct xor_in_place {
  Kokkos::View<std::uint64_t*, Mem, Unmanaged> values;
  std::uint64_t mask;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const { values(i) = values(i) ^ mask; }
};

// Samples of the update's memory traffic (GB/s), taken after every timed point of the
// sweep, on the pages the points use: STREAM's arrays are other allocations, measured before and
// after the sweep, and this machine's bandwidth moves within seconds (one quick run:
// STREAM's update 51-72 GB/s at the two ends).
class update_peak : public sampled_rate {
 public:
  /// Samples will update the 8-byte words of `buffer` in place without changing them.
  explicit update_peak(const Kokkos::View<char*, Mem>& buffer)
      : update_{decltype(xor_in_place::values)(reinterpret_cast<std::uint64_t*>(buffer.data()),
                                               buffer.extent(0) / sizeof(std::uint64_t)),
                0} {}

  /// Times one in-place update of the buffer and keeps its traffic (GB/s, a read and a
  /// write per word).
  void sample() {
    Kokkos::fence();
    Kokkos::Timer t;
    Kokkos::parallel_for("kacc_roofline::update_peak",
                         Kokkos::RangePolicy<Exec>(0, update_.values.extent(0)), update_);
    Kokkos::fence();
    const double seconds = t.seconds();
    rates_.push_back(2.0 * static_cast<double>(bytes()) / seconds * 1e-9);
  }

  /// Bytes of the buffer a sample updates (its whole 8-byte words).
  std::size_t bytes() const { return update_.values.extent(0) * sizeof(std::uint64_t); }

 private:
  xor_in_place update_;
};

// ---------------------------------------------------------------------------------------
// Options.

// The last-level cache one core sees, from sysfs (sysconf can report the whole package's
// L3 in a virtual machine: 384 MiB on a 2-core AMD EPYC guest whose L3 is 32 MiB).
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

/// The usage --help prints, with the configurations this build knows.
void print_usage() {
  std::cout << "kacc-roofline [--quick|--full] [--out DIR] [--configs a,b,...] [--bytes N[KMG]]\n"
               "              [--reps N] [--iterations 0,1,2,...] [--no-plot] [--python PATH]\n"
               "exit status: 0 done, 1 error, 2 a measured point above a roof by more than 5%\n"
               "configurations:";
  for (const auto& k : known) std::cout << ' ' << k.name;
  std::cout << '\n' << kacc_perf::kokkos_options_hint;
}

settings parse(int argc, char** argv, const kacc_perf::options& o) {
  settings s;
  const std::size_t llc = last_level_cache();
  const std::size_t gib = std::size_t(1) << 30;
  const int top = o.run_level == kacc_perf::level::full ? kacc_roofline::max_iterations : 64;
  if (o.run_level == kacc_perf::level::quick) {
    // Quick is a check of the pipeline, yet its roof check is enforced like the default
    // level's: the buffer stays out of cache (at 4x the LLC points at 0 iterations still ran
    // up to 1.1x above the memory roof in 3 of 8 runs, at 8x in 1 of 19, by 1.053x), only
    // the sweep is short: 0 iterations (memory-bound) and 16 (264 FLOPs a value, 16.5 a
    // byte in fp64: past the ridge in every configuration, as the summary's "above the
    // machine balance" target needs: at 4, 4.5 a byte, no point landed above the measured
    // balance and the target read MISSING). At 8x a 480 MiB L3 the buffer is 3.75 GiB, and
    // the sweep 0, 1, 4, 16 took 6 minutes.
    s.bytes = std::max(std::size_t(64) << 20, 8 * llc);
    s.iterations = {0, 16};
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
  const auto help = kacc_perf::requested_help(argc, argv);
  if (help == kacc_perf::help_request::usage) {
    print_usage();
    return 0;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  if (help == kacc_perf::help_request::kokkos) return 0;
  try {
    const auto options = kacc_perf::parse_options(argc, argv);
    const settings set = parse(argc, argv, options);
    const std::size_t llc = last_level_cache();
    const bool quick = options.run_level == kacc_perf::level::quick;
    Kokkos::Timer wall;

    // Roofs first: STREAM and the FMA probe. STREAM's arrays are at least 4x the last-level
    // cache at every level, so roofs and points both come from memory.
    const std::size_t stream_bytes = std::max(set.bytes / 2, 4 * llc);
    const int stream_reps = quick ? 5 : 10;
    std::cerr << "[roofline] STREAM, " << 3 * stream_bytes / (1 << 20) << " MiB ...\n";
    const auto stream_start = kacc_perf::measure_stream<Exec>(stream_bytes, stream_reps);
    std::cerr << "[roofline] FMA peak (register-resident probe) ...\n";
    const double peak_seconds = quick ? 0.01 : 0.02;
    fma_peak<double> peak64(peak_seconds);
    fma_peak<float> peak32(peak_seconds);
    peak64.sample(quick ? 5 : 10);
    peak32.sample(quick ? 5 : 10);

    // One buffer, viewed in every configuration's format; first touched in parallel by
    // the first configuration's initialisation (same split as the kernel).
    Kokkos::View<char*, Mem> buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "roofline"),
                                    set.bytes);
    update_peak sweep_update(buffer);
    std::vector<std::unique_ptr<configuration>> configs;
    for (const auto& name : set.configs) {
      for (const auto& k : known) {
        if (name == k.name) configs.push_back(k.create(k.name, k.label, buffer.data(), set.bytes));
      }
    }
    const std::size_t nc = configs.size(), ni = set.iterations.size();
    std::vector<std::vector<point>> results(nc, std::vector<point>(ni));

    // Progress: predicted cost of one step from the roofs, corrected by what was measured.
    const double bw_guess = stream_start.traffic_roof_gbs() * 1e9;
    auto predicted = [&](int iterations) {
      double t = 0;
      for (const auto& c : configs) {
        const double peak =
            (c->arith == std::string("fp64") ? peak64.median() : peak32.median()) * 1e9;
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
          if (r >= 0) {
            results[c][ii].times.push_back(seconds);
            // The update right behind each point, as warm as the next point will be: sampled
            // once per repetition, after the FMA probes (memory idle for tens of
            // milliseconds), its median was 44-59 GB/s where the points at 0 iterations
            // moved 73, and in 1 of 19 quick runs a point's median beat its best by 5%.
            sweep_update.sample();
          }
        }
        peak64.sample();  // the roofs sampled all along the sweep, not only at its ends
        peak32.sample();
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
    std::cerr << "[roofline] STREAM and FMA probe again ...\n";
    const auto stream_end = kacc_perf::measure_stream<Exec>(stream_bytes, stream_reps);
    peak64.sample(quick ? 5 : 10);
    peak32.sample(quick ? 5 : 10);

    // Roofs and balance. The kernel's counted bytes are all the bytes it moves (it reads
    // each value and writes it back to the line it just read), so its roof is the highest
    // memory traffic STREAM sustained, write-allocate included, or the update along the
    // sweep; best repetitions, as the compute roof.
    const double read = 0.5 * (stream_start.read_gbs + stream_end.read_gbs);
    const double copy = 0.5 * (stream_start.copy_gbs + stream_end.copy_gbs);
    const double triad = 0.5 * (stream_start.triad_gbs + stream_end.triad_gbs);
    const double update = 0.5 * (stream_start.update_gbs + stream_end.update_gbs);
    const double bw = std::max(
        {stream_start.traffic_roof_gbs(), stream_end.traffic_roof_gbs(), sweep_update.best()});
    const double balance64 = peak64.best() / bw, balance32 = peak32.best() / bw;
    // A point's compute roof: the FMA probe bounds the rate of the kernel's FMAs only. Its
    // other FLOPs (the mean of the chains) may issue on adders of their own (AMD's Zen 4
    // and 5 have two FADD pipes beside two FMA pipes: points at 4 iterations ran
    // 1.07-1.13x the probe), so a point may run at up to peak x (its FLOPs / its FMA
    // FLOPs), 1.125x at 4 iterations. With no FMAs (0 iterations) the bandwidth roof alone
    // bounds it.
    auto compute_roof = [&](const std::string& arith, int iterations) {
      const double peak = arith == "fp64" ? peak64.best() : arith == "fp32" ? peak32.best() : NAN;
      if (std::isnan(peak)) return peak;
      if (iterations == 0) return std::numeric_limits<double>::infinity();
      return peak * static_cast<double>(kacc_roofline::flops_per_value(iterations)) /
             (2.0 * kacc_roofline::chains * iterations);
    };
    // A point may exceed its roof by this much (timer and repetition noise) before the
    // roof is taken not to bound it.
    const double roof_tolerance = 1.05;

    // roofline.csv
    std::ostringstream csv;
    csv << "config,arith,storage,iterations,flops_per_value,flops_per_byte,time_median_s,"
           "time_min_s,gflops_median,gflops_best,gbs_median,roof_gflops,median_over_roof\n";
    auto index_of = [&](const std::string& name) -> int {
      for (std::size_t c = 0; c < nc; ++c) {
        if (configs[c]->name == name) return static_cast<int>(c);
      }
      return -1;
    };
    struct row {
      double fpb, gflops, gflops_best, gbs, roof;
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
        const double fpb = fpv / cfg.bytes_per_value;
        rows[c][ii] = {fpb, flops / med * 1e-9, flops / best * 1e-9, bytes / med * 1e-9,
                       std::min(compute_roof(cfg.arith, set.iterations[ii]), bw * fpb)};
        const auto& r = rows[c][ii];
        csv << cfg.name << ',' << cfg.arith << ',' << cfg.storage << ',' << set.iterations[ii]
            << ',' << fpv << ',' << fmt(r.fpb, 6) << ',' << fmt(med, 6) << ',' << fmt(best, 6)
            << ',' << fmt(r.gflops, 6) << ',' << fmt(r.gflops_best, 6) << ',' << fmt(r.gbs, 6)
            << ',' << fmt(r.roof, 6) << ',' << fmt(r.gflops / r.roof, 4) << '\n';
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
      scsv << phase << ",update," << fmt(s.update_gbs, 6) << ',' << fmt(s.update_gbs_max, 6) << ','
           << s.bytes_per_array << '\n';
      scsv << phase << ",copy_write_allocate,"
           << fmt(s.copy_gbs * kacc_perf::stream_result::copy_write_allocate, 6) << ','
           << fmt(s.copy_gbs_max * kacc_perf::stream_result::copy_write_allocate, 6) << ','
           << s.bytes_per_array << '\n';
      scsv << phase << ",triad_write_allocate,"
           << fmt(s.triad_gbs * kacc_perf::stream_result::triad_write_allocate, 6) << ','
           << fmt(s.triad_gbs_max * kacc_perf::stream_result::triad_write_allocate, 6) << ','
           << s.bytes_per_array << '\n';
    }
    scsv << "sweep,update," << fmt(sweep_update.median(), 6) << ',' << fmt(sweep_update.best(), 6)
         << ',' << sweep_update.bytes() << '\n';

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
          p = std::isnan(p) ? rows[c][ii].gflops_best : std::max(p, rows[c][ii].gflops_best);
      }
      return p;
    };
    const double plateau64 = plateau("fp64"), plateau32 = plateau("fp32");
    const std::string plateau_note =
        "best repetition at the best intensity / best repetition of the FMA probe (16 "
        "independent vector chains per thread)";
    checks.push_back({"fp64 plateau / FMA peak", plateau64 / peak64.best(), ">= 0.90",
                      plateau64 / peak64.best() >= 0.9, plateau_note});
    checks.push_back({"fp32 plateau / FMA peak", plateau32 / peak32.best(), ">= 0.90",
                      plateau32 / peak32.best() >= 0.9, plateau_note});

    // The roof check: no point's median above min(compute_roof, bandwidth roof x FLOPs/byte)
    // by more than the tolerance. Roofs are best samples and points medians: a roof must bound
    // what the kernel typically does, and one lucky repetition of a millisecond-long launch
    // (timer and scheduler noise on a shared machine) must not fail it. A point without a
    // roof (arithmetic other than fp64/fp32) or without a measurement fails it.
    double worst_over_roof = NAN;
    std::string above_roof;
    std::size_t points_above_roof = 0;
    for (std::size_t c = 0; c < nc; ++c) {
      for (std::size_t ii = 0; ii < ni; ++ii) {
        const double q = rows[c][ii].gflops / rows[c][ii].roof;
        if (std::isnan(worst_over_roof) || std::isnan(q) || q > worst_over_roof)
          worst_over_roof = q;
        if (!(q <= roof_tolerance)) {
          ++points_above_roof;
          above_roof += (above_roof.empty() ? "" : "; ") + configs[c]->name + " at " +
                        std::to_string(set.iterations[ii]) + " iterations " + fmt(q, 3) + "x";
        }
      }
    }
    const bool roofs_bound = points_above_roof == 0 && !std::isnan(worst_over_roof);
    checks.push_back(
        {"roof check: point (median) / its roof (max)", worst_over_roof, "<= 1.05", roofs_bound,
         roofs_bound ? "roof = min(FMA peak x FLOPs/FMA FLOPs, bandwidth roof x FLOPs/byte) "
                       "for every point"
                     : "FAIL, above a roof: " + above_roof});
    std::ostringstream sum;
    sum << "check,measured,target,holds,note\n";
    for (const auto& ch : checks) {
      sum << '"' << ch.name << "\"," << fmt(ch.measured, 4) << ",\"" << ch.target << "\","
          << (ch.holds ? "yes" : "no") << ",\"" << ch.note << "\"\n";
    }

    // roofline.json
    auto stream_json = [](const kacc_perf::stream_result& s) {
      const double copy_wa = kacc_perf::stream_result::copy_write_allocate;
      const double triad_wa = kacc_perf::stream_result::triad_write_allocate;
      return "{\"read_gbs\": " + fmt(s.read_gbs, 6) + ", \"copy_gbs\": " + fmt(s.copy_gbs, 6) +
             ", \"triad_gbs\": " + fmt(s.triad_gbs, 6) +
             ", \"update_gbs\": " + fmt(s.update_gbs, 6) +
             ", \"copy_write_allocate_gbs\": " + fmt(s.copy_gbs * copy_wa, 6) +
             ", \"triad_write_allocate_gbs\": " + fmt(s.triad_gbs * triad_wa, 6) +
             ", \"read_gbs_best\": " + fmt(s.read_gbs_max, 6) +
             ", \"copy_gbs_best\": " + fmt(s.copy_gbs_max, 6) +
             ", \"triad_gbs_best\": " + fmt(s.triad_gbs_max, 6) +
             ", \"update_gbs_best\": " + fmt(s.update_gbs_max, 6) +
             ", \"copy_write_allocate_gbs_best\": " + fmt(s.copy_gbs_max * copy_wa, 6) +
             ", \"triad_write_allocate_gbs_best\": " + fmt(s.triad_gbs_max * triad_wa, 6) +
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
        {"sweep_update_gbs_best", fmt(sweep_update.best(), 6)},
        {"sweep_update_gbs_median", fmt(sweep_update.median(), 6)},
        {"sweep_update_samples", std::to_string(sweep_update.samples())},
        {"bandwidth_roof_gbs", fmt(bw, 6)},
        {"bandwidth_roof_definition",
         "best repetition of the highest memory traffic: STREAM read, in-place update, and "
         "copy/triad including write-allocate before and after the sweep (McCalpin's "
         "copy/triad counts are in stream_start/stream_end as copy_gbs/triad_gbs), and "
         "STREAM's in-place update of the sweep's buffer after every timed point of the sweep"},
        {"fma_peak_definition",
         "register-resident FMA probe, " +
             std::to_string(kacc_roofline::fma_peak_probe<double>::accumulators) +
             " independent vector chains per thread, every thread; best "
             "sample, taken before, during and after the sweep"},
        {"roof_check_tolerance", fmt(roof_tolerance, 3)},
        {"roof_check_worst_median_over_roof", fmt(worst_over_roof, 4)},
        {"roof_check_points_above", std::to_string(points_above_roof)},
        {"roof_check", roofs_bound ? "PASS" : "FAIL"},
        {"fma_peak_fp64_gflops", fmt(peak64.best(), 6)},
        {"fma_peak_fp64_gflops_median", fmt(peak64.median(), 6)},
        {"fma_peak_fp32_gflops", fmt(peak32.best(), 6)},
        {"fma_peak_fp32_gflops_median", fmt(peak32.median(), 6)},
        {"fma_peak_samples", std::to_string(peak64.samples())},
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
    std::printf(
        "bandwidth roof %.1f GB/s: best memory traffic, write-allocate included (STREAM medians "
        "as McCalpin counts: read %.1f, copy %.1f, triad %.1f, update %.1f; with write-allocate "
        "copy %.1f, triad %.1f; update along the sweep %.1f, best %.1f)\n",
        bw, read, copy, triad, update, copy * kacc_perf::stream_result::copy_write_allocate,
        triad * kacc_perf::stream_result::triad_write_allocate, sweep_update.median(),
        sweep_update.best());
    std::printf(
        "FMA peak (register-resident probe, best) fp64 %.1f GFLOP/s, fp32 %.1f GFLOP/s; machine "
        "balance fp64 %.2f, fp32 %.2f FLOPs/byte\n",
        peak64.best(), peak32.best(), balance64, balance32);
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
    if (!roofs_bound) {
      std::printf("FAIL: %zu measured points above a roof by more than 5%%: %s\n",
                  points_above_roof, above_roof.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
