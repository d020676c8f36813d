#pragma once
// The shared SuiteSparse matrices and their sizes (from shared/matrices/README.md).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace kacc_sparse_test {

struct MatrixInfo {
  const char* file;
  std::int64_t rows, cols, nnz;  // nnz of the full (symmetric-expanded) matrix
};

inline constexpr MatrixInfo shared_matrices[] = {
    {"s3rmt3m3.mtx", 5357, 5357, 207695},
    {"cvxbqp1.mtx", 50000, 50000, 349968},
    {"cond-mat-2005.mtx", 40421, 40421, 351386},
    {"bayer10.mtx", 13436, 13436, 94926},
    {"orani678.mtx", 2529, 2529, 90158},
    {"utm5940.mtx", 5940, 5940, 83842},
    {"bcsstk13.mtx", 2003, 2003, 83883},
    {"rajat01.mtx", 6833, 6833, 43250},
    {"adder_dcop_32.mtx", 1813, 1813, 11246},
    {"Si2.mtx", 769, 769, 17801},
    {"Pd.mtx", 8081, 8081, 13036},
    {"lp_e226.mtx", 223, 472, 2768},
    {"olm1000.mtx", 1000, 1000, 3996},
    {"G51.mtx", 1000, 1000, 11818},
    {"west0479.mtx", 479, 479, 1910},
};

inline std::string matrix_dir() {
  return KACC_SHARED_MATRICES;
}

inline bool have_matrices() {
  return std::filesystem::is_directory(matrix_dir()) &&
         std::filesystem::exists(matrix_dir() + "/west0479.mtx");
}

#define KACC_REQUIRE_MATRICES()                                                     \
  if (!kacc_sparse_test::have_matrices())                                           \
  GTEST_SKIP() << "shared matrices not found in " << kacc_sparse_test::matrix_dir() \
               << " (expected ${PROJECT_SOURCE_DIR}/../shared/matrices)"

}  // namespace kacc_sparse_test
