"""The one-screen summary: for each kernel and storage format, time relative to fp64 and to the
best peer, fraction of read bandwidth and error relative to fp32; plus the stated targets."""
from collections import defaultdict

from .data import formats_of, geomean, is_kacc, is_pure, num, storage_of

SUMMARY_HEADER = ["kernel", "config", "storage", "time_vs_fp64", "time_vs_best_peer", "best_peer",
                  "threads", "peer_threads", "frac_read_bw", "error_vs_fp32", "basis"]


def _threads(row):
    """Threads a speed row's implementation ran on (None when the file does not say)."""
    t = num(row.get("threads"))
    return int(t) if t else None


def peer_label(name, threads, kacc_threads):
    """A peer's name with its thread count, marked when it did not run on kacc's threads."""
    if threads is None:
        return name + " (threads unknown)"
    label = "%s (%d thread%s)" % (name, threads, "" if threads == 1 else "s")
    if kacc_threads is not None and threads != kacc_threads:
        label += " NOT EQUAL THREADS"
    return label


def _label(kernel, layout, trans, variants):
    if len(variants[kernel]) <= 1:
        return kernel
    extra = ", ".join(x for x in (layout, trans) if x)
    return "%s (%s)" % (kernel, extra) if extra else kernel


def _error_ratio(acc_rows, match_keys, config):
    """Geometric mean over matching accuracy rows of median_rel_error(config) / (fp32)."""
    if not acc_rows:
        return None
    groups = defaultdict(dict)
    for r in acc_rows:
        key = tuple(r.get(k, "") for k in match_keys)
        groups[key][r.get("config", "")] = num(r.get("median_rel_error"))
    ratios = []
    for by_cfg in groups.values():
        mine = by_cfg.get(config)
        if mine is None:  # the accuracy harness may spell the config differently
            same = [v for c, v in by_cfg.items() if storage_of(c) == storage_of(config)
                    and formats_of(c) == formats_of(config)]
            mine = same[0] if same else None
        ref = [v for c, v in by_cfg.items() if is_pure(c, "fp32") and v is not None]
        if mine is None or not ref:
            continue
        if ref[0] == 0:
            if mine == 0:
                ratios.append(1.0)
            continue
        ratios.append(max(mine / ref[0], 1e-300))
    return geomean(ratios)


def blas_summary(speed, accuracy):
    """Rows of the summary for the BLAS kernels, at each kernel's largest size."""
    if not speed:
        return []
    variants = defaultdict(set)
    for r in speed:
        variants[r["kernel"]].add((r.get("layout", ""), r.get("trans", "")))
    cases = defaultdict(list)  # (kernel, layout, trans, m, n) -> rows
    for r in speed:
        cases[(r["kernel"], r.get("layout", ""), r.get("trans", ""), r.get("m", ""),
               r.get("n", ""))].append(r)

    def size(case):
        m, n = num(case[3]) or 1, num(case[4]) or 1
        return m * n

    out = []
    seen = set()
    for case in sorted(cases, key=lambda c: (c[0], c[1], c[2], -size(c))):
        kernel, layout, trans = case[:3]
        rows = cases[case]
        fp64 = [num(r["time_median_s"]) for r in rows
                if is_kacc(r.get("impl")) and is_pure(r.get("config"), "fp64")]
        peers = [(num(r["time_median_s"]), "%s %s" % (r.get("impl"), r.get("config")),
                  _threads(r))
                 for r in rows if not is_kacc(r.get("impl")) and num(r.get("time_median_s"))]
        best_peer = min(peers, key=lambda p: p[0]) if peers else None
        for r in rows:
            if not is_kacc(r.get("impl")):
                continue
            key = (kernel, layout, trans, r.get("config"))
            if key in seen:  # only the largest size of each kernel/config goes in the summary
                continue
            seen.add(key)
            t = num(r.get("time_median_s"))
            # kacc-perf-blas measures TRSV's accuracy per triangle (trsv_L, trsv_U).
            acc = [a for a in (accuracy or []) if a.get("kernel") == kernel or
                   a.get("kernel", "").startswith(kernel + "_")]
            m, n = r.get("m", ""), r.get("n", "")
            basis = "n=%s" % n if not m or m in ("0", "1") else "%sx%s" % (m, n)
            out.append({
                "kernel": _label(kernel, layout, trans, variants),
                "config": r.get("config", ""),
                "storage": storage_of(r.get("config")),
                "time_vs_fp64": t / fp64[0] if t and fp64 and fp64[0] else None,
                "time_vs_best_peer": t / best_peer[0] if t and best_peer else None,
                "best_peer": peer_label(best_peer[1], best_peer[2], _threads(r))
                if best_peer else "",
                "threads": _threads(r),
                "peer_threads": best_peer[2] if best_peer else None,
                "frac_read_bw": num(r.get("frac_read_bw")),
                "error_vs_fp32": _error_ratio(acc, ("kernel", "distribution", "n"),
                                              r.get("config")),
                "basis": "time at largest size (%s); error geomean over sizes" % basis,
            })
    return out


