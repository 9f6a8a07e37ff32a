#!/usr/bin/env bats
# The bench tools that turn measurements into tables: bench/models/ceiling.py
# (ceilings per workload), bench/models/run_all.sh's argument checks, and
# bench/table_from_csv.py's kernel name lists. Run on the committed H100
# results (bench/results/h100-tuning), so the numbers are known.

setup() {
    ROOT="${SHIM_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}"
    R="$ROOT/bench/results/h100-tuning"
}

@test "ceiling.py: a row per workload from the committed results" {
    run python3 "$ROOT/bench/models/ceiling.py" --models "$R/models-cache.jsonl" \
        --ab-prefix "$R/models-ab/ab" --cache "$R/models.cache" --json "$BATS_TEST_TMPDIR/c.json"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c '^llama_\|^gpt2_\|^vit_\|^bert_' <<<"$output")" -eq 9 ]
    # prefill: its three routed signatures, none by the prior; ceiling from the pair gains
    [[ "$output" =~ llama_prefill\ +22.284\ +14.745\ +0.66\ +3\ +0\ +1.025\ +1.019\ +0.992 ]]
    # nothing routed (an ab pass ran, no report): gains nothing, not "n/a"
    [[ "$output" =~ vit_tf32\ +15.348\ +6.394\ +0.42\ +0\ +0\ +1.000\ +1.000 ]]
}

@test "ceiling.py: a control run (--aa) or a smoke run does not stand in for the result" {
    models="$BATS_TEST_TMPDIR/m.jsonl"
    cp "$R/models-cache.jsonl" "$models"
    python3 - "$models" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
pre = next(r for r in recs if r.get("workload") == "llama_prefill" and "ab_iters" not in r)
with open(sys.argv[1], "a") as f:
    for flag in ("aa", "quick"):
        f.write(json.dumps(dict(pre, ratio_median=0.5, **{flag: True})) + "\n")
PY
    run python3 "$ROOT/bench/models/ceiling.py" --models "$models" \
        --ab-prefix "$R/models-ab/ab" --cache "$R/models.cache"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" =~ llama_prefill.*0.992 ]]
    [[ ! "$output" =~ 0.500 ]]
}

@test "ceiling.py: without an ab pass the ceilings are n/a" {
    models="$BATS_TEST_TMPDIR/m.jsonl"
    grep -v '"ab_iters"' "$R/models-cache.jsonl" > "$models"
    run python3 "$ROOT/bench/models/ceiling.py" --models "$models" \
        --ab-prefix "$BATS_TEST_TMPDIR/none" --cache "$R/models.cache"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" =~ gpt2_train.*n/a\ +n/a\ +1.023 ]]
}

@test "run_all.sh: --ab-iters must be a count and needs --ab-prefix" {
    run bash "$ROOT/bench/models/run_all.sh" --ab-iters x --out "$BATS_TEST_TMPDIR/o.jsonl"
    [ "$status" -eq 2 ]
    [[ "$output" =~ "--ab-iters N" ]]
    run bash "$ROOT/bench/models/run_all.sh" --ab-iters 5 --out "$BATS_TEST_TMPDIR/o.jsonl"
    [ "$status" -eq 2 ]
    [[ "$output" =~ "needs --ab-prefix" ]]
}

@test "run_all.sh: --eager-warmup takes a count" {
    for bad in x -3 ""; do
        run bash "$ROOT/bench/models/run_all.sh" --eager-warmup "$bad" --out "$BATS_TEST_TMPDIR/o.jsonl"
        [ "$status" -eq 2 ]
        [[ "$output" =~ "--eager-warmup N" ]]
    done
    run bash "$ROOT/bench/models/run_all.sh" --eager-warmup
    [ "$status" -eq 2 ]
}

@test "table_from_csv.py: without the families' kernel name lists it refuses, not an empty table" {
    mkdir -p "$BATS_TEST_TMPDIR/alone"
    cp "$ROOT/bench/table_from_csv.py" "$BATS_TEST_TMPDIR/alone/"
    run python3 "$BATS_TEST_TMPDIR/alone/table_from_csv.py" --text 90 "$BATS_TEST_TMPDIR/t.table" \
        "$ROOT/bench/results/h200-ab-report-sgemm.csv"
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" =~ "no kernel name lists" ]]
    [ ! -e "$BATS_TEST_TMPDIR/t.table" ]
}

