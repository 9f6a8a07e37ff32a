#!/usr/bin/env bats
# Forwarding to the real cuBLAS (here the recording fake), wherever it lives.

load test_helper

setup() { common_setup; }

@test "(a) every entry point forwards its arguments untouched (status 0)" {
    run_shim env GEMMSHIM_KERNELS=none "$FORWARDING"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" " 0 failed"
    [ "$(record_lines)" -gt 0 ]
}

@test "(a) every entry point forwards its arguments untouched (status 13)" {
    run_shim env GEMMSHIM_KERNELS=none FAKE_CUBLAS_RETURN=13 "$FORWARDING"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" " 0 failed"
}

@test "(a) the forwarding test fails without the shim (it does test the shim)" {
    run --separate-stderr "$FORWARDING"
    [ "$status" -ne 0 ]
    expect_contains "$stderr" "libgemmshim"
}

@test "(b) a cuBLAS loaded in a local scope (RTLD_LOCAL, as Python does) is found" {
    run_shim env GEMMSHIM_LOG=stderr "$LOCAL" local
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "real libcublas.so: $FAKE_DIR/libcublas.so.13 (loaded in a local scope)"
    expect_contains "$stderr" "real libcublasLt.so: $FAKE_DIR/libcublasLt.so.13 (loaded in a local scope)"
    expect_eq "$(record_lines)" 3 "Sgemm, GemmEx, LtMatmul recorded"
}

@test "(c) a cuBLAS not loaded yet is opened by the shim (libcublas.so.13)" {
    run_shim env GEMMSHIM_LOG=stderr LD_LIBRARY_PATH="$FAKE_DIR" "$LOCAL" noload
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "real libcublas.so: $FAKE_DIR/libcublas.so.13 (opened by the shim)"
    expect_eq "$(record_lines)" 2
}

@test "(d) GEMMSHIM_CUBLAS names the library to use" {
    run_shim env GEMMSHIM_LOG=stderr GEMMSHIM_CUBLAS="$FAKE_DIR/libcublas.so.13" "$LOCAL" noload
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "real libcublas.so: $FAKE_DIR/libcublas.so.13 (environment)"
    expect_eq "$(record_lines)" 2
}

@test "(d) GEMMSHIM_CUBLAS pointing at libgemmshim.so is refused, without recursion" {
    run_shim env GEMMSHIM_CUBLAS="$GEMMSHIM_LIB" LD_LIBRARY_PATH="$FAKE_DIR" \
        timeout 30 "$LOCAL" noload
    echo "$output"; echo "$stderr"
    # terminated by itself: neither the timeout (124) nor a signal such as
    # the SIGSEGV of a stack overflow (>= 128)
    [ "$status" -ne 124 ]
    [ "$status" -lt 128 ]
    expect_contains "$stderr" "gemmshim: refusing $GEMMSHIM_LIB: it is the shim itself"
}

@test "(e) the real library's status is passed through (13)" {
    run_shim env FAKE_CUBLAS_RETURN=13 "$LOCAL" local
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(record_lines)" 3
    run_shim env FAKE_CUBLAS_RETURN=13 "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "5 calls, 0 unexpected statuses"
    expect_eq "$(record_lines)" 8
}

@test "(d) a GEMMSHIM_CUBLAS that cannot be used is a bad value: one line, every call passes through" {
    run_shim env GEMMSHIM_CUBLAS=/nonexistent/libcublas.so.13 LD_LIBRARY_PATH="$FAKE_DIR" \
        GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=eligible GEMMSHIM_LOG=stderr "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "5 calls, 0 unexpected statuses"
    expect_eq "$(count_fixed "$stderr" "refusing /nonexistent/libcublas.so.13")" 1
    expect_contains "$stderr" "(named by GEMMSHIM_CUBLAS); the shim passes every call to the libcublas.so it finds itself"
    # forwarded, to the library the search found: nothing routed, no fallback
    expect_eq "$(count_fixed "$stderr" " -> forward (GEMMSHIM_MODE=off)")" 5
    expect_eq "$(count_fixed "$stderr" "(fallback: ")" 0
    expect_eq "$(record_lines)" 5
}
