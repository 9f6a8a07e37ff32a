"""PyTorch under the shim (default policy): a few matmuls of classes the
tuning table routes and of classes it forwards, each checked against a
float64 reference. Run: LD_PRELOAD=libgemmshim.so GEMMSHIM_LOG=stderr python3 torch_routes.py"""
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
failed = 0
cases = [  # (dtype, m, n, k, layout): b @ a gives cuBLAS column-major C = op(A) op(B)
    (torch.float32, 3072, 3072, 3072, "NN"),
    (torch.float32, 1024, 1024, 1024, "NN"),
    (torch.float32, 2048, 2048, 2048, "TN"),
    (torch.bfloat16, 8192, 8192, 8192, "NN"),
    (torch.bfloat16, 4096, 2048, 14336, "TN"),
]
for dtype, m, n, k, layout in cases:
    # torch row-major x @ w.T with x (n, k), w (m, k) is cuBLAS TN with m = out features
    x = torch.randn(n, k, device="cuda", dtype=dtype)
    w = torch.randn(m, k, device="cuda", dtype=dtype)
    y = x @ w.t() if layout == "TN" else x @ w.t().contiguous()
    ref = x.double() @ w.double().t()
    err = ((y.double() - ref).norm() / ref.norm()).item()
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    ok = err <= tol
    failed += not ok
    print(f"torch {str(dtype):15} {layout} m={m} n={n} k={k}: rel err {err:.2e} {'ok' if ok else 'FAIL'}")
print("torch_routes:", "FAILED" if failed else "all ok")
sys.exit(1 if failed else 0)
