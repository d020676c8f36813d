"""The report's plots. Each function writes one PNG and returns its path, or None (no data).

Every plot is a row of small panels sharing one vertical axis: one row per configuration, in
the same order everywhere (CONFIG_ORDER), and one colour per storage format in every plot
(FORMAT_COLORS). A panel holds at most MAX_SERIES series; what each panel drew is recorded in
PANEL_SERIES, which generate.py writes to report_plots.json for check_report.py.
"""
import os
import re
import textwrap
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from .data import formats_of, geomean, is_kacc, is_pure, num, storage_of  # noqa: E402
from .recommend import STORAGE_BYTES, spmv_class  # noqa: E402

MAX_SERIES = 8
# One colour per storage format, in every plot (colour-blind-safe Okabe-Ito order).
FORMAT_COLORS = {"fp64": "#000000", "fp32": "#0072B2", "bf16": "#009E73", "fp16": "#E69F00",
                 "int32s": "#56B4E9", "int16s": "#CC79A7", "int8s": "#D55E00"}
_OTHER_COLOR = "#999999"
CONFIG_ORDER = ["fp64", "fp32", "int32s", "bf16", "fp16", "int16s", "int8s"]
_PEER_MARKERS = {"openblas": "D", "kokkoskernels": "^", "cublas": "D", "rocblas": "D"}
_PEER_NAMES = {"openblas": "OpenBLAS", "kokkoskernels": "Kokkos Kernels"}
_LAYOUT = {"L": "LayoutLeft", "R": "LayoutRight"}
_TRANS = {"N": "y = A x", "T": "y = Aᵀ x"}

# {png file name: [{"panel": title, "series": count, "labels": [...]}, ...]}
PANEL_SERIES = {}

