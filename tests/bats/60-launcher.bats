#!/usr/bin/env bats
# The launcher (build/gemmshim, bin/gemmshim when installed): usage, errors as
# one "gemmshim:" line with a documented exit status, finding the library,
# plot and tune on bad input, tune's paths relative to the caller.

load test_helper

setup() {
    common_setup
    L="$SHIM_BUILD_DIR/gemmshim"
    REPORT_CSV="$SHIM_SOURCE_DIR/bench/results/h200-ab-report-sgemm.csv"
}

# No traceback and no shell error text anywhere in what the last `run` printed.
no_crash_text() {
    local all="$output${stderr:-}"
    if [[ "$all" == *Traceback* || "$all" == *"unbound variable"* || "$all" == *"line "[0-9]*": "* ]]; then
        printf 'crash text in:\n%s\n' "$all" >&2
        return 1
    fi
}

# The last `run --separate-stderr` failed with status $1 and exactly one
# stderr line, starting "gemmshim:" and containing $2; nothing on stdout.
one_error() {
    echo "status $status; stdout: $output"; echo "stderr: $stderr"
    expect_eq "$status" "$1" "exit status"
    expect_eq "$(printf '%s\n' "$stderr" | wc -l)" 1 "one stderr line"
    [[ "$stderr" == gemmshim:* ]] || { echo "does not start with gemmshim:" >&2; return 1; }
    expect_contains "$stderr" "$2"
    expect_eq "$output" "" "stdout"
    no_crash_text
}

@test "--help, -h and help print the usage, exit codes included, on stdout and exit 0" {
    for h in --help -h help; do
        run --separate-stderr "$L" "$h"
        echo "$h: status $status"; echo "$output"; echo "$stderr"
        expect_eq "$status" 0 "$h"
        expect_eq "$stderr" "" "$h: stderr"
        expect_contains "$output" "usage: gemmshim run|verify|ab"
        expect_contains "$output" "gemmshim table (--shapes FILE | --report REPORT.csv)"
        # the exit codes are documented
        expect_contains "$output" "2 usage or setup error"
        expect_contains "$output" "127 application not found"
        expect_contains "$output" "3 verify found a mismatch"
        expect_contains "$output" "77 table or tune --from without a GPU"
        expect_contains "$output" "the application's own"
    done
    run --separate-stderr "$L" run --help
    expect_eq "$status" 0 "run --help"
    expect_contains "$output" "usage: gemmshim"
}

@test "usage errors: a gemmshim: line and the usage on stderr, exit 2" {
    for args in "" "bogus" "run --bogus -- true" "run ./app" "run --policy eligible" \
                "run --" "plot only-one.csv" "table --shapes x" "table -o t" "table --frob" "tune --frob"; do
        # shellcheck disable=SC2086
        run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" $args
        echo "[$args] status $status"; echo "$output"; echo "$stderr"
        expect_eq "$status" 2 "[$args]"
        expect_eq "$output" "" "[$args] stdout"
        [[ "$(head -1 <<<"$stderr")" == gemmshim:* ]]
        expect_contains "$stderr" "usage: gemmshim run|verify|ab"
        no_crash_text
    done
}

@test "an option given without its value: one line naming it, exit 2" {
    for c in run verify ab; do
        for o in --log --kernels --policy --table --report; do
            run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" $c $o
            one_error 2 "gemmshim: option $o needs a value"
            # the next word is an option, not a value
            run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" $c $o -- true
            one_error 2 "gemmshim: option $o needs a value"
        done
    done
    for o in -o --shapes --report --kernels --rounds; do
        run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" table $o
        one_error 2 "gemmshim: option $o needs a value"
    done
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" table --shapes s.txt -o --rounds 3
    one_error 2 "gemmshim: option -o needs a value"
}

@test "a missing application: one line, exit 127; a file that cannot run: 126" {
    run -127 --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" run -- ./nope
    one_error 127 "gemmshim: application './nope' not found"
    run -127 --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" verify -- "$BATS_TEST_TMPDIR/no/such/app" --flag
    one_error 127 "application '$BATS_TEST_TMPDIR/no/such/app' not found"
    run -127 --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" ab -- gemmshim-no-such-program-on-path
    one_error 127 "application 'gemmshim-no-such-program-on-path' not found"
    printf 'not a program\n' > "$BATS_TEST_TMPDIR/data.txt"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" run -- "$BATS_TEST_TMPDIR/data.txt"
    one_error 126 "application '$BATS_TEST_TMPDIR/data.txt' is not an executable file"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" run -- "$BATS_TEST_TMPDIR"
    one_error 126 "is not an executable file"
    # an application that runs: its own exit status, its own output
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" run -- sh -c 'echo hi; exit 5'
    expect_eq "$status" 5 "the application's exit status"
    expect_eq "$output" "hi"
}

