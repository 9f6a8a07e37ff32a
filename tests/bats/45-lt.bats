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
             a-scale:"scale modes A=SCALAR_32F" tf32:"TF32 compute is forwarded" \
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

@test "FP8 Lt calls are forwarded with every reason, in order" {
    lt fp8-tensorwise
    # what the call is, then why no kernel of ours took it (dispatch saw it)
    expect_contains "$stderr" "cublasLtMatmul TN e4m3,e4m3->bf16 compute=32F m=1024 n=512 k=768 batch=1 scale_A=SCALAR_32F scale_B=SCALAR_32F fast_accum -> forward (fp8 operands; scale modes A=SCALAR_32F B=SCALAR_32F; fast accumulation on; no FP8 kernel takes it (device sm_90; decode kernels: n <= 64; the FP8 tiles: GEMMSHIM_FP8_TILES=1))"
    lt fp8-rowwise
    expect_contains "$stderr" "cublasLtMatmul TN e5m2,e4m3->bf16 compute=32F m=1024 n=512 k=768 batch=1 scale_A=OUTER_VEC_32F scale_B=OUTER_VEC_32F -> forward (fp8 operands; A and B types differ; scale modes A=OUTER_VEC_32F B=OUTER_VEC_32F; no FP8 kernel takes it (device sm_90; decode kernels: n <= 64; the FP8 tiles: GEMMSHIM_FP8_TILES=1))"
    [[ "$stderr" != *"(fallback:"* ]]
}

@test "FP8 rowwise decode goes to the FP8 decode kernel by default; a scale vector cuBLASLt refuses is forwarded" {
    # no switch, no tuning: the table routes it (the simulated device
    # launches nothing: the call falls back to cuBLASLt, untouched)
    lt fp8-decode-rowwise
    expect_contains "$stderr" "cublasLtMatmul TN e4m3,e4m3->bf16 compute=32F m=4096 n=16 k=14336 batch=1 scale_A=OUTER_VEC_32F scale_B=OUTER_VEC_32F fast_accum -> forward (fallback: fp8_decode_wg_n16_ck2 failed to launch)"
    # A's scale vector 4 bytes off 16: cuBLASLt answers it (status 15 on an
    # H200), so no kernel of ours does, nor any of its algorithms under tuning
    for tune in off online; do
        GEMMSHIM_TUNE=$tune GEMMSHIM_TUNE_CACHE="$BATS_TEST_TMPDIR/u.cache" lt fp8-decode-unaligned
        expect_contains "$stderr" "-> forward (fp8 operands; A scale pointer not 16-byte aligned; scale modes A=OUTER_VEC_32F B=OUTER_VEC_32F; fast accumulation on)"
        [[ "$stderr" != *"(fallback:"* ]]
    done
}