plt.rcParams.update({"font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                     "legend.fontsize": 9, "figure.dpi": 100})


def format_color(config):
    """The colour of a configuration: that of its storage format."""
    return FORMAT_COLORS.get(storage_of(config), _OTHER_COLOR)


def display_config(config):
    """A configuration as 'arith<-storage' whatever the program's spelling (Acc<fp64,fp16>)."""
    m = re.match(r"^Acc<\s*(\w+)\s*,\s*(\w+)\s*>$", config or "")
    return "%s<-%s" % m.groups() if m else config


def config_key(config):
    """Sort key: storage from widest to narrowest, fp64 arithmetic before narrower."""
    st = storage_of(config)
    f = formats_of(config)
    return (CONFIG_ORDER.index(st) if st in CONFIG_ORDER else len(CONFIG_ORDER),
            0 if not f or f[0] == "fp64" else 1, display_config(config))


def _peer_name(impl):
    i = (impl or "").lower()
    return next((v for k, v in _PEER_NAMES.items() if i.startswith(k)), impl)


def _peer_marker(impl):
    i = (impl or "").lower()
    return next((v for k, v in _PEER_MARKERS.items() if i.startswith(k)), "v")


def _save(fig, path):
    PANEL_SERIES[os.path.basename(path)] = [
        {"panel": ax.get_title() or ax.get_label(), "series": len(_series(ax)),
         "labels": _series(ax)} for ax in fig.axes if ax.get_visible()]
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path


def _series(ax):
    """What a panel drew: its lines, point sets and bar sets (texts and grid are not series)."""
    return [a.get_label() for a in list(ax.lines) + list(ax.collections)] + \
        [c.get_label() for c in ax.containers]


def _ratio_text(v):
    return "%g" % v if v >= 1 else "1/%g" % (1 / v)


def _ratio_axis(ax, lo, hi):
    """Log-2 axis for time ratios, ticks as 1/4, 1/2, 1, 2."""
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo / 1.5, hi * 1.5)
    ax.xaxis.set_major_locator(LogLocator(base=2, numticks=7))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _ratio_text(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _panel_values(panel):
    return [v for v in list(panel["limit"].values()) + list(panel["main"].values()) +
            [x for vs in panel["others"].values() for x in vs] +
            [x for m in panel["peers"].values() for x in m.values()] + [1.0] if v and v > 0]


# ------------------------------------------------------------------ one panel
def _time_panel(ax, rows, panel, lo, hi):
    """Time relative to kacc fp64, one row per configuration: the filled dot at the reference
    size, hollow dots at the other sizes, a bar at the byte-ratio limit, peers as marks."""
    y = {c: i for i, c in enumerate(rows)}
    ax.axvline(1.0, color="#444444", lw=0.9, label="kacc fp64 (= 1)")
    lim = [(v, y[c]) for c, v in panel["limit"].items() if c in y and v]
    if lim:
        ax.scatter([v for v, _ in lim], [r for _, r in lim], marker="|", s=260, lw=2.2,
                   color="#d62728", zorder=2, label="byte-ratio limit (time if only bytes "
                   "counted)")
    other = [(v, y[c], format_color(c)) for c, vs in panel["others"].items() if c in y
             for v in vs if v]
    if other:
        ax.scatter([v for v, _, _ in other], [r for _, r, _ in other], s=22, zorder=3,
                   facecolors="none", edgecolors=[k for _, _, k in other], lw=1,
                   label=panel["others_label"])
    main = [(v, y[c], format_color(c)) for c, v in panel["main"].items() if c in y and v]
    if main:
        ax.scatter([v for v, _, _ in main], [r for _, r, _ in main], s=64, zorder=4,
                   color=[k for _, _, k in main], edgecolors="white", lw=0.6,
                   label=panel["main_label"])
        for v, r, _ in main:
            ax.annotate("%.2f" % v, (v, r), xytext=(0, 5), textcoords="offset points",
                        ha="center", va="bottom", fontsize=8.5)
    for impl, marks in sorted(panel["peers"].items()):
        pts = [(v, y[c]) for c, v in marks.items() if c in y and v]
        if pts:
            ax.scatter([v for v, _ in pts], [r + 0.28 for _, r in pts], marker=_peer_marker(impl),
                       s=30, color="#777777", zorder=3, label=_peer_name(impl))
    _ratio_axis(ax, lo, hi)
    ax.set_title("\n".join(line for part in panel["title"].split("\n")
                            for line in textwrap.wrap(part, 24)), fontsize=10)
    ax.set_xlabel("time / kacc fp64 (lower is faster)", fontsize=9)
    if not main and not other:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)


def _error_panel(ax, rows, errors, budgets):
    """Worst median relative error per configuration (filled), every measurement (hollow),
    the numeric error budgets as vertical lines."""
    y = {c: i for i, c in enumerate(rows)}
    other = [(v, y[c], format_color(c)) for c, vs in errors["all"].items() if c in y
             for v in vs if v]
    if other:
        ax.scatter([v for v, _, _ in other], [r for _, r, _ in other], s=22, facecolors="none",
                   edgecolors=[k for _, _, k in other], lw=1, zorder=3,
                   label="each distribution / size / matrix")
    worst = [(v, y[c], format_color(c)) for c, v in errors["worst"].items() if c in y and v]
    if worst:
        ax.scatter([v for v, _, _ in worst], [r for _, r, _ in worst], s=64,
                   color=[k for _, _, k in worst], edgecolors="white", lw=0.6, zorder=4,
                   label="worst (used for the recommendation)")
    for b in [b for b in budgets if not isinstance(b, str)][:MAX_SERIES - 2]:
        ax.axvline(b, color="#2ca02c", lw=1, ls="--", label="error budget %.0e" % b)
        ax.annotate("%.0e" % b, (b, 1.0), xycoords=("data", "axes fraction"), fontsize=7,
                    color="#2ca02c", ha="left", va="top", rotation=90)
    vals = [v for v, _, _ in other + worst] + [b for b in budgets if not isinstance(b, str)]
    ax.set_xscale("log")
    if vals:
        ax.set_xlim(min(vals) / 5, max(vals) * 5)
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=6))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_title(errors["title"], fontsize=10)
    ax.set_xlabel("median relative error (vs exact)", fontsize=9)
    if not worst:
        ax.text(0.5, 0.5, "no accuracy data", ha="center", va="center", transform=ax.transAxes)


