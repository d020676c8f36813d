#!/usr/bin/python3
"""Checks that a kacc report folder (scripts/kacc-report) is whole: every component (roofline,
BLAS, SpMV, dense solve, GMRES, MPI) ran and wrote every file, the files parse (CSV headers, JSON, PNG signatures),
report.html embeds every plot of report.md, no plot panel holds more than 8 series, the report
opens with the recommendation and it matches the one check_recommendation.py recomputes from the
CSVs, no stated target is MISSING, the roofs bound the measurements (roof check), every
peer's thread count is recorded (and marked in the report when it is not kacc's), and, when
the run asked for the accumulators (run.json report.accuracy_cost), the "Accuracy versus cost"
section has its plot and, for every kernel asked, a time and both errors of plain fp64 and of
every accumulator variant, with no MISSING line; the dense-solve section shows every size,
spectrum and condition number run, and names every solve that reported success with a wrong
answer (a non-finite solution, or a backward error above the eps sqrt(n) its convergence test
promises); the GMRES section has a row for every basis format run; the MPI section has a row
for every value format and rank count run.

  perf_tests/check_report.py DIR [--allow-missing roofline,blas,spmv,solve,gmres,mpi]
                             [--allow-incomplete]

--allow-missing names components that may be absent, if the report itself says they are
MISSING; by default every component is required. Exit status 0 when the folder is whole, 1 with
one line per problem otherwise. Standard library only, independent of the generator's code.
"""
import argparse
import base64
import csv
import json
import os
import re
import sys

import check_recommendation

PNG = b"\x89PNG\r\n\x1a\n"
SUMMARY_COLS = ["check", "measured", "target", "holds", "note"]
# component -> {file: required CSV columns (None for non-CSV)}
COMPONENTS = {
    "roofline": {
        "roofline.csv": ["config", "arith", "storage", "iterations", "flops_per_value",
                         "flops_per_byte", "time_median_s", "time_min_s", "gflops_median",
                         "gflops_best", "gbs_median", "roof_gflops", "median_over_roof"],
        "roofline_stream.csv": [], "roofline_summary.csv": SUMMARY_COLS,
        "roofline.json": None, "roofline.png": None, "plot_roofline.png": None},
    "blas": {
        "blas_speed.csv": ["kernel", "impl", "config", "layout", "trans", "m", "n", "threads",
                           "time_median_s", "time_min_s", "gflops", "gbs", "frac_read_bw"],
        "blas_accuracy.csv": ["kernel", "config", "distribution", "n", "median_rel_error",
                              "max_rel_error", "seeds"],
        "blas_summary.csv": SUMMARY_COLS, "blas.json": None, "plot_blas_gemv.png": None,
        "plot_blas_dot.png": None, "plot_blas_trsv.png": None},
    "spmv": {
        "spmv_speed.csv": ["matrix", "rows", "nnz", "impl", "config", "kernel", "threads",
                           "time_median_s", "time_min_s", "gflops", "gbs", "frac_read_bw",
                           "speedup_vs_fp64"],
        "spmv_accuracy.csv": ["matrix", "config", "seeds", "median_rel_error", "max_rel_error"],
        "spmv_summary.csv": SUMMARY_COLS, "spmv.json": None, "plot_spmv.png": None},
    "solve": {
        "solve_speed.csv": ["n", "kappa", "sigma", "variant", "engine", "factors", "refinement",
                            "threads", "reps", "time_median_s", "time_min_s", "vs_dgesv",
                            "vs_dsgesv", "outcome", "reason", "outer_iterations",
                            "inner_iterations", "backward_error", "dgesv_backward_error"],
        "solve_gemm.csv": ["n", "variant", "threads", "reps", "time_median_s", "gflops",
                           "vs_dgemm"],
        "solve_summary.csv": SUMMARY_COLS, "solve.json": None},
    "gmres": {
        "gmres.csv": ["case", "round", "rows", "nnz", "restart", "basis_bytes", "iterations",
                      "restarts", "converged", "reason", "residual", "time_s"],
        "gmres_summary.csv": SUMMARY_COLS, "gmres.json": None},
    "mpi": {
        "mpi_spmv.csv": ["round", "format", "ranks", "threads_per_rank", "rows", "max_ghosts",
                         "spmv_s", "pack_s", "interior_s", "wait_s", "boundary_s",
                         "exchange_alone_s", "overlap", "gbs_per_rank", "check"],
        "mpi_pingpong.csv": ["round", "ranks", "message_bytes", "one_way_s", "gbs"],
        "mpi.json": None},
}
SOLVE = "Dense solve: mixed-precision LU and iterative refinement"
GMRES = "Sparse solve: GMRES with a compressed Krylov basis"
MPI = "Past one node: distributed SpMV (MPI)"
REPORT = {
    "report.md": None, "report.html": None, "run.json": None,
    "report_summary.csv": ["kernel", "config", "storage", "time_vs_fp64", "time_vs_best_peer",
                           "best_peer", "threads", "peer_threads", "frac_read_bw",
                           "error_vs_fp32", "basis"],
    "report_targets.csv": ["component", "check", "measured", "target", "holds", "note"],
    "report_components.csv": ["component", "program", "status", "seconds", "detail",
                              "missing_files"],
    "report_recommendation.csv": ["kernel", "shape", "budget", "choice", "storage",
                                  "speedup_vs_fp64", "error", "pays_off", "reason"],
    "report_model.csv": ["kernel", "shape", "config", "byte_ratio", "predicted_speedup",
                         "conversion_values_per_s", "required_values_per_s", "measured_speedup",
                         "measured_over_predicted"],
    "report_plots.json": None,
}
MAX_SERIES = 8
ACCURACY_COST = "Accuracy versus cost"
ACCURACY_COST_CSV = ["kernel", "config", "storage", "accumulator", "time_vs_fp64", "error",
                     "error_ill"]
