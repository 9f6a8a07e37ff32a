#!/usr/bin/env bats
# Graphs tuned as sequences, on the CPU: gemmshim_hold_prior through the
# shim (a held signature gets its prior, released its decision; threads);
# the replay's sequence phase on the simulated device (what it compares and
# skips, and why; each compared sequence's GEMMs issued in the recorded
# order once per variant); the launcher running that phase once after the
# per-call tuning; the summary and the report of decisions settled in
# sequences. Timing the graphs needs a GPU: run_gpu_test.sh tune_seq.

load test_helper

setup() {
    common_setup
    L="$SHIM_BUILD_DIR/gemmshim"
    REPLAY="$SHIM_BUILD_DIR/bin/gemmshim-replay"
    HOLD="$TEST_BIN_DIR/hold_calls"
    D="$BATS_TEST_TMPDIR"
    export GEMMSHIM_LIBRARY="$GEMMSHIM_LIB"
    [ -x "$REPLAY" ] && [ -x "$HOLD" ] || { echo "missing $REPLAY or $HOLD" >&2; return 1; }
}

# A decision line: class $1 served by family $2 config $3 against prior $4,
# then extra fields $5.
decision() {
    printf 'sig\t%s\t%s\t%s\tgain=1.2000\tlo95=1.1000\tpairs=10\tms=1.000\tprior=%s\tvs_prior=1.2000%s\t# test\n' \
        "$1" "$2" "$3" "$4" "${5:-}"
}

@test "gemmshim_hold_prior: held, a signature gets its prior; released, its decision; every signature; from threads" {
    local env=(env LD_LIBRARY_PATH="$FAKE_DIR" GEMMSHIM_TEST_DEVICE=sm_90:132)
    run_shim "${env[@]}" GEMMSHIM_RECORD="$D/h.sigs" "$HOLD"
    [ "$status" -eq 0 ]
    hex=$(awk -F'\t' '$1 == "sig" { print $2 }' "$D/h.sigs")
    [ -n "$hex" ]
    # the cache's header as this process writes it, then a decision the
    # prior (the built-in table: 0.63x, forwarded) does not make
    run_shim "${env[@]}" GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE="$D/h.cache" "$HOLD"
    [ "$status" -eq 0 ]
    decision "$hex" sgemm_simt sgemm_simt cublas >> "$D/h.cache"
    run_shim "${env[@]}" GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE="$D/h.cache" "$HOLD" "$hex"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" " passed, 0 failed"
    # tuning off: holding changes nothing, and is not an error
    run_shim "${env[@]}" "$HOLD"
    [ "$status" -eq 0 ]
}

# sample_calls recorded on the simulated H100 into $D/app.sigs; $S1 and
# $S2 the ids, $H1 and $H2 the classes of its Sgemm NN and its bf16 GemmEx.
record_sample() {
    run_shim env GEMMSHIM_RECORD="$D/app.sigs" GEMMSHIM_TEST_DEVICE=sm_90:132 \
        LD_LIBRARY_PATH="$FAKE_DIR" "$SAMPLE"
    [ "$status" -eq 0 ]
    local sg bf
    sg=$(awk -F'\t' '$1 == "sig" && $NF ~ /cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 /' "$D/app.sigs")
    bf=$(awk -F'\t' '$1 == "sig" && $NF ~ /cublasGemmEx TN bf16,bf16->bf16 /' "$D/app.sigs" | head -1)
    H1=$(cut -f2 <<<"$sg") S1=$(cut -f3 <<<"$sg" | sed 's/^id=//')
    H2=$(cut -f2 <<<"$bf") S2=$(cut -f3 <<<"$bf" | sed 's/^id=//')
    [ -n "$H1" ] && [ -n "$H2" ] && [ -n "$S1" ] && [ -n "$S2" ]
}

