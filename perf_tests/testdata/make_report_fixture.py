#!/usr/bin/python3
"""Writes a SYNTHETIC result folder in the perf programs' formats, to test the report generator
and perf_tests/check_report.py without running any benchmark. The numbers come from a toy
bandwidth model and mean nothing; every JSON says "synthetic_fixture": true.

  make_report_fixture.py OUTDIR [--omit roofline,blas,spmv,solve,gmres,mpi] [--omit-file NAME]...
                         [--bad-json]
                         [--roof-fail] [--unequal-peer] [--with-conversion] [--quick]
                         [--accumulators] [--drop-accumulator CONFIG]

By construction (what the recommendation must find): GEMV with LayoutRight, y = Aᵀ x gains
nothing from compression (its compressed configurations move their bytes slowly:
conversion-bound), TRSV is latency-bound (fp64 at 15% of the read bandwidth), the small matrix
files are cache-resident with no gain; everything else follows the byte ratio. --quick writes
one size per kernel, as kacc-report --quick does; --with-conversion adds conversion-throughput
rows (kernel 'convert') to blas_speed.csv. --accumulators writes what the programs write with
--accumulators: the accumulator variants (fp64+comp ... fp64<-fp32+exact) of DOT, GEMV and
SpMV, their errors, and the errors on GenDot data of condition 1e16 (distribution and matrix
cond1e16); --drop-accumulator CONFIG then leaves that variant's rows out (a run that lost it).
The dense-solve results hold one wrong claim, as OpenBLAS's dsgesv made one on this project's
machine: dsgesv "converged" with a NaN solution (κ = 1e12, geometric σ). The GMRES results
have the bf16 basis stagnate. The MPI results are 3 rounds of 1, 2 and 4 ranks.
"""
import argparse
import csv
import json
import math
import os
import random

BYTES = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "int16s": 2}
BW = 12e9  # toy read bandwidth, bytes/s
PEAK = {"fp64": 40e9, "fp32": 80e9}
LLC = 32 << 20
# Conversion throughput, values/s: fp32 below the 3e9 values/s the read bandwidth needs.
CONVERSION = {"fp32": 2.5e9, "fp16": 7e9, "bf16": 8e9, "int16s": 6.5e9}
EPS = {"fp64": 1.1e-16, "fp32": 6e-8, "fp16": 4.9e-4, "bf16": 3.9e-3, "int16s": 3e-5}
# Accumulator variants: time factor over the plain sum of the same storage, relative error on
# ordinary data and on data of condition 1e16 (0: correctly rounded).
ACCUMULATORS = {"comp": (1.05, 2e-17, 3e-16), "dd": (1.1, 1e-17, 2e-16), "qd": (1.9, 0.0, 0.0),
                "exact": (1.6, 0.0, 0.0)}
VARIANTS = ["fp64+comp", "fp64+dd", "fp64+qd", "fp64+exact", "fp64<-fp32+dd", "fp64<-fp32+exact"]


def formats(config):
    """'Acc<fp64,fp16>' -> ['fp64', 'fp16'], 'fp32' -> ['fp32']."""
    return [t for t in config.replace("Acc<", "").replace(">", "").split(",")]


def write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def run_json(program, bad, extra=None):
    d = {"program": program, "synthetic_fixture": True, "host": "fixture", "cpu": "Toy CPU",
         "execution_space": "OpenMP", "concurrency": 2, "kokkos_version": "3.4.1",
         "compiler": "12.2.0", "cxx_flags": "-O3 -march=native", "kacc_version": "0.1.0",
         "git_revision": "fixture", "level": "quick", "repetitions": 5,
         "last_level_cache_bytes": LLC}
    d.update(extra or {})
    text = json.dumps(d, indent=2)
    if bad:  # what a writer that forgets to quote a version produces
        text = text.replace('"3.4.1"', "3.4.1")
    return text


