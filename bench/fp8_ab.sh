#!/usr/bin/env bash
# FP8 cublasLtMatmul under tuned routing: bench_fp8 once with
# GEMMSHIM_TUNE=online on the shim side alone (the tuning pass: each row's
# signature called until the tuner logs its decision, at most --tune-calls
# times), then with GEMMSHIM_TUNE=cache from what it decided (the measured
# pass: the shim, cuBLASLt as called and the best of cuBLASLt's first 8
# heuristic algorithms, same process, same buffers).
#
#   bench/fp8_ab.sh LIB BENCH_FP8 OUT_PREFIX [--suite NAME | --shapes FILE] [--rounds N]
#                   [--tune-calls N]
#
# --suite defaults to fp8-all; --rounds (default 15) are the measured pass's;
# --tune-calls (default 400) caps the tuning pass's calls per row (an FP8
# signature is decided in about 30-120 of them; a row outside the subset the
# shim tunes, e.g. 128-block scales, stops after its first few calls).
#
# Writes OUT_PREFIX.cache (the decisions), OUT_PREFIX.tune.log and
# OUT_PREFIX.log (the shim's logs of the two passes: bench_fp8 reads each
# row's route from its pass's log), OUT_PREFIX.tune.txt and OUT_PREFIX.txt
# (bench_fp8's tables) and OUT_PREFIX.csv (the measured pass's rows), and
# prints the geomeans of shim/as_called and shim/best8 over the large
# shapes per fast-accumulation setting and over the decode shapes (and over
# the large shapes per scale mode), the rows below 0.97x the call as made,
# and the skipped rows.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 LIB BENCH_FP8 OUT_PREFIX [--suite NAME | --shapes FILE] [--rounds N] [--tune-calls N]" >&2; exit 2; }
lib=$1 bench=$2 out=$3
shift 3
rounds=15
tune_calls=400
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "fp8_ab.sh: --rounds N (N >= 1)" >&2; exit 2; }
              rounds=$2; shift 2 ;;
    --tune-calls) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "fp8_ab.sh: --tune-calls N (N >= 1)" >&2; exit 2; }
                  tune_calls=$2; shift 2 ;;
    --suite|--shapes) [ $# -ge 2 ] || { echo "fp8_ab.sh: $1 needs an argument" >&2; exit 2; }
                      args+=("$1" "$2"); shift 2 ;;
    *) echo "fp8_ab.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ ${#args[@]} -gt 0 ] || args=(--suite fp8-all)
rm -f "$out.cache" "$out.csv" "$out.log" "$out.tune.log" "$out.txt" "$out.tune.txt"
export GEMMSHIM_TUNE_CACHE=$out.cache
# the tuning pass decides as fast as it can (no GEMMSHIM_TUNE_SHARE limit):
# what is measured is the decisions, not the tuning run's cost
rc=0
GEMMSHIM_TUNE=online GEMMSHIM_TUNE_SHARE=${GEMMSHIM_TUNE_SHARE:-0} GEMMSHIM_LOG=$out.tune.log \
  LD_PRELOAD=$lib "$bench" "${args[@]}" --shim-only "$tune_calls" --csv /dev/null \
  > "$out.tune.txt" || rc=$?
[ $rc -ne 77 ] || { cat "$out.tune.txt"; exit 77; }
[ $rc -eq 0 ] || { echo "fp8_ab.sh: the tuning pass failed (rc=$rc)" >&2; tail -20 "$out.tune.txt" >&2; exit 1; }
grep -h "signatures decided" "$out.tune.log" | tail -1 || true
echo "fp8_ab: tuning pass: $(grep -c ', decided ' "$out.tune.txt" || true) rows decided," \
     "$(grep -c 'still tuning' "$out.tune.txt" || true) still tuning at the cap," \
     "$(grep -c 'not tuned' "$out.tune.txt" || true) not tuned (see $out.tune.txt)"
# The log only names each row's route: no CUDA events around every call
# (GEMMSHIM_LOG_TIMING's default), which would cost the shim side time the
# others do not pay.
GEMMSHIM_TUNE=cache GEMMSHIM_LOG=$out.log GEMMSHIM_LOG_TIMING=0 LD_PRELOAD=$lib "$bench" "${args[@]}" \
  --rounds "$rounds" --csv "$out.csv" > "$out.txt" || rc=$?
cat "$out.txt"
[ $rc -eq 0 ] || { echo "fp8_ab.sh: the measured pass failed (rc=$rc)" >&2; exit 1; }
python3 - "$out.csv" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = [r for r in rows if r["status"] == "ok"]
def num(r, k):
    try:
        v = float(r[k])
    except ValueError:
        return None
    return v if v == v and v > 0 else None
def geo(xs):
    xs = [x for x in xs if x is not None]
    return (math.exp(sum(math.log(x) for x in xs) / len(xs)), min(xs), len(xs)) if xs else None
def say(name, sel):
    if not sel:
        return
    parts = []
    for k, label in (("shim_vs_as_called", "shim/as_called"), ("shim_vs_best8", "shim/best8"),
                     ("best8_vs_as_called", "best8/as_called"),
                     ("ceiling_vs_as_called", "tensor probe/as_called")):
        if k not in sel[0]:
            continue  # a CSV from before the tensor probe
        g = geo([num(r, k) for r in sel])
        if g is None and k == "ceiling_vs_as_called":
            continue  # decode rows: the memory floor bounds them, not the tensor cores
        parts.append(f"{label} {g[0]:.3f} (min {g[1]:.3f}, {g[2]} rows)" if g else f"{label} n/a")
    print(f"fp8_ab: {name}: geomean " + ", ".join(parts))
large = [r for r in ok if int(r["n"]) > 64]
decode = [r for r in ok if int(r["n"]) <= 64]
for fast, word in (("1", "fast accumulation on"), ("0", "fast accumulation off")):
    say(f"large shapes, {word}", [r for r in large if r["fast_accum"] == fast])
    say(f"decode (n <= 64), {word}", [r for r in decode if r["fast_accum"] == fast])
say("decode (n <= 64), all", decode)
for sc in sorted({(r["scale_a"], r["scale_b"]) for r in large}):
    say(f"large shapes, scales A {sc[0]} / B {sc[1]}",
        [r for r in large if (r["scale_a"], r["scale_b"]) == sc])
for r in ok:
    v = num(r, "shim_vs_as_called")
    if v is not None and v < 0.97:
        print(f"below 0.97x as called: {r['op']} {r['a_type']}x{r['b_type']} {r['scale_a']}/{r['scale_b']} "
              f"fast={r['fast_accum']} {r['m']}x{r['n']}x{r['k']}: {v:.3f}x ({r['route']})")
skipped = [r for r in rows if r["status"] != "ok"]
for r in skipped:
    print(f"{r['status']}: {r['op']} {r['a_type']}x{r['b_type']} {r['scale_a']}/{r['scale_b']} "
          f"fast={r['fast_accum']} {r['m']}x{r['n']}x{r['k']}")
print(f"fp8_ab: {len(ok)} rows timed, {len(skipped)} skipped")
PY