@test "the build-tree launcher finds the library beside itself; GEMMSHIM_LIBRARY overrides" {
    # no GEMMSHIM_LIBRARY (common_setup unset it): build/gemmshim, build/libgemmshim.so.0
    run --separate-stderr "$L" run -- printenv LD_PRELOAD
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$output" "$SHIM_BUILD_DIR/libgemmshim.so.0"
    [ -f "$output" ]
    run --separate-stderr "$L" --version
    [ "$status" -eq 0 ]
    expect_contains "$output" "($SHIM_BUILD_DIR/libgemmshim.so.0)"
    # the override wins, and a relative one is made absolute
    ln -s "$GEMMSHIM_LIB" "$BATS_TEST_TMPDIR/other.so"
    cd "$BATS_TEST_TMPDIR"
    run --separate-stderr env GEMMSHIM_LIBRARY=other.so "$L" run -- printenv LD_PRELOAD
    [ "$status" -eq 0 ]
    expect_eq "$output" "$BATS_TEST_TMPDIR/other.so"
    # a wrong override: one line, exit 2
    run --separate-stderr env GEMMSHIM_LIBRARY="$BATS_TEST_TMPDIR/none.so" "$L" run -- true
    one_error 2 "GEMMSHIM_LIBRARY=$BATS_TEST_TMPDIR/none.so: no such file"
}

@test "plot: a missing, malformed or non-CSV report is one line, exit 2, no traceback" {
    run --separate-stderr "$L" plot "$BATS_TEST_TMPDIR/none.csv" "$BATS_TEST_TMPDIR/p.png"
    one_error 2 "gemmshim: plot: cannot read '$BATS_TEST_TMPDIR/none.csv'"
    # a CSV, but not an ab report (a bench_ab CSV has no signature column)
    printf 'gpu,suite,dtype,layout,m,n,k,ours_ms,cublas_ms,speedup,route\nH100,x,bf16,TN,1,1,1,1,1,1.0,skinny\n' \
        > "$BATS_TEST_TMPDIR/bench.csv"
    run --separate-stderr "$L" plot "$BATS_TEST_TMPDIR/bench.csv" "$BATS_TEST_TMPDIR/p.png"
    one_error 2 "bench.csv is not a gemmshim ab report (no signature column)"
    printf 'signature,calls\n"cublasGemmEx NN",3\n' > "$BATS_TEST_TMPDIR/cols.csv"
    run --separate-stderr "$L" plot "$BATS_TEST_TMPDIR/cols.csv" "$BATS_TEST_TMPDIR/p.png"
    one_error 2 "no speedup, route column"
    # not text at all
    head -c 4096 "$GEMMSHIM_LIB" > "$BATS_TEST_TMPDIR/binary.csv"
    run --separate-stderr "$L" plot "$BATS_TEST_TMPDIR/binary.csv" "$BATS_TEST_TMPDIR/p.png"
    one_error 2 "binary.csv is not a gemmshim ab report"
    # a speedup that is not a number
    printf 'signature,speedup,route\n"s",fast,r\n' > "$BATS_TEST_TMPDIR/text.csv"
    run --separate-stderr "$L" plot "$BATS_TEST_TMPDIR/text.csv" "$BATS_TEST_TMPDIR/p.png"
    one_error 2 "text.csv is not a gemmshim ab report (ValueError"
    # no measured rows
    printf 'signature,speedup,route\n"s",nan,forward\n' > "$BATS_TEST_TMPDIR/empty.csv"
    run --separate-stderr "$L" plot "$BATS_TEST_TMPDIR/empty.csv" "$BATS_TEST_TMPDIR/p.png"
    one_error 2 "gemmshim: plot: no measured rows in"
    [ ! -e "$BATS_TEST_TMPDIR/p.png" ]
}