@test "replay --sequences: what is compared and why not; the GEMMs issued in the recorded order, once per variant" {
    record_sample
    # three sequences: S1 S2 S1 (S1's decision replaces its prior), one
    # incomplete, one whose only class keeps its prior
    {
        printf 'seq\tid=00000000000000a1\tcaptures=3\tgemms=3\tcomplete=1\tsigs=%s,%s,%s\n' "$S1" "$S2" "$S1"
        printf 'seq\tid=00000000000000a2\tcaptures=1\tgemms=1\tcomplete=0\tsigs=%s\n' "$S1"
        printf 'seq\tid=00000000000000a3\tcaptures=1\tgemms=2\tcomplete=1\tsigs=%s,%s\n' "$S2" "$S2"
    } >> "$D/app.sigs"
    printf '# gemmshim tune cache\nformat 2\nvalidator gpu=test\n' > "$D/app.cache"
    decision "$H1" sgemm_simt sgemm_simt cublas >> "$D/app.cache"
    decision "$H2" cublas as_called cublas >> "$D/app.cache"
    rm -f "$FAKE_CUBLAS_RECORD"
    run --separate-stderr env LD_PRELOAD="$GEMMSHIM_LIB" LD_LIBRARY_PATH="$FAKE_DIR" \
        GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE="$D/app.cache" \
        "$REPLAY" --sequences --from "$D/app.sigs" --cache "$D/app.cache" --graph-replays 10
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "gemmshim tune: sequences: 3 recorded, 1 to compare with their prior, 2 not"
    expect_contains "$stderr" "sequence 00000000000000a2 (1 GEMMs, 1 captures): not compared: incomplete when recorded"
    expect_contains "$stderr" "sequence 00000000000000a3 (2 GEMMs, 1 captures): not compared: every decision in it keeps its prior"
    expect_contains "$stderr" "sequence 00000000000000a1 (3 GEMMs, 3 captures): built with its 1 changed classes as decided and at their prior (simulated device: not timed)"
    # the replay's calls: the sequence twice (as decided, every prior), in order
    expect_eq "$(cut -d' ' -f1 "$FAKE_CUBLAS_RECORD" | tr '\n' ' ')" \
        "cublasSgemm_v2 cublasGemmEx cublasSgemm_v2 cublasSgemm_v2 cublasGemmEx cublasSgemm_v2 " "calls"
    # nothing settled without timings: the cache is as it was
    expect_eq "$(grep -c $'^sig\t' "$D/app.cache")" 2 "decisions"
    # a sequence naming a signature not in the files: said, not compared
    printf 'seq\tid=00000000000000a4\tcaptures=1\tgemms=1\tcomplete=1\tsigs=00000000000000ff\n' >> "$D/app.sigs"
    run --separate-stderr env LD_PRELOAD="$GEMMSHIM_LIB" LD_LIBRARY_PATH="$FAKE_DIR" \
        GEMMSHIM_TEST_DEVICE=sm_90:132 "$REPLAY" --sequences --from "$D/app.sigs" --cache "$D/app.cache"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "sequence 00000000000000a4 (1 GEMMs, 1 captures): not compared: a GEMM of it is not among the signatures read"
    # without the shim: nothing can be compared, said, a failure
    run --separate-stderr env LD_LIBRARY_PATH="$FAKE_DIR" GEMMSHIM_TEST_DEVICE=sm_90:132 \
        "$REPLAY" --sequences --from "$D/app.sigs" --cache "$D/app.cache"
    [ "$status" -eq 1 ]
    expect_contains "$stderr" "the shim is not preloaded (no gemmshim_hold_prior): nothing compared"
    # no sequences recorded: nothing to do, and no GPU needed
    grep -v $'^seq\t' "$D/app.sigs" > "$D/noseq.sigs"
    run --separate-stderr env CUDA_VISIBLE_DEVICES=-1 "$REPLAY" --sequences --from "$D/noseq.sigs" --cache "$D/app.cache"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "sequences: none recorded (no CUDA graph was captured)"
    # --sequences needs the cache; its options' values are checked
    run --separate-stderr "$REPLAY" --sequences --from "$D/app.sigs"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "--sequences needs --cache CACHE"
    run --separate-stderr "$REPLAY" --sequences --from "$D/app.sigs" --cache "$D/app.cache" --seq-rounds 2
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "bad option or value: --seq-rounds 2"
}

