#!/usr/bin/env python3
"""What tuned routing can gain per workload, beside what it gained.

    python3 bench/models/ceiling.py --models res.jsonl --ab-prefix DIR/ab \\
        --cache models.cache [--sigs models.sigs] [--json out.json]

Reads three things of one GPU and one shim build:
  --models     the OFF/ON timing (run_all.sh ... --profile-gemm-share): per
               workload the plain iteration time T (off_ms), the GEMM kernel
               time G of one plain iteration (the profile), the end-to-end ratio;
  --ab-prefix  the ab pass (run_all.sh --ab-iters N --ab-prefix P): per
               workload, per routed signature, cuBLAS's and the choice's mean
               GPU time inside the model, and its calls;
  --cache      the tune cache: per signature the gain its choice showed in
               the tuner's pairs.

Per workload:
  gemm_share   G / T: the most any GEMM speed-up can move the iteration;
  ceiling      T / (T - saved), saved = sum over routed signatures of
               calls/iteration x cuBLAS time x (1 - 1/pair gain): the
               end-to-end ratio the tuner's own measurements promise;
  in_model     the same with the gains the ab pass measured inside the model;
  measured     the end-to-end ratio of the OFF/ON timing.
A signature the cache keeps with cuBLAS gains nothing in either sum.
"""
import argparse
import json
import os
import re
import sys

from gs_records import is_result

SHAPE = re.compile(r"(?P<entry>\S+) (?P<tr>[NT]{2}) (?P<a>\w+),\w+->\w+ (?:compute=\S+ )?"
                   r"m=(?P<m>\d+) n=(?P<n>\d+) k=(?P<k>\d+) batch=(?P<batch>\d+)")
CACHE_SHAPE = re.compile(r"# (?P<entry>\S+) (?P<a>\w+) (?P<tr>[NT]{2}) m=(?P<m>\d+) n=(?P<n>\d+) "
                         r"k=(?P<k>\d+) batch=(?P<batch>\d+)")


def key_of(m):
    return (m["entry"], m["tr"], m["a"], int(m["m"]), int(m["n"]), int(m["k"]), int(m["batch"]))


def read_sigs(path):
    """class hex -> shape key, from a signature file (gemmshim record): for
    cache lines whose comment a compaction left empty."""
    out = {}
    for line in open(path):
        cols = line.rstrip("\n").split("\t")
        if cols[0] == "sig" and len(cols) > 2 and cols[-1].startswith("# "):
            m = SHAPE.match(cols[-1][2:])
            if m:
                out[cols[1]] = key_of(m)
    return out


def read_cache(path, shapes=None):
    """key -> [(family, gain)], of every decision line; shapes (class hex ->
    key) names the lines without a shape comment."""
    out = {}
    for line in open(path):
        if not line.startswith("sig\t"):
            continue
        cols = line.rstrip("\n").split("\t")
        m = CACHE_SHAPE.search(line)
        if not m and shapes and cols[1] in shapes:
            gain = next((float(c[5:]) for c in cols if c.startswith("gain=")), None)
            if gain is not None and len(cols) > 2:
                out.setdefault(shapes[cols[1]], []).append((cols[2], gain))
            continue
        gain = next((float(c[5:]) for c in cols if c.startswith("gain=")), None)
        if m and gain is not None and len(cols) > 2:
            out.setdefault(key_of(m), []).append((cols[2], gain))
    return out


def family_of(route):
    """The family a route (kernel or configuration name) belongs to."""
    for fam in ("cublaslt", "pingpong", "skinny", "sgemm"):
        if route.startswith(fam):
            return "sgemm_simt" if fam == "sgemm" else fam
    return route


def pair_gain(cache, key, route):
    """The tuner's gain for a routed signature: the cache's winner of the
    route's family (a shape tuned twice, e.g. fp32 and TF32, has one line
    each); None when the cache has no line for it (routed by the prior)."""
    cands = [g for fam, g in cache.get(key, []) if fam == family_of(route)]
    return min(cands) if cands else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--ab-prefix", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--sigs", default=None,
                    help="the recorded signature file: shapes for cache lines without one")
    ap.add_argument("--json", default=None, help="also write the rows here")
    args = ap.parse_args()

    timing = {}
    ab_iters = {}
    for line in open(args.models):
        r = json.loads(line)
        if "ab_iters" in r:
            ab_iters[r["workload"]] = r["ab_iters"]
        elif r.get("off_ms") is not None and is_result(r):
            timing[r["workload"]] = r
    cache = read_cache(args.cache, read_sigs(args.sigs) if args.sigs else None)

    rows = []
    for wl, r in timing.items():
        T = r["off_ms"]
        prof = (r.get("gemm_share") or {}).get("off")
        G = prof["gemm_us"] / 1000.0 if prof else None
        path = f"{args.ab_prefix}-{wl}.json"
        saved_pairs = saved_model = 0.0
        routed = unmatched = 0
        n = ab_iters.get(wl)
        # an ab pass that ran but routed nothing writes no report: gains 0
        have = bool(n) and (os.path.exists(path) or r.get("gemm_calls_routed") == 0)
        if have and os.path.exists(path):
            for row in json.load(open(path))["rows"]:
                cu, ours = row.get("cublas_us"), row.get("ours_us")
                if cu is None or ours is None or not cu > 0 or not ours > 0:
                    continue
                m = SHAPE.match(row["signature"])
                per_iter_ms = row["calls"] / n * cu / 1000.0
                routed += 1
                saved_model += per_iter_ms * (1.0 - ours / cu)
                g = pair_gain(cache, key_of(m), row["route"]) if m else None
                if g is None or not g > 0:
                    unmatched += 1  # routed by the prior: its in-model time stands in
                    g = cu / ours
                saved_pairs += per_iter_ms * (1.0 - 1.0 / g)
        ceiling_of = lambda saved: T / (T - saved) if have and T - saved > 0 else None
        rows.append({
            "workload": wl, "off_ms": T, "gemm_ms": G,
            "gemm_share": G / T if G is not None else None,
            "routed_signatures": routed, "prior_routed": unmatched,
            "ceiling": ceiling_of(saved_pairs),
            "in_model": ceiling_of(saved_model),
            "measured": r.get("ratio_median"), "measured_lo95": r.get("ratio_lo95"),
        })

    fmt = lambda x, f: format(x, f) if x is not None else "n/a"
    print(f"{'workload':<18} {'off ms':>9} {'GEMM ms':>9} {'share':>6} {'sigs':>5} {'prior':>5} "
          f"{'ceiling':>8} {'in model':>9} {'measured':>9} {'lo95':>6}")
    for x in rows:
        print(f"{x['workload']:<18} {fmt(x['off_ms'], '9.3f')} {fmt(x['gemm_ms'], '9.3f')} "
              f"{fmt(x['gemm_share'], '6.2f')} {x['routed_signatures']:>5} {x['prior_routed']:>5} "
              f"{fmt(x['ceiling'], '8.3f')} {fmt(x['in_model'], '9.3f')} "
              f"{fmt(x['measured'], '9.3f')} {fmt(x['measured_lo95'], '6.3f')}")
    print("sigs: routed signatures timed by the ab pass; prior: of them, routed by the table's "
          "prior (no tuned gain: the in-model gain stands in); n/a: no ab pass")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
