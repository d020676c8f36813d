"""The sparse-solve section: CB-GMRES (kacc::solve::gmres with the Krylov basis stored in each
format, seed 003) on kacc-perf-gmres's generated problem: iterations, time to solution and
speed-up over the fp64 basis per format, beside the speed-up a bandwidth model predicts from
the bytes each iteration moves (and, where this run measured them, the conversion rates).
Reads gmres.csv (kacc-perf-gmres)."""
from collections import defaultdict

from .data import fmt_num, fmt_ratio, median, num

# Formats as kacc-perf-gmres names its cases, in the table's order.
BASES = ["fp64", "fp32", "int32s", "fp16", "bf16", "int16s"]
# fp64 vectors a GMRES iteration streams besides the basis, in passes over n doubles: SpMV's
# x and y (2), the Jacobi apply's r, diagonal and z (3), the two Gram-Schmidt passes' reads of
# w (2) and updates of w (4), and the normalisation (2).
VECTOR_PASSES = 13
# Bytes per stored matrix entry: an fp64 value and a 32-bit column index.
MATRIX_ENTRY_BYTES = 12


def iteration_model(row):
    """(bytes, basis values read) per iteration for one gmres.csv row: a cycle of L
    iterations (L = iterations / cycles) orthogonalises the j-th new vector against j basis
    vectors twice (classical Gram-Schmidt and its reorthogonalisation), reading them once in
    each GEMV with Vᵀ and once in each with V: 4 j basis vectors, on average 2 (L + 1) per
    iteration, and stores one."""
    n, nnz = num(row.get("rows")), num(row.get("nnz"))
    s, its = num(row.get("basis_bytes")), num(row.get("iterations"))
    cycles = (num(row.get("restarts")) or 0) + 1
    if not (n and nnz and s and its):
        return None, None
    length = its / cycles
    basis_values = n * 2 * (length + 1)
    return (basis_values + n) * s + nnz * MATRIX_ENTRY_BYTES + VECTOR_PASSES * 8 * n, basis_values


def rows_by_case(rows):
    """{case: [rows]} in the order the cases first appear."""
    out = defaultdict(list)
    for r in rows or []:
        out[r.get("case", "")].append(r)
    return out


def table(rows, read_bandwidth, conversion):
    """One dict per case: iterations, restarts, converged, median time, measured and
    predicted speed-ups over fp64 (bytes alone; bytes and conversion where the read bandwidth
    and the case's conversion rate are known), measured over predicted."""
    cases = rows_by_case(rows)
    out = []
    for case, rs in cases.items():
        last = rs[-1]
        bytes_, values = iteration_model(last)
        out.append({"case": case, "iterations": last.get("iterations"),
                    "restarts": last.get("restarts"), "converged": last.get("converged"),
                    "reason": last.get("reason"), "rounds": len(rs),
                    "time": median([num(r.get("time_s")) for r in rs]), "bytes": bytes_,
                    "values": values, "its": num(last.get("iterations"))})
    base = next((r for r in out if r["case"] == "fp64"), None)

    def seconds(r, with_conversion):
        """Predicted time to solution, in units of the read bandwidth when it is unknown."""
        if r["bytes"] is None or r["its"] is None:
            return None
        per = r["bytes"] / (read_bandwidth or 1.0)
        if with_conversion:
            if not read_bandwidth:
                return None
            rate = conversion.get(r["case"])
            if r["case"] != "fp64":
                if not rate:
                    return None
                per = max(per, r["values"] / rate)
        return r["its"] * per

    for r in out:
        r["speedup"] = r["predicted"] = r["predicted_conversion"] = r["measured_over"] = None
        if base and base["time"] and r["time"] and r["converged"] == "yes" and \
                base["converged"] == "yes":
            r["speedup"] = base["time"] / r["time"]
        if base:
            for key, conv in (("predicted", False), ("predicted_conversion", True)):
                t64, t = seconds(base, conv), seconds(r, conv)
                r[key] = t64 / t if t64 and t else None
        best = r["predicted_conversion"] or r["predicted"]
        if r["speedup"] and best:
            r["measured_over"] = r["speedup"] / best
    return out


def section(d, rows, read_bandwidth, conversion, level):
    """Writes '## Sparse solve: GMRES with a compressed Krylov basis' into the document d.
    read_bandwidth in bytes/s (None when not measured), conversion {storage: values/s}."""
    d.h(2, "Sparse solve: GMRES with a compressed Krylov basis")
    if not rows:
        d.p("MISSING: no kacc-perf-gmres results (gmres.csv) in this folder.")
        return
    first = rows[0]
    if level == "quick":
        d.p("**Level quick**: a small grid, a check of the pipeline; the basis fits in cache, "
            "so the speed-ups mean little.")
    d.p("`kacc::solve::gmres<F>` (CB-GMRES, seed 003) on a 3-D convection-diffusion matrix of "
        "%s rows and %s entries, GMRES(%s), Jacobi on the right, ‖b − Ax‖/‖b‖ ≤ 1e-10, the "
        "Krylov basis stored in F and every operation in fp64; %s round(s) with the formats in "
        "a new random order each, median times. Predicted speed-up: fp64's predicted time to "
        "solution over F's, each iterations × bytes per iteration / read bandwidth, the bytes "
        "per iteration being the basis reads of both Gram-Schmidt passes (2 (L + 1) vectors on "
        "average for cycles of L iterations) and one stored vector in F, plus the matrix "
        "(%d bytes per entry) and %d passes over fp64 vectors; *with conversion*: an "
        "iteration takes at least the basis values read divided by F's measured conversion "
        "rate%s. Measured / predicted near 1: the iterations are as bandwidth-bound as the "
        "model says; below 1: something else (conversion, cache, latency) costs time." % (
            first.get("rows", "?"), first.get("nnz", "?"), first.get("restart", "?"),
            max(len(rs) for rs in rows_by_case(rows).values()), MATRIX_ENTRY_BYTES,
            VECTOR_PASSES,
            "" if read_bandwidth else " (not computed: no STREAM read bandwidth in this run)"))
    t = table(rows, read_bandwidth, conversion)
    order = {c: i for i, c in enumerate(BASES)}
    t.sort(key=lambda r: order.get(r["case"], len(order)))
    if not any(r["case"] == "fp64" for r in t):
        d.p("MISSING: the fp64 basis did not run, so there is no speed-up to show.")
    d.table(["Basis", "Iterations", "Restarts", "Converged", "Median s", "Speed-up over fp64",
             "Predicted (bytes)", "Predicted (with conversion)", "Measured / predicted"],
            [[r["case"], r["iterations"], r["restarts"],
              "yes" if r["converged"] == "yes" else "no (%s)" % r["reason"],
              fmt_num(r["time"]), fmt_ratio(r["speedup"]), fmt_ratio(r["predicted"]),
              fmt_ratio(r["predicted_conversion"]),
              "%.2f" % r["measured_over"] if r["measured_over"] else "NaN"] for r in t],
            ["l", "r", "r", "l", "r", "r", "r", "r", "r"])
    d.p("Speed-up above 1× is faster than the fp64 basis. NaN: not measured, not converged, "
        "or (with conversion) no conversion rate of F in this run. Every solve: `gmres.csv`.")
