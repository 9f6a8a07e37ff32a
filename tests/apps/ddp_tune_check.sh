#!/usr/bin/env bash
# A torchrun job of N ranks sharing one tune cache tunes each signature
# once: run tests/apps/ddp_tune_app.py under the shim with online tuning,
# then count each signature's decision lines over every rank's log.
#   tests/apps/ddp_tune_check.sh LIBGEMMSHIM DIR [RANKS]
# Exit 0: every decided signature decided by exactly one process; 1
# otherwise or when the job failed; 77 with fewer GPUs than ranks.
set -u
lib=$1 dir=$2 ranks=${3:-2}
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$n" -ge "$ranks" ] || { echo "SKIP: $n GPUs, the job needs $ranks"; exit 77; }
command -v torchrun >/dev/null || { echo "SKIP: no torchrun"; exit 77; }
mkdir -p "$dir"; rm -f "$dir"/ddp.cache "$dir"/ddp.*.log
GEMMSHIM_TUNE=online GEMMSHIM_TUNE_SHARE=0 GEMMSHIM_TUNE_CACHE="$dir/ddp.cache" \
  GEMMSHIM_LOG="$dir/ddp.%p.log" LD_PRELOAD="$lib" \
  torchrun --standalone --nproc_per_node "$ranks" "$(dirname "$0")/ddp_tune_app.py" || {
  echo "FAIL: the torchrun job failed"; exit 1; }
# "tune: SHAPE -> ROUTE ... tuned by pid P": one per signature, over all logs
cat "$dir"/ddp.*.log | grep -E 'tune: .* -> ' | sed -E 's/ -> .*tuned by pid ([0-9]+).*/\t\1/' \
  | sort > "$dir/ddp.decisions"
total=$(wc -l < "$dir/ddp.decisions")
twice=$(cut -f1 "$dir/ddp.decisions" | uniq -d | wc -l)
pids=$(cut -f2 "$dir/ddp.decisions" | sort | uniq -c | awk '{printf "%s by pid %s; ", $1, $2}')
waited=$(cat "$dir"/ddp.*.log | grep -c 'the prior (.*) serves it until its decision is in the cache')
echo "ddp: $total decisions over $ranks ranks ($pids$waited waits for another rank's decision), $twice signatures decided twice"
[ "$total" -gt 0 ] || { echo "FAIL: nothing was decided"; exit 1; }
[ "$twice" -eq 0 ] || { echo "FAIL: signatures tuned by more than one rank:"; cut -f1 "$dir/ddp.decisions" | uniq -d; exit 1; }
echo "ddp: every signature tuned once"
