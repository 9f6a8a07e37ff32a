"""Float8 training step of a Llama-3-8B MLP block (4096 -> 14336 -> 4096, SiLU
gate), 8192 tokens, written with torch._scaled_mm the way torchao's
Float8Linear does it: dynamic scaling from each tensor's amax, e4m3 for
activations and weights, e5m2 for the gradient of the output in the tensorwise
recipe; fast accumulation in the forward GEMM only (torchao's default: the two
backward GEMMs accumulate exactly). Every linear runs three FP8 GEMMs (output,
grad_input, grad_weight): 9 cublasLtMatmul calls per step, plus the bf16
elementwise work and the casts, which the shim does not touch.

Workloads: float8_mlp_tensorwise (one scale per tensor), float8_mlp_rowwise
(one scale per row of the left operand and per column of the right one, e4m3
throughout, as torchao's rowwise recipe). The FP8 GEMMs reach the shim as
cublasLtMatmul calls; under GEMMSHIM_TUNE=cache they are served by the tuned
choice (cuBLASLt's algorithms, and with GEMMSHIM_FP8_TILES=1 our FP8
kernels), otherwise forwarded.

FLOAT8_MLP_COMPILE=1: the casts (amax, scale, clamp, convert) compiled with
torch.compile, as torchao's training recipes run them; eager casts are most
of the step's time and hide the GEMMs' share."""
import os

import torch

import gs_bench

TOKENS, DIM, HIDDEN = 8192, 4096, 14336
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def to_fp8(t, dtype, rowwise_dim=None):
    """t cast to dtype with a scale from its amax (over the whole tensor, or
    per row along rowwise_dim): (codes, the dequantisation scale)."""
    fmax = torch.finfo(dtype).max
    if rowwise_dim is None:
        amax = t.abs().amax().float()
    else:
        amax = t.abs().amax(dim=rowwise_dim, keepdim=True).float()
    scale = fmax / torch.clamp(amax, min=1e-12)
    codes = (t.float() * scale).clamp(-fmax, fmax).to(dtype)
    return codes, scale.reciprocal()


if os.environ.get("FLOAT8_MLP_COMPILE") == "1":
    to_fp8 = torch.compile(to_fp8, dynamic=False)


def scaled_mm(a, b_t, rowwise, fast):
    """a @ b_t.T in bf16 through torch._scaled_mm: a (M x K) row-major, b_t
    (N x K) row-major, so mat2 = b_t.T is column-major as _scaled_mm needs.
    Tensorwise: a and b_t already FP8 with 0-dim scales; rowwise: scales
    per row of a (M x 1) and per row of b_t (1 x N)."""
    (qa, sa), (qb, sb) = a, b_t
    if rowwise:
        sb = sb.reshape(1, -1)
    return torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                            use_fast_accum=fast)


class Float8Linear(torch.autograd.Function):
    """y = x W^T with FP8 operands in all three GEMMs."""

    @staticmethod
    def forward(ctx, x, w, rowwise):
        ctx.rowwise = rowwise
        ctx.save_for_backward(x, w)
        dim = -1 if rowwise else None
        return scaled_mm(to_fp8(x, E4M3, dim), to_fp8(w, E4M3, dim), rowwise, fast=True)

    @staticmethod
    def backward(ctx, gy):
        x, w = ctx.saved_tensors
        rowwise = ctx.rowwise
        g_dtype = E4M3 if rowwise else E5M2
        dim = -1 if rowwise else None
        gy = gy.contiguous()
        # grad_input = gy W: gy (T x out), W^T as the row-major right operand (in x out)
        gx = scaled_mm(to_fp8(gy, g_dtype, dim), to_fp8(w.t().contiguous(), E4M3, dim),
                       rowwise, fast=False)
        # grad_weight = gy^T x: gy^T (out x T), x^T as the row-major right operand (in x T)
        gw = scaled_mm(to_fp8(gy.t().contiguous(), g_dtype, dim),
                       to_fp8(x.t().contiguous(), E4M3, dim), rowwise, fast=False)
        return gx, gw, None


def workloads(args):
    dev, dt = "cuda", torch.bfloat16
    for recipe in ("tensorwise", "rowwise"):
        rowwise = recipe == "rowwise"
        gate = torch.randn(HIDDEN, DIM, device=dev, dtype=dt) * DIM ** -0.5
        up = torch.randn(HIDDEN, DIM, device=dev, dtype=dt) * DIM ** -0.5
        down = torch.randn(DIM, HIDDEN, device=dev, dtype=dt) * HIDDEN ** -0.5
        for w in (gate, up, down):
            w.requires_grad_(True)
        x = torch.randn(TOKENS, DIM, device=dev, dtype=dt, requires_grad=True)
        gy = torch.randn(TOKENS, DIM, device=dev, dtype=dt)

        def step(gate=gate, up=up, down=down, x=x, gy=gy, rowwise=rowwise):
            for t in (gate, up, down, x):
                t.grad = None
            h = torch.nn.functional.silu(Float8Linear.apply(x, gate, rowwise)) * \
                Float8Linear.apply(x, up, rowwise)
            y = Float8Linear.apply(h, down, rowwise)
            y.backward(gy)

        yield gs_bench.Workload(
            "float8_mlp_" + recipe, "float8_mlp", step, iters=10, warmup=3,
            info={"model": "Llama-3-8B MLP block", "tokens": TOKENS, "recipe": recipe,
                  "gemms": "9 torch._scaled_mm per step (fast accumulation: forward only)"})
        del gate, up, down, x, gy, step
        torch.cuda.empty_cache()


if __name__ == "__main__":
    gs_bench.bench_main(__doc__, workloads)
