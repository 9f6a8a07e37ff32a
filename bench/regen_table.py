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
    """TN 8448x9216 with k <= 256 on a pingpong config: these now walk all
    of m per column (RASTER_ALL_M_MAX_KBLOCKS)."""
    return (r["route"].startswith("pingpong_") and r["m"] == "8448" and r["n"] == "9216"
            and int(r["k"]) <= 256)


def before_first_epilogue(r):
    """The first runs: pingpong before its per-warp staged epilogue, and the
    decode ring before its staged epilogue and workspace split."""
    return r["suite"] in ("pingpong-k", "pingpong-sq", "prefill") or r["route"].startswith("skinny_ring")


def pp128_before_early_handover(r):
    """pingpong_128x128x64 at k >= 512 before the early handover of its
    accumulators to the epilogue."""
    return r["route"].startswith("pingpong_128x128x64") and int(r["k"]) >= 512


def pp_split_before_register_sum(r):
    """pingpong split-K into 2, 4 or 8 units per tile before they summed
    their slice in registers and stored it through the staged epilogue
    (split_epilogue's whole-sub-tile path). Older files log no "_splitkS"
    suffix, so every pingpong row of the deepk suite goes too (the later
    deepk files re-measure all of them)."""
    return r["route"].startswith("pingpong_") and (
        r["suite"] == "deepk" or r["route"].rsplit("_", 1)[-1] in ("splitk2", "splitk4", "splitk8"))


def pp128_before_short_k_variant(r):
    """pingpong_128x128x64 (unsplit) with k <= 256 before the short-K
    variant, which they now run (Cfg128x128Short: 4 staging buffers per
    warp, the epilogue batched, 5 stages)."""
    return r["route"] == "pingpong_128x128x64" and int(r["k"]) <= 256


def pp128_hoisted_coordinates_build(r):
    """pingpong_128x128x64 rows with k > 256 of the two files measured with
    a build that computed every tile's coordinates before
    the last wgmma wait (1.5-4% slower at k >= 1024, reverted there)."""
    return r["route"].startswith("pingpong_128x128x64") and int(r["k"]) > 256


def pp_before_epilogue_chain_fix(r):
    """Every pingpong row (both configurations, split or not) before the
    epilogue lost a per-sub-tile runtime test that ptxas had turned
    into a ~130-instruction chain at the head of every epilogue (coop +2-6%
    at k <= 2048, 128x128 +2% at k = 128-512)."""
    return r["route"].startswith("pingpong_")


def before_pdl(r):
    """Every pingpong and decode (skinny) row before these kernels were
    launched with programmatic dependent launch (the launch
    overlaps the previous grid's drain: ~1 us per call, decode ring +4-8%,
    pingpong +1-3% at small k)."""
    return r["route"].startswith("pingpong_") or r["route"].startswith("skinny_")


def coop_before_deferred_epilogue(r):
    """Unsplit cooperative-tile rows before half of its epilogue was
    deferred into the next tile's mainloop (H200, TN 8448x9216
    K = 512..2048 +3-5%, squares +1-2%)."""
    return r["route"] == "pingpong_coop_256x128x64"


