// kacc-petsc-gmres: the peer of `kacc-perf-gmres --cases fp64` (and of its Jacobi case with
// --preconditioners): PETSc's KSPGMRES on the same generated problem, the 3-D
// convection-diffusion matrix of an N^3 grid (7-point upwind, mesh Peclet number 0.5),
// b = A * ones, x0 = 0, GMRES(M) with classical Gram-Schmidt and one reorthogonalisation
// (CGS2, as kacc's), point Jacobi on the right, ||b - A x|| / ||b|| <= 1e-10.
//
// PETSc's vector and matrix kernels run one thread per MPI rank: run it under
// `mpirun -np P` with P the thread count kacc was given, bound to the same cores. Each round
// solves once; set-up (assembly, KSPSetUp) is not timed. Prints per round the iterations,
// PETSc's reason, the explicit residual and the seconds, then the median.
//
//   mpirun -np 2 --bind-to core kacc-petsc-gmres [-size N] [-restart M] [-rounds R]
//
// Other PETSc options (-ksp_*, -log_view) go to the solver as usual.
#include <petscksp.h>

#include <algorithm>
#include <vector>

const char help[] = "PETSc's GMRES on kacc-perf-gmres's problem (see the file's comment)\n";

int main(int argc, char** argv) {
  PetscInt n = 96, restart = 100, rounds = 1;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-size", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-restart", &restart, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rounds", &rounds, NULL));
  PetscCheck(n >= 2 && restart >= 1 && rounds >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-size must be at least 2, -restart and -rounds at least 1");

  const PetscInt rows = n * n * n, plane = n * n;
  const PetscScalar pe = 0.5;
  Mat a;
  PetscCall(
      MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, rows, rows, 7, NULL, 6, NULL, &a));
  PetscInt first, end;
  PetscCall(MatGetOwnershipRange(a, &first, &end));
  for (PetscInt i = first; i < end; ++i) {
    const PetscInt x = i % n, y = i / n % n, z = i / plane;
    PetscInt cols[7];
    PetscScalar vals[7];
    PetscInt k = 0;
    // The entries of kacc-perf-gmres's row, in its column order.
    if (z > 0) cols[k] = i - plane, vals[k++] = -1 - pe;
    if (y > 0) cols[k] = i - n, vals[k++] = -1 - pe;
    if (x > 0) cols[k] = i - 1, vals[k++] = -1 - pe;
    cols[k] = i, vals[k++] = 6 + 3 * pe;
    if (x + 1 < n) cols[k] = i + 1, vals[k++] = -1;
    if (y + 1 < n) cols[k] = i + n, vals[k++] = -1;
    if (z + 1 < n) cols[k] = i + plane, vals[k++] = -1;
    PetscCall(MatSetValues(a, 1, &i, k, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY));

  Vec ones, b, x, r;
  PetscCall(MatCreateVecs(a, &x, &b));
  PetscCall(VecDuplicate(b, &ones));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(ones, 1.0));
  PetscCall(MatMult(a, ones, b));
  PetscReal b_norm;
  PetscCall(VecNorm(b, NORM_2, &b_norm));

  KSP ksp;
  PC pc;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, a, a));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPGMRESSetRestart(ksp, restart));
  PetscCall(KSPGMRESSetOrthogonalization(ksp, KSPGMRESClassicalGramSchmidtOrthogonalization));
  PetscCall(KSPGMRESSetCGSRefinementType(ksp, KSP_GMRES_CGS_REFINE_ALWAYS));
  PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 0.0, PETSC_DEFAULT, 1000000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));

  PetscMPIInt ranks;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &ranks));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "kacc-petsc-gmres: %" PetscInt_FMT "^3 = %" PetscInt_FMT
                        " rows, GMRES(%" PetscInt_FMT
                        "), CGS2, Jacobi (right), %d MPI ranks, %" PetscInt_FMT " rounds\n",
                        n, rows, restart, static_cast<int>(ranks), rounds));
  std::vector<double> seconds(static_cast<std::size_t>(rounds));
  PetscInt iterations = 0;
  for (PetscInt round = 0; round < rounds; ++round) {
    PetscCall(VecSet(x, 0.0));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    const double t0 = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, x));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    seconds[round] = MPI_Wtime() - t0;
    KSPConvergedReason reason;
    PetscCall(KSPGetIterationNumber(ksp, &iterations));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(MatMult(a, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscReal r_norm;
    PetscCall(VecNorm(r, NORM_2, &r_norm));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "round %" PetscInt_FMT ": %" PetscInt_FMT
                          " iterations, %s, ||b - A x|| / ||b|| = %.3e, %.4f s, %.3e s/iter\n",
                          round, iterations, KSPConvergedReasons[reason],
                          static_cast<double>(r_norm / b_norm), seconds[round],
                          seconds[round] / static_cast<double>(iterations > 0 ? iterations : 1)));
  }
  std::sort(seconds.begin(), seconds.end());
  PetscCall(
      PetscPrintf(PETSC_COMM_WORLD, "median %.4f s, %.3e s/iter (last round's iterations)\n",
                  seconds[rounds / 2],
                  seconds[rounds / 2] / static_cast<double>(iterations > 0 ? iterations : 1)));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&ones));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&a));
  PetscCall(PetscFinalize());
  return 0;
}
