#!/usr/bin/env bash
# One CTest fuzz test (tests/fuzz/CMakeLists.txt):
#   run_fuzz.sh fuzz   BIN CORPUS WORK SECONDS DICT SKIP_REASON
#   run_fuzz.sh replay BIN CORPUS WORK SECONDS DICT SKIP_REASON
# fuzz: libFuzzer for SECONDS (GEMMSHIM_FUZZ_SECONDS in the environment
# overrides it) on WORK/corpus, a copy of the in-tree CORPUS (new inputs
# stay in the build tree), with DICT if that file exists; a crash is saved
# under WORK/artifacts/.
# replay: every file of CORPUS once. SKIP_REASON non-empty: exit 77 (skipped).
set -u
mode=$1 bin=$2 corpus=$3 work=$4 seconds=${GEMMSHIM_FUZZ_SECONDS:-$5} dict=$6 skip=${7:-}
name=$(basename "$bin")
if [ -n "$skip" ]; then
  echo "SKIP $name: $skip"
  exit 77
fi
if [ ! -x "$bin" ]; then
  echo "$name: $bin was not built"
  exit 1
fi
# libFuzzer's own exit code for a crash or a timeout is 77, which CTest
# reads as "skipped" (SKIP_RETURN_CODE): a failing input must fail the test
common=(-timeout=5 -rss_limit_mb=2048 -error_exitcode=1 -timeout_exitcode=1)
case $mode in
  replay)
    shopt -s nullglob
    files=("$corpus"/*)
    if [ ${#files[@]} -eq 0 ]; then
      echo "$name: no seed files in $corpus"
      exit 1
    fi
    "$bin" "${common[@]}" "${files[@]}"
    rc=$?
    # 77 is this script's "skipped" alone (SKIP_REASON above)
    [ $rc -ne 77 ] || rc=1
    exit $rc
    ;;
  fuzz)
    rm -rf "$work/artifacts"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "$corpus"/* "$work/corpus/"
    dict_arg=()
    if [ -f "$dict" ]; then dict_arg=(-dict="$dict"); fi
    # libFuzzer stops itself after max_total_time; the outer limit is for
    # a fuzzer that cannot (a hang outside an input's -timeout)
    timeout $((seconds + 120)) "$bin" "${common[@]}" -max_total_time="$seconds" \
      ${dict_arg[@]+"${dict_arg[@]}"} -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus"
    rc=$?
    [ $rc -ne 77 ] || rc=1
    if [ $rc -ne 0 ]; then
      echo "$name: failed (exit $rc); the input that failed:"
      ls -l "$work/artifacts/" 2>/dev/null
      echo "reproduce: $bin $work/artifacts/<file>; once fixed, copy it into" \
           "$corpus/ (replayed by ${name}_replay)"
    fi
    exit $rc
    ;;
  *)
    echo "run_fuzz.sh: unknown mode '$mode'"
    exit 2
    ;;
esac
