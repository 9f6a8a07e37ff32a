#!/usr/bin/env bash
# Real applications under the shim (GPU machine with PyTorch, CuPy, JAX):
# each app plain, then under GEMMSHIM_MODE=verify with every eligible call
# routed (zero mismatches required, routed kernels listed), then the MLP
# block plain vs under the shim (default policy and eligible) as a ratio.
#   tests/apps/run_apps.sh LIBGEMMSHIM OUT_DIR
set -u
lib=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1
fails=0
for app in torch_app cupy_app jax_app; do
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
plain=$(python3 "$here/mlp_bench.py" | sed -n 's/.*: \([0-9.]*\) ms.*/\1/p')
table=$(LD_PRELOAD=$lib GEMMSHIM_LOG="$out/mlp-table.log" python3 "$here/mlp_bench.py" | sed -n 's/.*: \([0-9.]*\) ms.*/\1/p')
elig=$(LD_PRELOAD=$lib GEMMSHIM_POLICY=eligible GEMMSHIM_LOG="$out/mlp-eligible.log" python3 "$here/mlp_bench.py" | sed -n 's/.*: \([0-9.]*\) ms.*/\1/p')
echo "mlp_bench (4096 tokens, 4096->14336->4096 bf16, fwd+bwd): plain $plain ms, shim (default) $table ms, shim (eligible) $elig ms"
python3 -c "p,t,e=$plain,$table,$elig; print(f'mlp_bench: speedup default {p/t:.3f}x, eligible {p/e:.3f}x')"
echo "mlp routes (default): $(grep -o -- '-> [a-z_0-9x]*' "$out/mlp-table.log" | sort | uniq -c | tr '\n' ';')"
echo "mlp routes (eligible): $(grep -o -- '-> [a-z_0-9x]*' "$out/mlp-eligible.log" | sort | uniq -c | tr '\n' ';')"
echo "run_apps: $fails app(s) failed"
exit $fails