def roofline(out, bad, roof_fail):
    rows = []
    for arith in ("fp64", "fp32"):
        for storage in ("fp64", "fp32", "fp16", "bf16"):
            if arith == "fp32" and storage == "fp64":
                continue
            for it in (1, 2, 4, 8, 16, 32, 64, 128, 256):
                fpv = 2 * it
                fpb = fpv / BYTES[storage]
                roof = min(PEAK[arith], BW * fpb)
                g = roof * random.uniform(0.85, 0.97)
                if roof_fail and it == 256:
                    g = roof * 1.2  # a point above its roof: the roofs do not bound
                t = 2**24 * fpv / g
                rows.append(["%s<-%s" % (arith, storage), arith, storage, it, fpv, fpb, t, t * 0.97,
                             g / 1e9, g / 0.97 / 1e9, g / fpb / 1e9, roof / 1e9, g / roof])
    write(os.path.join(out, "roofline.csv"),
          "config,arith,storage,iterations,flops_per_value,flops_per_byte,time_median_s,"
          "time_min_s,gflops_median,gflops_best,gbs_median,roof_gflops,median_over_roof".split(","),
          rows)
    write(os.path.join(out, "roofline_stream.csv"), ["phase", "kind", "gbs_median", "gbs_best",
          "bytes_per_array"], [["start", "read", 11.8, 12.1, 2**27],
                               ["start", "copy", 9.1, 9.4, 2**27],
                               ["start", "triad", 9.6, 9.9, 2**27],
                               ["start", "copy_write_allocate", 13.7, 14.1, 2**27]])
    worst = 1.2 if roof_fail else 0.97
    write(os.path.join(out, "roofline_summary.csv"), ["check", "measured", "target", "holds",
          "note"], [["fp16 storage reaches the read bandwidth", "0.93", ">= 0.8", "yes", "fixture"],
                    ["fp64 plateau / FMA peak", "0.95", ">= 0.90", "yes", "fixture"],
                    ["roof check: point (median) / its roof (max)", "%.4f" % worst, "<= 1.05",
                     "no" if roof_fail else "yes", "fixture"]])
    with open(os.path.join(out, "roofline.json"), "w") as f:
        f.write(run_json("kacc-roofline", bad, {
            "bandwidth_roof_gbs": BW / 1e9, "fma_peak_fp64_gflops": PEAK["fp64"] / 1e9,
            "fma_peak_fp32_gflops": PEAK["fp32"] / 1e9,
            "roof_check": "FAIL" if roof_fail else "PASS"}))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.text(0.5, 0.5, "synthetic fixture", ha="center")
    fig.savefig(os.path.join(out, "roofline.png"))
    plt.close(fig)


def accumulator_variants(dropped):
    """[(config, plain config of its storage, time factor, error, error at condition 1e16)]."""
    out = []
    for cfg in VARIANTS:
        if cfg in dropped:
            continue
        plain, acc = cfg.split("+")
        factor, err, ill = ACCUMULATORS[acc]
        if plain != "fp64":  # fp32 data: the conversion error remains
            err, ill = EPS["fp32"] * 0.5, 1.0
        out.append((cfg, plain, factor, err, ill))
    return out


