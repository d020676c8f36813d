#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>

#include "mpi_testing.hpp"

// GoogleTest main for the MPI tests. MPI and Kokkos around GoogleTest; a failure on any rank fails
// every rank's exit status, and only rank 0 prints the test log (the others print their failures,
// marked with their rank).
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rank = kacc_mpi_testing::rank_of_world();
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    struct failures_only : ::testing::EmptyTestEventListener {
      int rank;
      explicit failures_only(int r) : rank(r) {}
      void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (r.failed())
          std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank, r.file_name(), r.line_number(),
                       r.summary());
      }
    };
    listeners.Append(new failures_only(rank));
  }
  Kokkos::initialize(argc, argv);
  const int mine = RUN_ALL_TESTS();
  Kokkos::finalize();
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
