#!/usr/bin/env bash
# Real applications under the shim (GPU machine with PyTorch, CuPy, JAX):
# each app plain, then under GEMMSHIM_MODE=verify with every eligible call
# routed (zero mismatches required, routed kernels listed), then the MLP
# block plain vs under the shim (default policy and eligible) as a ratio;
# an odd vocabulary's head against fp64, shim off and on.
#   tests/apps/run_apps.sh LIBGEMMSHIM OUT_DIR
set -u
lib=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
fails=0
for app in torch_app cupy_app jax_app decode_app multi_gpu_app; do
  python3 "$here/$app.py" > "$out/$app-plain.txt" 2>&1; rc_plain=$?
  # XLA finds cuBLASLt with dlsym on its own handle: JAX needs GEMMSHIM_DLSYM=1
  dl=0
  [ $app = jax_app ] && dl=1
  GEMMSHIM_MODE=verify GEMMSHIM_VERIFY_FAIL=exit GEMMSHIM_POLICY=eligible GEMMSHIM_DLSYM=$dl \
    GEMMSHIM_LOG="$out/$app-shim.log" LD_PRELOAD=$lib python3 "$here/$app.py" \
    > "$out/$app-shim.txt" 2>&1; rc_shim=$?
  verdict=$(grep -h 'verify:' "$out/$app-shim.txt" | tail -1)
  routed=$(grep -o -- '-> [a-z_0-9x]*' "$out/$app-shim.log" | sort | uniq -c | tr '\n' ';')
  echo "$app: plain rc=$rc_plain, under verify rc=$rc_shim; ${verdict:-no routed call verified}; routes:$routed"
  [ $rc_plain -eq 0 ] && [ $rc_shim -eq 0 ] || fails=$((fails + 1))
done
# A language-model head of an odd vocabulary: the logits (a C that TMA cannot
# store) and its backward GEMMs (an operand TMA cannot load, packed), shim
# off and on in one process, each against fp64
GEMMSHIM_POLICY=eligible GEMMSHIM_LOG="$out/vocab.log" LD_PRELOAD=$lib python3 "$here/vocab_accuracy.py" \
  > "$out/vocab.txt" 2>&1 || fails=$((fails + 1))
cat "$out/vocab.txt"
plain=$(python3 "$here/mlp_bench.py" | sed -n 's/.*: \([0-9.]*\) ms.*/\1/p')
table=$(LD_PRELOAD=$lib GEMMSHIM_LOG_TIMING=0 GEMMSHIM_LOG="$out/mlp-table.log" python3 "$here/mlp_bench.py" | sed -n 's/.*: \([0-9.]*\) ms.*/\1/p')
elig=$(LD_PRELOAD=$lib GEMMSHIM_LOG_TIMING=0 GEMMSHIM_POLICY=eligible GEMMSHIM_LOG="$out/mlp-eligible.log" python3 "$here/mlp_bench.py" | sed -n 's/.*: \([0-9.]*\) ms.*/\1/p')
echo "mlp_bench (4096 tokens, 4096->14336->4096 bf16, fwd+bwd): plain $plain ms, shim (default) $table ms, shim (eligible) $elig ms"
python3 -c "p,t,e=$plain,$table,$elig; print(f'mlp_bench: speedup default {p/t:.3f}x, eligible {p/e:.3f}x')" ||
  { echo "FAIL: mlp_bench readings missing"; fails=$((fails + 1)); }
echo "mlp routes (default): $(grep -o -- '-> [a-z_0-9x]*' "$out/mlp-table.log" | sort | uniq -c | tr '\n' ';')"
echo "mlp routes (eligible): $(grep -o -- '-> [a-z_0-9x]*' "$out/mlp-eligible.log" | sort | uniq -c | tr '\n' ';')"
# Decode: LAYERS layers' projections in one CUDA graph, replayed (and eager)
python3 "$here/decode_bench.py" > "$out/decode-plain.txt" 2>&1 || fails=$((fails + 1))
LD_PRELOAD=$lib GEMMSHIM_LOG_TIMING=0 GEMMSHIM_LOG="$out/decode-table.log" python3 "$here/decode_bench.py" \
  > "$out/decode-table.txt" 2>&1 || fails=$((fails + 1))
LD_PRELOAD=$lib GEMMSHIM_LOG_TIMING=0 GEMMSHIM_POLICY=eligible GEMMSHIM_LOG="$out/decode-eligible.log" \
  python3 "$here/decode_bench.py" > "$out/decode-eligible.txt" 2>&1 || fails=$((fails + 1))
cat "$out/decode-plain.txt"
python3 - "$out" <<'PY' || { echo "FAIL: decode_bench readings missing"; fails=$((fails + 1)); }
import re, sys
def read(name):
    rows = {}
    for line in open(f"{sys.argv[1]}/decode-{name}.txt"):
        m = re.match(r"decode_bench n=(\d+): graph ([0-9.]+) ms .* eager ([0-9.]+) ms", line)
        if m:
            rows[int(m[1])] = (float(m[2]), float(m[3]))
    return rows
p, t, e = read("plain"), read("table"), read("eligible")
for n in sorted(p):
    if n in t and n in e:
        print(f"decode_bench n={n}: speedup graph default {p[n][0] / t[n][0]:.3f}x, eligible "
              f"{p[n][0] / e[n][0]:.3f}x; eager default {p[n][1] / t[n][1]:.3f}x, eligible "
              f"{p[n][1] / e[n][1]:.3f}x")
if not p or any(n not in t or n not in e for n in p):
    sys.exit(1)
PY
echo "decode routes (default): $(grep -o -- '-> [a-z_0-9x]*' "$out/decode-table.log" | sort | uniq -c | tr '\n' ';')"
echo "decode routes (eligible): $(grep -o -- '-> [a-z_0-9x]*' "$out/decode-eligible.log" | sort | uniq -c | tr '\n' ';')"
# grep's 1 (no line) passes; 0 (a line) and 2 (a log missing: the run did
# not happen, so it proved nothing) fail
grep -h -- '-> forward (split-K workspace' "$out"/decode-table.log "$out"/decode-eligible.log \
  "$out"/decode_app-shim.log; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a decode call forwarded for its workspace, or a log is missing (grep $rc)";
                   fails=$((fails + 1)); }
echo "run_apps: $fails app(s) failed"
exit $fails
