#!/usr/bin/env bats
# Plugins (include/gemmshim_plugin.h, GEMMSHIM_PLUGINS): families from
# libraries outside the tree, loaded against the recording fake cuBLAS.
# Nothing is launched here (GEMMSHIM_TEST_DEVICE): a call routed to a
# plugin "falls back", which shows it was chosen. tests/gpu runs the example
# plugin for real (run_gpu_test.sh plugin).

load test_helper

setup() {
    common_setup
    PLUG="$FAKE_DIR/libfake_plugin.so"
    export GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_LOG=stderr
}

@test "a plugin named in GEMMSHIM_KERNELS is routed under GEMMSHIM_POLICY=eligible" {
    run_shim env GEMMSHIM_PLUGINS="$PLUG" GEMMSHIM_KERNELS=fakeplug GEMMSHIM_POLICY=eligible "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "plugin 'fakeplug' 0.1 (build test-build) from $PLUG: 2 configurations"
    # fp32 NN: chosen (its first configuration), then not launched on the simulated device
    expect_contains "$stderr" "cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward (fallback: fakeplug_nn failed to launch)"
    # what it does not take is forwarded, with the reason
    expect_contains "$stderr" "cublasGemmEx TN bf16,bf16->bf16 compute=32F m=512 n=256 k=128 batch=1 -> forward (eligible kernels disabled by GEMMSHIM_KERNELS)"
    # can_implement saw the class without pointers, the sizes set
    expect_contains "$stderr" "fake_plugin: can_implement config 0 m=256 n=256 k=256 sm_90"
    [[ "$stderr" != *"POINTERS SET"* ]]
    [[ "$stderr" != *"BAD SIZES"* ]]
    expect_eq "$(record_lines)" 5   # every call ended in the (fake) cuBLAS
    # a configuration by its name, and "all" includes the plugin
    run_shim env GEMMSHIM_PLUGINS="$PLUG" GEMMSHIM_KERNELS=fakeplug_nn_wide GEMMSHIM_POLICY=eligible "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (fallback: fakeplug_nn_wide failed to launch)"
    run_shim env GEMMSHIM_PLUGINS="$PLUG" GEMMSHIM_KERNELS=all GEMMSHIM_POLICY=eligible "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "fake_plugin: can_implement config 0 m=256"
}

@test "under the default policy an unmeasured plugin is forwarded; a table routes it" {
    run_shim env GEMMSHIM_PLUGINS="$PLUG" GEMMSHIM_KERNELS=fakeplug "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (fakeplug not measured for this class)"
    table="$BATS_TEST_TMPDIR/plug.table"
    printf 'gemmshim-table 1\nfakeplug fakeplug_nn_wide 90 f32 NN 256 256 256 1.30\n' > "$table"
    run_shim env GEMMSHIM_PLUGINS="$PLUG" GEMMSHIM_TABLE="$table" "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (fallback: fakeplug_nn_wide failed to launch)"
    # without the plugin the same table does not parse: its route is unknown
    run_shim env GEMMSHIM_TABLE="$table" "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_TABLE: $table:2:"
}

@test "a library that cannot be a plugin: one line each, ignored, the rest carry on" {
    run_shim env GEMMSHIM_PLUGINS="$FAKE_DIR/libfake_plugin_abi99.so:$FAKE_DIR/libfake_plugin_noinit.so:$FAKE_DIR/libfake_plugin_shadow.so:$BATS_TEST_TMPDIR/missing.so:$PLUG" \
        GEMMSHIM_POLICY=eligible GEMMSHIM_KERNELS=fakeplug "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "libfake_plugin_abi99.so ignored: built for plugin ABI version 99, this gemmshim has version 1")" 1
    expect_eq "$(count_fixed "$stderr" "libfake_plugin_noinit.so ignored: it has no gemmshim_plugin_init (not a gemmshim plugin)")" 1
    expect_eq "$(count_fixed "$stderr" "libfake_plugin_shadow.so ignored: name 'pingpong' is taken by family 'pingpong'")" 1
    expect_eq "$(count_fixed "$stderr" "missing.so ignored: cannot load it:")" 1
    # the good one after them is in, and routed
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (fallback: fakeplug_nn failed to launch)"
    # the same problem lines go to stderr without a log
    run --separate-stderr env LD_PRELOAD="$GEMMSHIM_LIB" GEMMSHIM_TEST_DEVICE=sm_90:132 GEMMSHIM_LOG= \
        GEMMSHIM_PLUGINS="$FAKE_DIR/libfake_plugin_abi99.so" "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "ignored: built for plugin ABI version 99")" 1
    # a rejected plugin's name is not a kernel GEMMSHIM_KERNELS knows: a bad value
    run_shim env GEMMSHIM_PLUGINS="$FAKE_DIR/libfake_plugin_abi99.so" GEMMSHIM_KERNELS=fakeabi "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_KERNELS: unknown kernel 'fakeabi'"
    expect_contains "$stderr" "-> forward (GEMMSHIM_MODE=off)"
}