# What kacc-perf-blas and kacc-perf-spmv write with --accumulators.
ACCURACY_COST_KERNELS = {"dot": ("blas", "DOT"), "gemv": ("blas", "GEMV"),
                         "spmv": ("spmv", "SpMV")}
ACCUMULATOR_VARIANTS = ["fp64+comp", "fp64+dd", "fp64+qd", "fp64+exact", "fp64<-fp32+dd",
                        "fp64<-fp32+exact"]
RUN_KEYS = ["cpu", "gpus", "execution_space", "threads", "kokkos_version", "kokkos_backends",
            "compiler", "cxx_flags", "kacc_version", "git_revision", "level", "programs", "peers"]


def check_file(path, columns, problems):
    name = os.path.basename(path)
    try:
        if name.endswith(".csv"):
            with open(path, newline="") as f:
                rows = list(csv.reader(f))
            if not rows:
                problems.append("%s: empty (no header)" % name)
                return
            header = [h.strip() for h in rows[0]]
            lacking = [c for c in columns or [] if c not in header]
            if lacking:
                problems.append("%s: header lacks %s (has %s)" % (name, ", ".join(lacking),
                                                                   ",".join(header)))
            bad = [i + 1 for i, r in enumerate(rows[1:], 1) if len(r) != len(header)]
            if bad:
                problems.append("%s: rows %s do not have %d fields" % (name, bad[:5], len(header)))
        elif name.endswith(".json"):
            with open(path) as f:
                data = json.load(f)
            if not isinstance(data, dict):
                problems.append("%s: not a JSON object" % name)
        elif name.endswith(".png"):
            with open(path, "rb") as f:
                head = f.read(8)
            if head != PNG or os.path.getsize(path) < 1000:
                problems.append("%s: not a PNG image (or empty)" % name)
        elif os.path.getsize(path) == 0:
            problems.append("%s: empty" % name)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        problems.append("%s: does not parse: %s" % (name, e))


