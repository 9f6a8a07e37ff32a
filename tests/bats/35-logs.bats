#!/usr/bin/env bats
# Logs and reports of several processes: processes sharing one GEMMSHIM_LOG
# file (torchrun ranks, DataLoader workers, subprocesses) lose no line, "%p"
# gives each its own file, fork() neither hangs nor duplicates output, and
# per-process ab reports merge into one (bench/merge_reports.py).

load test_helper

setup() {
    common_setup
    THREADS="$TEST_BIN_DIR/thread_calls"
    FORK="$TEST_BIN_DIR/fork_calls"
    MERGE="$SHIM_SOURCE_DIR/bench/merge_reports.py"
    D="$BATS_TEST_TMPDIR"
}

# Run "$@" under the shim N times at once; every one must exit 0.
parallel() {
    local n=$1 i pids=() rc=0
    shift
    for ((i = 0; i < n; ++i)); do
        env LD_PRELOAD="$GEMMSHIM_LIB" "$@" > "$D/out.$i" 2> "$D/err.$i" &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do
        if ! wait "${pids[$i]}"; then
            echo "process $i failed:"; cat "$D/out.$i" "$D/err.$i"
            rc=1
        fi
    done
    return $rc
}

# Every line of file $1 is a whole "gemmshim: " line.
whole_lines() {
    local bad
    bad=$(grep -vn '^gemmshim: ' "$1" || true)
    if [ -n "$bad" ]; then
        printf 'lines cut or mixed in %s:\n%s\n' "$1" "$bad" >&2
        return 1
    fi
}

