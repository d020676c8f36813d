#!/usr/bin/env python3
"""Draws roofline.png from the CSV and JSON that kacc-roofline writes into DIR.

Log-log GFLOP/s against FLOPs/byte, one line per configuration (medians), the measured
roofs: bandwidth (the highest STREAM memory traffic, write-allocate included) and compute
(register-resident FMA probe, fp64 and fp32), and the machine balance marked.
Usage: plot_roofline.py DIR
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(out_dir):
    with open(os.path.join(out_dir, "roofline.json")) as f:
        info = json.load(f)
    curves = {}
    with open(os.path.join(out_dir, "roofline.csv")) as f:
        for row in csv.DictReader(f):
            c = curves.setdefault(row["config"], ([], []))
            c[0].append(float(row["flops_per_byte"]))
            c[1].append(float(row["gflops_median"]))
    labels = info.get("config_labels", {})
    bw = float(info["bandwidth_roof_gbs"])
    p64 = float(info["fma_peak_fp64_gflops"])
    p32 = float(info["fma_peak_fp32_gflops"])
    b64 = float(info["machine_balance_fp64_flops_per_byte"])
    b32 = float(info["machine_balance_fp32_flops_per_byte"])

    xs = [x for c in curves.values() for x in c[0]]
    xmin, xmax = min(xs + [b64]) / 2, max(xs + [b32]) * 2
    fig, ax = plt.subplots(figsize=(10, 6.5))
    styles = {"fp64": ("-", "o"), "fp32": ("-", "s")}
    for name, (x, y) in curves.items():
        ls, mk = styles.get(name, ("--", "."))
        ax.plot(x, y, ls, marker=mk, label=labels.get(name, name), linewidth=1.4, markersize=5)
    ax.plot([xmin, p32 / bw], [bw * xmin, p32], "k-", linewidth=2.2, alpha=0.35)
    ax.plot([b64, xmax], [p64, p64], "k--", linewidth=1.4, alpha=0.6)
    ax.plot([b32, xmax], [p32, p32], "k:", linewidth=1.4, alpha=0.6)
    ax.text(xmin * 1.1, bw * xmin * 1.25, f"bandwidth roof {bw:.1f} GB/s (STREAM traffic)",
            rotation=0, fontsize=9)
    ax.text(xmax / 1.1, p64 * 0.88, f"fp64 FMA peak {p64:.0f} GFLOP/s", ha="right", fontsize=9)
    ax.text(xmax / 1.1, p32 * 1.05, f"fp32 FMA peak {p32:.0f} GFLOP/s", ha="right", fontsize=9)
    for b, name in ((b64, "fp64"), (b32, "fp32")):
        ax.axvline(b, color="grey", linewidth=0.8, linestyle="-.")
        ax.text(b * 1.05, bw * xmin * 1.5, f"MB {name} = {b:.2f}", rotation=90, fontsize=8,
                va="bottom", color="grey")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlim(xmin, xmax)
    ax.set_xlabel("arithmetic intensity [FLOPs/byte] (bytes in the storage format)")
    ax.set_ylabel("performance [GFLOP/s] (arithmetic-format FLOPs, conversions not counted)")
    title = (f"kacc experimental roofline: {info.get('cpu', '')}, {info.get('execution_space', '')} "
             f"x{info.get('concurrency', '')}, Kokkos {info.get('kokkos_version', '')}")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="lower right", ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "roofline.png"), dpi=130)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: plot_roofline.py DIR")
    main(sys.argv[1])