@test "an FP8 Lt call reaches cuBLASLt unchanged, and is recorded as its own signature with every reason" {
    # the call without the shim: the descriptor as the application built it
    rm -f "$FAKE_CUBLAS_RECORD"
    run env LD_LIBRARY_PATH="$FAKE_DIR" "$LT_CALLS" fp8-out
    [ "$status" -eq 0 ]
    direct=$(grep -o ' computeDesc\.attrs=[^ ]*' "$FAKE_CUBLAS_RECORD")
    # scales of A, B and D, AMAX_D and FAST_ACCUM as set (made-up addresses)
    for attr in 17:0000100700000000 18:0000200700000000 20:0000400700000000 \
                21:0000600700000000 25:01; do
        expect_contains "$direct" ",$attr," "$attr"
    done
    export GEMMSHIM_RECORD="$BATS_TEST_TMPDIR/fp8.sigs"
    lt fp8-out
    why="fp8 operands; C and D types differ; scale modes A=SCALAR_32F B=SCALAR_32F; D scale set; AMAX_D set; fast accumulation on"
    expect_contains "$stderr" "cublasLtMatmul TN e4m3,e4m3->e4m3 compute=32F m=1024 n=512 k=768 batch=1 scale_A=SCALAR_32F scale_B=SCALAR_32F scale_D=SCALAR_32F c_type=bf16 amax_d fast_accum -> forward ($why)"
    [[ "$stderr" != *"(fallback:"* ]]
    # the arguments the application passed, byte for byte, and the descriptor unchanged
    rec=$(grep '^cublasLtMatmul ' "$FAKE_CUBLAS_RECORD")
    args=$(sed -n 's/^fp8-out: status 0 //p' <<<"$output")
    [ -n "$args" ]
    for a in $args; do
        expect_contains "$rec" " $a " "$a"
    done
    expect_eq "$(grep -o ' computeDesc\.attrs=[^ ]*' <<<"$rec")" "$direct" "descriptor attributes"
    # recorded: not tunable, every reason, the contract in its shape
    cat "$GEMMSHIM_RECORD"
    sig=$(grep $'^sig\t' "$GEMMSHIM_RECORD")
    expect_eq "$(grep -c . <<<"$sig")" 1 "one signature"
    expect_contains "$sig" $'\tcalls=1\t'
    expect_contains "$sig" $'\ttunable=0\twhy='"$why"$'\t# cublasLtMatmul TN e4m3,e4m3->e4m3 compute=32F m=1024 n=512 k=768 batch=1 lda=768 ldb=768 ldc=1024 scale_A=SCALAR_32F scale_B=SCALAR_32F scale_D=SCALAR_32F c_type=bf16 amax_d fast_accum'
}

@test "FP8 Lt calls are signatures of their own: apart from bf16 and from each other, by class" {
    export GEMMSHIM_RECORD="$BATS_TEST_TMPDIR/all.sigs"
    for s in bf16-tn fp8-tensorwise fp8-rowwise fp8-out; do
        lt "$s"
    done
    cat "$GEMMSHIM_RECORD"
    sigs=$(grep $'^sig\t' "$GEMMSHIM_RECORD")
    expect_eq "$(grep -c . <<<"$sigs")" 4 "four signatures"
    # four distinct classes (the hex), not only four reasons
    expect_eq "$(cut -f2 <<<"$sigs" | sort -u | grep -c .)" 4 "four classes"
    # the FP8 subset cuBLASLt's algorithms take is tunable (offline tuning
    # rebuilds it); the FP8 output with its D scale and AMAX_D is not
    expect_eq "$(grep -c $'\ttunable=0\twhy=fp8 operands' <<<"$sigs")" 1 "fp8-out, not tunable"
    expect_eq "$(grep -c $'\ttunable=1\t# cublasLtMatmul TN e[45]m[23],e4m3->bf16 ' <<<"$sigs")" 2 \
        "tensorwise and rowwise, tunable"
    expect_contains "$sigs" $'\ttunable=1\t# cublasLtMatmul TN bf16,bf16->bf16 '
}

@test "FP8 Lt calls with tuning off (unset or off): forwarded as before" {
    for tune in unset off; do
        if [ $tune = off ]; then export GEMMSHIM_TUNE=off; else unset GEMMSHIM_TUNE; fi
        for s in fp8-tensorwise fp8-rowwise fp8-out; do
            lt "$s"
            expect_contains "$stderr" "-> forward (fp8 operands;"
            [[ "$stderr" != *"(fallback:"* && "$stderr" != *"tuned"* ]]
        done
    done
}