@test "GEMMSHIM_PLUGINS: a malformed list is a bad value; a plugin twice is refused once" {
    run_shim env GEMMSHIM_PLUGINS="$PLUG::$PLUG" "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_PLUGINS: library 2: path is empty; the shim passes every call to cuBLAS"
    run_shim env GEMMSHIM_PLUGINS= "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_PLUGINS: library 1: path is empty"
    run_shim env GEMMSHIM_PLUGINS="$PLUG:$PLUG" GEMMSHIM_POLICY=eligible GEMMSHIM_KERNELS=fakeplug "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "ignored: name 'fakeplug' is taken by family 'fakeplug'")" 1
    expect_contains "$stderr" "-> forward (fallback: fakeplug_nn failed to launch)"
}

@test "a plugin calling cuBLAS from inside a call is refused, once said; one that throws is a failure" {
    run_shim env GEMMSHIM_PLUGINS="$PLUG" GEMMSHIM_POLICY=eligible GEMMSHIM_KERNELS=fakeplug \
        FAKE_PLUGIN_REENTER=1 "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    # CUBLAS_STATUS_NOT_SUPPORTED, and the call never reached cuBLAS
    expect_contains "$stderr" "fake_plugin: cublasSgemm_v2 from inside can_implement returned 15"
    expect_eq "$(count_fixed "$stderr" "plugin 'fakeplug' called cuBLAS from inside a call: refused")" 1
    expect_eq "$(record_lines)" 5
    # its answer does not count: the call is forwarded as if it had said no
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (eligible kernels disabled by GEMMSHIM_KERNELS)"
    run_shim env GEMMSHIM_PLUGINS="$FAKE_DIR/libfake_plugin_throw.so" GEMMSHIM_POLICY=eligible \
        GEMMSHIM_KERNELS=fakethrow "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(count_fixed "$stderr" "plugin 'fakethrow' let a C++ exception escape")" 1
    expect_contains "$stderr" "m=256 n=256 k=256 batch=1 -> forward (eligible kernels disabled by GEMMSHIM_KERNELS)"
}

@test "the example plugin builds out of tree against the installed package and loads" {
    prefix="$BATS_TEST_TMPDIR/prefix"
    run "$CMAKE_COMMAND" --install "$SHIM_BUILD_DIR" --prefix "$prefix"
    [ "$status" -eq 0 ]
    [ -f "$prefix/include/gemmshim_plugin.h" ]
    build="$BATS_TEST_TMPDIR/plugin"
    run "$CMAKE_COMMAND" -S "$SHIM_SOURCE_DIR/examples/plugin_sgemm" -B "$build" \
        -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLE_CUDA_ARCHITECTURES=90
    echo "$output"
    [ "$status" -eq 0 ]
    run "$CMAKE_COMMAND" --build "$build"
    echo "$output"
    [ "$status" -eq 0 ]
    lib="$build/libgemmshim_example_sgemm.so"
    # it exports its entry point and nothing of the shim's
    run nm -D --defined-only "$lib"
    expect_contains "$output" " T gemmshim_plugin_init"
    [[ "$output" != *cublas* ]]
    run --separate-stderr env LD_PRELOAD="$prefix/lib/libgemmshim.so" GEMMSHIM_PLUGINS="$lib" \
        GEMMSHIM_POLICY=eligible GEMMSHIM_KERNELS=example_sgemm "$SAMPLE"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "plugin 'example_sgemm' 1.0.0 (build "
    expect_contains "$stderr" "cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward (fallback: example_sgemm_16x16 failed to launch)"
    expect_contains "$stderr" "cublasSgemmStridedBatched NT f32,f32->f32 compute=32F m=64 n=64 k=32 batch=4 -> forward (fallback: example_sgemm_16x16"
}
