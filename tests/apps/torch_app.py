"""PyTorch GEMMs of every kind PyTorch issues to cuBLAS, each checked against a
float64 reference: matmul NN/NT/TN (cublasGemmEx), bmm
(cublasGemmStridedBatchedEx), nn.Linear forward and backward with bias
(cublasLtMatmul with the BIAS epilogue, and GemmEx for the backward), fp32
with and without TF32 (cublasSgemm_v2), fp16. Exit 1 on any wrong result.
Run plain, or under the shim (tests/apps/run_apps.sh does both)."""
import sys

import torch

torch.manual_seed(0)
dev = "cuda"
failed = 0


def check(name, got, ref, tol):
    global failed
    err = ((got.double() - ref).norm() / ref.norm()).item()
    ok = err <= tol
    failed += not ok
    print(f"torch {name:34} rel err {err:.2e} {'ok' if ok else 'FAIL'}")


tol = {torch.float32: 1e-5, torch.bfloat16: 1e-2, torch.float16: 5e-3}
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(1536, 1024, device=dev, dtype=dtype)
    b = torch.randn(1024, 2048, device=dev, dtype=dtype)
    bt = torch.randn(2048, 1024, device=dev, dtype=dtype)
    at = torch.randn(1024, 1536, device=dev, dtype=dtype)
    t = str(dtype).split(".")[1]
    check(f"{t} a@b (NN)", a @ b, a.double() @ b.double(), tol[dtype])
    check(f"{t} a@bt.T (TN)", a @ bt.t(), a.double() @ bt.double().t(), tol[dtype])
    check(f"{t} at.T@b (NT)", at.t() @ b, at.double().t() @ b.double(), tol[dtype])
    x = torch.randn(8, 384, 256, device=dev, dtype=dtype)
    y = torch.randn(8, 256, 512, device=dev, dtype=dtype)
    check(f"{t} bmm", torch.bmm(x, y), torch.bmm(x.double(), y.double()), tol[dtype])
    lin = torch.nn.Linear(1024, 3072, bias=True, device=dev, dtype=dtype)
    inp = torch.randn(2048, 1024, device=dev, dtype=dtype, requires_grad=True)
    out = lin(inp)
    ref = inp.double() @ lin.weight.double().t() + lin.bias.double()
    check(f"{t} Linear forward (+bias)", out, ref, tol[dtype])
    g = torch.randn_like(out)
    out.backward(g)
    check(f"{t} Linear backward dX", inp.grad, g.double() @ lin.weight.double(), tol[dtype])
    check(f"{t} Linear backward dW", lin.weight.grad, g.double().t() @ inp.double(), tol[dtype])

torch.backends.cuda.matmul.allow_tf32 = True  # forwarded by the shim (TF32 math)
a = torch.randn(1024, 1024, device=dev)
check("fp32 TF32 a@a", a @ a, a.double() @ a.double(), 5e-3)
torch.cuda.synchronize()
print("torch_app:", "FAILED" if failed else "all ok")
sys.exit(1 if failed else 0)
