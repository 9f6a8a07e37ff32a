#!/usr/bin/env bats
# Many threads through the shim at once: own handles and one shared handle,
# routed (falling back: no GPU), forwarded and bad calls mixed. Nothing is
# lost or doubled: the fake records every call exactly once, and every
# status is the fake's. Under GEMMSHIM_SANITIZE=thread this is the race test.

load test_helper

setup() { common_setup; }

threads_run() {
    local own=$1 rounds=$2 shared=$3
    run_shim env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=eligible \
        GEMMSHIM_LOG="$BATS_TEST_TMPDIR/log" "$TEST_BIN_DIR/thread_calls" "$own" "$rounds" "$shared"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    local calls=$(( (own + shared) * rounds * 5 ))
    expect_contains "$output" "thread_calls: $calls calls, 0 unexpected statuses"
    # handle creation/destruction is recorded too: count the GEMMs alone
    local gemms
    gemms=$(grep -cE '^(cublasSgemm_v2|cublasGemmEx|cublasSgemmStridedBatched) ' "$FAKE_CUBLAS_RECORD")
    expect_eq "$gemms" "$calls" "every call reached cuBLAS exactly once"
}

@test "16 threads with their own handles and 4 sharing one: nothing lost" {
    threads_run 16 40 4
    # routed calls were decided (and fell back) while others were forwarded
    grep -q "fallback" "$BATS_TEST_TMPDIR/log"
    grep -q -- "-> forward" "$BATS_TEST_TMPDIR/log"
}

@test "one shared handle, 8 threads" {
    threads_run 0 40 8
}
