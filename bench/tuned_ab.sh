#!/usr/bin/env bash
# Tuned routing against cuBLAS on benchmark shapes: bench_ab once with
# GEMMSHIM_TUNE=online (the tuning pass; its timings are discarded), then
# with GEMMSHIM_TUNE=cache from what it decided (the measured pass), under
# the default policy (untuned shapes get the routing table's prior).
#
#   bench/tuned_ab.sh LIB BENCH_AB OUT_PREFIX (--shapes FILE | --suite NAME) [--rounds N]
#                     [--tune-rounds N]
#
# --tune-rounds (default 40) sets the tuning pass's rounds: a signature is
# decided after about candidates x (GEMMSHIM_TUNE_PAIRS + 1) / 4 of its calls
# (each call carries up to 4 pairs; ~30 calls for 11 candidates), and
# bench_ab calls a 10 ms shape only a few times a round, so with too few
# rounds the large shapes stay undecided and the measured pass times the
# routing table's prior for them instead of a tuned choice.
#
# Writes OUT_PREFIX.cache (the decisions), OUT_PREFIX.csv (bench_ab's table
# of the measured pass), OUT_PREFIX.tune.log and OUT_PREFIX.log (the shim's
# logs of the two passes: bench_ab reads each route from its pass's log) and
# prints the rows below 0.97x cuBLAS (the never-slower bar) and the geomean.
set -eu
lib=$1 bench=$2 out=$3
shift 3
rounds=7
tune_rounds=40
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --tune-rounds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "tuned_ab.sh: --tune-rounds N (N >= 1)" >&2; exit 2; }
                   tune_rounds=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
rm -f "$out.cache" "$out.csv" "$out.log" "$out.tune.log"
export GEMMSHIM_POLICY=${GEMMSHIM_POLICY:-table} GEMMSHIM_TUNE_CACHE=$out.cache
# the tuning pass decides as fast as it can (no GEMMSHIM_TUNE_SHARE limit):
# what is measured is the decisions, not the tuning run's cost
GEMMSHIM_TUNE=online GEMMSHIM_TUNE_SHARE=${GEMMSHIM_TUNE_SHARE:-0} GEMMSHIM_LOG=$out.tune.log \
  LD_PRELOAD=$lib "$bench" "${args[@]}" \
  --rounds "$tune_rounds" --csv /dev/null >/dev/null
grep -h "signatures decided" "$out.tune.log" | tail -1 || true
# The log only names each call's route for bench_ab: no CUDA events around
# every call (GEMMSHIM_LOG_TIMING's default), which would cost our side about
# 1 us a call on launch-bound shapes that cuBLAS's side does not pay.
GEMMSHIM_TUNE=cache GEMMSHIM_LOG=$out.log GEMMSHIM_LOG_TIMING=0 LD_PRELOAD=$lib "$bench" "${args[@]}" \
  --rounds "$rounds" --csv "$out.csv" >/dev/null
python3 - "$out.csv" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sp = [float(r["speedup"]) for r in rows if r["speedup"] not in ("", "nan")]
slow = [r for r in rows if r["speedup"] not in ("", "nan") and float(r["speedup"]) < 0.97]
for r in slow:
    print(f"below 0.97: {r['dtype']} {r['layout']} {r['m']}x{r['n']}x{r['k']}: {r['speedup']}x ({r.get('route', '')})")
g = math.exp(sum(math.log(x) for x in sp) / len(sp)) if sp else float("nan")
routed = [r for r in slow if r.get("route", "") not in ("", "forward")]
print(f"tuned_ab: {len(sp)} shapes, geomean {g:.3f}x, min {min(sp):.3f}x, {len(slow)} below 0.97x "
      f"({len(routed)} of them routed; a forwarded one is cuBLAS against itself)")
PY
