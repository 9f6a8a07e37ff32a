#!/usr/bin/env bats
# gemmshim tune --from (offline tuning): the replay's rebuilt calls, recorded
# again through the shim against the fake cuBLAS, have the very classes
# recorded (the strongest check of the class -> call rebuild); what cannot
# be rebuilt is skipped with why; the replay under the shim's tuner on the
# simulated device (where nothing is tuned) and with decisions in the
# cache (decided at their first call: a rerun skips them); the launcher's argument
# errors, no GPU, and its split over GPUs (with a stand-in for the replay).

load test_helper

setup() {
    common_setup
    L="$SHIM_BUILD_DIR/gemmshim"
    REPLAY="$SHIM_BUILD_DIR/bin/gemmshim-replay"
    VARIETY="$TEST_BIN_DIR/variety_calls"
    D="$BATS_TEST_TMPDIR"
    export GEMMSHIM_LIBRARY="$GEMMSHIM_LIB"
    [ -x "$REPLAY" ] || { echo "missing $REPLAY" >&2; return 1; }
}

# The recorded classes of signature file $1 (tunable=$2), sorted.
classes() {
    awk -F'\t' -v t="tunable=$2" '$1 == "sig" { for (i = 3; i <= NF; ++i) if ($i == t) print $2 }' \
        "$1" | LC_ALL=C sort -u
}

# The applications' signatures: sample_calls, lt_calls, thread_calls and
# variety_calls, recorded on the simulated H100 into $D/app.sigs.
record_apps() {
    local app
    for app in "$SAMPLE 2" "$LT_CALLS" "$TEST_BIN_DIR/thread_calls 2 2 0" "$VARIETY"; do
        # shellcheck disable=SC2086
        run_shim env GEMMSHIM_RECORD="$D/app.sigs" GEMMSHIM_TEST_DEVICE=sm_90:132 \
            LD_LIBRARY_PATH="$FAKE_DIR" $app
        [ "$status" -eq 0 ] || { echo "$app: $stderr" >&2; return 1; }
    done
}

@test "tune --from: the replayed calls record again as the very classes recorded" {
    record_apps
    rm -f "$FAKE_CUBLAS_RECORD"   # from here, the replay's calls only
    # the replay, preloaded with the shim, not tuning: each signature issued
    # once, through its own entry point, and recorded again
    run --separate-stderr env LD_PRELOAD="$GEMMSHIM_LIB" LD_LIBRARY_PATH="$FAKE_DIR" \
        GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_RECORD="$D/replay.sigs" "$REPLAY" --from "$D/app.sigs"
    echo "$stderr"
    [ "$status" -eq 0 ]
    classes "$D/app.sigs" 1 > "$D/recorded"
    classes "$D/replay.sigs" 1 > "$D/replayed"
    # thread_calls' fp16 compute and variety_calls' pointer arrays are
    # recorded as tunable but no call of their class is rebuilt: skipped
    python3 - "$SHIM_SOURCE_DIR/bench" "$D/app.sigs" > "$D/rebuildable" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import gs_signatures as g
m = g.read_sigs([sys.argv[2]])
for (h, tunable, why), s in sorted(m["sigs"].items()):
    c = g.decode_class(h)
    if tunable and c["entry"] != g.GEMMEX_BATCHED and c["compute"] != 0:
        print(h)
PY
    expect_eq "$(wc -l < "$D/rebuildable")" "$(( $(wc -l < "$D/recorded") - 2 ))" "two not rebuilt"
    [ "$(wc -l < "$D/rebuildable")" -ge 14 ]
    diff "$D/rebuildable" "$D/replayed"
    # no signature of the replay that was not recorded
    expect_eq "$(classes "$D/replay.sigs" 0 | wc -l)" 0 "not tunable"
    # each through the entry point recorded: the fake saw them
    for ep in cublasSgemm_v2 cublasSgemm_v2_64 cublasSgemmStridedBatched cublasSgemmStridedBatched_64 \
              cublasGemmEx cublasGemmEx_64 cublasGemmStridedBatchedEx_64 cublasLtMatmul; do
        grep -q "^$ep " "$FAKE_CUBLAS_RECORD" || { echo "no $ep call" >&2; false; }
    done
    ! grep -q '^cublasGemmBatchedEx' "$FAKE_CUBLAS_RECORD"
    expect_contains "$stderr" "gemmshim tune: $(wc -l < "$D/rebuildable") signatures to tune"
    expect_contains "$stderr" "(tuning is not on: each replayed once)"
    # the summary: what was skipped and why
    run --separate-stderr "$REPLAY" --summary --from "$D/app.sigs" --cache "$D/none.cache"
    echo "$output"
    [ "$status" -eq 1 ]
    # lt_calls' six calls beyond the class, its FP8 output and its FP8
    # call with an unaligned scale vector (its tensorwise, rowwise and
    # rowwise decode FP8 calls are rebuilt: the diff above)
    expect_contains "$output" "skipped, not tunable as recorded: 8"
    expect_contains "$output" "1 x pointer-array batches (cublasGemmBatchedEx): never tuned"
    expect_contains "$output" "1 x a compute type the class does not name (16F, 64F, 32I, ...)"
    expect_contains "$output" "cache $D/none.cache (cannot be read)"
}

