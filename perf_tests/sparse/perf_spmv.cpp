// kacc-perf-spmv: speed and accuracy of the accessor SpMV.
//
// Speed (Google Benchmark, repetitions randomly interleaved so bandwidth swings hit every
// variant alike): kacc CSR/ELL in every storage configuration and kernel, Kokkos Kernels
// spmv with fp64 and fp32 CrsMatrix (and float values with double vectors), on a 3-D
// 27-point stencil and a power-law matrix built out of cache, and on every Matrix Market
// file (.mtx or .mtx.gz) of a folder: --matrices DIR, by default the matrices shipped in
// the repository (sparse/data/matrices). Accuracy: relative 1-norm error against an exact
// MPFR product of the fp64 matrix, x uniform in [-1, 1]. Acc<fp64,S> stores the matrix
// values in S and keeps x and y in fp64; plain fp32 stores everything in fp32 and computes
// in fp32. --accumulators also runs "N" with the accumulators of "Accuracy as a choice"
// (configs fp64+comp, fp64+dd, fp64+qd, fp64+exact, fp64<-fp32+dd, fp64<-fp32+exact; CSR
// only) and measures every fp64 configuration's error on a dense matrix of GenDot rows of
// condition 1e16 (matrix cond1e16, accuracy only). Writes spmv_speed.csv, spmv_accuracy.csv,
// spmv_summary.csv, spmv.json into
// --out. A folder without matrices, or a matrix that cannot be read, is an error (exit 1):
// the report must not pass without SpMV on real matrices.
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <kacc/core/double_double.hpp>
#include <kacc/core/exact.hpp>
#include <kacc/core/quad_double.hpp>
#include <kacc/sparse/ell_matrix.hpp>
#include <kacc/sparse/spmv.hpp>
#include <kacc_perf/run_info.hpp>
#include <kacc_perf/stream.hpp>
#include <kacc_perf/targets.hpp>
#include <kacc_testing/exact.hpp>
#include <kacc_testing/gendot.hpp>
#ifdef KACC_PERF_KOKKOSKERNELS
#include <KokkosSparse_spmv.hpp>
#include <kacc/sparse/kokkoskernels.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

namespace ks = kacc::sparse;
using Exec = Kokkos::DefaultExecutionSpace;
using Csr64 = ks::CsrMatrix<double>;

