"""End to end: a Llama-style MLP block (tokens x 4096 -> 14336 -> 4096, SiLU
gate, bf16), forward and backward, timed with CUDA events (median of 20 after
warm-up). Run it plain and under the shim; run_apps.sh prints the ratio."""
import statistics
import sys

import torch

tokens, d, h = 4096, 4096, 14336
torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
gate = torch.nn.Linear(d, h, bias=False, device=dev, dtype=dt)
up = torch.nn.Linear(d, h, bias=False, device=dev, dtype=dt)
down = torch.nn.Linear(h, d, bias=False, device=dev, dtype=dt)
x = torch.randn(tokens, d, device=dev, dtype=dt, requires_grad=True)


def step():
    y = down(torch.nn.functional.silu(gate(x)) * up(x))
    y.backward(torch.ones_like(y))


for _ in range(5):
    step()
torch.cuda.synchronize()
times = []
for _ in range(20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    step()
    e.record()
    e.synchronize()
    times.append(s.elapsed_time(e))
ms = statistics.median(times)
flop = 6 * 2 * tokens * d * h  # 3 GEMMs forward, 6 backward
print(f"mlp_bench: {ms:.3f} ms per forward+backward, {flop / ms / 1e9:.1f} TFLOP/s")
sys.exit(0)
