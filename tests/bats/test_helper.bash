# Shared setup for the BATS suites. CMake (tests/bats/CMakeLists.txt) sets:
#   GEMMSHIM_LIB   path of libgemmshim.so
#   FAKE_DIR       directory of the fake libcublas.so.13 / libcublasLt.so.13
#   TEST_BIN_DIR   directory of test_forwarding, test_local_scope, sample_calls
# Every test starts from a clean environment: no GEMMSHIM_* or FAKE_*
# variables from the caller, a fresh record file.

bats_require_minimum_version 1.5.0

: "${GEMMSHIM_LIB:?GEMMSHIM_LIB must name libgemmshim.so}"
: "${FAKE_DIR:?FAKE_DIR must name the fake cuBLAS directory}"
: "${TEST_BIN_DIR:?TEST_BIN_DIR must name the test programs directory}"

common_setup() {
    local v
    for v in $(compgen -e | grep -E '^(GEMMSHIM_[A-Z_]+|FAKE_CUBLAS_[A-Z_]+|EXPECT_STATUS)$' \
               | grep -vx GEMMSHIM_LIB); do
        unset "$v"
    done
    unset LD_PRELOAD LD_LIBRARY_PATH
    export FAKE_DIR
    export FAKE_CUBLAS_RECORD="$BATS_TEST_TMPDIR/record"
    rm -f "$FAKE_CUBLAS_RECORD"
    SAMPLE="$TEST_BIN_DIR/sample_calls"
    LT_CALLS="$TEST_BIN_DIR/lt_calls"
    DLSYM_CALLS="$TEST_BIN_DIR/dlsym_calls"
    LOCAL="$TEST_BIN_DIR/test_local_scope"
    FORWARDING="$TEST_BIN_DIR/test_forwarding"
    [ -f "$GEMMSHIM_LIB" ] || { echo "missing $GEMMSHIM_LIB" >&2; return 1; }
    [ -x "$SAMPLE" ] && [ -x "$LOCAL" ] && [ -x "$FORWARDING" ] ||
        { echo "test programs missing in $TEST_BIN_DIR" >&2; return 1; }
}

# Run a command with the shim preloaded (stdout in $output, stderr in $stderr).
run_shim() {
    run --separate-stderr env LD_PRELOAD="$GEMMSHIM_LIB" "$@"
}

# The program interpreter, to run a program with --inhibit-cache: then only
# LD_LIBRARY_PATH, RUNPATH and the default directories are searched, never the
# ld.so.cache entries (where this machine's real libcublas.so.13 is listed).
ldso() {
    readelf -l "$LOCAL" | sed -n 's/.*interpreter: \(.*\)\]/\1/p'
}

# Lines the fake recorded (calls that reached "cuBLAS").
record_lines() {
    if [ -f "$FAKE_CUBLAS_RECORD" ]; then wc -l < "$FAKE_CUBLAS_RECORD"; else echo 0; fi
}

# Number of lines of $1 (text) matching the fixed string $2.
count_fixed() {
    local n
    n=$(printf '%s\n' "$1" | grep -cF -- "$2") || true
    echo "${n:-0}"
}

# Fail with a message showing what was checked.
expect_contains() {
    if [[ "$1" != *"$2"* ]]; then
        printf 'expected to find: %s\nin:\n%s\n' "$2" "$1" >&2
        return 1
    fi
}

expect_eq() {
    if [ "$1" != "$2" ]; then
        printf 'expected %s == %s (%s)\n' "$1" "$2" "${3:-}" >&2
        return 1
    fi
}
