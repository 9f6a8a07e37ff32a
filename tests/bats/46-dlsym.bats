#!/usr/bin/env bats
# GEMMSHIM_DLSYM=1: look-ups of intercepted names on a library's own handle
# (how XLA finds cuBLASLt) are answered with the shim's entry points; every
# other look-up, and every look-up without the switch, is the system's.

load test_helper

setup() {
    common_setup
    export LD_LIBRARY_PATH="$FAKE_DIR" GEMMSHIM_LOG=stderr
}

@test "without the switch a handle look-up finds the library's own function" {
    run_shim "$DLSYM_CALLS" handle
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "handle cublasLtMatmul: fake"
    expect_contains "$output" "handle cublasLtCreate: fake"
    [[ "$stderr" != *"cublasLtMatmul"* ]] # the shim never saw the call
}

@test "GEMMSHIM_DLSYM=1 answers intercepted names with the shim's entry point, and the call is forwarded" {
    run_shim env GEMMSHIM_DLSYM=1 "$DLSYM_CALLS" handle
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "handle cublasLtMatmul: shim"
    expect_contains "$output" "handle cublasLtCreate: fake"
    expect_contains "$stderr" "cublasLtMatmul) answered with the shim's entry point (GEMMSHIM_DLSYM=1)"
    expect_contains "$stderr" "-> forward (NULL descriptor or scalar: cuBLASLt answers)"
    expect_contains "$output" "call status 0"
    expect_eq "$(grep -c '^cublasLtMatmul ' "$FAKE_CUBLAS_RECORD")" 1 "reached the real library once"
}

@test "RTLD_NEXT keeps meaning 'after the caller' through the shim's dlsym" {
    for v in 0 1; do
        run_shim env GEMMSHIM_DLSYM=$v "$DLSYM_CALLS" next
        echo "$output"; echo "$stderr"
        [ "$status" -eq 0 ]
        # after the program comes the preloaded shim; were the caller taken
        # to be the shim, the answer would be none (no cuBLAS linked)
        expect_contains "$output" "next cublasSgemm_v2: shim"
    done
}

@test "a bad GEMMSHIM_DLSYM value is reported" {
    run_shim env GEMMSHIM_DLSYM=yes "$DLSYM_CALLS" handle
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_DLSYM='yes' is not 0 or 1"
    expect_contains "$output" "handle cublasLtMatmul: fake"
}
