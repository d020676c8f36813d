// kacc-perf-solve: kacc::solve::gesv_ir against LAPACK's dgesv and dsgesv (OpenBLAS, on
// as many threads as Kokkos, on the same CPUs), and kacc::blas::gemm against dgemm, each
// variant run in turn within every repetition (interleaved), for matrices of prescribed
// condition number: U diag(sigma) V^T with U, V the Q factors of Gaussian matrices
// (LAPACK dgeqrf/dorgqr) and sigma from 1 to 1/kappa, distributed as in seed 004's Table 2:
// geometric (its types 7/8, the default: a fixed fraction of the spectrum lies below fp32's
// precision, so GMRES-IR's iterations grow with n), arithmetic (type 6: only the last few
// sigma are small) or clustered (type 4: all 1 but the last).
//
//   kacc-perf-solve [--sizes=2048,4096,8192] [--kappas=1e2,1e6,1e8,1e12] [--reps=3] [--no-gemm]
//                   [--no-solve] [--sigma=geometric|arithmetic|clustered] [--variants=WORD,...]
//
// --variants runs only the gesv_ir variants whose names contain one of the words (dgesv and
// dsgesv always run).
//
// Prints one line per (n, kappa, variant): median seconds, ratios to dgesv and dsgesv,
// refinement steps (GMRES iterations), backward error ||b - A x|| / (||A|| ||x|| + ||b||)
// (inf-norms, fp64 residual) and how the solve ended. gesv_ir runs with kacc's portable
// LU and with an OpenBLAS engine (sgetrf/dgetrf, fp32 and fp64 factors only).
#include <kacc/blas/gemm.hpp>
#include <kacc/solve.hpp>

#include "../blas/openblas_threads.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
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
  void solve(const Host& exec, const Vector& v) {
    if (format == kacc::solve::factor_format::fp64) {
      const int one = 1;
      int info;
      dgetrs_("N", &n, &one, f64.data(), &n, ipiv.data(), v.data(), &n, &info);
    } else {
      const Factors32 lu(
          Kokkos::View<float**, Kokkos::LayoutLeft, Host::memory_space, Kokkos::MemoryUnmanaged>(
              f32.data(), n, n));
      kacc::lapack::getrs<double>(exec, lu, Pivots(ipiv.data(), n), v);
    }
  }
};

std::vector<double> list(const std::string& arg, const std::vector<double>& fallback) {
  if (arg.empty()) return fallback;
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

const char* name(spectrum d) {
  return d == spectrum::geometric    ? "geometric"
         : d == spectrum::arithmetic ? "arithmetic"
                                     : "clustered";
}

/// U diag(sigma) V^T, column-major.
std::vector<double> conditioned(int n, double kappa, spectrum d) {
  auto u = random_orthogonal(n, 1), v = random_orthogonal(n, 2);
  for (int j = 0; j < n; ++j) {
    const double s = singular_value(d, j, n, kappa);
    for (int i = 0; i < n; ++i) u[std::size_t(j) * n + i] *= s;
  }
  std::vector<double> a(std::size_t(n) * n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, u.data(), n, v.data(), n, 0.0,
              a.data(), n);
  return a;
}

/// ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf), residual in fp64.
double backward_error(int n, const std::vector<double>& a, const std::vector<double>& b,
                      const double* x) {
  std::vector<double> r(b);
  cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, -1.0, a.data(), n, x, 1, 1.0, r.data(), 1);
  double rn = 0, an = 0, xn = 0, bn = 0;
  std::vector<double> rows(n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) rows[i] += std::fabs(a[std::size_t(j) * n + i]);
  for (int i = 0; i < n; ++i) {
    rn = std::max(rn, std::fabs(r[i]));
    an = std::max(an, rows[i]);
    xn = std::max(xn, std::fabs(x[i]));
    bn = std::max(bn, std::fabs(b[i]));
  }
  return rn / (an * xn + bn);
}

