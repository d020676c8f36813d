// kacc-perf-accumulator-cost: what each accumulator of "Accuracy as a choice" costs in DOT,
// GEMV ("N", LayoutLeft and LayoutRight) and CSR SpMV (a 3-D 7- or 27-point stencil), as the
// time relative to plain fp64 of the same kernel, timed through the public kacc::blas::dot, gemv
// and kacc::sparse::spmv. Every variant runs once per repetition, the variants interleaved, and the
// median is reported. Each line also prints a checksum of the result's bits, so two builds can be
// compared bit for bit on the same thread count.
//
// Options: kacc-perf-accumulator-cost --help.
//
// --spmv N: the stencil's grid is N^3 (default 128: 2^21 rows; 14.6 million entries, 200 MB of
// matrix with 7 points, 55.7 million entries, 670 MB with --stencil 27).
//
// --clock thread times the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), which
// a loaded machine disturbs little: run it with one thread (OMP_NUM_THREADS=1), where the
// calling thread does all the work. --clock wall (the default) is the figure for a quiet
// machine with the issue's thread count.
#include <kacc/blas/dot.hpp>
#include <kacc/blas/gemv.hpp>
#include <kacc/sparse/spmv.hpp>

#include <Kokkos_Core.hpp>
#include <kacc_perf/run_info.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using Exact = kacc::exact<double>;
using DD = kacc::double_double;
using Comp = kacc::compensated<double>;

// Deterministic uniform [-1, 1] data.
double hash_uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1p-52 - 1.0;
}

bool thread_clock = false;

double now() {
  if (thread_clock) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// FNV-1a over the bits of n doubles.
std::uint64_t checksum(const double* v, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t b;
    std::memcpy(&b, v + i, sizeof b);
    h = (h ^ b) * 0x100000001b3ull;
  }
  return h;
}

struct variant {
  std::string kernel, config;
  std::function<std::uint64_t()> run;  // returns the result's checksum
  std::vector<double> times;
  std::uint64_t sum = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void add_dot(std::vector<variant>& out, std::int64_t n) {
  Kokkos::View<double*, Kokkos::HostSpace> x64("x64", n), y64("y64", n);
  Kokkos::View<float*, Kokkos::HostSpace> x32("x32", n), y32("y32", n);
  for (std::int64_t i = 0; i < n; ++i) {
    x64(i) = hash_uniform(1, i);
    y64(i) = hash_uniform(2, i);
    x32(i) = static_cast<float>(x64(i));
    y32(i) = static_cast<float>(y64(i));
  }
  auto bits = [](double d) {
    std::uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
  };
  out.push_back({"dot", "fp64", [=] { return bits(kacc::blas::dot(Host(), x64, y64)); }, {}, 0});
  out.push_back({"dot",
                 "fp64+dd",
                 [=] { return bits(kacc::blas::dot<double, DD>(Host(), x64, y64)); },
                 {},
                 0});
  out.push_back({"dot",
                 "fp64+exact",
                 [=] { return bits(kacc::blas::dot<double, Exact>(Host(), x64, y64)); },
                 {},
                 0});
  out.push_back({"dot",
                 "fp64<-fp32+dd",
                 [=] { return bits(kacc::blas::dot<double, DD>(Host(), x32, y32)); },
                 {},
                 0});
  out.push_back({"dot",
                 "fp64<-fp32+exact",
                 [=] { return bits(kacc::blas::dot<double, Exact>(Host(), x32, y32)); },
                 {},
                 0});
}

template <class Layout>
void add_gemv(std::vector<variant>& out, std::int64_t n, const std::string& name) {
  Kokkos::View<double**, Layout, Kokkos::HostSpace> A64("A64", n, n);
  Kokkos::View<float**, Layout, Kokkos::HostSpace> A32("A32", n, n);
  Kokkos::View<double*, Kokkos::HostSpace> x64("x64", n), y("y", n);
  Kokkos::View<float*, Kokkos::HostSpace> x32("x32", n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      A64(i, j) = hash_uniform(3, i * n + j);
      A32(i, j) = static_cast<float>(A64(i, j));
    }
  for (std::int64_t i = 0; i < n; ++i) {
    x64(i) = hash_uniform(4, i);
    x32(i) = static_cast<float>(x64(i));
  }
  const std::size_t m = static_cast<std::size_t>(n);
  auto done = [=] { return checksum(y.data(), m); };
  out.push_back({name,
                 "fp64",
                 [=] {
                   kacc::blas::gemv(Host(), "N", 1.0, A64, x64, 0.0, y);
                   return done();
                 },
                 {},
                 0});
  out.push_back({name,
                 "fp64+dd",
                 [=] {
                   kacc::blas::gemv<double, DD>(Host(), "N", 1.0, A64, x64, 0.0, y);
                   return done();
                 },
                 {},
                 0});
  out.push_back({name,
                 "fp64+exact",
                 [=] {
                   kacc::blas::gemv<double, Exact>(Host(), "N", 1.0, A64, x64, 0.0, y);
                   return done();
                 },
                 {},
                 0});
  out.push_back({name,
                 "fp64<-fp32+exact",
                 [=] {
                   kacc::blas::gemv<double, Exact>(Host(), "N", 1.0, A32, x32, 0.0, y);
                   return done();
                 },
                 {},
                 0});
}

// CSR in host memory: the kernels run on the host (Host) in every build, GPU builds included.
template <class S>
using HostCsr = kacc::sparse::CsrMatrix<double, S, int, int, Host::device_type>;

// The 7-point (points = 7) or 27-point (points = 27) stencil on an n^3 grid in CSR with values
// stored as S: diagonal 6 (26 for 27 points), neighbours -1, each with a deterministic
// perturbation of up to 0.1 (so the products round).
template <class S>
HostCsr<S> stencil(std::int64_t n, int points) {
  using M = HostCsr<S>;
  const std::int64_t rows = n * n * n;
  typename M::row_map_type row_map("stencil_row_map", rows + 1);
  std::vector<int> cols;
  std::vector<double> vals;
  cols.reserve(static_cast<std::size_t>(points * rows));
  vals.reserve(static_cast<std::size_t>(points * rows));
  const double diagonal = points - 1.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t z = r / (n * n), yy = (r / n) % n, xx = r % n;
    // Offsets in lexicographic order: the columns in increasing order.
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const bool inside = z + dz >= 0 && z + dz < n && yy + dy >= 0 && yy + dy < n &&
                              xx + dx >= 0 && xx + dx < n;
          const bool in_stencil = points == 27 || std::abs(dz) + std::abs(dy) + std::abs(dx) <= 1;
          if (inside && in_stencil) cols.push_back(static_cast<int>(r + (dz * n + dy) * n + dx));
        }
    while (vals.size() < cols.size()) {
      const double base = cols[vals.size()] == r ? diagonal : -1.0;
      vals.push_back(base + 0.1 * hash_uniform(5, vals.size()));
    }
    row_map(r + 1) = static_cast<int>(cols.size());
  }
  const std::size_t nnz = cols.size();
  typename M::entries_type entries("stencil_entries", nnz);
  typename M::values_type values("stencil_values", nnz);
  for (std::size_t k = 0; k < nnz; ++k) {
    entries(k) = cols[k];
    values(k) = vals[k];
  }
  return M(static_cast<int>(rows), static_cast<int>(rows), row_map, entries, values);
}