@test "FP8 Lt calls under tuning: the subset goes on to dispatch, the rest is forwarded with every reason" {
    export GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE="$BATS_TEST_TMPDIR/fp8.cache"
    # the simulated device tunes nothing: the prior (cuBLAS as called) serves it
    for s in fp8-tensorwise fp8-rowwise; do
        lt "$s"
        expect_contains "$stderr" "; no FP8 kernel takes it (device sm_90; decode kernels: n <= 64; the FP8 tiles: GEMMSHIM_FP8_TILES=1))"
    done
    # beyond the subset: the reasons as without tuning, and what keeps it from the algorithms
    lt fp8-out
    expect_contains "$stderr" "-> forward (fp8 operands; C and D types differ; scale modes A=SCALAR_32F B=SCALAR_32F; D scale set; AMAX_D set; fast accumulation on; D neither bf16, fp16 nor fp32)"
    [[ "$stderr" != *"(fallback:"* ]]
}

@test "the tune cache's validator names the FP8 tiles only where GEMMSHIM_FP8_TILES=1 lets them serve" {
    # allowed either way (GEMMSHIM_KERNELS=all), the tiles take calls only
    # when opted in (the decode kernels always): a cache decided without
    # them is not one decided with them
    D=$BATS_TEST_TMPDIR
    GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE="$D/off.cache" lt bf16-tn
    grep '^validator ' "$D/off.cache"
    grep '^validator ' "$D/off.cache" | grep -q ' kernels=skinny,pingpong,sgemm_simt,fp8_decode_ring,fp8_decode_wg,cublaslt '
    GEMMSHIM_FP8_TILES=1 GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE="$D/on.cache" lt bf16-tn
    grep '^validator ' "$D/on.cache"
    grep '^validator ' "$D/on.cache" | grep -q ' kernels=skinny,pingpong,sgemm_simt,fp8,cublaslt '
}

@test "a tuned decision serves the FP8 subset with cuBLASLt's algorithm, under tuning only" {
    D=$BATS_TEST_TMPDIR
    export GEMMSHIM_RECORD="$D/fp8.sigs"
    lt fp8-tensorwise
    unset GEMMSHIM_RECORD
    hex=$(awk -F'\t' '$1 == "sig" { print $2 }' "$D/fp8.sigs")
    [ -n "$hex" ]
    # the cache's header, as this machine writes it; then a decision for
    # the class: the fake heuristic's first algorithm
    GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE="$D/fp8.cache" lt bf16-tn
    grep -q '^validator ' "$D/fp8.cache"
    printf 'sig\t%s\tcublaslt\talgo=10,tile=20,stages=30,splitk=1,reduction=0,swizzle=0,custom=0,inner=0,cluster=0\tgain=1.2000\tlo95=1.1000\tpairs=10\tms=1.000\tprior=cublas\tvs_prior=1.2000\t# test\n' \
        "$hex" >> "$D/fp8.cache"
    # routed to the family (which the simulated device does not launch:
    # the call falls back to cuBLASLt, untouched)
    GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE="$D/fp8.cache" lt fp8-tensorwise
    expect_contains "$stderr" "cublasLtMatmul TN e4m3,e4m3->bf16 compute=32F m=1024 n=512 k=768 batch=1 scale_A=SCALAR_32F scale_B=SCALAR_32F fast_accum -> forward (fallback: cublaslt_h0 failed to launch)"
    # the other FP8 class has no decision: the prior; beyond the subset: the reasons
    GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE="$D/fp8.cache" lt fp8-rowwise
    expect_contains "$stderr" "; no FP8 kernel takes it (device sm_90; decode kernels: n <= 64; the FP8 tiles: GEMMSHIM_FP8_TILES=1))"
    GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE="$D/fp8.cache" lt fp8-out
    expect_contains "$stderr" "-> forward (fp8 operands; C and D types differ;"
    # no tuning: as before, the cache unread
    GEMMSHIM_TUNE_CACHE="$D/fp8.cache" lt fp8-tensorwise
    expect_contains "$stderr" "-> forward (fp8 operands; scale modes A=SCALAR_32F B=SCALAR_32F; fast accumulation on; no FP8 kernel takes it (device sm_90; decode kernels: n <= 64; the FP8 tiles: GEMMSHIM_FP8_TILES=1))"
}
