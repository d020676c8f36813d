"""The distributed section: kacc::mpi::spmv on a 3-D 7-point stencil under mpirun with 1, 2 and
4 ranks (scripts/lib/mpi-spmv-series), where its time goes (pack, interior rows, exposed wait
for the halo, boundary rows), how much of the halo exchange the interior rows hid, and its time
relative to one process; issue 21's target. Reads mpi_spmv.csv and mpi_pingpong.csv
(kacc-perf-mpi-spmv)."""
from collections import defaultdict

from .data import fmt_num, fmt_ratio, median, num

# Issue 21: with 4 ranks, the distributed SpMV within this factor of one process's time on a
# stencil of at least TARGET_ROWS rows.
TARGET_RATIO = 1.15
TARGET_RANKS = 4
TARGET_ROWS = 2_000_000
FORMATS = ["fp64", "fp32"]


def _runs(rows):
    """{(format, ranks): {round: row}} of mpi_spmv.csv's rows."""
    out = defaultdict(dict)
    for r in rows or []:
        ranks = num(r.get("ranks"))
        if ranks is not None:
            out[(r.get("format", ""), int(ranks))][r.get("round", "0")] = r
    return out


def table(rows):
    """One dict per (format, ranks): medians over the rounds of each phase, and the time
    relative to one process as the median and range of the per-round ratios (each round ran
    every rank count once, one after the other)."""
    runs = _runs(rows)
    out = []
    for (fmt, ranks), by_round in sorted(runs.items(), key=lambda kv: (
            FORMATS.index(kv[0][0]) if kv[0][0] in FORMATS else 9, kv[0][1])):
        one = runs.get((fmt, 1), {})
        ratios = [num(r.get("spmv_s")) / num(one[k].get("spmv_s"))
                  for k, r in by_round.items() if k in one and num(r.get("spmv_s")) and
                  num(one[k].get("spmv_s"))]

        def col(name, rs=by_round.values()):
            return median([num(r.get(name)) for r in rs])

        first = next(iter(by_round.values()))
        out.append({
            "format": fmt, "ranks": ranks, "threads_per_rank": int(num(
                first.get("threads_per_rank")) or 0), "rows": int(num(first.get("rows")) or 0),
            "ghosts": int(num(first.get("max_ghosts")) or 0), "rounds": len(by_round),
            "spmv": col("spmv_s"), "pack": col("pack_s"), "interior": col("interior_s"),
            "wait": col("wait_s"), "boundary": col("boundary_s"),
            "exchange": col("exchange_alone_s"), "overlap": col("overlap"),
            "gbs": col("gbs_per_rank"),
            "ratio": median(ratios) if ratios and ranks > 1 else None,
            "ratio_range": (min(ratios), max(ratios)) if ratios and ranks > 1 else None,
            "wrong": any(r.get("check") != "ok" for r in by_round.values())})
    return out


def targets(rows):
    """Issue 21's speed target per value format, in report_targets.csv's form: MISSING when the
    run with TARGET_RANKS ranks or with one rank is absent."""
    t = {(r["format"], r["ranks"]): r for r in table(rows)}
    one_threads = {f: r["threads_per_rank"] for (f, k), r in t.items() if k == 1}
    out = []
    for fmt in FORMATS:
        r = t.get((fmt, TARGET_RANKS))
        ratio = r["ratio"] if r else None
        note = ""
        if r:
            note = "%d ranks x %d thread(s) against 1 x %s, %s rows" % (
                TARGET_RANKS, r["threads_per_rank"], one_threads.get(fmt, "?"),
                "{:,}".format(r["rows"]).replace(",", " "))
            if r["rows"] < TARGET_ROWS:
                note += ", fewer than the target's 2 M: not the target's problem"
        out.append({"component": "mpi",
                    "check": "distributed SpMV, %s values: %d ranks over one process" % (
                        fmt, TARGET_RANKS),
                    "measured": "%.3f" % ratio if ratio is not None else "NaN",
                    "target": "<=%.2f" % TARGET_RATIO,
                    "holds": "MISSING" if ratio is None else
                    "yes" if ratio <= TARGET_RATIO and not r["wrong"] else "no",
                    "note": note})
    return out


