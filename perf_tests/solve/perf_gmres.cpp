// kacc-perf-gmres: time to solution of kacc::solve::gmres with the Krylov basis stored in
// fp64, fp32, fp16, bf16, scaled int32 and scaled int16, on a generated 3-D
// convection-diffusion problem (7-point upwind, mesh Peclet number 0.5; 128^3 = 2.1M rows
// by default, far out of cache), Jacobi-preconditioned on the right, GMRES(100) to
// ||b - A x|| / ||b|| <= 1e-10 (b = A * ones, x0 = 0). With --preconditioners the cases are
// instead the preconditioners, each with an fp64 basis: Jacobi, block-Jacobi with fp64 and
// fp16 blocks, adaptive-precision block-Jacobi, and the sparse approximate inverse stored
// in fp64, fp32 and fp16. --cases keeps some of the cases (only their preconditioners are
// built).
//
// Each round solves once per case, in a new random order per round (so drifts of the
// machine's speed hit every case alike); the summary gives per case the iterations, the
// median and smallest time to solution, the median time per iteration and the speed-ups
// over the first case run (the fp64 basis; Jacobi; the first one --cases names), then the
// issue's targets for the cases that ran (basis formats: the fp32 and best 16-bit bases'
// speed-ups and iterations against fp64; preconditioners: fp16 block-Jacobi against fp64).
// Building a preconditioner is not timed with the solve; its time is printed once.
// Results in --out: gmres.csv (every solve, with the matrix's nonzeros and the bytes per
// stored basis entry, from which kacc-report predicts the speed-ups), gmres_summary.csv
// (the targets) and gmres.json (the run's description).

#include <kacc/solve.hpp>
#include <kacc_perf/run_info.hpp>
#include <kacc_perf/stream.hpp>
#include <kacc_perf/targets.hpp>

#include <fmt/core.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ks = kacc::sparse;
namespace kso = kacc::solve;
using Exec = Kokkos::DefaultExecutionSpace;
using Vector = Kokkos::View<double*>;

/// The 3-D convection-diffusion matrix on an n^3 grid, built on the device in CSR: row i
/// holds its (up to 7) entries in column order.
ks::CsrMatrix<double> convection_diffusion_3d(int n) {
  using M = ks::CsrMatrix<double>;
  const std::int64_t rows = std::int64_t(n) * n * n;
  typename M::row_map_type row_map("perf::row_map", rows + 1);
  Kokkos::parallel_scan(
      "perf::row_lengths", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, rows),
      KOKKOS_LAMBDA(const std::int64_t i, int& offset, const bool last) {
        const int x = int(i % n), y = int(i / n % n), z = int(i / n / n);
        const int len = 1 + (x > 0) + (x + 1 < n) + (y > 0) + (y + 1 < n) + (z > 0) + (z + 1 < n);
        if (last) row_map(i + 1) = offset + len;
        offset += len;
      });
  int nnz = 0;
  Kokkos::deep_copy(nnz, Kokkos::subview(row_map, rows));
  typename M::entries_type entries("perf::entries", nnz);
  Kokkos::View<double*> values64("perf::values", nnz);
  const double pe = 0.5;
  Kokkos::parallel_for(
      "perf::fill", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(0, rows),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const int x = int(i % n), y = int(i / n % n), z = int(i / n / n);
        const std::int64_t plane = std::int64_t(n) * n;
        int k = row_map(i);
        auto add = [&](std::int64_t j, double v) {
          entries(k) = int(j);
          values64(k) = v;
          ++k;
        };
        if (z > 0) add(i - plane, -1 - pe);
        if (y > 0) add(i - n, -1 - pe);
        if (x > 0) add(i - 1, -1 - pe);
        add(i, 6 + 3 * pe);
        if (x + 1 < n) add(i + 1, -1);
        if (y + 1 < n) add(i + n, -1);
        if (z + 1 < n) add(i + plane, -1);
      });
  typename M::values_type values(Kokkos::view_alloc(Kokkos::WithoutInitializing, "perf::v"), nnz);
  kacc::deep_copy(values, values64);
  return M(int(rows), int(rows), row_map, entries, values);
}

struct Case {
  std::string name;
  std::function<kso::SolverStatus(const Vector&)> solve;
  /// Bytes of one stored basis entry.
  int basis_bytes = 8;
};

