"""End to end decode: the GEMMs of LAYERS Llama-3-8B-shaped layers (q, k, v,
o, gate, up, down projections; bf16; each layer its own weights, 1.75 GB in
all, so every step streams its weights from HBM) for a few tokens, captured
in one CUDA graph as decode servers run them, and timed by replaying it
(CUDA events, median of 30 after warm-up); also timed eagerly (the host's
launch cost included). Prints one line per token count; run_apps.sh runs it
plain and under the shim and prints the ratios."""
import statistics
import sys

import torch

LAYERS = 4
torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
d, kv, h = 4096, 1024, 14336
layers = [[torch.randn(o, i, device=dev, dtype=dt) / i**0.5
           for o, i in ((d, d), (kv, d), (kv, d), (d, d), (h, d), (h, d), (d, h))]
          for _ in range(LAYERS)]


def step(x):
    lin = torch.nn.functional.linear
    for q, k, v, o, gate, up, down in layers:
        lin(x, k), lin(x, v)
        a = x + lin(lin(x, q), o)
        x = a + lin(lin(a, gate) * lin(a, up), down)
    return x


def median_ms(fn, reps=30):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


weight_bytes = sum(w.numel() * w.element_size() for layer in layers for w in layer)
for n in (1, 16, 64):
    x = torch.randn(n, d, device=dev, dtype=dt)
    eager = median_ms(lambda: step(x))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = step(x)
    graph = median_ms(g.replay)
    print(f"decode_bench n={n}: graph {graph:.3f} ms ({weight_bytes / graph / 1e9:.2f} TB/s of "
          f"weights), eager {eager:.3f} ms")
sys.exit(0)
