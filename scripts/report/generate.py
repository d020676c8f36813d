"""Writes report.md, report.html, the report's tables (CSV), plots (PNG) and run.json into a
result folder that the perf programs have filled (or partly filled).

  PYTHONPATH=scripts python3 -m report.generate DIR [--steps FILE] [--build-dir B] [--level L]
      [--space S] [--threads N] [--incomplete REASON] [--elapsed SECONDS] [--error-budget E,..]
      [--accumulators]
"""
import argparse
import datetime
import json
import os
import sys

from . import accuracy_cost, gmres, machine, mpi, plots, recommend, solve, summary
from .data import fmt_num, fmt_ratio, load_json, num, read_csv, write_csv
from .document import Document

# What each program is expected to write (the contract shared with the perf programs).
COMPONENTS = [
    ("roofline", "kacc-roofline", ["roofline.csv", "roofline_stream.csv", "roofline_summary.csv",
                                   "roofline.json", "roofline.png"]),
    ("blas", "kacc-perf-blas", ["blas_speed.csv", "blas_accuracy.csv", "blas_summary.csv",
                                "blas.json"]),
    ("spmv", "kacc-perf-spmv", ["spmv_speed.csv", "spmv_accuracy.csv", "spmv_summary.csv",
                                "spmv.json"]),
    ("solve", "kacc-perf-solve", ["solve_speed.csv", "solve_gemm.csv", "solve_summary.csv",
                                  "solve.json"]),
    ("gmres", "kacc-perf-gmres", ["gmres.csv", "gmres_summary.csv", "gmres.json"]),
    ("mpi", "kacc-perf-mpi-spmv", ["mpi_spmv.csv", "mpi_pingpong.csv", "mpi.json"]),
]
BLAS_KERNELS = ["gemv", "dot", "trsv"]
KERNEL_ORDER = {k: i for i, k in enumerate(["dot", "gemv", "trsv", "spmv"])}
COMPONENTS_HEADER = ["component", "program", "status", "seconds", "detail", "missing_files"]


