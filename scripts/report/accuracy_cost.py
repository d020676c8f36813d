"""The accuracy-versus-cost section: for DOT, GEMV and SpMV, each accumulator (plain,
compensated, double_double, quad_double, exact) and storage format with fp64 arithmetic, the
time relative to plain fp64 and the error relative to the exact result.

The accumulator variants come from `kacc-perf-blas --accumulators` and `kacc-perf-spmv
--accumulators`: configurations named STORAGE_CONFIG+ACC (fp64+dd, fp64<-fp32+exact), errors
also on ill-conditioned GenDot data (blas_accuracy.csv distribution cond1e16, spmv_accuracy.csv
matrix cond1e16). Those rows belong to this section only: split() keeps them out of the
summary, the recommendation and the other plots.
"""
import os
from collections import defaultdict

from .data import geomean, is_kacc, num, storage_of
from .plots import FORMAT_COLORS, _ratio_axis, _save, display_config, plt

KERNELS = ["dot", "gemv", "spmv"]
KERNEL_NAMES = {"dot": "DOT", "gemv": "GEMV", "spmv": "SpMV"}
# What a '+suffix' of a configuration names.
ACCUMULATORS = {"": "plain", "comp": "compensated", "dd": "double_double", "qd": "quad_double",
                "exact": "exact<double>"}
_ACC_MARKERS = {"plain": "o", "compensated": "s", "double_double": "^", "quad_double": "v",
                "exact<double>": "*"}
# The accumulator variants the programs write with --accumulators (the check's contract).
VARIANTS = ["fp64+comp", "fp64+dd", "fp64+qd", "fp64+exact", "fp64<-fp32+dd", "fp64<-fp32+exact"]
# The plotted configurations, at most plots.MAX_SERIES: fp64 and fp32 storage.
PLOTTED = ["fp64", "fp64+comp", "fp64+dd", "fp64+qd", "fp64+exact", "fp64<-fp32",
           "fp64<-fp32+dd", "fp64<-fp32+exact"]
ILL = "cond1e16"
ILL_WORDS = "GenDot data of condition 1e16"
# An error of exactly 0 (the correctly rounded result) drawn on the log axis at this value.
ZERO_ERROR_AT = 1e-19
HEADER = ["kernel", "config", "storage", "accumulator", "time_vs_fp64", "error", "error_ill"]


def is_variant(config):
    """True for an accumulator variant (fp64+dd), which only this section uses."""
    return "+" in (config or "")


def is_ill(row):
    """True for an accuracy row on the ill-conditioned data, which only this section uses."""
    return row.get("distribution") == ILL or row.get("matrix") == ILL


def split(rows, accuracy=False):
    """(rows for the rest of the report, rows for this section) of one CSV's rows."""
    if rows is None:
        return None, None
    def ours(r):
        return is_variant(r.get("config")) or (accuracy and is_ill(r))
    return [r for r in rows if not ours(r)], [r for r in rows if ours(r)]


def accumulator_of(config):
    return ACCUMULATORS.get(config.split("+", 1)[1] if "+" in config else "", "?")


def _fp64_arith(config):
    """A kacc configuration with fp64 arithmetic: fp64, fp64<-S, Acc<fp64,S>, and '+ACC'."""
    c = display_config(config or "").split("+")[0]
    return c == "fp64" or c.startswith("fp64<-")


def _name(config):
    return display_config(config or "")


def _blas_times(speed, kernel):
    """{config: time / plain fp64 time}, geometric mean over the shapes at the largest size."""
    rows = [r for r in speed or [] if r.get("kernel") == kernel and is_kacc(r.get("impl")) and
            num(r.get("time_median_s")) and _fp64_arith(r.get("config"))]
    size = lambda r: (num(r.get("m")) or 1) * (num(r.get("n")) or 1)  # noqa: E731
    ratios = defaultdict(list)
    for shape in {(r.get("layout"), r.get("trans")) for r in rows}:
        rs = [r for r in rows if (r.get("layout"), r.get("trans")) == shape]
        top = max(size(r) for r in rs)
        at = {_name(r["config"]): num(r["time_median_s"]) for r in rs if size(r) == top}
        if at.get("fp64"):
            for c, t in at.items():
                ratios[c].append(t / at["fp64"])
    return {c: geomean(v) for c, v in ratios.items()}


def _spmv_times(speed):
    """{config: time / plain fp64 time}, geometric mean over the matrices and kernels."""
    rows = [r for r in speed or [] if is_kacc(r.get("impl")) and num(r.get("time_median_s")) and
            _fp64_arith(r.get("config"))]
    base = {(r.get("matrix"), r.get("impl"), r.get("kernel")): num(r["time_median_s"])
            for r in rows if _name(r["config"]) == "fp64"}
    ratios = defaultdict(list)
    for r in rows:
        b = base.get((r.get("matrix"), r.get("impl"), r.get("kernel")))
        if b:
            ratios[_name(r["config"])].append(num(r["time_median_s"]) / b)
    return {c: geomean(v) for c, v in ratios.items()}


