"""Llama-3-8B-shaped decode step: the projections of 8 layers (q/k/v/o,
gate/up/down as bias-free bf16 nn.Linear; 3.5 GB of weights, far past the L2,
as in a real decode) for 1, 4, 16 and 64 tokens, captured in a CUDA graph and
replayed, as decode servers run a step. Attention itself is left out; cheap
elementwise ops stand in for the norms, attention, SiLU and residuals, so each
GEMM follows a kernel that writes its input, as in a model (back-to-back
GEMMs in a graph overlap through programmatic dependent launch in a way no
model does; bench/torch_decode_ab.py says more). One workload line per batch.

The graph is re-captured each time the mode changes: a graph captured with
the shim ON replays the shim's kernels whatever the mode is at replay."""
import torch
from torch import nn

import gs_bench

HIDDEN, INTER, HEADS, KV_HEADS, LAYERS = 4096, 14336, 32, 8, 8
HEAD_DIM = HIDDEN // HEADS
BATCHES = (1, 4, 16, 64)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        lin = lambda i, o: nn.Linear(i, o, bias=False)
        self.q, self.k, self.v = lin(HIDDEN, HIDDEN), lin(HIDDEN, KV_HEADS * HEAD_DIM), \
            lin(HIDDEN, KV_HEADS * HEAD_DIM)
        self.o = lin(HIDDEN, HIDDEN)
        self.gate, self.up, self.down = lin(HIDDEN, INTER), lin(HIDDEN, INTER), lin(INTER, HIDDEN)

    def forward(self, h):
        a = rms(h)
        q, k, v = self.q(a), self.k(a), self.v(a)
        # stand-in for RoPE + attention over the cache: writes o's input and
        # keeps k and v live
        attn = q * 0.5 + (k.sum() + v.sum()) * 0.0
        h = h + self.o(attn)
        m = rms(h)
        return h + self.down(nn.functional.silu(self.gate(m)) * self.up(m))


def rms(x):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype)


class DecodeGraph:
    """One decode step for `tokens` rows: eager, or captured and replayed."""

    def __init__(self, layers, tokens):
        self.layers = layers
        self.x = torch.randn(tokens, HIDDEN, device="cuda", dtype=torch.bfloat16)
        self.graph, self.y = None, None

    def eager(self):
        with torch.inference_mode():
            h = self.x
            for layer in self.layers:
                h = layer(h)
            return h

    def prepare(self, on):
        """(Re)capture in the current mode; warm up first on a side stream
        (PyTorch's recipe), which also lets the shim do any lazy setup
        outside the capture."""
        if self.graph is not None:
            self.graph.reset()
            self.graph, self.y = None, None
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                self.eager()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.y = self.eager()
        self.graph = graph

    def replay(self):
        self.graph.replay()


def workloads(args):
    layers = gs_bench.build_on_gpu(lambda: nn.ModuleList(Layer() for _ in range(LAYERS)),
                                   torch.bfloat16).requires_grad_(False)
    for tokens in BATCHES:
        step = DecodeGraph(layers, tokens)
        yield gs_bench.Workload(
            f"llama_decode_b{tokens}", "llama_decode", step.replay, iters=20, warmup=3,
            prepare=step.prepare, probe=step.eager,
            info={"model": "Llama-3-8B projections, %d layers, CUDA graph" % LAYERS,
                  "dtype": "bf16", "tokens": tokens})
        del step  # its graph's memory pool goes with it


if __name__ == "__main__":
    gs_bench.bench_main(__doc__, workloads)