def read_steps(path):
    """{component: {status, rc, seconds, detail}} from the kacc-report step log."""
    steps = {}
    if path and os.path.isfile(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 6:
                    steps[parts[0]] = {"program": parts[1], "status": parts[2], "rc": parts[3],
                                       "seconds": parts[4], "detail": parts[5]}
    return steps


def component_rows(out, steps):
    rows = []
    for comp, program, files in COMPONENTS:
        missing = [f for f in files if not os.path.isfile(os.path.join(out, f))]
        s = steps.get(comp)
        if s is None:  # generator run directly on a folder: judge by the files alone
            status = "MISSING" if len(missing) == len(files) else "ok" if not missing else "partial"
            detail = "no output" if status == "MISSING" else ""
            seconds = ""
        else:
            status = s["status"]
            detail = s["detail"]
            seconds = s["seconds"]
            if status == "ok" and missing:
                status = "partial"
        if missing and status not in ("MISSING",):
            detail = (detail + "; " if detail else "") + "MISSING files: " + ", ".join(missing)
        rows.append({"component": comp, "program": program, "status": status, "seconds": seconds,
                     "detail": detail, "missing_files": " ".join(missing)})
    return rows


def _cell_ratio(v):
    return fmt_ratio(v)


def _err(v):
    if v is None:
        return "NaN"
    return ("%.1e×" % v) if v >= 1000 or v < 0.01 else ("%.3g×" % v)


def _pct(v):
    return "NaN" if v is None else "%.0f%%" % (100 * v)


def _count(v):
    return "NaN" if v is None else str(v)


def _csv_cell(v):
    """A summary value as the CSV writes it: a missing measurement is NaN, never blank or 0."""
    if v is None:
        return "NaN"
    return fmt_num(v, 4) if isinstance(v, float) else v


KERNEL_NAMES = {"gemv": "GEMV", "dot": "DOT", "trsv": "TRSV", "spmv": "SpMV"}
_LAYOUT_WORDS = {"L": "LayoutLeft", "R": "LayoutRight"}
_TRANS_WORDS = {"gemv": {"N": "y = A x", "T": "y = Aᵀ x"},
                "trsv": {"N": "solve A x = b", "T": "solve Aᵀ x = b"}}


def _shape_words(kernel, shape):
    """'L T' as 'LayoutLeft, y = Aᵀ x'; DOT's '-' as 'x · y'; SpMV classes as they are."""
    if kernel == "spmv":
        return shape
    if shape == "-":
        return "x · y" if kernel == "dot" else ""
    words = _TRANS_WORDS.get(kernel, {})
    return ", ".join(_LAYOUT_WORDS.get(p, words.get(p, p)) for p in shape.split())


def _tag(reason):
    """The reason's first words ('cache-resident', 'latency-bound', 'error budget')."""
    return reason.split(":")[0].split(" (")[0]


# A speed-up this far beyond the byte ratio is not explained by moving fewer bytes.
BEYOND_BYTE_RATIO = 1.5


def _beyond_bytes(r):
    return r["pays_off"] == "yes" and r.get("byte_ratio") and \
        r["speedup_vs_fp64"] > BEYOND_BYTE_RATIO * r["byte_ratio"]


def recommendation_section(d, recs, budgets, rates, level):
    """The first screen: per kernel shape and error budget, what to store the data in."""
    d.h(2, "What to use on this machine")
    if level == "quick":
        d.p("**Level quick**: one small size per kernel, a check of the pipeline; run "
            "`scripts/kacc-report` without `--quick` before deciding.")
    if not recs:
        d.p("MISSING: no BLAS or SpMV timings with a kacc fp64 baseline, so there is nothing to "
            "recommend.")
        return
    labels = [recommend.budget_label(b) for b in budgets]
    by = {(r["kernel"], r["shape"], r["budget"]): r for r in recs}
    shapes = list(dict.fromkeys((r["kernel"], r["shape"]) for r in recs))
    shapes.sort(key=lambda ks: (["gemv", "dot", "trsv", "spmv"].index(ks[0])
                                if ks[0] in KERNEL_NAMES else 9, ks[1]))

    def cell(r):
        if r is None:
            return "NaN"
        if r["pays_off"] == "yes":
            return "**%s** %.2f×%s, error %.0e" % (
                plots.display_config(r["choice"]), r["speedup_vs_fp64"],
                " †" if _beyond_bytes(r) else "", r["error"])
        tag = _tag(r["reason"])
        return "fp64: %s" % ("none within budget" if tag == "error budget" else tag)

    d.p("Per kernel and relative error budget: the kacc configuration (arithmetic<-storage) "
        "with the shortest time whose worst measured error is within the budget, with its "
        "speed-up over kacc fp64 and its error; **fp64** where no compressed format is at "
        "least %.2f× faster, with the reason." % recommend.PAYS_OFF_SPEEDUP)
    d.table(["Kernel", "Shape"] + ["error ≤ " + b if b != "fp64-level" else "fp64-level"
                                   for b in labels],
            [[KERNEL_NAMES.get(k, k), _shape_words(k, sh)] + [cell(by.get((k, sh, b)))
                                                             for b in labels]
             for k, sh in shapes], ["l", "l"] + ["l"] * len(labels))
    why = []
    for k, sh in shapes:
        seen = set()
        for b in labels:
            r = by.get((k, sh, b))
            if r is None or r["pays_off"] == "yes" or r["reason"] in seen or \
                    _tag(r["reason"]) == "error budget":
                continue
            seen.add(r["reason"])
            why.append("%s %s (%s): %s" % (
                KERNEL_NAMES.get(k, k), _shape_words(k, sh),
                b if b == "fp64-level" else "error ≤ " + b, r["reason"]))
    if why:
        d.p("Why no compressed format pays off:")
        d.items(why)
    kernels = list(dict.fromkeys(
        "%s, %s: %s" % (r["shape"], plots.display_config(r["choice"]), " / ".join(r["kernels"]))
        for r in recs if r["kernel"] == "spmv" and r["pays_off"] == "yes" and r["kernels"]))
    if kernels:
        d.p("SpMV kernel (implementation and kernel per matrix) of each recommended "
            "configuration: " + "; ".join(kernels) + ".")
    if any(_beyond_bytes(r) for r in recs):
        d.p("† more than %g× the byte ratio (the most that moving fewer bytes explains): fp64 "
            "is not bandwidth-bound there (cache, latency) or the timing is noisy; see the "
            "model check." % BEYOND_BYTE_RATIO)
    conv = ", ".join("%s %s values/s" % (st, fmt_num(v)) for st, v in sorted(rates.items()))
    d.p("fp64-level: within %g× fp64's own error; fp32: plain fp32 storage and arithmetic. "
        "Error: worst median relative error over the kernel's accuracy runs. Time: BLAS at each "
        "kernel's largest size, SpMV as geometric mean over the matrices of a class. Conversion "
        "throughput: %s. All rows with their reasons: `report_recommendation.csv`." % (
            recommend.FP64_LEVEL_FACTOR, conv or "not measured in this run"))


def model_section(d, model, rates):
    """Speed-up predicted from bytes and bandwidth (and conversion rate) beside the measured."""
    d.h(2, "Model check: predicted against measured speed-up")
    if not model:
        d.p("MISSING: no kernel with a kacc fp64 time, a byte count and a read bandwidth.")
        return
    d.p("Predicted: time = bytes moved / measured STREAM read bandwidth%s; speed-up = "
        "fp64's predicted time over the configuration's. Measured / predicted near 1: the "
        "machine behaves as the bandwidth model says; well below 1: something other than "
        "bytes (conversion, latency, cache) sets the time; above 1: fp64 is not bandwidth-bound "
        "(e.g. cache-resident)." % (", or values / measured conversion rate when that is longer"
                                    if rates else " (no conversion throughput in this run)"))
    d.table(["Kernel", "Shape", "Config", "Byte ratio", "Predicted", "Measured",
             "Measured / predicted", "Conversion (needed) values/s"],
            [[KERNEL_NAMES.get(r["kernel"], r["kernel"]), _shape_words(r["kernel"], r["shape"]),
              plots.display_config(r["config"]), "%.2f" % r["byte_ratio"],
              fmt_ratio(r["predicted_speedup"]), fmt_ratio(r["measured_speedup"]),
              "%.2f" % r["measured_over_predicted"],
              "%s (%s)" % (fmt_num(r["conversion_values_per_s"]),
                           fmt_num(r["required_values_per_s"]))
              if r["conversion_values_per_s"] else "not measured (%s)" % fmt_num(
                  r["required_values_per_s"]) if r["required_values_per_s"] else "no conversion"]
             for r in model],
            ["l", "l", "l", "r", "r", "r", "r", "r"])
    d.p("All rows: `report_model.csv`.")


def accuracy_cost_section(d, cost, kernels, missing, figures):
    """Per accumulator and storage format: time relative to plain fp64, error vs exact."""
    d.h(2, "Accuracy versus cost")
    if not kernels and not cost:
        d.p("Not asked for in this run: `scripts/kacc-report` runs the programs with "
            "`--accumulators` (at the default and `--full` levels).")
        return
    for k, why in missing:
        d.p("MISSING (%s): %s." % (KERNEL_NAMES.get(k, k), why))
    if not cost:
        return
    d.p("What a more accurate sum costs: each accumulator (`Acc`) of \"Accuracy as a choice\" "
        "and each storage format, with fp64 arithmetic; pick the fastest row whose error your "
        "problem tolerates. Time: relative to plain fp64 (geometric mean over the shapes at the "
        "largest size; SpMV over the matrices and kernels). Error: worst median relative error "
        "against the exact result of the fp64 data, on uniform/normal data (SpMV: the "
        "matrices) and on %s (`%s`), where plain fp64 loses every digit. 0: the correctly "
        "rounded result; NaN: not measured (the accumulators run on fp64 and fp32 storage; fp16, "
        "bf16 and int16s cannot hold GenDot's exponent range). All rows: "
        "`report_accuracy_cost.csv`." % (
            accuracy_cost.ILL_WORDS, accuracy_cost.ILL))
    d.table(["Kernel", "Config (arith<-storage+acc)", "Accumulator", "Time vs fp64",
             "Error", "Error, cond 1e16"],
            [[KERNEL_NAMES.get(r["kernel"], r["kernel"]), r["config"], r["accumulator"],
              fmt_ratio(r["time_vs_fp64"]), fmt_num(r["error"], 2), fmt_num(r["error_ill"], 2)]
             for r in cost], ["l", "l", "l", "r", "r", "r"])
    if "plot_accuracy_cost" in figures:
        d.img(figures["plot_accuracy_cost"], "Accuracy versus cost, one panel per kernel: "
              "relative error against time relative to plain fp64; colour: storage format, "
              "marker: accumulator; filled: %s, hollow: ordinary data" % accuracy_cost.ILL_WORDS)


def build(args):
    out = os.path.abspath(args.dir)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    steps = read_steps(args.steps)
    comps = component_rows(out, steps)

    rf = read_csv(os.path.join(out, "roofline.csv"))
    stream_rows = read_csv(os.path.join(out, "roofline_stream.csv"))
    # The accumulator variants and the ill-conditioned data feed only "Accuracy versus cost".
    bs, bs_acc = accuracy_cost.split(read_csv(os.path.join(out, "blas_speed.csv")))
    ba, ba_acc = accuracy_cost.split(read_csv(os.path.join(out, "blas_accuracy.csv")), True)
    ss, ss_acc = accuracy_cost.split(read_csv(os.path.join(out, "spmv_speed.csv")))
    sa, sa_acc = accuracy_cost.split(read_csv(os.path.join(out, "spmv_accuracy.csv")), True)
    stream = summary.stream_numbers(stream_rows)
    roofline_json, _ = load_json(os.path.join(out, "roofline.json"))
    roofs = summary.roofs(roofline_json)

    summ = summary.blas_summary(bs, ba) + summary.spmv_summary(ss, sa)
    summ.sort(key=lambda r: (KERNEL_ORDER.get(r["kernel"].split()[0], 9), r["kernel"],
                             r["time_vs_fp64"] if r["time_vs_fp64"] is not None else 9))
    mpi_rows = read_csv(os.path.join(out, "mpi_spmv.csv"))
    targ = summary.targets([(c, read_csv(os.path.join(out, c + "_summary.csv")))
                            for c, _, _ in COMPONENTS]) + mpi.targets(mpi_rows)

    settings = {"level": args.level, "space": args.space, "threads": args.threads,
                "complete": not args.incomplete, "incomplete_reason": args.incomplete or "",
                "elapsed_s": args.elapsed, "generated": datetime.datetime.now().isoformat(
                    timespec="seconds"), "components": {c["component"]: c["status"]
                                                        for c in comps},
                "roof_check": roofs.get("check", "MISSING")}
    info = machine.gather(root, args.build_dir, out, settings, [c for c, _, _ in COMPONENTS])
    # Accuracy versus cost is asked for by kacc-report's --accumulators or by a program that
    # ran with it; then every kernel of that program must be in the section.
    cost_kernels = []
    for comp, kernels in (("blas", ["dot", "gemv"]), ("spmv", ["spmv"])):
        prog = info.get("programs", {}).get(comp)
        if args.accumulators or (isinstance(prog, dict) and prog.get("accumulators") == "yes"):
            cost_kernels += kernels
    cost = accuracy_cost.table(*[(a or []) + (b or []) for a, b in (
        (bs, bs_acc), (ba, ba_acc), (ss, ss_acc), (sa, sa_acc))])
    cost_missing = accuracy_cost.missing(cost, cost_kernels)
    info.setdefault("report", {})["accuracy_cost"] = {
        "asked": bool(cost_kernels), "kernels": cost_kernels,
        "missing": ["%s: %s" % m for m in cost_missing]}
    llc = max((int(num(p.get("last_level_cache_bytes")) or 0)
               for p in info.get("programs", {}).values() if isinstance(p, dict)), default=0)
    budgets = recommend.parse_budgets(args.error_budget)
    rates = recommend.conversion_rates(bs)
    shapes = recommend.blas_shapes(bs, ba, llc) + recommend.spmv_shapes(ss, sa, llc)
    recs = recommend.recommend(shapes, budgets, rates)
    model = recommend.model_rows(shapes, rates)

    # Plots: each expected one is drawn, or named MISSING with the reason.
    figures, missing_plots = {}, []

    def plot(name, fn, why):
        path = None
        try:
            path = fn()
        except Exception as e:  # a plot must never sink the report
            why = "plotting failed: %s: %s" % (type(e).__name__, e)
        if path:
            figures[name] = path
        else:
            missing_plots.append((name + ".png", why))

    plot("plot_roofline", lambda: plots.roofline(rf, roofs, out), "no roofline.csv data")
    for k in BLAS_KERNELS:
        plot("plot_blas_" + k, lambda k=k: plots.blas_kernel(k, bs, ba, budgets, out),
             "no %s rows in blas_speed.csv or blas_accuracy.csv" % k)
    plot("plot_spmv", lambda: plots.spmv(ss, sa, budgets, llc, out),
         "no spmv_speed.csv or spmv_accuracy.csv data")
    if cost_kernels or cost:
        plot("plot_accuracy_cost", lambda: accuracy_cost.plot(cost, out),
             "no accumulator timings (--accumulators) in blas_speed.csv or spmv_speed.csv")
    with open(os.path.join(out, "report_plots.json"), "w") as f:
        json.dump({"max_series": plots.MAX_SERIES, "figures": plots.PANEL_SERIES,
                   "format_colors": plots.FORMAT_COLORS}, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(info, f, indent=2, sort_keys=False)
        f.write("\n")

    # Tables as CSV.
    fmt_summ = [{k: _csv_cell(v) for k, v in r.items()} for r in summ]
    write_csv(os.path.join(out, "report_summary.csv"), summary.SUMMARY_HEADER, fmt_summ)
    write_csv(os.path.join(out, "report_targets.csv"), summary.TARGETS_HEADER, targ)
    write_csv(os.path.join(out, "report_components.csv"), COMPONENTS_HEADER, comps)
    write_csv(os.path.join(out, "report_recommendation.csv"), recommend.RECOMMENDATION_HEADER,
              [{k: _csv_cell(v) for k, v in r.items()} for r in recs])
    write_csv(os.path.join(out, "report_model.csv"), recommend.MODEL_HEADER,
              [{k: _csv_cell(v) for k, v in r.items()} for r in model])
    write_csv(os.path.join(out, "report_accuracy_cost.csv"), accuracy_cost.HEADER,
              [{k: _csv_cell(v) for k, v in r.items()} for r in cost])

    # ------------------------------------------------------------------ the document
    d = Document()
    host = info["host"]
    d.h(1, "kacc performance report: %s" % host)
    if args.incomplete:
        d.p("**INCOMPLETE**: %s. Everything below comes from the steps that finished; "
            "missing parts are marked MISSING." % args.incomplete)
    gpu = ("; GPU: " + ", ".join(info["gpus"])) if info["gpus"] else ""
    d.p("%s%s; Kokkos %s, execution space **%s**, %s threads; level **%s**; kacc %s (%s); %s." % (
        info["cpu"], gpu, info["kokkos_version"], info["execution_space"] or "?",
        info["threads"] or info["concurrency"] or "?", args.level, info["kacc_version"],
        info["git_revision"], settings["generated"]))
    if any(isinstance(p, dict) and p.get("synthetic_fixture")
           for p in info.get("programs", {}).values()):
        d.p("**Synthetic fixture**: the results come from perf_tests/testdata/"
            "make_report_fixture.py's toy model, not from measurements.")
    recommendation_section(d, recs, budgets, rates, args.level)
    d.h(2, "This run")
    meas = []
    if stream:
        meas.append("STREAM " + ", ".join("%s %.1f GB/s" % (k, stream[k])
                                          for k in ("read", "copy", "triad") if k in stream) +
                    " (copy and triad as McCalpin counts them, without write-allocate)")
    if "bandwidth" in roofs:
        meas.append("bandwidth roof %.1f GB/s (highest memory traffic, write-allocate included)"
                    % roofs["bandwidth"])
    peaks = [(a, roofs[a]) for a in ("fp64", "fp32") if a in roofs]
    if peaks:
        meas.append("FMA peak (register-resident probe) " +
                    ", ".join("%s %.1f GFLOP/s" % p for p in peaks))
    d.p("Measured in this run: " + ("; ".join(meas) if meas else "MISSING (no roofline data)") +
        ".")
    if roofs.get("check") == "FAIL":
        d.p("**Roof check: FAIL**: a measured point is above a roof by more than 5%, so a roof "
            "does not bound the measurements (see the roofline targets).")
    elif roofs.get("check") == "PASS":
        d.p("Roof check: PASS (no point more than 5% above its roof).")
    else:
        d.p("Roof check: MISSING (no roofline.json with a roof check).")

    peer_lines = []
    for name, peer in sorted(info.get("peers", {}).items()):
        line = "%s on %s threads" % (name, peer.get("threads", "?"))
        if peer.get("cpus"):
            line += " (CPUs %s)" % peer["cpus"]
        if peer.get("dgemv_speedup_all_threads_over_one"):
            line += ", dgemv %s× faster than on one thread" % peer[
                "dgemv_speedup_all_threads_over_one"]
        if not peer.get("equal_threads"):
            line += ": **NOT EQUAL THREADS** (%s)" % (peer.get("note") or "unknown")
        peer_lines.append(line)
    if peer_lines:
        d.p("Peers: " + "; ".join(peer_lines) + ".")

    d.h(2, "Summary")
    if summ:
        d.table(["Kernel", "Config (arith<-storage)", "Threads", "Time vs fp64",
                 "Time vs best peer", "Best peer (its threads)", "Read bandwidth",
                 "Error vs fp32"],
                [[r["kernel"], r["config"], _count(r["threads"]), _cell_ratio(r["time_vs_fp64"]),
                  _cell_ratio(r["time_vs_best_peer"]), r["best_peer"] or "none",
                  _pct(r["frac_read_bw"]), _err(r["error_vs_fp32"])] for r in summ],
                ["l", "l", "r", "r", "r", "l", "r", "r"])
        d.p("Time ratios: below 1× is faster than the reference (kacc in fp64; the fastest peer "
            "for the same problem). Read bandwidth: fraction of the measured STREAM read "
            "bandwidth. Error: median relative error against an exact (MPFR) result, relative to "
            "plain fp32. BLAS kernels at their largest size; SpMV as geometric mean over the "
            "matrices. Threads: kacc's; a peer that did not run on as many is marked NOT EQUAL "
            "THREADS. NaN: not measured. All rows: `report_summary.csv`.")
    else:
        d.p("MISSING: no BLAS or SpMV results in this folder, so there is nothing to summarise.")

    model_section(d, model, rates)

    d.h(2, "Targets")
    if targ:
        held = sum(1 for t in targ if t["holds"] == "yes")
        missing = sum(1 for t in targ if t["holds"] == "MISSING")
        d.p("**%d of %d** stated targets hold on this machine%s." % (
            held, len(targ), "; **%d MISSING** (not measured, so not met)" % missing
            if missing else ""))
        verdict = {"yes": "holds", "no": "does NOT hold", "MISSING": "MISSING"}
        d.items("%s **%s**: %s: measured %s, target %s%s" % (
            t["component"], verdict[t["holds"]], t["check"], t["measured"], t["target"],
            " (%s)" % t["note"] if t["note"] else "") for t in targ)
    else:
        d.p("MISSING: no `*_summary.csv` with stated targets was written.")

    d.h(2, "Components")
    d.table(["Component", "Program", "Status", "Seconds", "Detail"],
            [[c["component"], c["program"], c["status"].upper() if c["status"] != "ok" else "ok",
              c["seconds"], c["detail"]] for c in comps], ["l", "l", "l", "r", "l"])
    for c in comps:
        if c["missing_files"]:
            d.p("MISSING from %s (%s): %s." % (c["component"], c["status"], ", ".join(
                "`%s`" % f for f in c["missing_files"].split())))
    for name, why in missing_plots:
        d.p("MISSING `%s`: %s." % (name, why))
    if info.get("problems"):
        for f, why in info["problems"].items():
            d.p("PROBLEM `%s`: %s." % (f, why))

    d.h(2, "Roofline and bandwidth")
    if "plot_roofline" in figures:
        d.img(figures["plot_roofline"], "Roofline, one panel per arithmetic precision: median "
              "GFLOP/s against FLOP per byte moved, per storage format, under the measured roofs "
              "(FMA probe peak; bandwidth roof = highest STREAM traffic)")
    if stream_rows:
        hdr = list(stream_rows[0].keys())
        d.table(hdr, [[r.get(h, "") for h in hdr] for r in stream_rows])
    if os.path.isfile(os.path.join(out, "roofline.png")):
        d.p("The roofline program's own plot: [roofline.png](roofline.png).")

    d.h(2, "BLAS: GEMV, DOT, TRSV")
    for k in BLAS_KERNELS:
        if "plot_blas_" + k in figures:
            d.img(figures["plot_blas_" + k], "%s: time relative to kacc fp64 per configuration "
                  "(one panel per shape; red bar: the byte-ratio limit; grey: peers), and the "
                  "error per configuration (green: error budgets)" % k.upper())

    d.h(2, "SpMV")
    if "plot_spmv" in figures:
        d.img(figures["plot_spmv"], "SpMV: time relative to kacc fp64 per matrix class (red "
              "bar: the byte-ratio limit; grey: Kokkos Kernels), and the error per configuration")

    accuracy_cost_section(d, cost, cost_kernels, cost_missing, figures)

    solve.section(d, read_csv(os.path.join(out, "solve_speed.csv")),
                  read_csv(os.path.join(out, "solve_gemm.csv")), args.level)
    gmres.section(d, read_csv(os.path.join(out, "gmres.csv")),
                  stream["read"] * 1e9 if "read" in stream else None, rates, args.level)
    mpi.section(d, mpi_rows, read_csv(os.path.join(out, "mpi_pingpong.csv")),
                num(info.get("cpu_logical_cores")), args.level)

    d.h(2, "Files")
    files = sorted(f for f in os.listdir(out) if f.endswith((".csv", ".json", ".png")))
    d.p("Every table is in this folder as CSV: " + ", ".join("`%s`" % f for f in files
                                                              if f.endswith(".csv")) + ".")
    d.p("Machine and configuration: `run.json` (merges the programs' JSON files). "
        "Compare two result folders with `scripts/kacc-compare A B`.")

    d.h(2, "Configuration")
    d.table(["Item", "Value"], [[k, _short(info[k])] for k in (
        "host", "cpu", "cpu_logical_cores", "memory", "gpus", "execution_space", "threads",
        "kokkos_version", "kokkos_backends", "kokkos_dir", "compiler", "build_type", "cxx_flags",
        "kacc_version", "git_revision", "level", "environment")])

    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(d.markdown())
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write(d.html("kacc performance report: %s" % host))
    return out, summ, targ, comps


def _short(v):
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v) or "none"
    if isinstance(v, dict):
        return ", ".join("%s=%s" % kv for kv in v.items()) or "none"
    return str(v) if v not in (None, "") else "unknown"


def main(argv=None):
    p = argparse.ArgumentParser(description="Write the kacc report for a result folder.")
    p.add_argument("dir")
    p.add_argument("--steps", help="step log written by kacc-report")
    p.add_argument("--build-dir")
    p.add_argument("--level", default="standard")
    p.add_argument("--space", default="")
    p.add_argument("--threads", default="")
    p.add_argument("--incomplete", default="", help="reason the run is incomplete")
    p.add_argument("--elapsed", type=float, default=None)
    p.add_argument("--accumulators", action="store_true",
                   help="the programs ran with --accumulators: the accuracy-versus-cost section "
                        "is required (MISSING where its data is absent)")
    p.add_argument("--error-budget", action="append", default=[], metavar="E[,E...]",
                   help="relative error budgets to recommend for, besides fp64-level, 1e-10 "
                        "and 1e-6")
    args = p.parse_args(argv)
    if not os.path.isdir(args.dir):
        sys.exit("report: no such folder: %s" % args.dir)
    try:
        recommend.parse_budgets(args.error_budget)
    except ValueError as e:
        sys.exit("report: --error-budget: %s" % e)
    out, summ, targ, comps = build(args)
    held = sum(1 for t in targ if t["holds"] == "yes")
    print("report: %s/report.md (%d summary rows, %d/%d targets hold, components: %s)" % (
        out, len(summ), held, len(targ), ", ".join("%s %s" % (c["component"], c["status"])
                                                   for c in comps)))


if __name__ == "__main__":
    main()