def _worst(rows):
    """{config: worst median relative error}; an error of 0 stays 0."""
    out = {}
    for r in rows:
        e = num(r.get("median_rel_error"))
        c = _name(r.get("config"))
        if e is not None and _fp64_arith(r.get("config")):
            out[c] = max(out.get(c, 0.0), e)
    return out


def _blas_errors(accuracy, kernel):
    """(errors on the ordinary data at the kernel's largest size, errors on the ill data)."""
    rows = [a for a in accuracy or [] if a.get("kernel") == kernel]
    ordinary = [a for a in rows if not is_ill(a)]
    top = max((num(a.get("n")) or 0 for a in ordinary), default=0)
    return (_worst(a for a in ordinary if (num(a.get("n")) or 0) == top),
            _worst(a for a in rows if is_ill(a)))


def table(bs, ba, ss, sa):
    """Rows of HEADER: every fp64-arithmetic kacc configuration of DOT, GEMV and SpMV with a
    time or an error, plain storage configurations included."""
    out = []
    for kernel in KERNELS:
        if kernel == "spmv":
            times = _spmv_times(ss)
            errors = _worst(a for a in sa or [] if not is_ill(a))
            ill = _worst(a for a in sa or [] if is_ill(a))
        else:
            times = _blas_times(bs, kernel)
            errors, ill = _blas_errors(ba, kernel)
        if not any(is_variant(c) for c in list(times) + list(errors)):
            continue  # no accumulator was measured for this kernel
        for c in sorted(set(times) | set(errors) | set(ill), key=_order):
            out.append({"kernel": kernel, "config": c, "storage": storage_of(c.split("+")[0]),
                        "accumulator": accumulator_of(c), "time_vs_fp64": times.get(c),
                        "error": errors.get(c), "error_ill": ill.get(c)})
    return out


def _order(config):
    storage = storage_of(config.split("+")[0])
    accs = list(ACCUMULATORS.values())
    return (list(FORMAT_COLORS).index(storage) if storage in FORMAT_COLORS else 99,
            accs.index(accumulator_of(config)) if accumulator_of(config) in accs else 99, config)


def missing(rows, kernels):
    """What the section lacks for each kernel asked for: [(kernel, reason)]."""
    out = []
    for k in kernels:
        rs = {r["config"]: r for r in rows if r["kernel"] == k}
        if not rs:
            out.append((k, "no accumulator rows"))
            continue
        for c in ["fp64"] + VARIANTS:
            r = rs.get(c)
            lacks = [w for w, key in (("time", "time_vs_fp64"), ("error", "error"),
                                      ("error on %s" % ILL_WORDS, "error_ill"))
                     if r is None or r[key] is None]
            if lacks:
                out.append((k, "%s: no %s" % (c, ", no ".join(lacks))))
    return out


def plot(rows, out_dir):
    """One panel per kernel: error (ill-conditioned data filled, ordinary data hollow)
    against time relative to plain fp64; one series per configuration of PLOTTED."""
    kernels = [k for k in KERNELS if any(r["kernel"] == k and r["config"] in PLOTTED and
                                         r["time_vs_fp64"] for r in rows)]
    if not kernels:
        return None
    fig, axes = plt.subplots(1, len(kernels), figsize=(3.6 * len(kernels) + 0.8, 4.2),
                             sharey=True, squeeze=False)
    axes = axes[0]
    times = [r["time_vs_fp64"] for r in rows if r["time_vs_fp64"] and r["config"] in PLOTTED]
    for ax, k in zip(axes, kernels):
        for c in PLOTTED:
            r = next((r for r in rows if r["kernel"] == k and r["config"] == c), None)
            if r is None or not r["time_vs_fp64"]:
                continue
            errs = [(e, filled) for e, filled in ((r["error_ill"], True), (r["error"], False))
                    if e is not None]
            if not errs:
                continue
            color = FORMAT_COLORS.get(r["storage"], "#999999")
            ax.scatter([r["time_vs_fp64"]] * len(errs),
                       [max(e, ZERO_ERROR_AT) for e, _ in errs],
                       marker=_ACC_MARKERS.get(r["accumulator"], "o"),
                       s=[90 if f else 40 for _, f in errs],
                       facecolors=[color if f else "none" for _, f in errs],
                       edgecolors=color, lw=1.1, zorder=3, label=c)
        _ratio_axis(ax, min(times + [1.0]), max(times + [1.0]))
        ax.set_yscale("log")
        ax.set_title(KERNEL_NAMES[k], fontsize=10)
        ax.set_xlabel("time / plain fp64 (lower is faster)", fontsize=9)
    axes[0].set_ylabel("relative error vs exact (0 drawn at %.0e)" % ZERO_ERROR_AT, fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.suptitle("Accuracy versus cost: filled = %s, hollow = uniform/normal data" % ILL_WORDS,
                 fontsize=10, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4,
               frameon=False, fontsize=8)
    return _save(fig, os.path.join(out_dir, "plot_accuracy_cost.png"))
