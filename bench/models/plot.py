#!/usr/bin/env python3
"""Plot the model workloads: measured end-to-end ratio (with its 95%
interval) beside the ceiling of the tuned choices.

    python3 bench/models/plot.py --models res.jsonl [--ceiling ceiling.json]
        [--r30 more.jsonl] -o models.png

--r30: a run of more rounds for some workloads; its line replaces the
--models line of the same workload (the noisy large-GEMM ones)."""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from gs_records import is_result  # noqa: E402


def load(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("ratio_median") is not None and is_result(r):
            out[r["workload"]] = r
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--ceiling", default=None)
    ap.add_argument("--r30", default=None)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--title", default="gemmshim, tuned cache: unmodified PyTorch models, end to end")
    args = ap.parse_args()

    runs = load(args.models)
    if args.r30:
        runs.update(load(args.r30))
    rounds = {n: r["rounds"] for n, r in runs.items()}
    ceil = {}
    if args.ceiling:
        for r in json.load(open(args.ceiling)):
            ceil[r["workload"]] = r
    names = list(runs)
    x = range(len(names))
    med = [runs[n]["ratio_median"] for n in names]
    lo = [runs[n]["ratio_median"] - runs[n]["ratio_lo95"] for n in names]
    hi = [runs[n]["ratio_hi95"] - runs[n]["ratio_median"] for n in names]

    fig, ax = plt.subplots(figsize=(10, 4.2))
    ax.bar(x, [m - 1.0 for m in med], bottom=1.0, color="#4477aa", width=0.6,
           yerr=[lo, hi], capsize=3, label="measured, median and 95% interval")
    cx = [i for i, n in enumerate(names) if ceil.get(n, {}).get("ceiling")
          and not n.startswith("llama_decode")]
    if cx:  # no legend entry for a ceiling not drawn
        ax.scatter(cx, [ceil[names[i]]["ceiling"] for i in cx], marker="_", s=400, color="#cc6677",
                   linewidths=2.5, zorder=3, label="ceiling of the tuned choices (pair gains)")
    for i, m in enumerate(med):
        ax.annotate(f"{m:.3f}", (i, max(m, 1.0) + hi[i] + 0.004), ha="center", fontsize=8)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(list(x))
    ax.set_xticklabels([n.replace("llama_", "").replace("_", " ") + f"\n{rounds[n]} rounds"
                        for n in names], fontsize=8)
    ax.set_ylabel("plain time / time with gemmshim")
    ax.set_ylim(0.95, max(max(m + h for m, h in zip(med, hi)), 1.1) + 0.02)
    gpu = next(iter(runs.values())).get("gpu", "")
    ax.set_title(f"{args.title}\n{gpu}, OFF/ON in one process, alternating rounds", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