// Adds the SpMV variants; returns the stencil's number of entries.
std::int64_t add_spmv(std::vector<variant>& out, std::int64_t n, int points) {
  const auto a64 = stencil<double>(n, points);
  const auto a32 = stencil<float>(n, points);
  const std::int64_t rows = n * n * n;
  Kokkos::View<double*, Kokkos::HostSpace> x64("x64", rows), y("y", rows);
  Kokkos::View<float*, Kokkos::HostSpace> x32("x32", rows);
  for (std::int64_t i = 0; i < rows; ++i) {
    x64(i) = hash_uniform(6, i);
    x32(i) = static_cast<float>(x64(i));
  }
  const std::size_t m = static_cast<std::size_t>(rows);
  auto done = [=] { return checksum(y.data(), m); };
  const auto row = kacc::sparse::SpmvAlgorithm::row;
  auto add = [&](const char* config, auto multiply) {
    out.push_back({"spmv",
                   config,
                   [=] {
                     multiply();
                     return done();
                   },
                   {},
                   0});
  };
  add("fp64", [=] { kacc::sparse::spmv(Host(), "N", 1.0, a64, x64, 0.0, y, row); });
  add("fp64+comp",
      [=] { kacc::sparse::spmv<double, Comp>(Host(), "N", 1.0, a64, x64, 0.0, y, row); });
  add("fp64+dd", [=] { kacc::sparse::spmv<double, DD>(Host(), "N", 1.0, a64, x64, 0.0, y, row); });
  add("fp64+exact",
      [=] { kacc::sparse::spmv<double, Exact>(Host(), "N", 1.0, a64, x64, 0.0, y, row); });
  add("fp64<-fp32+exact",
      [=] { kacc::sparse::spmv<double, Exact>(Host(), "N", 1.0, a32, x32, 0.0, y, row); });
  return static_cast<std::int64_t>(a64.nnz());
}

constexpr const char* usage =
    "kacc-perf-accumulator-cost [--dot N] [--gemv N] [--spmv N] [--stencil 7|27] [--reps R]\n"
    "                           [--clock wall|thread] [--kernels dot,gemv-L,gemv-R,spmv]\n"
    "time of DOT (N entries, default 2^27), GEMV \"N\" (N x N, default 16384, LayoutLeft and\n"
    "LayoutRight) and CSR SpMV (the 7- or 27-point stencil of N^3 rows, default 7 points and\n"
    "N = 128) with each accumulator (plain, compensated, double_double, exact<double>) on fp64\n"
    "or fp32 storage, relative to plain fp64; R interleaved repetitions (default 7), medians,\n"
    "and a checksum of each result's bits. --clock thread: the calling thread's CPU time (run\n"
    "it on one thread).\n";