@test "plot without matplotlib: one line saying what to install, exit 2" {
    # a python3 for which 'import matplotlib' fails, whether or not it is installed
    mkdir -p "$BATS_TEST_TMPDIR/nompl/matplotlib"
    echo 'raise ImportError("No module named matplotlib")' > "$BATS_TEST_TMPDIR/nompl/matplotlib/__init__.py"
    run --separate-stderr env PYTHONPATH="$BATS_TEST_TMPDIR/nompl" "$L" plot "$REPORT_CSV" "$BATS_TEST_TMPDIR/p.png"
    one_error 2 "gemmshim: plot: needs matplotlib"
    expect_contains "$stderr" "pip install matplotlib, or apt-get install python3-matplotlib"
    [ ! -e "$BATS_TEST_TMPDIR/p.png" ]
}

@test "table: a missing --report or --shapes file is one line, exit 2, no traceback" {
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" table \
        --report "$BATS_TEST_TMPDIR/none.csv" -o "$BATS_TEST_TMPDIR/t.table"
    one_error 2 "gemmshim: table --report: cannot read '$BATS_TEST_TMPDIR/none.csv'"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" table \
        --shapes "$BATS_TEST_TMPDIR/none.txt" -o "$BATS_TEST_TMPDIR/t.table"
    one_error 2 "gemmshim: table --shapes: cannot read '$BATS_TEST_TMPDIR/none.txt'"
    # a report that is not one: the tool's complaint in one line
    printf 'a,b\n1,2\n' > "$BATS_TEST_TMPDIR/notab.csv"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" table \
        --report "$BATS_TEST_TMPDIR/notab.csv" -o "$BATS_TEST_TMPDIR/t.table"
    one_error 2 "is not a gemmshim ab report"
    # -o in a directory that does not exist: said before any timing
    printf 'bf16 TN 4096 16 4096\n' > "$BATS_TEST_TMPDIR/ok.txt"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" table \
        --shapes "$BATS_TEST_TMPDIR/ok.txt" -o "$BATS_TEST_TMPDIR/no/dir/t.table"
    one_error 2 "gemmshim: table -o: cannot write in $BATS_TEST_TMPDIR/no/dir"
    [ ! -e "$BATS_TEST_TMPDIR/t.table" ]
}

# A benchmark stand-in for tune (no GPU needed): checks that the --shapes file
# it is given can be read from where it runs (tune runs it in a scratch
# directory), records the path, and writes a bench_ab CSV row.
make_stubs() {
    mkdir -p "$BATS_TEST_TMPDIR/stubbin"
    cat > "$BATS_TEST_TMPDIR/stub-bench" <<EOF
#!/usr/bin/env bash
shapes= csv=
while [ \$# -gt 0 ]; do
  case \$1 in --shapes) shapes=\$2; shift 2 ;; --csv) csv=\$2; shift 2 ;; *) shift ;; esac
done
[ -r "\$shapes" ] || { echo "stub bench: cannot read --shapes '\$shapes' in \$PWD" >&2; exit 9; }
echo "\$shapes" >> "$BATS_TEST_TMPDIR/bench-shapes"
printf '%s\n' "gpu,suite,dtype,layout,m,n,k,ours_ms,cublas_ms,speedup,route" \\
  "NVIDIA H100 80GB HBM3,shapes,bf16,TN,4096,16,4096,1,1.1,1.100,skinny_tn_bf16_n8_m16_ck1" > "\$csv"
EOF
    chmod +x "$BATS_TEST_TMPDIR/stub-bench"
    # the compute capability tune asks nvidia-smi for
    printf '#!/bin/sh\necho 9.0\n' > "$BATS_TEST_TMPDIR/stubbin/nvidia-smi"
    chmod +x "$BATS_TEST_TMPDIR/stubbin/nvidia-smi"
    mkdir -p "$BATS_TEST_TMPDIR/work"
}

