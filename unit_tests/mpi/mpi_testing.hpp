#pragma once
// What the MPI tests share: the world's rank and size, and bitwise comparisons across ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kacc_mpi_testing {

inline int rank_of_world() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int ranks_of_world() {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

inline std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

inline ::testing::AssertionResult same_double(double expected, double actual) {
  if ((std::isnan(expected) && std::isnan(actual)) || bits_of(expected) == bits_of(actual))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << std::hexfloat << "expected " << expected << ", got " << actual;
}

// Whether v has the same bits on every rank (NaNs count as equal).
inline bool same_on_every_rank(double v) {
  std::uint64_t mine = std::isnan(v) ? 0x7ff8000000000000ull : bits_of(v), lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

// Every rank must see the error, whichever rank found it, and none may hang.
template <class F>
void expect_error_on_every_rank(F&& call, const std::string& words) {
  std::string message;
  try {
    call();
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  EXPECT_NE(message.find(words), std::string::npos) << "message: \"" << message << "\"";
  int mine = message.empty() ? 0 : 1, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  EXPECT_EQ(all, 1) << "some rank did not throw";
}

}  // namespace kacc_mpi_testing