def spmv_summary(speed, accuracy):
    """Rows of the summary for SpMV: geometric means over the matrices."""
    if not speed:
        return []
    by_matrix = defaultdict(list)
    for r in speed:
        by_matrix[(r.get("matrix"), r.get("kernel", ""))].append(r)
    kernels = {r.get("kernel", "") for r in speed}
    acc = defaultdict(list)
    stats = defaultdict(lambda: {"vs64": [], "peer": [], "peer_names": set(), "bw": [],
                                 "threads": set(), "peer_threads": set()})
    for (matrix, kernel), rows in by_matrix.items():
        fp64 = [num(r["time_median_s"]) for r in rows
                if is_kacc(r.get("impl")) and is_pure(r.get("config"), "fp64")]
        # Peers name their own kernel (KokkosSparse::spmv): compare with them per matrix.
        peers = [(num(r["time_median_s"]), "%s %s" % (r.get("impl"), r.get("config")),
                  _threads(r))
                 for r in speed if r.get("matrix") == matrix and not is_kacc(r.get("impl")) and
                 num(r.get("time_median_s"))]
        best = min(peers, key=lambda p: p[0]) if peers else None
        for r in rows:
            if not is_kacc(r.get("impl")):
                continue
            s = stats[(kernel, r.get("config", ""))]
            t = num(r.get("time_median_s"))
            if t and fp64 and fp64[0]:
                s["vs64"].append(t / fp64[0])
            elif num(r.get("speedup_vs_fp64")):
                s["vs64"].append(1.0 / num(r.get("speedup_vs_fp64")))
            s["threads"].add(_threads(r))
            if t and best:
                s["peer"].append(t / best[0])
                s["peer_names"].add(peer_label(best[1], best[2], _threads(r)))
                s["peer_threads"].add(best[2])
            if num(r.get("frac_read_bw")) is not None:
                s["bw"].append(num(r.get("frac_read_bw")))
    for a in accuracy or []:
        acc[a.get("matrix")].append(a)
    out = []
    nmat = len({m for m, _ in by_matrix})
    for (kernel, config), s in sorted(stats.items()):
        label = "spmv" if len(kernels) <= 1 or not kernel else "spmv (%s)" % kernel
        bw = sorted(s["bw"])
        out.append({
            "kernel": label,
            "config": config,
            "storage": storage_of(config),
            "time_vs_fp64": geomean(s["vs64"]),
            "time_vs_best_peer": geomean(s["peer"]),
            "best_peer": ", ".join(sorted(s["peer_names"])),
            "threads": _one(s["threads"]),
            "peer_threads": _one(s["peer_threads"]),
            "frac_read_bw": bw[len(bw) // 2] if bw else None,
            "error_vs_fp32": _error_ratio(accuracy, ("matrix",), config),
            "basis": "geomean over %d matrices (bandwidth: median)" % nmat,
        })
    return out


def _one(values):
    """The single value of a set, or None when there are none or several."""
    values = {v for v in values if v is not None}
    return values.pop() if len(values) == 1 else None


TARGETS_HEADER = ["component", "check", "measured", "target", "holds", "note"]


def targets(component_rows):
    """Stated targets from the *_summary.csv files: {component: rows} -> flat rows.

    holds is yes, no or MISSING: a target whose measurement is missing (NaN, blank) or
    whose program said MISSING is never met.
    """
    out = []
    for comp, rows in component_rows:
        for r in rows or []:
            holds = (r.get("holds") or "").strip().lower()
            if num(r.get("measured")) is None or holds == "missing":
                verdict = "MISSING"
            elif holds in ("yes", "true", "1", "y"):
                verdict = "yes"
            elif holds in ("no", "false", "0", "n"):
                verdict = "no"
            else:
                verdict = "MISSING"
            out.append({"component": comp, "check": r.get("check", ""),
                        "measured": r.get("measured", ""), "target": r.get("target", ""),
                        "holds": verdict, "note": r.get("note", "")})
    return out


def stream_numbers(rows):
    """{'read': GB/s, 'copy': ..., 'triad': ...} from roofline_stream.csv, whatever its shape."""
    res = {}
    if not rows:
        return res
    cols = list(rows[0].keys())
    bw_cols = [c for c in cols if "gb" in c.lower()]
    name_cols = [c for c in cols if c not in bw_cols]
    for r in rows:
        for c in name_cols:
            v = (r.get(c) or "").lower()
            for k in ("read", "copy", "triad"):
                if v == k and bw_cols and num(r.get(bw_cols[0])) is not None:
                    res[k] = max(res.get(k, 0), num(r.get(bw_cols[0])))
    if not res:  # wide form: one column per kernel
        for c in cols:
            for k in ("read", "copy", "triad"):
                if k in c.lower():
                    vals = [num(r.get(c)) for r in rows if num(r.get(c)) is not None]
                    if vals:
                        res[k] = max(vals)
    return res


def roofs(roofline_json):
    """The roofs kacc-roofline measured, from roofline.json: {'bandwidth': GB/s, 'fp64': GFLOP/s,
    'fp32': GFLOP/s, 'check': 'PASS'/'FAIL'}; absent keys when the file lacks them."""
    info = roofline_json or {}
    out = {}
    for key, name in (("bandwidth_roof_gbs", "bandwidth"), ("fma_peak_fp64_gflops", "fp64"),
                      ("fma_peak_fp32_gflops", "fp32")):
        v = num(info.get(key))
        if v is not None:
            out[name] = v
    if info.get("roof_check") in ("PASS", "FAIL"):
        out["check"] = info["roof_check"]
    return out
