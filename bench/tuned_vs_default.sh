#!/usr/bin/env bash
# Tuned decisions against the default policy in steady state, per bench
# suite: bench_ab twice under the default policy (the A/A control: the same
# routes measured twice), then bench/tuned_ab.sh (a tuning pass, then a
# measured pass from its cache); one line per shape with both defaults, the
# tuned ratio and tuned minus their mean, then per suite the A/A spread and
# the worst tuned - default.
#   bench/tuned_vs_default.sh LIB BENCH_AB OUT_DIR SUITE...   (e.g. pingpong decode prefill)
# A SUITE that names a file is a shape list (bench_ab --shapes), reported
# under its file name without the extension (bench/shapes/odd.txt -> odd).
set -u
[ $# -ge 4 ] || { echo "usage: $0 LIB BENCH_AB OUT_DIR SUITE..." >&2; exit 2; }
lib=$1 bench=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
names=()
for suite in "$@"; do
  if [ -f "$suite" ]; then
    name=$(basename "${suite%.*}") pick=(--shapes "$suite")
  else
    name=$suite pick=(--suite "$suite")
  fi
  names+=("$name")
  for i in 1 2; do
    GEMMSHIM_POLICY=table GEMMSHIM_LOG="$out/def$i-$name.log" GEMMSHIM_LOG_TIMING=0 LD_PRELOAD=$lib \
      "$bench" "${pick[@]}" --rounds 7 --csv "$out/def$i-$name.csv" >/dev/null 2>&1
  done
  bash "$here/tuned_ab.sh" "$lib" "$bench" "$out/tuned-$name" "${pick[@]}" --rounds 7
done
python3 - "$out" "${names[@]}" <<'PY'
import csv, sys
d = sys.argv[1]
def rows(f):
    return {(r['dtype'], r['layout'], r['m'], r['n'], r['k']): (float(r['speedup']), r.get('route', ''))
            for r in csv.DictReader(open(f)) if r['speedup'] not in ('', 'nan')}
for s in sys.argv[2:]:
    a, b, t = rows(f"{d}/def1-{s}.csv"), rows(f"{d}/def2-{s}.csv"), rows(f"{d}/tuned-{s}.csv")
    print(f"== {s}: shape  default1  default2  tuned  tuned-mean(default)  route default -> tuned")
    # worst over every row, and over the rows whose route tuning changed:
    # where it kept the default's route, tuned - default is the A/A noise
    worst, worst_changed, changed, aa = 0.0, 0.0, 0, []
    for k in a:
        if k in b and k in t:
            dm = (a[k][0] + b[k][0]) / 2
            print(f"{' '.join(k)}  {a[k][0]:.3f} {b[k][0]:.3f} {t[k][0]:.3f} {t[k][0]-dm:+.3f}  "
                  f"{a[k][1]} -> {t[k][1]}")
            worst = min(worst, t[k][0] - dm)
            if a[k][1] != t[k][1]:
                changed += 1
                worst_changed = min(worst_changed, t[k][0] - dm)
            aa.append(abs(a[k][0] - b[k][0]))
    aa.sort()
    print(f"{s}: A/A |default1 - default2| median {aa[len(aa)//2]:.3f} max {aa[-1]:.3f}; "
          f"worst tuned - default {worst:+.3f}; {changed} routes changed, worst of them {worst_changed:+.3f}")
PY
