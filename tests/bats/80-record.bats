#!/usr/bin/env bats
# gemmshim record (GEMMSHIM_RECORD): the signature file of a run, several
# processes and runs appending to one file without losing or cutting lines,
# merged by summing per signature; recording changes no route; forked
# workers write their own calls. Captured sequences need a GPU to capture: their
# bookkeeping is tests/unit/test_record.c's.

load test_helper

setup() {
    common_setup
    L="$SHIM_BUILD_DIR/gemmshim"
    THREADS="$TEST_BIN_DIR/thread_calls"
    FORK_EXIT="$TEST_BIN_DIR/fork_exit_calls"
    BENCH="$SHIM_SOURCE_DIR/bench"
    D="$BATS_TEST_TMPDIR"
    export GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" LD_LIBRARY_PATH="$FAKE_DIR"
}

# Python over the merged signature files "$@" (bench/gs_signatures.py, the
# reader): runs the code on stdin with r the module, m the merge.
merged() {
    python3 -c "
import sys
sys.path.insert(0, '$BENCH')
import gs_signatures as r
m = r.read_sigs(sys.argv[1:])
exec(sys.stdin.read())" "$@"
}

# Every line of signature file $1 is whole and of a known kind: the header
# first and only there, then proc, sig (a 320-digit class, its fields, a
# shape) and seq lines; the reader skips nothing.
well_formed() {
    local bad
    bad=$(awk -F'\t' '
        NR == 1 { if ($1 != "gemmshim-signatures" || $2 != "format=1") print NR ": " $0; next }
        $1 == "proc" && NF == 19 { next }
        $1 == "sig" && length($2) == 320 && $2 !~ /[^0-9a-f]/ && length($3) == 19 && $3 ~ /^id=[0-9a-f]+$/ &&
            $4 ~ /^calls=[0-9]+$/ && $5 ~ /^captured=[0-9]+$/ && $6 ~ /^timed=[0-9]+$/ &&
            $7 ~ /^ms=[0-9.]*$/ && ($8 == "tunable=1" && NF == 9 ||
                                     $8 == "tunable=0" && $9 ~ /^why=/ && NF == 10) &&
            $NF ~ /^# cublas/ { next }
        $1 == "seq" { next }
        { print NR ": " $0 }' "$1")
    if [ -n "$bad" ]; then
        printf 'lines cut, mixed or malformed in %s:\n%s\n' "$1" "$bad" >&2
        return 1
    fi
    expect_eq "$(merged "$1" <<<'print(m["bad"])')" 0 "lines the reader skips"
}

@test "record: a line per signature with its calls, the class as the tune cache keys it, a header and a proc line" {
    run --separate-stderr env GEMMSHIM_TEST_DEVICE=sm_90:132 "$L" record --out "$D/app.sigs" -- "$SAMPLE" 3
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    cat "$D/app.sigs"
    well_formed "$D/app.sigs"
    head -1 "$D/app.sigs" | grep -qE $'^gemmshim-signatures\tformat=1\tgpu=[^\t]*\tsms=132\tcc=90\tdriver=[0-9]+\tcublas=[0-9]+\tcublaslt=[0-9]+\tshim=0\.'
    expect_eq "$(grep -c $'^proc\t' "$D/app.sigs")" 1 "one process"
    grep -qE $'^proc\thost=[^\t]+\tpid=[0-9]+\ttime=[0-9]+\tcalls=12\tsigs=4\tdropped=0\tcaptures=0\tunplaced=0\tmode=on\tpolicy=table\ttune=off\tgpu=' "$D/app.sigs"
    # the four valid calls, 3 times each; the invalid one (m=-1) is no GEMM
    expect_eq "$(grep -c $'^sig\t' "$D/app.sigs")" 4 "signatures"
    expect_eq "$(grep -c $'\tcalls=3\tcaptured=0\t' "$D/app.sigs")" 4 "3 calls each, none captured"
    expect_contains "$(cat "$D/app.sigs")" "# cublasGemmEx TN bf16,bf16->bf16 compute=32F m=512 n=256 k=128 batch=1 lda=128 ldb=128 ldc=512"
    expect_contains "$(cat "$D/app.sigs")" "# cublasSgemmStridedBatched NT f32,f32->f32 compute=32F m=64 n=64 k=32 batch=4 lda=64 ldb=64 ldc=64 strides=2048,2048,4096"
    ! grep -q 'm=-1' "$D/app.sigs"
    # no GPU: nothing timed, the time left blank
    expect_eq "$(grep -c $'\ttimed=0\tms=\t' "$D/app.sigs")" 4 "untimed"
    # the class decodes as gs_class_t to the shape the shim wrote
    merged "$D/app.sigs" <<'PY'
for s in m["sigs"].values():
    assert r.shape_of(r.decode_class(s["hex"])) == s["shape"], s
    assert s["tunable"] and s["calls"] == 3
PY
}

@test "record: 4 processes at once, then a second run, on one file: the header once, counts add up, no line cut" {
    # one process alone gives the per-signature counts
    run_shim env GEMMSHIM_RECORD="$D/one.sigs" GEMMSHIM_TEST_DEVICE=sm_90:132 \
        GEMMSHIM_POLICY=eligible LD_LIBRARY_PATH="$FAKE_DIR" "$THREADS" 8 20 2
    [ "$status" -eq 0 ]
    well_formed "$D/one.sigs"
    local pids=() i
    for i in 0 1 2 3; do
        env LD_PRELOAD="$GEMMSHIM_LIB" GEMMSHIM_RECORD="$D/all.sigs" GEMMSHIM_TEST_DEVICE=sm_90:132 \
            GEMMSHIM_POLICY=eligible "$THREADS" 8 20 2 > "$D/out.$i" 2>&1 &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i"; done
    # a later run appends
    run_shim env GEMMSHIM_RECORD="$D/all.sigs" "$SAMPLE" 2
    [ "$status" -eq 0 ]
    well_formed "$D/all.sigs"
    expect_eq "$(grep -c '^gemmshim-signatures' "$D/all.sigs")" 1 "one header"
    expect_eq "$(grep -c $'^proc\t' "$D/all.sigs")" 5 "five processes' blocks"
    expect_eq "$(grep -cE $'^proc\t.*\tcalls=1000\t' "$D/all.sigs")" 4 "10 workers x 20 rounds x 5"
    # each block is whole: a proc line, then its own sig lines
    expect_eq "$(awk -F'\t' '$1 == "proc" { if (n) print n; n = 0 } $1 == "sig" { ++n } END { print n }' \
                 "$D/all.sigs" | sort -n | uniq -c | awk '{ print $1 "x" $2 }' | tr '\n' ' ')" \
              "1x4 4x$(grep -c $'^sig\t' "$D/one.sigs") " "signature lines per block"
    # merged: 4 x one process's count per signature, plus the later run's
    # (its 256^3 Sgemm is also one of thread_calls' signatures)
    merged "$D/all.sigs" <<PY
one = r.read_sigs(["$D/one.sigs"])["sigs"]
for key, s in m["sigs"].items():
    want = 4 * one[key]["calls"] if key in one else 0
    if s["shape"].startswith("cublasSgemm_v2 NN") and " m=256 n=256 k=256 " in s["shape"]:
        want += 2
    elif key not in one:
        want = 2
    assert s["calls"] == want, (s["shape"], s["calls"], want)
assert sum(s["calls"] for s in m["sigs"].values()) == 4 * 1000 + 8, "every call counted once"
assert sum(int(p["calls"]) for p in m["procs"]) == 4 * 1000 + 8
PY
}

@test "recording changes no route: the same log lines and the same calls reach cuBLAS" {
    for app in "$SAMPLE 2" "$LT_CALLS"; do
        for rec in "" "$D/routes.sigs"; do
            rm -f "$FAKE_CUBLAS_RECORD"
            # shellcheck disable=SC2086
            run_shim env ${rec:+GEMMSHIM_RECORD=$rec} GEMMSHIM_LOG=stderr GEMMSHIM_TEST_DEVICE=sm_90:132 \
                GEMMSHIM_POLICY=eligible $app
            [ "$status" -eq 0 ]
            grep -E -- ' -> |fallback|summary|^gemmshim: +[a-z_]+ +[0-9]' <<<"$stderr" |
                sed 's/(pid [0-9]*)//' > "$D/log.${rec:+rec}"
            cut -d' ' -f1 "$FAKE_CUBLAS_RECORD" > "$D/calls.${rec:+rec}"
        done
        echo "[$app]"; cat "$D/log.rec"
        [ -s "$D/log." ] && [ -s "$D/calls." ]
        grep -q ' -> ' "$D/log."
        diff "$D/log." "$D/log.rec"
        diff "$D/calls." "$D/calls.rec"
    done
    # and it did record: the Lt calls are in the file
    grep -q '# cublasLtMatmul ' "$D/routes.sigs"
}

@test "record: cublasLtMatmul calls; those beyond the class kept apart, not tunable, with why" {
    run_shim env GEMMSHIM_RECORD="$D/lt.sigs" GEMMSHIM_TEST_DEVICE=sm_90:132 "$LT_CALLS"
    [ "$status" -eq 0 ]
    cat "$D/lt.sigs"
    well_formed "$D/lt.sigs"
    sigs=$(grep $'^sig\t' "$D/lt.sigs")
    # every scenario is a call of its own; bf16-tn and c-not-d-zero are one signature
    expect_eq "$(awk -F'\t' '{ sub("calls=", "", $4); n += $4 } END { print n }' <<<"$sigs")" 12 "calls"
    expect_contains "$sigs" $'\tcalls=2\tcaptured=0\ttimed=0\tms=\ttunable=1\t# cublasLtMatmul TN bf16,bf16->bf16 compute=32F m=1024 n=512 k=768 batch=1 lda=768 ldb=768 ldc=1024'
    expect_contains "$sigs" $'\ttunable=1\t# cublasLtMatmul TN bf16,bf16->bf16 compute=32F m=1024 n=512 k=768 batch=1 lda=768 ldb=768 ldc=1024 +bias(bf16)'
    expect_contains "$sigs" $'\ttunable=0\twhy=epilogue 2 not routed\t#'
    expect_contains "$sigs" $'\ttunable=0\twhy=C != D with beta != 0\t#'
    expect_eq "$(grep -c $'\ttunable=0\t' <<<"$sigs")" 6 "relu, vector alpha, row-major, C != D, a-scale, per-batch bias"
}

@test "record after fork: a worker that exits writes its own calls, the parent its own, none twice" {
    run_shim env GEMMSHIM_RECORD="$D/fork.sigs" "$FORK_EXIT"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    cat "$D/fork.sigs"
    well_formed "$D/fork.sigs"
    child=$(sed -n 's/^fork_exit_calls: child //p' <<<"$output")
    [ -n "$child" ]
    expect_eq "$(grep -c $'^proc\t' "$D/fork.sigs")" 2 "two blocks"
    # the child's block: its three 64^3 calls only; the parent's: its three 128^3
    awk -F'\t' -v c="pid=$child" '$1 == "proc" { mine = ($3 == c) } $1 == "sig" { print (mine ? "child " : "parent ") $4 " " $NF }' \
        "$D/fork.sigs" > "$D/blocks"
    cat "$D/blocks"
    expect_eq "$(grep -c . "$D/blocks")" 2 "one signature each"
    grep -q '^child calls=3 # cublasSgemm_v2 NN f32,f32->f32 compute=32F m=64 n=64 k=64 ' "$D/blocks"
    grep -q '^parent calls=3 # cublasSgemm_v2 NN f32,f32->f32 compute=32F m=128 n=128 k=128 ' "$D/blocks"
}

@test "record: a file that cannot be written is one message at exit; the application's status stands" {
    run_shim env GEMMSHIM_RECORD=/nonexistent/dir/app.sigs "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$(grep -c 'gemmshim: record:' <<<"$stderr")" 1 "one message"
    expect_contains "$stderr" "gemmshim: record: cannot open '/nonexistent/dir/app.sigs': No such file or directory; this process's 4 calls are not in it"
    # an empty GEMMSHIM_RECORD is a rejected setting: pass-through, said once
    run_shim env GEMMSHIM_RECORD= "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "GEMMSHIM_RECORD: path is empty; the shim passes every call to cuBLAS"
}

@test "launcher: record needs --out; --out is record's" {
    run --separate-stderr "$L" record -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: record needs --out SIGS"
    run --separate-stderr "$L" record --out -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: option --out needs a value"
    run --separate-stderr "$L" run --out x -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: run: unknown option '--out' (--out is record's)"
    run --separate-stderr "$L" --help
    expect_contains "$output" "gemmshim record --out SIGS [options as for run] -- APP [ARGS...]"
}