@test "tune --from: under the shim's tuner, nothing tuned on the simulated device; decisions in the cache are found; other machines' files said" {
    record_apps
    local env=(env LD_PRELOAD="$GEMMSHIM_LIB" LD_LIBRARY_PATH="$FAKE_DIR" GEMMSHIM_TEST_DEVICE=sm_90:132
               GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE="$D/app.cache")
    run --separate-stderr "${env[@]}" "$REPLAY" --from "$D/app.sigs" --cache "$D/app.cache"
    echo "$stderr"
    # the simulated device runs no kernel: the shim tunes nothing, says the
    # replay, and the run is not a success
    [ "$status" -eq 1 ]
    n=$(grep -c ': not tuned here (the shim serves its prior)' <<<"$stderr")
    [ "$n" -ge 14 ]
    expect_contains "$stderr" "0 decided here, 0 at their first call, 0 by other processes, $n not tuned here, 0 failed"
    grep -q '^validator gpu=' "$D/app.cache"   # the shim opened the cache
    # two decisions in the cache (for the TF32 GemmEx and the 256^3 Sgemm,
    # both forwarded by their prior): decided at their first call
    tf=$(awk -F'\t' '$1 == "sig" && $NF ~ /cublasGemmEx NN f32,f32->f32 compute=32F_FAST_TF32 m=128 /' "$D/app.sigs" | cut -f2 | head -1)
    sg=$(awk -F'\t' '$1 == "sig" && $NF ~ /cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 /' "$D/app.sigs" | cut -f2 | head -1)
    [ -n "$tf" ] && [ -n "$sg" ]
    for h in "$tf" "$sg"; do
        printf 'sig\t%s\tcublas\tas_called\tgain=1.0000\tlo95=1.0000\tpairs=10\tms=1.000\tprior=cublas\tvs_prior=1.0000\t# test\n' "$h" >> "$D/app.cache"
    done
    # recorded elsewhere: the header's facts differ from this machine's
    sed -i '1s/\tdriver=[0-9]*/\tdriver=1/' "$D/app.sigs"
    run --separate-stderr "${env[@]}" "$REPLAY" --from "$D/app.sigs" --cache "$D/app.cache"
    echo "$stderr"
    [ "$status" -eq 1 ]
    expect_contains "$stderr" "0 decided here, 2 at their first call, 0 by other processes, $((n - 2)) not tuned here, 0 failed"
    expect_eq "$(grep -c ': decided at its first call (1 calls' <<<"$stderr")" 2 "found at the first call"
    expect_eq "$(grep -c 'was recorded with driver=1 (here ' <<<"$stderr")" 1 "the facts said once"
    expect_contains "$stderr" "$D/app.sigs was recorded with driver=1 (here "
    expect_contains "$stderr" "tuned anyway, for this machine"
    # the summary: two decided, keeping their prior; the rest not decided
    run --separate-stderr "$REPLAY" --summary --from "$D/app.sigs" --cache "$D/app.cache"
    echo "$output"
    [ "$status" -eq 1 ]
    expect_contains "$output" ": 2 decided (2 keep the prior, 0 replace it), $((n - 2)) not decided,"
    expect_contains "$output" "  not decided: cublasLtMatmul TN bf16,bf16->bf16 compute=32F m=1024 n=512 k=768 "
}

