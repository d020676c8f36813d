"""The report's plots. Each function writes one PNG and returns its path, or None (no data)."""
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from .data import formats_of, is_kacc, is_pure, num, storage_of  # noqa: E402

# One colour per storage format, one line style per implementation, across all plots.
_COLORS = {"fp64": "#222222", "fp32": "#1f77b4", "fp16": "#ff7f0e", "bf16": "#2ca02c",
           "int16s": "#9467bd", "int8s": "#8c564b", "int32s": "#e377c2"}
_EXTRA = ["#17becf", "#bcbd22", "#7f7f7f", "#d62728"]
_STYLES = {"kacc": "-", "openblas": "--", "kokkoskernels": ":", "cublas": "--", "rocblas": "--"}
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]

plt.rcParams.update({"font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                     "legend.fontsize": 8, "figure.dpi": 110})


def _color(config, _cache={}):
    st = storage_of(config)
    if st in _COLORS:
        return _COLORS[st]
    if st not in _cache:
        _cache[st] = _EXTRA[len(_cache) % len(_EXTRA)]
    return _cache[st]


def _marker(config):
    """Marker by arithmetic format (the first format named): fp64 filled circle, others hollow."""
    f = formats_of(config)
    arith = f[0] if f else "fp64"
    if arith == "fp64":
        return dict(marker="o", ms=4)
    return dict(marker="s", ms=5, mfc="white")


def _size_ticks(ax, values):
    """Log x axis; base 2 with plain numbers when the sizes span less than three decades."""
    vals = [v for v in values if v]
    if vals and max(vals) / min(vals) < 1000:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    else:
        ax.set_xscale("log")


def _style(impl):
    impl = (impl or "kacc").lower()
    return next((s for k, s in _STYLES.items() if impl.startswith(k)), "-.")


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path


def roofline(rows, roofs, out_dir):
    """Attained GFLOP/s against arithmetic intensity, under the roofs kacc-roofline measured:
    bandwidth (highest STREAM traffic) x intensity, and the FMA probe's peak per arithmetic."""
    if not rows:
        return None
    series = defaultdict(list)  # one line per configuration (plain and accessor views apart)
    for r in rows:
        x, y = num(r.get("flops_per_byte")), num(r.get("gflops_median"))
        if x and y:
            series[(r.get("arith", "?"), r.get("storage", "?"), r.get("config", "?"))].append(
                (x, y))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 5.2))
    xs = [x for pts in series.values() for x, _ in pts]
    xmin, xmax = min(xs) / 2, max(xs) * 2
    for i, ((arith, storage, config), pts) in enumerate(sorted(series.items())):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=_MARKERS[i % len(_MARKERS)],
                color=_COLORS.get(storage, _EXTRA[i % len(_EXTRA)]),
                linestyle="-" if arith == "fp64" else "--", ms=4,
                label="%s (arithmetic %s, storage %s)" % (config, arith, storage))
    ys = [y for pts in series.values() for _, y in pts]
    bw = roofs.get("bandwidth")
    for arith in ("fp64", "fp32"):
        peak = roofs.get(arith)
        if not peak:
            continue
        start = peak / bw if bw else xmin
        ax.plot([start, xmax], [peak, peak], color="black", lw=1.2, alpha=0.7,
                ls="-" if arith == "fp64" else "--")
        ax.annotate("%s FMA peak (probe) %.1f GFLOP/s" % (arith, peak), (xmax / 1.1, peak),
                    ha="right", va="bottom", fontsize=8, color="dimgrey")
        ys.append(peak)
    if bw:
        top = max(roofs.get("fp32", 0), roofs.get("fp64", 0)) or bw * xmax
        ax.plot([xmin, min(xmax, top / bw)], [bw * xmin, min(bw * xmax, top)], color="red",
                lw=1.2, alpha=0.7, label="bandwidth roof %.1f GB/s (STREAM traffic)" % bw)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(min(ys) / 2, max(ys) * 2)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of storage moved)")
    ax.set_ylabel("attained performance (GFLOP/s, median)")
    title = "Roofline: points against the measured roofs"
    if roofs.get("check"):
        title += " (roof check %s)" % roofs["check"]
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    return _save(fig, os.path.join(out_dir, "plot_roofline.png"))


