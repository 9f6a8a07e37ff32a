#!/usr/bin/env python3
"""What a tune cache decides for an application, and what to expect of it.

usage: report_from_cache.py --cache CACHE [--sigs SIGS]...
       (gemmshim report --cache CACHE [--sigs SIGS])

CACHE is a tune cache (GEMMSHIM_TUNE_CACHE; docs/TUNING.md), SIGS a
signature file of `gemmshim record` (GEMMSHIM_RECORD), whose processes' lines
are merged by summing per signature. Per signature: its calls and share of
the recorded GEMM time, the cache's decision, its gain over cuBLAS as called
(the cache's gain=) and over the prior where the cache records one (prior=,
vs_prior=),
then the gain to expect for the application's GEMM time, each signature
weighted by its share. Without SIGS, the cache's decisions alone. Then the
decisions settled in the CUDA graphs of their recorded sequences (`gemmshim
tune --from`'s sequence phase: seq=, was=): the per-call choice's speed
there, and whether it stayed or the prior replaced it.

Exit status 0; 2 with one "gemmshim: report: ..." line on stderr when a
file cannot be read or is not what it should be. Python 3 standard library
only.
"""
import sys

from gs_signatures import Bad, decode_class, fields_of, flops_of, read_lines, read_sigs, shape_of

CACHE_MAGIC = "# gemmshim tune cache"
FACT_KEYS = ("gpu", "sms", "cc", "driver", "cublas", "cublaslt", "shim")


def fail(msg):
    print("gemmshim: report: " + msg, file=sys.stderr)
    sys.exit(2)


def number(kv, key):
    try:
        return float(kv[key])
    except (KeyError, ValueError):
        return None


def read_cache(path):
    """(validator, {class hex: decision}); a later line for a class wins,
    as the shim reads it."""
    lines, torn = read_lines(path)
    if not lines or lines[0] != CACHE_MAGIC:
        raise Bad(f"{path} is not a gemmshim tune cache (no '{CACHE_MAGIC}' first line)")
    validator, decisions, bad = "", {}, torn
    for line in lines[1:]:
        if line.startswith("validator "):
            validator = line[len("validator "):]
        elif line.startswith("sig\t"):
            parts = line.split("\t")
            kv, comment = fields_of(parts[4:])
            gain, lo95 = number(kv, "gain"), number(kv, "lo95")
            if len(parts) < 5 or gain is None or decode_class(parts[1]) is None:
                bad += 1
                continue
            decisions[parts[1]] = {"family": parts[2], "config": parts[3], "gain": gain,
                                   "lo95": lo95, "pairs": kv.get("pairs", ""), "kv": kv,
                                   "shape": comment}
    return validator, decisions, bad


def route_of(d):
    return d["family"] if d["family"] == "cublas" else f"{d['family']} {d['config']}"


def gain_over_prior(d):
    """The decision's gain over the prior's route, where the cache records
    the prior (format 2: prior=cublas|FAMILY/CONFIG with vs_prior=, the
    decision's speed over it; '?' for a decision of format 1, whose prior is
    unknown); None otherwise."""
    prior = d["kv"].get("prior")
    if prior is None or prior == "?":
        return None
    try:
        return float(d["kv"]["vs_prior"])
    except (KeyError, ValueError):
        return None


def print_settled(decisions, out):
    """The decisions settled in their recorded sequences: seq= is the
    per-call choice's speed in the CUDA graphs it appears in (weighted by
    replays; below 1: it lost there), was= that choice where the prior
    replaced it."""
    settled = [(h, d) for h, d in decisions.items() if number(d["kv"], "seq") is not None]
    if not settled:
        return
    back = sum(1 for _, d in settled if d["kv"].get("was"))
    print(f"settled in the CUDA graphs of their recorded sequences: {len(settled)} "
          f"({len(settled) - back} keep their tuned route, {back} went back to the prior)", file=out)
    print(f"  {'in graphs':>9}  {'now':<44} {'per-call choice':<44}  signature", file=out)
    for hexstr, d in sorted(settled, key=lambda kv: number(kv[1]["kv"], "seq")):
        was = d["kv"].get("was", "")
        now = ("the prior: " if was else "kept: ") + route_of(d)
        print(f"  {fmt_x(number(d['kv'], 'seq')):>9}  {now:<44} {(was.replace('/', ' ', 1) or '-'):<44}  "
              f"{d['shape'] or shape_of(decode_class(hexstr))}", file=out)


def facts_of_validator(validator):
    return dict(p.split("=", 1) for p in validator.split() if "=" in p)


def fmt_x(v):
    return f"{v:.3f}x" if v is not None else "-"


def expected(rows, key):
    """The GEMM time's speedup, sum(w) / sum(w / g) over the rows: a row
    without a decision counts at 1 (served as it was when recorded); one
    whose decision does not give `key` is left out. Returns the speedup
    (None if nothing is left) and the share of the weight left out."""
    total = kept = new = 0.0
    for r in rows:
        total += r["weight"]
        g = 1.0 if r["decision"] is None else r[key]
        if g is None or g <= 0:
            continue
        kept += r["weight"]
        new += r["weight"] / g
    return (kept / new if new > 0 else None), ((total - kept) / total if total > 0 else 0.0)


