#!/usr/bin/env python3
"""Regenerate dispatch/gs_table_data.h from bench/results: which measurement
files feed the routing table, and which of their rows no longer describe the
shipped kernels (measured before a change to that kernel). One place for
that list, so the table can be rebuilt and checked.

usage: bench/regen_table.py [OUT.h]      (default dispatch/gs_table_data.h)
"""
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.path.join(HERE, "results")


def is_small_k_pingpong(r):
    """TN 8448x9216 with k <= 256 on a pingpong config: these walk all of m
    per column since session 5 (RASTER_ALL_M_MAX_KBLOCKS)."""
    return (r["route"].startswith("pingpong_") and r["m"] == "8448" and r["n"] == "9216"
            and int(r["k"]) <= 256)


def before_s3(r):
    """Session 1-2 runs: pingpong before the session-3 epilogue, and the decode
    ring before the session-4 staged epilogue and workspace split."""
    return r["suite"] in ("pingpong-k", "pingpong-sq", "prefill") or r["route"].startswith("skinny_ring")


def pp128_before_s4(r):
    """pingpong_128x128x64 at k >= 512 before the session-4 early handover."""
    return r["route"].startswith("pingpong_128x128x64") and int(r["k"]) >= 512


def pp_regsum_split_before_s6(r):
    """pingpong split-K into 2, 4 or 8 units per tile before session 6: these
    now sum their slice in registers and store it through the staged epilogue
    (split_epilogue's whole-sub-tile path). Older files log no "_splitkS"
    suffix, so every pingpong row of the deepk suite goes too (the session-6
    deepk files re-measure all of them)."""
    return r["route"].startswith("pingpong_") and (
        r["suite"] == "deepk" or r["route"].rsplit("_", 1)[-1] in ("splitk2", "splitk4", "splitk8"))


def pp128_short_k_before_s7(r):
    """pingpong_128x128x64 (unsplit) with k <= 256 before session 7: these
    now run the short-K variant (Cfg128x128Short: 4 staging buffers per
    warp, the epilogue batched, 5 stages)."""
    return r["route"] == "pingpong_128x128x64" and int(r["k"]) <= 256


def pp128_hoist_build_s7(r):
    """pingpong_128x128x64 rows with k > 256 of the two session-7 files
    measured with a build that computed every tile's coordinates before
    the last wgmma wait (1.5-4% slower at k >= 1024, reverted there)."""
    return r["route"].startswith("pingpong_128x128x64") and int(r["k"]) > 256


def pp_before_s8(r):
    """Every pingpong row (both configurations, split or not) before session
    8: the epilogue lost a per-sub-tile runtime test that ptxas had turned
    into a ~130-instruction chain at the head of every epilogue (coop +2-6%
    at k <= 2048, 128x128 +2% at k = 128-512)."""
    return r["route"].startswith("pingpong_")


def pdl_before_s9(r):
    """Every pingpong and decode (skinny) row before session 9: these kernels
    are launched with programmatic dependent launch since then (the launch
    overlaps the previous grid's drain: ~1 us per call, decode ring +4-8%,
    pingpong +1-3% at small k)."""
    return r["route"].startswith("pingpong_") or r["route"].startswith("skinny_")


def coop_before_s10(r):
    """Unsplit cooperative-tile rows before session 10: half of its epilogue
    is deferred into the next tile's mainloop since then (H200, TN 8448x9216
    K = 512..2048 +3-5%, squares +1-2%)."""
    return r["route"] == "pingpong_coop_256x128x64"


