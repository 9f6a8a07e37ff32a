#!/usr/bin/env bash
# Runs one GPU test program under LD_PRELOAD=libgemmshim.so and checks what
# the shim logged about it.
#   run_gpu_test.sh sweep|hsweep|f32acc|sanitize|parity|graph|multi|pdl|verify|ab|linked|sample|lt|lt_fp8|fp8_tiles|direct|faults|load|plugin|tune|tune_from|tune_seq BIN_DIR LIBGEMMSHIM [LOG_DIR]
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

served() { # PATTERN [CONTEXT]: fail unless the log shows a call served by PATTERN
  grep -q -- "-> $1" "$log" ||
    { echo "FAIL: the shim's log shows no call served by '$1'${2:+ $2}:"; cat "$log"; exit 1; }
}

no_fallback() { # fail if any routed call fell back to cuBLAS
  ! grep -q 'fallback: ' "$log" ||
    { echo "FAIL: some calls fell back to cuBLAS:"; grep 'fallback: ' "$log"; exit 1; }
}

plain_of() { # KERNEL: 1 for the 192x128 tile, whose sweeps draw only the calls its plain
  # epilogue takes (beta == 0, host scalars, m a multiple of 8); a mixed sweep
  # reaches it on a few percent of its cases
  [ "$1" = pingpong_192x128x64 ] && echo 1 || echo 0
}

no_workspace_forward() { # fail if a split-K call was forwarded for want of its workspace
  ! grep -q -- '-> forward (split-K workspace' "$log" ||
    { echo "FAIL: a call forwarded for its workspace:"; grep -- '-> forward (split-K workspace' "$log"; exit 1; }
}

