#!/usr/bin/env bats
# cublasLtMatmul: descriptors read through the (fake) cuBLASLt, routed like
# cublasGemmEx where our kernels compute the same thing, forwarded untouched
# otherwise, with the reason in the log. On a simulated device nothing is
# launched: a routed call falls back to the fake, which records it.

load test_helper

setup() {
    common_setup
    export GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=eligible GEMMSHIM_LOG=stderr
}

lt() { # scenario; one call, expect success and exactly one record line
    rm -f "$FAKE_CUBLAS_RECORD"
    run_shim env LD_LIBRARY_PATH="$FAKE_DIR" "$LT_CALLS" "$1"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(grep -c '^cublasLtMatmul ' "$FAKE_CUBLAS_RECORD")" 1 "forwarded once, untouched"
}

@test "Lt bf16 TN (nn.Linear forward) is routed to the pingpong kernel" {
    lt bf16-tn
    expect_contains "$stderr" "cublasLtMatmul TN bf16,bf16->bf16 compute=32F m=1024 n=512 k=768 batch=1 -> forward (fallback: pingpong_128x128x64 failed to launch)"
}

@test "Lt fp32 NN is routed to the SIMT kernel" {
    lt f32-nn
    grep -Eq 'cublasLtMatmul NN f32,f32->f32 compute=32F m=1024 n=512 k=768 batch=1 -> forward \(fallback: sgemm_warptile' <<<"$stderr"
}

@test "Lt with a separate C and beta == 0 is routed (C never read)" {
    lt c-not-d-zero
    expect_contains "$stderr" "m=1024 n=512 k=768 batch=1 -> forward (fallback: pingpong_128x128x64"
}

@test "a deep-K Lt call goes to the pingpong kernel split along K, and the log says how many ways" {
    lt deep-k
    expect_contains "$stderr" "cublasLtMatmul TN bf16,bf16->bf16 compute=32F m=256 n=256 k=65536 batch=1 -> forward (fallback: pingpong_128x128x64_splitk33 failed to launch)"
}

@test "Lt calls our kernels do not compute are forwarded with the reason" {
    for s in relu:"epilogue 2 not routed" vector-alpha:"vector pointer mode not routed" \
             row-major:"non-column-major layout" c-not-d-beta:"C != D with beta != 0" \
             a-scale:"scaling/amax/emulation attributes set" tf32:"TF32 compute is forwarded" \
             batched-bias:"per-batch bias not routed"; do
        lt "${s%%:*}"
        expect_contains "$stderr" "-> forward (${s#*:})"
        [[ "$stderr" != *"(fallback:"* ]]
    done
}

@test "Lt descriptors the library does not know are forwarded untouched" {
    # the forwarding suite passes made-up descriptors: the fake answers
    # NOT_INITIALIZED to the shim's attribute queries, and the call goes through
    run_shim env GEMMSHIM_KERNELS=none "$FORWARDING"
    [ "$status" -eq 0 ]
    run_shim env "$FORWARDING"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" " 0 failed"
}
