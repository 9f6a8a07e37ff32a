#!/usr/bin/env bats
# Embedding: link-time drop-in, the C API, the launcher, routing table files,
# and the installed package (CMake config, pkg-config) used out of tree.

load test_helper

setup() {
    common_setup
    API="$EMBED_BIN_DIR/test_api"
}

@test "link-time drop-in: libgemmshim is linked ahead of libcublas" {
    run readelf -d "$API"
    [ "$status" -eq 0 ]
    needed=$(grep NEEDED <<<"$output" | grep -n -e libgemmshim -e libcublas)
    echo "$needed"
    # libgemmshim.so.0 comes first in the search order
    [[ "$(head -1 <<<"$needed")" == *"libgemmshim.so.0"* ]]
    [[ "$needed" == *"libcublas.so.13"* ]]
}

@test "the C API, linked without LD_PRELOAD: every check of test_api passes" {
    run --separate-stderr env GEMMSHIM_TEST_DEVICE=sm_90:132 "$API"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    [[ "$output" == *" passed, 0 failed"* ]]
    # the calls reached the fake cuBLAS behind the shim (mode off, forwards, fallbacks)
    [ "$(record_lines)" -ge 5 ]
}

@test "linked: GEMMSHIM_LOG works as under LD_PRELOAD" {
    run --separate-stderr env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_LOG=stderr "$API"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "real libcublas.so: $FAKE_DIR/libcublas.so.13 (global scope)"
    expect_contains "$stderr" "cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward (sgemm_simt measured"
}

@test "under LD_PRELOAD an application finds the API with dlsym(RTLD_DEFAULT)" {
    # test_local_scope is not linked to the shim; 'api' mode probes with dlsym
    run_shim "$LOCAL" api
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "gemmshim_version found"
    run env "$LOCAL" api
    [ "$status" -eq 3 ]   # no shim: NULL, as documented
}

@test "GEMMSHIM_TABLE: a routing table file steers dispatch; a malformed one means pass-through" {
    table="$BATS_TEST_TMPDIR/table"
    printf 'gemmshim-table 1\n# made-up ratio for the test\nsgemm_simt - 90 f32 NN 256 256 256 1.25\n' > "$table"
    run_shim env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_LOG=stderr GEMMSHIM_TABLE="$table" "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (fallback: sgemm_warptile_"
    printf 'gemmshim-table 1\nsgemm_simt - 90 f32 NN 256 256 -3 1.25\n' > "$table"
    run_shim env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_LOG=stderr GEMMSHIM_TABLE="$table" "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "GEMMSHIM_TABLE: $table:2: ")" 1
    expect_contains "$stderr" "-> forward (GEMMSHIM_MODE=off)"
}

@test "an ab report becomes a routing table the shim loads" {
    table="$BATS_TEST_TMPDIR/from-ab.table"
    run python3 "$SHIM_SOURCE_DIR/bench/table_from_csv.py" --text 90 "$table" \
        "$SHIM_SOURCE_DIR/bench/results/h200-ab-report-sgemm.csv"
    echo "$output"
    [ "$status" -eq 0 ]
    expect_contains "$output" "32 entries"
    run_shim env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_LOG=stderr GEMMSHIM_TABLE="$table" "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    # 256^3 fp32 NN is in the report, measured slower than cuBLAS there
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (sgemm_simt measured 0.81x cuBLAS for this class)"
}