case $what in
  sweep)
    # route every eligible call, so the sweep tests our kernel, not the table
    GEMMSHIM_POLICY=eligible run "$bin/test_sgemm_sweep"; rc=$?
    [ $rc -eq 0 ] || exit $rc
    served sgemm_warptile
    no_fallback
    echo "sweep: $(grep -c -- '-> sgemm_warptile' "$log") signatures served by sgemm_warptile, no fallback"
    ;;
  direct)
    # each kernel family through its C launch API, no shim: bias epilogue,
    # split-K workspace contract, bitwise repeats (fp64 host references)
    fails=0
    for t in test_sgemm_bias test_skinny_bias test_pingpong_bias; do
      "$bin/$t"; rc=$?
      [ $rc -ne 77 ] || exit 77
      [ $rc -eq 0 ] || { echo "FAIL: $t rc=$rc"; fails=$((fails + 1)); }
    done
    # the decode ring's workspace split on every ring call it fits: the
    # default rule gives it few of the random shapes (the test fails if none)
    GEMMSHIM_DEV_SKINNY_WS=4 "$bin/test_skinny_bias"; rc=$?
    [ $rc -eq 0 ] || { echo "FAIL: test_skinny_bias (GEMMSHIM_DEV_SKINNY_WS=4) rc=$rc"; fails=$((fails + 1)); }
    # the sm_90 mma.sync ring (skinny_ring_tn), which the wgmma ring replaces
    # by default and the FP8 decode ring shares its main loop with
    GEMMSHIM_DEV_SKINNY_WG=0 "$bin/test_skinny_bias"; rc=$?
    [ $rc -eq 0 ] || { echo "FAIL: test_skinny_bias (GEMMSHIM_DEV_SKINNY_WG=0) rc=$rc"; fails=$((fails + 1)); }
    [ $fails -eq 0 ] || exit 1
    ;;
  lt)
    # cublasLtMatmul as PyTorch issues it, routed wherever a kernel takes it
    GEMMSHIM_POLICY=eligible run "$bin/test_lt"; rc=$?
    [ $rc -eq 0 ] || exit $rc
    for k in pingpong sgemm_warptile; do
      if ! grep -Eq -- "cublasLtMatmul .* -> $k" "$log"; then
        echo "FAIL: no cublasLtMatmul call served by $k:"; cat "$log"; exit 1
      fi
    done
    no_fallback
    routed=$(grep -Ec -- 'cublasLtMatmul .* -> (pingpong|sgemm_warptile|skinny)' "$log")
    bias=$(grep -Ec -- 'cublasLtMatmul .* \+bias -> (pingpong|sgemm_warptile|skinny)' "$log")
    echo "lt: $routed cublasLtMatmul signatures routed ($bias with the BIAS epilogue), no fallback"
    ;;
  fp8_tiles)
    # the experimental FP8 family (kernels/fp8), opted in and one
    # configuration allowed at a time: ragged sizes, both scale modes, fast
    # accumulation on and off, bias, cuBLASLt's refusals; each case against
    # cuBLASLt's own error (the program)
    for cfg in fp8_pingpong_128x128x128 fp8_coop_128x128x128 fp8_coop_256x128x128 fp8_coop_256x128x128_mc2 fp8_decode_ring fp8_decode_wg; do
      echo "== $cfg"
      decode=0
      case $cfg in fp8_decode_*) decode=1 ;; esac # the decode rings' own cases (n <= 64)
      GEMMSHIM_FP8_TILES=1 GEMMSHIM_POLICY=eligible GEMMSHIM_KERNELS=$cfg GEMMSHIM_FP8_TEST_DECODE=$decode \
        run "$bin/test_fp8_tiles"; rc=$?
      [ $rc -eq 0 ] || exit $rc
      served $cfg
      no_fallback
      rm -f "$log"
    done
    # no switch, the default policy: the decode calls the routing table
    # sends to the decode kernels, and the scale and bias pointers cuBLASLt
    # refuses (forwarded, its status)
    echo "== default policy"
    (unset GEMMSHIM_FP8_TILES GEMMSHIM_POLICY GEMMSHIM_KERNELS
     GEMMSHIM_FP8_TEST_DEFAULT=1 run "$bin/test_fp8_tiles"); rc=$?
    [ $rc -eq 0 ] || exit $rc
    served fp8_decode_ring
    served fp8_decode_wg
    no_fallback
    ;;
  lt_fp8)
    # FP8 cublasLtMatmul (tensorwise and rowwise scales, fast accumulation
    # on and off, bf16 out, one with a bias) tuned online over cuBLASLt's
    # own algorithms, every call the tuner routes verified against cuBLASLt
    # as called: each checked result within tolerance of an fp32 host
    # reference (the program), a decision logged per signature, cuBLASLt's
    # algorithms among the candidates, none dropped or failed, no mismatch
    cache=$logdir/lt_fp8.cache
    rm -f "$cache"
    out=$(GEMMSHIM_TUNE=online GEMMSHIM_TUNE_SHARE=0 GEMMSHIM_TUNE_CACHE=$cache \
          GEMMSHIM_MODE=verify GEMMSHIM_VERIFY_FAIL=exit run "$bin/test_lt_fp8" 2>&1); rc=$?
    [ $rc -ne 77 ] || { echo "$out"; exit 77; }
    echo "$out" | grep -E '^(ok|FAIL|SKIP|skipped|test_lt_fp8|verify)'
    grep -E 'tune: ' "$log" | sed 's/^/  /'
    [ $rc -eq 0 ] || { echo "FAIL: test_lt_fp8: rc=$rc"; echo "$out" | tail -20; tail -30 "$log" 2>/dev/null; exit 1; }
    no_fallback
    sigs=$(echo "$out" | sed -n 's/^test_lt_fp8: \([0-9]*\) signatures$/\1/p')
    [ -n "$sigs" ] && [ "$sigs" -ge 3 ] || { echo "FAIL: the program ran no signatures"; exit 1; }
    decided=$(grep -c 'tune: cublasLtMatmul e[45]m[23].* -> ' "$log")
    [ "$decided" -eq "$sigs" ] ||
      { echo "FAIL: $decided tuning decisions logged for $sigs signatures"; exit 1; }
    grep -q 'tune:   .* cublaslt/algo=' "$log" ||
      { echo "FAIL: no cuBLASLt algorithm was a candidate"; exit 1; }
    ! grep -Eq 'tune: .*candidate cublaslt/.* (dropped|failed to run)' "$log" ||
      { echo "FAIL: a cuBLASLt algorithm differed from the call as made, or failed:";
        grep -E 'candidate cublaslt/.* (dropped|failed)' "$log"; exit 1; }
    if { echo "$out"; cat "$log"; } | grep -Eq 'verify: .* [1-9][0-9]* mismatches'; then
      echo "FAIL: verify found mismatches"; exit 1
    fi
    won=$(grep 'tune: cublasLtMatmul e[45]m[23].* -> ' "$log" | grep -cv '(the prior kept)')
    echo "lt_fp8: $sigs signatures decided ($won by a cuBLASLt algorithm), no candidate dropped, no mismatch"
    ;;
  hsweep)
    # every pingpong configuration, each forced in turn over a full sweep
    for k in pingpong_128x128x64 pingpong_coop_256x128x64 pingpong_192x128x64 skinny; do
      rm -f "$log"
      echo "--- $k"
      decode=0
      [ $k = skinny ] && decode=1
      GEMMSHIM_SWEEP_PLAIN=$(plain_of $k) GEMMSHIM_SWEEP_DECODE=$decode GEMMSHIM_KERNELS=$k \
        GEMMSHIM_POLICY=eligible run "$bin/test_hgemm_sweep" | tee "$logdir/hsweep-$k.txt"
      rc=${PIPESTATUS[0]}
      [ $rc -eq 0 ] || exit $rc
      served $k
      no_fallback
      # a C that TMA cannot store (odd ldc, offset base): the 128-row tiles
      # store it directly, so some of those cases must have been ours
      case $k in pingpong_128x128x64|pingpong_coop_256x128x64)
        grep -Eq "TMA cannot store, [1-9][0-9]* of them served" "$logdir/hsweep-$k.txt" ||
          { echo "FAIL: $k served none of the cases whose C TMA cannot store"; exit 1; }
        # an operand TMA cannot load (odd lda, B off its base): packed
        grep -Eq "TMA cannot load, [1-9][0-9]* of them served" "$logdir/hsweep-$k.txt" ||
          { echo "FAIL: $k served none of the cases with an operand TMA cannot load"; exit 1; } ;;
      esac
      echo "hsweep: $(grep -c -- "-> $k" "$log") signatures served by $k ($(grep -c -- "-> ${k}_streamk" "$log") stream-K), no fallback"
    done
    # the 192x128 tile forced on a mixed sweep: what it refuses (beta != 0,
    # device scalars, a bias, ragged m, split-K) must be forwarded up front,
    # never sent to it and fallen back (the decision-cache bug)
    rm -f "$log"
    GEMMSHIM_SEED=17 GEMMSHIM_SWEEP_CASES=160 GEMMSHIM_KERNELS=pingpong_192x128x64 GEMMSHIM_POLICY=eligible \
      run "$bin/test_hgemm_sweep" > "$logdir/mixed192.txt"; rc=$?
    [ $rc -eq 0 ] || { echo "FAIL: mixed sweep forced to pingpong_192x128x64:"; grep FAIL "$logdir/mixed192.txt"; exit 1; }
    # its plain epilogue stores by TMA only: a C that TMA cannot store is forwarded
    grep -Eq "TMA cannot store, 0 of them served" "$logdir/mixed192.txt" ||
      { echo "FAIL: pingpong_192x128x64 served a C that TMA cannot store:"; grep "TMA cannot" "$logdir/mixed192.txt"; exit 1; }
    served pingpong_192x128x64 "in the mixed sweep"
    no_fallback
    echo "hsweep: mixed sweep forced to pingpong_192x128x64: $(grep -E '^[0-9]+ passed' "$logdir/mixed192.txt"), $(grep -c -- '-> pingpong_192x128x64' "$log") signatures served, $(grep -c -- '-> forward' "$log") forwarded, no fallback"
    # Regression: ragged-m tiles after full ones with fp32 output (a staging
    # buffer was rewritten while a TMA store still read it, so two identical
    # calls differed; case 14 of this seed). The race depends on timing, so
    # the case runs three times, each with its bitwise-repeat check. Honest
    # limit: against the unfixed library it failed once in the full sweep but
    # in none of 5 runs of this subset (H200), so it guards the case, it does
    # not reliably reproduce the race (test_pingpong_bias's two ragged fp32
    # cases caught it in 1 of 5 runs).
    rm -f "$log"
    for r in 1 2 3; do
      GEMMSHIM_SEED=0x2021669f GEMMSHIM_SWEEP_CASES=15 GEMMSHIM_KERNELS=pingpong_coop_256x128x64 \
        GEMMSHIM_POLICY=eligible run "$bin/test_hgemm_sweep" > "$logdir/ragged-$r.txt"; rc=$?
      [ $rc -eq 0 ] || { echo "FAIL: ragged-tile regression (seed 0x2021669f), run $r:"; grep FAIL "$logdir/ragged-$r.txt"; exit 1; }
    done
    # the case must still be the one that failed, served by that kernel
    grep -q -- "m=5582 n=3209 k=3 batch=3 -> pingpong_coop_256x128x64" "$log" ||
      { echo "FAIL: the ragged-tile regression case was not served by pingpong_coop_256x128x64"; exit 1; }
    echo "hsweep: ragged-tile regression passed 3 times"
    # A 60-case sweep on a grid of at most CTAS CTAs (GEMMSHIM_DEV_PINGPONG_MAX_CTAS):
    # small shapes run several tiles per CTA, so the paths across tiles are
    # checked against the reference and for bitwise repeats, not only by
    # racecheck; the cooperative tile's ragged waves must run stream-K.
    ctas_sweep() { # kernel ctas GEMMSHIM_DEV_PINGPONG_SK seed max_dim
      local k=$1 ctas=$2 out=$logdir/ctas$2-$1.txt rc
      rm -f "$log"
      GEMMSHIM_SWEEP_PLAIN=$(plain_of $k) GEMMSHIM_DEV_PINGPONG_SK=$3 GEMMSHIM_DEV_PINGPONG_MAX_CTAS=$ctas GEMMSHIM_SWEEP_CASES=60 GEMMSHIM_SWEEP_MAX_DIM=$5 \
        GEMMSHIM_SEED=$4 GEMMSHIM_KERNELS=$k GEMMSHIM_POLICY=eligible run "$bin/test_hgemm_sweep" > "$out"; rc=$?
      [ $rc -eq 0 ] || { echo "FAIL: $k with at most $ctas CTAs:"; grep FAIL "$out"; exit 1; }
      served $k "with at most $ctas CTAs"
      [ $k != pingpong_coop_256x128x64 ] || served ${k}_streamk "with at most $ctas CTAs"
      echo "hsweep: $k with at most $ctas CTAs (GEMMSHIM_DEV_PINGPONG_SK=$3): $(grep -E '^[0-9]+ passed' "$out"), $(grep -c -- "-> $k" "$log") signatures served ($(grep -c -- "-> ${k}_streamk" "$log") stream-K)"
    }
    # 2 CTAs, shapes up to 700: the pingpong turns, the cooperative tile's
    # deferred epilogue, mixed with ragged and beta != 0 tiles; stream-K for
    # every ragged last wave (GEMMSHIM_DEV_PINGPONG_SK=2), these short K too
    for k in pingpong_128x128x64 pingpong_coop_256x128x64 pingpong_192x128x64; do ctas_sweep $k 2 2 11 700; done
    # 4 CTAs, the ragged tiles alone dealt out however short the ranges
    # (GEMMSHIM_DEV_PINGPONG_SK=3), so a tile's head adds up to 3 other CTAs' partials
    ctas_sweep pingpong_coop_256x128x64 4 3 12 1500
    ;;
  f32acc)
    # fp32 output at long K, no noise floor: our error <= 2x cuBLAS's for
    # every route that takes bf16/fp16 -> fp32 (each forced in turn), and
    # the default policy (bench/NOTES.md)
    for k in pingpong_128x128x64 pingpong_coop_256x128x64 pingpong_192x128x64 skinny; do
      rm -f "$log"
      echo "--- $k"
      GEMMSHIM_KERNELS=$k GEMMSHIM_POLICY=eligible run "$bin/test_f32out_accuracy"; rc=$?
      [ $rc -eq 0 ] || exit $rc
      served $k
      no_fallback
      echo "f32acc: $(grep -c -- "-> $k" "$log") calls served by $k, no fallback"
    done
    # what the shipped table routes for fp32 output (forwarded calls compare
    # cuBLAS with itself: the count says how many were ours)
    rm -f "$log"
    echo "--- default policy"
    run "$bin/test_f32out_accuracy"; rc=$?
    [ $rc -eq 0 ] || exit $rc
    no_fallback
    echo "f32acc: default policy: $(grep -c -- '-> ' "$log") calls, $(grep -- '-> ' "$log" | grep -vc -- '-> forward') routed"
    ;;
  sanitize)
    # compute-sanitizer over short sweeps of small shapes through the shim:
    # memcheck for both kernel families, racecheck and synccheck for the
    # pingpong configurations (shared-memory pipelines, named barriers)
    GEMMSHIM_SWEEP_CASES=0 run "$bin/test_sgemm_sweep" >/dev/null; rc=$? # 77: no GPU
    [ $rc -ne 77 ] || { echo "SKIP: sanitize: no CUDA device"; exit 77; }
    [ $rc -eq 0 ] || exit $rc
    command -v compute-sanitizer >/dev/null || { echo "FAIL: no compute-sanitizer"; exit 1; }
    fails=0
    cs() { # tool kernels program
      local out
      rm -f "$logdir/cs.log"
      out=$(GEMMSHIM_LOG=$logdir/cs.log GEMMSHIM_SWEEP_PLAIN=$(plain_of $2) GEMMSHIM_KERNELS=$2 GEMMSHIM_POLICY=eligible GEMMSHIM_SWEEP_CASES=16 \
            GEMMSHIM_SWEEP_MAX_DIM=300 GEMMSHIM_SEED=${CS_SEED:-7} \
            compute-sanitizer --tool "$1" --error-exitcode 9 \
            env LD_PRELOAD=$lib "$bin/$3" 2>&1); local rc=$?
      echo "$1 $2${GEMMSHIM_DEV_PINGPONG_MAX_CTAS:+ (at most $GEMMSHIM_DEV_PINGPONG_MAX_CTAS CTAs)}: rc=$rc $(echo "$out" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed,' | tr '\n' ' ')"
      [ $rc -eq 0 ] || { fails=$((fails + 1)); echo "$out" | tail -30; }
      # CS_ODD_C: the run is there for the C that TMA cannot store
      if [ -n "${CS_ODD_C:-}" ]; then
        echo "$out" | grep -Eq "TMA cannot store, [1-9][0-9]* of them served" ||
          { fails=$((fails + 1)); echo "FAIL: $1 $2: the shim served no C that TMA cannot store"; }
      fi
      # CS_ODD_OP: the run is there for the operands TMA cannot load (packed)
      if [ -n "${CS_ODD_OP:-}" ]; then
        echo "$out" | grep -Eq "TMA cannot load, [1-9][0-9]* of them served" ||
          { fails=$((fails + 1)); echo "FAIL: $1 $2: the shim packed no operand"; }
      fi
      # a pingpong tile the sweep never reached would pass vacuously
      case $2 in pingpong_*)
        grep -q -- "-> $2" "$logdir/cs.log" ||
          { fails=$((fails + 1)); echo "FAIL: $1 $2: no call served by $2"; } ;;
      esac
    }
    cs memcheck sgemm_simt test_sgemm_sweep
    for k in pingpong_128x128x64 pingpong_coop_256x128x64 pingpong_192x128x64; do
      for tool in memcheck racecheck synccheck; do cs $tool $k test_hgemm_sweep; done
      # two CTAs: every CTA runs several tiles even of these small shapes, so
      # the paths across tiles (the ring's later laps, the pingpong turns,
      # the cooperative tile's deferred epilogue) are checked too
      # (and the cooperative tile's stream-K units: its ragged waves)
      for tool in memcheck racecheck synccheck; do
        GEMMSHIM_DEV_PINGPONG_SK=2 GEMMSHIM_DEV_PINGPONG_MAX_CTAS=2 cs $tool $k test_hgemm_sweep
      done
    done
    # a C that TMA cannot store, stored directly (odd ldc, or a base one
    # element off): seed 24 draws six such host-scalar calls in its 16 cases
    # (seed 7 draws none), and the shim must have served some of them
    for k in pingpong_128x128x64 pingpong_coop_256x128x64; do
      for tool in memcheck racecheck; do CS_SEED=24 CS_ODD_C=1 cs $tool $k test_hgemm_sweep; done
    done
    # an operand TMA cannot load, packed into the workspace (the copy kernel
    # reads aligned words around each run, never outside the operand): seed
    # 31 draws such calls (an odd lda, B one element off its base)
    for k in pingpong_128x128x64 pingpong_coop_256x128x64; do
      CS_SEED=31 CS_ODD_OP=1 cs memcheck $k test_hgemm_sweep
    done
    # stream-K heads adding several CTAs' partials (the ragged tiles alone over 4 CTAs)
    for tool in memcheck racecheck synccheck; do
      GEMMSHIM_DEV_PINGPONG_SK=3 GEMMSHIM_DEV_PINGPONG_MAX_CTAS=4 cs $tool pingpong_coop_256x128x64 test_hgemm_sweep
    done
    GEMMSHIM_SWEEP_DECODE=1 cs memcheck skinny test_hgemm_sweep
    GEMMSHIM_SWEEP_DECODE=1 cs racecheck skinny test_hgemm_sweep
    # the SIMT split-K kernels and their reduction (runs of slots summed
    # through shared memory): the direct test's small split cases
    for tool in memcheck racecheck synccheck; do
      out=$(GEMMSHIM_SEED=7 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/test_sgemm_bias" --quick 2>&1)
      rc=$?
      echo "$tool sgemm split (test_sgemm_bias --quick): rc=$rc $(echo "$out" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed,' | tr '\n' ' ')"
      [ $rc -eq 0 ] || { fails=$((fails + 1)); echo "$out" | tail -30; }
    done
    # the FP8 family's configurations (kernels/fp8) over test_fp8_tiles'
    # cases, the shim's side alone: cuBLASLt's own FP8 kernel (the test's
    # reference side) draws WAR reports from racecheck, and left out of the
    # instrumentation (--kernel-name) it crashes the sanitizer
    # (nvjet_sm90_qqtst_*, cuBLAS 13.1, H200)
    for k in fp8_pingpong_128x128x128 fp8_coop_128x128x128 fp8_coop_256x128x128 fp8_coop_256x128x128_mc2 fp8_decode_ring fp8_decode_wg; do
      decode=0
      case $k in fp8_decode_*) decode=1 ;; esac
      for tool in memcheck racecheck synccheck; do
        out=$(GEMMSHIM_FP8_TILES=1 GEMMSHIM_POLICY=eligible GEMMSHIM_KERNELS=$k GEMMSHIM_FP8_TEST_OURS_ONLY=1 \
              GEMMSHIM_FP8_TEST_DECODE=$decode \
              compute-sanitizer --tool $tool --error-exitcode 9 \
              env LD_PRELOAD=$lib "$bin/test_fp8_tiles" 2>&1); rc=$?
        echo "$tool $k (test_fp8_tiles): rc=$rc $(echo "$out" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed,' | tr '\n' ' ')"
        [ $rc -eq 0 ] || { fails=$((fails + 1)); echo "$out" | tail -30; }
      done
    done
    [ $fails -eq 0 ] || exit 1
    ;;
  pdl)
    # dependent calls back to back (programmatic dependent launch, the
    # default): each pingpong configuration with the decode kernel
    for k in pingpong_128x128x64 pingpong_coop_256x128x64 pingpong_192x128x64; do
      rm -f "$log"
      # no timing events around calls: a timing event between two kernels
      # removes the programmatic-launch overlap this test is about
      GEMMSHIM_LOG_TIMING=0 GEMMSHIM_KERNELS=skinny,$k GEMMSHIM_POLICY=eligible \
        run "$bin/test_pdl_chain"; rc=$?
      [ $rc -eq 0 ] || exit $rc
      split="${k}_splitk"
      [ $k != pingpong_192x128x64 ] || split= # no split-K there: can_implement refuses those shapes
      for r in skinny_ring "${k}[ (]" $split; do served "$r"; done
      no_fallback
      echo "pdl: $k: $(grep -c -- '-> ' "$log") signatures routed, no fallback"
    done
    ;;
  graph)
    GEMMSHIM_POLICY=eligible run "$bin/test_graph_threads"; rc=$?
    [ $rc -eq 0 ] || exit $rc
    for k in sgemm_warptile pingpong skinny; do served $k; done
    no_fallback
    no_workspace_forward
    grep -E -- 'k=(32768|65536) .*-> (sgemm|pingpong)' "$log" | sed 's/^/graph: /'
    ;;
  multi)
    # several GPUs in one process: a thread per GPU, then one thread going
    # from GPU to GPU; exit 77 (said why) on a one-GPU machine
    GEMMSHIM_POLICY=eligible run "$bin/test_multi_gpu"; rc=$?
    [ $rc -eq 0 ] || exit $rc
    no_fallback
    no_workspace_forward
    ;;
  verify)
    # verify mode: routed calls re-run on cuBLAS and compared; none may differ
    # beyond the tolerance, and a too-tight tolerance must be caught
    out=$(GEMMSHIM_MODE=verify GEMMSHIM_POLICY=eligible GEMMSHIM_VERIFY_FAIL=exit \
          run "$bin/sample_app" 2>&1); rc=$?
    [ $rc -ne 77 ] || { echo "$out"; exit 77; } # no GPU: the program said so
    echo "$out" | grep -E 'verify:|sample_app:'
    [ $rc -eq 0 ] || { echo "FAIL: sample_app under verify: rc=$rc"; exit 1; }
    echo "$out" | grep -Eq 'verify: [1-9][0-9]* routed calls compared with cuBLAS, 0 mismatches' ||
      { echo "FAIL: no verified calls, or mismatches"; exit 1; }
    for sweep in test_sgemm_sweep test_hgemm_sweep; do
      out=$(GEMMSHIM_MODE=verify GEMMSHIM_POLICY=eligible GEMMSHIM_VERIFY_FAIL=exit \
            GEMMSHIM_SWEEP_CASES=40 run "$bin/$sweep" 2>&1); rc=$?
      echo "$out" | grep -E 'verify:|passed,'
      [ $rc -eq 0 ] || { echo "FAIL: $sweep under verify: rc=$rc"; exit 1; }
    done
    # deep K with fp32 output: two correct accumulations differ by more than a
    # fixed 1e-4 (a verify false alarm at k = 118311 before the tolerance grew
    # with sqrt(k)); fixed seed, every case deep
    out=$(GEMMSHIM_MODE=verify GEMMSHIM_POLICY=eligible GEMMSHIM_VERIFY_FAIL=exit \
          GEMMSHIM_SWEEP_DECODE=deep GEMMSHIM_SWEEP_CASES=24 GEMMSHIM_SEED=0x5eed \
          run "$bin/test_hgemm_sweep" 2>&1); rc=$?
    echo "$out" | grep -E 'verify:|passed,'
    [ $rc -eq 0 ] || { echo "FAIL: deep-K decode sweep under verify: rc=$rc"; exit 1; }
    # the fp32 sweep's results differ from cuBLAS's in the last bits (its
    # sample_app calls happen to be bit-identical): 1e-12 must flag them
    out=$(GEMMSHIM_MODE=verify GEMMSHIM_POLICY=eligible GEMMSHIM_VERIFY_FAIL=exit \
          GEMMSHIM_VERIFY_TOL=1e-12 GEMMSHIM_SWEEP_CASES=40 run "$bin/test_sgemm_sweep" 2>&1); rc=$?
    echo "$out" | grep -E 'verify:' | head -3
    [ $rc -eq 3 ] && echo "$out" | grep -q 'verify: MISMATCH' ||
      { echo "FAIL: a 1e-12 tolerance was not reported as mismatches (rc=$rc)"; exit 1; }
    echo "verify: ok"
    ;;
  ab)
    # ab mode inside an application that repeats its GEMMs (the benchmark's
    # fp32 suite, calling the global cublasGemmEx only through the shim):
    # the report must list every routed signature with both times, a speedup
    # and an error, as a table, CSV and valid JSON
    rep=$logdir/ab-report
    rm -f "$rep.csv" "$rep.json"
    out=$(cd "$logdir" && GEMMSHIM_MODE=ab GEMMSHIM_POLICY=eligible GEMMSHIM_REPORT=$rep \
          run "$bin/bench_ab" --suite sgemm --rounds 3 --csv "$logdir/ab-bench.csv" 2>&1); rc=$?
    [ $rc -ne 77 ] || { echo "$out"; exit 77; }
    [ $rc -eq 0 ] || { echo "$out" | tail -20; echo "FAIL: bench under ab: rc=$rc"; exit 1; }
    grep -E 'ab report|4096 n=4096' "$log" | head -8
    python3 - "$rep.csv" <<'PY' || { cat "$rep.csv"; echo "FAIL: ab CSV"; exit 1; }
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = [r for r in rows if all(not math.isnan(float(r[c])) for c in ("ours_us", "cublas_us", "speedup", "max_err"))]
print(f"ab: {len(rows)} signatures in the CSV, {len(ok)} with both times, a speedup and an error")
big = [r for r in ok if "m=4096 n=4096 k=4096" in r["signature"]]
for r in big:
    print(f"ab: {r['signature']}: {r['speedup']}x, max_err {r['max_err']}, {r['route']}")
