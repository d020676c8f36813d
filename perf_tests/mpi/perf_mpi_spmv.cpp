// kacc-perf-mpi-spmv: the distributed SpMV under mpirun, on a 3D 7-point stencil of edge^3 rows
// (default 128^3 = 2.1 M rows, out of cache) partitioned by rows, values stored as fp64 and as
// fp32. Per rank and repetition it times one kacc::mpi::spmv with its phases (pack and post,
// interior rows, exposed wait for the halo, boundary rows), and the halo exchange alone; the
// repetitions of both are interleaved. Prints one CSV line per value format with medians over
// the repetitions of the slowest rank's time (which is what a bulk-synchronous solver waits
// for), and
//   overlap = 1 - median exposed wait / median exchange-alone time
// (1: the exchange hid entirely behind the interior rows; 0: none of it did).
//
//   mpirun -np R kacc-perf-mpi-spmv [--edge N] [--reps K]      (threads per rank from Kokkos)
//
// Then, with 2 or more ranks, a ping-pong between ranks 0 and 1: one-way time and bandwidth
// per message size (the alpha and beta of docs/scaling-model.md).
//
// Rank 0 also appends its lines to mpi_spmv.csv and mpi_pingpong.csv in --out (default: the
// current folder), each with the --round it is given, and writes mpi.json: kacc-report runs
// it with 1, 2 and 4 ranks in turn (scripts/lib/mpi-spmv-series) and compares them.
//
// Compare a run with R ranks to one with 1 rank on the same total threads for the
// distributed overhead; exits non-zero if a measurement is missing or a result differs from
// one rank's by more than rounding.
#include <kacc/mpi.hpp>
#include <kacc_perf/run_info.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

