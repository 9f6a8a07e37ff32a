#!/usr/bin/env python3
"""Plot bench_ab CSV files: speedup over cuBLAS per shape (bars), one panel per suite."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) < 3:
        print("usage: plot.py OUT.png FILE.csv [FILE.csv ...]", file=sys.stderr)
        return 2
    rows = []
    for path in argv[2:]:
        with open(path, newline="") as f:
            rows.extend(csv.DictReader(f))
    if not rows:
        print("plot.py: no rows", file=sys.stderr)
        return 1
    suites = []
    for r in rows:
        if r["suite"] not in suites:
            suites.append(r["suite"])
    fig, axes = plt.subplots(len(suites), 1, figsize=(10, 2.2 + 0.32 * len(rows)), squeeze=False)
    for ax, suite in zip(axes[:, 0], suites):
        sel = [r for r in rows if r["suite"] == suite]
        labels = [f'{r["dtype"]} {r["layout"]} {r["m"]}x{r["n"]}x{r["k"]} {r["route"]}' for r in sel]
        # a repeated label (older CSVs name only the input type) would stack
        # two bars on one row: number the repeats
        seen = {}
        for i, l in enumerate(labels):
            seen[l] = seen.get(l, 0) + 1
            if seen[l] > 1:
                labels[i] = f"{l} #{seen[l]}"

        speed = [float(r["speedup"]) for r in sel]
        colors = ["#2a9d8f" if s >= 1.0 else ("#e9c46a" if s >= 0.9 else "#e76f51") for s in speed]
        ax.barh(labels, speed, color=colors)
        ax.axvline(1.0, color="black", linewidth=1)
        for y, s in enumerate(speed):
            ax.text(s, y, f" {s:.2f}x", va="center", fontsize=8)
        ax.set_title(f"{suite}: speedup over cuBLAS (cuBLAS time / gemmshim time)", fontsize=10)
        ax.invert_yaxis()
        ax.tick_params(axis="y", labelsize=8)
    fig.suptitle(rows[0]["gpu"], fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(argv[1], dpi=110)
    print(f"plot.py: wrote {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
