// CB-GMRES over MPI ranks: every rank reads the same Matrix Market file and keeps its block of
// rows, and GMRES with an fp32 Krylov basis and a block-local Jacobi preconditioner solves
// A x = A 1. With kacc::exact<double> reductions the iteration count and the residual are
// the same bits for any number of ranks (try -np 1, 2, 3, 4).
//
// Run: mpirun -np 3 ./example_distributed_gmres matrix.mtx[.gz]. Fails unless GMRES converges.

#include <kacc/mpi.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>

using Exec = Kokkos::DefaultExecutionSpace;

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
      if (rank == 0) std::fprintf(stderr, "usage: %s matrix.mtx[.gz]\n", argv[0]);
    } else {
      using Matrix = kacc::mpi::distributed_csr<double>;
      const auto A = Matrix::read_matrix_market(MPI_COMM_WORLD, argv[1]);

      // b = A 1: x holds ones (and room for the ghosts) for one product.
      Kokkos::View<double*> ones("ones", A.column_count()), b("b", A.local_rows()),
          x("x", A.local_rows());
      Kokkos::deep_copy(ones, 1.0);
      kacc::mpi::spmv(Exec(), A, ones, b);

      const auto M = kacc::mpi::jacobi(A);  // this rank's diagonal
      kacc::solve::GmresOptions options;
      options.max_iterations = 1000;
      const auto s = kacc::mpi::gmres<float, kacc::exact<double>>(Exec(), A, b, x, options, M);
      if (rank == 0) std::printf("%s\n", s.message.c_str());
      status = s.converged ? 0 : 1;
    }
  }
  MPI_Finalize();
  return status;
}
