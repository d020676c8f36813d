#pragma once
// The matrices and vectors the MPI tests share: generated grids, one rank's rows of a global
// matrix, random vectors, and the types that hold them.
#include <kacc/core/exact.hpp>
#include <kacc/mpi/distributed_csr.hpp>
#include <kacc/mpi/partition.hpp>
#include <kacc/sparse/csr_matrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mpi_testing.hpp"

namespace kacc_mpi_testing {

using Exact = kacc::exact<double>;
using Host = Kokkos::DefaultHostExecutionSpace;
using HostDevice = Host::device_type;
using HostVec = kacc::View<double*, Kokkos::HostSpace>;
using Dist = kacc::mpi::distributed_csr<double, double, HostDevice>;

// The 5-point Laplacian on an m x m grid with random off-diagonal weights, rows in grid order.
inline kacc::sparse::CooMatrix grid(std::int64_t m, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> w(0.5, 1.5);
  kacc::sparse::CooMatrix a;
  a.num_rows = a.num_cols = m * m;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t r = i * m + j;
      const auto add = [&](std::int64_t c, double v) {
        a.row.push_back(r);
        a.col.push_back(c);
        a.val.push_back(v);
      };
      if (i > 0) add(r - m, -w(gen));
      if (j > 0) add(r - 1, -w(gen));
      add(r, 4.0 + w(gen));
      if (j + 1 < m) add(r + 1, -w(gen));
      if (i + 1 < m) add(r + m, -w(gen));
    }
  return a;
}

// A symmetric positive definite 5-point matrix on an m x m grid: each edge of the grid has a
// weight in [0.5, 1.5) from a hash of its ends, the diagonal the row's weights plus 0.2.
inline kacc::sparse::CooMatrix spd_grid(std::int64_t m, std::uint64_t seed) {
  const auto weight = [&](std::int64_t r, std::int64_t c) {
    std::uint64_t z =
        seed + 0x9e3779b97f4a7c15ull *
                   static_cast<std::uint64_t>(std::min(r, c) * m * m + std::max(r, c) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return 0.5 + static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  };
  kacc::sparse::CooMatrix a;
  a.num_rows = a.num_cols = m * m;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t r = i * m + j;
      std::vector<std::int64_t> neighbours;
      if (i > 0) neighbours.push_back(r - m);
      if (j > 0) neighbours.push_back(r - 1);
      if (j + 1 < m) neighbours.push_back(r + 1);
      if (i + 1 < m) neighbours.push_back(r + m);
      double diagonal = 0.2;
      for (const auto c : neighbours) diagonal += weight(r, c);
      neighbours.push_back(r);  // entries in column order
      std::sort(neighbours.begin(), neighbours.end());
      for (const auto c : neighbours) {
        a.row.push_back(r);
        a.col.push_back(c);
        a.val.push_back(c == r ? diagonal : -weight(r, c));
      }
    }
  return a;
}

// This rank's rows of a global COO matrix (row indices made local).
inline kacc::sparse::CooMatrix rows_of(const kacc::sparse::CooMatrix& a,
                                       const kacc::mpi::row_partition& p) {
  const int r = rank_of_world();
  kacc::sparse::CooMatrix mine;
  mine.num_rows = p.local_rows(r);
  mine.num_cols = a.num_cols;
  for (std::size_t k = 0; k < a.nnz(); ++k)
    if (a.row[k] >= p.begin(r) && a.row[k] < p.end(r)) {
      mine.row.push_back(a.row[k] - p.begin(r));
      mine.col.push_back(a.col[k]);
      mine.val.push_back(a.val[k]);
    }
  return mine;
}

inline std::vector<double> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& e : v) e = std::ldexp(u(gen), static_cast<int>(gen() % 40) - 20);
  return v;
}

}  // namespace kacc_mpi_testing