@test "tune --from: argument errors, one line each" {
    printf 'gemmshim-signatures\tformat=1\n' > "$D/ok.sigs"
    printf '# gemmshim tune cache\n' > "$D/junk"
    check() {   # check STATUS MESSAGE ARGS...
        local want=$1 msg=$2
        shift 2
        run --separate-stderr "$L" "$@"
        echo "$stderr"
        [ "$status" -eq "$want" ] || { echo "status $status, not $want: $*" >&2; return 1; }
        expect_contains "$stderr" "$msg"
    }
    check 2 "gemmshim: tune needs --cache FILE (where the decisions go)" tune --from "$D/ok.sigs"
    check 2 "gemmshim: tune --from: cannot read '$D/none.sigs'" tune --from "$D/none.sigs" --cache "$D/c"
    check 2 "gemmshim: tune --from: '$D/junk' is not a gemmshim signature file" tune --from "$D/junk" --cache "$D/c"
    check 2 "gemmshim: tune --from replays the signature files: no application after --" \
        tune --from "$D/ok.sigs" --cache "$D/c" -- true
    check 2 "gemmshim: tune --from: --gpus takes all or a positive number, not '0'" \
        tune --from "$D/ok.sigs" --cache "$D/c" --gpus 0
    check 2 "gemmshim: tune --from: --gpus takes all or a positive number, not 'two'" \
        tune --from "$D/ok.sigs" --cache "$D/c" --gpus two
    check 2 "gemmshim: tune --from: --max-calls takes a positive number, not '-5'" \
        tune --from "$D/ok.sigs" --cache "$D/c" --max-calls -5
    check 2 "gemmshim: option --from needs a value" tune --from --cache "$D/c"
    check 2 "gemmshim: tune --from: unknown argument '--report'" tune --from "$D/ok.sigs" --cache "$D/c" --report x
    check 2 "gemmshim: tune --cache: cannot write in /nonexistent" tune --from "$D/ok.sigs" --cache /nonexistent/c
    # an application's own --from (after --) is the application's
    run --separate-stderr "$L" tune -- true --from x
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: tune needs --cache FILE"
    run "$L" --help
    expect_contains "$output" "gemmshim tune --from SIGS [--from SIGS ...] --cache FILE [--gpus all|N]"
    # the replay's own
    run --separate-stderr "$REPLAY" --max-calls 0 --from "$D/ok.sigs"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim-replay: bad option or value: --max-calls 0"
    run --separate-stderr "$REPLAY" --from "$D/junk"
    [ "$status" -eq 2 ]
    expect_eq "$stderr" "gemmshim-replay: $D/junk is not a gemmshim signature file (no 'gemmshim-signatures' first line)"
    run --separate-stderr "$REPLAY" --rank 2 --ranks 2 --from "$D/ok.sigs"
    [ "$status" -eq 2 ]
}

@test "tune --from without a GPU: says so and exits 77, at once, for one GPU or several" {
    record_apps
    for gpus in 1 2 all; do
        # no GPU visible, also on a machine that has one
        SECONDS=0
        run --separate-stderr env CUDA_VISIBLE_DEVICES=-1 timeout 120 "$L" tune --from "$D/app.sigs" \
            --cache "$D/c.cache" --gpus "$gpus"
        echo "$stderr"
        [ "$status" -eq 77 ]
        [ "$SECONDS" -lt 60 ]
        expect_contains "$stderr" "gemmshim: tune --from: no GPU here ("
        [ ! -e "$D/c.cache" ]
        # the replay alone says the same
        run --separate-stderr env CUDA_VISIBLE_DEVICES=-1 timeout 120 "$REPLAY" --from "$D/app.sigs"
        [ "$status" -eq 77 ]
        expect_contains "$stderr" "gemmshim-replay: no GPU here: "
    done
}

# A stand-in for gemmshim-replay: as many GPUs as CUDA_VISIBLE_DEVICES
# names (else 4); each process writes what it was given; the one on GPU
# $FAIL_ON exits 3; the summary says it ran.
stub() {
    cat > "$D/stub" <<'EOF'
#!/usr/bin/env bash
case " $* " in
  *" --count-gpus "*)
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | wc -l; else echo 4; fi
    exit 0 ;;
  *" --summary "*)
    echo "summary: $* preload=${LD_PRELOAD:-none}"
    exit 0 ;;