def _figure(name, title, rows, panels, errors, budgets, out_dir, note):
    """A row of time panels and one error panel, sharing the configuration axis."""
    n = len(panels) + (1 if errors else 0)
    height = 0.38 * len(rows) + 1.9
    fig, axes = plt.subplots(1, n, figsize=(min(2.5 * n + 1.6, 12), height), sharey=True,
                             squeeze=False)
    axes = axes[0]
    # One time scale across the panels, so shapes compare at a glance.
    values = [v for panel in panels for v in _panel_values(panel)]
    for ax, panel in zip(axes, panels):
        _time_panel(ax, rows, panel, min(values), max(values))
    if errors:
        _error_panel(axes[-1], rows, errors, budgets)
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels([display_config(r) for r in rows])
    for label, r in zip(axes[0].get_yticklabels(), rows):
        label.set_color(format_color(r) if storage_of(r) != "fp64" else "#000000")
    axes[0].set_ylim(len(rows) - 0.5, -0.7)
    for ax in axes:
        ax.grid(axis="y", alpha=0)
    handles, seen = [], set()
    for ax in axes:
        for lab in ax.get_legend_handles_labels()[1]:
            key = "error budget" if lab.startswith("error budget") else lab
            if key not in seen:
                seen.add(key)
                handles.append(_legend_handle(lab))
    fig.suptitle(title, fontsize=11, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0.0, 1, 0.97))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(4, len(handles)), frameon=False, fontsize=8)
    if note:
        fig.text(0.01, -0.02 - 0.045 * ((len(handles) + 3) // 4) * 4.5 / height, note,
                 fontsize=8, color="#555555", va="top")
    return _save(fig, os.path.join(out_dir, name))


def _legend_handle(label):
    """A legend entry in neutral grey: colour means storage format, shown on the y axis."""
    grey = "#555555"
    if label.startswith("kacc fp64"):
        return Line2D([], [], color="#444444", lw=0.9, label=label)
    if label.startswith("byte-ratio"):
        return Line2D([], [], ls="", marker="|", markersize=11, mew=2, color="#d62728",
                      label=label)
    if label.startswith("error budget"):
        return Line2D([], [], color="#2ca02c", lw=1, ls="--", label="error budget")
    peer = {v: k for k, v in _PEER_NAMES.items()}.get(label)
    if peer:
        return Line2D([], [], ls="", marker=_PEER_MARKERS[peer], color="#777777", label=label)
    hollow = label.startswith(("each", "smaller"))
    return Line2D([], [], ls="", marker="o", markersize=6 if hollow else 8, color=grey,
                  mfc="none" if hollow else grey, label=label)


# ------------------------------------------------------------------ BLAS
def _size_of(r):
    return (num(r.get("m")) or 1) * (num(r.get("n")) or 1)


def _size_text(r):
    m, n = r.get("m", ""), r.get("n", "")
    return "n=%s" % n if not m or m in ("0", "1") else "%s×%s" % (m, n)


def _shape_title(kernel, layout, trans):
    parts = [_LAYOUT.get(layout, layout), _TRANS.get(trans, trans)] if kernel == "gemv" else \
        [_LAYOUT.get(layout, layout)] if layout not in ("", "-") else []
    return "\n".join(p for p in parts if p and p != "-") or kernel.upper()


def blas_kernel(kernel, speed, accuracy, budgets, out_dir):
    """One panel per layout x transpose of a BLAS kernel, then its error panel."""
    rows = [r for r in speed or [] if r.get("kernel") == kernel and num(r.get("time_median_s"))]
    acc = [a for a in accuracy or [] if a.get("kernel") == kernel or
           a.get("kernel", "").startswith(kernel + "_")]
    if not rows and not acc:
        return None
    shapes = sorted({(r.get("layout", ""), r.get("trans", "")) for r in rows})
    panels = []
    configs = {r.get("config", "") for r in rows if is_kacc(r.get("impl"))}
    for layout, trans in shapes:
        rs = [r for r in rows if (r.get("layout", ""), r.get("trans", "")) == (layout, trans)]
        sizes = sorted({_size_of(r) for r in rs})
        base = {_size_of(r): num(r.get("time_median_s")) for r in rs
                if is_kacc(r.get("impl")) and is_pure(r.get("config"), "fp64")}
        bytes64 = {_size_of(r): _bytes(r) for r in rs
                   if is_kacc(r.get("impl")) and is_pure(r.get("config"), "fp64")}
        top = sizes[-1]
        panel = {"title": _shape_title(kernel, layout, trans), "main": {}, "others":
                 defaultdict(list), "limit": {}, "peers": defaultdict(dict)}
        for r in rs:
            s, cfg = _size_of(r), r.get("config", "")
            if not base.get(s):
                continue
            ratio = num(r.get("time_median_s")) / base[s]
            if not is_kacc(r.get("impl")):
                if s == top:
                    panel["peers"][r.get("impl")][cfg] = ratio
                    configs.add(cfg)
            elif s == top:
                panel["main"][cfg] = ratio
                panel["limit"][cfg] = _limit(r, bytes64.get(s))
            else:
                panel["others"][cfg].append(ratio)
        top_row = next((r for r in rs if _size_of(r) == top), {})
        panel["main_label"] = "largest size"
        panel["others_label"] = "smaller sizes"
        panel["title"] += "\n%s" % _size_text(top_row)
        panels.append(panel)
    errors = _errors(acc, "%s error" % kernel.upper())
    configs |= set(errors["worst"])
    order = sorted(configs, key=config_key)
    note = ("%s: dots are kacc's configurations, coloured by storage format; grey marks are "
            "peers' times for the configuration on that row." % kernel.upper())
    return _figure("plot_blas_%s.png" % kernel, "%s: time relative to kacc fp64, and error"
                   % kernel.upper(), order, panels, errors, budgets, out_dir, note)


def _bytes(r):
    gbs, t = num(r.get("gbs")), num(r.get("time_median_s"))
    return gbs * t if gbs and t else None


def _limit(r, bytes64):
    """Time ratio a configuration would reach if time were bytes moved: its bytes / fp64's."""
    b = _bytes(r)
    if b and bytes64:
        return b / bytes64
    st = STORAGE_BYTES.get(storage_of(r.get("config")))
    return st / 8.0 if st else None


def _errors(acc, title):
    by = defaultdict(list)
    for a in acc:
        e = num(a.get("median_rel_error"))
        if e is not None:
            by[a.get("config", "")].append(max(e, 1e-20))
    return {"title": title, "all": by, "worst": {c: max(v) for c, v in by.items()}}


# ------------------------------------------------------------------ SpMV
def spmv(speed, accuracy, budgets, llc_bytes, out_dir):
    """One panel per matrix class (recommend.spmv_class), then the error panel."""
    rows = [r for r in speed or [] if num(r.get("time_median_s"))]
    if not rows and not accuracy:
        return None
    best = {}  # (matrix, impl family, config) -> fastest time over kernels
    byts = {}
    for r in rows:
        fam = "kacc" if is_kacc(r.get("impl")) else r.get("impl", "")
        key = (r.get("matrix", ""), fam, r.get("config", ""))
        t = num(r.get("time_median_s"))
        if key not in best or t < best[key]:
            best[key] = t
            byts[key] = _bytes(r)
    classes = defaultdict(list)
    for (m, fam, cfg) in best:
        if fam == "kacc" and is_pure(cfg, "fp64"):
            classes[spmv_class(m, (byts[(m, fam, cfg)] or 0) * 1e9, llc_bytes)].append(m)
    configs = set()
    panels = []
    for cls, mats in sorted(classes.items()):
        panel = {"title": "%s (%d)" % (cls, len(mats)), "main": {}, "others": defaultdict(list),
                 "limit": {}, "peers": defaultdict(dict), "main_label": "geomean over matrices",
                 "others_label": "each matrix"}
        ratios, limits, peer = defaultdict(list), defaultdict(list), defaultdict(
            lambda: defaultdict(list))
        for m in mats:
            t64 = best[(m, "kacc", next(c for (mm, f, c) in best if mm == m and f == "kacc"
                                        and is_pure(c, "fp64")))]
            b64 = next(byts[k] for k in best if k[0] == m and k[1] == "kacc"
                       and is_pure(k[2], "fp64"))
            for (mm, fam, cfg), t in best.items():
                if mm != m:
                    continue
                if fam == "kacc":
                    ratios[cfg].append(t / t64)
                    if byts[(mm, fam, cfg)] and b64:
                        limits[cfg].append(byts[(mm, fam, cfg)] / b64)
                else:
                    peer[fam][cfg].append(t / t64)
        for cfg, rs in ratios.items():
            configs.add(cfg)
            panel["main"][cfg] = geomean(rs)
            if len(mats) > 1:
                panel["others"][cfg] = rs
            panel["limit"][cfg] = geomean(limits[cfg]) or (
                STORAGE_BYTES.get(storage_of(cfg), 8) / 8.0)
        for fam, by_cfg in peer.items():
            for cfg, rs in by_cfg.items():
                panel["peers"][fam][_same_row(cfg, configs)] = geomean(rs)
        panels.append(panel)
    errors = _errors(accuracy or [], "SpMV error")
    configs |= set(errors["worst"])
    order = sorted(configs, key=config_key)
    note = ("SpMV: each configuration at its fastest kernel (CSR row, load-balanced or ELL) per "
            "matrix; grey marks are peers' times for the configuration on that row.")
    return _figure("plot_spmv.png", "SpMV: time relative to kacc fp64 per matrix class, and "
                   "error", order, panels, errors, budgets, out_dir, note)


def _same_row(cfg, configs):
    """A peer's config on the row of kacc's config with the same formats (fp64 for 'fp64')."""
    return next((c for c in configs if formats_of(c) == formats_of(cfg)), cfg)


# ------------------------------------------------------------------ roofline
def roofline(rows, roofs, out_dir):
    """Attained GFLOP/s against arithmetic intensity under the measured roofs, one panel per
    arithmetic precision (bandwidth roof = highest STREAM traffic; FMA probe peak)."""
    if not rows:
        return None
    series = defaultdict(list)
    for r in rows:
        x, y = num(r.get("flops_per_byte")), num(r.get("gflops_median"))
        if x and y:
            series[(r.get("arith", "?"), r.get("storage", "?"), r.get("config", "?"))].append(
                (x, y))
    if not series:
        return None
    ariths = sorted({a for a, _, _ in series}, key=lambda a: (a != "fp64", a))
    fig, axes = plt.subplots(1, len(ariths), figsize=(6.2 * len(ariths), 4.6), sharey=True,
                             squeeze=False)
    axes = axes[0]
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts]
    xmin, xmax = min(xs) / 2, max(xs) * 2
    bw = roofs.get("bandwidth")
    for ax, arith in zip(axes, ariths):
        mine = sorted(((k, v) for k, v in series.items() if k[0] == arith),
                      key=lambda kv: (config_key(kv[0][1]), kv[0][2]))
        for (a, storage, config), pts in mine:
            pts.sort()
            plain = not config.lower().startswith("acc")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="s" if plain else "o",
                    color=FORMAT_COLORS.get(storage, _OTHER_COLOR), ms=4,
                    ls="--" if plain else "-", mfc="white" if plain else None,
                    label="%s storage%s" % (storage, " (plain View)" if plain else ""))
        peak = roofs.get(arith)
        if peak:
            start = peak / bw if bw else xmin
            ax.plot([start, xmax], [peak, peak], color="#444444", lw=1.2,
                    label="%s FMA peak %.0f GFLOP/s" % (arith, peak))
            ys.append(peak)
        if bw:
            top = peak or bw * xmax
            ax.plot([xmin, min(xmax, top / bw)], [bw * xmin, min(bw * xmax, top)],
                    color="#d62728", lw=1.2, label="bandwidth roof %.0f GB/s" % bw)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlim(xmin, xmax)
        ax.set_title("%s arithmetic" % arith, fontsize=10)
        ax.set_xlabel("FLOP per byte of storage moved")
        ax.legend(loc="lower right", fontsize=7.5)
    axes[0].set_ylim(min(ys) / 2, max(ys) * 2)
    axes[0].set_ylabel("GFLOP/s (median)")
    title = "Roofline: kacc views (solid) and plain Views (dashed) under the measured roofs"
    if roofs.get("check"):
        title += " (roof check %s)" % roofs["check"]
    fig.suptitle(title, fontsize=11, x=0.01, ha="left")
    fig.tight_layout()
    return _save(fig, os.path.join(out_dir, "plot_roofline.png"))
