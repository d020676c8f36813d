"""The dense-solve section: gesv_ir (mixed-precision LU with iterative refinement) against
LAPACK's dgesv and dsgesv, per size, spectrum and condition number, as seed 004 tabulates it,
and kacc's GEMM against dgemm. Reads solve_speed.csv and solve_gemm.csv (kacc-perf-solve)."""
import math

from .data import fmt_num, num

# The columns of the table, in order: (variant as kacc-perf-solve names it, heading).
VARIANTS = [
    ("dsgesv", "dsgesv (LAPACK)"),
    ("ir fp32 classic openblas", "IR, fp32 LU (sgetrf)"),
    ("ir fp32 classic kacc-lu", "IR, fp32 LU (kacc)"),
    ("ir fp32 gmres openblas", "GMRES-IR, fp32 LU (sgetrf)"),
    ("ir fp32 gmres kacc-lu", "GMRES-IR, fp32 LU (kacc)"),
    ("ir fp16 gmres kacc-lu", "GMRES-IR, fp16 LU (kacc)"),
]
# Issue 17's accuracy target: a converged gesv_ir solve within this factor of dgesv's backward
# error.
BACKWARD_ERROR_FACTOR = 2.0


def claim_tolerance(n):
    """The backward error a converged solve promises: dsgesv's (and gesv_ir's default) test
    ||b - A x|| <= ||x|| ||A|| eps sqrt(n), eps = 2^-53, bounds ||b - A x|| / (||A|| ||x|| + ||b||)
    by eps sqrt(n)."""
    return 2.0**-53 * math.sqrt(n)


def wrong_claims(rows):
    """Rows whose solver reported success (converged, or dgesv's INFO = 0) with a solution that
    is not finite, or (a refinement that converged) with a backward error above the tolerance
    its convergence test promises."""
    out = []
    for r in rows or []:
        if r.get("outcome") not in ("converged", "direct"):
            continue
        be, n = num(r.get("backward_error")), num(r.get("n")) or 1
        if be is None or (r.get("outcome") == "converged" and be > claim_tolerance(n)):
            out.append(r)
    return out


def _kappa(k):
    """1e+08 as 1e8."""
    v = num(k)
    if v is None or v <= 0:
        return str(k)
    e = round(math.log10(v))
    return "1e%d" % e if abs(v - 10.0**e) <= 1e-9 * v else "%g" % v


def _cell(r, claims):
    """'0.57× (4)', '1.9× (4, 200) fell back: stagnation', '!' when the claim is wrong."""
    if r is None:
        return "NaN"
    ratio = num(r.get("vs_dgesv"))
    steps = r.get("outer_iterations", "")
    inner = r.get("inner_iterations", "0")
    it = "%s, %s" % (steps, inner) if inner not in ("", "0") else steps
    text = "%s (%s)" % ("NaN" if ratio is None else "%.2f×" % ratio, it)
    if r.get("outcome") != "converged":
        text += " %s: %s" % (r.get("outcome", "?").replace("_", " "),
                             r.get("reason", "?").replace("_", " "))
    if any(c is r for c in claims):
        text += " **!**"
    return text