esac
echo "gpu=$CUDA_VISIBLE_DEVICES args=$* preload=${LD_PRELOAD:-none} tune=$GEMMSHIM_TUNE cache=$GEMMSHIM_TUNE_CACHE share=$GEMMSHIM_TUNE_SHARE budget=$GEMMSHIM_TUNE_BUDGET_MS" >> "$STUB_LOG"
[ "${FAIL_ON:-}" != "$CUDA_VISIBLE_DEVICES" ] || exit 3
exit 0
EOF
    chmod +x "$D/stub"
    export GEMMSHIM_REPLAY="$D/stub" STUB_LOG="$D/ran"
}

@test "tune --from --gpus: one process per GPU, each its own GPU and rank, all on one cache; then one summary" {
    printf 'gemmshim-signatures\tformat=1\n' > "$D/a.sigs"
    unset CUDA_VISIBLE_DEVICES
    stub
    run --separate-stderr "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --gpus 2 --max-calls 50
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    sort "$D/ran" > "$D/sorted"
    cat "$D/sorted"
    expect_eq "$(wc -l < "$D/sorted")" 2 "processes"
    common="--from $D/a.sigs --cache $D/c.cache --max-calls 50"
    expect_eq "$(sed -n 1p "$D/sorted")" "gpu=0 args=$common --rank 0 --ranks 2 preload=$GEMMSHIM_LIB tune=online cache=$D/c.cache share=0 budget=86400000"
    expect_eq "$(sed -n 2p "$D/sorted")" "gpu=1 args=$common --rank 1 --ranks 2 preload=$GEMMSHIM_LIB tune=online cache=$D/c.cache share=0 budget=86400000"
    # the summary: once, after them, without the shim
    expect_eq "$output" "summary: --summary $common preload=none"
    # all: every GPU; a CUDA_VISIBLE_DEVICES list is the one split
    rm -f "$D/ran"
    run --separate-stderr "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --gpus all
    [ "$status" -eq 0 ]
    expect_eq "$(cut -d' ' -f1 "$D/ran" | sort | tr '\n' ' ')" "gpu=0 gpu=1 gpu=2 gpu=3 " "all four"
    rm -f "$D/ran"
    run --separate-stderr env CUDA_VISIBLE_DEVICES=5,7 GEMMSHIM_TUNE_BUDGET_MS=1000 GEMMSHIM_TUNE_SHARE=10 \
        "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --gpus all
    [ "$status" -eq 0 ]
    expect_eq "$(cut -d' ' -f1 "$D/ran" | sort | tr '\n' ' ')" "gpu=5 gpu=7 " "the visible ones"
    grep -q 'share=10 budget=1000$' "$D/ran"   # the user's share and budget stand
    # default: one GPU
    rm -f "$D/ran"
    run --separate-stderr "$L" tune --from "$D/a.sigs" --cache "$D/c.cache"
    [ "$status" -eq 0 ]
    expect_eq "$(wc -l < "$D/ran")" 1 "one process"
    grep -q -- '--rank 0 --ranks 1 ' "$D/ran"
    # more GPUs than there are
    run --separate-stderr "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --gpus 5
    [ "$status" -eq 2 ]
    expect_eq "$stderr" "gemmshim: tune --from: --gpus 5, but 4 GPUs are visible here"
    # one process failing: said, its status the launcher's, the summary still given
    rm -f "$D/ran"
    run --separate-stderr env FAIL_ON=2 "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --gpus 3
    echo "$stderr"
    [ "$status" -eq 3 ]
    expect_eq "$(wc -l < "$D/ran")" 3 "every process ran"
    expect_contains "$stderr" "gemmshim: tune --from: the process on GPU 2 ended with status 3"
    expect_contains "$output" "summary: --summary"
}

@test "tune --from: a replay that finds no GPU stops the launcher with 77" {
    printf 'gemmshim-signatures\tformat=1\n' > "$D/a.sigs"
    printf '#!/bin/sh\necho "gemmshim-replay: no GPU here: no CUDA-capable device is detected" >&2\nexit 77\n' > "$D/nogpu"
    chmod +x "$D/nogpu"
    run --separate-stderr env GEMMSHIM_REPLAY="$D/nogpu" "$L" tune --from "$D/a.sigs" --cache "$D/c.cache" --gpus all
    [ "$status" -eq 77 ]
    expect_eq "$stderr" "gemmshim: tune --from: no GPU here (no CUDA-capable device is detected)"
}
