#!/usr/bin/env bash
# Run every model workload, OFF vs ON in each process, and summarize.
#
#   LD_PRELOAD=path/libgemmshim.so GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE=f \
#       bash bench/models/run_all.sh [--rounds N] [--quick] [--out res.jsonl] [--profile-gemm-share]
#       [--eager-warmup N]    (for the tuning run: graph workloads' steps run eagerly first)
#       [--attribute N]       (where each mode's iteration time goes, over N profiled iterations)
#       [--off-holds all|HEX,...] (OFF is the shim with those signatures at their prior)
#   ... run_all.sh --ab-iters N --ab-prefix DIR/ab [--out ab.jsonl]
#
# The second form is the ab pass (bench/models/ceiling.py reads it): each
# workload in a process of its own with GEMMSHIM_MODE=ab, N eager
# iterations, its report at DIR/ab-<workload>.json.
#
# The shim's environment (tuning mode, cache, table, policy) is the caller's;
# this script only runs the workloads. --out is truncated first, so the table
# below covers this run alone. Exit status: 1 if any workload script failed.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rounds=10
out=models.jsonl
pass=()
ab_iters=0
ab_prefix=
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --rounds=*) rounds=${1#*=}; shift ;;
        --out) out=$2; shift 2 ;;
        --out=*) out=${1#*=}; shift ;;
        --quick|--profile-gemm-share) pass+=("$1"); shift ;;
        --off-holds) [ -n "${2:-}" ] || { echo "run_all.sh: --off-holds all|HEX,..." >&2; exit 2; }
                     pass+=("$1" "$2"); shift 2 ;;
        --eager-warmup|--eager-warmup=*|--attribute|--attribute=*)
                        opt=${1%%=*}
                        if [ "$1" = "$opt" ]; then n=${2:-}; shift; else n=${1#*=}; fi
                        shift
                        [[ $n =~ ^[0-9]+$ ]] || { echo "run_all.sh: $opt N" >&2; exit 2; }
                        pass+=("$opt" "$n") ;;
        --ab-iters) ab_iters=$2; shift 2
                    [[ $ab_iters =~ ^[0-9]+$ ]] || { echo "run_all.sh: --ab-iters N" >&2; exit 2; }
                    ab_iters=$((10#$ab_iters)) ;;
        --ab-prefix) ab_prefix=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "run_all.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

: >"$out"
failed=()

if [ "$ab_iters" != 0 ]; then
    [ -n "$ab_prefix" ] || { echo "run_all.sh: --ab-iters needs --ab-prefix" >&2; exit 2; }
    # script:workload, one process each (the shim's report is per process)
    for sw in llama_prefill:llama_prefill llama_decode:llama_decode_b1 \
              llama_decode:llama_decode_b4 llama_decode:llama_decode_b16 \
              llama_decode:llama_decode_b64 gpt2_train:gpt2_train vit_infer:vit_fp32 \
              vit_infer:vit_tf32 bert_infer:bert_infer; do
        s=${sw%%:*} w=${sw#*:}
        echo "== $w (ab)"
        rm -f "$ab_prefix-$w.csv" "$ab_prefix-$w.json"
        if ! GEMMSHIM_MODE=ab GEMMSHIM_REPORT="$ab_prefix-$w" \
            python3 "$here/$s.py" --workload "$w" --ab-iters "$ab_iters" --out "$out"; then
            echo "== $w FAILED" >&2
            failed+=("$w")
        elif [ ! -f "$ab_prefix-$w.json" ]; then
            # the shim writes no report when nothing was routed
            echo "== $w: no ab report at $ab_prefix-$w.json (nothing routed, or it could not be written)"
        fi
    done
    [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}" >&2; exit 1; }
    exit 0
fi
for w in llama_prefill llama_decode gpt2_train vit_infer bert_infer; do
    echo "== $w"
    if ! python3 "$here/$w.py" --rounds "$rounds" --out "$out" "${pass[@]+"${pass[@]}"}"; then
        echo "== $w FAILED" >&2
        failed+=("$w")
    fi
done

python3 - "$out" <<'PY'
import json, math, re, sys

recs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def fmt(x, spec):  # format(x, spec), or "n/a" padded to the same width
    if x is not None:
        return format(x, spec)
    return "n/a".rjust(int(re.match(r"\d*", spec).group() or 0))

print()
print(f"{'workload':<20} {'off ms':>10} {'on ms':>10} {'ratio':>7} {'lo95':>7}")
for r in recs:
    print(f"{r['workload']:<20} {fmt(r['off_ms'], '10.3f')} {fmt(r['on_ms'], '10.3f')} "
          f"{fmt(r['ratio_median'], '7.3f')} {fmt(r['ratio_lo95'], '7.3f')}")

def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))

# one value per kind (llama_decode: its batches; vit: fp32 and tf32), then
# the geometric mean over kinds, so no kind weighs more for having more lines
kinds = {}
for r in recs:
    if r["ratio_median"] is not None:
        kinds.setdefault(r["kind"], []).append(r["ratio_median"])
if kinds:
    for k, xs in kinds.items():
        print(f"  kind {k:<16} {geomean(xs):.3f}  ({len(xs)} line{'s' if len(xs) > 1 else ''})")
    print(f"geomean of median ratios over {len(kinds)} kinds: "
          f"{geomean([geomean(xs) for xs in kinds.values()]):.3f}  (>1: shim faster)")
else:
    print("geomean: n/a (shim not loaded, or no results)")
PY

if [ ${#failed[@]} -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
