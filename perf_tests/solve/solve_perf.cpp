// kacc-perf-solve: kacc::solve::gesv_ir against LAPACK's dgesv and dsgesv (OpenBLAS, on
// as many threads as Kokkos, on the same CPUs), and kacc::blas::gemm against dgemm, each
// variant run in turn within every repetition (interleaved; each size's first system runs one
// untimed round first, and the engines are kept between calls), for matrices of prescribed
// condition number: U diag(sigma) V^T with U, V the Q factors of Gaussian matrices
// (LAPACK dgeqrf/dorgqr, one pair per size) and sigma from 1 to 1/kappa, distributed as in
// seed 004's Table 2: geometric (its types 7/8: a fixed fraction of the spectrum lies below
// fp32's precision, so GMRES-IR's iterations grow with n), arithmetic (type 6, its Figure
// 11: only the last few sigma are small) or clustered (type 4: all 1 but the last).
//
//   kacc-perf-solve [--quick|--full] [--out DIR] [--sizes=N,...] [--kappas=K,...]
//                   [--sigma=geometric,arithmetic,clustered] [--reps=R] [--gemm-sizes=N,...]
//                   [--no-gemm] [--no-solve] [--variants=WORD,...] [--nrhs=K]
//
// Levels (sizes / gemm sizes / repetitions): --quick 256 / 256 / 1, default 4096 / 4096 / 1,
// --full 2048,4096,8192 / 4096,8192 / 3; kappas 1e2,1e6,1e8,1e12 and spectra geometric and
// arithmetic at every level; GEMM runs at least 3 repetitions. --variants runs only the gesv_ir
// variants whose names contain one of the words (dgesv and dsgesv always run; "unpolished" runs
// only when named). --nrhs=K solves K right-hand sides per system (default 1): dgesv and
// dsgesv with NRHS = K, gesv_ir with rank-2 B and X; a gesv_ir variant counts as converged
// when every column did, its steps are the most of any column, its GMRES iterations the sum,
// and every backward error is the worst column's.
//
// Prints one line per (n, kappa, spectrum, variant): median seconds, ratios to dgesv and
// dsgesv, refinement steps (GMRES iterations), backward error ||b - A x|| / (||A|| ||x|| +
// ||b||) (inf-norms, fp64 residual; NaN when x is not finite) and how the solve ended, as
// the solver reported it. Writes solve_speed.csv, solve_gemm.csv, solve_summary.csv (the
// targets of issue 17, judged at the largest size) and solve.json into --out.
#include <kacc/blas/gemm.hpp>
#include <kacc/solve.hpp>

#include <kacc_perf/run_info.hpp>
#include <kacc_perf/stream.hpp>
#include <kacc_perf/targets.hpp>

#include "../blas/openblas_threads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" {
void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b,
            const int* ldb, int* info);
void dsgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, const double* b,
             const int* ldb, double* x, const int* ldx, double* work, float* swork, int* iter,
             int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
}

namespace {

using Host = Kokkos::DefaultHostExecutionSpace;
using Matrix = Kokkos::View<double**, Kokkos::LayoutLeft, Host::memory_space>;
using Vector = Kokkos::View<double*, Host::memory_space>;

/// gesv_ir's engine on OpenBLAS's LAPACK: sgetrf for fp32 factors, dgetrf/dgetrs for fp64;
/// other formats are refused (factor returns -1, which gesv_ir reports as a failed
/// factorisation). The fp32 factors are applied by kacc::lapack::getrs in fp64 arithmetic
/// (the same bytes as sgetrs): GMRES-IR needs its preconditioner applied in the working
/// precision, and with sgetrs' fp32 arithmetic it stagnated from kappa = 1e12 at n = 2048.
struct openblas_lu {
  using Factors32 =
      kacc::View<double**, Kokkos::LayoutLeft, Host::memory_space, kacc::StoredAs<float>>;
  using Pivots = Kokkos::View<int*, Host::memory_space, Kokkos::MemoryUnmanaged>;
  std::vector<double> f64;
  std::vector<float> f32;
  std::vector<int> ipiv;
  kacc::solve::factor_format format = kacc::solve::factor_format::fp64;
  int n = 0;