def _us(v):
    return fmt_num(v * 1e6) if v is not None else "NaN"


def section(d, rows, pingpong, cpus, level):
    """Writes '## Past one node: distributed SpMV (MPI)' into the document d. cpus: the
    machine's logical CPUs (None when unknown), to mark oversubscribed runs."""
    d.h(2, "Past one node: distributed SpMV (MPI)")
    if not rows:
        d.p("MISSING: no kacc-perf-mpi-spmv results (mpi_spmv.csv) in this folder.")
        return
    t = table(rows)
    if level == "quick":
        d.p("**Level quick**: a small grid, a check of the pipeline; the product fits in cache "
            "and the exchange's latency dominates, so the ratios mean little.")
    d.p("`kacc::mpi::spmv` on a 3-D 7-point stencil of %s rows partitioned into slabs of rows, "
        "run under mpiexec with 1, 2 and 4 ranks in %d round(s), the order of the rank counts "
        "rotating from round to round; medians over the rounds of each run's median over its "
        "repetitions, each the slowest rank's time. Phases: packing the halo and posting the "
        "exchange, the interior rows (which need no ghost entry), the wait for the halo left "
        "exposed after them, the boundary rows. *Hidden*: 1 − exposed wait / the exchange "
        "timed alone (1: the interior rows hid all of it). *vs one process*: the per-round "
        "ratio to the 1-rank run of the same round, median (range). GB/s per rank: the bytes "
        "a rank's product reads and writes over its time." % (
            "{:,}".format(t[0]["rows"]).replace(",", " "), max(r["rounds"] for r in t)))

    def threads(r):
        total = r["ranks"] * r["threads_per_rank"]
        if cpus and total > cpus:
            return "%d (on %d CPUs)" % (total, cpus)
        return str(total)

    d.table(["Values", "Ranks × threads", "Threads in all", "SpMV ms", "vs one process",
             "Pack µs", "Interior ms", "Exposed wait µs", "Boundary µs", "Exchange alone µs",
             "Hidden", "GB/s per rank"],
            [[r["format"], "%d × %d" % (r["ranks"], r["threads_per_rank"]), threads(r),
              fmt_num(r["spmv"] * 1e3) if r["spmv"] else "NaN",
              "1" if r["ranks"] == 1 else "NaN" if r["ratio"] is None else "%s (%.2f-%.2f)" % (
                  fmt_ratio(r["ratio"]), r["ratio_range"][0], r["ratio_range"][1]),
              _us(r["pack"]), fmt_num(r["interior"] * 1e3) if r["interior"] else "NaN",
              _us(r["wait"]), _us(r["boundary"]),
              "(no ghosts)" if r["ghosts"] == 0 else _us(r["exchange"]),
              "" if r["ghosts"] == 0 else "NaN" if r["overlap"] is None else
              "%.1f%%" % (100 * r["overlap"]), fmt_num(r["gbs"])] for r in t],
            ["l", "l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "r"])
    if any(r["wrong"] for r in t):
        d.p("**WRONG**: a run's row sums differed from the stencil's (see mpi_spmv.csv).")
    pp = [r for r in pingpong or [] if num(r.get("ranks")) == 2] or list(pingpong or [])
    by_size = defaultdict(list)
    for r in pp:
        by_size[int(num(r.get("message_bytes")) or 0)].append(r)
    if by_size:
        d.p("Ping-pong between ranks 0 and 1 (the α and β of docs/scaling-model.md), medians "
            "over the rounds:")
        d.table(["Message bytes", "One way µs", "GB/s"],
                [[str(size), _us(median([num(r.get("one_way_s")) for r in rs])),
                  fmt_num(median([num(r.get("gbs")) for r in rs]))]
                 for size, rs in sorted(by_size.items())], ["r", "r", "r"])
    else:
        d.p("MISSING: no ping-pong results (mpi_pingpong.csv): no run had 2 ranks.")
    d.p("Every run: `mpi_spmv.csv`, `mpi_pingpong.csv`; the mpiexec commands: `logs/mpi.log`.")
