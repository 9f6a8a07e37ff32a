#!/usr/bin/env bats
# tools/gs_build.sh, what run.sh and test.sh share: timed phases, and the
# configuration guards of GEMMSHIM_KERNELS_FROM and GEMMSHIM_GPU_ARCHS; the
# fuzz runner's exit codes (a crash fails, only its own reason skips).

load test_helper

setup() {
    : "${SHIM_SOURCE_DIR:?SHIM_SOURCE_DIR must name the source tree}"
}

@test "phases: each phase printed with its start time, all of them at the end" {
    run bash -c ". '$SHIM_SOURCE_DIR/tools/gs_build.sh'; gs_phase first; sleep 1; gs_phase second; gs_phases_done"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" =~ ^==\ \[0:0[01]\]\ first$ ]]
    [[ "${lines[1]}" =~ ^==\ \[0:0[12]\]\ second$ ]]
    [ "${lines[2]}" = "== phases (m:ss)" ]
    [[ "${lines[3]}" =~ ^\ +0:0[12]\ \ first$ ]]
    [[ "${lines[4]}" =~ ^\ +0:0[01]\ \ second$ ]]
    [[ "${lines[5]}" =~ ^\ +0:0[123]\ \ in\ all$ ]]
}

@test "configure: run.sh and test.sh configure the Release build through one function" {
    grep -q '^gs_configure_release "\$build"' "$SHIM_SOURCE_DIR/run.sh"
    grep -q 'gs_configure_release "\$dir"' "$SHIM_SOURCE_DIR/test.sh"
    # and the sanitizer suites link the Release build's kernels
    grep -q 'GEMMSHIM_KERNELS_FROM=\$kernels' "$SHIM_SOURCE_DIR/test.sh"
}

# A configure of the project, its output in $output with CMake's line
# wrapping undone: the guards fail at configure time, before anything compiles.
configure() {
    run --separate-stderr cmake -S "$SHIM_SOURCE_DIR" -B "$BATS_TEST_TMPDIR/b" \
        -DCMAKE_BUILD_TYPE=Release -DGEMMSHIM_BUILD_TESTS=OFF -DGEMMSHIM_BUILD_BENCH=OFF \
        -DGEMMSHIM_BUILD_EXAMPLES=OFF "$@"
    output=$(printf '%s %s' "$output" "$stderr" | tr -s ' \n' '  ')
}

@test "configure: GEMMSHIM_KERNELS_FROM without kernel objects is refused" {
    mkdir -p "$BATS_TEST_TMPDIR/empty"
    configure "-DGEMMSHIM_KERNELS_FROM=$BATS_TEST_TMPDIR/empty"
    [ "$status" -ne 0 ]
    [[ "$output" == *"no gs_kernel_objects.cmake there"* ]]
}

@test "configure: GEMMSHIM_KERNELS_FROM with other kernel settings is refused" {
    [ -f "$SHIM_BUILD_DIR/gs_kernel_objects.cmake" ] ||
        skip "this build links another's kernels (GEMMSHIM_KERNELS_FROM): no objects of its own to offer"
    configure "-DGEMMSHIM_KERNELS_FROM=$SHIM_BUILD_DIR" "-DGEMMSHIM_GPU_ARCHS=90;90a"
    [ "$status" -ne 0 ]
    [[ "$output" == *"its kernels are built with"* ]]
}

@test "configure: GEMMSHIM_GPU_ARCHS without 90a or with an unknown architecture is refused" {
    configure "-DGEMMSHIM_GPU_ARCHS=80;90"
    [ "$status" -ne 0 ]
    [[ "$output" == *"name 90a"* ]]
    configure "-DGEMMSHIM_GPU_ARCHS=75;90a"
    [ "$status" -ne 0 ]
    [[ "$output" == *"'75' is not one of 80, 90, 90a"* ]]
}

@test "fuzz runner: an input that crashes fails the test (libFuzzer's 77 is not CTest's skip)" {
    mkdir -p "$BATS_TEST_TMPDIR/corpus"
    echo seed >"$BATS_TEST_TMPDIR/corpus/a"
    # a stand-in fuzzer that fails the way libFuzzer does by default
    printf '#!/bin/sh\necho "ERROR: libFuzzer: deadly signal"\nexit 77\n' >"$BATS_TEST_TMPDIR/fuzz_x"
    chmod +x "$BATS_TEST_TMPDIR/fuzz_x"
    run bash "$SHIM_SOURCE_DIR/tests/fuzz/run_fuzz.sh" replay "$BATS_TEST_TMPDIR/fuzz_x" \
        "$BATS_TEST_TMPDIR/corpus" "$BATS_TEST_TMPDIR/work" 1 /nonexistent ""
    [ "$status" -eq 1 ]
    run bash "$SHIM_SOURCE_DIR/tests/fuzz/run_fuzz.sh" fuzz "$BATS_TEST_TMPDIR/fuzz_x" \
        "$BATS_TEST_TMPDIR/corpus" "$BATS_TEST_TMPDIR/work" 1 /nonexistent ""
    [ "$status" -eq 1 ]
    # a skip is the script's own word, with its reason
    run bash "$SHIM_SOURCE_DIR/tests/fuzz/run_fuzz.sh" replay "$BATS_TEST_TMPDIR/fuzz_x" \
        "$BATS_TEST_TMPDIR/corpus" "$BATS_TEST_TMPDIR/work" 1 /nonexistent "no clang"
    [ "$status" -eq 77 ]
    [[ "$output" == *"SKIP fuzz_x: no clang"* ]]
}