@test "table: relative --shapes, --report and -o are the caller's (benchmark stubbed, no GPU)" {
    make_stubs
    cd "$BATS_TEST_TMPDIR/work"
    printf 'bf16 TN 4096 16 4096\n' > shapes.txt
    run --separate-stderr env PATH="$BATS_TEST_TMPDIR/stubbin:$PATH" GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" \
        GEMMSHIM_BENCH="$BATS_TEST_TMPDIR/stub-bench" "$L" table --shapes shapes.txt -o t.table --kernels skinny
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    no_crash_text
    expect_eq "$(cat "$BATS_TEST_TMPDIR/bench-shapes")" "$BATS_TEST_TMPDIR/work/shapes.txt"
    [ -f "$BATS_TEST_TMPDIR/work/t.table" ]
    expect_contains "$(cat t.table)" "skinny - 90 bf16 TN 4096 16 4096 1.100 H100"
    expect_contains "$stderr" "gemmshim table: wrote $BATS_TEST_TMPDIR/work/t.table"

    # --report: the report's shapes, the table beside the caller
    cp "$REPORT_CSV" ab.csv
    rm -f "$BATS_TEST_TMPDIR/bench-shapes"
    run --separate-stderr env PATH="$BATS_TEST_TMPDIR/stubbin:$PATH" GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" \
        GEMMSHIM_BENCH="$BATS_TEST_TMPDIR/stub-bench" "$L" table --report ab.csv -o from-report.table \
        --kernels sgemm_simt,skinny --rounds 2
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    no_crash_text
    expect_eq "$(wc -l < "$BATS_TEST_TMPDIR/bench-shapes")" 2 "one benchmark run per kernel"
    [ -f "$BATS_TEST_TMPDIR/work/from-report.table" ]
}

@test "table: a benchmark's exit status is passed on (77: no GPU)" {
    make_stubs
    printf '#!/bin/sh\necho "bench_ab: no CUDA device" >&2\nexit 77\n' > "$BATS_TEST_TMPDIR/nogpu-bench"
    chmod +x "$BATS_TEST_TMPDIR/nogpu-bench"
    printf 'bf16 TN 4096 16 4096\n' > "$BATS_TEST_TMPDIR/work/shapes.txt"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" GEMMSHIM_BENCH="$BATS_TEST_TMPDIR/nogpu-bench" \
        "$L" table --shapes "$BATS_TEST_TMPDIR/work/shapes.txt" -o "$BATS_TEST_TMPDIR/work/t.table" --kernels skinny
    echo "$output"; echo "$stderr"
    [ "$status" -eq 77 ]
    expect_contains "$stderr" "no CUDA device"
    expect_contains "$stderr" "gemmshim: table: the benchmark failed for skinny (exit 77)"
    [ ! -e "$BATS_TEST_TMPDIR/work/t.table" ]
}

@test "tune --cache F -- APP: online tuning into F; run --cache F: routes from it; the old tune usage points to table" {
    # a simulated device runs no kernels, so nothing is timed: the prior
    # decides every call, and the cache gets this process's header
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" GEMMSHIM_TEST_DEVICE=sm_90:132 \
        GEMMSHIM_LOG=stderr FAKE_CUBLAS_RECORD="$BATS_TEST_TMPDIR/rec" \
        LD_LIBRARY_PATH="$FAKE_DIR" "$L" tune --cache "$BATS_TEST_TMPDIR/app.cache" -- "$SAMPLE"
    echo "$stderr"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "tune: cache $BATS_TEST_TMPDIR/app.cache: 0 decisions"
    expect_contains "$stderr" "-> forward (sgemm_simt measured 0.63x cuBLAS for this class)"
    head -3 "$BATS_TEST_TMPDIR/app.cache" | grep -q '^validator gpu=.* sms=132 cc=90 '
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" GEMMSHIM_TEST_DEVICE=sm_90:132 \
        GEMMSHIM_LOG=stderr FAKE_CUBLAS_RECORD="$BATS_TEST_TMPDIR/rec" \
        LD_LIBRARY_PATH="$FAKE_DIR" "$L" run --cache "$BATS_TEST_TMPDIR/app.cache" -- "$SAMPLE"
    [ "$status" -eq 0 ]
    expect_contains "$stderr" "tune: cache $BATS_TEST_TMPDIR/app.cache: 0 decisions"
    ! grep -q "tuning:" <<<"$stderr"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" tune -- true
    one_error 2 "gemmshim: tune needs --cache FILE (where the decisions go)"
    run --separate-stderr env GEMMSHIM_LIBRARY="$GEMMSHIM_LIB" "$L" tune --shapes s -o t
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "a routing table from shapes is 'gemmshim table'"
}
