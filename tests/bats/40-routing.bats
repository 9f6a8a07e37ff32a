#!/usr/bin/env bats
# Routing decisions on a pretended device (GEMMSHIM_TEST_DEVICE): without a
# GPU a routed kernel fails to launch and the call falls back to cuBLAS.

load test_helper

setup() {
    common_setup
    export GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=eligible GEMMSHIM_LOG=stderr
}

@test "fp32 Sgemm goes to sgemm_simt; on a simulated device it is not launched and falls back to cuBLAS" {
    run_shim "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    grep -Eq 'gemmshim: cublasSgemm_v2 on sgemm_warptile_[0-9x]+ failed \(GEMMSHIM_TEST_DEVICE: simulated device, not launched\); forwarded to cuBLAS' <<<"$stderr"
    grep -Eq 'cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward \(fallback: sgemm_warptile_[0-9x]+ failed to launch\)' <<<"$stderr"
    # it reached the fake: the record holds cublasSgemm_v2 with m = n = k = 256
    grep -q '^cublasSgemm_v2 .* m=00010000 n=00010000 k=00010000 ' "$FAKE_CUBLAS_RECORD"
    expect_eq "$(record_lines)" 5
}

@test "strided batched fp32 falls back too; the summary counts the fallbacks" {
    run_shim "$SAMPLE" 2
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    grep -Eq 'cublasSgemmStridedBatched NT f32,f32->f32 compute=32F m=64 n=64 k=32 batch=4 -> forward \(fallback: sgemm_warptile' <<<"$stderr"
    # Sgemm, bf16 GemmEx (pingpong) and the strided batch, twice each
    expect_contains "$stderr" "summary: 10 calls, 5 signatures, 6 fallbacks"
    # the fallback message is said once per kernel and error, not per call
    expect_eq "$(count_fixed "$stderr" "cublasSgemm_v2 on sgemm_warptile")" 1
    expect_eq "$(record_lines)" 10
}

@test "TF32 compute is forwarded, with the reason" {
    run_shim "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "cublasGemmEx NN f32,f32->f32 compute=32F_FAST_TF32 m=128 n=128 k=128 batch=1 -> forward (TF32 compute is forwarded)"
    grep -q '^cublasGemmEx .* m=80000000 n=80000000 k=80000000 .*computeType=4d000000 ' "$FAKE_CUBLAS_RECORD"
}

@test "bf16 GemmEx: pingpong on sm_90 (falls back), no kernel on sm_80" {
    run_shim "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    grep -Eq 'cublasGemmEx TN bf16,bf16->bf16 compute=32F m=512 n=256 k=128 batch=1 -> forward \(fallback: pingpong_128x128x64 failed to launch\)' <<<"$stderr"

    run_shim env GEMMSHIM_TEST_DEVICE=sm_80:108 "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "cublasGemmEx TN bf16,bf16->bf16 compute=32F m=512 n=256 k=128 batch=1 -> forward (no kernel implements it (device sm_80"
    ! grep -q "pingpong" <<<"$stderr"
}

@test "alpha 0 on a BLAS GEMM is forwarded: cuBLAS reads neither A nor B, some of our kernels compute 0 x the sum" {
    run_shim env SAMPLE_ALPHA_ZERO=1 "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward (alpha 0: cuBLAS reads neither A nor B)"
    expect_contains "$stderr" "cublasGemmEx TN bf16,bf16->bf16 compute=32F m=512 n=256 k=128 batch=1 -> forward (alpha 0: cuBLAS reads neither A nor B)"
    ! grep -q "fallback" <<<"$stderr"
    expect_eq "$(record_lines)" 5
}

@test "an invalid call is forwarded and returns cuBLAS's status" {
    run_shim env FAKE_CUBLAS_RETURN=7 "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]   # the sample checked: every call returned 7
    expect_contains "$stderr" "cublasSgemm_v2 NN f32,f32->f32 compute=32F m=-1 n=16 k=16 batch=1 -> forward (invalid arguments: cuBLAS answers)"
    grep -q '^cublasSgemm_v2 .* m=ffffffff n=10000000 k=10000000 ' "$FAKE_CUBLAS_RECORD"
}

@test "default policy (table): unmeasured and measured-slower classes are forwarded, with the reason" {
    run_shim env GEMMSHIM_POLICY=table "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    # 64x64x32 batch 4: no entry in the tuning table near it
    expect_contains "$stderr" "cublasSgemmStridedBatched NT f32,f32->f32 compute=32F m=64 n=64 k=32 batch=4 -> forward (sgemm_simt not measured for this class)"
    # 256^3: measured on sm_90, slower than cuBLAS (the table's number is data, not pinned here)
    expect_contains "$stderr" "cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward (sgemm_simt measured 0."
    expect_eq "$(count_fixed "$stderr" "failed to launch")" 0
    expect_eq "$(record_lines)" 5
}

@test "GEMMSHIM_KERNELS=none: nothing is tried" {
    run_shim env GEMMSHIM_KERNELS=none "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (eligible kernels disabled by GEMMSHIM_KERNELS)"
    expect_eq "$(count_fixed "$stderr" "failed to launch")" 0
    expect_contains "$stderr" "summary: 5 calls, 5 signatures, 0 fallbacks"
}