// This rank's rows of the 7-point Laplacian on an edge^3 grid (6 on the diagonal, -1 off).
kacc::sparse::CooMatrix stencil_rows(std::int64_t edge, const kacc::mpi::row_partition& rows,
                                     int rank) {
  kacc::sparse::CooMatrix a;
  a.num_rows = rows.local_rows(rank);
  a.num_cols = edge * edge * edge;
  const std::int64_t plane = edge * edge;
  for (std::int64_t g = rows.begin(rank); g < rows.end(rank); ++g) {
    const std::int64_t i = g / plane, j = (g / edge) % edge, k = g % edge;
    const auto add = [&](std::int64_t c, double v) {
      a.row.push_back(g - rows.begin(rank));
      a.col.push_back(c);
      a.val.push_back(v);
    };
    if (i > 0) add(g - plane, -1);
    if (j > 0) add(g - edge, -1);
    if (k > 0) add(g - 1, -1);
    add(g, 6);
    if (k + 1 < edge) add(g + 1, -1);
    if (j + 1 < edge) add(g + edge, -1);
    if (i + 1 < edge) add(g + plane, -1);
  }
  return a;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

// The slowest rank's value.
double slowest(double mine) {
  double worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

// Appends line to the CSV file at path, after header when the file is new or empty.
void append_csv(const std::string& path, const char* header, const std::string& line) {
  std::ifstream existing(path);
  const bool has_header = existing && existing.peek() != std::ifstream::traits_type::eof();
  existing.close();
  std::ofstream out(path, std::ios::app);
  if (!out) throw std::runtime_error("cannot write " + path);
  if (!has_header) out << header << "\n";
  out << line;
}

constexpr const char* spmv_header =
    "round,format,ranks,threads_per_rank,rows,max_ghosts,spmv_s,pack_s,interior_s,wait_s,"
    "boundary_s,exchange_alone_s,overlap,gbs_per_rank,check";

template <class Format>
bool run(const char* format, std::int64_t edge, int reps, int rank, int ranks,
         const std::string& out_dir, int round) {
  const auto rows = kacc::mpi::row_partition::balanced(MPI_COMM_WORLD, edge * edge * edge);
  using Matrix = kacc::mpi::distributed_csr<double, Format>;
  const auto A = Matrix::from_local_rows(MPI_COMM_WORLD, rows, stencil_rows(edge, rows, rank));
  kacc::View<double*> x("x", A.column_count()), y("y", A.local_rows());
  Kokkos::deep_copy(x.storage(), 1.0);
  std::vector<double> total, pack, interior, wait, boundary, exchange;
  for (int r = -1; r < reps; ++r) {  // r = -1: warm-up, not recorded
    kacc::mpi::spmv_profile p;
    MPI_Barrier(MPI_COMM_WORLD);
    Kokkos::Timer t;
    kacc::mpi::spmv(Exec(), A, x, y, &p);
    const double spmv_seconds = slowest(t.seconds());
    MPI_Barrier(MPI_COMM_WORLD);
    t.reset();
    kacc::mpi::exchange_ghosts(Exec(), A, x);
    Exec().fence();
    const double exchange_seconds = slowest(t.seconds());
    if (r < 0) continue;
    total.push_back(spmv_seconds);
    exchange.push_back(exchange_seconds);
    pack.push_back(slowest(p.pack));
    interior.push_back(slowest(p.interior));
    wait.push_back(slowest(p.wait));
    boundary.push_back(slowest(p.boundary));
  }
  // Each row sums to 0 except at the grid's faces: check a row sum to catch a lost halo.
  auto hy = Kokkos::create_mirror_view(y.storage());
  Kokkos::deep_copy(hy, y.storage());
  bool ok = true;
  const std::int64_t plane = edge * edge;
  for (std::int64_t l = 0; l < A.local_rows(); ++l) {
    const std::int64_t g = rows.begin(rank) + l, i = g / plane, j = (g / edge) % edge, k = g % edge;
    const int faces =
        (i == 0) + (i + 1 == edge) + (j == 0) + (j + 1 == edge) + (k == 0) + (k + 1 == edge);
    if (hy(l) != faces) ok = false;
  }
  int all_ok = 0, mine = ok ? 1 : 0;
  MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  long long ghosts = A.ghost_count(), max_ghosts = 0;
  MPI_Allreduce(&ghosts, &max_ghosts, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  const double t = median(total),
               bytes_per_rank = double(A.interior().bytes() + A.boundary().bytes()) +
                                16.0 * double(A.local_rows());
  // With no ghosts there is no exchange to hide: the overlap is not defined.
  const double overlap = max_ghosts > 0 ? 1.0 - median(wait) / median(exchange) : std::nan("");
  if (rank == 0) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "%d,%s,%d,%d,%lld,%lld,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.3f,%.2f,%s\n", round,
                  format, ranks, Exec().concurrency(), static_cast<long long>(edge * edge * edge),
                  max_ghosts, t, median(pack), median(interior), median(wait), median(boundary),
                  median(exchange), overlap, bytes_per_rank / t * 1e-9, all_ok ? "ok" : "WRONG");
    std::fputs(line, stdout);
    append_csv(out_dir + "/mpi_spmv.csv", spmv_header, line);
  }
  return all_ok && t > 0;
}

// Latency and bandwidth between ranks 0 and 1 (ping-pong, medians of 200 round trips):
// one line per message size, for the scaling model's alpha and beta.
void ping_pong(int rank, int ranks, const std::string& out_dir, int round) {
  if (ranks < 2) return;
  constexpr const char* header = "round,ranks,message_bytes,one_way_s,gbs";
  if (rank == 0) std::printf("\n%s\n", header);
  for (int bytes : {8, 1 << 12, 1 << 16, 1 << 20}) {
    std::vector<char> buffer(static_cast<std::size_t>(bytes));
    std::vector<double> trip;
    for (int r = -10; r < 200; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      Kokkos::Timer t;
      if (rank == 0) {
        MPI_Send(buffer.data(), bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buffer.data(), bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
      if (r >= 0) trip.push_back(t.seconds() / 2);
    }
    if (rank == 0) {
      char line[128];
      std::snprintf(line, sizeof line, "%d,%d,%d,%.3e,%.3f\n", round, ranks, bytes, median(trip),
                    bytes / median(trip) * 1e-9);
      std::fputs(line, stdout);
      append_csv(out_dir + "/mpi_pingpong.csv", header, line);
    }
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  if (kacc_perf::answer_help(
          argc, argv,
          "kacc-perf-mpi-spmv [--quick|--full] [--out DIR] [--edge N] [--reps K] [--round R]\n"
          "the distributed SpMV (kacc::mpi::spmv) under mpirun on a 3-D 7-point stencil of N^3\n"
          "rows (default 128: 2.1M rows; --quick 32, --full 160), fp64 and fp32 values, K\n"
          "repetitions (default 20; --quick 3): per phase (pack, interior rows, exposed wait,\n"
          "boundary rows) and the halo exchange alone, medians of the slowest rank, and the\n"
          "fraction of the exchange hidden behind the interior rows; then a ping-pong between\n"
          "ranks 0 and 1. Rank 0 appends to mpi_spmv.csv and mpi_pingpong.csv in --out (default:\n"
          "the current folder) with round R (default 0) and writes mpi.json.\n"
          "  mpirun -np 4 kacc-perf-mpi-spmv --out results   (threads per rank from Kokkos)\n"))
    return 0;
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    kacc_perf::options opts;
    try {
      opts = kacc_perf::parse_options(argc, argv);
    } catch (const std::invalid_argument& e) {
      if (rank == 0) std::fprintf(stderr, "kacc-perf-mpi-spmv: %s\n", e.what());
      status = 2;
    }
    const bool quick = opts.run_level == kacc_perf::level::quick;
    std::int64_t edge = quick ? 32 : opts.run_level == kacc_perf::level::full ? 160 : 128;
    int reps = quick ? 3 : 20, round = 0;
    for (int a = 1; a < argc; ++a) {
      const std::string arg = argv[a];
      if (arg == "--edge" && a + 1 < argc) {
        edge = std::atoll(argv[++a]);
      } else if (arg == "--reps" && a + 1 < argc) {
        reps = std::atoi(argv[++a]);
      } else if (arg == "--round" && a + 1 < argc) {
        round = std::atoi(argv[++a]);
      } else if (arg.rfind("--kokkos", 0) != 0) {
        if (rank == 0) std::fprintf(stderr, "kacc-perf-mpi-spmv: unknown option %s\n", argv[a]);
        status = 2;
      }
    }
    if (status == 0 && (edge < 2 || reps < 1 || round < 0)) {
      if (rank == 0) {
        std::fprintf(stderr, "kacc-perf-mpi-spmv: --edge >= 2, --reps >= 1 and --round >= 0\n");
      }
      status = 2;
    }
    if (status == 0) {
      // Rank 0 writes the files; every rank learns whether it could, so none waits alone.
      int written = 1;
      if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int length = 0;
        MPI_Get_library_version(version, &length);
        try {
          kacc_perf::write_file(
              opts.out_dir + "/mpi.json",
              kacc_perf::run_json("kacc-perf-mpi-spmv",
                                  {{"level", kacc_perf::level_name(opts.run_level)},
                                   {"edge", std::to_string(edge)},
                                   {"repetitions", std::to_string(reps)},
                                   {"mpi_library", std::string(version, length)}}));
        } catch (const std::runtime_error& e) {
          std::fprintf(stderr, "kacc-perf-mpi-spmv: %s\n", e.what());
          written = 0;
        }
        if (written) std::printf("%s\n", spmv_header);
      }
      MPI_Bcast(&written, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (!written) status = 2;
    }
    if (status == 0) {
      const bool ok = run<double>("fp64", edge, reps, rank, ranks, opts.out_dir, round) &&
                      run<float>("fp32", edge, reps, rank, ranks, opts.out_dir, round);
      status = ok ? 0 : 1;
      ping_pong(rank, ranks, opts.out_dir, round);
    }
  }
  MPI_Finalize();
  return status;
}
