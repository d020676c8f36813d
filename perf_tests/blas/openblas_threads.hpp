#pragma once
// OpenBLAS as a peer on equal terms: as many threads as the Kokkos host execution space,
// allowed on the same CPUs.
//
// Debian's OpenBLAS (pthread build) sizes its thread pool from the CPUs its loading
// thread may run on. With OMP_PROC_BIND set, libgomp pins the main thread to one CPU
// before that, so OpenBLAS sees one CPU and runs one thread. openblas_set_num_threads
// starts the missing threads, and they inherit the caller's affinity: the main thread's
// mask is widened to the Kokkos threads' CPUs while they start, then restored.
#include <Kokkos_Core.hpp>

#include <cblas.h>
#include <sched.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <string>
#include <vector>

#ifdef KACC_HAVE_OPENBLAS
// Declared by OpenBLAS's cblas.h; repeated for a cblas.h from another package.
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
int openblas_getaffinity(int thread_idx, size_t cpusetsize, cpu_set_t* cpu_set);
}
#endif

namespace kacc_perf {

/// How a peer library was threaded for the run.
struct peer_threads {
  /// Threads the peer was asked for (the Kokkos host concurrency).
  int requested = 0;
  /// Threads the peer had started with, before it was told (0 when it cannot say).
  int at_start = 0;
  /// Threads the peer reports using (0 when it cannot say).
  int reported = 0;
  /// The CPUs the Kokkos host threads may run on, e.g. "0,1".
  std::string kokkos_cpus;
  /// The CPUs the peer's threads may run on (their affinity masks, joined).
  std::string peer_cpus;
  /// True when the peer runs as many threads as Kokkos, on the same CPUs.
  bool equal = false;
  /// Why the peer is not on equal terms ("" when it is).
  std::string note;
};

/// "0,1,5" for a CPU set.
inline std::string cpu_list(const cpu_set_t& set) {
  std::string s;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) s += (s.empty() ? "" : ",") + std::to_string(c);
  }
  return s;
}

/// The union of the affinity masks of the Kokkos host execution space's threads.
inline cpu_set_t kokkos_host_cpus() {
  cpu_set_t all;
  CPU_ZERO(&all);
#if defined(KOKKOS_ENABLE_OPENMP) && defined(_OPENMP)
  if (std::is_same<Kokkos::DefaultHostExecutionSpace, Kokkos::OpenMP>::value) {
    // A parallel region of the pool's size runs on the pool's threads, bound to the same
    // places (OMP_PLACES / OMP_PROC_BIND) as Kokkos's own regions.
    const int n = Kokkos::DefaultHostExecutionSpace().concurrency();
    std::vector<cpu_set_t> masks(static_cast<std::size_t>(n));
#pragma omp parallel num_threads(n)
    sched_getaffinity(0, sizeof(cpu_set_t), &masks[static_cast<std::size_t>(omp_get_thread_num())]);
    for (const auto& m : masks) CPU_OR(&all, &all, &m);
    return all;
  }
#endif
  sched_getaffinity(0, sizeof(cpu_set_t), &all);  // one host thread: the caller
  return all;
}

/// Gives OpenBLAS the Kokkos host concurrency on the Kokkos threads' CPUs and says how
/// that went. Without OpenBLAS (another BLAS), the peer's threading is unknown.
inline peer_threads equalise_openblas_threads() {
  peer_threads p;
  p.requested = Kokkos::DefaultHostExecutionSpace().concurrency();
  const cpu_set_t kokkos = kokkos_host_cpus();
  p.kokkos_cpus = cpu_list(kokkos);
#ifdef KACC_HAVE_OPENBLAS
  p.at_start = openblas_get_num_threads();
  cpu_set_t own;
  sched_getaffinity(0, sizeof(cpu_set_t), &own);
  cpu_set_t widened;
  CPU_OR(&widened, &own, &kokkos);
  sched_setaffinity(0, sizeof(cpu_set_t), &widened);
  openblas_set_num_threads(p.requested);
  sched_setaffinity(0, sizeof(cpu_set_t), &own);
  p.reported = openblas_get_num_threads();
  // What the threads really got: threads that all sit on the main thread's CPU run no
  // faster than one (measured: 0.95x for dgemv at 2 threads without the widened mask).
  cpu_set_t peer;
  CPU_ZERO(&peer);
  for (int t = 0; t < p.reported; ++t) {
    cpu_set_t mask;
    if (openblas_getaffinity(t, sizeof(cpu_set_t), &mask) != 0) {
      peer = widened;  // an OpenBLAS that cannot say: what its threads inherited
      break;
    }
    CPU_OR(&peer, &peer, &mask);
  }
  p.peer_cpus = cpu_list(peer);
  const bool same_cpus = CPU_EQUAL(&peer, &kokkos) != 0;
  p.equal = p.reported == p.requested && same_cpus;
  if (p.reported != p.requested) {
    p.note = "OpenBLAS reports " + std::to_string(p.reported) + " threads, Kokkos has " +
             std::to_string(p.requested);
  } else if (!same_cpus) {
    p.note =
        "OpenBLAS threads may run on CPUs " + p.peer_cpus + ", Kokkos threads on " + p.kokkos_cpus;
  }
#else
  p.note = "the BLAS found is not OpenBLAS: its thread count is not controlled";
#endif
  return p;
}

}  // namespace kacc_perf
