#!/usr/bin/env bats
# GEMMSHIM_CUBLAS naming the shim itself: refused, and the call must still
# reach the real library by the other methods (here LD_LIBRARY_PATH).
# (Regression: the shim once kept such a handle and answered every call with
# NOT_INITIALIZED.)

load test_helper

setup() { common_setup; }

@test "(d) GEMMSHIM_CUBLAS=libgemmshim.so: refused, and the call still reaches the fake" {
    run_shim env GEMMSHIM_LOG=stderr GEMMSHIM_CUBLAS="$GEMMSHIM_LIB" \
        LD_LIBRARY_PATH="$FAKE_DIR" timeout 30 "$LOCAL" noload
    echo "$output"; echo "$stderr"
    [ "$status" -ne 124 ]
    [ "$status" -lt 128 ]
    expect_contains "$stderr" "refusing $GEMMSHIM_LIB: it is the shim itself"
    [ "$status" -eq 0 ]
    [ "$(record_lines)" -eq 2 ]
    expect_contains "$stderr" "real libcublas.so: $FAKE_DIR/libcublas.so.13"
}
