#!/usr/bin/env bats
# GEMMSHIM_HOLD: a held signature is served by its prior, not by the tune
# cache's decision; entries that are not a class are named and left out.
# On the fake cuBLAS, with sample_calls on the simulated H100.

load test_helper

setup() {
    common_setup
    L="$SHIM_BUILD_DIR/gemmshim"
    REPLAY="$SHIM_BUILD_DIR/bin/gemmshim-replay"
    D="$BATS_TEST_TMPDIR"
    export GEMMSHIM_LIBRARY="$GEMMSHIM_LIB"
    # the application's calls reach the fake on the simulated H100
    export LD_LIBRARY_PATH="$FAKE_DIR" GEMMSHIM_TEST_DEVICE=sm_90:132
}

# $D/app.sigs from sample_calls; $D/c a cache this build takes (its header
# written by an online run), every tunable signature decided: the first two
# classes replace their prior cuBLAS by sgemm_simt, the rest keep it.
# $D/hex1, $D/hex2: those two classes.
make_cache() {
    run_shim env GEMMSHIM_RECORD="$D/app.sigs" "$SAMPLE" 2
    [ "$status" -eq 0 ] || { echo "$stderr" >&2; return 1; }
    awk -F'\t' '$1 == "sig" { for (i = 3; i <= NF; ++i) if ($i == "tunable=1") print $2 }' \
        "$D/app.sigs" | LC_ALL=C sort -u > "$D/classes"
    [ "$(wc -l < "$D/classes")" -ge 3 ]
    sed -n 1p "$D/classes" > "$D/hex1"
    sed -n 2p "$D/classes" > "$D/hex2"
    run_shim env GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE="$D/c" "$SAMPLE" 2
    [ "$status" -eq 0 ] && grep -q '^validator ' "$D/c"
    local i=0 h
    while read -r h; do
        if [ $i -lt 2 ]; then
            printf 'sig\t%s\tsgemm_simt\tsgemm_simt\tgain=1.0800\tlo95=1.0500\tpairs=10\tms=5.00\tprior=cublas\tvs_prior=1.0800\t# shape %d\n' "$h" $i
        else
            printf 'sig\t%s\tcublas\tas_called\tgain=1.0000\tlo95=1.0000\tpairs=10\tms=5.00\tprior=cublas\tvs_prior=1.0000\t# shape %d\n' "$h" $i
        fi
        i=$((i + 1))
    done < "$D/classes" >> "$D/c"
}

@test "GEMMSHIM_HOLD: all, or classes, served by their prior; bad entries named, the rest held" {
    make_cache
    local sgemm
    sgemm=$(awk -F'\t' '$1 == "sig" && $NF ~ /cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 / { print $2 }' "$D/app.sigs")
    grep -qx "$sgemm" <(head -2 "$D/classes")   # one of the two tuned ones
    local line="cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 batch=1 -> forward"
    local env=(env GEMMSHIM_LOG=stderr GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE="$D/c")
    # the tuned decision serves it (a simulated device: its kernel falls back)
    run_shim "${env[@]}" "$SAMPLE" 2
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "$line (fallback: "
    [ "$(count_fixed "$stderr" "held at its prior")" -eq 0 ]
    # every signature held: the prior (the table's 0.63x: forwarded)
    run_shim "${env[@]}" GEMMSHIM_HOLD=all "$SAMPLE" 2
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_HOLD: every signature held at its prior"
    expect_contains "$stderr" "$line (held at its prior: sgemm_simt measured 0.63x cuBLAS for this class)"
    [ "$(count_fixed "$stderr" "(fallback: ")" -eq 0 ]
    # the other tuned class held: this one keeps its decision
    other=$(grep -vx "$sgemm" <(head -2 "$D/classes"))
    run_shim "${env[@]}" GEMMSHIM_HOLD="$other" "$SAMPLE" 2
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_HOLD: 1 signatures held at their prior"
    expect_contains "$stderr" "$line (fallback: "
    [ "$(count_fixed "$stderr" "held at its prior")" -eq 1 ]
    # bad entries: one line naming them, the good one held; not a rejected
    # setting (nothing else changes)
    run_shim "${env[@]}" GEMMSHIM_HOLD="bogus,$sgemm,,${other:0:40}" "$SAMPLE" 2
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_HOLD: left out 3 entries that are not \"all\" or a class as the tune cache keys it"
    expect_contains "$stderr" "'bogus', '', '${other:0:16}...' (40 characters); the others are held"
    expect_contains "$stderr" "$line (held at its prior: "
    [ "$(count_fixed "$stderr" "held at its prior")" -eq 1 ]
    [ "$(count_fixed "$stderr" "passes every call to cuBLAS")" -eq 0 ]
    # without a log the bad entries are still said, on stderr
    run_shim env GEMMSHIM_HOLD=nope "$SAMPLE" 2
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_HOLD: left out 1 entry that is not \"all\""
    # tuned routing off: holding changes nothing, and says so in the log
    run_shim env GEMMSHIM_LOG=stderr GEMMSHIM_HOLD=all "$SAMPLE" 2
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "(tuned routing is off: nothing changes)"
    expect_contains "$stderr" "$line (sgemm_simt measured 0.63x cuBLAS for this class)"
    # through the launcher: the variable passes through
    run --separate-stderr env GEMMSHIM_HOLD=all GEMMSHIM_LOG=stderr "$L" run --cache "$D/c" -- "$SAMPLE" 2
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "$line (held at its prior: "
}