def report(cache_path, sig_paths, out=sys.stdout):
    validator, decisions, cache_bad = read_cache(cache_path)
    print(f"cache {cache_path}: {len(decisions)} decisions"
          + (f" ({cache_bad} malformed lines skipped)" if cache_bad else "")
          + (f"; validator {validator}" if validator else ""), file=out)
    if not sig_paths:
        print(f"  {'decision':<44} {'vs cuBLAS':>9} {'lo95':>6} {'vs prior':>9} {'pairs':>6}  signature",
              file=out)
        for hexstr, d in sorted(decisions.items(), key=lambda kv: -kv[1]["gain"]):
            print(f"  {route_of(d):<44} {fmt_x(d['gain']):>9} {d['lo95'] or 0:6.3f} "
                  f"{fmt_x(gain_over_prior(d)):>9} {d['pairs']:>6}  "
                  f"{d['shape'] or shape_of(decode_class(hexstr))}", file=out)
        print_settled(decisions, out)
        return 0
    rec = read_sigs(sig_paths)
    sigs = list(rec["sigs"].values())
    calls = sum(s["calls"] for s in sigs)
    captured = sum(s["captured"] for s in sigs)
    timed = sum(s["timed"] for s in sigs)
    gpu_ms = sum(s["ms"] for s in sigs)
    nproc = len(rec["procs"])
    print(f"signatures {', '.join(sig_paths)}: {nproc} process{'es' if nproc != 1 else ''}, "
          f"{len(sigs)} signatures, "
          f"{calls} calls ({captured} captured into graphs, {len(rec['seqs'])} distinct sequences); "
          f"{gpu_ms:.3f} ms of GPU time in {timed} timed calls"
          + (f"; {rec['bad']} malformed or torn lines skipped" if rec["bad"] else ""), file=out)
    vfacts = facts_of_validator(validator)
    for h in rec["headers"][:1] + rec["procs"]:
        differ = [k for k in FACT_KEYS if k in h and k in vfacts and h[k] != vfacts[k]]
        if differ:
            print("note: recorded with " + " ".join(f"{k}={h[k]}" for k in differ)
                  + ", tuned with " + " ".join(f"{k}={vfacts[k]}" for k in differ), file=out)
            break
    # weights: each signature's GPU time (its mean timed call x its eager
    # calls: replays of captured graphs are not seen); without any time
    # recorded, its FLOPs (every call counted once)
    by_time = timed > 0
    rows = []
    for s in sigs:
        cls = decode_class(s["hex"])
        eager = s["calls"] - s["captured"]
        if by_time:
            w = s["ms"] / s["timed"] * eager if s["timed"] else 0.0
        else:
            w = flops_of(cls) * s["calls"]
        d = decisions.get(s["hex"]) if s["tunable"] else None
        rows.append({"sig": s, "weight": w, "decision": d,
                     "gain": d["gain"] if d else None,
                     "prior_gain": gain_over_prior(d) if d else None,
                     "shape": s["shape"] or shape_of(cls)})
    total = sum(r["weight"] for r in rows)
    rows.sort(key=lambda r: (-r["weight"], -r["sig"]["calls"]))
    what = "time%" if by_time else "flop%"
    print(f"  {what:>6} {'calls':>9} {'captured':>8}  {'decision':<44} {'vs cuBLAS':>9} {'lo95':>6} "
          f"{'vs prior':>9}  signature", file=out)
    for r in rows:
        s, d = r["sig"], r["decision"]
        share = f"{100 * r['weight'] / total:5.1f}%" if total > 0 and (s["timed"] or not by_time) else "     -"
        if d:
            dec, lo = route_of(d), f"{d['lo95']:6.3f}" if d["lo95"] is not None else "     -"
        else:
            dec = "undecided (the prior serves)" if s["tunable"] else "not tunable: " + s["why"]
            lo = "     -"
        print(f"  {share:>6} {s['calls']:>9} {s['captured']:>8}  {dec:<44} {fmt_x(r['gain']):>9} {lo:>6} "
              f"{fmt_x(r['prior_gain']):>9}  {r['shape']}", file=out)
    unweighted = [r for r in rows if r["weight"] == 0 and r["sig"]["calls"]]
    basis = "recorded GPU time" if by_time else "FLOPs (no GPU time was recorded)"
    if total <= 0:
        print("expected: nothing to weigh (no call with GPU time or FLOPs)", file=out)
        print_settled(decisions, out)
        return 0
    undecided = sum(r["weight"] for r in rows if r["decision"] is None) / total
    g, _ = expected(rows, "gain")
    print(f"expected over cuBLAS as called: {fmt_x(g)} on the GEMM time, weighted by {basis}; "
          f"signatures without a decision ({100 * undecided:.1f}% of it) counted at 1.000x", file=out)
    gp, left = expected(rows, "prior_gain")
    print(f"expected over the prior: {fmt_x(gp)}"
          + (f" ({100 * left:.1f}% of the weight is decided without a prior recorded: left out)"
             if left > 0 else ""), file=out)
    if unweighted:
        print(f"note: {len(unweighted)} signatures ({sum(r['sig']['calls'] for r in unweighted)} calls) "
              "have no GPU time (captured only, or not timed): not weighted", file=out)
    print_settled(decisions, out)
    return 0


def main(argv):
    cache, sig_paths, i = None, [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if a in ("--cache", "--sigs") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            if a == "--cache":
                cache = argv[i + 1]
            else:
                sig_paths.append(argv[i + 1])
            i += 2
            continue
        if a in ("--cache", "--sigs"):
            fail(f"option {a} needs a value")
        fail(f"unknown argument '{a}' (usage: gemmshim report --cache CACHE [--sigs SIGS])")
    if not cache:
        fail("needs --cache CACHE (usage: gemmshim report --cache CACHE [--sigs SIGS])")
    try:
        return report(cache, sig_paths)
    except Bad as e:
        fail(str(e))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