@test "bench_fp8 rows become FP8 entries keyed by type and scale mode; mixed scales and forwards left out" {
    csv="$BATS_TEST_TMPDIR/fp8.csv"
    table="$BATS_TEST_TMPDIR/fp8.table"
    h=gpu,suite,op,a_type,b_type,scale_a,scale_b,fast_accum,m,n,k,shim_ms,as_called_ms,best8_ms,shim_tflops,as_called_tflops,best8_tflops,shim_vs_as_called,shim_vs_best8,best8_vs_as_called,best8_index,best8_of,rel_diff,route,weight_bytes,shim_weight_tbs,as_called_weight_tbs,best8_weight_tbs,shim_host_us,as_called_host_us,tensor_ms,tensor_tflops,ceiling_vs_as_called,status,timing
    printf '%s\n' "$h" \
        "NVIDIA H200,fp8-decode,d,e4m3,e4m3,outer_vec,outer_vec,1,4096,16,14336,1,2,2,,,,1.9722,1,1,0,8,0,fp8_decode_wg_n16_ck2,0,1,1,1,1,1,,,,ok,stream" \
        "NVIDIA H200,fp8-decode,d,e4m3,e4m3,outer_vec,outer_vec,0,4096,16,14336,1,2,2,,,,2.1237,1,1,0,8,0,fp8_decode_wg_n16_ck2,0,1,1,1,1,1,,,,ok,graph" \
        "NVIDIA H200,fp8-decode,d,e4m3,e4m3,scalar,scalar,1,4096,1,14336,1,1,1,,,,0.9639,1,1,0,8,0,fp8_decode_ring_n8_ck4,0,1,1,1,1,1,,,,ok,stream" \
        "NVIDIA H200,fp8-decode,d,e4m3,e4m3,scalar,scalar,1,4096,4,14336,1,1,1,,,,0.9955,1,1,0,8,0,forward,0,1,1,1,1,1,,,,ok,stream" \
        "NVIDIA H200,fp8-decode,d,e4m3,e4m3,outer_vec,scalar,1,4096,16,14336,1,2,2,,,,1.5,1,1,0,8,0,fp8_decode_wg_n16_ck2,0,1,1,1,1,1,,,,ok,stream" \
        "NVIDIA H200,fp8,x,e4m3,e4m3,blk128x128,vec128,1,4096,8192,4096,,,,,,,,,,,,,,,,,,,,,,,skipped: cuBLASLt refuses the call as made (status 15),stream" > "$csv"
    run python3 "$SHIM_SOURCE_DIR/bench/table_from_csv.py" --text 90 "$table" "$csv"
    echo "$output"
    [ "$status" -eq 0 ]
    cat "$table"
    expect_contains "$output" "2 entries"
    # the lower of the two readings of one shape and scale mode (fast
    # accumulation is no key: the decode kernels run both alike)
    expect_contains "$(cat "$table")" "fp8 fp8_decode_wg 90 e4m3/row TN 4096 16 14336 1.972 H200"
    expect_contains "$(cat "$table")" "fp8 fp8_decode_ring 90 e4m3/tensor TN 4096 1 14336 0.963 H200"
    # nothing else: no forward, no mixed scale pair, no skipped row
    expect_eq "$(grep -c '^fp8 ' "$table")" 2
}

@test "a reading just under the routing bar is written under it, not rounded up to it" {
    # 0.9795 was once written as 0.980 and routed
    csv="$BATS_TEST_TMPDIR/near.csv"
    table="$BATS_TEST_TMPDIR/near.table"
    printf '%s\n' "gpu,suite,dtype,layout,m,n,k,ours_ms,cublas_ms,speedup,route" \
        "NVIDIA H100 80GB HBM3,decode,bf16,TN,4096,16,4096,1,1,0.9795,skinny_ring_bf16_n16_m128_ck2" \
        "NVIDIA H100 80GB HBM3,decode,bf16,TN,4096,1,4096,1,1,0.98,skinny_tn_bf16_n8_m16_ck1" \
        "NVIDIA H100 80GB HBM3,decode,bf16,TN,6144,1,4096,1,1,1.013,skinny_tn_bf16_n8_m16_ck1" > "$csv"
    run python3 "$SHIM_SOURCE_DIR/bench/table_from_csv.py" --text 90 "$table" "$csv"
    echo "$output"
    [ "$status" -eq 0 ]
    cat "$table"
    expect_contains "$(cat "$table")" "skinny - 90 bf16 TN 4096 16 4096 0.979 H100"
    expect_contains "$(cat "$table")" "skinny - 90 bf16 TN 4096 1 4096 0.980 H100"
    # and an exact reading keeps its digits (1.013 * 1000 is 1012.99... in binary)
    expect_contains "$(cat "$table")" "skinny - 90 bf16 TN 6144 1 4096 1.013 H100"
}

@test "the launcher: gemmshim run/verify/ab preload the shim in the right mode" {
    launcher="$SHIM_BUILD_DIR/gemmshim"
    run --separate-stderr env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" \
        "$launcher" run --log stderr \
        --kernels none -- "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "forward (eligible kernels disabled by GEMMSHIM_KERNELS)"
    # verify and ab: the mode reaches the shim (printenv runs under it)
    run env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$launcher" verify -- printenv GEMMSHIM_MODE GEMMSHIM_VERIFY_FAIL LD_PRELOAD
    [ "$status" -eq 0 ]
    expect_eq "$output" "verify
exit
$GEMMSHIM_LIB"
    run env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$launcher" ab --report "$BATS_TEST_TMPDIR/r" -- printenv GEMMSHIM_MODE GEMMSHIM_REPORT
    [ "$status" -eq 0 ]
    expect_eq "$output" "ab
$BATS_TEST_TMPDIR/r"
    run "$launcher" bogus
    [ "$status" -eq 2 ]
}