def coop_streamk_now(r):
    """The cooperative tile deals this bench shape's ragged last wave out by
    k-blocks (stream-K): plan_sk's rule (kernels/pingpong/pingpong_sm90.cu)
    on a 132-SM GPU, batch 1, 16-bit output of the input's type."""
    if not r["route"].startswith("pingpong_coop_256x128x64") or ">" in r["dtype"]:
        return False
    m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
    tiles, kb, sms = -(-m // 256) * -(-n // 128), -(-k // 64), 132
    return tiles > sms and 0 < tiles % sms <= sms // 2 and kb >= 32


def not_the_shipped_plan(r):
    """Rows of the stream-K A/B files whose plan (stream-K or
    whole tiles, GEMMSHIM_DEV_PINGPONG_SK) is not what the shipped rule picks for the
    shape."""
    return ("_streamk" in r["route"]) != coop_streamk_now(r)


def shipped_decode_plans():
    """{(m, n, k): route} of the bf16 decode ring on the Llama projections
    as the shipped split rule plans them (the final build's own run)."""
    with open(os.path.join(RES, "h200-decode-split", "llama-graph-1.csv"), newline="") as f:
        return {(r["m"], r["n"], r["k"]): r["route"] for r in csv.DictReader(f)}


SHIPPED_DECODE = shipped_decode_plans()


def not_the_shipped_decode_plan(r):
    """Rows of the bf16 decode split files whose plan is not the one the
    shipped rule picks for the shape: the sweep's other forced splits, the
    build before the long-weight split at 8192 x 16 x 28672, the wider
    first rule at 8192 x 16 x 8192. Forced runs that picked the shipped
    plan are readings of it and stay."""
    return r["route"] != SHIPPED_DECODE.get((r["m"], r["n"], r["k"]))


# (file, drop-row predicates of that file alone): in the order the header
# names them.
SOURCES = [
    ("h200-all.csv", [before_first_epilogue]),
    ("h200-default-policy.csv", [before_first_epilogue]),
    ("h200-default-policy-final.csv", [before_first_epilogue]),
    ("h100-all.csv", [before_first_epilogue]),
    ("h100-default-policy.csv", [before_first_epilogue]),
    ("h200-pingpong-s3.csv", [pp128_before_early_handover]),
    ("h200-pingpong-s3-first.csv", [pp128_before_early_handover]),
    ("h100-pingpong-s3.csv", [pp128_before_early_handover]),
    ("h200-pingpong-s3-final.csv", [pp128_before_early_handover]),
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
    ("h200-pingpong-s7.csv", [pp128_hoisted_coordinates_build]),
    ("h100-pingpong-s7.csv", [pp128_hoisted_coordinates_build]),
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
    # decode with the Llama-3-8B rows (stream launches), and every
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
    # the cooperative tile forced, stream-K on (shipped rule) and
    # off, in one run per GPU (bench/ab_env.sh, bench/shapes/streamk.txt)
    ("h200-s15-streamk-ab.csv", [not_the_shipped_plan]),
    ("h100-s15-streamk-ab.csv", [not_the_shipped_plan]),
    # default policy on the table above (every suite; the stream-K shapes)
    ("h200-default-policy-s15.csv", []),
    ("h200-default-policy-streamk-s15.csv", []),
    # the 192x128 pingpong tile next to the two shipped tiles,
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
    # a C that TMA cannot store (odd vocabularies' logits: ldc = m, tight),
    # stored directly by the 128-row tiles, each forced (bench_ab rows as
    # printed by that run, h100-tuning/vocab-bench.txt)
    ("h100-vocab-direct-c.csv", []),
    # an operand TMA cannot load (the logits gradient of an odd vocabulary,
    # ld = the vocabulary), packed chunk by chunk by the pingpong tiles,
    # each tile forced (bench/shapes/vocab-backward.txt)
    ("h100-vocab-backward-packed.csv", []),
    # the odd classes the 16-bit tiles take, one operand packed and/or C
    # stored directly, shapes no suite measured, the eligible policy's
    # choice per shape (bench/shapes/odd-one-operand.txt)
    ("h100-odd-one-operand-eligible.csv", []),
    # FP8 decode (bench_fp8, e4m3, tensorwise and rowwise, fast accumulation
    # on and off), each decode kernel forced: --suite fp8-decode on the build
    # the docs' FP8 decode table measured and on the current kernels (the
    # alpha-0 rule since), then bench/shapes/fp8-decode-llama.txt twice;
    # the lowest reading of each shape and scale mode stands
    ("h200-fp8-decode/dedup-fp8_decode_ring.csv", []),
    ("h200-fp8-decode/dedup-fp8_decode_wg.csv", []),
    ("h200-fp8-decode/table-fp8_decode_ring.csv", []),
    ("h200-fp8-decode/table-fp8_decode_wg.csv", []),
    ("h200-fp8-decode/llama-fp8_decode_ring-1.csv", []),
    ("h200-fp8-decode/llama-fp8_decode_wg-1.csv", []),
    ("h200-fp8-decode/llama-fp8_decode_ring-2.csv", []),
    ("h200-fp8-decode/llama-fp8_decode_wg-2.csv", []),
    # the default policy on the table above (both lists): a row it routed
    # and measured slower there (cuBLASLt's host time per call varies from
    # process to process on the smallest shapes) loses its route
    ("h200-fp8-decode/default-llama-1.csv", []),
    ("h200-fp8-decode/default-suite-1.csv", []),
    ("h200-fp8-decode/default-llama-2.csv", []),
    ("h200-fp8-decode/default-suite-2.csv", []),
    ("h200-fp8-decode/default-llama-3.csv", []),
    ("h200-fp8-decode/default-suite-3.csv", []),
    # the same calls replayed from CUDA graphs (bench_fp8 --graph: what a
    # serving engine's captured decode step sees, cuBLASLt's host time per
    # call out of the picture), each kernel forced and the default policy:
    # tensorwise rows that gained from that host time in a stream lose
    # their routes here
    ("h200-fp8-decode/graph-fp8_decode_ring-llama.csv", []),
    ("h200-fp8-decode/graph-fp8_decode_wg-llama.csv", []),
    ("h200-fp8-decode/graph-fp8_decode_ring-suite.csv", []),
    ("h200-fp8-decode/graph-default-llama.csv", []),
    # the default policy on the table with all of the above, both regimes
    # (docs/PERFORMANCE.md's FP8 decode figures)
    ("h200-fp8-decode/final-default-llama.csv", []),
    ("h200-fp8-decode/final-default-suite.csv", []),
    ("h200-fp8-decode/final-default-llama-graph.csv", []),
    ("h200-fp8-decode/final-default-suite-graph.csv", []),
    # the bf16 decode ring on Llama-3-8B and -70B projections at n = 16, 32
    # and 64 (bench/shapes/decode-llama-bf16.txt), from graphs and in a
    # stream, over four device sessions: the forced-split sweep, the split
    # rule against the build before it, the final build, and its stream and
    # graph runs; only the shipped plan's rows. These files and every
    # h200-decode-split one below are EXACT_SOURCES: their new entries hold
    # for their own m and k (and n's bucket)
    ("h200-decode-split/sweep-forced.csv", [not_the_shipped_decode_plan]),
    ("h200-decode-split/rule-graph.csv", [not_the_shipped_decode_plan]),
    ("h200-decode-split/final-graph.csv", [not_the_shipped_decode_plan]),
    ("h200-decode-split/llama-stream-1.csv", [not_the_shipped_decode_plan]),
    ("h200-decode-split/llama-stream-2.csv", [not_the_shipped_decode_plan]),
    ("h200-decode-split/llama-graph-1.csv", [not_the_shipped_decode_plan]),
    ("h200-decode-split/llama-graph-2.csv", [not_the_shipped_decode_plan]),
    # their neighbours within the table's span (bench/shapes/
    # decode-offlist-bf16.txt: other m, n and k around the 70B readings,
    # Falcon-40B's, Yi-34B's and Qwen2's projections among them), the
    # shipped plans forced, twice from graphs and twice in a stream
    ("h200-decode-split/offlist-graph-1.csv", []),
    ("h200-decode-split/offlist-graph-2.csv", []),
    ("h200-decode-split/offlist-stream-1.csv", []),
    ("h200-decode-split/offlist-stream-2.csv", []),
    # batch 1 and 8 on those weights, and shapes between the readings above
    # (bench/shapes/decode-neighbours-bf16.txt), likewise
    ("h200-decode-split/neighbours-graph-1.csv", []),
    ("h200-decode-split/neighbours-graph-2.csv", []),
    ("h200-decode-split/neighbours-stream-1.csv", []),
    ("h200-decode-split/neighbours-stream-2.csv", []),
    # the default policy on the table with all of the above, over the three
    # lists (sorted, one run each, a third device session): what the table
    # routes, re-timed; the lowest reading stands
    ("h200-decode-split/exact-table-graph.csv", []),
    ("h200-decode-split/exact-table-stream.csv", []),
    # and on that table less what the two above took out, twice more each
    # (a fourth session)
    ("h200-decode-split/exact-confirm-graph-1.csv", []),
    ("h200-decode-split/exact-confirm-graph-2.csv", []),
    ("h200-decode-split/exact-confirm-stream-1.csv", []),
    ("h200-decode-split/exact-confirm-stream-2.csv", []),
    # the default policy on shapes no list had: routed, unmeasured shapes of
    # a CPU grid (bench/shapes/grid-sample*.txt), sampled six times as the
    # table's rules tightened (row alignment classes; plans as measured; SIMT
    # readings for their own shapes; tiles' fill), each twice; what the
    # table routed there becomes a reading, the lowest standing
    ("h200-table-grid/grid-sample-1.csv", []),
    ("h200-table-grid/grid-sample-2.csv", []),
    ("h200-table-grid/grid-rows128-1.csv", []),
    ("h200-table-grid/grid-rows128-2.csv", []),
    ("h200-table-grid/grid-plans-1.csv", []),
    ("h200-table-grid/grid-plans-2.csv", []),
    ("h200-table-grid/grid-final-1.csv", []),
    ("h200-table-grid/grid-final-2.csv", []),
    ("h200-table-grid/grid-fresh-1.csv", []),
    ("h200-table-grid/grid-fresh-2.csv", []),
    ("h200-table-grid/grid-last-1.csv", []),
    ("h200-table-grid/grid-last-2.csv", []),
]

# Files whose readings vouch for their own m and k only (the table's
# "exact" entries, dispatch/gs_table.c): bf16 decode on 70B-class weights,
# where neighbours a tenth apart in m or k read 0.82x to 1.11x of cuBLAS
# (h200-decode-split/neighbours-*.csv). A shape that another file also
# measured keeps its span.
EXACT_SOURCES = {name for name, _ in SOURCES if name.startswith("h200-decode-split/")}

# (predicate, first file it does not apply to): a kernel change, whose
# predicate drops the rows it made stale from every file listed before the
# first one measured after it.
KERNEL_CHANGES = [
    (is_small_k_pingpong, "h200-pingpong-s5.csv"),
    (pp_split_before_register_sum, "h200-deepk-s6.csv"),
    (pp128_before_short_k_variant, "h200-pingpong-s7.csv"),
    (pp_before_epilogue_chain_fix, "h200-pingpong-s8.csv"),
    (before_pdl, "h200-suites-s9.csv"),
    (coop_before_deferred_epilogue, "h200-suites-s10.csv"),
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
                fields = rd.fieldnames + ["span"]
            for r in rows:
                r["span"] = "exact" if name in EXACT_SOURCES else ""
            path = os.path.join(tmp, os.path.basename(name))
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields)
                w.writeheader()
                w.writerows(rows)
            paths.append(path)
        return subprocess.call([sys.executable, os.path.join(HERE, "table_from_csv.py"),
                                "--note", NOTE, "90", out] + paths)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
