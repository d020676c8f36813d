"""What to use: per kernel shape, the kacc storage format that minimises time within an error
budget, the reason when no compressed format pays off, and the bandwidth model beside the
measurement.

The rules (perf_tests/check_recommendation.py recomputes them from the CSVs on its own):
- a shape is a BLAS kernel with its layout and transpose at its largest size, or an SpMV matrix
  class (see spmv_class); candidates are kacc's configurations, each with its median time
  (SpMV: geometric mean over the class's matrices, best kernel per configuration);
- a configuration's error is its worst median relative error over the accuracy rows of the
  kernel (every distribution, size and triangle; SpMV: every matrix of the class, or every
  matrix measured when the class has none); one without an accuracy row is never recommended;
- budget "fp64-level" admits an error up to FP64_LEVEL_FACTOR times fp64's own; a number admits
  a relative error up to it;
- the fastest admitted configuration is recommended when it is not fp64 and at least
  PAYS_OFF_SPEEDUP times faster than fp64; otherwise fp64 is, with the reason.
"""
import math
from collections import defaultdict

from .data import formats_of, geomean, is_kacc, is_pure, num, storage_of

FP64_LEVEL_FACTOR = 10.0
# Below this a speed-up is within the run-to-run spread of a shared machine: not worth a switch.
PAYS_OFF_SPEEDUP = 1.10
DEFAULT_BUDGETS = ["fp64-level", 1e-10, 1e-6]
# A kernel whose fp64 run takes less than this is dominated by launch and synchronisation.
LATENCY_SECONDS = 20e-6
# fp64 reaching less than this fraction of the read bandwidth is not bandwidth-bound.
BANDWIDTH_BOUND_FRACTION = 0.25
STORAGE_BYTES = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "int32s": 4, "int16s": 2,
                 "int8s": 1}
RECOMMENDATION_HEADER = ["kernel", "shape", "budget", "choice", "storage", "speedup_vs_fp64",
                         "error", "pays_off", "reason"]
MODEL_HEADER = ["kernel", "shape", "config", "byte_ratio", "predicted_speedup",
                "conversion_values_per_s", "required_values_per_s", "measured_speedup",
                "measured_over_predicted"]


def budget_label(budget):
    return budget if isinstance(budget, str) else "%.0e" % budget


def parse_budgets(text_values):
    """The default budgets plus the user's (--error-budget 1e-8,1e-4), sorted tight to loose."""
    extra = []
    for text in text_values or []:
        for part in filter(None, (p.strip() for p in text.split(","))):
            value = float(part)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError("an error budget is a positive relative error, got %r" % part)
            extra.append(value)
    numbers = sorted({b for b in DEFAULT_BUDGETS[1:] + extra})
    return [DEFAULT_BUDGETS[0]] + numbers


def _bytes_moved(row):
    """Bytes one call moves, by the program's own count (gbs x time); None when not given."""
    gbs, t = num(row.get("gbs")), num(row.get("time_median_s"))
    return gbs * 1e9 * t if gbs and t else None


