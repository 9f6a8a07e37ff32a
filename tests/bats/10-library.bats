#!/usr/bin/env bats
# The shared library itself: what it depends on and what it exports.

load test_helper

setup() { common_setup; }

@test "libgemmshim.so has no DT_NEEDED on libcublas or libcublasLt" {
    run readelf -d "$GEMMSHIM_LIB"
    [ "$status" -eq 0 ]
    expect_contains "$output" "(NEEDED)"          # the listing is real
    ! grep -qi 'NEEDED.*cublas' <<<"$output"
}

@test "libgemmshim.so references no cuBLAS symbol it would need at load time" {
    run nm -D --undefined-only "$GEMMSHIM_LIB"
    [ "$status" -eq 0 ]
    ! grep -qi cublas <<<"$output"
}

@test "libgemmshim.so exports exactly the intercepted cuBLAS entry points, the C API and dlsym" {
    # The specification: change it only together with the entry-point list
    # (shim/base/gs_entry_points.h) or the C API (include/gemmshim.h).
    expected="gemmshim_get_kernels
gemmshim_get_mode
gemmshim_get_resources
gemmshim_get_stats
gemmshim_hold_prior
gemmshim_last_route
gemmshim_last_tuning
gemmshim_load_table
gemmshim_reset_stats
gemmshim_set_kernels
gemmshim_set_mode
gemmshim_version
gemmshim_version_string
gemmshim_write_report
cublasGemmBatchedEx
cublasGemmBatchedEx_64
cublasGemmEx
cublasGemmEx_64
cublasGemmStridedBatchedEx
cublasGemmStridedBatchedEx_64
cublasLtMatmul
cublasSgemmStridedBatched
cublasSgemmStridedBatched_64
cublasSgemm_v2
cublasSgemm_v2_64
dlsym"
    run nm -D --defined-only "$GEMMSHIM_LIB"
    [ "$status" -eq 0 ]
    actual=$(awk 'NF >= 3 { print $3 }' <<<"$output" | sed 's/@.*//' | LC_ALL=C sort -u)
    expected=$(LC_ALL=C sort <<<"$expected")
    if [ "$actual" != "$expected" ]; then
        diff <(echo "$expected") <(echo "$actual") >&2 || true
        false
    fi
    # ... as functions (type T), all of them
    expect_eq "$(awk '$2 == "T"' <<<"$output" | wc -l)" 26 "exported functions"
}