/// A case by name, made (its preconditioner built) only if it is run.
struct CaseMaker {
  std::string name;
  std::function<Case()> make;
};

/// The cases named in `list` (comma-separated, in its order), or all when it is empty.
/// Throws std::invalid_argument naming an unknown case and the known ones, before any case
/// is made.
std::vector<Case> selected_cases(const std::vector<CaseMaker>& makers, const std::string& list) {
  std::vector<Case> cases;
  if (list.empty()) {
    for (const auto& m : makers) cases.push_back(m.make());
    return cases;
  }
  std::vector<const CaseMaker*> chosen;
  std::stringstream names(list);
  std::string name;
  while (std::getline(names, name, ',')) {
    const auto m = std::find_if(makers.begin(), makers.end(),
                                [&](const CaseMaker& c) { return c.name == name; });
    if (m == makers.end()) {
      std::string known;
      for (const auto& c : makers) known += (known.empty() ? "" : ", ") + c.name;
      throw std::invalid_argument("--cases: no case '" + name + "' (the cases: " + known + ")");
    }
    chosen.push_back(&*m);
  }
  for (const auto* m : chosen) cases.push_back(m->make());
  return cases;
}

template <class Format, class Preconditioner>
Case make_case(const std::string& name, const ks::CsrMatrix<double>& a, const Vector& b,
               const Preconditioner& m, const kso::GmresOptions& options) {
  return {name, [=](const Vector& x) { return kso::gmres<Format>(Exec(), a, b, x, options, m); },
          static_cast<int>(sizeof(typename kacc::format_traits<Format>::storage_type))};
}

/// A type as a value, to pick a template argument in a lambda.
template <class T>
struct type_tag {
  using type = T;
};

