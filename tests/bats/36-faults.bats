#!/usr/bin/env bats
# GEMMSHIM_TEST_FAULTS: the shim's own device calls fail on purpose, through
# the one hook point (shim/base/gs_hooks.h). Without a GPU, on a simulated H100:
# a failed device query forwards every call with that reason, a failed
# launch falls back to cuBLAS, once logged; every call reaches the fake
# exactly once with its status. (The workspace and scratch faults need a
# GPU: tests/gpu/run_gpu_test.sh faults.)

load test_helper

setup() { common_setup; }

sample_with() {
    run_shim env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=eligible GEMMSHIM_LOG=stderr \
        "$@" "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "5 calls, 0 unexpected statuses"
    expect_eq "$(record_lines)" 5 "each call reached cuBLAS once"
}

@test "no fault: routed calls are simulated, not launched (the baseline)" {
    sample_with
    expect_contains "$stderr" "failed (GEMMSHIM_TEST_DEVICE: simulated device, not launched)"
    [[ "$stderr" != *"injected"* ]]
}

@test "device: the device query fails, every call is forwarded with that reason" {
    sample_with GEMMSHIM_TEST_FAULTS=device
    expect_eq "$(count_fixed "$stderr" " -> forward (no CUDA device)")" 3 "routable calls"
    expect_eq "$(count_fixed "$stderr" "(fallback: ")" 0
    expect_contains "$stderr" " 0 fallbacks"
}

@test "launch: every launch fails, the calls fall back to cuBLAS, said once per kernel" {
    sample_with GEMMSHIM_TEST_FAULTS=launch
    n=$(count_fixed "$stderr" "launch failure injected by GEMMSHIM_TEST_FAULTS); forwarded to cuBLAS")
    [ "$n" -ge 1 ]
    # every routed call falls back; the failure is said once per kernel
    # (two calls may plan the same kernel)
    expect_eq "$(count_fixed "$stderr" "-> forward (fallback: ")" 3 "a fallback per routed call"
    kernels=$(printf '%s\n' "$stderr" | grep -o -- "-> forward (fallback: [a-z0-9_]* failed" | sort -u | wc -l)
    expect_eq "$(count_fixed "$stderr" "failed (launch failure injected")" "$kernels" \
        "said once per failed kernel"
    expect_contains "$stderr" " 3 fallbacks"
}

@test "launch, device and the others together; then a bad list is one message" {
    sample_with GEMMSHIM_TEST_FAULTS=workspace,scratch,device,launch
    expect_contains "$stderr" "-> forward (no CUDA device)"
    rm -f "$FAKE_CUBLAS_RECORD"
    run_shim env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_TEST_FAULTS=launch,disk "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "gemmshim:")" 1
    expect_contains "$stderr" "GEMMSHIM_TEST_FAULTS='launch,disk' is not a list of: device, workspace, scratch, launch"
    expect_contains "$stderr" "passes every call to cuBLAS"
    expect_eq "$(record_lines)" 5
}
