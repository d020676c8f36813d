#!/usr/bin/python3
"""Recomputes the report's recommendation from the perf programs' CSVs, independently of the
generator's code (scripts/report/recommend.py), and checks that report_recommendation.csv says
the same, and that it agrees with report_summary.csv.

  perf_tests/check_recommendation.py DIR

The rules, as README's "The report" states them: per BLAS kernel, layout and transpose at its
largest size, or per SpMV matrix class, among kacc's configurations, the fastest whose worst
median relative error is within the budget (fp64-level: 10x fp64's own error) is recommended
when it is not fp64 and at least 1.10x faster than fp64; otherwise fp64 is. Exit status 0 when
they agree, 1 with one line per disagreement. Standard library only.
"""
import csv
import json
import math
import os
import re
import sys

PAYS_OFF = 1.10
FP64_LEVEL = 10.0
TOKENS = re.compile(r"fp64|fp32|fp16|bf16|int\d+s", re.IGNORECASE)


def _rows(d, name):
    """A CSV's rows without the accumulator variants (config 'fp64+dd') and the ill-conditioned
    data ('cond1e16'): those belong to the accuracy-versus-cost section, not to the choice of a
    storage format."""
    path = os.path.join(d, name)
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        rows = [{k.strip(): (v or "").strip() for k, v in r.items() if k} for r in
                csv.DictReader(f)]
    return [r for r in rows if "+" not in r.get("config", "") and
            "cond1e16" not in (r.get("distribution"), r.get("matrix"))]