def _read_bandwidth(rows):
    """The STREAM read bandwidth (bytes/s) the program measured, from gbs / frac_read_bw."""
    vals = [num(r.get("gbs")) / num(r.get("frac_read_bw")) for r in rows
            if num(r.get("gbs")) and num(r.get("frac_read_bw"))]
    return sorted(vals)[len(vals) // 2] * 1e9 if vals else None


def conversion_rates(speed):
    """Measured conversion throughput, values per second per storage format, from the
    blas_speed.csv rows whose kernel starts with 'convert' (config names the storage, m x n
    values per call; m blank or 1 for a vector). {} when the run has none."""
    rates = defaultdict(list)
    for r in speed or []:
        if not (r.get("kernel") or "").lower().startswith("convert"):
            continue
        t = num(r.get("time_median_s"))
        values = (num(r.get("m")) or 1) * (num(r.get("n")) or 0)
        if t and values:
            rates[storage_of(r.get("config"))].append(values / t)
    return {s: max(v) for s, v in rates.items()}


def _errors(acc_rows):
    """{config: worst median relative error} over the rows given."""
    worst = {}
    for r in acc_rows:
        e = num(r.get("median_rel_error"))
        cfg = r.get("config", "")
        if e is not None:
            worst[cfg] = max(worst.get(cfg, 0.0), e)
    return worst


def _error_of(errors, config):
    """The error of a speed config in an accuracy table that may spell it differently."""
    if config in errors:
        return errors[config]
    same = [e for c, e in errors.items() if formats_of(c) == formats_of(config)]
    return max(same) if same else None


def blas_shapes(speed, accuracy, llc_bytes):
    """One shape per (kernel, layout, trans) at its largest size, with kacc's candidates."""
    rows = [r for r in speed or [] if is_kacc(r.get("impl")) and
            not (r.get("kernel") or "").lower().startswith("convert")]
    cases = defaultdict(list)
    for r in rows:
        cases[(r.get("kernel", ""), r.get("layout", ""), r.get("trans", ""))].append(r)
    shapes = []
    for (kernel, layout, trans), rs in sorted(cases.items()):
        size = max((num(r.get("m")) or 1) * (num(r.get("n")) or 1) for r in rs)
        at = [r for r in rs if (num(r.get("m")) or 1) * (num(r.get("n")) or 1) == size]
        acc = [a for a in accuracy or [] if a.get("kernel", "") == kernel or
               a.get("kernel", "").startswith(kernel + "_")]
        errors = _errors(acc)
        m, n = at[0].get("m", ""), at[0].get("n", "")
        basis = "n=%s" % n if not m or m in ("0", "1") else "%sx%s" % (m, n)
        candidates = [{"config": r.get("config", ""), "time": num(r.get("time_median_s")),
                       "bytes": _bytes_moved(r), "frac_read_bw": num(r.get("frac_read_bw")),
                       "gbs": num(r.get("gbs")), "values": _values(r, size),
                       "error": _error_of(errors, r.get("config", ""))} for r in at]
        shape = " ".join(x for x in (layout, trans) if x and x != "-") or "-"
        shapes.append({"kernel": kernel, "shape": shape, "basis": basis,
                       "candidates": candidates, "read_bw": _read_bandwidth(at),
                       "llc_bytes": llc_bytes})
    return shapes


def spmv_class(matrix, fp64_bytes, llc_bytes):
    """The class a matrix's recommendation is made for: the generated stencil and power-law
    matrices each are one (regular and irregular rows, out of cache); a matrix file is
    'cache-resident' when its fp64 CSR bytes fit in the last-level cache, else 'out of cache'."""
    if matrix.startswith("stencil"):
        return "stencil (regular rows)"
    if matrix.startswith("power_law"):
        return "power law (irregular rows)"
    if llc_bytes and fp64_bytes and fp64_bytes <= llc_bytes:
        return "matrix files, cache-resident"
    return "matrix files, out of cache"


def spmv_shapes(speed, accuracy, llc_bytes):
    """One shape per matrix class; a configuration's time ratio to fp64 is the geometric mean
    over the class's matrices, each at the configuration's fastest kernel."""
    rows = [r for r in speed or [] if is_kacc(r.get("impl"))]
    best = {}  # (matrix, config) -> fastest row over kernels
    for r in rows:
        t = num(r.get("time_median_s"))
        key = (r.get("matrix", ""), r.get("config", ""))
        if t and (key not in best or t < num(best[key].get("time_median_s"))):
            best[key] = r
    matrices = sorted({m for m, _ in best})
    classes = defaultdict(list)
    for m in matrices:
        fp64 = [r for (mm, c), r in best.items() if mm == m and is_pure(c, "fp64")]
        if fp64:
            classes[spmv_class(m, _bytes_moved(fp64[0]), llc_bytes)].append((m, fp64[0]))
    shapes = []
    for cls, members in sorted(classes.items()):
        names = [m for m, _ in members]
        acc = [a for a in accuracy or [] if a.get("matrix") in names]
        # A class without accuracy rows (the generated matrices) takes every matrix's worst.
        errors = _errors(acc or accuracy or [])
        configs = sorted({c for (m, c) in best if m in names})
        t64 = geomean(num(r.get("time_median_s")) for _, r in members)
        candidates = []
        for c in configs:
            ratios = [num(best[(m, c)].get("time_median_s")) / num(r64.get("time_median_s"))
                      for m, r64 in members if (m, c) in best]
            if len(ratios) != len(members):
                continue  # not measured on every matrix of the class: not comparable
            byte_ratios = [(_bytes_moved(best[(m, c)]) or 0) / (_bytes_moved(r64) or 1)
                           for m, r64 in members]
            picked = [best[(m, c)] for m in names]
            candidates.append({
                "config": c, "time": t64 * geomean(ratios),
                "bytes": geomean(byte_ratios) * (geomean(_bytes_moved(r) for _, r in members)
                                                 or 0) or None,
                "frac_read_bw": _median([num(r.get("frac_read_bw")) for r in picked]),
                "gbs": _median([num(r.get("gbs")) for r in picked]),
                "values": geomean(num(r.get("nnz")) for r in picked),
                "error": _error_of(errors, c),
                "kernels": sorted({"%s %s" % (r.get("impl", ""), r.get("kernel", ""))
                                   for r in picked})})
        shapes.append({"kernel": "spmv", "shape": cls, "basis": "%d matrices: %s" % (
            len(names), ", ".join(names)), "candidates": candidates,
            "read_bw": _read_bandwidth([r for _, r in members]), "llc_bytes": llc_bytes,
            "t64": t64})
    return shapes


def _values(row, size):
    """Stored values one call reads: its bytes over the storage's bytes per value (both DOT
    vectors; GEMV's matrix), or the problem size when the program gives no byte count."""
    b, per = _bytes_moved(row), _bytes_per_value(row.get("config"))
    return b / per if b and per else size


def converts(config):
    """True when the configuration converts on load (arithmetic differs from storage)."""
    f = formats_of(config)
    return len(f) >= 2 and f[0] != f[-1]


def _median(values):
    v = sorted(x for x in values if x is not None)
    return v[len(v) // 2] if v else None


def _fp64(shape):
    return next((c for c in shape["candidates"] if is_pure(c["config"], "fp64")), None)


def _bytes_per_value(config):
    return STORAGE_BYTES.get(storage_of(config))


def required_rate(shape, config):
    """Values per second a conversion must reach to keep up with the read bandwidth."""
    b = _bytes_per_value(config)
    return shape["read_bw"] / b if shape.get("read_bw") and b else None


def why_not(shape, fastest, rates):
    """Why no compressed format pays off for this shape, from what the run measured."""
    base = _fp64(shape)
    t64 = base["time"] if base else None
    if shape.get("llc_bytes") and base and base["bytes"] and base["bytes"] <= shape["llc_bytes"]:
        return ("cache-resident: fp64 moves %s per call, within the %s last-level cache, so "
                "fewer bytes from memory do not shorten it" % (
                    _size(base["bytes"]), _size(shape["llc_bytes"])))
    if t64 is not None and t64 < LATENCY_SECONDS:
        return ("latency-bound: an fp64 call takes %.1f µs, so launch and synchronisation, not "
                "bytes, set the time" % (t64 * 1e6))
    if base and base["frac_read_bw"] is not None and base["frac_read_bw"] < \
            BANDWIDTH_BOUND_FRACTION:
        return ("latency-bound: fp64 reaches only %.0f%% of the read bandwidth, so the kernel "
                "waits on dependences, not on memory" % (100 * base["frac_read_bw"]))
    if fastest is not None:
        st = storage_of(fastest["config"])
        need = required_rate(shape, fastest["config"])
        have = rates.get(st) if converts(fastest["config"]) else None
        if have and need and have < need:
            return ("conversion-bound: %s converts %s values/s, below the %s values/s that the "
                    "read bandwidth needs" % (st, _rate(have), _rate(need)))
        if converts(fastest["config"]) and base and fastest["gbs"] and base["gbs"] and \
                fastest["gbs"] < 0.6 * base["gbs"]:
            return ("conversion-bound (inferred; no conversion measurement in this run): %s "
                    "moves its bytes at %.1f GB/s against fp64's %.1f GB/s" % (
                        fastest["config"], fastest["gbs"], base["gbs"]))
        return ("no cause identified in this run's data: %s is %.2f× fp64's time" % (
            fastest["config"], fastest["time"] / t64 if t64 else float("nan")))
    return "no compressed format was measured"


def recommend(shapes, budgets, rates):
    """One row per shape and budget (see the module's rules)."""
    out = []
    for shape in shapes:
        base = _fp64(shape)
        if base is None or not base["time"]:
            continue
        e64 = base["error"]
        for budget in budgets:
            limit = (e64 * FP64_LEVEL_FACTOR if e64 is not None else None) \
                if budget == "fp64-level" else budget
            compressed = [c for c in shape["candidates"] if c["time"] and
                          not is_pure(c["config"], "fp64")]
            admitted = [c for c in compressed if limit is not None and c["error"] is not None
                        and c["error"] <= limit]
            fastest = min(admitted, key=lambda c: c["time"]) if admitted else None
            row = {"kernel": shape["kernel"], "shape": shape["shape"],
                   "budget": budget_label(budget)}
            if fastest and base["time"] / fastest["time"] >= PAYS_OFF_SPEEDUP:
                choice, pays, reason = fastest, "yes", _pays_reason(shape, fastest, base)
            else:
                choice, pays = base, "no"
                if not admitted:
                    known = [c for c in compressed if c["error"] is not None]
                    tightest = min(known, key=lambda c: c["error"]) if known else None
                    reason = ("error budget: no compressed format is within %s (the most "
                              "accurate, %s, has %s)" % (
                                  _limit_text(budget, limit), tightest["config"],
                                  "%.1e" % tightest["error"]) if tightest else
                              "no accuracy data: no compressed format has an accuracy measurement")
                else:
                    reason = why_not(shape, fastest, rates)
            out.append(dict(row, choice=choice["config"], storage=storage_of(choice["config"]),
                            speedup_vs_fp64=base["time"] / choice["time"],
                            byte_ratio=base["bytes"] / choice["bytes"]
                            if base["bytes"] and choice["bytes"] else None,
                            error=choice["error"], pays_off=pays, reason=reason,
                            kernels=choice.get("kernels", [])))
    return out


def _limit_text(budget, limit):
    if budget == "fp64-level":
        return "%g× fp64's error (%s)" % (FP64_LEVEL_FACTOR, "%.1e" % limit if limit else "?")
    return "%.0e relative error" % budget


def _pays_reason(shape, chosen, base):
    ratio = base["bytes"] / chosen["bytes"] if base["bytes"] and chosen["bytes"] else None
    if ratio:
        return "moves %.2f× fewer bytes; reaches %.0f%% of that limit" % (
            ratio, 100 * (base["time"] / chosen["time"]) / ratio)
    return "faster than fp64"


def model_rows(shapes, rates):
    """Per shape and compressed configuration: speed-up predicted from bytes, the measured read
    bandwidth and (where measured) conversion throughput, beside the measured one."""
    out = []
    for shape in shapes:
        base = _fp64(shape)
        bw = shape.get("read_bw")
        if base is None or not base["time"] or not base["bytes"] or not bw:
            continue
        t64_model = base["bytes"] / bw
        for c in shape["candidates"]:
            if is_pure(c["config"], "fp64") or not c["time"] or not c["bytes"]:
                continue
            st = storage_of(c["config"])
            t_model = c["bytes"] / bw
            rate = rates.get(st) if converts(c["config"]) else None
            if rate and c.get("values"):
                t_model = max(t_model, c["values"] / rate)
            predicted = t64_model / t_model
            measured = base["time"] / c["time"]
            out.append({"kernel": shape["kernel"], "shape": shape["shape"],
                        "config": c["config"], "byte_ratio": base["bytes"] / c["bytes"],
                        "predicted_speedup": predicted,
                        "conversion_values_per_s": rate,
                        "required_values_per_s": required_rate(shape, c["config"])
                        if converts(c["config"]) else None,
                        "measured_speedup": measured,
                        "measured_over_predicted": measured / predicted})
    return out


def _size(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return "%.3g %s" % (b / scale, unit)
    return "%d B" % b


def _rate(v):
    return "%.3g G" % (v / 1e9) if v >= 1e9 else "%.3g M" % (v / 1e6)
