#!/usr/bin/env bats
# GEMMSHIM_* settings as the application sees them: messages, logs, exit.

load test_helper

setup() { common_setup; }

@test "GEMMSHIM_MODE=off forwards every call, with that reason" {
    run_shim env GEMMSHIM_MODE=off GEMMSHIM_LOG=stderr GEMMSHIM_TEST_DEVICE=sm_90:132 \
        GEMMSHIM_POLICY=eligible "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    calls=$(count_fixed "$stderr" " -> ")
    expect_eq "$calls" 5 "one log line per signature"
    expect_eq "$(count_fixed "$stderr" " -> forward (GEMMSHIM_MODE=off)")" 5
    expect_contains "$stderr" "cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward (GEMMSHIM_MODE=off)"
    expect_eq "$(count_fixed "$stderr" "fallback:")" 0
    expect_eq "$(count_fixed "$stderr" "failed (")" 0
    expect_eq "$(record_lines)" 5
}

# A bad value: exactly one "gemmshim: ..." line, naming the variable; the
# application runs normally and every call is forwarded.
bad_value() {
    local var=$1 value=$2
    run_shim env "$var=$value" GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=eligible \
        "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "5 calls, 0 unexpected statuses"
    expect_eq "$(count_fixed "$stderr" "gemmshim:")" 1 "gemmshim lines on stderr"
    line=$(grep -F "gemmshim:" <<<"$stderr")
    expect_contains "$line" "$var"
    expect_contains "$line" "passes every call to cuBLAS"
    [[ "$line" == gemmshim:* ]]
    # forwarded: all five reached the fake, none tried a kernel
    expect_eq "$(record_lines)" 5
    ! grep -q "failed to launch\|failed (" <<<"$stderr"
}

@test "bad GEMMSHIM_MODE: one message, the app runs, calls forwarded" {
    bad_value GEMMSHIM_MODE maybe
}

@test "bad GEMMSHIM_POLICY: one message, the app runs, calls forwarded" {
    # the valid POLICY set by bad_value is overridden: env takes the last one
    run_shim env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=fastest "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "gemmshim:")" 1
    expect_contains "$stderr" "GEMMSHIM_POLICY='fastest'"
    expect_eq "$(record_lines)" 5
}

@test "bad GEMMSHIM_KERNELS: one message, the app runs, calls forwarded" {
    bad_value GEMMSHIM_KERNELS sgemm_simt,warp9
}

@test "bad GEMMSHIM_STRICT: one message, the app runs, calls forwarded" {
    bad_value GEMMSHIM_STRICT yes
}

@test "bad GEMMSHIM_TEST_DEVICE: one message, the app runs, calls forwarded" {
    run_shim env GEMMSHIM_TEST_DEVICE=hopper GEMMSHIM_POLICY=eligible "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "gemmshim:")" 1
    expect_contains "$stderr" "GEMMSHIM_TEST_DEVICE='hopper'"
    expect_eq "$(record_lines)" 5
}

@test "GEMMSHIM_LOG=FILE: one line per signature, a summary at exit" {
    log="$BATS_TEST_TMPDIR/gemmshim.log"
    run_shim env GEMMSHIM_LOG="$log" "$SAMPLE" 3
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "15 calls, 0 unexpected statuses"
    [ -s "$log" ]
    cat "$log"
    # nothing on stderr: the log went to the file
    expect_eq "$(count_fixed "$stderr" "gemmshim:")" 0
    content=$(cat "$log")
    # each call issued 3 times: one line each
    expect_eq "$(count_fixed "$content" "cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward")" 1
    expect_eq "$(count_fixed "$content" "cublasGemmEx TN bf16,bf16->bf16")" 1
    expect_eq "$(count_fixed "$content" "compute=32F_FAST_TF32")" 1
    expect_eq "$(count_fixed "$content" "cublasSgemmStridedBatched NT")" 1
    expect_eq "$(count_fixed "$content" "m=-1 n=16 k=16")" 1
    expect_eq "$(count_fixed "$content" " -> ")" 5
    expect_contains "$content" "real libcublas.so: $FAKE_DIR/libcublas.so.13"
    expect_contains "$content" "summary: 15 calls, 5 signatures, 0 fallbacks"
    grep -Eq '^gemmshim: +forward +15 +100\.0%' <<<"$content"
    # the summary is the last thing written
    tail -n 1 "$log" | grep -Eq '^gemmshim: +forward +15 '
    expect_eq "$(record_lines)" 15
}

@test "GEMMSHIM_LOG=stderr: the call log and summary on stderr" {
    run_shim env GEMMSHIM_LOG=stderr "$SAMPLE" 2
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" " -> ")" 5
    expect_contains "$stderr" "gemmshim: summary: 10 calls, 5 signatures, 0 fallbacks"
    expect_contains "$stderr" "(no CUDA device)"
    # stdout is the application's alone
    expect_eq "$(count_fixed "$output" "gemmshim")" 0
}

@test "GEMMSHIM_LOG to an unwritable file: said once, logged to stderr instead" {
    run_shim env GEMMSHIM_LOG="$BATS_TEST_TMPDIR/no/such/dir/log" "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "cannot open GEMMSHIM_LOG")" 1
    expect_contains "$stderr" "gemmshim: summary: 5 calls"
}

@test "precondition: under --inhibit-cache no libcublas can be opened by name" {
    run "$(ldso)" --inhibit-cache "$LOCAL" probe-none
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "GEMMSHIM_STRICT=1 without a findable cuBLAS: the application aborts, naming it" {
    run --separate-stderr env LD_PRELOAD="$GEMMSHIM_LIB" GEMMSHIM_STRICT=1 EXPECT_STATUS=1 \
        "$(ldso)" --inhibit-cache "$LOCAL" none
    echo "$output"; echo "$stderr"
    [ "$status" -ne 0 ]
    expect_contains "$stderr" "gemmshim: cannot find the real libcublas.so"
    expect_contains "$stderr" "GEMMSHIM_STRICT=1: aborting"
    # it stopped in the call: no status was printed
    expect_eq "$(count_fixed "$output" "status=")" 0
}

@test "without GEMMSHIM_STRICT: the call returns NOT_INITIALIZED, with a message" {
    run --separate-stderr env LD_PRELOAD="$GEMMSHIM_LIB" EXPECT_STATUS=1 \
        "$(ldso)" --inhibit-cache "$LOCAL" none
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "status=1"   # CUBLAS_STATUS_NOT_INITIALIZED
    expect_contains "$stderr" "gemmshim: cannot find the real libcublas.so"
    expect_contains "$stderr" "gemmshim: no real cublasSgemm_v2 to forward to"
}