namespace {

// ---- generated matrices --------------------------------------------------------------

/// 27-point stencil on an n^3 grid: diagonal 26 + noise, neighbours -1 + noise (noise
/// makes the low-precision formats round).
Csr64 stencil27(int n) {
  const long long rows = static_cast<long long>(n) * n * n;
  Csr64::row_map_type row_map("stencil_row_map", rows + 1);
  Kokkos::parallel_scan(
      "stencil_count", Kokkos::RangePolicy<Exec>(0, rows),
      KOKKOS_LAMBDA(long long r, int& acc, bool final) {
        const int i = r / (n * n), j = (r / n) % n, k = r % n;
        const int len =
            (1 + (i > 0) + (i < n - 1)) * (1 + (j > 0) + (j < n - 1)) * (1 + (k > 0) + (k < n - 1));
        acc += len;
        if (final) row_map(r + 1) = acc;
      });
  int nnz = 0;
  Kokkos::deep_copy(nnz, Kokkos::subview(row_map, rows));
  Csr64::entries_type entries(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stencil_entries"),
                              nnz);
  Csr64::values_type values(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stencil_values"), nnz);
  auto vals = values.storage();
  Kokkos::parallel_for(
      "stencil_fill", Kokkos::RangePolicy<Exec>(0, rows), KOKKOS_LAMBDA(long long r) {
        const int i = r / (n * n), j = (r / n) % n, k = r % n;
        int p = row_map(r);
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            for (int dk = -1; dk <= 1; ++dk) {
              const int a = i + di, b = j + dj, c = k + dk;
              if (a < 0 || b < 0 || c < 0 || a >= n || b >= n || c >= n) continue;
              const long long col = (static_cast<long long>(a) * n + b) * n + c;
              const unsigned h = static_cast<unsigned>(r * 2654435761u + col * 40503u);
              const double noise = (h % 1000) * 1e-4;
              entries(p) = static_cast<int>(col);
              vals(p) = col == r ? 26.0 + noise : -1.0 + noise;
              ++p;
            }
      });
  Kokkos::fence();
  return Csr64(static_cast<int>(rows), static_cast<int>(rows), row_map, entries, values);
}

/// Power-law row lengths (Pareto, exponent 1.5, minimum 3, at most rows / 8), rows ordered
/// by decreasing length as in degree-ordered graphs; columns uniform at random.
Csr64 power_law(int rows, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<int> len(rows);
  const double cap = std::max(8.0, rows / 8.0);
  for (auto& l : len)
    l = static_cast<int>(std::min(cap, std::floor(3.0 * std::pow(1.0 - u(gen), -1.0 / 1.5))));
  std::sort(len.begin(), len.end(), std::greater<int>());
  Csr64::row_map_type row_map("pl_row_map", rows + 1);
  auto h_row_map = Kokkos::create_mirror_view(row_map);
  h_row_map(0) = 0;
  for (int i = 0; i < rows; ++i) h_row_map(i + 1) = h_row_map(i) + len[i];
  const int nnz = h_row_map(rows);
  Csr64::entries_type entries("pl_entries", nnz);
  Csr64::values_type values("pl_values", nnz);
  auto h_entries = Kokkos::create_mirror_view(entries);
  auto h_values = Kokkos::create_mirror_view(values.storage());
  std::uniform_int_distribution<int> col(0, rows - 1);
  for (int i = 0; i < rows; ++i) {
    for (int p = h_row_map(i); p < h_row_map(i + 1); ++p) {
      h_entries(p) = col(gen);
      h_values(p) = 2 * u(gen) - 1;
    }
    std::sort(h_entries.data() + h_row_map(i), h_entries.data() + h_row_map(i + 1));
  }
  Kokkos::deep_copy(row_map, h_row_map);
  Kokkos::deep_copy(entries, h_entries);
  Kokkos::deep_copy(values.storage(), h_values);
  return Csr64(rows, rows, row_map, entries, values);
}

// ---- speed ---------------------------------------------------------------------------

struct Case {
  std::string matrix, impl, config, kernel;
  long long rows = 0, nnz = 0;
  double bytes = 0, flops = 0;
  std::string bench;
};
std::vector<Case> cases;
std::vector<std::shared_ptr<void>> keep_alive;

struct Collector : benchmark::ConsoleReporter {
  std::map<std::string, std::vector<double>> times;  // seconds per iteration
  // Keeps every repetition; prints only the medians.
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> shown;
    for (const auto& r : runs) {
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") shown.push_back(r);
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      times[r.run_name.function_name].push_back(r.GetAdjustedRealTime() * 1e-6);  // unit: us
    }
    if (!shown.empty()) ConsoleReporter::ReportRuns(shown);
  }
};

struct Level {
  double min_time;
  int reps;
};
Level level;
// --accumulators: also the accumulator variants.
bool with_accumulators = false;

void add_case(Case c, std::function<void()> run) {
  c.bench = c.matrix + "/" + c.impl + "/" + c.config + "/" + c.kernel;
  benchmark::RegisterBenchmark(c.bench.c_str(),
                               [run](benchmark::State& st) {
                                 for (auto _ : st) {
                                   run();
                                   Kokkos::fence();
                                 }
                               })
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime()
      ->MinTime(level.min_time)
      ->Repetitions(level.reps)
      ->ReportAggregatesOnly(false);
  cases.push_back(c);
}

template <class M, class XT, class YT>
double spmv_bytes(const M& a) {
  if constexpr (ks::is_csr<M>::value) {
    return static_cast<double>(a.bytes()) + a.num_cols() * sizeof(XT) + a.num_rows() * sizeof(YT);
  } else {
    return static_cast<double>(a.bytes()) + a.num_cols() * sizeof(XT) + a.num_rows() * sizeof(YT);
  }
}

/// Registers kacc CSR (kernels) and optionally ELL for one configuration; Acc as in spmv.
template <class Arith, class Format, class VT, class Acc = void>
void add_kacc(const std::string& name, const Csr64& base, const std::string& config,
              const std::vector<ks::SpmvAlgorithm>& kernels, bool with_ell) {
  auto a = std::make_shared<ks::CsrMatrix<Arith, Format>>(ks::convert_values<Arith, Format>(base));
  auto x = std::make_shared<Kokkos::View<VT*>>("x", base.num_cols());
  auto y = std::make_shared<Kokkos::View<VT*>>("y", base.num_rows());
  Kokkos::deep_copy(*x, VT(0.5));
  keep_alive.insert(keep_alive.end(), {a, x, y});
  for (auto k : kernels) {
    Case c{name,
           "kacc_csr",
           config,
           k == ks::SpmvAlgorithm::automatic
               ? std::string("auto:") + ks::algorithm_name(ks::choose_algorithm(a->row_stats()))
               : ks::algorithm_name(k),
           base.num_rows(),
           static_cast<long long>(base.nnz()),
           0,
           0,
           {}};
    c.bytes = spmv_bytes<ks::CsrMatrix<Arith, Format>, VT, VT>(*a);
    c.flops = 2.0 * base.nnz();
    add_case(c, [a, x, y, k] { ks::spmv<Arith, Acc>(Exec(), "N", 1.0, *a, *x, 0.0, *y, k); });
  }
  if (with_ell) {
    try {
      auto e = std::make_shared<ks::EllMatrix<Arith, Format>>(ks::ell_from_csr(*a, 1.5));
      keep_alive.push_back(e);
      Case c{
          name, "kacc_ell", config, "ell_row", base.num_rows(), static_cast<long long>(base.nnz()),
          0,    0,          {}};
      c.bytes = spmv_bytes<ks::EllMatrix<Arith, Format>, VT, VT>(*e);
      c.flops = 2.0 * base.nnz();
      add_case(c, [e, x, y] { ks::spmv<Arith, Acc>(Exec(), "N", 1.0, *e, *x, 0.0, *y); });
    } catch (const std::invalid_argument& err) {
      fmt::print("{}: ELL skipped: {}\n", name, err.what());
    }
  }
}

template <class Scalar, class VT>
void add_kk(const std::string& name, const Csr64& base, const std::string& config) {
#ifdef KACC_PERF_KOKKOSKERNELS
  using KK = KokkosSparse::CrsMatrix<Scalar, int, Exec::device_type, void, int>;
  auto a = std::make_shared<KK>(ks::to_kokkos<Scalar>(base));
  auto x = std::make_shared<Kokkos::View<VT*>>("x", base.num_cols());
  auto y = std::make_shared<Kokkos::View<VT*>>("y", base.num_rows());
  Kokkos::deep_copy(*x, VT(0.5));
  keep_alive.insert(keep_alive.end(), {a, x, y});
  Case c{name,
         "kokkoskernels",
         config,
         "KokkosSparse::spmv",
         base.num_rows(),
         static_cast<long long>(base.nnz()),
         0,
         0,
         {}};
  c.bytes = base.nnz() * (sizeof(Scalar) + sizeof(int)) + (base.num_rows() + 1.0) * sizeof(int) +
            base.num_cols() * sizeof(VT) + base.num_rows() * sizeof(VT);
  c.flops = 2.0 * base.nnz();
  add_case(c, [a, x, y] { KokkosSparse::spmv("N", VT(1), *a, *x, VT(0), *y); });
#else
  (void)name, (void)base, (void)config;
#endif
}

void add_all(const std::string& name, const Csr64& base, bool both_kernels, bool with_ell) {
  using A = ks::SpmvAlgorithm;
  const std::vector<A> kernels =
      both_kernels ? std::vector<A>{A::row, A::load_balanced} : std::vector<A>{A::automatic};
  add_kacc<double, double, double>(name, base, "fp64", kernels, with_ell);
  add_kacc<float, float, float>(name, base, "fp32", kernels, with_ell);
  add_kacc<double, float, double>(name, base, "Acc<fp64,fp32>", kernels, with_ell);
  add_kacc<double, kacc::fp16, double>(name, base, "Acc<fp64,fp16>", kernels, with_ell);
  add_kacc<double, kacc::bf16, double>(name, base, "Acc<fp64,bf16>", kernels, with_ell);
  add_kacc<double, kacc::scaled<std::int16_t>, double>(name, base, "Acc<fp64,int16s>", kernels,
                                                       with_ell);
  add_kk<double, double>(name, base, "fp64");
  add_kk<float, float>(name, base, "fp32");
  if (with_accumulators) {
    add_kacc<double, double, double, kacc::compensated<double>>(name, base, "fp64+comp", kernels,
                                                                false);
    add_kacc<double, double, double, kacc::double_double>(name, base, "fp64+dd", kernels, false);
    add_kacc<double, double, double, kacc::quad_double>(name, base, "fp64+qd", kernels, false);
    add_kacc<double, double, double, kacc::exact<double>>(name, base, "fp64+exact", kernels, false);
    add_kacc<double, float, double, kacc::double_double>(name, base, "fp64<-fp32+dd", kernels,
                                                         false);
    add_kacc<double, float, double, kacc::exact<double>>(name, base, "fp64<-fp32+exact", kernels,
                                                         false);
  }
  // Float values with double vectors do not compile with Kokkos Kernels 3.4's spmv
  // (its kernels require one scalar type), so that peer is not measured here.
}

// ---- accuracy ------------------------------------------------------------------------

struct AccuracyRow {
  std::string matrix, config;
  int seeds;
  double median, max;
};

template <class V>
std::vector<double> to_host(const V& v) {
  Kokkos::View<double*, Kokkos::HostSpace> h("h", v.extent(0));
  kacc::deep_copy(h, v);
  return std::vector<double>(h.data(), h.data() + h.extent(0));
}

template <class Arith, class Format, class VT, class Acc = void>
std::vector<double> run_config(const ks::CooMatrix& coo, const std::vector<double>& x) {
  const auto a = ks::make_csr<Arith, Format>(coo);
  Kokkos::View<double*, Kokkos::HostSpace> hx(const_cast<double*>(x.data()), x.size());
  Kokkos::View<VT*> dx("x", x.size()), dy("y", static_cast<std::size_t>(coo.num_rows));
  kacc::deep_copy(dx, hx);
  ks::spmv<Arith, Acc>("N", VT(1), a, dx, VT(0), dy);
  return to_host(dy);
}

/// A named configuration: y = A x for x.
using Runner = std::function<std::vector<double>(const ks::CooMatrix&, const std::vector<double>&)>;
using NamedRunners = std::vector<std::pair<std::string, Runner>>;

/// Plain fp64 arithmetic and accumulation of fp64 and fp32 values.
NamedRunners fp64_configs() {
  return {{"fp64", run_config<double, double, double>},
          {"Acc<fp64,fp32>", run_config<double, float, double>}};
}

/// Every storage configuration without an accumulator.
NamedRunners storage_configs() {
  return {{"fp64", run_config<double, double, double>},
          {"fp32", run_config<float, float, float>},
          {"Acc<fp64,fp32>", run_config<double, float, double>},
          {"Acc<fp64,fp16>", run_config<double, kacc::fp16, double>},
          {"Acc<fp64,bf16>", run_config<double, kacc::bf16, double>},
          {"Acc<fp64,int16s>", run_config<double, kacc::scaled<std::int16_t>, double>}};
}

/// The accumulator variants of --accumulators, named as in kacc-perf-blas.
NamedRunners accumulator_configs() {
  return {{"fp64+comp", run_config<double, double, double, kacc::compensated<double>>},
          {"fp64+dd", run_config<double, double, double, kacc::double_double>},
          {"fp64+qd", run_config<double, double, double, kacc::quad_double>},
          {"fp64+exact", run_config<double, double, double, kacc::exact<double>>},
          {"fp64<-fp32+dd", run_config<double, float, double, kacc::double_double>},
          {"fp64<-fp32+exact", run_config<double, float, double, kacc::exact<double>>}};
}

/// Per configuration: the median and largest relative 1-norm error of y = A x against an
/// exact product, over seeds x vectors drawn by x_of(seed).
std::vector<AccuracyRow> accuracy(const std::string& name, const ks::CooMatrix& coo, int seeds,
                                  const NamedRunners& configs,
                                  const std::function<std::vector<double>(int)>& x_of) {
  std::map<std::string, std::vector<double>> errs;
  const std::size_t rows = static_cast<std::size_t>(coo.num_rows);
  for (int s = 0; s < seeds; ++s) {
    const std::vector<double> x = x_of(s);
    std::vector<double> ref(rows, 0.0);
    std::vector<double> av, xv;
    std::size_t k = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      av.clear();
      xv.clear();
      for (; k < coo.nnz() && coo.row[k] == static_cast<std::int64_t>(i); ++k) {
        av.push_back(coo.val[k]);
        xv.push_back(x[coo.col[k]]);
      }
      ref[i] = kacc_testing::exact_dot(av.size(), av.data(), xv.data()).rounded();
    }
    for (const auto& [config, run] : configs) {
      const std::vector<double> y = run(coo, x);
      double num = 0, den = 0;
      for (std::size_t i = 0; i < rows; ++i) {
        num += std::fabs(y[i] - ref[i]);
        den += std::fabs(ref[i]);
      }
      errs[config].push_back(den > 0 ? num / den : num);  // inf/nan stay visible
    }
  }
  std::vector<AccuracyRow> out;
  for (const auto& [c, run] : configs) {
    auto& e = errs[c];
    const double med = kacc_perf::median(e);
    double mx = 0;
    for (double v : e) mx = (std::isnan(v) || v > mx) ? v : mx;
    out.push_back({name, c, seeds, med, mx});
  }
  return out;
}

