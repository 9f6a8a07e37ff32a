#!/usr/bin/env bats
# gemmshim record (GEMMSHIM_RECORD) and gemmshim report: the signature file
# of a run, several processes and runs appending to one file without losing
# or cutting lines, merged by summing per signature; recording changes no
# route; forked workers write their own calls; the report's shares and
# weighted gain. Captured sequences need a GPU to capture: their
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
    expect_eq "$(awk -F'\t' '{ sub("calls=", "", $4); n += $4 } END { print n }' <<<"$sigs")" 17 "calls"
    expect_contains "$sigs" $'\tcalls=2\tcaptured=0\ttimed=0\tms=\ttunable=1\t# cublasLtMatmul TN bf16,bf16->bf16 compute=32F m=1024 n=512 k=768 batch=1 lda=768 ldb=768 ldc=1024'
    expect_contains "$sigs" $'\ttunable=1\t# cublasLtMatmul TN bf16,bf16->bf16 compute=32F m=1024 n=512 k=768 batch=1 lda=768 ldb=768 ldc=1024 +bias(bf16)'
    expect_contains "$sigs" $'\ttunable=0\twhy=epilogue 2 not routed\t#'
    expect_contains "$sigs" $'\ttunable=0\twhy=C != D with beta != 0\t#'
    expect_eq "$(grep -c $'\ttunable=0\t' <<<"$sigs")" 8 \
        "relu, vector alpha, row-major, C != D, a-scale, per-batch bias, the FP8 output, an unaligned scale"
    expect_contains "$sigs" $'\ttunable=0\twhy=fp8 operands; A scale pointer not 16-byte aligned; scale modes A=OUTER_VEC_32F B=OUTER_VEC_32F; fast accumulation on\t#'
    # the FP8 subset cuBLASLt's algorithms take: tunable, its contract in its shape
    expect_contains "$sigs" $'\ttunable=1\t# cublasLtMatmul TN e4m3,e4m3->bf16 compute=32F m=1024 n=512 k=768 batch=1 lda=768 ldb=768 ldc=1024 scale_A=SCALAR_32F scale_B=SCALAR_32F fast_accum'
    expect_contains "$sigs" $'\ttunable=1\t# cublasLtMatmul TN e5m2,e4m3->bf16 compute=32F m=1024 n=512 k=768 batch=1 lda=768 ldb=768 ldc=1024 scale_A=OUTER_VEC_32F scale_B=OUTER_VEC_32F'
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