def section(d, rows, gemm_rows, level):
    """Writes '## Dense solve' into the document d."""
    d.h(2, "Dense solve: mixed-precision LU and iterative refinement")
    if not rows and not gemm_rows:
        d.p("MISSING: no kacc-perf-solve results (solve_speed.csv, solve_gemm.csv) in this "
            "folder.")
        return
    if level == "quick":
        d.p("**Level quick**: n = 256, a check of the pipeline; the ratios mean little at this "
            "size.")
    claims = wrong_claims(rows)
    if rows:
        d.p("`kacc::solve::gesv_ir` (seed 004) against LAPACK's `dgesv` (fp64 LU) and `dsgesv` "
            "(fp32 LU, classic refinement, falls back to dgesv after 30 steps), both from "
            "OpenBLAS on kacc's threads, on A = U diag(σ) Vᵀ with random orthogonal U, V and σ "
            "from 1 to 1/κ: *geometric* (a fixed fraction of the spectrum below fp32's "
            "precision, the hard case for GMRES-IR) or *arithmetic* (only the last few σ "
            "small, seed 004's Figure 11). Cells: time relative to dgesv (below 1× is "
            "faster), then (refinement steps, GMRES iterations); a solve that did not converge "
            "says how it ended (*fell back*: solved again with fp64 factors, included in the "
            "time). **!**: the solver reported success but its solution is not finite, or its "
            "backward error exceeds the ε√n (ε = 2⁻⁵³) that its convergence test promises.")
        for n in sorted({int(num(r["n"]) or 0) for r in rows}):
            at_n = [r for r in rows if int(num(r["n"]) or 0) == n]
            by = {(r["sigma"], r["kappa"], r["variant"]): r for r in at_n}
            cases = list(dict.fromkeys((r["sigma"], r["kappa"]) for r in at_n))
            present = [v for v in VARIANTS if any(r["variant"] == v[0] for r in at_n)]
            d.h(3, "n = %d" % n)
            d.table(["σ", "κ", "dgesv s"] + [h for _, h in present],
                    [[sigma, _kappa(kappa),
                      fmt_num(num((by.get((sigma, kappa, "dgesv")) or {}).get("time_median_s")))]
                     + [_cell(by.get((sigma, kappa, v)), claims) for v, _ in present]
                     for sigma, kappa in cases], ["l", "r", "r"] + ["l"] * len(present))
        conv = [num(r.get("backward_error")) for r in rows
                if r.get("engine") != "lapack" and r.get("outcome") == "converged"]
        ref = [num(r.get("backward_error")) for r in rows if r.get("variant") == "dgesv"]
        conv = [v for v in conv if v is not None]
        ref = [v for v in ref if v is not None]
        if conv and ref:
            d.p("Backward error ‖b − Ax‖ / (‖A‖‖x‖ + ‖b‖) (∞-norms, fp64 residual) of the "
                "converged gesv_ir solves: %s to %s; dgesv's: %s to %s (issue 17's target: "
                "within %g× dgesv's on the same system)." % (
                    fmt_num(min(conv), 2), fmt_num(max(conv), 2), fmt_num(min(ref), 2),
                    fmt_num(max(ref), 2), BACKWARD_ERROR_FACTOR))
        for r in claims:
            be = num(r.get("backward_error"))
            d.p("**Reported success, wrong answer**: %s at n = %s, κ = %s (%s σ) said %s "
                "(%s steps) but %s (dgesv's backward error: %s)." % (
                    r["variant"], r["n"], _kappa(r["kappa"]), r["sigma"], r["outcome"],
                    r.get("outer_iterations", "?"),
                    "its solution is not finite" if be is None else
                    "its backward error is %s, above the ε√n = %s its test promises" % (
                        fmt_num(be, 2), fmt_num(claim_tolerance(num(r["n"]) or 1), 2)),
                    fmt_num(num(r.get("dgesv_backward_error")), 2)))
    if gemm_rows:
        ref = {r["n"]: num(r.get("gflops")) for r in gemm_rows if r.get("variant") == "dgemm"}
        d.p("GEMM (the LU's trailing update), C = A B with n × n matrices, GFLOP/s and ratio "
            "to OpenBLAS dgemm:")
        d.table(["n", "Variant", "GFLOP/s", "vs dgemm"],
                [[r["n"], r["variant"], fmt_num(num(r.get("gflops"))),
                  "NaN" if not ref.get(r["n"]) or num(r.get("gflops")) is None
                  else "%.2f×" % (num(r["gflops"]) / ref[r["n"]])] for r in gemm_rows],
                ["r", "l", "r", "r"])
    d.p("All rows, with backward errors and how each solve ended: `solve_speed.csv`, "
        "`solve_gemm.csv`.")