@test "the summary and the report: decisions settled in their sequences" {
    record_sample
    printf '# gemmshim tune cache\nformat 2\nvalidator gpu=test\n' > "$D/app.cache"
    # S1 went back to its prior (was= its per-call choice), S2 kept its route
    printf 'sig\t%s\tcublas\tas_called\tgain=1.0000\tlo95=0.0000\tpairs=0\tms=1.000\tprior=cublas\tvs_prior=1.0000\tseq=0.9810\twas=sgemm_simt/sgemm_simt\t# s1\n' "$H1" >> "$D/app.cache"
    decision "$H2" pingpong pingpong_128x128x64 cublas $'\tseq=1.0210' >> "$D/app.cache"
    run --separate-stderr "$REPLAY" --summary --from "$D/app.sigs" --cache "$D/app.cache"
    echo "$output"
    expect_contains "$output" "settled in the CUDA graphs of their recorded sequences: 2 (1 keep their tuned route, 1 went back to the prior there)"
    run --separate-stderr "$L" report --cache "$D/app.cache" --sigs "$D/app.sigs"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "settled in the CUDA graphs of their recorded sequences: 2 (1 keep their tuned route, 1 went back to the prior)"
    grep -Eq '^ +0\.981x +the prior: cublas +sgemm_simt sgemm_simt +s1$' <<<"$output"
    grep -Eq '^ +1\.021x +kept: pingpong pingpong_128x128x64 +- +test$' <<<"$output"
}

# A stand-in for gemmshim-replay that writes what each process was given.
stub() {
    cat > "$D/stub" <<'EOF'
#!/usr/bin/env bash
case " $* " in
  *" --count-gpus "*) echo 2; exit 0 ;;
  *" --summary "*) echo "summary"; exit 0 ;;
esac
echo "gpu=$CUDA_VISIBLE_DEVICES tune=$GEMMSHIM_TUNE preload=${LD_PRELOAD:-none} args=$*" >> "$STUB_LOG"
case " $* " in *" --sequences "*) exit "${SEQ_STATUS:-0}" ;; esac
exit 0
EOF
    chmod +x "$D/stub"
    export GEMMSHIM_REPLAY="$D/stub" STUB_LOG="$D/ran"
}

@test "tune --from: the sequence phase once, after the per-call tuning, on the first GPU, serving the cache" {
    stub
    printf 'gemmshim-signatures\tformat=1\nseq\tid=1\tcaptures=1\tgemms=1\tcomplete=1\tsigs=1\n' > "$D/a.sigs"
    run --separate-stderr "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --gpus 2 --graph-replays 500
    echo "$stderr"
    [ "$status" -eq 0 ]
    cat "$D/ran"
    expect_eq "$(wc -l < "$D/ran")" 3 "two tuning processes, then the sequence phase"
    expect_eq "$(sed -n 3p "$D/ran")" \
        "gpu=0 tune=cache preload=$GEMMSHIM_LIB args=--sequences --from $D/a.sigs --cache $D/c.cache --graph-replays 500"
    expect_eq "$output" "summary"
    # its failure is the launcher's status, said
    rm -f "$D/ran"
    run --separate-stderr env SEQ_STATUS=1 "$L" tune --from "$D/a.sigs" --cache "$D/c.cache"
    [ "$status" -eq 1 ]
    expect_contains "$stderr" "gemmshim: tune --from: the sequence phase ended with status 1"
    # --no-sequences, or no sequence recorded: not run
    rm -f "$D/ran"
    run --separate-stderr "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --no-sequences
    [ "$status" -eq 0 ]
    ! grep -q -- --sequences "$D/ran"
    printf 'gemmshim-signatures\tformat=1\n' > "$D/b.sigs"
    rm -f "$D/ran"
    run --separate-stderr "$L" tune --from "$D/b.sigs" --cache "$D/c.cache"
    [ "$status" -eq 0 ]
    ! grep -q -- --sequences "$D/ran"
    run --separate-stderr "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --graph-replays 0
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: tune --from: --graph-replays takes a positive number, not '0'"
}
