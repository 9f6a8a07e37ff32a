"""Decode-shaped PyTorch GEMMs: a few tokens against Llama-sized weights, as
nn.Linear issues them (cublasGemmEx TN: m = out features, n = tokens, k = in
features), each checked against float64; then the same projections captured
in a CUDA graph and replayed. torch.cuda.graph captures on a stream of its
own that no call has used before, so under the shim the split-K workspaces
are first needed inside the capture. Checks: every result within the dtype's
tolerance, a replay equal to the next replay bit for bit, and under the shim
(found in the process) the replay equal bit for bit to the same calls made
directly (one shape, one kernel, a fixed reduction order). Exit 1 on any
failure. Run plain, or under the shim (tests/apps/run_apps.sh does both)."""
import ctypes
import sys

import torch

torch.manual_seed(0)
dev = "cuda"
failed = 0
tol = {torch.bfloat16: 1e-2, torch.float16: 5e-3}
# (out features, in features): Llama-3-8B's q/o, k/v, gate/up and down projections
shapes = [(4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336), (6144, 4096)]
tokens = (1, 5, 16, 32, 64)
under_shim = hasattr(ctypes.CDLL(None), "gemmshim_last_route")


def check(name, ok, detail):
    global failed
    failed += not ok
    print(f"decode {name:40} {detail} {'ok' if ok else 'FAIL'}")


def rel_err(got, ref):
    return ((got.double() - ref).norm() / ref.norm()).item()


for dtype in (torch.bfloat16, torch.float16):
    t = str(dtype).split(".")[1]
    for out_f, in_f in shapes:
        w = torch.randn(out_f, in_f, device=dev, dtype=dtype) / in_f**0.5
        for n in tokens:
            x = torch.randn(n, in_f, device=dev, dtype=dtype)
            err = rel_err(torch.nn.functional.linear(x, w), x.double() @ w.double().t())
            check(f"{t} {out_f}x{n}x{in_f}", err <= tol[dtype], f"rel err {err:.2e}")

# The graph: every projection at four token counts, bf16, one capture.
dtype = torch.bfloat16
ws = [torch.randn(o, i, device=dev, dtype=dtype) / i**0.5 for o, i in shapes]
xs = {n: {i: torch.randn(n, i, device=dev, dtype=dtype) for i in {4096, 14336}} for n in (1, 16, 32, 64)}
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    ys = {(n, j): torch.nn.functional.linear(xs[n][w.shape[1]], w)
          for n in xs for j, w in enumerate(ws)}
for n in xs:  # fresh inputs after the capture: the replay must read them
    for x in xs[n].values():
        x.copy_(torch.randn_like(x))
g.replay()
torch.cuda.synchronize()
first = {key: y.clone() for key, y in ys.items()}
g.replay()
torch.cuda.synchronize()
for (n, j), y in ys.items():
    w = ws[j]
    x = xs[n][w.shape[1]]
    name = f"graph bf16 {w.shape[0]}x{n}x{w.shape[1]}"
    err = rel_err(first[(n, j)], x.double() @ w.double().t())
    direct = torch.nn.functional.linear(x, w)
    same_replay = torch.equal(first[(n, j)], y)
    same_direct = torch.equal(first[(n, j)], direct)
    ok = err <= tol[dtype] and same_replay and (same_direct or not under_shim)
    check(name, ok, f"rel err {err:.2e}, replays {'equal' if same_replay else 'DIFFER'}, "
          f"direct call {'equal' if same_direct else 'differs'}")
torch.cuda.synchronize()
print("decode_app:", "FAILED" if failed else "all ok", "(under the shim)" if under_shim else "(plain)")
sys.exit(1 if failed else 0)
