"""CuPy matmul (cublasGemmEx NN) in fp32 and fp16, checked in float64."""
import sys

import cupy as cp

cp.random.seed(0)
failed = 0
for dtype, tol in ((cp.float32, 1e-5), (cp.float16, 5e-3)):
    a = cp.random.standard_normal((1536, 1024)).astype(dtype)
    b = cp.random.standard_normal((1024, 2048)).astype(dtype)
    c = a @ b
    ref = a.astype(cp.float64) @ b.astype(cp.float64)
    err = float(cp.linalg.norm(c.astype(cp.float64) - ref) / cp.linalg.norm(ref))
    ok = err <= tol
    failed += not ok
    print(f"cupy {cp.dtype(dtype).name:8} matmul rel err {err:.2e} {'ok' if ok else 'FAIL'}")
print("cupy_app:", "FAILED" if failed else "all ok")
sys.exit(1 if failed else 0)