def blas(out, bad, unequal_peer, quick, with_conversion, accumulators, dropped):
    speed, acc = [], []
    peer_threads = 1 if unequal_peer else 2
    configs = [("kacc", "fp64"), ("kacc", "fp64<-fp32"), ("kacc", "fp64<-fp16"),
               ("kacc", "fp64<-bf16"), ("kacc", "fp32"), ("openblas", "fp64"),
               ("openblas", "fp32"), ("kokkoskernels", "fp64")]
    kernels = (("dot", [10**k for k in range(3, 8)], [("-", "-")]),
               ("gemv", [256, 512, 1024, 2048, 4096], [(lay, tr) for lay in "LR" for tr in "NT"]),
               ("trsv", [256, 512, 1024, 2048, 4096], [("L", "N")]))
    for kernel, sizes, shapes in kernels:
        for n in sizes[-1:] if quick else sizes:
            m = 1 if kernel == "dot" else n
            values = 2 * n if kernel == "dot" else m * n // (2 if kernel == "trsv" else 1)
            flops = 2 * values
            for layout, trans in shapes:
                t64 = None
                for impl, cfg in configs:
                    st = cfg.split("<-")[-1]
                    eff = {"kacc": 0.9, "openblas": 0.95, "kokkoskernels": 0.8}[impl]
                    small = 1 + 2e3 / values  # latency at small sizes
                    t = values * BYTES[st] / (BW * eff) * small * random.uniform(0.97, 1.03)
                    if kernel == "trsv":  # dependences, not bytes, set the time
                        t = values * 8 / (BW * 0.15) * random.uniform(0.97, 1.03)
                    if (layout, trans) == ("R", "T") and impl == "kacc" and t64:
                        t = t64 * random.uniform(0.95, 1.0)  # conversion-bound
                    if impl == "kacc" and cfg == "fp64":
                        t64 = t
                    gbs = values * BYTES[st] / t / 1e9
                    speed.append([kernel, impl, cfg, layout, trans, m, n,
                                  peer_threads if impl == "openblas" else 2, t, t * 0.95,
                                  flops / t / 1e9, gbs, gbs / 12.1])
                if accumulators and kernel != "trsv":
                    plain_t = {r[2]: r[8] for r in speed if r[:2] == [kernel, "kacc"] and
                               r[3:7] == [layout, trans, m, n]}
                    for cfg, plain, factor, _, _ in accumulator_variants(dropped):
                        t = plain_t[plain] * factor
                        gbs = values * BYTES[plain.split("<-")[-1]] / t / 1e9
                        speed.append([kernel, "kacc", cfg, layout, trans, m, n, 2, t, t * 0.95,
                                      flops / t / 1e9, gbs, gbs / 12.1])
            for cfg in ("fp64", "fp64<-fp32", "fp64<-fp16", "fp64<-bf16", "fp32"):
                st = cfg.split("<-")[-1]
                u = EPS[st] if cfg != "fp32" else EPS["fp32"] * math.sqrt(n) / 10
                for acc_kernel in (("trsv_L", "trsv_U") if kernel == "trsv" else (kernel,)):
                    for dist in ("uniform", "normal"):
                        e = u * random.uniform(0.3, 1.0) * (3 if dist == "normal" else 1)
                        acc.append([acc_kernel, cfg, dist, n, e, e * 4, 5])
            if accumulators and kernel != "trsv":
                for cfg, _, _, err, _ in accumulator_variants(dropped):
                    for dist in ("uniform", "normal"):
                        acc.append([kernel, cfg, dist, n, err, err * 2, 5])
    if accumulators:
        for kernel, n in (("dot", 1 << 14), ("gemv", 256)):
            acc.append([kernel, "fp64", "cond1e16", n, 1.0, 3.0, 3])
            acc.append([kernel, "fp64<-fp32", "cond1e16", n, 2.0, 5.0, 3])
            for cfg, _, _, _, ill in accumulator_variants(dropped):
                acc.append([kernel, cfg, "cond1e16", n, ill, ill * 2, 3])
    if with_conversion:
        n = 1 << 24
        for st, rate in sorted(CONVERSION.items()):
            t = n / rate
            speed.append(["convert", "kacc", "fp64<-" + st, "-", "-", 1, n, 2, t, t * 0.97,
                          0, n * (8 + BYTES[st]) / t / 1e9, n * (8 + BYTES[st]) / t / 12.1e9])
    write(os.path.join(out, "blas_speed.csv"), "kernel,impl,config,layout,trans,m,n,threads,"
          "time_median_s,time_min_s,gflops,gbs,frac_read_bw".split(","), speed)
    write(os.path.join(out, "blas_accuracy.csv"), "kernel,config,distribution,n,median_rel_error,"
          "max_rel_error,seeds".split(","), acc)
    write(os.path.join(out, "blas_summary.csv"), ["check", "measured", "target", "holds", "note"],
          [["gemv fp16 storage time vs fp64", "0.27", "<= 0.35", "yes", "n=4096, fixture"],
           ["dot fp16 vs OpenBLAS fp64", "0.29", "<= 0.3", "yes", "fixture"],
           ["trsv bf16 error vs fp32", "61", "<= 10", "no", "fixture"]])
    with open(os.path.join(out, "blas.json"), "w") as f:
        f.write(run_json("kacc-perf-blas", bad, {
            "accumulators": "yes" if accumulators else "no",
            "openblas_threads": peer_threads, "openblas_threads_requested": 2,
            "openblas_threads_at_start": peer_threads, "openblas_cpus": "0,1",
            "kokkos_cpus": "0,1", "openblas_equal_threads": "no" if unequal_peer else "yes",
            "openblas_note": "OpenBLAS reports 1 threads, Kokkos has 2" if unequal_peer else "",
            "openblas_dgemv_2048_speedup_all_threads_over_one": 1.0 if unequal_peer else 1.9}))