struct variant {
  variant(std::string n, std::function<void()> r) : name(std::move(n)), run(std::move(r)) {}
  std::string name;
  std::function<void()> run;  // one timed call
  std::string detail;         // of the last call
  std::vector<double> seconds;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Runs every variant once per repetition, in turn, and keeps the times.
void interleave(std::vector<variant>& vs, int reps) {
  for (int r = 0; r < reps; ++r)
    for (auto& v : vs) {
      const auto t0 = std::chrono::steady_clock::now();
      v.run();
      v.seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
}

/// Whether a gesv_ir variant runs: its name contains one of the comma-separated words of
/// --variants (all run when it is empty).
std::string variant_filter;
bool selected(const std::string& name) {
  if (variant_filter.empty()) return true;
  std::size_t at = 0;
  while (at <= variant_filter.size()) {
    const std::size_t comma = std::min(variant_filter.find(',', at), variant_filter.size());
    if (name.find(variant_filter.substr(at, comma - at)) != std::string::npos) return true;
    at = comma + 1;
  }
  return false;
}

void solve_case(int n, double kappa, spectrum d, int reps) {
  const auto a = conditioned(n, kappa, d);
  std::vector<double> b(n);
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& e : b) e = u(gen);
  Matrix A("A", n, n);
  std::copy(a.begin(), a.end(), A.data());
  Vector B("b", n), X("x", n);
  std::copy(b.begin(), b.end(), B.data());
  std::vector<double> work(a), x(n), dwork(n, 0.0), rhs(b);
  std::vector<float> swork(std::size_t(n) * (n + 1));
  std::vector<int> ipiv(n);
  // The engines' workspaces kept between calls, as dsgesv's work and swork are.
  openblas_lu engine;
  kacc::solve::kacc_lu<Host> portable;
  std::vector<variant> vs;
  vs.push_back({"dgesv", [&, n] {
                  work = a;
                  rhs = b;
                  int info, one = 1;
                  dgesv_(&n, &one, work.data(), &n, ipiv.data(), rhs.data(), &n, &info);
                  char s[160];
                  std::snprintf(s, sizeof s, "info %d be %.2e", info,
                                backward_error(n, a, b, rhs.data()));
                  vs[0].detail = s;
                }});
  vs.push_back({"dsgesv", [&, n] {
                  work = a;
                  int iter, info, one = 1;
                  dsgesv_(&n, &one, work.data(), &n, ipiv.data(), b.data(), &n, x.data(), &n,
                          dwork.data(), swork.data(), &iter, &info);
                  char s[160];
                  std::snprintf(s, sizeof s, "iter %d info %d be %.2e", iter, info,
                                backward_error(n, a, b, x.data()));
                  vs[1].detail = s;
                }});
  struct ir_case {
    const char* name;
    kacc::solve::factor_format f;
    kacc::solve::refinement m;
    bool openblas;
    bool polish;
  };
  using kacc::solve::factor_format;
  using kacc::solve::refinement;
  const ir_case cases[] = {
      {"ir fp32 classic kacc-lu", factor_format::fp32, refinement::classic, false, true},
      {"ir fp32 classic openblas", factor_format::fp32, refinement::classic, true, true},
      {"ir fp32 classic openblas unpolished", factor_format::fp32, refinement::classic, true,
       false},
      {"ir fp32 gmres openblas", factor_format::fp32, refinement::gmres, true, true},
      {"ir fp16 gmres kacc-lu", factor_format::fp16, refinement::gmres, false, true}};
  for (const auto& c : cases) {
    if (!selected(c.name)) continue;
    const std::size_t at = vs.size();
    vs.push_back({c.name, [&, c, at] {
                    kacc::solve::ir_options o;
                    o.factors = c.f;
                    o.method = c.m;
                    o.polish = c.polish;
                    kacc::solve::ir_status s;
                    if (c.openblas) {
                      s = kacc::solve::gesv_ir(Host(), A, B, X, o, engine);
                    } else {
                      s = kacc::solve::gesv_ir(Host(), A, B, X, o, portable);
                    }
                    char t[200];
                    std::snprintf(t, sizeof t, "%s/%s steps %d (%d) be %.2e",
                                  kacc::solve::to_string(s.outcome),
                                  kacc::solve::to_string(s.reason), s.outer_iterations,
                                  s.inner_iterations, backward_error(n, a, b, X.data()));
                    vs[at].detail = t;
                  }});
  }
  interleave(vs, reps);
  const double dgesv = median(vs[0].seconds), dsgesv = median(vs[1].seconds);
  for (const auto& v : vs)
    std::printf("solve n=%d kappa=%.0e %s %-36s %9.4f s  x%.3f dgesv  x%.3f dsgesv  %s\n", n, kappa,
                name(d), v.name.c_str(), median(v.seconds), median(v.seconds) / dgesv,
                median(v.seconds) / dsgesv, v.detail.c_str());
}

void gemm_case(int n, int reps) {
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
  vs.push_back({"dgemm", [&, n] {
                  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n,
                              b.data(), n, 0.0, c.data(), n);
                }});
  vs.push_back({"kacc gemm fp64", [&] { kacc::blas::gemm("N", "N", 1.0, A, B, 0.0, C); }});
  vs.push_back(
      {"kacc gemm fp32-stored", [&] { kacc::blas::gemm("N", "N", 1.0, A32, B32, 0.0, C); }});
  interleave(vs, reps);
  const double flops = 2.0 * n * double(n) * n;
  const double ref = median(vs[0].seconds);
  for (const auto& v : vs)
    std::printf("gemm n=%d %-22s %9.4f s  %8.1f GFLOP/s  x%.3f dgemm\n", n, v.name.c_str(),
                median(v.seconds), flops / median(v.seconds) / 1e9, ref / median(v.seconds));
}

}  // namespace

