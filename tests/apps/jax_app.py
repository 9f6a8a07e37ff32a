"""JAX matmul in fp32 (highest precision) and bf16, checked in float64.
XLA reaches cuBLAS(Lt) through dlsym on its own handle: the shim sees these
calls only with GEMMSHIM_DLSYM=1 (tests/apps/run_apps.sh sets it). Triton
GEMMs are switched off so XLA's matmuls go to cuBLAS(Lt) at all."""
import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_gpu_enable_triton_gemm=false").strip()

import jax
import jax.numpy as jnp
import numpy as np

failed = 0
rng = np.random.default_rng(0)
a = rng.standard_normal((1536, 1024))
b = rng.standard_normal((1024, 2048))
ref = a @ b
for dtype, tol in ((jnp.float32, 1e-5), (jnp.bfloat16, 1e-2)):
    c = jnp.matmul(jnp.asarray(a, dtype), jnp.asarray(b, dtype),
                   precision=jax.lax.Precision.HIGHEST)
    err = np.linalg.norm(np.asarray(c, np.float64) - ref) / np.linalg.norm(ref)
    ok = err <= tol
    failed += not ok
    print(f"jax {jnp.dtype(dtype).name:8} matmul rel err {err:.2e} {'ok' if ok else 'FAIL'}")
print("jax_app:", "FAILED" if failed else "all ok")
sys.exit(1 if failed else 0)
