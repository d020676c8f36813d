"""Compare two result folders: time and error ratios B/A for the same kernel/config rows.

  scripts/kacc-compare DIR_A DIR_B [--all]
"""
import argparse
import json
import os
import sys
from collections import defaultdict

from .data import geomean, num, read_csv

# file, row key, aggregation key (sizes are folded into it), value column, what it is
TABLES = [
    ("roofline_stream.csv", None, None, None, "bandwidth"),
    ("blas_speed.csv", ("kernel", "impl", "config", "layout", "trans", "m", "n"),
     ("kernel", "impl", "config", "layout", "trans"), "time_median_s", "time"),
    ("spmv_speed.csv", ("matrix", "kernel", "impl", "config"), ("kernel", "impl", "config"),
     "time_median_s", "time"),
    ("blas_accuracy.csv", ("kernel", "config", "distribution", "n"), ("kernel", "config"),
     "median_rel_error", "error"),
    ("spmv_accuracy.csv", ("matrix", "config"), ("config",), "median_rel_error", "error"),
    ("solve_speed.csv", ("n", "kappa", "sigma", "variant"), ("variant",), "time_median_s",
     "time"),
    ("solve_gemm.csv", ("n", "variant"), ("variant",), "time_median_s", "time"),
    ("gmres.csv", ("case", "round", "rows"), ("case",), "time_s", "time"),
]


def _describe(d):
    try:
        run = json.load(open(os.path.join(d, "run.json")))
    except (OSError, ValueError):
        return d
    return "%s  [%s; %s, %s threads; kacc %s; level %s]" % (
        d, run.get("cpu", "?"), run.get("execution_space", "?"), run.get("threads", "?"),
        run.get("git_revision", "?"), run.get("level", "?"))


def _ratio(b, a):
    return b / a if a and b is not None and a > 0 else None


def _r(v):
    if v is None:
        return "-"
    mark = "  (B faster)" if v < 0.9 else "  (B slower)" if v > 1.1 else ""
    return "%.3f%s" % (v, mark)


def _e(v):
    if v is None:
        return "-"
    mark = "  (B more accurate)" if v < 0.5 else "  (B less accurate)" if v > 2 else ""
    return "%.3g%s" % (v, mark)


def print_table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip()  # noqa: E731
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def compare(a, b, show_all):
    print("A: " + _describe(a))
    print("B: " + _describe(b))
    found = False
    stream = [read_csv(os.path.join(d, "roofline_stream.csv")) for d in (a, b)]
    if all(stream):
        from .summary import stream_numbers
        sa, sb = stream_numbers(stream[0]), stream_numbers(stream[1])
        rows = [[k, "%.1f" % sa[k], "%.1f" % sb[k], "%.3f" % (sb[k] / sa[k])]
                for k in ("read", "copy", "triad") if k in sa and k in sb and sa[k]]
        if rows:
            found = True
            print("\nSTREAM bandwidth (GB/s)")
            print_table(["kernel", "A", "B", "B/A"], rows)
    for name, key, agg, col, what in TABLES[1:]:
        ta, tb = (read_csv(os.path.join(d, name)) for d in (a, b))
        if not ta or not tb:
            if ta or tb:
                print("\n%s: only in %s" % (name, "A" if ta else "B"))
            continue
        va = {tuple(r.get(k, "") for k in key): num(r.get(col)) for r in ta}
        vb = {tuple(r.get(k, "") for k in key): num(r.get(col)) for r in tb}
        common = [k for k in va if k in vb]
        if not common:
            print("\n%s: no rows in common" % name)
            continue
        found = True
        fmt = _r if what == "time" else _e
        label = "time B/A (<1: B faster)" if what == "time" else "error B/A (<1: B more accurate)"
        print("\n%s: %s, %d rows in common (%d only in A, %d only in B)" % (
            name, label, len(common), len(va) - len(common), len(vb) - len(common)))
        if show_all:
            rows = [list(k) + ["%.3g" % va[k] if va[k] is not None else "-",
                               "%.3g" % vb[k] if vb[k] is not None else "-",
                               fmt(_ratio(vb[k], va[k]))] for k in sorted(common)]
            print_table(list(key) + ["A", "B", "B/A"], rows)
        else:
            groups = defaultdict(list)
            for k in common:
                groups[tuple(k[key.index(g)] for g in agg)].append(_ratio(vb[k], va[k]))
            rows = [[x for x in g] + [len(v), fmt(geomean(v))] for g, v in sorted(groups.items())]
            print_table(list(agg) + ["rows", "B/A (geomean)"], rows)
    if not found:
        print("\nnothing to compare: neither folder has results in common")
        return 1
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="kacc-compare", description=(
        "Print time and error ratios B/A of two kacc result folders, side by side "
        "(the same machine before and after a change, or two machines)."))
    p.add_argument("a", metavar="DIR_A")
    p.add_argument("b", metavar="DIR_B")
    p.add_argument("--all", action="store_true", help="one line per size/matrix, not geomeans")
    args = p.parse_args(argv)
    for d in (args.a, args.b):
        if not os.path.isdir(d):
            sys.exit("kacc-compare: no such result folder: %s" % d)
    return compare(args.a, args.b, args.all)


if __name__ == "__main__":
    sys.exit(main())