const char usage[] =
    "kacc-perf-solve [--sizes=2048,4096,8192] [--kappas=1e2,1e6,1e8,1e12] [--reps=3] "
    "[--no-gemm] [--no-solve]\n  [--sigma=geometric|arithmetic|clustered] "
    "[--variants=openblas,fp16,...]\n  Kokkos' options (threads, ...): see --kokkos-help\n";

int main(int argc, char* argv[]) {
  bool kokkos_help = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help") {
      std::printf("%s", usage);
      return 0;
    }
    kokkos_help = kokkos_help || std::string(argv[i]) == "--kokkos-help";
  }
  Kokkos::ScopeGuard guard(argc, argv);
  if (kokkos_help) return 0;  // Kokkos has printed its options (and removed the flag)
  std::string sizes, kappas;
  int reps = 3;
  bool gemm = true, solve = true;
  spectrum sigma = spectrum::geometric;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--sizes=", 0) == 0) {
      sizes = a.substr(8);
    } else if (a.rfind("--kappas=", 0) == 0) {
      kappas = a.substr(9);
    } else if (a.rfind("--reps=", 0) == 0) {
      reps = std::atoi(a.c_str() + 7);
    } else if (a == "--no-gemm") {
      gemm = false;
    } else if (a == "--no-solve") {
      solve = false;
    } else if (a.rfind("--variants=", 0) == 0) {
      variant_filter = a.substr(11);
    } else if (a == "--sigma=geometric") {
      sigma = spectrum::geometric;
    } else if (a == "--sigma=arithmetic") {
      sigma = spectrum::arithmetic;
    } else if (a == "--sigma=clustered") {
      sigma = spectrum::clustered;
    } else {
      std::printf("unknown argument %s\nusage: %s", a.c_str(), usage);
      return 1;
    }
  }
  const auto peer = kacc_perf::equalise_openblas_threads();
  std::printf("threads: kokkos %d on CPUs %s; OpenBLAS %d on CPUs %s %s\n", peer.requested,
              peer.kokkos_cpus.c_str(), peer.reported, peer.peer_cpus.c_str(), peer.note.c_str());
  for (double n : list(sizes, {2048, 4096, 8192})) {
    if (gemm) gemm_case(static_cast<int>(n), reps);
    if (!solve) continue;
    for (double kappa : list(kappas, {1e2, 1e6, 1e8, 1e12}))
      solve_case(static_cast<int>(n), kappa, sigma, reps);
  }
  return 0;
}