@test "gemmshim plot draws an ab report" {
    # matplotlib is optional (tools/ensure-deps.sh installs python3-matplotlib
    # where python3 is Debian's); without it the test says so
    if ! python3 -c 'import matplotlib' 2>/dev/null; then
        skip "matplotlib not found for $(command -v python3): pip install matplotlib, or apt-get install python3-matplotlib"
    fi
    run --separate-stderr "$SHIM_BUILD_DIR/gemmshim" plot \
        "$SHIM_SOURCE_DIR/bench/results/h200-ab-report-sgemm.csv" "$BATS_TEST_TMPDIR/ab.png"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    # the run's effect, each signature weighted by its share of the GEMM
    # time: sum(calls x cublas_us) / sum(calls x ours_us) over its 32 rows
    expect_contains "$stderr" "gemmshim plot: wrote $BATS_TEST_TMPDIR/ab.png; weighted by GEMM time: 0.911x"
    # a PNG, and not an empty one
    [ "$(head -c 8 "$BATS_TEST_TMPDIR/ab.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]
    [ "$(stat -c %s "$BATS_TEST_TMPDIR/ab.png")" -gt 10000 ]
}

@test "gemmshim table: an ab report's shapes become a bench_ab shape list" {
    report="$BATS_TEST_TMPDIR/report.csv"
    cat > "$report" <<'CSV'
signature,calls,ours_us,cublas_us,speedup,max_err,route
"cublasGemmEx TN bf16,bf16->bf16 m=4096 n=16 k=4096 batch=1",10,10.1,12.0,1.19,0.001,skinny_n16
"cublasGemmEx TN bf16,bf16->f32 m=256 n=256 k=65536 batch=1",4,30.0,30.0,1.0,0.001,pingpong_128x128x64
"cublasGemmStridedBatchedEx NN f16,f16->f16 m=128 n=64 k=64 batch=32",4,10.0,10.0,1.0,0.001,forward
"cublasSgemm_v2 NT f32,f32->f32 m=512 n=512 k=32768 batch=1",2,300.0,300.0,1.0,0,sgemm_warptile_128x128x8
"cublasGemmEx TN bf16,bf16->bf16 m=4096 n=16 k=4096 batch=1",10,10.1,12.0,1.19,0.001,skinny_n16
CSV
    run --separate-stderr python3 "$SHIM_SOURCE_DIR/bench/table_from_csv.py" --shapes "$report"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$output" "bf16 TN 4096 16 4096
bf16>f32 TN 256 256 65536
f16 NN 128 64 64
f32 NT 512 512 32768"
}

@test "gemmshim table: bad shape lists are rejected; without a GPU it says so (exit 77)" {
    launcher="$SHIM_BUILD_DIR/gemmshim"
    run "$launcher" table --shapes x   # no -o
    [ "$status" -eq 2 ]
    printf 'bf16 TN 4096 16\n' > "$BATS_TEST_TMPDIR/bad.txt"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$launcher" table \
        --shapes "$BATS_TEST_TMPDIR/bad.txt" -o "$BATS_TEST_TMPDIR/t.table" --kernels skinny
    echo "$output"; echo "$stderr"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "bad.txt:1: expected 'DTYPE LAYOUT M N K'"
    printf '# decode\nbf16 TN 4096 16 4096\nf32 NN 512 512 32768  # deep K\n' > "$BATS_TEST_TMPDIR/ok.txt"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" CUDA_VISIBLE_DEVICES="" "$launcher" \
        table --shapes "$BATS_TEST_TMPDIR/ok.txt" -o "$BATS_TEST_TMPDIR/t.table" --kernels skinny
    echo "$output"; echo "$stderr"
    [ "$status" -eq 77 ]
    expect_contains "$output$stderr" "no CUDA device"
    [ ! -e "$BATS_TEST_TMPDIR/t.table" ]
}

