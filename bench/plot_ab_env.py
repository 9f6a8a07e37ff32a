#!/usr/bin/env python3
"""Bar plot of a same-run A/B of environment variants (bench/ab_env.sh CSVs):
per shape, each variant's median speedup over cuBLAS, one panel per file.

usage: bench/plot_ab_env.py OUT.png A.csv [B.csv ...]
"""
import collections
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def medians(path):
    """{shape label: {variant: median speedup}}, in file order; the GPU name."""
    by = collections.OrderedDict()
    gpu = ""
    for r in csv.DictReader(open(path, newline="")):
        gpu = r["gpu"]
        label = f'{r["layout"]} {r["m"]}x{r["n"]}x{r["k"]}' + ("" if r["dtype"] == "bf16" else f' {r["dtype"]}')
        by.setdefault(label, collections.OrderedDict()).setdefault(r["variant"], []).append(float(r["speedup"]))
    return {k: {v: statistics.median(x) for v, x in vs.items()} for k, vs in by.items()}, gpu


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    files = argv[2:]
    fig, axes = plt.subplots(len(files), 1, figsize=(13, 4.2 * len(files)), squeeze=False)
    for ax, path in zip(axes[:, 0], files):
        data, gpu = medians(path)
        labels = list(data)
        variants = list(next(iter(data.values())))
        w = 0.8 / len(variants)
        for i, v in enumerate(variants):
            ax.bar([j + i * w for j in range(len(labels))], [data[l].get(v, 0) for l in labels], w, label=v)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.axhline(0.98, color="r", lw=0.6, ls="--")
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(labels))])
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("speedup over cuBLAS")
        top = max(max(vs.values()) for vs in data.values())
        ax.set_ylim(0.5, max(1.15, top + 0.03))  # the tallest bar stays in view
        ax.set_title(f"{gpu}: {path.rsplit('/', 1)[-1]}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