def spmv(out, bad, accumulators, dropped):
    speed, acc = [], []
    # stencil27 and power_law as kacc-perf-spmv generates them; two matrix files out of cache,
    # two small enough to stay in the last-level cache (no gain from compression there).
    mats = [("stencil27", 262144, 6859000), ("power_law", 300000, 2900000),
            ("banded_w11", 500000, 5499970), ("random_r16", 200000, 3200000),
            ("west0479", 479, 1888), ("bcsstk13", 2003, 83883)]
    for name, rows, nnz in mats:
        t64 = None
        for impl, cfg in (("kacc_csr", "fp64"), ("kacc_csr", "Acc<fp64,fp32>"),
                          ("kacc_csr", "Acc<fp64,fp16>"), ("kacc_csr", "Acc<fp64,bf16>"),
                          ("kacc_csr", "fp32"), ("kokkoskernels", "fp64"),
                          ("kokkoskernels", "fp32")):
            st = formats(cfg)[-1]
            byts = nnz * (BYTES[st] + 4) + rows * 8 * 2
            t = byts / (BW * (0.8 if impl.startswith("kacc") else 0.75)) * random.uniform(
                0.95, 1.1)
            if nnz * 12 < LLC and impl.startswith("kacc"):  # cache-resident: launch-bound
                t = 8e-6 * random.uniform(0.98, 1.02)
            if cfg == "fp64" and impl.startswith("kacc"):
                t64 = t
            speed.append([name, rows, nnz, impl, cfg, "auto:row", 2, t, t * 0.95,
                          2 * nnz / t / 1e9, byts / t / 1e9, byts / t / 12.1e9,
                          t64 / t if t64 else ""])
        if accumulators:
            plain_t = {("fp64<-fp32" if r[4] == "Acc<fp64,fp32>" else r[4]): r[7]
                       for r in speed if r[0] == name and r[3] == "kacc_csr"}
            for cfg, plain, factor, _, _ in accumulator_variants(dropped):
                t = plain_t[plain] * factor
                byts = nnz * (BYTES[plain.split("<-")[-1]] + 4) + rows * 8 * 2
                speed.append([name, rows, nnz, "kacc_csr", cfg, "auto:row", 2, t, t * 0.95,
                              2 * nnz / t / 1e9, byts / t / 1e9, byts / t / 12.1e9, t64 / t])
        if name in ("stencil27", "power_law"):
            continue  # kacc-perf-spmv measures accuracy on the matrix files only
        for cfg in ("fp64", "Acc<fp64,fp32>", "Acc<fp64,fp16>", "Acc<fp64,bf16>", "fp32"):
            e = EPS[formats(cfg)[-1]] * random.uniform(0.2, 1)
            acc.append([name, cfg, 3, e, 3 * e])
        if accumulators:
            for cfg, _, _, err, _ in accumulator_variants(dropped):
                acc.append([name, cfg, 3, err, 2 * err])
    if accumulators:
        acc.append(["cond1e16", "fp64", 1, 1.0, 1.0])
        acc.append(["cond1e16", "Acc<fp64,fp32>", 1, 2.0, 2.0])
        for cfg, _, _, _, ill in accumulator_variants(dropped):
            acc.append(["cond1e16", cfg, 1, ill, ill])
    write(os.path.join(out, "spmv_speed.csv"), "matrix,rows,nnz,impl,config,kernel,threads,"
          "time_median_s,time_min_s,gflops,gbs,frac_read_bw,speedup_vs_fp64".split(","), speed)
    write(os.path.join(out, "spmv_accuracy.csv"), "matrix,config,seeds,median_rel_error,"
          "max_rel_error".split(","), acc)
    write(os.path.join(out, "spmv_summary.csv"), ["check", "measured", "target", "holds", "note"],
          [["fp16 values speedup vs fp64 (geomean)", "1.6", ">= 1.5", "yes", "fixture"]])
    with open(os.path.join(out, "spmv.json"), "w") as f:
        f.write(run_json("kacc-perf-spmv", bad,
                         {"accumulators": "yes" if accumulators else "no"}))


SOLVE_VARIANTS = [  # name, engine, factors, refinement, time / dgesv at kappa 1e2
    ("dgesv", "lapack", "fp64", "none", 1.0), ("dsgesv", "lapack", "fp32", "classic", 0.6),
    ("ir fp32 classic kacc-lu", "kacc_lu", "fp32", "classic", 1.7),
    ("ir fp32 classic openblas", "openblas", "fp32", "classic", 0.6),
    ("ir fp32 gmres openblas", "openblas", "fp32", "gmres", 0.65),
    ("ir fp32 gmres kacc-lu", "kacc_lu", "fp32", "gmres", 1.8),
    ("ir fp16 gmres kacc-lu", "kacc_lu", "fp16", "gmres", 3.0)]


