#!/usr/bin/env bats
# gemmshim validate --e2e: after the ab step, the application run in turn
# with every decision held at its prior (GEMMSHIM_HOLD=all) and from the
# cache, its own metric compared; a cache not faster end to end gives its
# decisions back. And GEMMSHIM_HOLD itself: a held signature is served by
# its prior. On the fake cuBLAS the application is a script that runs
# sample_calls and prints a metric that depends on GEMMSHIM_HOLD.

load test_helper

setup() {
    common_setup
    L="$SHIM_BUILD_DIR/gemmshim"
    REPLAY="$SHIM_BUILD_DIR/bin/gemmshim-replay"
    D="$BATS_TEST_TMPDIR"
    export GEMMSHIM_LIBRARY="$GEMMSHIM_LIB"
    # the application's calls reach the fake on the simulated H100
    export LD_LIBRARY_PATH="$FAKE_DIR" GEMMSHIM_TEST_DEVICE=sm_90:132
    export APP_SAMPLE="$SAMPLE"
}

# $D/app.sigs from sample_calls; $D/c a cache this build takes (its header
# written by an online run), every tunable signature decided: the first two
# classes replace their prior cuBLAS by sgemm_simt, the rest keep it.
# $D/hex1, $D/hex2: those two classes.
make_cache() {
    record_tunable_classes
    [ "$(wc -l < "$D/classes")" -ge 3 ]
    run_shim env GEMMSHIM_TUNE=online GEMMSHIM_TUNE_CACHE="$D/c" "$SAMPLE" 2
    [ "$status" -eq 0 ] && grep -q '^validator ' "$D/c"
    tuned_lines >> "$D/c"
}