/// A preconditioner built once, with the seconds it took printed.
template <class Preconditioner, class... Args>
Preconditioner timed_setup(const char* name, const Args&... args) {
  const auto t0 = std::chrono::steady_clock::now();
  Preconditioner m(args...);
  Kokkos::fence();
  fmt::print("  set-up of {}: {:.2f} s\n", name,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (kacc_perf::answer_help(
          argc, argv,
          "kacc-perf-gmres [--quick|--full] [--out DIR] [--size N] [--restart M] [--rounds R]\n"
          "                [--preconditioners] [--cases NAME,NAME...]\n"
          "time to solution of GMRES(M) (default 100) with the Krylov basis in fp64, fp32, fp16,\n"
          "bf16, scaled int32 and scaled int16, on a 3-D convection-diffusion problem of N^3\n"
          "rows (default 128: 2.1M rows; --quick: 24), Jacobi on the right, tolerance 1e-10;\n"
          "R interleaved rounds (default 5; --quick 1, --full 9), medians; writes gmres.csv and\n"
          "gmres.json into --out (default: the current folder). --preconditioners: the cases are\n"
          "preconditioners with an fp64 basis instead (Jacobi, block-Jacobi fp64 and fp16,\n"
          "adaptive block-Jacobi, sparse approximate inverse fp64, fp32 and fp16). --cases: only\n"
          "these cases, the first one the baseline of the speed-ups (basis formats: fp64, fp32,\n"
          "fp16, bf16, int32s, int16s; preconditioners: \"Jacobi\", \"BJ fp64\", \"BJ fp16\",\n"
          "\"BJ adaptive\", \"SAI fp64\", \"SAI fp32\", \"SAI fp16\").\n"))
    return 0;
  const auto parsed = kacc_perf::parse_options_or_report(argc, argv, "kacc-perf-gmres");
  if (!parsed) return 2;
  const kacc_perf::options& opts = *parsed;
  const bool quick = opts.run_level == kacc_perf::level::quick;
  int size = quick ? 24 : 128, rounds = quick                                      ? 1
                                        : opts.run_level == kacc_perf::level::full ? 9
                                                                                   : 5;
  kso::GmresOptions options;
  bool preconditioners = false;
  std::string case_list;
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char* name) {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(name) + " needs a number");
      return std::atoi(argv[++i]);
    };
    if (!std::strcmp(argv[i], "--size")) {
      size = value("--size");
    } else if (!std::strcmp(argv[i], "--restart")) {
      options.restart = value("--restart");
    } else if (!std::strcmp(argv[i], "--rounds")) {
      rounds = value("--rounds");
    } else if (!std::strcmp(argv[i], "--preconditioners")) {
      preconditioners = true;
    } else if (!std::strcmp(argv[i], "--cases")) {
      if (i + 1 >= argc) throw std::invalid_argument("--cases needs a list of case names");
      case_list = argv[++i];
    }
  }
  Kokkos::ScopeGuard guard(argc, argv);
  const auto a = convection_diffusion_3d(size);
  const std::size_t n = static_cast<std::size_t>(a.num_rows());
  Vector ones("perf::ones", n), b("perf::b", n), x("perf::x", n);
  Kokkos::deep_copy(ones, 1.0);
  ks::spmv("N", 1.0, a, ones, 0.0, b);
  fmt::print("kacc-perf-gmres: {}^3 = {} rows, {} entries, GMRES({}), {}, {} rounds\n", size, n,
             a.nnz(), options.restart,
             preconditioners ? "fp64 basis, preconditioners on the right" : "Jacobi (right)",
             rounds);
  const auto jacobi = timed_setup<kso::Jacobi<>>("Jacobi", a);
  // A case with an fp64 basis and preconditioner P, built when the case is run.
  auto preconditioned = [&](const char* name, auto p) -> CaseMaker {
    using P = typename decltype(p)::type;
    return {name, [=, &a, &b] {
              return make_case<double>(name, a, b, timed_setup<P>(name, a), options);
            }};
  };
  // A case with the Jacobi preconditioner and the basis in format F.
  auto basis = [&](const char* name, auto f) -> CaseMaker {
    using F = typename decltype(f)::type;
    return {name, [=, &a, &b, &jacobi] { return make_case<F>(name, a, b, jacobi, options); }};
  };
  std::vector<CaseMaker> makers;
  if (preconditioners) {
    makers = {{"Jacobi", [&] { return make_case<double>("Jacobi", a, b, jacobi, options); }},
              preconditioned("BJ fp64", type_tag<kso::BlockJacobi<>>{}),
              preconditioned("BJ fp16", type_tag<kso::BlockJacobi<kacc::fp16>>{}),
              preconditioned("BJ adaptive", type_tag<kso::AdaptiveBlockJacobi<>>{}),
              preconditioned("SAI fp64", type_tag<kso::Sai<>>{}),
              preconditioned("SAI fp32", type_tag<kso::Sai<float>>{}),
              preconditioned("SAI fp16", type_tag<kso::Sai<kacc::fp16>>{})};
  } else {
    makers = {basis("fp64", type_tag<double>{}),
              basis("fp32", type_tag<float>{}),
              basis("fp16", type_tag<kacc::fp16>{}),
              basis("bf16", type_tag<kacc::bf16>{}),
              basis("int32s", type_tag<kacc::scaled<std::int32_t>>{}),
              basis("int16s", type_tag<kacc::scaled<std::int16_t>>{})};
  }
  std::vector<Case> cases;
  try {
    cases = selected_cases(makers, case_list);
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "kacc-perf-gmres: {}\n", e.what());
    return 2;
  }
  std::vector<std::string> names;
  for (const auto& c : cases) names.push_back(c.name);
  std::map<std::string, std::vector<double>> times;
  std::map<std::string, kso::SolverStatus> last;
  std::ostringstream csv;
  csv << "case,round,rows,nnz,restart,basis_bytes,iterations,restarts,converged,reason,residual,"
         "time_s\n";
  std::mt19937 shuffle(12345);
  for (int round = 0; round < rounds; ++round) {
    std::shuffle(cases.begin(), cases.end(), shuffle);
    for (const auto& c : cases) {
      Kokkos::deep_copy(x, 0.0);
      Kokkos::fence();
      const auto t0 = std::chrono::steady_clock::now();
      const auto s = c.solve(x);
      Kokkos::fence();
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      times[c.name].push_back(t);
      last[c.name] = s;
      csv << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.3e},{:.6f}\n", c.name, round, n, a.nnz(),
                         options.restart, c.basis_bytes, s.iterations, s.restarts,
                         s.converged ? "yes" : "no", kso::reason_name(s.reason), s.residual, t);
    }
  }
  const double t64 = kacc_perf::median(times[names.front()]);
  const double it64 = last[names.front()].iterations;
  fmt::print("{:<12} {:>10} {:>9} {:>12} {:>12} {:>14} {:>10} {:>12}\n",
             preconditioners ? "case" : "basis", "iterations", "restarts", "median s", "min s",
             "median s/iter", "speed-up", "per-iter x");
  for (const auto& f : names) {
    const auto& s = last[f];
    const double med = kacc_perf::median(times[f]);
    const double per = med / std::max(1, s.iterations);
    fmt::print("{:<12} {:>10} {:>9} {:>12.4f} {:>12.4f} {:>14.3e} {:>10.2f} {:>12.2f}{}\n", f,
               s.iterations, s.restarts, med, *std::min_element(times[f].begin(), times[f].end()),
               per, t64 / med, (t64 / it64) / per, s.converged ? "" : "  (not converged)");
  }
  // The targets of the cases that ran; a case that did not converge has no time to
  // solution, so a target that needs it is MISSING.
  auto ran = [&](const std::string& name) { return last.count(name) > 0; };
  auto solved = [&](const std::string& name) { return ran(name) && last[name].converged; };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto time_of = [&](const std::string& name) {
    return solved(name) ? kacc_perf::median(times[name]) : nan;
  };
  auto iterations_of = [&](const std::string& name) {
    return solved(name) ? double(last[name].iterations) : nan;
  };
  const std::string where =
      fmt::format("{}^3 rows, GMRES({}), {} rounds, medians", size, options.restart, rounds);
  std::vector<kacc_perf::target> targets;
  if (!preconditioners && ran("fp64")) {
    if (ran("fp32")) {
      targets.push_back({"fp32 basis: time to solution, speed-up over fp64",
                         time_of("fp64") / time_of("fp32"), 1.3, true, where});
      targets.push_back({"fp32 basis: iterations / fp64's",
                         iterations_of("fp32") / iterations_of("fp64"), 1.10, false, where});
    }
    double best = nan, worst_iterations = nan;
    bool any = false;
    for (const std::string f : {"fp16", "bf16", "int16s"}) {
      if (!ran(f)) continue;
      any = true;
      if (!solved(f)) continue;
      const double speedup = time_of("fp64") / time_of(f);
      const double iterations = iterations_of(f) / iterations_of("fp64");
      best = std::isnan(best) ? speedup : std::max(best, speedup);
      worst_iterations =
          std::isnan(worst_iterations) ? iterations : std::max(worst_iterations, iterations);
    }
    if (any) {
      targets.push_back(
          {"best 16-bit basis (fp16, bf16, int16s): speed-up over fp64", best, 1.5, true, where});
      targets.push_back({"16-bit bases that converge: most iterations / fp64's", worst_iterations,
                         1.25, false, where});
    }
  }
  if (preconditioners && ran("BJ fp64") && ran("BJ fp16")) {
    targets.push_back({"block-Jacobi fp16: time per iteration / fp64 blocks'",
                       (time_of("BJ fp16") / iterations_of("BJ fp16")) /
                           (time_of("BJ fp64") / iterations_of("BJ fp64")),
                       1.0, false, where});
    targets.push_back({"block-Jacobi fp16: iterations / fp64 blocks'",
                       iterations_of("BJ fp16") / iterations_of("BJ fp64"), 1.10, false, where});
  }
  std::string summary = kacc_perf::summary_csv_header;
  if (!targets.empty()) fmt::print("targets:\n");
  for (const auto& t : targets) {
    summary += kacc_perf::summary_csv_row(t);
    kacc_perf::print_target(t, 58);
  }
  kacc_perf::write_file(opts.out_dir + "/gmres.csv", csv.str());
  kacc_perf::write_file(opts.out_dir + "/gmres_summary.csv", summary);
  kacc_perf::write_file(
      opts.out_dir + "/gmres.json",
      kacc_perf::run_json("kacc-perf-gmres",
                          {{"size", std::to_string(size)},
                           {"rounds", std::to_string(rounds)},
                           {"restart", std::to_string(options.restart)},
                           {"cases", preconditioners ? "preconditioners" : "basis formats"}}));
  return 0;
}