@test "gs_bench: passes sized on the faster mode to --round-s / --settle-s; explicit counts and --quick win" {
    run env PYTHONPATH="$ROOT/tests/bats/fixtures/torch_stub:$ROOT/bench/models" \
        python3 "$ROOT/tests/bats/fixtures/gs_bench_sizing.py"
    echo "$output"
    [ "$status" -eq 0 ]
    # OFF 1 ms, ON 2 ms an iteration: 1 s / 1 ms and 0.3 s / 1 ms, so ON's pass runs 2 s
    [[ "$output" =~ "iters=1000 warmup=300 round_s=1.0 eager_warmup=0 probes=2" ]]
    run env PYTHONPATH="$ROOT/tests/bats/fixtures/torch_stub:$ROOT/bench/models" \
        python3 "$ROOT/tests/bats/fixtures/gs_bench_sizing.py" --iters 7 --eager-warmup 5
    echo "$output"
    [[ "$output" =~ "iters=7 warmup=300 round_s=None eager_warmup=5 probes=12" ]]
    run env PYTHONPATH="$ROOT/tests/bats/fixtures/torch_stub:$ROOT/bench/models" \
        python3 "$ROOT/tests/bats/fixtures/gs_bench_sizing.py" --quick
    echo "$output"
    [[ "$output" =~ "iters=2 warmup=1 round_s=None" ]]
}

@test "gs_bench --off-holds: OFF routes too, with every signature (or those named) held at its prior" {
    run env PYTHONPATH="$ROOT/tests/bats/fixtures/torch_stub:$ROOT/bench/models" \
        python3 "$ROOT/tests/bats/fixtures/gs_bench_holds.py"
    echo "$output"
    [[ "$output" =~ "off: set_mode(0,)" ]]
    [[ "$output" =~ "on: set_mode(1,)" ]]
    run env PYTHONPATH="$ROOT/tests/bats/fixtures/torch_stub:$ROOT/bench/models" \
        python3 "$ROOT/tests/bats/fixtures/gs_bench_holds.py" --off-holds all
    echo "$output"
    [[ "$output" =~ "off: hold(None, 0) hold(None, 1) set_mode(1,)" ]]
    [[ "$output" =~ "on: hold(None, 0) set_mode(1,)" ]]
    run env PYTHONPATH="$ROOT/tests/bats/fixtures/torch_stub:$ROOT/bench/models" \
        python3 "$ROOT/tests/bats/fixtures/gs_bench_holds.py" --off-holds ab12,cd34
    echo "$output"
    [[ "$output" =~ "off: hold(None, 0) hold('ab12', 1) hold('cd34', 1) set_mode(1,)" ]]
}

@test "gs_bench under GEMMSHIM_MODE=verify: ON keeps verifying, OFF forwards" {
    # ON used to switch to plain ON, so a model run under verify compared nothing
    run env GS_INITIAL_MODE=2 PYTHONPATH="$ROOT/tests/bats/fixtures/torch_stub:$ROOT/bench/models" \
        python3 "$ROOT/tests/bats/fixtures/gs_bench_holds.py"
    echo "$output"
    [[ "$output" =~ "off: set_mode(0,)" ]]
    [[ "$output" =~ "on: set_mode(2,)" ]]
}

@test "gs_trace: incremental attribution charges overlap once and adds up to the span" {
    run python3 - "$ROOT/bench/models" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import gs_trace
# two iterations: a norm kernel, a GEMM that starts 2 us before the norm ends
# (programmatic dependent launch), a 3 us idle gap, the shim's decode kernel
# nested inside the GEMM's span, and a split-K reduction
trace = {"traceEvents": [
    {"cat": "kernel", "name": "elementwise_norm", "ts": 0, "dur": 10},
    {"cat": "kernel", "name": "nvjet_sm90_tst_64x16", "ts": 8, "dur": 22},
    {"cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 100},
    {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 3},
    {"cat": "kernel", "name": "skinny_tn<cfg>", "ts": 12, "dur": 5},
    {"cat": "Kernel", "name": "cublasLt::splitKreduce_kernel", "ts": 33, "dur": 4},
    {"cat": "kernel", "name": "fmha_cutlassF_attention", "ts": 37, "dur": 3},
    {"cat": "kernel", "name": "elementwise_norm", "ts": 40, "dur": 10},
    {"cat": "kernel", "name": "nvjet_sm90_tst_64x16", "ts": 48, "dur": 22},
]}
k = gs_trace.kernel_events(trace)
assert [n for _, _, n in k][:2] == ["elementwise_norm", "nvjet_sm90_tst_64x16"], k
assert len(k) == 7, k  # the CPU op is not a kernel; "Kernel" is
span, per = gs_trace.attribute(k)
assert span == 70, span
assert per["nvjet_sm90_tst_64x16"] == {"us": 40.0, "gap_us": 0.0, "calls": 2}, per
assert per["skinny_tn<cfg>"]["us"] == 0.0, per  # inside the GEMM: adds nothing
assert per["cublasLt::splitKreduce_kernel"] == {"us": 4.0, "gap_us": 3.0, "calls": 1}, per
assert sum(r["us"] + r["gap_us"] for r in per.values()) == span
s = gs_trace.summarize(k, 2)
assert (s["span_us"], s["gemm_us"], s["other_us"], s["gaps_us"]) == (35.0, 22.0, 11.5, 1.5), s
assert s["kernels_per_iter"] == 3.5, s
assert [x["name"] for x in s["top_gemm_kernels"]] == [
    "nvjet_sm90_tst_64x16", "cublasLt::splitKreduce_kernel", "skinny_tn<cfg>"], s
assert not gs_trace.is_gemm_kernel("fmha_cutlassF_attention")
assert gs_trace.summarize([], 3)["span_us"] == 0.0
print("ok")
PY
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = ok ]
}