# $D/app: the application. It runs sample_calls, appends its mode and hold
# to $D/runs, and prints "step: V ms", V the k-th word of $1 in its k-th run
# with every decision held, of $2 in its k-th run from the cache (the last
# word again past the end; "-": nothing printed). $3 (optional): its exit
# status when held. In ab mode it leaves $D/ab.json as its ab report, if any.
make_app() {
    printf '%s\n' "$1" > "$D/prior.vals"
    printf '%s\n' "$2" > "$D/tuned.vals"
    printf '%s\n' "${3:-0}" > "$D/held.rc"
    cat > "$D/app" <<'EOF'
#!/bin/sh
d=$(dirname "$0")
echo "${GEMMSHIM_MODE:-on} ${GEMMSHIM_HOLD:-none}" >> "$d/runs"
"$APP_SAMPLE" 2 || exit $?
if [ "${GEMMSHIM_MODE:-}" = ab ] && [ -f "$d/ab.json" ]; then cp "$d/ab.json" "$GEMMSHIM_REPORT.json"; fi
if [ "${GEMMSHIM_HOLD:-}" = all ]; then
    set -- $(cat "$d/prior.vals"); rc=$(cat "$d/held.rc"); k=$(grep -c "^on all$" "$d/runs")
else
    set -- $(cat "$d/tuned.vals"); rc=0; k=$(grep -c "^on none$" "$d/runs")
fi
[ "$k" -ge 1 ] || k=1
[ "$k" -le $# ] || k=$#
eval "v=\${$k}"
[ "$v" = - ] || echo "step: $v ms"
exit "$rc"
EOF
    chmod +x "$D/app"
    rm -f "$D/runs"
}

METRIC='step: ([0-9.]+) ms'

# the replay's summary: how many of the recorded signatures' decisions
# replace their prior now
replaced() {
    "$REPLAY" --summary --from "$D/app.sigs" --cache "$D/c" | sed -n 's/.*keep the prior, \([0-9]*\) replace it.*/\1/p'
}

@test "validate --e2e: a cache slower end to end than its prior gives every decision back" {
    make_cache
    make_app 10.0 11.0
    expect_eq "$(replaced)" 2
    cp "$D/c" "$D/c.before"
    # the decision alone, dry: said, nothing written
    run --separate-stderr python3 "$SHIM_SOURCE_DIR/bench/validate_e2e.py" decide --cache "$D/c" \
        --dry-run --sigs "$D/app.sigs" --pair 10 11 --pair 10 9.5 --pair 10 12
    [ "$status" -eq 0 ]
    expect_contains "$output" "ran 0.909x the prior (median of 3 pairs; min 0.833x, max 1.053x"
    expect_contains "$output" "2 tuned decisions would give way to the prior"
    cmp -s "$D/c" "$D/c.before"
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 --metric "$METRIC" -- "$D/app"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    # the ab run, then the prior first and the cache in turn, never in ab mode
    expect_eq "$(tr '\n' ' ' < "$D/runs")" "ab none on all on none on all on none on all on none "
    expect_contains "$output" "end to end run 1 of 6 (held at the prior): 10.0"
    expect_contains "$output" "end to end run 6 of 6 (the cache): 11.0"
    expect_contains "$output" "the tuned cache ran 0.909x the prior (median of 3 pairs; min 0.909x, max 0.909x"
    expect_contains "$output" "2 tuned decisions gave way to the prior in $D/c"
    # two lines appended, each class back on cuBLAS, saying why
    expect_eq "$(($(wc -l < "$D/c") - $(wc -l < "$D/c.before")))" 2
    for h in "$(cat "$D/hex1")" "$(cat "$D/hex2")"; do
        grep "^sig	$h	cublas	as_called	" "$D/c" | tail -1 |
            grep -q "(end to end 0.909x the prior over 3 pairs: the prior kept)"
    done
    expect_eq "$(replaced)" 0
    # a throughput (higher is better) lower with the cache: the same
    cp "$D/c.before" "$D/c"
    make_app 200 150
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 2 --higher-is-better --metric "$METRIC" -- "$D/app"
    [ "$status" -eq 0 ]
    expect_contains "$output" "the tuned cache ran 0.750x the prior (median of 2 pairs"
    expect_eq "$(replaced)" 0
    # a tie goes to the prior
    cp "$D/c.before" "$D/c"
    make_app 10 10
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 1 --metric "$METRIC" -- "$D/app"
    [ "$status" -eq 0 ]
    expect_contains "$output" "ran 1.000x the prior (median of 1 pair;"
    expect_contains "$output" "2 tuned decisions gave way"
    expect_eq "$(replaced)" 0
}

@test "validate --e2e: the ab step's give-backs first, then the rest by the end-to-end step" {
    make_cache
    # the ab step finds hex1's route at 0.9x cuBLAS (a report the application leaves)
    python3 - "$(cat "$D/hex1")" > "$D/ab.json" <<'PY'
import json, sys
print(json.dumps({"version": 1, "rows": [{"signature": "s0", "class": sys.argv[1], "calls": 41,
      "ours_us": 100.0, "cublas_us": 90.0, "route": "sgemm_simt"}]}))
PY
    make_app 10.0 10.5
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 --metric "$METRIC" -- "$D/app"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "1 decisions gave way to the prior"
    expect_contains "$output" "(1 tuned decisions serve the application)"
    expect_contains "$output" "1 tuned decisions gave way to the prior"
    grep "^sig	$(cat "$D/hex1")	cublas	" "$D/c" | grep -q "in the application sgemm_simt/sgemm_simt ran 0.900x"
    grep "^sig	$(cat "$D/hex2")	cublas	" "$D/c" | grep -q "end to end 0.952x the prior over 3 pairs"
    expect_eq "$(replaced)" 0
    # nothing tuned serves the application any more: no runs to compare
    rm -f "$D/runs" "$D/ab.json"
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 --metric "$METRIC" -- "$D/app"
    [ "$status" -eq 0 ]
    expect_contains "$output" "no tuned decision serves the application now"
    expect_eq "$(wc -l < "$D/runs")" 1
}

@test "validate --e2e: a cache faster end to end than its prior stays as the ab step left it" {
    make_cache
    make_app 11.0 10.0
    cp "$D/c" "$D/c.before"
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 --metric "$METRIC" -- "$D/app"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "the tuned cache ran 1.100x the prior (median of 3 pairs; min 1.100x, max 1.100x"
    expect_contains "$output" "the cache holds (2 tuned decisions serve the application)"
    cmp -s "$D/c" "$D/c.before"
    # a throughput higher with the cache; the median decides, not one pair
    make_app 100 "110 90 120"
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 --higher-is-better --metric "$METRIC" -- "$D/app"
    echo "$output"
    [ "$status" -eq 0 ]
    expect_contains "$output" "the tuned cache ran 1.100x the prior (median of 3 pairs; min 0.900x, max 1.200x"
    cmp -s "$D/c" "$D/c.before"
}

@test "validate --e2e: a run without its metric, or failing, stops with the cache as the ab step left it" {
    make_cache
    cp "$D/c" "$D/c.before"
    # no metric in the cache's runs
    make_app 10.0 -
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 --metric "$METRIC" -- "$D/app"
    echo "$output"; echo "$stderr"
    [ "$status" -ne 0 ]
    expect_contains "$stderr" "gemmshim: validate: end to end run 2 of 6 (the cache): --metric '$METRIC': no match in its output; the cache is as the ab step left it"
    expect_eq "$(wc -l < "$D/runs")" 3
    cmp -s "$D/c" "$D/c.before"
    # group 1 is not a number
    make_app 10.0 11.0
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 --metric 'step: ([0-9.]+ ms)' -- "$D/app"
    [ "$status" -ne 0 ]
    expect_contains "$stderr" "run 1 of 6 (held at the prior): --metric 'step: ([0-9.]+ ms)': '10.0 ms' (group 1 of its last match) is not a positive number"
    cmp -s "$D/c" "$D/c.before"
    # the held run fails: its status, its last lines
    make_app 10.0 11.0 5
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 --metric "$METRIC" -- "$D/app"
    [ "$status" -eq 5 ]
    expect_contains "$stderr" "gemmshim: validate: end to end run 1 of 6 (held at the prior) ended with status 5; the cache is as the ab step left it"
    expect_contains "$stderr" "  step: 10.0 ms"
    cmp -s "$D/c" "$D/c.before"
}

@test "validate --e2e: option errors are usage errors, before the application runs" {
    make_cache
    make_app 10.0 11.0
    cp "$D/c" "$D/c.before"
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 3 -- "$D/app"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: validate: --e2e needs --metric REGEX"
    expect_contains "$stderr" "usage: gemmshim"
    run --separate-stderr "$L" validate --cache "$D/c" --metric "$METRIC" -- "$D/app"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "--metric and --higher-is-better go with --e2e N"
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 0 --metric "$METRIC" -- "$D/app"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "--e2e takes a number of pairs of runs (1 to 9999), not '0'"
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 2 --metric 'step: [0-9]+' -- "$D/app"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "has no capture group"
    run --separate-stderr "$L" validate --cache "$D/c" --e2e 2 --metric 'step: ([0-9]+' -- "$D/app"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "is not a regular expression"
    run --separate-stderr "$L" run --cache "$D/c" --e2e 2 -- "$D/app"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "--e2e is validate's"
    [ ! -e "$D/runs" ]
    cmp -s "$D/c" "$D/c.before"
    # the usage names the options
    run "$L" --help
    expect_contains "$output" "--e2e N --metric REGEX"
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
    # through the launcher, as validate --e2e runs the prior
    run --separate-stderr env GEMMSHIM_HOLD=all GEMMSHIM_LOG=stderr "$L" run --cache "$D/c" -- "$SAMPLE" 2
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "$line (held at its prior: "
}
