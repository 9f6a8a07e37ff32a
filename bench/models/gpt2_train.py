"""GPT-2-medium-shaped training step: GPT2LMHeadModel from a GPT2Config
(n_embd 1024, 16 heads, random weights) with 6 of its 24 layers, batch 8 x
1024 tokens, bf16 autocast over fp32 weights, forward + backward + AdamW step.
GEMMs: forward, and the two backward GEMMs per weight (dgrad, wgrad), through
GPT-2's Conv1D (addmm) and the tied lm_head."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import gs_bench

BATCH, SEQ, LAYERS = 8, 1024, 6


def workloads(args):
    cfg = gs_bench.hf_config(GPT2Config, n_embd=1024, n_head=16, n_layer=LAYERS,
                             n_positions=1024, vocab_size=50257, use_cache=False)
    model = GPT2LMHeadModel(cfg).cuda().train()  # fp32 master weights, ~130M params
    # foreach: the default multi-tensor path; fused would hide nothing GEMM-related
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
    ids = torch.randint(0, cfg.vocab_size, (BATCH, SEQ), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids, use_cache=False).loss
        loss.backward()
        opt.step()

    yield gs_bench.Workload(
        "gpt2_train", "gpt2_train", step, iters=5, warmup=2,
        info={"model": "GPT-2-medium shapes, %d layers" % LAYERS, "dtype": "bf16 autocast",
              "batch": BATCH, "seq": SEQ, "optimizer": "AdamW foreach",
              "attn": gs_bench.attn_impl(model)})


if __name__ == "__main__":
    gs_bench.bench_main(__doc__, workloads)
