// The downstream MPI program: kacc::mpi from the installed package, under mpirun.
#include <kacc/mpi.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const auto rows = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, 1000);
    kacc::View<double*, kacc::StoredAs<kacc::fp16>> x("x", rows.local_rows(rank));
    kacc::View<double*> y("y", rows.local_rows(rank));
    Kokkos::parallel_for(
        rows.local_rows(rank), KOKKOS_LAMBDA(const kacc::index_type i) {
          x(i) = 1.0;
          y(i) = 2.0;
        });
    const double d = kacc::mpi::dot<double, kacc::exact<double>>(MPI_COMM_WORLD, x, y);
    if (rank == 0) std::printf("distributed x . y = %g (expected 2000)\n", d);
    status = d == 2000.0 ? 0 : 1;
  }
  MPI_Finalize();
  return status;
}
