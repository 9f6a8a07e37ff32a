#!/usr/bin/env bash
# One call on a GPU machine: every GPU test, then the A/B benchmark suites.
#   bench/device_suite.sh BIN_ROOT OUT_DIR [SUITE[:KERNELS] ...]
# BIN_ROOT holds libgemmshim.so and bin/ (a build carried from elsewhere, or a
# build dir). KERNELS is a GEMMSHIM_KERNELS value, to time one kernel
# configuration (e.g. pingpong:pingpong_coop_256x128x64). Writes
# OUT_DIR/tests.txt, OUT_DIR/shim-logs.txt, OUT_DIR/all.csv (every suite),
# OUT_DIR/bench.txt and OUT_DIR/bench.png; prints the tables last.
set -u
root=$1 out=$2
shift 2
suites=${*:-sgemm pingpong prefill}
here=$(cd "$(dirname "$0")/.." && pwd)
lib=$root/libgemmshim.so
mkdir -p "$out/logs"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
summary=""
for t in ${GPU_TESTS:-sample linked parity direct lt sweep hsweep graph verify ab sanitize}; do
  timeout 420 "$here/tests/gpu/run_gpu_test.sh" "$t" "$root/bin" "$lib" "$out/logs" \
    > "$out/logs/$t.txt" 2>&1
  rc=$?
  summary+="gpu test $t: rc=$rc  $(grep -E '^[0-9]+ passed' "$out/logs/$t.txt" | tail -1)"$'\n'
  # failing cases into the printed summary too: it comes back even when files do not
  fails=$(grep -E 'FAIL|NOT BITWISE' "$out/logs/$t.txt" | head -8)
  [ -z "$fails" ] || summary+="$fails"$'\n'
  { echo "=== $t (rc=$rc)"; cat "$out/logs/$t.txt"; } >> "$out/tests.txt"
done
for f in "$out"/logs/gemmshim-*.log; do { echo "=== $f"; cat "$f"; } >> "$out/shim-logs.txt"; done
rm -rf "$out/logs"
i=0
for spec in $suites; do
  s=${spec%%:*} k=all
  [ "$spec" != "$s" ] && k=${spec#*:}
  i=$((i + 1))
  # the log names routes for bench_ab; no per-call CUDA events (~1 us a call, ours only)
  (cd "$out" && GEMMSHIM_KERNELS=$k GEMMSHIM_LOG=$out/route-$i.log GEMMSHIM_LOG_TIMING=0 \
    LD_PRELOAD=$lib timeout 400 \
    "$root/bin/bench_ab" --suite "$s" --csv "$out/part-$i.csv") > "$out/bench-$i.txt" 2>&1
  { echo "=== route log $spec"; cat "$out/route-$i.log"; } >> "$out/shim-logs.txt"
  rm -f "$out/route-$i.log"
done
head -1 "$out/part-1.csv" > "$out/all.csv"
for f in "$out"/part-*.csv; do tail -n +2 "$f" >> "$out/all.csv"; rm -f "$f"; done
cat "$out"/bench-*.txt > "$out/bench.txt"; rm -f "$out"/bench-*.txt
python3 "$here/bench/plot.py" "$out/bench.png" "$out/all.csv"
cat "$out/bench.txt"
printf '%s' "$summary"