@test "4 processes share one GEMMSHIM_LOG file: every process's lines are kept" {
    log="$D/shared.log"
    parallel 4 env GEMMSHIM_LOG="$log" "$SAMPLE" 3
    cat "$log"
    whole_lines "$log"
    content=$(cat "$log")
    # sample_calls logs 5 signatures and a summary: 4 times
    expect_eq "$(count_fixed "$content" " -> ")" 20 "signature lines of 4 processes"
    expect_eq "$(count_fixed "$content" "summary: 15 calls, 5 signatures, 0 fallbacks (pid ")" 4
    expect_eq "$(count_fixed "$content" "real libcublas.so: $FAKE_DIR/libcublas.so.13")" 4
    # the 4 summaries are 4 processes'
    expect_eq "$(grep -o 'summary: .*(pid [0-9]*)' "$log" | sort -u | wc -l)" 4
    # each summary is whole: its table follows it (one write per block)
    expect_eq "$(grep -A2 'summary: ' "$log" | grep -cE '^gemmshim: +forward +15 +100\.0%')" 4
}

@test "many threads in 4 processes on one log file: 4x one process's lines, none cut" {
    # one process alone gives the count
    run_shim env GEMMSHIM_LOG="$D/one.log" GEMMSHIM_TEST_DEVICE=sm_90:132 \
        GEMMSHIM_POLICY=eligible "$THREADS" 8 20 2
    [ "$status" -eq 0 ]
    one=$(grep -c -- ' -> ' "$D/one.log")
    [ "$one" -gt 20 ]
    log="$D/shared.log"
    parallel 4 env GEMMSHIM_LOG="$log" GEMMSHIM_TEST_DEVICE=sm_90:132 \
        GEMMSHIM_POLICY=eligible "$THREADS" 8 20 2
    whole_lines "$log"
    expect_eq "$(grep -c -- ' -> ' "$log")" $((4 * one)) "signature lines: 4 x $one"
    # the same lines as 4 single runs, each whole
    diff <(grep -- ' -> ' "$D/one.log" | sort | sed 'p;p;p') <(grep -- ' -> ' "$log" | sort)
    # 10 workers x 20 rounds x 5 calls, per process
    expect_eq "$(grep -c 'summary: 1000 calls' "$log")" 4
}

@test "GEMMSHIM_LOG is appended to: a second run keeps the first run's lines" {
    log="$D/appended.log"
    run_shim env GEMMSHIM_LOG="$log" "$SAMPLE"
    [ "$status" -eq 0 ]
    run_shim env GEMMSHIM_LOG="$log" "$SAMPLE" 2
    [ "$status" -eq 0 ]
    content=$(cat "$log")
    expect_eq "$(count_fixed "$content" " -> ")" 10
    expect_contains "$content" "summary: 5 calls, 5 signatures"
    expect_contains "$content" "summary: 10 calls, 5 signatures"
}

@test "GEMMSHIM_LOG with %p: one file per process, named by its pid" {
    parallel 4 env GEMMSHIM_LOG="$D/log.%p" "$SAMPLE" 2
    ls -la "$D"
    [ ! -e "$D/log.%p" ]
    files=("$D"/log.*)
    expect_eq "${#files[@]}" 4 "log files"
    for f in "${files[@]}"; do
        pid=${f##*.}
        [[ $pid =~ ^[0-9]+$ ]]
        whole_lines "$f"
        content=$(cat "$f")
        expect_eq "$(count_fixed "$content" " -> ")" 5 "$f"
        expect_eq "$(count_fixed "$content" "summary: ")" 1 "$f"
        expect_contains "$content" "summary: 10 calls, 5 signatures, 0 fallbacks (pid $pid)"
    done
}

@test "GEMMSHIM_LOG: %% is a %, other % signs stay" {
    run_shim env GEMMSHIM_LOG="$D/a%%b%x-%p.log" "$SAMPLE"
    [ "$status" -eq 0 ]
    ls "$D"
    f=$(compgen -G "$D/a%b%x-*.log")
    [[ ${f#"$D/a%b%x-"} =~ ^[0-9]+\.log$ ]]
    expect_contains "$(cat "$f")" "summary: 5 calls"
}

@test "stderr messages of 4 processes are whole lines" {
    # a bad value: one message per process, on a shared stderr
    for i in 1 2 3 4; do
        env LD_PRELOAD="$GEMMSHIM_LIB" GEMMSHIM_MODE=maybe GEMMSHIM_LOG=stderr "$SAMPLE" 2 \
            > /dev/null 2>> "$D/stderr" &
    done
    wait
    cat "$D/stderr"
    whole_lines "$D/stderr"
    expect_eq "$(grep -c "GEMMSHIM_MODE='maybe'" "$D/stderr")" 4
    expect_eq "$(grep -c ' -> ' "$D/stderr")" 20
}

# fork_calls: a thread busy in the shim while main forks 6 children, each
# issuing 3 calls of its own (m=700<i>) and leaving with _exit.
fork_run() {
    unset FAKE_CUBLAS_RECORD # the fake's record file: time outside the shim
    run_shim timeout 60 env GEMMSHIM_LOG_TIMING=0 "$@" "$FORK" 6 3
    echo "$output"; echo "$stderr"
    expect_eq "$status" 0 "fork_calls exit status (3: a child hung; 124: the parent)"
    expect_contains "$output" "fork_calls: 6 children"
}

@test "fork from a busy thread: no child hangs, each child's lines once in the shared log" {
    log="$D/fork.log"
    for round in 1 2 3; do
        rm -f "$log"
        fork_run env GEMMSHIM_LOG="$log"
        whole_lines "$log"
        for i in 0 1 2 3 4 5; do
            expect_eq "$(grep -c "m=700$i n=" "$log")" 3 "child $i's lines (round $round)"
        done
        # nothing written twice (no stdio buffer copied into a child)
        dup=$(sort "$log" | uniq -d)
        expect_eq "$dup" "" "duplicated lines"
        # one summary: the parent's (the children _exit)
        expect_eq "$(grep -c 'summary: ' "$log")" 1
    done
}

@test "fork with %p: each child writes its own file, without the parent's lines" {
    fork_run env GEMMSHIM_LOG="$D/f.%p"
    ls "$D"
    parent=$(grep -l 'summary: ' "$D"/f.*)
    expect_eq "$(wc -w <<<"$parent")" 1 "one parent log"
    while read -r _ _ i _ pid; do
        f="$D/f.$pid"
        [ -f "$f" ] || { echo "no log $f for child $i"; false; }
        whole_lines "$f"
        cat "$f"
        expect_eq "$(grep -c . "$f")" 3 "child $i: its 3 lines only"
        expect_eq "$(grep -c "m=700$i n=" "$f")" 3
        if grep -q "m=700$i " "$parent"; then echo "child $i's line in the parent's log"; false; fi
    done < <(grep '^fork_calls: child ' <<<"$output")
    expect_eq "$(ls "$D"/f.* | wc -l)" 7 "parent + 6 children"
}

# Hand-written per-process reports, in the shim's CSV format.
write_reports() {
    local p=$1
    cat > "$p.csv" <<'EOF'
signature,calls,ours_us,cublas_us,speedup,max_err,route
"cublasSgemm_v2 NN f32,f32->f32 m=256 n=256 k=256 batch=1",10,12.000,10.000,0.8333,3.000e-07,sgemm_simt_64x64x8
"cublasGemmEx TN bf16,bf16->bf16 m=512 n=256 k=128 batch=1",5,nan,8.000,nan,nan,pingpong_128x128x64
EOF
    cat > "$p.4242.csv" <<'EOF'
signature,calls,ours_us,cublas_us,speedup,max_err,route
"cublasSgemm_v2 NN f32,f32->f32 m=256 n=256 k=256 batch=1",30,8.000,12.000,1.5000,5.000e-07,sgemm_simt_64x64x8
"cublasSgemm_v2 NN f32,f32->f32 m=256 n=256 k=256 batch=1",4,1.000,1.000,1.0000,9.000e-01,skinny_64
EOF
    cat > "$p.777.csv" <<'EOF'
signature,calls,ours_us,cublas_us,speedup,max_err,route
"cublasGemmEx TN bf16,bf16->bf16 m=512 n=256 k=128 batch=1",15,6.000,4.000,0.6667,1.000e-03,pingpong_128x128x64
EOF
}

@test "merge_reports.py: per-process ab reports merged by signature and route" {
    p="$D/ab"
    write_reports "$p"
    # not reports of this prefix: never read
    printf 'signature,calls,ours_us,cublas_us,speedup,max_err,route\n"x",1000,1,1,1,1,r\n' \
        | tee "$p.merged.csv" "$p.old.csv" "${p}x.csv" > /dev/null
    run --separate-stderr python3 "$MERGE" "$p" "$D/all.csv"
    echo "$output"; echo "$stderr"
    expect_eq "$status" 0
    expect_contains "$stderr" "3 reports, 3 signatures"
    cat "$D/all.csv"
    expect_eq "$(sed -n 1p "$D/all.csv")" "signature,calls,ours_us,cublas_us,speedup,max_err,route"
    # sgemm: 10 + 30 calls; ours (10*12 + 30*8)/40 = 9, cuBLAS (10*10 + 30*12)/40 = 11.5
    expect_eq "$(sed -n 2p "$D/all.csv")" \
        '"cublasSgemm_v2 NN f32,f32->f32 m=256 n=256 k=256 batch=1",40,9.000,11.500,1.2778,5.000e-07,sgemm_simt_64x64x8'
    # bf16: ours measured only in the second report (weight 15); cuBLAS (5*8 + 15*4)/20 = 5
    expect_eq "$(sed -n 3p "$D/all.csv")" \
        '"cublasGemmEx TN bf16,bf16->bf16 m=512 n=256 k=128 batch=1",20,6.000,5.000,0.8333,1.000e-03,pingpong_128x128x64'
    # the same signature on another route stays a row of its own
    expect_eq "$(sed -n 4p "$D/all.csv")" \
        '"cublasSgemm_v2 NN f32,f32->f32 m=256 n=256 k=256 batch=1",4,1.000,1.000,1.0000,9.000e-01,skinny_64'
    expect_eq "$(wc -l < "$D/all.csv")" 4

    # JSON out, as the shim writes it (null for an unmeasured value)
    run --separate-stderr python3 "$MERGE" "$p" "$D/all.json"
    expect_eq "$status" 0
    python3 - "$D/all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and len(d["rows"]) == 3, d
r = d["rows"][0]
assert r["calls"] == 40 and r["ours_us"] == 9.0 and r["speedup"] == 1.2778, r
PY
    # the merged CSV is a report `gemmshim tune --report` and plot read
    python3 "$SHIM_SOURCE_DIR/bench/table_from_csv.py" --shapes "$D/all.csv" > /dev/null
}

@test "merge_reports.py: %p prefixes, unmeasured rows, and errors in one line" {
    # %p: the pid in the middle of the name
    write_reports "$D/tmp"
    mv "$D/tmp.csv" "$D/r.11.x.csv"
    mv "$D/tmp.4242.csv" "$D/r.22.x.csv"
    rm "$D/tmp.777.csv"
    run --separate-stderr python3 "$MERGE" "$D/r.%p.x" "$D/out.csv"
    echo "$stderr"
    expect_eq "$status" 0
    expect_contains "$stderr" "2 reports, 3 signatures"
    expect_contains "$(cat "$D/out.csv")" '"cublasGemmEx TN bf16,bf16->bf16 m=512 n=256 k=128 batch=1",5,nan,8.000,nan,nan,pingpong_128x128x64'

    # no report: exit 2, one line
    run --separate-stderr python3 "$MERGE" "$D/none" "$D/o.csv"
    expect_eq "$status" 2
    expect_eq "$(printf '%s\n' "$stderr" | wc -l)" 1
    expect_contains "$stderr" "merge_reports: no report $D/none.csv"
    # not an ab report
    printf 'a,b\n1,2\n' > "$D/bad.csv"
    run --separate-stderr python3 "$MERGE" "$D/bad" "$D/o.csv"
    expect_eq "$status" 2
    expect_contains "$stderr" "is not a gemmshim ab report"
    [[ "$stderr" != *Traceback* ]]
    # the output among the inputs
    write_reports "$D/self"
    run --separate-stderr python3 "$MERGE" "$D/self" "$D/self.777.csv"
    expect_eq "$status" 2
    expect_contains "$stderr" "is one of the reports to merge"
    # usage
    run --separate-stderr python3 "$MERGE" "$D/self"
    expect_eq "$status" 2
    expect_contains "$stderr" "usage: merge_reports.py PREFIX OUT"
}

@test "gemmshim ab --report PREFIX removes an earlier run's report files first" {
    L="$SHIM_BUILD_DIR/gemmshim"
    p="$D/ab"
    write_reports "$p"
    touch "$p.json" "$p.4242.json" "$p.notes.csv" "$p.merged.csv"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" ab --report "$p" -- true
    echo "$stderr"
    expect_eq "$status" 0
    ls "$D"
    [ ! -e "$p.csv" ] && [ ! -e "$p.json" ] && [ ! -e "$p.4242.csv" ] && [ ! -e "$p.4242.json" ]
    [ ! -e "$p.777.csv" ]
    # files that are not a process's report stay
    [ -e "$p.notes.csv" ] && [ -e "$p.merged.csv" ]
}