def _f(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _tokens(config):
    return [t.lower() for t in TOKENS.findall(config or "")]


def _is_fp64(config):
    t = _tokens(config)
    return bool(t) and set(t) == {"fp64"}


def _kacc(impl):
    return (impl or "kacc").lower().startswith("kacc")


def _geomean(values):
    v = [x for x in values if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def _worst_errors(rows):
    worst = {}
    for r in rows:
        e = _f(r.get("median_rel_error"))
        if e is not None:
            worst[r["config"]] = max(worst.get(r["config"], 0.0), e)
    return worst


def _error(worst, config):
    if config in worst:
        return worst[config]
    same = [e for c, e in worst.items() if _tokens(c) == _tokens(config)]
    return max(same) if same else None


def _choose(times, errors, budget):
    """(choice, speed-up) for {config: time}, {config: error} under a budget."""
    fp64 = next((c for c in times if _is_fp64(c)), None)
    if fp64 is None:
        return None
    e64 = errors.get(fp64)
    limit = (e64 * FP64_LEVEL if e64 is not None else None) if budget == "fp64-level" else \
        float(budget)
    ok = [c for c, t in times.items() if not _is_fp64(c) and t and limit is not None and
          errors.get(c) is not None and errors[c] <= limit]
    best = min(ok, key=lambda c: times[c]) if ok else None
    if best and times[fp64] / times[best] >= PAYS_OFF:
        return best, times[fp64] / times[best]
    return fp64, 1.0


def blas_cases(d):
    """{(kernel, shape): ({config: time}, {config: error})} at each shape's largest size."""
    speed = [r for r in _rows(d, "blas_speed.csv") if _kacc(r.get("impl")) and
             not r.get("kernel", "").lower().startswith("convert")]
    acc = _rows(d, "blas_accuracy.csv")
    cases = {}
    for key in {(r["kernel"], r.get("layout", ""), r.get("trans", "")) for r in speed}:
        rs = [r for r in speed if (r["kernel"], r.get("layout", ""), r.get("trans", "")) == key]
        size = lambda r: (_f(r.get("m")) or 1) * (_f(r.get("n")) or 1)  # noqa: E731
        top = max(size(r) for r in rs)
        times = {r["config"]: _f(r.get("time_median_s")) for r in rs if size(r) == top}
        worst = _worst_errors(a for a in acc if a["kernel"] == key[0] or
                              a["kernel"].startswith(key[0] + "_"))
        shape = " ".join(x for x in key[1:] if x and x != "-") or "-"
        cases[(key[0], shape)] = (times, {c: _error(worst, c) for c in times})
    return cases


def spmv_cases(d):
    speed = [r for r in _rows(d, "spmv_speed.csv") if _kacc(r.get("impl"))]
    acc = _rows(d, "spmv_accuracy.csv")
    llc = 0
    for name in ("blas.json", "spmv.json", "roofline.json"):
        try:
            with open(os.path.join(d, name)) as f:
                llc = max(llc, int(_f(json.load(f).get("last_level_cache_bytes")) or 0))
        except (OSError, ValueError):
            pass
    fastest = {}  # (matrix, config) -> (time, bytes)
    for r in speed:
        t = _f(r.get("time_median_s"))
        k = (r["matrix"], r["config"])
        if t and (k not in fastest or t < fastest[k][0]):
            fastest[k] = (t, (_f(r.get("gbs")) or 0) * 1e9 * t)
    classes = {}
    for (m, c), (t, b) in fastest.items():
        if not _is_fp64(c):
            continue
        if m.startswith("stencil"):
            cls = "stencil (regular rows)"
        elif m.startswith("power_law"):
            cls = "power law (irregular rows)"
        elif llc and b and b <= llc:
            cls = "matrix files, cache-resident"
        else:
            cls = "matrix files, out of cache"
        classes.setdefault(cls, []).append((m, t))
    cases = {}
    for cls, members in classes.items():
        names = {m for m, _ in members}
        t64 = _geomean(t for _, t in members)
        times = {}
        for c in {c for (m, c) in fastest if m in names}:
            ratios = [fastest[(m, c)][0] / t for m, t in members if (m, c) in fastest]
            if len(ratios) == len(members):
                times[c] = t64 * _geomean(ratios)
        class_acc = [a for a in acc if a["matrix"] in names] or acc
        worst = _worst_errors(class_acc)
        cases[("spmv", cls)] = (times, {c: _error(worst, c) for c in times})
    return cases


def problems(d):
    """Disagreements between report_recommendation.csv and the recomputed recommendation."""
    out = []
    written = _rows(d, "report_recommendation.csv")
    if not os.path.isfile(os.path.join(d, "report_recommendation.csv")):
        return ["report_recommendation.csv: missing"]
    budgets = list(dict.fromkeys(r["budget"] for r in written)) or ["fp64-level", "1e-10",
                                                                     "1e-06"]
    for required in ("fp64-level", "1e-10", "1e-06"):
        if required not in budgets:
            out.append("report_recommendation.csv: no rows for budget %s" % required)
    cases = dict(blas_cases(d))
    cases.update(spmv_cases(d))
    have = {(r["kernel"], r["shape"], r["budget"]): r for r in written}
    for (kernel, shape), (times, errors) in sorted(cases.items()):
        for b in budgets:
            want = _choose(times, errors, b)
            if want is None:
                continue
            got = have.pop((kernel, shape, b), None)
            where = "%s %s, budget %s" % (kernel, shape, b)
            if got is None:
                out.append("recommendation for %s: missing (expected %s)" % (where, want[0]))
                continue
            if got["choice"] != want[0]:
                out.append("recommendation for %s: report says %s, the CSVs give %s" % (
                    where, got["choice"], want[0]))
            elif abs((_f(got["speedup_vs_fp64"]) or 0) / want[1] - 1) > 0.01:
                out.append("recommendation for %s: speed-up %s, the CSVs give %.4g" % (
                    where, got["speedup_vs_fp64"], want[1]))
            if (got["pays_off"] == "yes") != (not _is_fp64(want[0])):
                out.append("recommendation for %s: pays_off=%s with choice %s" % (
                    where, got["pays_off"], want[0]))
    for k in have:
        out.append("recommendation for %s %s, budget %s: no such case in the CSVs" % k)
    out += _against_summary(d, written)
    return out


def _against_summary(d, written):
    """A recommended BLAS configuration's speed-up is 1 / its time_vs_fp64 in the summary."""
    out = []
    summary = _rows(d, "report_summary.csv")
    for r in written:
        if r["kernel"] == "spmv" or r["pays_off"] != "yes":
            continue
        parts = r["shape"].split()
        label = "%s (%s)" % (r["kernel"], ", ".join(parts)) if parts and r["shape"] != "-" \
            else r["kernel"]
        rows = [s for s in summary if s["config"] == r["choice"] and
                s["kernel"] in (label, r["kernel"])]
        t = _f(rows[0]["time_vs_fp64"]) if rows else None
        if t is None:
            out.append("summary has no time_vs_fp64 for recommended %s %s %s" % (
                r["kernel"], r["shape"], r["choice"]))
        elif abs(t * _f(r["speedup_vs_fp64"]) - 1) > 0.01:
            out.append("recommended %s %s %s: speed-up %s but the summary's time vs fp64 is %s"
                       % (r["kernel"], r["shape"], r["choice"], r["speedup_vs_fp64"], t))
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    found = problems(argv[1])
    for p in found:
        print("check_recommendation: " + p)
    if not found:
        print("check_recommendation: %s: the recommendation matches the CSVs" % argv[1])
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