def _section(md, title):
    """The text of report.md's '## title' section, or None."""
    m = re.search(r"^## %s\n(.*?)(?=^## |\Z)" % re.escape(title), md, re.MULTILINE | re.DOTALL)
    return m.group(1) if m else None


def accuracy_cost_problems(d, md, asked, required):
    """The accuracy-versus-cost section of a run that asked for it (asked: its kernels), for
    the kernels of the required components."""
    out = []
    text = _section(md, ACCURACY_COST)
    if text is None:
        return ["report.md has no '%s' section, but the run asked for it" % ACCURACY_COST]
    excused = ["(%s)" % name for comp, name in ACCURACY_COST_KERNELS.values()
               if comp not in required]
    asked = [k for k in asked if ACCURACY_COST_KERNELS.get(k, ("", ""))[0] in required]
    out += ["%s: %s" % (ACCURACY_COST, line.strip()) for line in text.splitlines()
            if "MISSING" in line and not any(e in line for e in excused)]
    if "(plot_accuracy_cost.png)" not in text:
        out.append("%s: does not show plot_accuracy_cost.png" % ACCURACY_COST)
    path = os.path.join(d, "report_accuracy_cost.csv")
    if not os.path.isfile(path):
        return out + ["report_accuracy_cost.csv: missing"]
    check_file(path, ACCURACY_COST_CSV, out)
    with open(path, newline="") as f:
        rows = {(r.get("kernel"), r.get("config")): r for r in csv.DictReader(f)}

    def finite(x):
        try:
            return float(x) == float(x) and abs(float(x)) != float("inf")
        except (TypeError, ValueError):
            return False
    for kernel in asked:
        for config in ["fp64"] + ACCUMULATOR_VARIANTS:
            r = rows.get((kernel, config))
            lacks = [c for c in ("time_vs_fp64", "error", "error_ill") if r is None or
                     not finite(r.get(c))]
            if lacks:
                out.append("report_accuracy_cost.csv: %s %s lacks %s" % (
                    kernel, config, ", ".join(lacks)))
    return out


