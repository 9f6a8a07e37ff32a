"""Llama-3-8B-shaped prefill: LlamaForCausalLM from a LlamaConfig (random
weights), 4 of the 32 layers, bf16, batch 2 x 2048 tokens, one forward with
the lm_head under inference_mode. GEMMs: the q/k/v/o and MLP projections at
m = 4096 tokens, and the 128256-wide lm_head."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

import gs_bench

BATCH, SEQ, LAYERS = 2, 2048, 4


def workloads(args):
    cfg = gs_bench.hf_config(
        LlamaConfig, hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
        num_key_value_heads=8, num_hidden_layers=LAYERS, vocab_size=128256,
        max_position_embeddings=8192, rope_theta=500000.0, rms_norm_eps=1e-5,
        tie_word_embeddings=False, use_cache=False)
    model = gs_bench.build_on_gpu(lambda: LlamaForCausalLM(cfg), torch.bfloat16).eval()
    ids = torch.randint(0, cfg.vocab_size, (BATCH, SEQ), device="cuda")

    def forward():
        with torch.inference_mode():
            model(input_ids=ids, use_cache=False)

    yield gs_bench.Workload(
        "llama_prefill", "llama_prefill", forward, iters=10, warmup=2,
        info={"model": "Llama-3-8B shapes, %d layers" % LAYERS, "dtype": "bf16",
              "batch": BATCH, "seq": SEQ, "attn": gs_bench.attn_impl(model)})


if __name__ == "__main__":
    gs_bench.bench_main(__doc__, workloads)