def _size_axis(rows):
    ms = {r.get("m", "") for r in rows}
    if all(not m or num(m) in (None, 0, 1) for m in ms):
        return (lambda r: num(r.get("n"))), "vector length n"
    if all(r.get("m") == r.get("n") for r in rows):
        return (lambda r: num(r.get("n"))), "matrix dimension n (n×n)"
    return (lambda r: (num(r.get("m")) or 1) * (num(r.get("n")) or 1)), "matrix entries m·n"


def blas_kernel(kernel, speed, accuracy, out_dir):
    """Effective bandwidth, time relative to fp64 and error against size for one kernel."""
    rows = [r for r in speed or [] if r.get("kernel") == kernel]
    acc = [r for r in accuracy or [] if r.get("kernel") == kernel]
    if not rows and not acc:
        return None
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    size, xlabel = _size_axis(rows or acc)
    variants = sorted({(r.get("layout", ""), r.get("trans", "")) for r in rows})
    multi = len(variants) > 1
    series = defaultdict(list)
    for r in rows:
        key = (r.get("impl", ""), r.get("config", ""), r.get("layout", ""), r.get("trans", ""))
        series[key].append(r)
    base = {}
    for (impl, cfg, lay, tr), rs in series.items():
        if is_kacc(impl) and is_pure(cfg, "fp64"):
            for r in rs:
                base[(lay, tr, r.get("m"), r.get("n"))] = num(r.get("time_median_s"))
    for (impl, cfg, lay, tr), rs in sorted(series.items()):
        rs = sorted(rs, key=size)
        label = "%s %s" % (impl, cfg) + (" %s %s" % (lay, tr) if multi else "")
        kw = dict(color=_color(cfg), ls=_style(impl), label=label, **_marker(cfg))
        axes[0].plot([size(r) for r in rs], [num(r.get("gbs")) for r in rs], **kw)
        ratio = [(size(r), num(r.get("time_median_s")) / base[k])
                 for r in rs for k in [(lay, tr, r.get("m"), r.get("n"))]
                 if base.get(k) and num(r.get("time_median_s"))]
        if ratio:
            axes[1].plot([p[0] for p in ratio], [p[1] for p in ratio], **kw)
    axes[0].set_ylabel("effective bandwidth (GB/s of storage read)")
    axes[0].set_title("%s: speed" % kernel)
    axes[1].axhline(1.0, color="grey", lw=0.8)
    axes[1].set_ylabel("time relative to kacc fp64 (lower is faster)")
    axes[1].set_title("%s: time relative to fp64" % kernel)
    by_cfg = defaultdict(list)
    for r in acc:
        by_cfg[(r.get("config", ""), r.get("distribution", ""))].append(r)
    dists = sorted({d for _, d in by_cfg})
    for (cfg, dist), rs in sorted(by_cfg.items()):
        rs = sorted(rs, key=lambda r: num(r.get("n")) or 0)
        pts = [(num(r.get("n")), num(r.get("median_rel_error"))) for r in rs]
        pts = [(x, max(y, 1e-20)) for x, y in pts if x and y is not None]
        if pts:
            axes[2].plot([p[0] for p in pts], [p[1] for p in pts], color=_color(cfg),
                         ls=["-", "--", ":", "-."][dists.index(dist) % 4], **_marker(cfg),
                         label="%s, %s" % (cfg, dist) if len(dists) > 1 else cfg)
    axes[2].set_yscale("log")
    axes[2].set_ylabel("median relative error (vs exact MPFR)")
    axes[2].set_title("%s: accuracy" % kernel)
    for ax, data in ((axes[0], rows), (axes[1], rows), (axes[2], acc)):
        _size_ticks(ax, [size(r) if ax is not axes[2] else num(r.get("n")) for r in data])
        ax.set_xlabel(xlabel if ax is not axes[2] else "n")
        if not ax.lines:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    legend = dict(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    if axes[0].lines:
        axes[1].legend(*axes[0].get_legend_handles_labels(), **legend)
        axes[0].text(0.0, -0.2, "line style: kacc solid, OpenBLAS dashed, Kokkos Kernels dotted\n"
                     "marker: filled = fp64 arithmetic, hollow = fp32 arithmetic",
                     transform=axes[0].transAxes, va="top", fontsize=8)
    if axes[2].lines:
        axes[2].legend(**legend)
    for ax in axes[:2]:
        if ax.lines:
            _log_if_decades(ax)
    return _save(fig, os.path.join(out_dir, "plot_blas_%s.png" % kernel))


def _log_if_decades(ax):
    ys = [y for line in ax.lines for y in line.get_ydata() if y and y > 0]
    if ys and max(ys) / min(ys) > 30:
        ax.set_yscale("log")


def _hatch(config):
    """Bars of a configuration whose arithmetic is not fp64 are dotted (fp32 vs fp64<-fp32)."""
    f = formats_of(config)
    return "" if not f or f[0] == "fp64" else ".."


def _grouped_bars(ax, matrices, configs, value, colors, hatches=None):
    width = 0.8 / max(len(configs), 1)
    for i, cfg in enumerate(configs):
        xs = [j + (i - (len(configs) - 1) / 2) * width for j in range(len(matrices))]
        vals = [value(m, cfg) for m in matrices]
        ax.bar([x for x, v in zip(xs, vals) if v], [v for v in vals if v], width,
               color=colors[i], label=cfg, edgecolor="white", lw=0.5,
               hatch=hatches[i] if hatches else None)
    ax.set_xticks(range(len(matrices)))
    ax.set_xticklabels(matrices, rotation=30, ha="right", fontsize=8)


def spmv_speedup(speed, out_dir):
    """Per matrix: speedup over kacc fp64 of every configuration (and peers)."""
    if not speed:
        return None
    t = {}
    for r in speed:
        t[(r.get("matrix"), r.get("impl"), r.get("config"), r.get("kernel", ""))] = num(
            r.get("time_median_s"))
    matrices = list(dict.fromkeys(r.get("matrix") for r in speed))
    kernels = sorted({r.get("kernel", "") for r in speed})
    labels = list(dict.fromkeys((r.get("impl"), r.get("config"), r.get("kernel", ""))
                                for r in speed))
    labels = [lab for lab in labels if not (is_kacc(lab[0]) and is_pure(lab[1], "fp64"))]

    def speedup(m, lab):
        base = [v for k, v in t.items() if k[0] == m and is_kacc(k[1]) and is_pure(k[2], "fp64")
                and k[3] == lab[2] and v]
        mine = t.get((m,) + lab)
        return base[0] / mine if base and mine else None

    names = ["%s %s%s" % (i, c, " " + k if len(kernels) > 1 else "") for i, c, k in labels]
    colors = [_color(c) if is_kacc(i) else "#bbbbbb" for i, c, _ in labels]
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(matrices) + 3), 5))
    lut = dict(zip(names, labels))
    _grouped_bars(ax, matrices, names, lambda m, n: speedup(m, lut[n]), colors)
    for i, (impl, _, _) in enumerate(labels):
        if not is_kacc(impl):
            for p in ax.containers[i]:
                p.set_hatch("//")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_ylabel("speedup over kacc fp64 SpMV (higher is faster)")
    ax.set_xlabel("matrix")
    ax.set_title("SpMV speedup per matrix and value storage format")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, os.path.join(out_dir, "plot_spmv_speedup.png"))


def spmv_error(accuracy, out_dir):
    """Per matrix: median relative error of every configuration, log scale."""
    if not accuracy:
        return None
    matrices = list(dict.fromkeys(r.get("matrix") for r in accuracy))
    configs = list(dict.fromkeys(r.get("config") for r in accuracy))
    order = ["fp64", "fp32", "fp16", "bf16"]
    configs.sort(key=lambda c: [order.index(storage_of(c)) if storage_of(c) in order else 9,
                                formats_of(c)[:1] != ["fp64"], c])
    e = {(r.get("matrix"), r.get("config")): num(r.get("median_rel_error")) for r in accuracy}
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(matrices) + 3), 5))
    _grouped_bars(ax, matrices, configs, lambda m, c: e.get((m, c)), [_color(c) for c in configs],
                  [_hatch(c) for c in configs])
    ax.set_yscale("log")
    ax.set_ylabel("median relative error (vs exact MPFR)")
    ax.set_xlabel("matrix")
    ax.set_title("SpMV accuracy per matrix and value storage format")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, os.path.join(out_dir, "plot_spmv_error.png"))
