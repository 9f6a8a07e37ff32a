#!/usr/bin/env bash
# A/B benchmark of the shim's routes against cuBLAS on this machine's GPU.
#   bench/run.sh [BUILD_DIR] [OUT_DIR] [SUITE ...]     (suites: sgemm pingpong prefill)
# Builds if BUILD_DIR has no bench_ab yet, runs each suite under
# LD_PRELOAD=libgemmshim.so, writes OUT_DIR/<suite>.csv and OUT_DIR/bench.png.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
out=${2:-$here/bench/results}
shift $(( $# > 2 ? 2 : $# ))
suites=${*:-sgemm pingpong prefill}
if [ ! -x "$build/bin/bench_ab" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" --target gemmshim bench_ab
fi
lib=$build/libgemmshim.so
[ -f "$lib" ] || lib=$build/lib/libgemmshim.so
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader || true
for s in $suites; do
  # the log names each call's route for bench_ab; no CUDA events around
  # every call (GEMMSHIM_LOG_TIMING's default), ~1 us a call on our side only
  GEMMSHIM_LOG=$out/route-$s.log GEMMSHIM_LOG_TIMING=0 LD_PRELOAD=$lib \
    "$build/bin/bench_ab" --suite "$s" --csv "$out/$s.csv"
done
csvs=$(for s in $suites; do echo "$out/$s.csv"; done)
python3 "$here/bench/plot.py" "$out/bench.png" $csvs || echo "bench: no plot (matplotlib missing?)"