@test "launcher: record needs --out; --out is record's; report needs a readable --cache" {
    run --separate-stderr "$L" record -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: record needs --out SIGS"
    run --separate-stderr "$L" record --out -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: option --out needs a value"
    run --separate-stderr "$L" run --out x -- true
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: run: unknown option '--out' (--out is record's)"
    run --separate-stderr "$L" report --sigs x
    [ "$status" -eq 2 ]
    expect_contains "$stderr" "gemmshim: report needs --cache FILE"
    run --separate-stderr "$L" report --cache "$D/none"
    [ "$status" -eq 2 ]
    expect_eq "$stderr" "gemmshim: report --cache: cannot read '$D/none'"
    # a file of the wrong kind: one line, no traceback
    printf 'not a cache\n' > "$D/junk"
    run --separate-stderr "$L" report --cache "$D/junk"
    [ "$status" -eq 2 ]
    expect_eq "$stderr" "gemmshim: report: $D/junk is not a gemmshim tune cache (no '# gemmshim tune cache' first line)"
    printf '# gemmshim tune cache\nformat 1\nvalidator v\n' > "$D/empty.cache"
    run --separate-stderr "$L" report --cache "$D/empty.cache" --sigs "$D/junk"
    [ "$status" -eq 2 ]
    expect_eq "$stderr" "gemmshim: report: $D/junk is not a gemmshim signature file (no 'gemmshim-signatures' first line)"
    run --separate-stderr "$L" --help
    expect_contains "$output" "gemmshim record --out SIGS [options as for run] -- APP [ARGS...]"
    expect_contains "$output" "gemmshim report --cache FILE [--sigs SIGS]"
}

# A signature file of two processes and a tune cache, by hand, on the
# classes sample_calls records: 256^3 Sgemm (two processes' lines, timed
# 150 of 200 calls: 120 ms), bf16 GemmEx (40 ms), TF32 GemmEx (20 ms), the
# strided one (captured only: no time); a torn last line.
synthetic() {
    run_shim env GEMMSHIM_RECORD="$D/classes.sigs" "$SAMPLE"
    [ "$status" -eq 0 ]
    python3 - "$D/classes.sigs" "$D" <<'PY'
import sys
hexes = {}
for line in open(sys.argv[1]):
    p = line.rstrip("\n").split("\t")
    if p[0] == "sig":
        hexes[p[-1].split()[1] + " " + p[-1].split()[3] + " " + p[-1].split()[5]] = (p[1], p[2], p[-1])
sg, bf, tf, st = (hexes["cublasSgemm_v2 f32,f32->f32 m=256"], hexes["cublasGemmEx bf16,bf16->bf16 m=512"],
                  hexes["cublasGemmEx f32,f32->f32 m=128"], hexes["cublasSgemmStridedBatched f32,f32->f32 m=64"])
def sig(h, calls, captured, timed, ms):
    return f"sig\t{h[0]}\t{h[1]}\tcalls={calls}\tcaptured={captured}\ttimed={timed}\tms={ms}\ttunable=1\t{h[2]}\n"
head = "gemmshim-signatures\tformat=1\tgpu=H200\tsms=132\tcc=90\tdriver=1\tcublas=1\tcublaslt=1\tshim=0/x\n"
proc = "proc\thost=h\tpid=%d\ttime=1\tcalls=%d\tsigs=2\tdropped=0\tcaptures=0\tunplaced=0\tmode=on\tpolicy=table\ttune=off\tgpu=H200\n"
with open(sys.argv[2] + "/syn.sigs", "w") as f:
    f.write(head + proc % (1, 150) + sig(sg, 100, 0, 100, "60.000000") + sig(bf, 50, 0, 50, "40.000000")
            + proc % (2, 130) + sig(sg, 100, 0, 50, "30.000000") + sig(tf, 20, 0, 20, "20.000000")
            + sig(st, 10, 10, 0, "") + "sig\t" + sg[0][:100])
cache = ["# gemmshim tune cache", "format 2",
         "validator gpu=H200 sms=132 cc=90 driver=2 cublas=1 cublaslt=1 shim=0/x kernels=all",
         f"sig\t{sg[0]}\tcublaslt\talgo=1\tgain=1.5000\tlo95=1.4000\tpairs=10\tms=2.000\t# ",
         f"sig\t{bf[0]}\tcublas\tas_called\tgain=1.0000\tlo95=1.0000\tpairs=0\tms=1.000\t# ",
         f"sig\t{bf[0]}\tpingpong\tpingpong_128x128x64\tgain=1.2500\tlo95=1.2000\tpairs=10\tms=1.000\tprior=cublas\tvs_prior=1.2500\t# ",
         f"sig\t{tf[0]}\tcublas\tas_called\tgain=1.0000\tlo95=1.0000\tpairs=0\tms=1.000\tprior=sgemm_simt/sgemm_simt_64x64x8\tvs_prior=0.9524\t# "]
open(sys.argv[2] + "/syn.cache", "w").write("\n".join(cache) + "\n")
PY
}

@test "report: shares of the recorded GPU time, the decisions (a later line wins), gains over cuBLAS and the prior, the weighted expectation" {
    synthetic
    run --separate-stderr "$L" report --cache "$D/syn.cache" --sigs "$D/syn.sigs"
    echo "$output"; echo "$stderr"
    [ "$status" -eq 0 ]
    expect_eq "$stderr" "" "stderr"
    out=$(tr -s ' ' <<<"$output")
    expect_contains "$out" "cache $D/syn.cache: 3 decisions; validator gpu=H200"
    expect_contains "$out" "signatures $D/syn.sigs: 2 processes, 4 signatures, 280 calls (10 captured into graphs, 0 distinct sequences); 150.000 ms of GPU time in 220 timed calls; 1 malformed or torn lines skipped"
    expect_contains "$out" "note: recorded with driver=1, tuned with driver=2"
    # 256^3: 90 ms in 150 of its 200 calls -> 120 ms of 180
    expect_contains "$out" " 66.7% 200 0 cublaslt algo=1 1.500x 1.400 - cublasSgemm_v2 NN f32,f32->f32 compute=32F m=256 n=256 k=256 "
    expect_contains "$out" " 22.2% 50 0 pingpong pingpong_128x128x64 1.250x 1.200 1.250x cublasGemmEx TN bf16,bf16->bf16 "
    expect_contains "$out" " 11.1% 20 0 cublas 1.000x 1.000 0.952x cublasGemmEx NN f32,f32->f32 compute=32F_FAST_TF32 "
    expect_contains "$out" " - 10 10 undecided (the prior serves) - - - cublasSgemmStridedBatched NT "
    # 180 / (120/1.5 + 40/1.25 + 20/1) = 1.364; over the prior, the 256^3
    # decision (no prior recorded) left out: 60 / (40/1.25 + 20*1.05) = 1.132
    expect_contains "$out" "expected over cuBLAS as called: 1.364x on the GEMM time, weighted by recorded GPU time; signatures without a decision (0.0% of it) counted at 1.000x"
    expect_contains "$out" "expected over the prior: 1.132x (66.7% of the weight is decided without a prior recorded: left out)"
    expect_contains "$out" "note: 1 signatures (10 calls) have no GPU time (captured only, or not timed): not weighted"
    # the rows in order of their share
    expect_eq "$(grep -oE '^ +(-|[0-9.]+%) ' <<<"$output" | tr -d ' ' | tr '\n' ' ')" "66.7% 22.2% 11.1% - " "row order"
}

@test "report: without --sigs the cache's decisions; without recorded time, shares of FLOPs" {
    synthetic
    run --separate-stderr "$L" report --cache "$D/syn.cache"
    echo "$output"
    [ "$status" -eq 0 ]
    out=$(tr -s ' ' <<<"$output")
    expect_eq "$(grep -cE '^  [a-z].* [0-9.]+x ' <<<"$output")" 3 "three decisions"
    expect_contains "$out" "pingpong pingpong_128x128x64 1.250x 1.200 1.250x 10 cublasGemmEx TN bf16,bf16->bf16 compute=32F m=512 n=256 k=128 "
    ! grep -q expected <<<"$output"
    # the file sample_calls recorded (nothing timed without a GPU): FLOPs
    run --separate-stderr "$L" report --cache "$D/syn.cache" --sigs "$D/classes.sigs"
    echo "$output"
    [ "$status" -eq 0 ]
    out=$(tr -s ' ' <<<"$output")
    expect_contains "$out" " flop% calls captured decision"
    # FLOPs: 256^3 and the bf16 512x256x128 33.6M each, TF32 4.2M, strided
    # 4 x 0.26M: 33.6 of 72.4
    expect_contains "$out" " 46.4% 1 0 cublaslt algo=1 1.500x"
    expect_contains "$out" "weighted by FLOPs (no GPU time was recorded)"
}
