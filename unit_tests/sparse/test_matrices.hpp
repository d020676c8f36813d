#pragma once
// The SuiteSparse matrices kept in the repository (sparse/data/matrices) and their facts
// as stated in the README there, which the tests check the reader and the row statistics
// against.
#include <cstdint>
#include <string>

namespace kacc_sparse_test {

struct MatrixInfo {
  const char* file;
  std::int64_t rows, cols;
  std::int64_t nnz;                             // of the full (symmetric-expanded) matrix
  std::int64_t min_row_length, max_row_length;  // of the full matrix
};

inline constexpr MatrixInfo repository_matrices[] = {
    {"s3rmt3m3.mtx.gz", 5357, 5357, 207695, 7, 48},
    {"cvxbqp1.mtx.gz", 50000, 50000, 349968, 2, 9},
    {"cond-mat-2005.mtx.gz", 40421, 40421, 351386, 0, 278},
    {"bayer10.mtx.gz", 13436, 13436, 94926, 1, 27},
    {"orani678.mtx.gz", 2529, 2529, 90158, 1, 1110},
    {"bcsstk13.mtx.gz", 2003, 2003, 83883, 5, 95},
    {"rajat01.mtx.gz", 6833, 6833, 43250, 1, 1442},
    {"adder_dcop_32.mtx.gz", 1813, 1813, 11246, 1, 1310},
    {"Si2.mtx.gz", 769, 769, 17801, 12, 61},
    {"Pd.mtx.gz", 8081, 8081, 13036, 1, 5},
    {"lp_e226.mtx.gz", 223, 472, 2768, 1, 110},
    {"olm1000.mtx.gz", 1000, 1000, 3996, 2, 6},
    {"G51.mtx.gz", 1000, 1000, 11818, 5, 156},
    {"west0479.mtx.gz", 479, 479, 1910, 1, 12},
};

/// The folder of the repository's matrices (set by unit_tests/sparse/CMakeLists.txt).
inline std::string matrix_dir() {
  return KACC_TEST_MATRIX_DIR;
}

/// The path of one of the repository's matrices, e.g. matrix_path("rajat01.mtx.gz").
inline std::string matrix_path(const std::string& file) {
  return matrix_dir() + "/" + file;
}

}  // namespace kacc_sparse_test