@test "run_all.sh: --attribute takes a count" {
    for bad in x -1 ""; do
        run bash "$ROOT/bench/models/run_all.sh" --attribute "$bad" --out "$BATS_TEST_TMPDIR/o.jsonl"
        [ "$status" -eq 2 ]
        [[ "$output" =~ "--attribute N" ]]
    done
    run bash "$ROOT/bench/models/run_all.sh" --attribute=y --out "$BATS_TEST_TMPDIR/o.jsonl"
    [ "$status" -eq 2 ]
    [[ "$output" =~ "--attribute N" ]]
}

# bench_ab (bench/bench_ab.c) on a CPU: its options, --tensor among them,
# parsed before it looks for a GPU
@test "bench_ab: its usage names --tensor; a bad option or shape list fails before the GPU check" {
    B="$SHIM_BUILD_DIR/bin/bench_ab"
    [ -x "$B" ] || skip "bench_ab not built (GEMMSHIM_BUILD_BENCH=OFF)"
    run "$B" --bogus
    [ "$status" -eq 2 ]
    [[ "$output" == *"[--floor] [--tensor] [--graph] [--between]"* ]]
    printf 'not a shape\n' > "$BATS_TEST_TMPDIR/bad.txt"
    run "$B" --tensor --shapes "$BATS_TEST_TMPDIR/bad.txt"
    [ "$status" -eq 2 ]
}

# bench_fp8 (bench/bench_fp8.c) on a CPU: its usage, its suites as shape
# lists, and the errors it reports before it looks for a GPU
@test "bench_fp8: --help, usage errors, and its suites listed as a --shapes list that reads back" {
    B="$SHIM_BUILD_DIR/bin/bench_fp8"
    [ -x "$B" ] || skip "bench_fp8 not built (GEMMSHIM_BUILD_BENCH=OFF)"
    run "$B" --help
    [ "$status" -eq 0 ]
    [[ "$output" =~ "usage: ".*"--suite fp8|fp8-decode|fp8-all" ]]
    for bad in "--bogus" "--rounds 0" "--rounds" "--shim-only x"; do
        run "$B" $bad
        [ "$status" -eq 2 ]
        [[ "$output" =~ "usage: " ]]
    done
    run "$B" --suite nope
    [ "$status" -eq 2 ]
    [[ "$output" =~ "unknown suite 'nope'" ]]
    run "$B" --suite fp8 --list
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 96 ]
    # forward e4m3, backward with the gradient (B) in e5m2, every scale mode, both accumulations
    for want in "e4m3xe5m2 row     exact  14336   8192   4096  # fp8 8B.down.dgrad" \
                "e4m3xe5m2 tensor  exact  14336   4096   8192  # fp8 8B.down.wgrad" \
                "e4m3      block   exact  28672   8192   8192  # fp8 70B.gate" \
                "e4m3      block-t exact  14336   8192   4096  # fp8 8B.gate" \
                "e4m3      vec128  exact  28672   8192   8192  # fp8 70B.gate" \
                "e4m3      row     fast    8192  16384  28672  # fp8 70B.down"; do
        [[ "$output" == *"$want"* ]] || { echo "missing: $want"; false; }
    done
    run "$B" --suite fp8-decode --list
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 60 ]
    [[ "$output" == *"e4m3      row     exact  28672      1   8192  # fp8-decode 70B.gate"* ]]
    run "$B" --list
    [ "${#lines[@]}" -eq 156 ]
    printf '%s\n' "${lines[@]}" > "$BATS_TEST_TMPDIR/all.txt"
    run "$B" --shapes "$BATS_TEST_TMPDIR/all.txt" --list
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "${lines[@]}" | sed 's/ *#.*//')" = "$(sed 's/ *#.*//' "$BATS_TEST_TMPDIR/all.txt")" ]
    printf '# a comment\n\ne4m3 row fast 64 16 128\nbf16 tensor fast 16 16 16\n' > "$BATS_TEST_TMPDIR/bad.txt"
    run "$B" --shapes "$BATS_TEST_TMPDIR/bad.txt"
    [ "$status" -eq 2 ]
    [[ "$output" =~ "bad.txt:4: expected 'TYPES SCALES ACCUM M N K'" ]]
}