def coop_streamk_now(r):
    """The cooperative tile deals this bench shape's ragged last wave out by
    k-blocks (stream-K, session 15): plan_sk's rule (kernels/pingpong/pingpong_sm90.cu)
    on a 132-SM GPU, batch 1, 16-bit output of the input's type."""
    if not r["route"].startswith("pingpong_coop_256x128x64") or ">" in r["dtype"]:
        return False
    m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
    tiles, kb, sms = -(-m // 256) * -(-n // 128), -(-k // 64), 132
    return tiles > sms and 0 < tiles % sms <= sms // 2 and kb >= 32


def not_the_shipped_plan(r):
    """Rows of the session-15 stream-K A/B files whose plan (stream-K or
    whole tiles, GEMMSHIM_DEV_PINGPONG_SK) is not what the shipped rule picks for the
    shape."""
    return ("_streamk" in r["route"]) != coop_streamk_now(r)


# (file, drop-row predicates of that file alone): in the order the header
# names them.
SOURCES = [
    ("h200-all.csv", [before_s3]),
    ("h200-default-policy.csv", [before_s3]),
    ("h200-default-policy-final.csv", [before_s3]),
    ("h100-all.csv", [before_s3]),
    ("h100-default-policy.csv", [before_s3]),
    ("h200-pingpong-s3.csv", [pp128_before_s4]),
    ("h200-pingpong-s3-first.csv", [pp128_before_s4]),
    ("h100-pingpong-s3.csv", [pp128_before_s4]),
    ("h200-pingpong-s3-final.csv", [pp128_before_s4]),
    ("h200-decode-s4.csv", []),
    ("h200-pingpong-s4.csv", []),
    ("h200-default-policy-s4.csv", []),
    ("h200-pingpong-s5.csv", []),
    ("h200-pingpong-s5-final.csv", []),
    ("h200-decode-s5.csv", []),
    ("h200-default-policy-s5.csv", []),
    ("h100-s5.csv", []),
    ("h200-default-policy-s5-final.csv", []),
    ("h100-default-policy-s5.csv", []),
    ("h200-deepk-s6.csv", []),
    ("h100-deepk-s6.csv", []),
    ("h200-pingpong-s7.csv", [pp128_hoist_build_s7]),
    ("h100-pingpong-s7.csv", [pp128_hoist_build_s7]),
    ("h200-pingpong-s7-final.csv", []),
    ("h200-pingpong-s8.csv", []),
    ("h100-pingpong-s8.csv", []),
    ("h200-default-policy-s8.csv", []),
    ("h100-default-policy-s8.csv", []),
    ("h200-default-policy-s8-final.csv", []),
    ("h200-suites-s9.csv", []),
    ("h100-suites-s9.csv", []),
    ("h200-default-policy-s9.csv", []),
    ("h100-default-policy-s9.csv", []),
    ("h200-suites-s10.csv", []),
    ("h100-suites-s10.csv", []),
    ("h200-default-policy-s10.csv", []),
    ("h100-default-policy-s10.csv", []),
    ("h200-s12-default-policy-repeats.csv", []),
    ("h200-default-policy-s12.csv", []),
    ("h100-default-policy-s12.csv", []),
    ("h200-default-policy-s12-final.csv", []),
    ("h100-default-policy-s12-final.csv", []),
    # session 13: decode with the Llama-3-8B rows (stream launches), and every
    # suite timed from CUDA graphs (bench_ab --graph): the lowest reading of
    # the two ways of launching stands, as for repeated runs
    ("h200-decode-s13.csv", []),
    ("h100-decode-s13.csv", []),
    ("h200-decode-graph-s13.csv", []),
    ("h200-deepk-graph-s13.csv", []),
    ("h200-sgemm-graph-s13.csv", []),
    ("h200-pingpong-graph-s13.csv", []),
    ("h200-prefill-graph-s13.csv", []),
    ("h100-decode-graph-s13.csv", []),
    ("h100-deepk-graph-s13.csv", []),
    ("h100-sgemm-graph-s13.csv", []),
    ("h100-pingpong-graph-s13.csv", []),
    ("h100-prefill-graph-s13.csv", []),
    ("h200-decode-graph-between-s13.csv", []),
    ("h200-deepk-graph-between-s13.csv", []),
    ("h200-sgemm-graph-between-s13.csv", []),
    ("h200-pingpong-graph-between-s13.csv", []),
    ("h200-prefill-graph-between-s13.csv", []),
    ("h100-decode-graph-between-s13.csv", []),
    ("h100-deepk-graph-between-s13.csv", []),
    ("h100-sgemm-graph-between-s13.csv", []),
    ("h100-pingpong-graph-between-s13.csv", []),
    ("h100-prefill-graph-between-s13.csv", []),
    # PyTorch's own decode calls in a CUDA graph, each after an elementwise
    # kernel (bench/torch_decode_ab.py; two repeats each)
    ("h200-decode-torch-s13.csv", []),
    ("h100-decode-torch-s13.csv", []),
    # default policy on the table above: stream, graph with a kernel between, PyTorch
    ("h200-default-policy-s13.csv", []),
    ("h100-default-policy-s13.csv", []),
    ("h200-default-policy-torch-s13.csv", []),
    ("h100-default-policy-torch-s13.csv", []),
    ("h100-default-policy-s13-final.csv", []),
    ("h100-default-policy-torch-s13-final.csv", []),
    ("h200-default-policy-s13-final.csv", []),
    ("h200-default-policy-torch-s13-final.csv", []),
    # session 15: the cooperative tile forced, stream-K on (shipped rule) and
    # off, in one run per GPU (bench/ab_env.sh, bench/shapes/streamk.txt)
    ("h200-s15-streamk-ab.csv", [not_the_shipped_plan]),
    ("h100-s15-streamk-ab.csv", [not_the_shipped_plan]),
    # default policy on the table above (every suite; the stream-K shapes)
    ("h200-default-policy-s15.csv", []),
    ("h200-default-policy-streamk-s15.csv", []),
    # session 17: the 192x128 pingpong tile next to the two shipped tiles,
    # each forced, two repeats in one run per GPU (bench/ab_env.sh,
    # bench/shapes/issue3.txt); every suite with the 192x128 tile forced (H100)
    ("h100-s17-pp192-ab.csv", []),
    ("h200-s17-pp192-ab.csv", []),
    ("h100-s17-pp192-suites.csv", []),
    ("h200-s17-pp192-suites.csv", []),
    # default policy on the table with the rows above (H200): every suite,
    # the stream-K shapes, issue 3's set twice
    ("h200-default-policy-s17.csv", []),
    ("h200-default-policy-streamk-s17.csv", []),
    ("h200-default-policy-issue3-s17.csv", []),
    ("h100-default-policy-s17.csv", []),
    ("h100-default-policy-streamk-s17.csv", []),
    ("h100-default-policy-issue3-s17.csv", []),
    ("h200-default-policy-s17-final.csv", []),
    ("h200-default-policy-streamk-s17-final.csv", []),
    ("h200-default-policy-issue3-s17-final.csv", []),
]

# (predicate, first file it does not apply to): a kernel change, whose
# predicate drops the rows it made stale from every file listed before the
# first one measured after it.
KERNEL_CHANGES = [
    (is_small_k_pingpong, "h200-pingpong-s5.csv"),
    (pp_regsum_split_before_s6, "h200-deepk-s6.csv"),
    (pp128_short_k_before_s7, "h200-pingpong-s7.csv"),
    (pp_before_s8, "h200-pingpong-s8.csv"),
    (pdl_before_s9, "h200-suites-s9.csv"),
    (coop_before_s10, "h200-suites-s10.csv"),
    (coop_streamk_now, "h200-s15-streamk-ab.csv"),  # measured dealt whole before
]


def drops_of(index, own):
    """The predicates for SOURCES[index]: its own, then every kernel change
    measured after it."""
    names = [name for name, _ in SOURCES]
    return own + [pred for pred, first in KERNEL_CHANGES if index < names.index(first)]


NOTE = "Which rows of those files were dropped, and why: bench/regen_table.py."


def main(argv):
    out = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "dispatch", "gs_table_data.h")
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, (name, own) in enumerate(SOURCES):
            drops = drops_of(i, own)
            with open(os.path.join(RES, name), newline="") as f:
                rd = csv.DictReader(f)
                rows = [r for r in rd if not any(d(r) for d in drops)]
                fields = rd.fieldnames
            path = os.path.join(tmp, name)
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields)
                w.writeheader()
                w.writerows(rows)
            paths.append(path)
        return subprocess.call([sys.executable, os.path.join(HERE, "table_from_csv.py"),
                                "--note", NOTE, "90", out] + paths)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
