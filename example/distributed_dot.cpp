// A dot product of vectors distributed over MPI ranks, the same bits for any rank count.
// Each rank owns a block of rows (kacc::mpi::row_partition) as an ordinary kacc view, here with
// x stored in fp32. The global x . y has terms up to 2^100 that cancel in pairs across the
// blocks, and is 1 exactly:
//
//   kacc::mpi::dot<double, double>               each rank's plain sum, then the ranks' sums:
//                                                the result changes with the rank count;
//   kacc::mpi::dot<double, kacc::exact<double>>  each rank's exact accumulator travels whole
//                                                and is joined exactly: 1 for 1, 2, 3 or any
//                                                number of ranks and threads.
//
// Run: mpirun -np 3 ./example_distributed_dot. Fails unless the exact result is 1 on every rank.

#include <kacc/mpi.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>

using Exec = Kokkos::DefaultExecutionSpace;
using Fp32Vector = kacc::View<double*, kacc::StoredAs<float>>;
using Vector = kacc::View<double*>;

// Global entry i of x and of y: (1, a_1, a_1, a_2, a_2, ...) and (1, b_1, -b_1, ...).
double x_at(kacc::index_type i) {
  const kacc::index_type k = (i + 1) / 2;
  return i == 0 ? 1.0 : std::ldexp(1.0 + static_cast<double>(k % 97) / 128.0, 50 - int(k % 37));
}
double y_at(kacc::index_type i) {
  const kacc::index_type k = (i + 1) / 2;
  const double b = std::ldexp(1.0 + static_cast<double>(k % 89) / 64.0, 49 - int(k % 41));
  return i == 0 ? 1.0 : (i % 2 ? b : -b);
}

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const kacc::index_type n = 1000001;  // 1 and 500000 cancelling pairs
    const auto rows = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, n);
    const kacc::index_type first = rows.begin(rank), local = rows.local_rows(rank);

    Fp32Vector x("x", local);  // every x_at(i) has 8 significant bits: exact in fp32
    Vector y("y", local);
    auto hx = Kokkos::create_mirror_view(x.storage());
    auto hy = Kokkos::create_mirror_view(y.storage());
    for (kacc::index_type i = 0; i < local; ++i) {
      hx(i) = static_cast<float>(x_at(first + i));
      hy(i) = y_at(first + i);
    }
    Kokkos::deep_copy(x.storage(), hx);
    Kokkos::deep_copy(y.storage(), hy);

    const double plain = kacc::mpi::dot<double, double>(MPI_COMM_WORLD, Exec(), x, y);
    const double exact = kacc::mpi::dot<double, kacc::exact<double>>(MPI_COMM_WORLD, Exec(), x, y);
    if (rank == 0) {
      std::printf("%d ranks, %lld rows\n", ranks, static_cast<long long>(n));
      std::printf("plain fp64 accumulation:  %.17g\n", plain);
      std::printf("kacc::exact<double>:      %.17g\n", exact);
    }
    status = exact == 1.0 ? 0 : 1;
  }
  int any = 0;
  MPI_Allreduce(&status, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