/// Rows of the dense m x n matrix of GenDot rows of condition `cond` (kacc_testing::gen_dot_rows)
/// as COO, and the x that makes every row's product that ill-conditioned.
ks::CooMatrix gen_dot_matrix(std::size_t m, std::size_t n, double cond, std::vector<double>& x) {
  std::vector<double> values;
  kacc_testing::gen_dot_rows(m, n, cond, 9000, x, values);
  ks::CooMatrix coo;
  coo.num_rows = static_cast<std::int64_t>(m);
  coo.num_cols = static_cast<std::int64_t>(n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      coo.row.push_back(static_cast<std::int64_t>(i));
      coo.col.push_back(static_cast<std::int64_t>(j));
      coo.val.push_back(values[i * n + j]);
    }
  return coo;
}

/// Takes --matrices DIR (and --accumulators) out of argv; the repository's folder when no
/// DIR is given.
std::string take_matrices_option(int& argc, char** argv) {
  std::string dir = KACC_DEFAULT_MATRICES;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--accumulators") {
      with_accumulators = true;
    } else if (a == "--matrices" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a.rfind("--matrices=", 0) == 0) {
      dir = a.substr(11);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return dir;
}

/// The Matrix Market files of dir (.mtx, .mtx.gz), sorted; their names without extension.
std::vector<std::pair<std::string, std::string>> matrix_files(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string file = e.path().filename().string();
    for (const std::string ext : {".mtx", ".mtx.gz"}) {
      if (file.size() > ext.size() && file.compare(file.size() - ext.size(), ext.size(), ext) == 0)
        files.emplace_back(file.substr(0, file.size() - ext.size()), e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// --help's text; {} is the default of --matrices.
constexpr const char usage_format[] =
    "kacc-perf-spmv [--quick|--full] [--accumulators] [--out DIR] [--matrices DIR]\n"
    "               [--benchmark_* ...]\n"
    "speed and accuracy of kacc SpMV (CSR, ELL) in every storage configuration against\n"
    "Kokkos Kernels, on a 27-point stencil, a power-law matrix and every .mtx/.mtx.gz file\n"
    "of --matrices (default {}); writes spmv_speed.csv, spmv_accuracy.csv,\n"
    "spmv_summary.csv and spmv.json into --out (default: the current folder).\n"
    "  --quick  smoke run (smaller generated matrices); --full  longer, more repetitions\n"
    "  --accumulators  also CSR \"N\" summed in compensated, double_double, quad_double and\n"
    "           exact<double>, and the error of every fp64 configuration on GenDot rows of\n"
    "           condition 1e16 (matrix cond1e16)\n"
    "  --benchmark_*  Google Benchmark's options; --benchmark_list_tests prints the\n"
    "           benchmarks' names (the matrices set up first) and writes no file\n";

}  // namespace

int main(int argc, char** argv) {
  if (kacc_perf::answer_help(argc, argv, fmt::format(usage_format, KACC_DEFAULT_MATRICES)))
    return 0;
  const auto parsed = kacc_perf::parse_options_or_report(argc, argv, "kacc-perf-spmv");
  if (!parsed) return 2;
  const kacc_perf::options& opts = *parsed;
  const std::string matrices_dir = take_matrices_option(argc, argv);
  if (!std::filesystem::is_directory(matrices_dir)) {
    fmt::print(stderr, "kacc-perf-spmv: no matrix folder {} (give one with --matrices DIR)\n",
               matrices_dir);
    return 1;
  }
  const auto files = matrix_files(matrices_dir);
  if (files.empty()) {
    fmt::print(stderr, "kacc-perf-spmv: no .mtx or .mtx.gz files in {}\n", matrices_dir);
    return 1;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  const bool quick = opts.run_level == kacc_perf::level::quick;
  const bool full = opts.run_level == kacc_perf::level::full;
  level = quick ? Level{0.002, 3} : full ? Level{0.5, 15} : Level{0.1, 5};
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  args.push_back(interleave.data());
  int bargc = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&bargc, args.data());

  const std::size_t llc = kacc_perf::last_level_cache_bytes();
  const std::size_t stream_bytes =
      quick ? (std::size_t{64} << 20) : std::max<std::size_t>(std::size_t{512} << 20, 8 * llc);
  const auto stream = kacc_perf::measure_stream<Exec>(stream_bytes, quick ? 5 : 20);
  fmt::print("STREAM read {:.1f} copy {:.1f} triad {:.1f} GB/s\n", stream.read_gbs, stream.copy_gbs,
             stream.triad_gbs);

  const int stencil_n = quick ? 40 : 160;
  const int pl_rows = quick ? 200000 : 4000000;
  {
    const auto st = stencil27(stencil_n);
    add_all("stencil27", st, false, true);
    const auto pl = power_law(pl_rows, 42);
    fmt::print("power_law: rows {} nnz {} max row {} cv {:.2f}\n", pl.num_rows(), pl.nnz(),
               pl.row_stats().max, pl.row_stats().cv);
    add_all("power_law", pl, true, true);
  }
  std::vector<std::pair<std::string, ks::CooMatrix>> shared;
  for (const auto& [name, path] : files) {
    try {
      shared.emplace_back(name, ks::read_matrix_market(path));
    } catch (const std::exception& e) {
      fmt::print(stderr, "kacc-perf-spmv: cannot read {}: {}\n", path, e.what());
      // The registered cases hold Kokkos views: release them before Kokkos finalizes.
      benchmark::ClearRegisteredBenchmarks();
      keep_alive.clear();
      return 1;
    }
    add_all(name, ks::make_csr<double>(shared.back().second), false, false);
  }
  fmt::print("{} matrices from {}\n", files.size(), matrices_dir);

  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();
  if (opts.list_only) {  // the names are printed, nothing was timed: no file to write
    benchmark::ClearRegisteredBenchmarks();
    keep_alive.clear();
    return 0;
  }

  // Speed CSV.
  std::map<std::string, double> median_of;
  for (auto& c : cases) median_of[c.bench] = kacc_perf::median(collector.times[c.bench]);
  auto t = [&](const std::string& m, const std::string& impl, const std::string& cfg,
               const std::string& kernel) -> double {
    for (auto& c : cases)
      if (c.matrix == m && c.impl == impl && c.config == cfg &&
          (kernel.empty() || c.kernel == kernel))
        return median_of[c.bench];
    return std::nan("");
  };
  std::ostringstream speed;
  speed << "matrix,rows,nnz,impl,config,kernel,threads,time_median_s,time_min_s,gflops,gbs,"
           "frac_read_bw,speedup_vs_fp64\n";
  // kacc and Kokkos Kernels both run on the Kokkos execution space's threads.
  const int threads = Exec().concurrency();
  for (auto& c : cases) {
    const auto& v = collector.times[c.bench];
    const double med = median_of[c.bench];
    const double mn = v.empty() ? std::nan("") : *std::min_element(v.begin(), v.end());
    const double fp64 = c.impl == "kokkoskernels" ? t(c.matrix, c.impl, "fp64", "")
                                                  : t(c.matrix, c.impl, "fp64", c.kernel);
    speed << fmt::format("{},{},{},{},\"{}\",{},{},{:.6e},{:.6e},{:.3f},{:.3f},{:.3f},{:.3f}\n",
                         c.matrix, c.rows, c.nnz, c.impl, c.config, c.kernel, threads, med, mn,
                         c.flops / med * 1e-9, c.bytes / med * 1e-9,
                         c.bytes / med * 1e-9 / stream.read_gbs, fp64 / med);
  }
  kacc_perf::write_file(opts.out_dir + "/spmv_speed.csv", speed.str());

  // Accuracy CSV.
  std::ostringstream acc;
  acc << "matrix,config,seeds,median_rel_error,max_rel_error\n";
  NamedRunners configs = storage_configs();
  if (with_accumulators) {
    const auto more = accumulator_configs();
    configs.insert(configs.end(), more.begin(), more.end());
  }
  const auto uniform_x = [](std::size_t n) {
    return [n](int seed) {
      std::mt19937_64 gen(1000 + seed);
      std::uniform_real_distribution<double> dist(-1.0, 1.0);
      std::vector<double> x(n);
      for (auto& e : x) e = dist(gen);
      return x;
    };
  };
  for (const auto& [name, coo] : shared) {
    for (const auto& r : accuracy(name, coo, quick ? 2 : 10, configs,
                                  uniform_x(static_cast<std::size_t>(coo.num_cols)))) {
      acc << fmt::format("{},\"{}\",{},{:.6e},{:.6e}\n", r.matrix, r.config, r.seeds, r.median,
                         r.max);
    }
  }
  if (with_accumulators) {
    // Accuracy only (64 dense rows, too small to time); one x: GenDot fixes it.
    std::vector<double> ill_x;
    const auto ill = gen_dot_matrix(64, 512, 1e16, ill_x);
    // fp16, bf16 and int16s cannot hold GenDot's exponent range: fp64 arithmetic only.
    NamedRunners ill_configs = fp64_configs();
    const auto more = accumulator_configs();
    ill_configs.insert(ill_configs.end(), more.begin(), more.end());
    for (const auto& r : accuracy("cond1e16", ill, 1, ill_configs, [&](int) { return ill_x; }))
      acc << fmt::format("{},\"{}\",{},{:.6e},{:.6e}\n", r.matrix, r.config, r.seeds, r.median,
                         r.max);
  }
  kacc_perf::write_file(opts.out_dir + "/spmv_accuracy.csv", acc.str());

  // Summary: one row per target of the issue.
  const std::string st = "stencil27", pl = "power_law";
  const double st_acc32 = t(st, "kacc_csr", "Acc<fp64,fp32>", "");
  const double st_acc16 = t(st, "kacc_csr", "Acc<fp64,fp16>", "");
  const double kk64 = t(st, "kokkoskernels", "fp64", ""), kk32 = t(st, "kokkoskernels", "fp32", "");
  double st_bytes = std::nan("");
  for (auto& c : cases)
    if (c.matrix == st && c.impl == "kacc_csr" && c.config == "Acc<fp64,fp32>") st_bytes = c.bytes;
  const double pl_row = t(pl, "kacc_csr", "fp64", "row"),
               pl_lb = t(pl, "kacc_csr", "fp64", "load_balanced");
  const double pl_kk = t(pl, "kokkoskernels", "fp64", "");
  std::size_t table = 0;
  for (const auto& s : shared) table += !std::isnan(t(s.first, "kacc_csr", "Acc<fp64,fp32>", ""));
  std::vector<kacc_perf::target> targets = {
      {"stencil Acc<fp64,fp32> CSR speedup over Kokkos Kernels fp64", kk64 / st_acc32, 1.35, true,
       "time ratio kk_fp64 / kacc"},
      {"stencil Acc<fp64,fp32> CSR time / Kokkos Kernels fp32 time", st_acc32 / kk32, 1.05, false,
       "within 5% of its fp32 spmv"},
      {"stencil Acc<fp64,fp32> CSR fraction of STREAM read bandwidth",
       st_bytes / st_acc32 * 1e-9 / stream.read_gbs, 0.85, true, "values+indices+offsets+x+y once"},
      {"stencil Acc<fp64,fp16> CSR speedup over Kokkos Kernels fp64", kk64 / st_acc16, 1.7, true,
       fmt::format("over kacc fp64: {:.3f}", t(st, "kacc_csr", "fp64", "") / st_acc16)},
      {"power-law fp64 load-balanced speedup over row-per-thread", pl_row / pl_lb, 1.5, true,
       "same matrix, same storage"},
      {"power-law fp64 load-balanced speedup over Kokkos Kernels fp64", pl_kk / pl_lb, 1.0, true,
       "not slower"},
      {"matrices of the folder in the speedup table", static_cast<double>(table),
       static_cast<double>(files.size()), true,
       fmt::format("spmv_speed.csv speedup_vs_fp64 per matrix; {} files in {}", files.size(),
                   matrices_dir)},
  };
  std::string sum = kacc_perf::summary_csv_header;
  fmt::print("\nkacc-perf-spmv summary (medians; level {})\n",
             kacc_perf::level_name(opts.run_level));
  for (const auto& g : targets) {
    sum += kacc_perf::summary_csv_row(g);
    kacc_perf::print_target(g, 66);
  }
  kacc_perf::write_file(opts.out_dir + "/spmv_summary.csv", sum);
  kacc_perf::write_file(
      opts.out_dir + "/spmv.json",
      kacc_perf::run_json("kacc-perf-spmv",
                          {{"level", kacc_perf::level_name(opts.run_level)},
                           {"accumulators", with_accumulators ? "yes" : "no"},
                           {"stream_read_gbs", fmt::format("{:.3f}", stream.read_gbs)},
                           {"stream_copy_gbs", fmt::format("{:.3f}", stream.copy_gbs)},
                           {"stream_triad_gbs", fmt::format("{:.3f}", stream.triad_gbs)},
                           {"stream_bytes_per_array", std::to_string(stream.bytes_per_array)},
                           {"stencil_grid", std::to_string(stencil_n)},
                           {"power_law_rows", std::to_string(pl_rows)},
                           {"matrices_dir", matrices_dir},
                           {"threads", std::to_string(threads)}}));
  fmt::print("wrote {}/spmv_speed.csv, spmv_accuracy.csv, spmv_summary.csv, spmv.json\n",
             opts.out_dir);
  benchmark::ClearRegisteredBenchmarks();
  keep_alive.clear();
  return 0;
}