def _number(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if v == v and abs(v) != float("inf") else None


def solve_problems(d, md):
    """The dense-solve section: a table per size with a row per (spectrum, kappa) of
    solve_speed.csv, and every solve that reported success with a non-finite solution, or
    converged with a backward error above the eps sqrt(n) its convergence test promises,
    named as such."""
    text = _section(md, SOLVE)
    if text is None:
        return ["report.md has no '%s' section" % SOLVE]
    with open(os.path.join(d, "solve_speed.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for n in sorted({r["n"] for r in rows}, key=int):
        m = re.search(r"^### n = %s\n(.*?)(?=^#|\Z)" % n, text, re.MULTILINE | re.DOTALL)
        cases = {(r["sigma"], r["kappa"]) for r in rows if r["n"] == n}
        shown = len(re.findall(r"^\| (geometric|arithmetic|clustered) \|", m.group(1),
                               re.MULTILINE)) if m else 0
        if shown != len(cases):
            out.append("%s: n = %s shows %d of its %d (spectrum, kappa) rows" % (
                SOLVE, n, shown, len(cases)))
    wrong = 0
    for r in rows:
        if r["outcome"] not in ("converged", "direct"):
            continue
        be, n = _number(r["backward_error"]), _number(r["n"]) or 1
        wrong += be is None or (r["outcome"] == "converged" and be > 2.0**-53 * n**0.5)
    named = text.count("**Reported success, wrong answer**")
    if named != wrong:
        out.append("%s: %d solves reported success with a wrong answer, the report names %d" % (
            SOLVE, wrong, named))
    return out


def gmres_problems(d, md):
    """The GMRES section: one table row per case of gmres.csv (a basis format), with its
    iteration count as the file has it in its last round."""
    text = _section(md, GMRES)
    if text is None:
        return ["report.md has no '%s' section" % GMRES]
    with open(os.path.join(d, "gmres.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    last = {r["case"]: r for r in rows}
    out = []
    for case, r in last.items():
        if not re.search(r"^\| %s \| %s \|" % (re.escape(case), re.escape(r["iterations"])),
                         text, re.MULTILINE):
            out.append("%s: no row for basis %s with its %s iterations" % (
                GMRES, case, r["iterations"]))
    return out


def mpi_problems(d, md):
    """The MPI section: one table row per value format and rank count of mpi_spmv.csv, with
    its threads per rank."""
    text = _section(md, MPI)
    if text is None:
        return ["report.md has no '%s' section" % MPI]
    with open(os.path.join(d, "mpi_spmv.csv"), newline="") as f:
        runs = {(r["format"], r["ranks"], r["threads_per_rank"]) for r in csv.DictReader(f)}
    return ["%s: no row for %s values with %s ranks x %s threads" % (MPI, fmt, ranks, threads)
            for fmt, ranks, threads in sorted(runs)
            if not re.search(r"^\| %s \| %s × %s \|" % (re.escape(fmt), ranks, threads), text,
                             re.MULTILINE)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--allow-missing", default="",
                   help="components that may be MISSING (default: every component is required)")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="accept a report marked INCOMPLETE (interrupted run)")
    a = p.parse_args()
    d = a.dir
    problems = []
    if not os.path.isdir(d):
        print("check_report: %s is not a folder" % d)
        return 1

    for name, cols in REPORT.items():
        path = os.path.join(d, name)
        if not os.path.isfile(path):
            problems.append("%s: missing (the report itself was not written)" % name)
        else:
            check_file(path, cols, problems)
    md = open(os.path.join(d, "report.md")).read() if os.path.isfile(
        os.path.join(d, "report.md")) else ""
    missing_lines = [line for line in md.splitlines() if "MISSING" in line]

    allowed_missing = set(filter(None, a.allow_missing.split(",")))
    unknown = allowed_missing - set(COMPONENTS)
    if unknown:
        problems.append("--allow-missing: unknown components %s" % ", ".join(sorted(unknown)))
    required = set(COMPONENTS) - allowed_missing
    for comp, files in COMPONENTS.items():
        for name, cols in files.items():
            path = os.path.join(d, name)
            if os.path.isfile(path):
                check_file(path, cols, problems)
            elif comp in required:
                problems.append("%s: missing, and component %s is required" % (name, comp))
            elif not any(name in line for line in missing_lines):
                problems.append("%s: missing but report.md does not say it is MISSING" % name)

    # report.md's images are embedded in report.html, byte for byte.
    if md and os.path.isfile(os.path.join(d, "report.html")):
        html = open(os.path.join(d, "report.html")).read()
        embedded = set()
        for b64 in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html):
            try:
                embedded.add(base64.b64decode(b64, validate=True))
            except ValueError:
                problems.append("report.html: an embedded image is not valid base64")
        if re.search(r'<img[^>]+src="(?!data:)', html):
            problems.append("report.html: refers to an image file instead of embedding it")
        images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
        for img in images:
            path = os.path.join(d, img)
            if not os.path.isfile(path):
                problems.append("report.md shows %s, which does not exist" % img)
            elif open(path, "rb").read() not in embedded:
                problems.append("report.html does not embed %s" % img)
        if not images and not missing_lines:
            problems.append("report.md has no plots and says nothing is MISSING")

    # Plots: no panel with more than MAX_SERIES series (as the plot code recorded what it drew).
    try:
        with open(os.path.join(d, "report_plots.json")) as f:
            figures = json.load(f).get("figures", {})
        for img in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md):
            if img not in figures:
                problems.append("report_plots.json: no series record for %s" % img)
        for name, panels in figures.items():
            for panel in panels:
                if panel.get("series", 0) > MAX_SERIES:
                    problems.append("%s: panel '%s' has %d series (at most %d): %s" % (
                        name, panel.get("panel"), panel["series"], MAX_SERIES,
                        ", ".join(panel.get("labels", []))))
    except (OSError, ValueError) as e:
        problems.append("report_plots.json: %s" % e)

    # The first section says what to use, and it follows from the CSVs.
    sections = re.findall(r"^## (.+)$", md, re.MULTILINE)
    if md and (not sections or sections[0] != "What to use on this machine"):
        problems.append("report.md does not open with 'What to use on this machine' (first "
                        "section: %s)" % (sections[0] if sections else "none"))
    if {"blas", "spmv"} & required:
        problems += check_recommendation.problems(d)
    if "solve" in required and os.path.isfile(os.path.join(d, "solve_speed.csv")):
        problems += solve_problems(d, md)
    if "gmres" in required and os.path.isfile(os.path.join(d, "gmres.csv")):
        problems += gmres_problems(d, md)
    if "mpi" in required and os.path.isfile(os.path.join(d, "mpi_spmv.csv")):
        problems += mpi_problems(d, md)

    # Components: every required one ran to the end (a failed program is not a result).
    try:
        with open(os.path.join(d, "report_components.csv"), newline="") as f:
            for row in csv.DictReader(f):
                comp, status = row.get("component", ""), row.get("status", "")
                if comp in required and status != "ok":
                    problems.append("component %s is %s: %s" % (comp, status or "?",
                                                                 row.get("detail", "")))
    except OSError:
        pass  # reported above as a missing file

    # Targets: one that could not be measured is MISSING, and that is a failure.
    try:
        with open(os.path.join(d, "report_targets.csv"), newline="") as f:
            for row in csv.DictReader(f):
                if row.get("component") in required and row.get("holds") == "MISSING":
                    problems.append("target MISSING (not measured): %s: %s" % (
                        row.get("component"), row.get("check")))
    except OSError:
        pass

    # run.json: machine and configuration; complete unless the report says INCOMPLETE.
    try:
        run = json.load(open(os.path.join(d, "run.json")))
        lacking = [k for k in RUN_KEYS if k not in run]
        if lacking:
            problems.append("run.json: lacks %s" % ", ".join(lacking))
        # The roofs must bound the measurements.
        roof_check = run.get("report", {}).get("roof_check", "MISSING")
        if "roofline" in required and roof_check != "PASS":
            problems.append("roof check %s: a measured point is above a roof by more than 5%% "
                            "(or the check is missing)" % roof_check)
        # Every peer's threads are recorded; one not on kacc's threads is marked in the report.
        peers = run.get("peers", {})
        if "blas" in required and not isinstance(peers.get("openblas", {}).get("threads"), int):
            problems.append("run.json: peers.openblas.threads is not recorded")
        for name, peer in peers.items():
            if not peer.get("equal_threads") and "NOT EQUAL THREADS" not in md:
                problems.append("peer %s did not run on kacc's threads but report.md does not "
                                "say NOT EQUAL THREADS" % name)
        asked = run.get("report", {}).get("accuracy_cost", {})
        if asked.get("asked"):
            problems += accuracy_cost_problems(d, md, asked.get("kernels", []), required)
        complete = run.get("report", {}).get("complete", True)
        if not complete:
            if "INCOMPLETE" not in md:
                problems.append("run.json says incomplete but report.md is not marked INCOMPLETE")
            if not a.allow_incomplete:
                problems.append("the report is marked INCOMPLETE (run interrupted)")
        elif "INCOMPLETE" in md:
            problems.append("report.md says INCOMPLETE but run.json says complete")
    except (OSError, ValueError) as e:
        if not any(pr.startswith("run.json") for pr in problems):
            problems.append("run.json: %s" % e)

    if problems:
        print("check_report: %s is not a whole report (%d problems):" % (d, len(problems)))
        for pr in problems:
            print("  - " + pr)
        return 1
    present = [c for c, files in COMPONENTS.items()
               if all(os.path.isfile(os.path.join(d, f)) for f in files)]
    print("check_report: %s is whole; components present: %s; reported MISSING: %s" % (
        d, ", ".join(present) or "none",
        ", ".join(c for c in COMPONENTS if c not in present) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