  kacc::index_type factor(const Host&, const Matrix& S, kacc::solve::factor_format f) {
    n = static_cast<int>(S.extent(0));
    format = f;
    ipiv.resize(n);
    int info = -1;
    if (f == kacc::solve::factor_format::fp64) {
      f64.assign(S.data(), S.data() + S.size());
      dgetrf_(&n, &n, f64.data(), &n, ipiv.data(), &info);
    } else if (f == kacc::solve::factor_format::fp32) {
      f32.assign(S.data(), S.data() + S.size());
      sgetrf_(&n, &n, f32.data(), &n, ipiv.data(), &info);
    }
    return info;
  }
  void solve(const Host& exec, const Vector& v) { solve_in_place(exec, v); }
  /// Several columns at once (gesv_ir refines several right-hand sides together).
  void solve(const Host& exec, const Matrix& v) { solve_in_place(exec, v); }
  template <class V>
  void solve_in_place(const Host& exec, const V& v) {
    if (format == kacc::solve::factor_format::fp64) {
      const int nrhs = V::rank == 1 ? 1 : static_cast<int>(v.extent(1));
      int info;
      dgetrs_("N", &n, &nrhs, f64.data(), &n, ipiv.data(), v.data(), &n, &info);
    } else {
      const Factors32 lu(
          Kokkos::View<float**, Kokkos::LayoutLeft, Host::memory_space, Kokkos::MemoryUnmanaged>(
              f32.data(), n, n));
      kacc::lapack::getrs<double>(exec, lu, Pivots(ipiv.data(), n), v);
    }
  }
};

/// The numbers of a comma-separated list.
std::vector<double> list(const std::string& arg) {
  std::vector<double> out;
  std::size_t at = 0;
  while (at < arg.size()) {
    const std::size_t comma = arg.find(',', at);
    out.push_back(std::atof(arg.substr(at, comma - at).c_str()));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

/// Q factor of an n x n Gaussian matrix (column-major).
std::vector<double> random_orthogonal(int n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> g;
  std::vector<double> q(std::size_t(n) * n), tau(n);
  for (auto& e : q) e = g(gen);
  int info, lwork = -1;
  double query;
  dgeqrf_(&n, &n, q.data(), &n, tau.data(), &query, &lwork, &info);
  lwork = static_cast<int>(query);
  std::vector<double> work(lwork);
  dgeqrf_(&n, &n, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  dorgqr_(&n, &n, &n, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  return q;
}

/// How the singular values fall from 1 to 1/kappa.
enum class spectrum { geometric, arithmetic, clustered };

/// sigma_j, j = 0 ... n - 1, from 1 (j = 0) to 1/kappa (j = n - 1).
double singular_value(spectrum d, int j, int n, double kappa) {
  if (n == 1) return 1.0;
  const double t = double(j) / (n - 1);
  switch (d) {
    case spectrum::arithmetic:
      return 1 - t * (1 - 1 / kappa);
    case spectrum::clustered:
      return j == n - 1 ? 1 / kappa : 1.0;
    case spectrum::geometric:
      break;
  }
  return std::pow(kappa, -t);
}

const char* spectrum_name(spectrum d) {
  return d == spectrum::geometric    ? "geometric"
         : d == spectrum::arithmetic ? "arithmetic"
                                     : "clustered";
}

/// The orthogonal factors of one size, shared by its condition numbers and spectra.
struct orthogonal_pair {
  explicit orthogonal_pair(int n) : u(random_orthogonal(n, 1)), v(random_orthogonal(n, 2)) {}
  std::vector<double> u, v;
};

/// U diag(sigma) V^T, column-major.
std::vector<double> conditioned(int n, const orthogonal_pair& q, double kappa, spectrum d) {
  std::vector<double> us(q.u);
  for (int j = 0; j < n; ++j) {
    const double s = singular_value(d, j, n, kappa);
    for (int i = 0; i < n; ++i) us[std::size_t(j) * n + i] *= s;
  }
  std::vector<double> a(std::size_t(n) * n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, us.data(), n, q.v.data(), n,
              0.0, a.data(), n);
  return a;
}

/// ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf), residual in fp64.
double backward_error(int n, const double* a, const double* b, const double* x) {
  std::vector<double> r(b, b + n);
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, -1.0, a, n, x, 1, 1.0, r.data(), 1);
  double rn = 0, an = 0, xn = 0, bn = 0;
  std::vector<double> rows(n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) rows[i] += std::fabs(a[std::size_t(j) * n + i]);
  for (int i = 0; i < n; ++i) {
    // A NaN or inf in x or the residual is no solution: NaN, never a small number.
    if (!std::isfinite(r[i]) || !std::isfinite(x[i])) return std::nan("");
    rn = std::max(rn, std::fabs(r[i]));
    an = std::max(an, rows[i]);
    xn = std::max(xn, std::fabs(x[i]));
    bn = std::max(bn, std::fabs(b[i]));
  }
  return rn / (an * xn + bn);
}

/// The worst backward_error of the k columns of B and X (n x k, column-major); NaN when
/// one is NaN.
double backward_error(int n, int k, const std::vector<double>& a, const std::vector<double>& b,
                      const double* x) {
  double worst = 0;
  for (int j = 0; j < k; ++j) {
    const std::size_t at = std::size_t(j) * n;
    const double e = backward_error(n, a.data(), b.data() + at, x + at);
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

/// How one call of a variant ended, as the solver itself reported it.
struct ending {
  std::string outcome;  // converged, fell_back, ... (gesv_ir); direct or failed (dgesv)
  std::string reason;   // gesv_ir's reason; dsgesv's from its ITER; dgesv's INFO
  int outer = 0;        // refinement steps (dsgesv: its ITER when positive)
  int inner = 0;        // GMRES iterations
  double backward_error = std::nan("");
};

struct variant {
  variant(std::string n, std::string e, std::string f, std::string m, std::function<ending()> r,
          std::function<double()> be = nullptr)
      : name(std::move(n)),
        engine(std::move(e)),
        factors(std::move(f)),
        refinement(std::move(m)),
        run(std::move(r)),
        backward_error(std::move(be)) {}
  std::string name;
  std::string engine, factors, refinement;  // for the CSV ("-" where it does not apply)
  std::function<ending()> run;              // one timed call
  std::function<double()> backward_error;   // of the last call's solution, not timed
  ending last;
  std::vector<double> seconds;
};

/// Runs every variant once per repetition, in turn, and keeps the times; each solution's
/// backward error is computed after its call is timed (a residual and row sums per column:
/// about 14 ms at n = 4096, which the timed calls included before).
void interleave(std::vector<variant>& vs, int reps) {
  for (int r = 0; r < reps; ++r)
    for (auto& v : vs) {
      const auto t0 = std::chrono::steady_clock::now();
      v.last = v.run();
      v.seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (v.backward_error) v.last.backward_error = v.backward_error();
    }
}

/// Whether a gesv_ir variant runs: its name contains one of the comma-separated words of
/// filter; with no filter every variant but the unpolished ablation runs.
bool selected(const std::string& filter, const std::string& name) {
  if (filter.empty()) return name.find("unpolished") == std::string::npos;
  std::size_t at = 0;
  while (at <= filter.size()) {
    const std::size_t comma = std::min(filter.find(',', at), filter.size());
    if (name.find(filter.substr(at, comma - at)) != std::string::npos) return true;
    at = comma + 1;
  }
  return false;
}

/// dsgesv's ITER < 0: why it fell back to dgesv (LAPACK's documentation of DSGESV).
std::string dsgesv_reason(int iter) {
  switch (iter) {
    case -1:
      return "not_worth_it";
    case -2:
      return "narrowing_overflow";
    case -3:
      return "factorization_failed";
    case -31:
      return "iteration_cap";
    default:
      return "iter_" + std::to_string(iter);
  }
}

/// One line of solve_speed.csv.
struct solve_row {
  int n;
  double kappa;
  spectrum sigma;
  std::string variant, engine, factors, refinement;
  double median, best, vs_dgesv, vs_dsgesv;
  ending end;
  double dgesv_backward_error;
};

/// The factorisation engines of one size, kept between its calls and cases as dsgesv's work
/// arrays are: one kacc_lu per factor format, so that alternating formats does not allocate
/// and first-touch n^2 factors inside a timed call.
struct engines {
  openblas_lu openblas;
  kacc::solve::kacc_lu<Host> fp32, fp16;
};

/// Times every variant on one system. warm_up runs each once untimed first (the first case of
/// a size: the engines' storage is then touched before any variant is timed, as dsgesv's
/// workspace is when it is allocated).
void solve_case(int n, int k, const orthogonal_pair& q, double kappa, spectrum d, int reps,
                bool warm_up, const std::string& filter, engines& e, std::vector<solve_row>& rows) {
  const auto a = conditioned(n, q, kappa, d);
  std::vector<double> b(std::size_t(n) * k);
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& e : b) e = u(gen);
  Matrix A("A", n, n);
  std::copy(a.begin(), a.end(), A.data());
  // B and X as vectors for one right-hand side (gesv_ir's rank-1 call), as n x k matrices
  // for several; the same memory.
  Matrix Bs("B", n, k), Xs("X", n, k);
  std::copy(b.begin(), b.end(), Bs.data());
  const Vector B = Kokkos::subview(Bs, Kokkos::ALL(), 0), X = Kokkos::subview(Xs, Kokkos::ALL(), 0);
  std::vector<double> work(a), x(b.size()), dwork(b.size(), 0.0), rhs(b);
  std::vector<float> swork(std::size_t(n) * (n + k));
  std::vector<int> ipiv(n);
  std::vector<variant> vs;
  vs.push_back(
      {"dgesv", "lapack", "fp64", "none",
       [&, n, k] {
         work = a;
         rhs = b;
         int info;
         dgesv_(&n, &k, work.data(), &n, ipiv.data(), rhs.data(), &n, &info);
         return ending{info == 0 ? "direct" : "failed", "info_" + std::to_string(info), 0, 0};
       },
       [&, n, k] { return backward_error(n, k, a, b, rhs.data()); }});
  vs.push_back({"dsgesv", "lapack", "fp32", "classic",
                [&, n, k] {
                  work = a;
                  int iter, info;
                  dsgesv_(&n, &k, work.data(), &n, ipiv.data(), b.data(), &n, x.data(), &n,
                          dwork.data(), swork.data(), &iter, &info);
                  if (info != 0) return ending{"failed", "info_" + std::to_string(info), 0, 0};
                  if (iter < 0) return ending{"fell_back", dsgesv_reason(iter), 0, 0};
                  return ending{"converged", "none", iter, 0};
                },
                [&, n, k] { return backward_error(n, k, a, b, x.data()); }});
  struct ir_case {
    const char* name;
    kacc::solve::factor_format f;
    kacc::solve::refinement m;
    const char* factors;
    const char* method;
    bool openblas;
    bool polish;
  };
  using kacc::solve::factor_format;
  using kacc::solve::refinement;
  const ir_case cases[] = {{"ir fp32 classic kacc-lu", factor_format::fp32, refinement::classic,
                            "fp32", "classic", false, true},
                           {"ir fp32 classic openblas", factor_format::fp32, refinement::classic,
                            "fp32", "classic", true, true},
                           {"ir fp32 classic openblas unpolished", factor_format::fp32,
                            refinement::classic, "fp32", "classic", true, false},
                           {"ir fp32 gmres openblas", factor_format::fp32, refinement::gmres,
                            "fp32", "gmres", true, true},
                           {"ir fp32 gmres kacc-lu", factor_format::fp32, refinement::gmres, "fp32",
                            "gmres", false, true},
                           {"ir fp16 gmres kacc-lu", factor_format::fp16, refinement::gmres, "fp16",
                            "gmres", false, true}};
  for (const auto& c : cases) {
    if (!selected(filter, c.name)) continue;
    kacc::solve::ir_options o;
    o.factors = c.f;
    o.method = c.m;
    o.polish = c.polish;
    auto run = [&, o, c](const auto& b_view, const auto& x_view) {
      return c.openblas ? kacc::solve::gesv_ir(Host(), A, b_view, x_view, o, e.openblas)
             : c.f == kacc::solve::factor_format::fp16
                 ? kacc::solve::gesv_ir(Host(), A, b_view, x_view, o, e.fp16)
                 : kacc::solve::gesv_ir(Host(), A, b_view, x_view, o, e.fp32);
    };
    vs.push_back({c.name, c.openblas ? "openblas" : "kacc_lu", c.factors, c.method,
                  [&, run, k] {
                    const std::vector<kacc::solve::ir_status> statuses =
                        k == 1 ? std::vector<kacc::solve::ir_status>{run(B, X)} : run(Bs, Xs);
                    ending end{"converged", "none", 0, 0};
                    for (const auto& s : statuses) {
                      if (s.outcome != kacc::solve::ir_outcome::converged &&
                          end.outcome == "converged") {
                        end.outcome = kacc::solve::to_string(s.outcome);
                        end.reason = kacc::solve::to_string(s.reason);
                      }
                      end.outer = std::max(end.outer, s.outer_iterations);
                      end.inner += s.inner_iterations;
                    }
                    return end;
                  },
                  [&, n, k] { return backward_error(n, k, a, b, Xs.data()); }});
  }
  if (warm_up) {
    interleave(vs, 1);
    for (auto& v : vs) v.seconds.clear();
  }
  interleave(vs, reps);
  const double dgesv = kacc_perf::median(vs[0].seconds), dsgesv = kacc_perf::median(vs[1].seconds);
  for (const auto& v : vs) {
    const double t = kacc_perf::median(v.seconds);
    rows.push_back({n, kappa, d, v.name, v.engine, v.factors, v.refinement, t,
                    *std::min_element(v.seconds.begin(), v.seconds.end()), t / dgesv, t / dsgesv,
                    v.last, vs[0].last.backward_error});
    fmt::print(
        "solve n={} kappa={:.0e} {} {:<28} {:9.4f} s  x{:.3f} dgesv  x{:.3f} dsgesv  "
        "{}/{} steps {} ({}) be {:.2e}\n",
        n, kappa, spectrum_name(d), v.name, t, t / dgesv, t / dsgesv, v.last.outcome, v.last.reason,
        v.last.outer, v.last.inner, v.last.backward_error);
    std::fflush(stdout);
  }
}

/// One line of solve_gemm.csv.
struct gemm_row {
  int n;
  std::string variant;
  double median, gflops, vs_dgemm;  // vs_dgemm: GFLOP/s over dgemm's
};

void gemm_case(int n, int reps, std::vector<gemm_row>& rows) {
  using Mat64 = kacc::View<double**, Kokkos::LayoutLeft, Host::memory_space>;
  using Mat32 = kacc::View<double**, Kokkos::LayoutLeft, Host::memory_space, kacc::StoredAs<float>>;
  std::vector<double> a(std::size_t(n) * n), b(a.size()), c(a.size());
  std::mt19937_64 gen(4);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto* v : {&a, &b})
    for (auto& e : *v) e = u(gen);
  Mat64 A("A", n, n), B("B", n, n), C("C", n, n);
  Mat32 A32("A32", n, n), B32("B32", n, n);
  std::copy(a.begin(), a.end(), A.data());
  std::copy(b.begin(), b.end(), B.data());
  kacc::deep_copy(A32, A);
  kacc::deep_copy(B32, B);
  std::vector<variant> vs;
  vs.push_back({"dgemm", "openblas", "fp64", "-", [&, n] {
                  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n,
                              b.data(), n, 0.0, c.data(), n);
                  return ending{};
                }});
  vs.push_back({"kacc gemm fp64", "kacc", "fp64", "-", [&] {
                  kacc::blas::gemm("N", "N", 1.0, A, B, 0.0, C);
                  return ending{};
                }});
  vs.push_back({"kacc gemm fp32-stored", "kacc", "fp32", "-", [&] {
                  kacc::blas::gemm("N", "N", 1.0, A32, B32, 0.0, C);
                  return ending{};
                }});
  interleave(vs, reps);
  const double flops = 2.0 * n * double(n) * n;
  const double ref = kacc_perf::median(vs[0].seconds);
  for (const auto& v : vs) {
    const double t = kacc_perf::median(v.seconds);
    rows.push_back({n, v.name, t, flops / t / 1e9, ref / t});
    fmt::print("gemm n={} {:<22} {:9.4f} s  {:8.1f} GFLOP/s  x{:.3f} dgemm\n", n, v.name, t,
               flops / t / 1e9, ref / t);
  }
}

using kacc_perf::csv_number;
using kacc_perf::target;

const solve_row* find_row(const std::vector<solve_row>& rows, int n, double kappa, spectrum d,
                          const std::string& variant) {
  for (const auto& r : rows)
    if (r.n == n && r.kappa == kappa && r.sigma == d && r.variant == variant) return &r;
  return nullptr;
}

/// The targets, judged at the largest size of the run (the issue states them at n = 8192).
std::vector<target> targets(const std::vector<solve_row>& rows, const std::vector<gemm_row>& gemm,
                            const std::vector<double>& kappas,
                            const std::vector<spectrum>& spectra) {
  const double nan = std::nan("");
  std::vector<target> out;
  int n = 0;
  for (const auto& r : rows) n = std::max(n, r.n);
  // The worst ratio of a variant over the kappas of a range (NaN when one is not measured).
  auto worst = [&](const std::string& variant, double lo, double hi, spectrum d, bool dsgesv) {
    double w = nan;
    for (double k : kappas) {
      if (k < lo || k > hi) continue;
      const solve_row* r = find_row(rows, n, k, d, variant);
      if (!r) return nan;
      const double v = dsgesv ? r->vs_dsgesv : r->vs_dgesv;
      w = std::isnan(w) ? v : std::max(w, v);
    }
    return w;
  };
  // The largest kappa up to which every kappa of the run converged (0 when the first did not).
  auto reach = [&](const std::string& variant, spectrum d) {
    double reached = 0;
    for (double k : kappas) {
      const solve_row* r = find_row(rows, n, k, d, variant);
      if (!r) return nan;
      if (r->end.outcome != "converged") break;
      reached = k;
    }
    return reached;
  };
  const std::string at = fmt::format("n = {}", n);
  for (spectrum d : spectra) {
    const std::string sd = spectrum_name(d);
    out.push_back({fmt::format("gesv_ir fp32 classic (OpenBLAS engine) time / dgesv, worst of "
                               "kappa <= 1e6, {} sigma, {}",
                               sd, at),
                   worst("ir fp32 classic openblas", 0, 1e6, d, false), 0.65, false,
                   "issue 17 states it at n = 8192"});
    out.push_back({fmt::format("gesv_ir fp32 classic (OpenBLAS engine) time / dsgesv, worst of "
                               "kappa <= 1e6, {} sigma, {}",
                               sd, at),
                   worst("ir fp32 classic openblas", 0, 1e6, d, true), 1.05, false,
                   "never more than 5% slower than dsgesv"});
    out.push_back({fmt::format("GMRES-IR fp32 (OpenBLAS engine) time / dgesv, worst of kappa "
                               "1e8..1e12, {} sigma, {}",
                               sd, at),
                   worst("ir fp32 gmres openblas", 1e8, 1e12, d, false), 0.8, false,
                   "where dsgesv falls back to dgesv"});
    out.push_back({fmt::format("classic IR, fp32 factors (kacc LU): converged up to kappa, {} "
                               "sigma, {}",
                               sd, at),
                   reach("ir fp32 classic kacc-lu", d), 1e6, true, "no fallback"});
    out.push_back(
        {fmt::format("GMRES-IR, fp32 factors (kacc LU): converged up to kappa, {} sigma, {}", sd,
                     at),
         reach("ir fp32 gmres kacc-lu", d), 1e12, true, "no fallback"});
    out.push_back({fmt::format("GMRES-IR, scaled fp16 factors (kacc LU): converged up to kappa, "
                               "{} sigma, {}",
                               sd, at),
                   reach("ir fp16 gmres kacc-lu", d), 1e6, true, "no fallback"});
  }
  // Every converged gesv_ir solve of the run, every size: backward error within 2x dgesv's.
  // The unpolished ablation stops at the tolerance on purpose, above dgesv's error.
  int converged = 0, worse = 0;
  for (const auto& r : rows) {
    if (r.engine == "lapack" || r.end.outcome != "converged" ||
        r.variant.find("unpolished") != std::string::npos)
      continue;
    ++converged;
    if (!(r.end.backward_error <= 2 * r.dgesv_backward_error)) ++worse;
  }
  out.push_back({"converged gesv_ir solves with a backward error above 2x dgesv's (or NaN)",
                 converged ? double(worse) : nan, 0, false,
                 fmt::format("of {} converged solves, every size, the unpolished ablation "
                             "left out",
                             converged)});
  int gn = 0;
  for (const auto& g : gemm) gn = std::max(gn, g.n);
  auto gflops = [&](const std::string& v) {
    for (const auto& g : gemm)
      if (g.n == gn && g.variant == v) return g.gflops;
    return nan;
  };
  const double f64 = gflops("kacc gemm fp64"), f32 = gflops("kacc gemm fp32-stored"),
               peer = gflops("dgemm");
  out.push_back({fmt::format("kacc gemm fp64 GFLOP/s / OpenBLAS dgemm, n = {}", gn), f64 / peer,
                 0.5, true, "issue 17 states it at n = 4096"});
  out.push_back({fmt::format("kacc gemm fp32-stored GFLOP/s / kacc gemm fp64, n = {}", gn),
                 f32 / f64, 1.0, true, "fp64 arithmetic on fp32 storage at least as fast"});
  return out;
}

std::string number_list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fmt::format("{:g}", v[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char* argv[]) {
  if (kacc_perf::answer_help(
          argc, argv,
          "kacc-perf-solve [--quick|--full] [--out DIR] [--sizes=N,...] [--kappas=K,...]\n"
          "                [--sigma=geometric,arithmetic,clustered] [--reps=R]\n"
          "                [--gemm-sizes=N,...] [--no-gemm] [--no-solve] [--variants=WORD,...]\n"
          "                [--nrhs=K]\n"
          "gesv_ir (kacc's LU and an OpenBLAS sgetrf engine) against OpenBLAS dgesv and dsgesv on\n"
          "matrices of prescribed condition number, and kacc gemm against dgemm; writes\n"
          "solve_speed.csv, solve_gemm.csv, solve_summary.csv and solve.json into --out (default:\n"
          "the current folder).\n"
          "  levels (sizes / gemm sizes / repetitions): --quick 256 / 256 / 1, default\n"
          "  4096 / 4096 / 1, --full 2048,4096,8192 / 4096,8192 / 3; kappas 1e2,1e6,1e8,1e12\n"
          "  and spectra geometric,arithmetic at every level (GEMM: at least 3 repetitions);\n"
          "  the options override them\n"
          "  --variants  only the gesv_ir variants whose names contain one of the words\n"
          "  --nrhs      right-hand sides per system (default 1; gesv_ir takes rank-2 B and X)\n"))
    return 0;
  const auto parsed = kacc_perf::parse_options_or_report(argc, argv, "kacc-perf-solve");
  if (!parsed) return 2;
  const kacc_perf::options& opts = *parsed;
  Kokkos::ScopeGuard guard(argc, argv);
  const bool quick = opts.run_level == kacc_perf::level::quick;
  const bool full = opts.run_level == kacc_perf::level::full;
  std::vector<double> sizes = quick  ? std::vector<double>{256}
                              : full ? std::vector<double>{2048, 4096, 8192}
                                     : std::vector<double>{4096};
  std::vector<double> gemm_sizes = quick  ? std::vector<double>{256}
                                   : full ? std::vector<double>{4096, 8192}
                                          : std::vector<double>{4096};
  std::vector<double> kappas = {1e2, 1e6, 1e8, 1e12};
  std::vector<spectrum> spectra = {spectrum::geometric, spectrum::arithmetic};
  int reps = full ? 3 : 1, nrhs = 1;
  bool gemm = true, solve = true;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* key) {
      return a.rfind(key, 0) == 0 ? a.substr(std::string(key).size()) : std::string();
    };
    if (a.rfind("--sizes=", 0) == 0) {
      sizes = list(value("--sizes="));
    } else if (a.rfind("--gemm-sizes=", 0) == 0) {
      gemm_sizes = list(value("--gemm-sizes="));
    } else if (a.rfind("--kappas=", 0) == 0) {
      kappas = list(value("--kappas="));
    } else if (a.rfind("--reps=", 0) == 0) {
      reps = std::atoi(value("--reps=").c_str());
    } else if (a.rfind("--nrhs=", 0) == 0) {
      nrhs = std::atoi(value("--nrhs=").c_str());
    } else if (a == "--no-gemm") {
      gemm = false;
    } else if (a == "--no-solve") {
      solve = false;
    } else if (a.rfind("--variants=", 0) == 0) {
      filter = value("--variants=");
    } else if (a.rfind("--sigma=", 0) == 0) {
      spectra.clear();
      const std::string words = value("--sigma=") + ",";
      for (std::size_t at = 0, comma; (comma = words.find(',', at)) != std::string::npos;
           at = comma + 1) {
        const std::string w = words.substr(at, comma - at);
        if (w == "geometric") {
          spectra.push_back(spectrum::geometric);
        } else if (w == "arithmetic") {
          spectra.push_back(spectrum::arithmetic);
        } else if (w == "clustered") {
          spectra.push_back(spectrum::clustered);
        } else {
          fmt::print(stderr, "kacc-perf-solve: --sigma: unknown spectrum '{}'\n", w);
          return 1;
        }
      }
    } else {
      fmt::print(stderr, "kacc-perf-solve: unknown argument {} (see --help)\n", a);
      return 1;
    }
  }
  const bool sizes_ok =
      std::all_of(sizes.begin(), sizes.end(), [](double n) { return n >= 1; }) &&
      std::all_of(gemm_sizes.begin(), gemm_sizes.end(), [](double n) { return n >= 1; });
  const bool kappas_ok = std::all_of(kappas.begin(), kappas.end(), [](double k) { return k >= 1; });
  if (!sizes_ok || !kappas_ok || reps < 1 || nrhs < 1 || spectra.empty()) {
    fmt::print(stderr,
               "kacc-perf-solve: sizes must be >= 1, kappas >= 1, --reps >= 1, --nrhs >= 1 and "
               "--sigma must name a spectrum\n");
    return 1;
  }
  const auto peer = kacc_perf::equalise_openblas_threads();
  fmt::print("threads: kokkos {} on CPUs {}; OpenBLAS {} on CPUs {} {}\n", peer.requested,
             peer.kokkos_cpus, peer.reported, peer.peer_cpus, peer.note);
  std::vector<solve_row> rows;
  std::vector<gemm_row> gemm_rows;
  if (gemm)
    for (double n : gemm_sizes) gemm_case(static_cast<int>(n), std::max(reps, 3), gemm_rows);
  if (solve)
    for (double nd : sizes) {
      const int n = static_cast<int>(nd);
      const orthogonal_pair q(n);
      engines e;
      bool first = true;
      for (spectrum d : spectra)
        for (double kappa : kappas) {
          solve_case(n, nrhs, q, kappa, d, reps, first, filter, e, rows);
          first = false;
        }
    }

  std::string speed =
      "n,kappa,sigma,variant,engine,factors,refinement,threads,reps,time_median_s,time_min_s,"
      "vs_dgesv,vs_dsgesv,outcome,reason,outer_iterations,inner_iterations,backward_error,"
      "dgesv_backward_error,nrhs\n";
  for (const auto& r : rows)
    speed += fmt::format(
        "{},{:g},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.n, r.kappa,
        spectrum_name(r.sigma), r.variant, r.engine, r.factors, r.refinement, peer.requested, reps,
        csv_number(r.median), csv_number(r.best), csv_number(r.vs_dgesv), csv_number(r.vs_dsgesv),
        r.end.outcome, r.end.reason, r.end.outer, r.end.inner, csv_number(r.end.backward_error),
        csv_number(r.dgesv_backward_error), nrhs);
  std::string gemm_csv = "n,variant,threads,reps,time_median_s,gflops,vs_dgemm\n";
  for (const auto& g : gemm_rows)
    gemm_csv +=
        fmt::format("{},{},{},{},{},{},{}\n", g.n, g.variant, peer.requested, std::max(reps, 3),
                    csv_number(g.median), csv_number(g.gflops), csv_number(g.vs_dgemm));
  std::string summary = kacc_perf::summary_csv_header;
  fmt::print("\nkacc-perf-solve summary (level {})\n", kacc_perf::level_name(opts.run_level));
  for (const auto& t : targets(rows, gemm_rows, kappas, spectra)) {
    summary += kacc_perf::summary_csv_row(t);
    kacc_perf::print_target(t, 96);
  }
  std::string spectra_names;
  for (spectrum d : spectra)
    spectra_names += (spectra_names.empty() ? "" : ",") + std::string(spectrum_name(d));
  try {
    kacc_perf::write_file(opts.out_dir + "/solve_speed.csv", speed);
    kacc_perf::write_file(opts.out_dir + "/solve_gemm.csv", gemm_csv);
    kacc_perf::write_file(opts.out_dir + "/solve_summary.csv", summary);
    kacc_perf::write_file(
        opts.out_dir + "/solve.json",
        kacc_perf::run_json("kacc-perf-solve",
                            {{"level", kacc_perf::level_name(opts.run_level)},
                             {"sizes", number_list(solve ? sizes : std::vector<double>{})},
                             {"gemm_sizes", number_list(gemm ? gemm_sizes : std::vector<double>{})},
                             {"kappas", number_list(kappas)},
                             {"spectra", spectra_names},
                             {"repetitions", std::to_string(reps)},
                             {"nrhs", std::to_string(nrhs)},
                             {"threads", std::to_string(peer.requested)},
                             {"openblas_threads", std::to_string(peer.reported)},
                             {"openblas_cpus", peer.peer_cpus},
                             {"openblas_equal_threads", peer.equal ? "yes" : "no"},
                             {"openblas_note", peer.note}}));
  } catch (const std::exception& e) {
    fmt::print(stderr, "kacc-perf-solve: {}\n", e.what());
    return 1;
  }
  fmt::print("wrote {}/solve_speed.csv, solve_gemm.csv, solve_summary.csv, solve.json\n",
             opts.out_dir);
  return 0;
}
