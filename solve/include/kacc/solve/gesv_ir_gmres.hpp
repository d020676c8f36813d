#pragma once
/// @file
/// The inner solver of GMRES-IR: restarted GMRES in fp64 on M^{-1} A d = M^{-1} r, where
/// M = L U are the low-precision factors (left preconditioning, as Carson and Higham).
/// Classical Gram-Schmidt applied twice (two GEMVs per pass instead of j dot products),
/// Givens rotations on the host.

#include <kacc/blas/gemv.hpp>
#include <kacc/blas/nrm2.hpp>
#include <kacc/solve/givens_least_squares.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kacc {
namespace solve {
namespace Impl {

/// v = r - w. A function of its own: nvcc refuses device lambdas in a function templated
/// on host lambda types (gmres_correction's apply_a and apply_m).
template <class Exec, class Vector, class Column>
void difference(const Exec& exec, const Vector& r, const Vector& w, const Column& v) {
  Kokkos::parallel_for(
      "kacc::solve::gmres_restart", kacc::Impl::range(exec, 0, r.extent(0)),
      KOKKOS_LAMBDA(const index_type i) { v(i) = r(i) - w(i); });
}

/// Solves A d = r approximately: GMRES on M^{-1} A d = M^{-1} r from d = 0, until the
/// preconditioned residual falls by `tolerance` or after `max_iterations` iterations,
/// restarting every `restart`. apply_a(v, w) sets w = A v; apply_m(v) sets v = M^{-1} v.
/// Returns the number of iterations (matrix products) taken.
template <class Exec, class Vector, class ApplyA, class ApplyM>
int gmres_correction(const Exec& exec, const Vector& r, const Vector& d, int restart,
                     double tolerance, int max_iterations, const ApplyA& apply_a,
                     const ApplyM& apply_m) {
  using memory_space = typename Exec::memory_space;
  const index_type n = r.extent(0);
  const int m = restart > 0 ? restart : 1;
  Kokkos::View<double**, Kokkos::LayoutLeft, memory_space> V("kacc::solve::gmres_basis", n, m + 1);
  Vector w("kacc::solve::gmres_w", n);
  Kokkos::View<double*, memory_space> h("kacc::solve::gmres_h", m + 1);
  auto h_host = Kokkos::create_mirror_view(h);
  GivensLeastSquares ls(m);
  std::vector<double> column(m + 1), y(m);
  Kokkos::deep_copy(exec, d, 0.0);
  int iterations = 0;
  double beta0 = -1;
  while (iterations < max_iterations) {
    const auto v0 = Kokkos::subview(V, Kokkos::ALL(), 0);
    if (beta0 < 0) {
      Kokkos::deep_copy(exec, v0, r);
    } else {
      apply_a(d, w);
      difference(exec, r, w, v0);
    }
    apply_m(v0);
    const double beta = blas::nrm2(exec, v0);
    if (beta0 < 0) beta0 = beta;
    if (!(beta > tolerance * beta0) || !std::isfinite(beta)) break;
    blas::scal(exec, 1.0 / beta, v0);
    ls.reset(beta);
    double estimate = beta;
    int k = 0;
    for (int j = 0; j < m && iterations < max_iterations; ++j) {
      apply_a(Kokkos::subview(V, Kokkos::ALL(), j), w);
      apply_m(w);
      const auto Vj = Kokkos::subview(V, Kokkos::ALL(), Kokkos::make_pair(0, j + 1));
      const auto hj = Kokkos::subview(h, Kokkos::make_pair(0, j + 1));
      std::fill(column.begin(), column.begin() + j + 1, 0.0);
      for (int pass = 0; pass < 2; ++pass) {
        blas::gemv(exec, "T", 1.0, Vj, w, 0.0, hj);
        blas::gemv(exec, "N", -1.0, Vj, hj, 1.0, w);
        Kokkos::deep_copy(exec, h_host, h);
        exec.fence();
        for (int i = 0; i <= j; ++i) column[i] += h_host(i);
      }
      const double hn = blas::nrm2(exec, w);
      column[j + 1] = hn;
      if (hn > 0) {
        const auto vn = Kokkos::subview(V, Kokkos::ALL(), j + 1);
        Kokkos::deep_copy(exec, vn, w);
        blas::scal(exec, 1.0 / hn, vn);
      }
      estimate = ls.add_column(j, column.data());
      ++iterations;
      k = j + 1;
      if (!(estimate > tolerance * beta0) || !(hn > 0)) break;
    }
    // d += V(:, 0:k) y with the columns whose triangle is nonsingular (a breakdown on a
    // singular preconditioned matrix leaves the others out).
    k = ls.nonsingular_columns(k);
    if (k > 0) {
      ls.solve(k, y.data());
      for (int i = 0; i < k; ++i) h_host(i) = y[i];
      Kokkos::deep_copy(exec, h, h_host);
      exec.fence();  // h_host is written again before the next copy
      const auto Vk = Kokkos::subview(V, Kokkos::ALL(), Kokkos::make_pair(0, k));
      blas::gemv(exec, "N", 1.0, Vk, Kokkos::subview(h, Kokkos::make_pair(0, k)), 1.0, d);
    }
    if (!(estimate > tolerance * beta0)) break;
  }
  exec.fence();
  return iterations;
}

}  // namespace Impl
}  // namespace solve
}  // namespace kacc
