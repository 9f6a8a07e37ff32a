#!/usr/bin/env bats
# tools/check_structure.py's shim/ folder rule, on copies of the tree with
# one fault put in each: the check must fail on it, naming the file.

load test_helper

setup() {
    : "${SHIM_SOURCE_DIR:?SHIM_SOURCE_DIR must name the source tree}"
    tree="$BATS_TEST_TMPDIR/tree"
    mkdir -p "$tree"
    cp -r "$SHIM_SOURCE_DIR"/{shim,dispatch,kernels,compat,include,tools} "$tree"/
    check="$tree/tools/check_structure.py"
}

@test "structure: the tree as it is passes, its shim/ folder order stated" {
    run python3 "$check" "$tree"
    [ "$status" -eq 0 ]
    [[ "$output" == *"0 problems"* ]]
    grep -q 'SHIM_FOLDERS = ("face", "serve", "tune", "observe", "plugins", "base")' "$check"
}

@test "structure: a C source at shim/'s root fails" {
    echo 'int gs_loose;' >"$tree/shim/gs_loose.c"
    run python3 "$check" "$tree"
    [ "$status" -eq 1 ]
    [[ "$output" == *"shim/gs_loose.c: shim/ files lie in its role folders"* ]]
}

@test "structure: base/ including a folder above it fails" {
    sed -i '1i #include "gs_serve.h"' "$tree/shim/base/gs_sink.c"
    run python3 "$check" "$tree"
    [ "$status" -eq 1 ]
    [[ "$output" == *"shim/base/gs_sink.c: includes shim/serve/gs_serve.h, a folder above it"* ]]
}

@test "structure: an exception no longer needed must come off the list" {
    sed -i '/#include "gs_timing.h"/d' "$tree/shim/base/gs_state.c"
    run python3 "$check" "$tree"
    [ "$status" -eq 1 ]
    [[ "$output" == *"shim/base/gs_state.c no longer includes gs_timing.h: take it off KNOWN_SHIM_UP"* ]]
}

@test "structure: two headers of one name in shim/ fail" {
    cp "$tree/shim/base/gs_sink.h" "$tree/shim/observe/gs_sink.h"
    run python3 "$check" "$tree"
    [ "$status" -eq 1 ]
    [[ "$output" == *"a second gs_sink.h in shim/"* ]]
}