@test "installed package: find_package(gemmshim) and pkg-config in an out-of-tree project" {
    prefix="$BATS_TEST_TMPDIR/prefix"
    run "$CMAKE_COMMAND" --install "$SHIM_BUILD_DIR" --prefix "$prefix"
    [ "$status" -eq 0 ]
    [ -f "$prefix/include/gemmshim.h" ]
    [ -x "$prefix/bin/gemmshim" ]
    [ -x "$prefix/bin/gemmshim-bench" ]   # gemmshim table's benchmark
    [ -f "$prefix/share/gemmshim/table_from_csv.py" ]
    # the installed table tool maps kernel names through the families' own
    # lists installed beside it (kernels/<family>/kernel_names.txt)
    printf '%s\n' "gpu,suite,dtype,layout,m,n,k,ours_ms,cublas_ms,speedup,route" \
        "NVIDIA H100 80GB HBM3,x,bf16,TN,4096,4096,4096,1,1,1.01,pingpong_coop_256x128x64_splitk2" \
        "NVIDIA H100 80GB HBM3,x,f32,NN,1024,1024,1024,1,1,1.02,sgemm_warptile_128x64x8" > "$BATS_TEST_TMPDIR/k.csv"
    run python3 "$prefix/share/gemmshim/table_from_csv.py" --text 90 "$BATS_TEST_TMPDIR/k.table" "$BATS_TEST_TMPDIR/k.csv"
    echo "$output"
    [ "$status" -eq 0 ]
    expect_contains "$(cat "$BATS_TEST_TMPDIR/k.table")" "pingpong pingpong_coop_256x128x64 90 bf16 TN 4096 4096 4096 1.010 H100"
    expect_contains "$(cat "$BATS_TEST_TMPDIR/k.table")" "sgemm_simt - 90 f32 NN 1024 1024 1024 1.020 H100"
    # gemmshim report's script, and the signature reader it imports, beside it
    printf '# gemmshim tune cache\nformat 1\nvalidator gpu=H100\n' > "$BATS_TEST_TMPDIR/r.cache"
    printf 'gemmshim-signatures\tformat=1\tgpu=H100\n' > "$BATS_TEST_TMPDIR/r.sigs"
    run --separate-stderr env -C / python3 "$prefix/share/gemmshim/report_from_cache.py" \
        --cache "$BATS_TEST_TMPDIR/r.cache" --sigs "$BATS_TEST_TMPDIR/r.sigs"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "0 processes, 0 signatures, 0 calls"
    # validate --e2e's script, and what it imports, beside it
    run --separate-stderr env -C / python3 "$prefix/share/gemmshim/validate_e2e.py" \
        served --cache "$BATS_TEST_TMPDIR/r.cache" --sigs "$BATS_TEST_TMPDIR/r.sigs"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$output" 0
    [ -L "$prefix/lib/libgemmshim.so" ]
    run readelf -d "$prefix/lib/libgemmshim.so"
    expect_contains "$output" "Library soname: [libgemmshim.so.0]"

    build="$BATS_TEST_TMPDIR/example"
    run "$CMAKE_COMMAND" -S "$SHIM_SOURCE_DIR/tests/embed/example" -B "$build" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCUBLAS_LIB="$FAKE_DIR/libcublas.so.13"
    echo "$output"
    [ "$status" -eq 0 ]
    run "$CMAKE_COMMAND" --build "$build"
    echo "$output"
    [ "$status" -eq 0 ]
    run --separate-stderr env GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_POLICY=eligible "$build/example"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "example: gemmshim 0.1.0, status 0, route fallback"
    [ "$(record_lines)" -eq 1 ]   # the call went on to the (fake) cuBLAS

    # the installed launcher finds the library relative to itself
    run --separate-stderr "$prefix/bin/gemmshim" run -- printenv LD_PRELOAD
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$output" "$prefix/bin/../lib/libgemmshim.so.0"

    # pkg-config, relocatable: the flags point into this prefix, and they are
    # all a program needs: the CUDA headers (example.c includes cublas_api.h)
    # and an rpath, so it runs without LD_LIBRARY_PATH
    run env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs gemmshim
    echo "$output"
    [ "$status" -eq 0 ]
    expect_contains "$output" "-lgemmshim"
    expect_contains "$output" "-Wl,-rpath,$prefix/lib/pkgconfig/../../lib"
    pcflags=$output
    # the CUDA headers come from the flags (this machine may also have them on
    # the compiler's default path, so look for them in the -I directories)
    cudainc=""
    for f in $pcflags; do
        case $f in -I*) [ ! -f "${f#-I}/cublas_api.h" ] || cudainc=${f#-I} ;; esac
    done
    [ -n "$cudainc" ] || { echo "no -I directory with cublas_api.h in: $pcflags" >&2; false; }
    # the application's own cuBLAS (here the fake) is its business, not the package's
    # shellcheck disable=SC2086
    run cc -o "$BATS_TEST_TMPDIR/pc" "$SHIM_SOURCE_DIR/tests/embed/example/example.c" \
        $pcflags "$FAKE_DIR/libcublas.so.13" -Wl,-rpath,"$FAKE_DIR"
    echo "$output"
    [ "$status" -eq 0 ]
    [ -z "${LD_LIBRARY_PATH:-}" ]
    run --separate-stderr "$BATS_TEST_TMPDIR/pc"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "route forward"   # default policy, no device: forwarded
    # gemmshim.h alone, nothing but pkg-config's flags
    printf '%s\n' '#include <gemmshim.h>' '#include <stdio.h>' \
        'int main(void) { printf("gemmshim %s\n", gemmshim_version_string()); return 0; }' \
        > "$BATS_TEST_TMPDIR/version.c"
    # shellcheck disable=SC2086
    run cc -o "$BATS_TEST_TMPDIR/version" "$BATS_TEST_TMPDIR/version.c" $pcflags
    echo "$output"
    [ "$status" -eq 0 ]
    run --separate-stderr "$BATS_TEST_TMPDIR/version"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$output" "gemmshim 0.1.0"
}
