#pragma once
/// @file
/// The small dense part of GMRES, shared by kacc::solve::gmres and GMRES-IR's inner solver
/// (kacc::solve::gesv_ir): the (m + 1) x m Hessenberg matrix reduced to upper triangular
/// form by Givens rotations as its columns arrive, and the rotated right-hand side
/// beta e_1. Host code in fp64.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace kacc {
namespace solve {
namespace Impl {

/// min_y || beta e_1 - H y || for the Hessenberg matrix H of one GMRES cycle, built up one
/// column at a time; the residual norm of the problem so far comes with each column.
class GivensLeastSquares {
 public:
  /// Room for m columns (m >= 1).
  explicit GivensLeastSquares(int m)
      : m_(m), h_(static_cast<std::size_t>(m + 1) * m), c_(m), s_(m), g_(m + 1) {}

  /// Starts a cycle whose initial residual has norm beta.
  void reset(double beta) {
    std::fill(g_.begin(), g_.end(), 0.0);
    g_[0] = beta;
  }

  /// Column j of the Hessenberg matrix (j + 2 entries): rotates it, adds the rotation that
  /// zeroes its last entry, and returns |g(j + 1)|, the residual norm of the
  /// least-squares problem after j + 1 steps.
  double add_column(int j, const double* column) {
    double* hj = &h(0, j);
    for (int i = 0; i <= j + 1; ++i) hj[i] = column[i];
    for (int i = 0; i < j; ++i) {
      const double t = c_[i] * hj[i] + s_[i] * hj[i + 1];
      hj[i + 1] = -s_[i] * hj[i] + c_[i] * hj[i + 1];
      hj[i] = t;
    }
    // A column that rotates to zero gains nothing: the swap (c = 0, s = 1) carries the
    // residual g(j) on to g(j + 1), where the identity would report a residual of zero.
    const double d = std::hypot(hj[j], hj[j + 1]);
    c_[j] = d > 0 ? hj[j] / d : 0.0;
    s_[j] = d > 0 ? hj[j + 1] / d : 1.0;
    hj[j] = d;
    hj[j + 1] = 0;
    g_[j + 1] = -s_[j] * g_[j];
    g_[j] = c_[j] * g_[j];
    return std::fabs(g_[j + 1]);
  }

  /// The leading columns (at most k) whose triangular part is nonsingular: diagonal
  /// entries at most 1e-14 times the largest stop the count, since dividing by them would
  /// turn rounding noise into a step.
  int nonsingular_columns(int k) const {
    double largest = 0;
    for (int j = 0; j < k; ++j)
      for (int i = 0; i <= j; ++i) largest = std::fmax(largest, std::fabs(h(i, j)));
    for (int j = 0; j < k; ++j)
      if (!(std::fabs(h(j, j)) > 1e-14 * largest)) return j;
    return k;
  }

  /// y(0..k-1) solving R y = g by back substitution, for k at most nonsingular_columns.
  void solve(int k, double* y) const {
    for (int i = k - 1; i >= 0; --i) {
      double s = g_[i];
      for (int j = i + 1; j < k; ++j) s -= h(i, j) * y[j];
      y[i] = s / h(i, i);
    }
  }

 private:
  double& h(int i, int j) { return h_[static_cast<std::size_t>(j) * (m_ + 1) + i]; }
  double h(int i, int j) const { return h_[static_cast<std::size_t>(j) * (m_ + 1) + i]; }
  int m_;                      ///< the most columns
  std::vector<double> h_;      ///< the rotated columns, (m + 1) x m, column-major
  std::vector<double> c_, s_;  ///< the rotations' cosines and sines
  std::vector<double> g_;      ///< the rotated right-hand side
};

}  // namespace Impl
}  // namespace solve
}  // namespace kacc