assert len(rows) >= 32 and len(ok) >= 32 and len(big) == 4
assert all(float(r["max_err"]) < 1e-5 for r in ok)
PY
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['version']==1 and len(d['rows'])>=32, d; print('ab: JSON ok,', len(d['rows']), 'rows')" "$rep.json" ||
      { echo "FAIL: ab JSON"; exit 1; }
    ;;
  parity)
    GEMMSHIM_POLICY=eligible run "$bin/test_status_parity"; rc=$?
    [ $rc -eq 0 ] || exit $rc
    # alpha 0 on the device through the BLAS entry points: each family's rule
    GEMMSHIM_POLICY=eligible run "$bin/test_alpha_zero"; rc=$?
    [ $rc -eq 0 ] || exit $rc
    for k in skinny pingpong sgemm_warptile; do served $k "(test_alpha_zero)"; done
    no_fallback
    ;;
  linked)
    # link-time drop-in: sample_app linked ahead of libcublas, no LD_PRELOAD;
    # the library next to it is the one under test
    d=$(mktemp -d)
    cp "$lib" "$d/libgemmshim.so.0"
    out=$(GEMMSHIM_POLICY=eligible GEMMSHIM_LOG=stderr LD_LIBRARY_PATH=$d \
          "$bin/sample_app_linked" 2>&1); rc=$?
    [ $rc -ne 77 ] || { echo "$out"; exit 77; }
    echo "$out" | grep -E 'sample_app|-> ' | head -12
    [ $rc -eq 0 ] || { echo "FAIL: linked sample_app rc=$rc"; exit 1; }
    echo "$out" | grep -q 'running under gemmshim' || { echo "FAIL: shim not in effect"; exit 1; }
    echo "$out" | grep -q -- '-> sgemm_warptile' || { echo "FAIL: nothing routed"; exit 1; }
    ;;
  faults)
    # the shim's own device calls failing on purpose (GEMMSHIM_TEST_FAULTS):
    # each program still passes (sample_app compares every call with the real
    # cuBLAS, the sweep with fp64), and the log says what the shim did instead
    fault_run() { # FAULT PATTERN PROGRAM...: PROGRAM passes, its log or output shows PATTERN
      local fault=$1 pattern=$2 out=$logdir/faults-$1.out
      shift 2
      rm -f "$log"
      GEMMSHIM_TEST_FAULTS=$fault GEMMSHIM_POLICY=eligible run "$@" >"$out" 2>&1; rc=$?
      [ $rc -ne 77 ] || { cat "$out"; exit 77; }
      [ $rc -eq 0 ] || { echo "FAIL: $* with GEMMSHIM_TEST_FAULTS=$fault: rc=$rc"; cat "$out" "$log"; exit 1; }
      grep -q -- "$pattern" "$log" "$out" ||
        { echo "FAIL: GEMMSHIM_TEST_FAULTS=$fault: nothing says '$pattern'"; cat "$out" "$log"; exit 1; }
      echo "faults: $fault: $(basename "$1") passed; the shim said '$pattern'"
    }
    fault_run device "-> forward (no CUDA device)" "$bin/sample_app"
    fault_run launch "launch failure injected by GEMMSHIM_TEST_FAULTS" "$bin/sample_app"
    grep -q "fallbacks" "$log" && ! grep -q "summary: .* 0 fallbacks" "$log" ||
      { echo "FAIL: GEMMSHIM_TEST_FAULTS=launch: no fallback counted"; cat "$log"; exit 1; }
    fault_run workspace "-> forward (split-K workspace: cudaErrorMemoryAllocation)" \
      "$bin/test_sgemm_sweep"
    GEMMSHIM_MODE=verify fault_run scratch "verify: no device memory for the reference result" \
      "$bin/sample_app"
    grep -Eq 'verify: 0 routed calls compared with cuBLAS, 0 mismatches.*; [1-9][0-9]* routed calls not compared' \
      "$logdir/faults-scratch.out" ||
      { echo "FAIL: GEMMSHIM_TEST_FAULTS=scratch: the count of calls not compared is missing"; cat "$logdir/faults-scratch.out"; exit 1; }
    ;;
  load)
    # 1. 20 threads at once (16 with a handle and stream of their own, 4
    # sharing one handle), a mix of routed, forwarded, split-K and packed
    # calls, each compared with the real cuBLAS; 60 rounds, since a race
    # between the shared handle's threads showed in 1 of 400 calls
    GEMMSHIM_LOAD_ROUNDS=${GEMMSHIM_LOAD_ROUNDS:-60} GEMMSHIM_POLICY=eligible run "$bin/test_load" load; rc=$?
    [ $rc -eq 0 ] || exit $rc
    for k in sgemm_warptile pingpong; do served $k "under load"; done
    grep -Eq -- '-> pingpong_[a-z0-9_]*_packa' "$log" ||
      { echo "FAIL: the load mix's operand that TMA cannot load was not packed:"; cat "$log"; exit 1; }
    grep -q -- '-> forward' "$log" || { echo "FAIL: the load mix forwarded no call:"; cat "$log"; exit 1; }
    no_fallback
    no_workspace_forward
    echo "load: signatures served: $(grep -c -- '-> sgemm_warptile' "$log") sgemm_warptile, $(grep -c -- '-> pingpong' "$log") pingpong, $(grep -c -- '-> skinny' "$log") skinny, $(grep -c -- '-> forward' "$log") forwarded; no fallback"
    # 2. a long run under verify: memory after the warm-up and at the end,
    # every routed call compared by the shim (1e6 calls by default; set
    # GEMMSHIM_SOAK_CALLS to change it)
    rm -f "$log"
    calls=${GEMMSHIM_SOAK_CALLS:-1000000}
    echo "load: soak of $calls calls under GEMMSHIM_MODE=verify"
    out=$(GEMMSHIM_SOAK_CALLS=$calls GEMMSHIM_POLICY=eligible GEMMSHIM_MODE=verify GEMMSHIM_VERIFY_FAIL=exit \
          run "$bin/test_load" soak 2>&1); rc=$?
    echo "$out" | grep -E '^soak|verify:|passed,|FAIL'
    [ $rc -eq 0 ] || { echo "FAIL: test_load soak under verify: rc=$rc"; echo "$out" | tail -20; exit 1; }
    echo "$out" | grep -Eq 'verify: [1-9][0-9]* routed calls compared with cuBLAS, 0 mismatches, .*; 0 routed calls not compared' ||
      { echo "FAIL: the soak's verify line does not say every routed call was compared with 0 mismatches"; exit 1; }
    no_fallback
    # 3. fork() after the shim's initialisation, CUDA untouched in the
    # parent: three children, then the parent; one log file per process
    rm -f "$logdir"/fork-*.log
    out=$(GEMMSHIM_POLICY=eligible GEMMSHIM_LOG="$logdir/fork-%p.log" LD_PRELOAD=$lib \
          "$bin/test_load" fork 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || { echo "FAIL: test_load fork: rc=$rc"; exit 1; }
    pids=$(echo "$out" | sed -n 's/^fork pids: parent \([0-9]*\) children \([0-9 ]*\)$/\1 \2/p')
    [ "$(echo $pids | wc -w)" -eq 4 ] || { echo "FAIL: test_load fork did not say its pids"; exit 1; }
    for p in $pids; do
      f=$logdir/fork-$p.log
      [ -f "$f" ] || { echo "FAIL: no log file $f"; ls -l "$logdir"; exit 1; }
      # each process logs its own calls (a child starts with no signatures)
      grep -Eq -- '-> (sgemm_warptile|pingpong|skinny)' "$f" ||
        { echo "FAIL: $f shows no routed call:"; cat "$f"; exit 1; }
    done
    n=$(ls "$logdir"/fork-*.log | wc -l)
    [ "$n" -eq 4 ] || { echo "FAIL: $n fork-*.log files, expected 4 (the parent and 3 children):"; ls -l "$logdir"; exit 1; }
    ! grep -q 'fallback: ' "$logdir"/fork-*.log || { echo "FAIL: some calls fell back to cuBLAS after fork:"; grep 'fallback: ' "$logdir"/fork-*.log; exit 1; }
    echo "load: fork: one log file for the parent and each of 3 children ($(echo $pids)), each with routed calls"
    ;;
  tune)
    # online tuning: every sampled result within tolerance while tuning and
    # after, inputs never written, a decision logged per signature (5 cases
    # and the threads' one); then two processes from the warm cache: the
    # same hashes (bitwise reproducible), graph replays equal to direct
    # calls, no fallback
    cache=$logdir/tune.cache
    rm -f "$cache"
    # no GEMMSHIM_TUNE_SHARE limit: 160 calls a case decide each signature
    out=$(GEMMSHIM_TUNE=online GEMMSHIM_TUNE_SHARE=0 GEMMSHIM_TUNE_CACHE=$cache run "$bin/test_tune" online 2>&1); rc=$?
    [ $rc -ne 77 ] || { echo "$out"; exit 77; }
    echo "$out" | grep -E '^(ok|FAIL|test_tune)'
    grep -E 'tune: ' "$log" | grep -v 'GEMMSHIM_TUNE_BUDGET' | sed 's/^/  /'
    [ $rc -eq 0 ] || { echo "FAIL: test_tune online: rc=$rc"; tail -30 "$log"; exit 1; }
    no_fallback
    decided=$(grep -c 'tune: .* -> ' "$log")
    [ "$decided" -ge 6 ] || { echo "FAIL: $decided decisions logged, 6 expected"; exit 1; }
    # the sustained check (GEMMSHIM_TUNE_SUSTAIN_MS): a challenger that won
    # its pairs on a long call replaces the prior only where it also wins
    # in blocks of back-to-back calls, by the rule's 1.01
    checks=$(grep -c 'tune: .*: sustained check of ' "$log")
    echo "tune: $checks sustained checks"
    bad=$(grep 'tune: .* -> ' "$log" | grep -v '(the prior kept)' | grep -oE '[0-9.]+x the prior sustained' |
          awk '$1 + 0 < 1.01' | head -3)
    [ -z "$bad" ] || { echo "FAIL: a decision kept below its sustained bar: $bad"; exit 1; }
    held=$(grep -c 'x the prior sustained' "$log")
    lost=$(grep -c 'held its gain sustained' "$log")
    [ "$checks" -ge $((held + lost > 0 ? 1 : 0)) ] ||
      { echo "FAIL: sustained verdicts without a check"; exit 1; }
    for r in 1 2; do
      rm -f "$log"
      out=$(GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE=$cache run "$bin/test_tune" cache 2>&1); rc=$?
      echo "$out" | grep -E '^(ok|FAIL|test_tune)'
      [ $rc -eq 0 ] || { echo "FAIL: test_tune cache (run $r): rc=$rc"; tail -30 "$log"; exit 1; }
      no_fallback
      echo "$out" | grep '^hash ' > "$logdir/tune-hash-$r"
    done
    cmp -s "$logdir/tune-hash-1" "$logdir/tune-hash-2" ||
      { echo "FAIL: two runs from the same cache differ:"; diff "$logdir/tune-hash-1" "$logdir/tune-hash-2"; exit 1; }
    echo "tune: two runs from the cache are bitwise identical ($(wc -l < "$logdir/tune-hash-1") cases)"
    ;;
  tune_from)
    # offline tuning (gemmshim tune --from): sample_app's signatures recorded,
    # then tuned with no application, first cut short (--max-calls 3: each
    # leaves its progress in the cache) and resumed to a decision for every
    # one, each tuned once; a rerun finds them all decided; the application
    # then runs from the cache; on two GPUs, each signature tuned once
    launcher=$bin/../gemmshim
    sigs=$logdir/tune-from.sigs cache=$logdir/tune-from.cache
    rm -f "$sigs" "$cache" "$cache.2"
    GEMMSHIM_RECORD=$sigs run "$bin/sample_app" 2 > /dev/null; rc=$?
    [ $rc -ne 77 ] || { echo "SKIP: no GPU"; exit 77; }
    [ $rc -eq 0 ] && [ -s "$sigs" ] || { echo "FAIL: recording sample_app: rc=$rc"; exit 1; }
    tunable=$(grep -c $'\ttunable=1' "$sigs")
    out=$(GEMMSHIM_LIBRARY=$lib GEMMSHIM_LOG=$log "$launcher" tune --from "$sigs" --cache "$cache" \
          --max-calls 3 2>&1); rc=$?
    echo "$out" | grep -E 'not decided after|gemmshim tune: [0-9]'
    [ $rc -eq 1 ] || { echo "FAIL: tune --from --max-calls 3: rc=$rc, 1 expected"; echo "$out"; exit 1; }
    out=$(GEMMSHIM_LIBRARY=$lib GEMMSHIM_LOG=$log "$launcher" tune --from "$sigs" --cache "$cache" 2>&1); rc=$?
    echo "$out" | sed 's/^/  /'
    [ $rc -eq 0 ] || { echo "FAIL: tune --from: rc=$rc"; exit 1; }
    echo "$out" | grep -q ', 0 not decided, ' || { echo "FAIL: signatures left undecided"; exit 1; }
    resumed=$(grep -c 'tune: .*: resumed (' "$log")
    [ "$resumed" -ge 1 ] || { echo "FAIL: no signature resumed from its progress"; exit 1; }
    # over both runs, each signature decided once, by one process
    decided=$(grep -c 'tune: .* -> ' "$log")
    twice=$(grep 'tune: .* -> ' "$log" | sed 's/ -> .*//' | sort | uniq -d | wc -l)
    summary=$(echo "$out" | sed -n 's/^gemmshim tune: [0-9]* signatures: \([0-9]*\) decided .*/\1/p')
    [ "$twice" -eq 0 ] && [ "$decided" -eq "$summary" ] ||
      { echo "FAIL: $decided decisions logged ($twice signatures twice), $summary in the cache"; exit 1; }
    no_fallback
    out=$(GEMMSHIM_LIBRARY=$lib "$launcher" tune --from "$sigs" --cache "$cache" 2>&1); rc=$?
    [ $rc -eq 0 ] && echo "$out" | grep -q ': 0 decided here, [1-9][0-9]* at their first call, ' ||
      { echo "FAIL: a rerun tuned again:"; echo "$out"; exit 1; }
    rm -f "$log"
    GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE=$cache run "$bin/sample_app" 2 > /dev/null; rc=$?
    [ $rc -eq 0 ] || { echo "FAIL: sample_app from the cache: rc=$rc"; exit 1; }
    grep -q 'tuned: ' "$log" || { echo "FAIL: no call served by a tuned decision:"; cat "$log"; exit 1; }
    no_fallback
    echo "tune_from: $decided of $tunable recorded signatures decided offline ($resumed resumed), each once; a rerun found them decided; served from the cache"
    if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
      rm -f "$log"
      out=$(GEMMSHIM_LIBRARY=$lib GEMMSHIM_LOG=$log "$launcher" tune --from "$sigs" --cache "$cache.2" \
            --gpus 2 2>&1); rc=$?
      [ $rc -eq 0 ] || { echo "FAIL: tune --from --gpus 2: rc=$rc"; echo "$out"; exit 1; }
      twice=$(grep 'tune: .* -> ' "$log" | sed 's/ -> .*//' | sort | uniq -d | wc -l)
      [ "$twice" -eq 0 ] || { echo "FAIL: $twice signatures tuned twice on 2 GPUs"; exit 1; }
      echo "tune_from: 2 GPUs, $(grep -c 'tune: .* -> ' "$log") signatures decided, none twice"
    fi
    ;;
  tune_seq)
    # graphs tuned as sequences: a Llama-3-8B decode step (4 layers'
    # projections, bf16; batches 1, 4, 16, 64, a graph each) recorded with
    # one eager warm-up and 200 replays per graph; tuned offline (each
    # signature per call, then each graph with the cache's decisions against
    # its prior, a decision that loses there settled; --graph-replays 200
    # as recorded); then, from the cache, each batch's graph replayed at
    # least 0.99x as fast as under the table's routes (median of 21
    # interleaved rounds in one process; a graph replay's time moves by
    # about 1% run to run)
    launcher=$bin/../gemmshim
    sigs=$logdir/tune-seq.sigs cache=$logdir/tune-seq.cache
    rm -f "$sigs" "$cache"
    out=$(GEMMSHIM_LIBRARY=$lib "$launcher" record --out "$sigs" -- "$bin/test_seq_decode" record 4 200 2>&1); rc=$?
    [ $rc -ne 77 ] || { echo "$out"; exit 77; }
    [ $rc -eq 0 ] || { echo "FAIL: recording the decode step: rc=$rc"; echo "$out"; exit 1; }
    seqs=$(grep -c $'^seq\t.*\tgemms=16\tcomplete=1\t' "$sigs")
    [ "$seqs" -eq 4 ] || { echo "FAIL: $seqs complete sequences of 16 GEMMs recorded, 4 expected:"; grep '^seq' "$sigs"; exit 1; }
    out=$(GEMMSHIM_LIBRARY=$lib GEMMSHIM_LOG=$log "$launcher" tune --from "$sigs" --cache "$cache" \
          --graph-replays 200 2>&1); rc=$?
    echo "$out" | grep -E 'sequence|gemmshim tune: [0-9]+ signatures|settled' | sed 's/^/  /'
    [ $rc -eq 0 ] || { echo "FAIL: tune --from: rc=$rc"; echo "$out"; exit 1; }
    echo "$out" | grep -q 'gemmshim tune: sequences: 4 recorded, ' ||
      { echo "FAIL: the sequence phase did not run:"; echo "$out"; exit 1; }
    ! echo "$out" | grep -q ': not measured: ' ||
      { echo "FAIL: a sequence could not be measured:"; echo "$out" | grep ': not measured: '; exit 1; }
    GEMMSHIM_LIBRARY=$lib "$launcher" report --cache "$cache" --sigs "$sigs" | sed 's/^/  /'
    out=$(GEMMSHIM_LIBRARY=$lib "$launcher" run --cache "$cache" -- "$bin/test_seq_decode" check 4 0.99 2>&1); rc=$?
    echo "$out" | grep 'test_seq_decode'
    [ $rc -eq 0 ] || { echo "FAIL: a decode graph from the cache is slower than under the table's routes (rc=$rc)"; exit 1; }
    echo "tune_seq: 4 decode graphs recorded, tuned per call and as sequences; from the cache none slower than the table's routes"
    ;;
  tune_resume)
    # online tuning that resumes: the Llama prefill's LM head (bf16 TN
    # 128256x4096x4096, one call a forward) tuned under the default
    # GEMMSHIM_TUNE_SHARE, once in one long process and once as processes of
    # 27 calls each (a prefill run's count): each process resumes the last
    # one's progress and share credit, so the short ones decide it after
    # about the same total number of calls (at most 10% and one process more)
    per=${GS_RESUME_CALLS:-27}
    c1=$logdir/resume-one.cache c2=$logdir/resume-many.cache
    rm -f "$c1" "$c2"
    out=$(GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE=$c1 run "$bin/test_tune_resume" 6000 2>&1); rc=$?
    [ $rc -ne 77 ] || { echo "$out"; exit 77; }
    [ $rc -eq 0 ] || { echo "FAIL: test_tune_resume (one process): rc=$rc"; echo "$out"; exit 1; }
    one=$(echo "$out" | sed -n 's/.*decided at call \([0-9]*\).*/\1/p')
    [ "${one:-0}" -gt 0 ] || { echo "FAIL: not decided in one process of 6000 calls"; grep 'tune: ' "$log" | tail -5; exit 1; }
    total=0 p=0 many=0
    while [ "$p" -lt $((2 * one / per + 20)) ]; do
      p=$((p + 1))
      out=$(GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE=$c2 run "$bin/test_tune_resume" "$per" 2>&1) ||
        { echo "FAIL: test_tune_resume (process $p)"; echo "$out"; exit 1; }
      d=$(echo "$out" | sed -n 's/.*decided at call \([0-9]*\).*/\1/p')
      if [ "${d:-0}" -gt 0 ]; then many=$((total + d)); break; fi
      total=$((total + per))
    done
    resumed=$(grep -c 'tune: .*: resumed (' "$log")
    echo "tune_resume: decided after $one calls in one process; after $many over $p processes of $per ($resumed resumptions)"
    grep 'tune: .*sustained' "$log" | tail -2 | sed 's/^/  /'
    [ "$many" -gt 0 ] || { echo "FAIL: not decided over $p processes"; exit 1; }
    [ "$many" -le $((one + one / 10 + per)) ] ||
      { echo "FAIL: $many calls over short processes, $one in one"; exit 1; }
    ;;
  ddp_tune)
    # a 2-rank torchrun job (DDP, bf16 MLP) tuning online into one cache:
    # each signature decided by one rank, the other serving the prior until
    # the decision is in (tests/apps/ddp_tune_check.sh); 77 with fewer than
    # two GPUs or without torchrun
    bash "$(dirname "$0")/../apps/ddp_tune_check.sh" "$lib" "$logdir/ddp" 2
    exit $?
    ;;
  plugin)
    # the example plugin (examples/plugin_sgemm) loaded into sample_app with
    # GEMMSHIM_PLUGINS: its fp32 calls routed to it (each configuration in
    # turn), verified against cuBLAS with 0 mismatches, then A/B-timed
    plug=$bin/libgemmshim_example_sgemm.so
    [ -f "$plug" ] || { echo "SKIP: $plug not built (configure with GEMMSHIM_BUILD_EXAMPLES=ON)"; exit 77; }
    for k in example_sgemm_16x16 example_sgemm_32x32; do
      rm -f "$log"
      out=$(GEMMSHIM_PLUGINS=$plug GEMMSHIM_KERNELS=$k GEMMSHIM_MODE=verify GEMMSHIM_POLICY=eligible \
            GEMMSHIM_VERIFY_FAIL=exit run "$bin/sample_app" 2>&1); rc=$?
      [ $rc -ne 77 ] || { echo "$out"; exit 77; } # no GPU: the program said so
      echo "$out" | grep -E 'verify:|sample_app:|FAIL'
      [ $rc -eq 0 ] || { echo "FAIL: sample_app with the plugin ($k) under verify: rc=$rc"; cat "$log"; exit 1; }
      grep -q "plugin 'example_sgemm' 1.0.0" "$log" || { echo "FAIL: the plugin was not loaded:"; cat "$log"; exit 1; }
      served $k
      no_fallback
      echo "$out" | grep -Eq 'verify: [1-9][0-9]* routed calls compared with cuBLAS, 0 mismatches' ||
        { echo "FAIL: no verified calls, or mismatches ($k)"; exit 1; }
      echo "plugin: $k served $(grep -c -- "-> $k" "$log") signatures of sample_app, verified"
    done
    rm -f "$log"
    rep=$logdir/plugin-ab
    rm -f "$rep.csv" "$rep.json"
    out=$(GEMMSHIM_PLUGINS=$plug GEMMSHIM_KERNELS=example_sgemm GEMMSHIM_MODE=ab GEMMSHIM_POLICY=eligible \
          GEMMSHIM_REPORT=$rep run "$bin/sample_app" 5 2>&1); rc=$?
    [ $rc -eq 0 ] || { echo "$out" | tail -20; echo "FAIL: sample_app with the plugin under ab: rc=$rc"; exit 1; }
    python3 - "$rep.csv" <<'PY' || { cat "$rep.csv"; echo "FAIL: the plugin's ab report"; exit 1; }
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["route"].startswith("example_sgemm")]
for r in rows:
    print(f"plugin ab: {r['signature']}: ours {r['ours_us']} us, cuBLAS {r['cublas_us']} us, {r['speedup']}x, max_err {r['max_err']}, {r['route']}")
assert len(rows) >= 4, "fewer than 4 signatures served by the plugin"
assert all(not math.isnan(float(r[c])) for r in rows for c in ("ours_us", "cublas_us", "speedup", "max_err"))
assert all(float(r["max_err"]) < 1e-5 for r in rows)
PY
    ;;
  sample)
    run "$bin/sample_app"; rc=$?
    cat "$log"
    exit $rc
    ;;
  *) echo "usage: $0 sweep|hsweep|f32acc|sanitize|parity|graph|multi|pdl|verify|ab|linked|sample|lt|direct|faults|load|plugin|tune|tune_from BIN_DIR LIB [LOG_DIR]"; exit 2 ;;
esac