/// The positive integer argv[i] holds, or a message naming the option.
std::int64_t positive(const char* option, const char* value) {
  char* end = nullptr;
  const long long v = std::strtoll(value, &end, 10);
  if (end == value || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "kacc-perf-accumulator-cost: %s needs a positive integer, not '%s'\n",
                 option, value);
    std::exit(2);
  }
  return v;
}

/// value when it is first or second, or a message naming the option.
std::string one_of(const char* option, const char* value, const char* first, const char* second) {
  if (std::strcmp(value, first) != 0 && std::strcmp(value, second) != 0) {
    std::fprintf(stderr, "kacc-perf-accumulator-cost: %s is %s or %s, not '%s'\n", option, first,
                 second, value);
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (kacc_perf::answer_help(argc, argv, usage)) return 0;
  Kokkos::ScopeGuard guard(argc, argv);
  std::int64_t dot_n = std::int64_t{1} << 27, gemv_n = 16384, spmv_n = 128;
  int reps = 7, stencil_points = 7;
  std::string kernels = "dot,gemv-L,gemv-R,spmv";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--dot" && has_value) {
      dot_n = positive("--dot", argv[++i]);
    } else if (a == "--gemv" && has_value) {
      gemv_n = positive("--gemv", argv[++i]);
    } else if (a == "--spmv" && has_value) {
      spmv_n = positive("--spmv", argv[++i]);
    } else if (a == "--stencil" && has_value) {
      stencil_points = std::stoi(one_of("--stencil", argv[++i], "7", "27"));
    } else if (a == "--reps" && has_value) {
      reps = static_cast<int>(positive("--reps", argv[++i]));
    } else if (a == "--kernels" && has_value) {
      kernels = argv[++i];
    } else if (a == "--clock" && has_value) {
      thread_clock = one_of("--clock", argv[++i], "wall", "thread") == "thread";
    } else if (a.rfind("--kokkos", 0) != 0) {
      std::fprintf(stderr,
                   "kacc-perf-accumulator-cost: unknown option, or one without its value: '%s'\n%s",
                   a.c_str(), usage);
      return 2;
    }
  }
  const auto listed = [](const std::string& list, const std::string& name) {
    return ("," + list + ",").find("," + name + ",") != std::string::npos;
  };
  for (std::size_t b = 0; b <= kernels.size();) {
    const std::size_t e = std::min(kernels.find(',', b), kernels.size());
    if (!listed("dot,gemv-L,gemv-R,spmv", kernels.substr(b, e - b))) {
      std::fprintf(stderr,
                   "kacc-perf-accumulator-cost: --kernels takes dot, gemv-L, gemv-R and spmv, "
                   "not '%s'\n",
                   kernels.substr(b, e - b).c_str());
      return 2;
    }
    b = e + 1;
  }
  const auto wanted = [&](const char* k) { return listed(kernels, k); };
  std::vector<variant> vs;
  if (wanted("dot")) add_dot(vs, dot_n);
  if (wanted("gemv-L")) add_gemv<Kokkos::LayoutLeft>(vs, gemv_n, "gemv-L");
  if (wanted("gemv-R")) add_gemv<Kokkos::LayoutRight>(vs, gemv_n, "gemv-R");
  const std::int64_t spmv_entries = wanted("spmv") ? add_spmv(vs, spmv_n, stencil_points) : 0;
  for (auto& v : vs) v.sum = v.run();  // warm-up
  for (int r = 0; r < reps; ++r)
    for (auto& v : vs) {
      const double t0 = now();
      const std::uint64_t s = v.run();
      v.times.push_back(now() - t0);
      if (s != v.sum)
        std::printf("# %s %s: result changed between runs\n", v.kernel.c_str(), v.config.c_str());
    }
  std::printf("# threads %d, clock %s, %d repetitions, medians\n", Host().concurrency(),
              thread_clock ? "thread-cpu" : "wall", reps);
  if (spmv_entries > 0)
    std::printf("# spmv: the %d-point stencil of %lld^3 rows, %lld entries\n", stencil_points,
                static_cast<long long>(spmv_n), static_cast<long long>(spmv_entries));
  std::printf("%-8s %-18s %12s %9s  %s\n", "kernel", "config", "seconds", "vs fp64", "checksum");
  double base = 0;
  for (auto& v : vs) {
    const double t = median(v.times);
    if (v.config == "fp64") base = t;
    std::printf("%-8s %-18s %12.6f %9.3f  %016llx\n", v.kernel.c_str(), v.config.c_str(), t,
                t / base, static_cast<unsigned long long>(v.sum));
  }
  return 0;
}
