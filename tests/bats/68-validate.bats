#!/usr/bin/env bats
# gemmshim validate: tuned decisions held against what the application
# measured in ab mode. validate_from_ab.py on reports of known speedups (a
# tuned route that lost there gives way to its prior, one that won stays,
# the shim's own cache reader agrees), and the launcher's verb: its argument
# errors, an application that fails (the cache untouched), and a run on the
# fake cuBLAS, where nothing runs kernels and so nothing is timed.

load test_helper

setup() {
    common_setup
    L="$SHIM_BUILD_DIR/gemmshim"
    REPLAY="$SHIM_BUILD_DIR/bin/gemmshim-replay"
    TOOL="$SHIM_SOURCE_DIR/bench/validate_from_ab.py"
    D="$BATS_TEST_TMPDIR"
    export GEMMSHIM_LIBRARY="$GEMMSHIM_LIB"
}

# $D/app.sigs from sample_calls on the simulated H100; $D/c a format 2 cache
# with every tunable signature decided: the first two replace their prior
# cuBLAS by a kernel, the rest keep it. $D/hex1, $D/hex2: those two classes.
make_cache() {
    record_tunable_classes GEMMSHIM_TEST_DEVICE=sm_90:132 LD_LIBRARY_PATH="$FAKE_DIR"
    {
        printf '# gemmshim tune cache\nformat 2\nvalidator gpu=test\n'
        tuned_lines
    } > "$D/c"
}

# an ab report: class $1 at speedup $2, class $3 at $4 (41 turns each)
report() {
    python3 - "$@" > "$D/ab.json" <<'PY'
import json, sys
a = sys.argv[1:]
rows = [{"signature": f"s{i}", "class": a[i], "calls": 41, "ours_us": 100.0,
         "cublas_us": 100.0 * float(a[i + 1]), "route": "sgemm_simt"} for i in (0, 2)]
print(json.dumps({"version": 1, "rows": rows}))
PY
}

@test "validate_from_ab.py: a tuned route slower in the application gives way to its prior" {
    make_cache
    report "$(cat "$D/hex1")" 0.95 "$(cat "$D/hex2")" 1.04
    run "$REPLAY" --summary --from "$D/app.sigs" --cache "$D/c"
    echo "$output"
    expect_contains "$output" "keep the prior, 2 replace it"
    # a dry run says it and writes nothing
    cp "$D/c" "$D/c.before"
    run --separate-stderr python3 "$TOOL" --cache "$D/c" --dry-run "$D/ab.json"
    echo "$output"
    [ "$status" -eq 0 ]
    expect_contains "$output" "1 decisions would give way to the prior"
    cmp -s "$D/c" "$D/c.before"
    run --separate-stderr python3 "$TOOL" --cache "$D/c" --replay "$REPLAY" "$D/ab.json"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "0.950x"
    expect_contains "$output" "tuned sgemm_simt/sgemm_simt reverted to the prior cublas"
    expect_contains "$output" "1.040x"
    expect_contains "$output" "tuned sgemm_simt/sgemm_simt holds"
    # one line appended, for the loser's class, keeping cuBLAS, its comment
    # naming the route it had and what it ran in the application
    expect_eq "$(($(wc -l < "$D/c") - $(wc -l < "$D/c.before")))" 1
    tail -1 "$D/c" | grep -q "^sig	$(cat "$D/hex1")	cublas	as_called	"
    tail -1 "$D/c" | grep -q "in the application sgemm_simt/sgemm_simt ran 0.950x cuBLAS as called"
    # the shim's own reader takes it: one decision replaces the prior now
    run "$REPLAY" --summary --from "$D/app.sigs" --cache "$D/c"
    echo "$output"
    expect_contains "$output" "keep the prior, 1 replace it"
    # again: the class keeps its prior now, nothing more is written
    run --separate-stderr python3 "$TOOL" --cache "$D/c" --replay "$REPLAY" "$D/ab.json"
    expect_contains "$output" "the prior (kept)"
    expect_contains "$output" "0 decisions gave way"
}

@test "validate_from_ab.py: rows are weighed by their turns across reports; bad input is one line" {
    make_cache
    h=$(cat "$D/hex1")
    # 0.9 over 41 turns and 1.2 over 41: 1.05 together, so the route holds
    report "$h" 0.9 "$(cat "$D/hex2")" 1.0
    mv "$D/ab.json" "$D/ab1.json"
    report "$h" 1.2 "$(cat "$D/hex2")" 1.0
    run --separate-stderr python3 "$TOOL" --cache "$D/c" --dry-run "$D/ab1.json" "$D/ab.json"
    echo "$output"
    [ "$status" -eq 0 ]
    expect_contains "$output" "1.050x"
    expect_contains "$output" "0 decisions would give way"
    # --min raises the bar
    run --separate-stderr python3 "$TOOL" --cache "$D/c" --dry-run --min 1.06 "$D/ab1.json" "$D/ab.json"
    expect_contains "$output" "2 decisions would give way"
    # the writer itself: a class whose decision is its prior is left as it
    # is, a line that is no class fails, a missing cache is one line
    [ -n "$(sed -n 3p "$D/classes")" ]   # a third class, decided as its prior
    cp "$D/c" "$D/c.before"
    run --separate-stderr "$REPLAY" --keep-prior --cache "$D/c" <<< "$(sed -n 3p "$D/classes")	kept one"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "kept one: no decision that replaces its prior; left as it is"
    cmp -s "$D/c" "$D/c.before"
    run --separate-stderr "$REPLAY" --keep-prior --cache "$D/c" <<< "zz	nonsense"
    [ "$status" -eq 1 ]
    expect_contains "$stderr" "--keep-prior: not a class"
    run --separate-stderr "$REPLAY" --keep-prior --cache "$D/nope" < /dev/null
    [ "$status" -eq 1 ]
    expect_contains "$stderr" "cannot read the cache"
    run --separate-stderr "$REPLAY" --keep-prior < /dev/null
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "--keep-prior needs --cache CACHE"
    echo '{"rows": 3' > "$D/bad.json"
    run --separate-stderr python3 "$TOOL" --cache "$D/c" --replay "$REPLAY" "$D/bad.json"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: validate: "
    expect_contains "$stderr" "is not a gemmshim ab report"
    run --separate-stderr python3 "$TOOL" --cache "$D/nope" --replay "$REPLAY" "$D/ab.json"
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: validate: "
}

@test "gemmshim validate: needs a cache; a failing application leaves it as it was" {
    run --separate-stderr "$L" validate -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "validate needs --cache FILE"
    run --separate-stderr "$L" run --min 1 --cache "$D/x" -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "--min is validate's"
    run --separate-stderr "$L" validate --cache "$D/missing" -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "cannot read"
    make_cache
    cp "$D/c" "$D/c.before"
    run --separate-stderr "$L" validate --cache "$D/c" -- sh -c 'exit 5'
    [ "$status" -eq 5 ]
    expect_contains "$stderr" "the application ended with status 5; the cache is unchanged"
    cmp -s "$D/c" "$D/c.before"
}

@test "gemmshim validate: on the fake cuBLAS nothing is timed, so nothing changes" {
    make_cache
    cp "$D/c" "$D/c.before"
    run --separate-stderr env LD_LIBRARY_PATH="$FAKE_DIR" GEMMSHIM_TEST_DEVICE=sm_90:132 \
        "$L" validate --cache "$D/c" -- "$SAMPLE" 2
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$output" "nothing to check"
    cmp -s "$D/c" "$D/c.before"
}
