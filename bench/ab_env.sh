#!/usr/bin/env bash
# Same-run A/B of environment variants of one library: every variant's
# bench_ab run over one shape list, the variants taking turns, REPEATS times,
# so that each variant's ratio to cuBLAS is measured next to the others'.
#   bench/ab_env.sh BIN_ROOT OUT.csv SHAPES_FILE REPEATS NAME=ENV[,ENV...] ...
# e.g.  bench/ab_env.sh build out/sk.csv shapes.txt 2 \
#         sk-off=GEMMSHIM_DEV_PINGPONG_SK=0 sk-on=GEMMSHIM_DEV_PINGPONG_SK=1
# An ENV of "-" sets nothing. GEMMSHIM_KERNELS etc. from the caller's
# environment apply to every variant. OUT.csv: bench_ab's columns behind
# two more, variant and repeat. Prints, per shape, each variant's speedups.
set -u
root=$1 out=$2 shapes=$3 repeats=$4
shift 4
lib=$root/libgemmshim.so
tmp=$(mktemp -d)
: > "$out.body"
for r in $(seq 1 "$repeats"); do
  for spec in "$@"; do
    name=${spec%%=*} envs=${spec#*=}
    vars=()
    [ "$envs" = "-" ] || IFS=, read -r -a vars <<< "$envs"
    env "${vars[@]}" GEMMSHIM_LOG="$tmp/route.log" LD_PRELOAD="$lib" \
      "$root/bin/bench_ab" --shapes "$shapes" --csv "$tmp/part.csv" > "$tmp/run.txt" 2>&1 ||
      { echo "ab_env: $name, repeat $r failed:"; tail -5 "$tmp/run.txt"; }
    [ -f "$tmp/part.csv" ] || continue
    header=$(head -1 "$tmp/part.csv")
    tail -n +2 "$tmp/part.csv" | sed "s/^/$name,$r,/" >> "$out.body"
    rm -f "$tmp/part.csv"
  done
done
{ echo "variant,repeat,${header:-}"; cat "$out.body"; } > "$out"
rm -f "$out.body"
rm -rf "$tmp"
# per shape: each variant's speedups over the repeats, and the route
python3 - "$out" <<'EOF'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
by = collections.OrderedDict()
for r in rows:
    key = (r["dtype"], r["layout"], r["m"], r["n"], r["k"])
    by.setdefault(key, collections.OrderedDict()).setdefault(r["variant"], []).append(r)
for key, vs in by.items():
    cells = []
    for v, rs in vs.items():
        sp = "/".join(f'{float(x["speedup"]):.3f}' for x in rs)
        cells.append(f'{v} {sp} ({rs[-1]["route"]})')
    print(" ".join(key), " | ".join(cells))
EOF
