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

# The tunable classes sample_calls issues, recorded (GEMMSHIM_RECORD) with
# the extra environment given (VAR=VALUE...), sorted into $D/classes; the
# first two into $D/hex1 and $D/hex2. Fails below 2 classes.
record_tunable_classes() {
    run_shim env GEMMSHIM_RECORD="$D/app.sigs" "$@" "$SAMPLE" 2
    [ "$status" -eq 0 ] || { echo "$stderr" >&2; return 1; }
    awk -F'\t' '$1 == "sig" { for (i = 3; i <= NF; ++i) if ($i == "tunable=1") print $2 }' \
        "$D/app.sigs" | LC_ALL=C sort -u > "$D/classes"
    [ "$(wc -l < "$D/classes")" -ge 2 ]
    sed -n 1p "$D/classes" > "$D/hex1"
    sed -n 2p "$D/classes" > "$D/hex2"
}

# Decision lines for $D/classes: the first two replace their prior cuBLAS
# by sgemm_simt (1.08x), the rest keep it.
tuned_lines() {
    local i=0 h
    while read -r h; do
        if [ $i -lt 2 ]; then
            printf 'sig\t%s\tsgemm_simt\tsgemm_simt\tgain=1.0800\tlo95=1.0500\tpairs=10\tms=5.00\tprior=cublas\tvs_prior=1.0800\t# shape %d\n' "$h" $i
        else
            printf 'sig\t%s\tcublas\tas_called\tgain=1.0000\tlo95=1.0000\tpairs=10\tms=5.00\tprior=cublas\tvs_prior=1.0000\t# shape %d\n' "$h" $i
        fi
        i=$((i + 1))
    done < "$D/classes"
}