def solve(out, bad, quick):
    """kacc-perf-solve's files: toy times, the fallbacks where fp32/fp16 factors cannot reach."""
    rows = []
    for n in ([256] if quick else [2048, 4096]):
        for sigma in ("geometric", "arithmetic"):
            for kappa in (1e2, 1e6, 1e8, 1e12):
                t_dgesv = 2.0 * n**3 / 3 / 40e9
                for name, engine, factors, method, ratio in SOLVE_VARIANTS:
                    be, outcome, reason, steps, inner = 3e-17, "converged", "none", 3, 0
                    reach = {"classic": 1e6, "gmres": 1e12 if factors == "fp32" else 1e6}.get(
                        method, 1e99)
                    if sigma == "geometric" and method == "gmres":
                        reach = 1e6 if factors == "fp32" else 1e2
                    if name == "dgesv":
                        outcome, reason, steps, be = "direct", "info_0", 0, 2e-16
                    elif kappa > reach:
                        outcome, reason, ratio = "fell_back", "stagnation", ratio + 1.0
                        be = 2e-16
                    if method == "gmres":
                        inner = 8 if outcome == "converged" else 800
                    if name == "dsgesv" and kappa > 1e6:
                        outcome, reason = "fell_back", "iteration_cap"
                        if kappa == 1e12 and sigma == "geometric":  # its wrong claim
                            outcome, reason, steps, be = "converged", "none", 25, float("nan")
                    t = t_dgesv * ratio
                    rows.append([n, "%g" % kappa, sigma, name, engine, factors, method, 2, 1, t,
                                 t, ratio, ratio / 0.6, outcome, reason, steps, inner,
                                 "NaN" if be != be else be, 2e-16])
    write(os.path.join(out, "solve_speed.csv"), "n,kappa,sigma,variant,engine,factors,refinement,"
          "threads,reps,time_median_s,time_min_s,vs_dgesv,vs_dsgesv,outcome,reason,"
          "outer_iterations,inner_iterations,backward_error,dgesv_backward_error".split(","), rows)
    n = 256 if quick else 4096
    write(os.path.join(out, "solve_gemm.csv"), "n,variant,threads,reps,time_median_s,gflops,"
          "vs_dgemm".split(","), [[n, "dgemm", 2, 3, 1.2, 120.0, 1.0],
                                  [n, "kacc gemm fp64", 2, 3, 1.4, 100.0, 0.83],
                                  [n, "kacc gemm fp32-stored", 2, 3, 1.3, 110.0, 0.92]])
    write(os.path.join(out, "solve_summary.csv"), ["check", "measured", "target", "holds",
          "note"], [["gesv_ir fp32 classic time / dsgesv", "1.0", "<=1.05", "yes", "fixture"],
                    ["kacc gemm fp64 GFLOP/s / OpenBLAS dgemm", "0.83", ">=0.5", "yes",
                     "fixture"]])
    with open(os.path.join(out, "solve.json"), "w") as f:
        f.write(run_json("kacc-perf-solve", bad, {"openblas_threads": 2,
                                                  "openblas_equal_threads": "yes"}))


GMRES_BASES = [("fp64", 8, 600), ("fp32", 4, 610), ("fp16", 2, 660), ("bf16", 2, 2000),
               ("int32s", 4, 612), ("int16s", 2, 650)]  # case, bytes per entry, iterations


def gmres(out, bad, quick):
    """kacc-perf-gmres's files: toy times from the bytes a GMRES(100) iteration moves."""
    n = 24**3 if quick else 64**3
    nnz, restart, rows = 7 * n - 6 * 24**2, 100, []
    for rnd in range(1 if quick else 3):
        for name, size, its in GMRES_BASES:
            restarts = its // restart
            converged = name != "bf16"
            per_iteration = (n * 2 * (its / (restarts + 1) + 1) + n) * size + 12 * nnz + 104 * n
            t = its * per_iteration / BW * random.uniform(1.0, 1.1)
            rows.append([name, rnd, n, nnz, restart, size, its, restarts,
                         "yes" if converged else "no", "converged" if converged else
                         "stagnation", 9e-11 if converged else 3e-6, t])
    write(os.path.join(out, "gmres.csv"), "case,round,rows,nnz,restart,basis_bytes,iterations,"
          "restarts,converged,reason,residual,time_s".split(","), rows)
    write(os.path.join(out, "gmres_summary.csv"), ["check", "measured", "target", "holds",
          "note"], [["fp32 basis: time to solution, speed-up over fp64", "1.4", ">=1.3", "yes",
                     "fixture"],
                    ["best 16-bit basis (fp16, bf16, int16s): speed-up over fp64", "1.7",
                     ">=1.5", "yes", "fixture"]])
    with open(os.path.join(out, "gmres.json"), "w") as f:
        f.write(run_json("kacc-perf-gmres", bad, {"size": 24 if quick else 64,
                                                  "cases": "basis formats"}))