@test "fp8_ab.sh: argument checks, and the geomeans per accumulation from the measured pass's CSV" {
    S="$ROOT/bench/fp8_ab.sh"
    run bash "$S" lib bench
    [ "$status" -eq 2 ]
    [[ "$output" =~ "usage: " ]]
    for bad in "--rounds x" "--tune-calls 0" "--bogus 1"; do
        run bash "$S" lib bench "$BATS_TEST_TMPDIR/o" $bad
        [ "$status" -eq 2 ]
    done
    # a stand-in bench_fp8: the tuning pass's table, then the measured pass's CSV
    fake="$BATS_TEST_TMPDIR/fake_bench"
    cat > "$fake" <<'SH'
#!/bin/sh
csv=""; tune=0
while [ $# -gt 0 ]; do
  case $1 in --csv) csv=$2; shift 2 ;; --shim-only) tune=1; shift 2 ;; *) shift ;; esac
done
if [ $tune = 1 ]; then
  echo "gemmshim: tune: 2 signatures decided" > "$GEMMSHIM_LOG"
  echo "fp8 8B.qkv e4m3 tensor fast 6144 8192 4096  40 calls, decided  cublaslt (tuned)"
  echo "fp8 8B.qkv e4m3 block exact 6144 8192 4096  8 calls, not tuned  forward (scale modes)"
  exit 0
fi
h=gpu,suite,op,a_type,b_type,scale_a,scale_b,fast_accum,m,n,k,shim_ms,as_called_ms,best8_ms,shim_tflops,as_called_tflops,best8_tflops,shim_vs_as_called,shim_vs_best8,best8_vs_as_called,best8_index,best8_of,rel_diff,route,weight_bytes,shim_weight_tbs,as_called_weight_tbs,best8_weight_tbs,shim_host_us,as_called_host_us,tensor_ms,tensor_tflops,ceiling_vs_as_called,status
{ echo "$h"
  echo "G,fp8,a,e4m3,e4m3,scalar,scalar,1,6144,8192,4096,1,1.1,1,,,,1.1000,1.0000,1.1000,0,8,1e-3,x,0,,,,1,1,0.9,1200,1.1000,ok"
  echo "G,fp8,b,e4m3,e4m3,scalar,scalar,1,4096,8192,4096,1,0.9,1,,,,0.9000,1.0000,0.9000,1,8,1e-3,forward,0,,,,1,1,0.75,1400,1.2000,ok"
  echo "G,fp8,c,e4m3,e4m3,scalar,scalar,0,4096,8192,4096,1,1.2,1.1,,,,1.2000,1.1000,1.0909,2,8,1e-3,x,0,,,,1,1,1,1000,1.2000,ok"
  echo "G,fp8-decode,d,e4m3,e4m3,outer_vec,outer_vec,0,4096,16,14336,1,1.5,1.2,,,,1.5000,1.2000,1.2500,0,8,1e-3,x,0,1,1,1,1,1,,,,ok"
  echo "G,fp8,e,e4m3,e4m3,blk128x128,vec128,1,4096,8192,4096,,,,,,,,,,,,,,,,,,,,,,,skipped: cuBLASLt refuses the call as made (status 15)"
} > "$csv"
echo "the measured pass's table"
SH
    chmod +x "$fake"
    run bash "$S" "" "$fake" "$BATS_TEST_TMPDIR/o" --suite fp8 --rounds 3
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"fp8_ab: tuning pass: 1 rows decided, 0 still tuning at the cap, 1 not tuned"* ]]
    [[ "$output" == *"the measured pass's table"* ]]
    [[ "$output" == *"large shapes, fast accumulation on: geomean shim/as_called 0.995 (min 0.900, 2 rows), shim/best8 1.000 (min 1.000, 2 rows)"* ]]
    [[ "$output" == *"large shapes, fast accumulation off: geomean shim/as_called 1.200"* ]]
    # the tensor probe's ceiling over the large rows, none for decode rows
    [[ "$output" == *"shim/best8 1.000 (min 1.000, 2 rows), best8/as_called 0.995 (min 0.900, 2 rows), tensor probe/as_called 1.149 (min 1.100, 2 rows)"* ]]
    ! grep -q "decode (n <= 64).*tensor probe" <<< "$output"
    [[ "$output" == *"decode (n <= 64), fast accumulation off: geomean shim/as_called 1.500"* ]]
    [[ "$output" == *"below 0.97x as called: b e4m3xe4m3 scalar/scalar fast=1 4096x8192x4096: 0.900x (forward)"* ]]
    [[ "$output" == *"skipped: cuBLASLt refuses the call as made (status 15): e"* ]]
    [[ "$output" == *"fp8_ab: 4 rows timed, 1 skipped"* ]]
}
