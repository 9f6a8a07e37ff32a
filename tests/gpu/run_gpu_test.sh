#!/usr/bin/env bash
# Runs one GPU test program under LD_PRELOAD=libgemmshim.so and checks what
# the shim logged about it.
#   run_gpu_test.sh sweep|hsweep|parity|sample BIN_DIR LIBGEMMSHIM [LOG_DIR]
# Exit 77 (CTest: skipped, reason printed by the program) where no GPU exists;
# GEMMSHIM_REQUIRE_GPU=1 makes that a failure.
set -u
what=$1 bin=$2 lib=$3 logdir=${4:-$(mktemp -d)}
mkdir -p "$logdir"
log=$logdir/gemmshim-$what.log
rm -f "$log"

run() { # program and args; the shim preloaded, logging to $log
  GEMMSHIM_LOG=$log LD_PRELOAD=$lib "$@"
}

case $what in
  sweep)
    # route every eligible call, so the sweep tests our kernel, not the table
    GEMMSHIM_POLICY=eligible run "$bin/test_sgemm_sweep"; rc=$?
    [ $rc -eq 0 ] || exit $rc
    if ! grep -q -- '-> sgemm_warptile' "$log"; then
      echo "FAIL: the shim's log shows no call served by sgemm_warptile:"; cat "$log"; exit 1
    fi
    if grep -q 'fallback: ' "$log"; then
      echo "FAIL: some calls fell back to cuBLAS:"; grep 'fallback: ' "$log"; exit 1
    fi
    echo "sweep: $(grep -c -- '-> sgemm_warptile' "$log") signatures served by sgemm_warptile, no fallback"
    ;;
  hsweep)
    # every pingpong configuration, each forced in turn over a full sweep
    for k in pingpong_128x128x64 pingpong_coop_256x128x64; do
      rm -f "$log"
      echo "--- $k"
      GEMMSHIM_KERNELS=$k GEMMSHIM_POLICY=eligible run "$bin/test_hgemm_sweep"; rc=$?
      [ $rc -eq 0 ] || exit $rc
      if ! grep -q -- "-> $k" "$log"; then
        echo "FAIL: the shim's log shows no call served by $k:"; cat "$log"; exit 1
      fi
      if grep -q 'fallback: ' "$log"; then
        echo "FAIL: some calls fell back to cuBLAS:"; grep 'fallback: ' "$log"; exit 1
      fi
      echo "hsweep: $(grep -c -- "-> $k" "$log") signatures served by $k, no fallback"
    done
    ;;
  parity)
    GEMMSHIM_POLICY=eligible run "$bin/test_status_parity"; exit $?
    ;;
  sample)
    run "$bin/sample_app"; rc=$?
    cat "$log"
    exit $rc
    ;;
  *) echo "usage: $0 sweep|hsweep|parity|sample BIN_DIR LIB [LOG_DIR]"; exit 2 ;;
esac