def mpi(out, bad, quick):
    """kacc-perf-mpi-spmv's files as scripts/lib/mpi-spmv-series leaves them: toy times from
    the bytes of a stencil product plus an exchange that the interior rows mostly hide."""
    edge = 32 if quick else 128
    n = edge**3
    rows, pings = [], []
    for rnd in range(1 if quick else 3):
        for ranks in (1, 2, 4):
            threads = max(1, 2 // ranks)
            ghosts = 0 if ranks == 1 else edge * edge * (1 if ranks == 2 else 2)
            for fmt, size in (("fp64", 8), ("fp32", 4)):
                # The whole machine's bandwidth either way; 4 ranks share 2 CPUs.
                local = n * (7 * (size + 4) + 32) / BW * (1.04 if ranks == 4 else 1.0)
                exchange = 2e-6 + 8 * ghosts / 5e9  # 1 rank: the barrier and fence alone
                wait = 1e-6
                t = (local + wait) * random.uniform(1.0, 1.05)
                rows.append([rnd, fmt, ranks, threads, n, ghosts, t, 1e-6, local * 0.98, wait,
                             local * 0.02, exchange,
                             "%.3f" % (1 - wait / exchange) if ranks > 1 else "nan",
                             n / ranks * (7 * (size + 4) + 32) / t * 1e-9, "ok"])
            if ranks > 1:
                for size in (8, 4096, 65536, 1 << 20):
                    one_way = 5e-7 + size / 8e9
                    pings.append([rnd, ranks, size, one_way, size / one_way * 1e-9])
    write(os.path.join(out, "mpi_spmv.csv"), "round,format,ranks,threads_per_rank,rows,"
          "max_ghosts,spmv_s,pack_s,interior_s,wait_s,boundary_s,exchange_alone_s,overlap,"
          "gbs_per_rank,check".split(","), rows)
    write(os.path.join(out, "mpi_pingpong.csv"), "round,ranks,message_bytes,one_way_s,gbs".split(
        ","), pings)
    with open(os.path.join(out, "mpi.json"), "w") as f:
        f.write(run_json("kacc-perf-mpi-spmv", bad, {"edge": edge, "mpi_library": "Toy MPI"}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--omit", default="", help="components to leave out, comma separated")
    p.add_argument("--omit-file", action="append", default=[])
    p.add_argument("--bad-json", action="store_true", help="write an unquoted version string")
    p.add_argument("--roof-fail", action="store_true", help="put a point above its roof")
    p.add_argument("--unequal-peer", action="store_true", help="OpenBLAS on fewer threads")
    p.add_argument("--quick", action="store_true", help="one size per BLAS kernel")
    p.add_argument("--with-conversion", action="store_true",
                   help="conversion-throughput rows in blas_speed.csv")
    p.add_argument("--accumulators", action="store_true",
                   help="the accumulator variants, as the programs write them with --accumulators")
    p.add_argument("--drop-accumulator", action="append", default=[], metavar="CONFIG",
                   help="leave this accumulator variant's rows out")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    random.seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    omit = set(filter(None, a.omit.split(",")))
    if "roofline" not in omit:
        roofline(a.out, a.bad_json, a.roof_fail)
    if "blas" not in omit:
        blas(a.out, a.bad_json, a.unequal_peer, a.quick, a.with_conversion, a.accumulators,
             set(a.drop_accumulator))
    if "spmv" not in omit:
        spmv(a.out, a.bad_json, a.accumulators, set(a.drop_accumulator))
    if "solve" not in omit:
        solve(a.out, a.bad_json, a.quick)
    if "gmres" not in omit:
        gmres(a.out, a.bad_json, a.quick)
    if "mpi" not in omit:
        mpi(a.out, a.bad_json, a.quick)
    for f in a.omit_file:
        os.remove(os.path.join(a.out, f))


if __name__ == "__main__":
    main()
