"""BERT-large inference: BertModel from a BertConfig (hidden 1024, 24
layers, 16 heads, intermediate 4096; random weights), fp16, batch 32 x 512
tokens, no padding mask, inference_mode. GEMMs: q/k/v/o and the MLP at
m = 16384 tokens, with bias (cuBLASLt's BIAS epilogue where PyTorch uses it)."""
import torch
from transformers import BertConfig, BertModel

import gs_bench

BATCH, SEQ, LAYERS = 32, 512, 24


def workloads(args):
    cfg = gs_bench.hf_config(BertConfig, hidden_size=1024, num_hidden_layers=LAYERS,
                             num_attention_heads=16, intermediate_size=4096,
                             max_position_embeddings=512, vocab_size=30522)
    model = gs_bench.build_on_gpu(lambda: BertModel(cfg), torch.float16).eval()
    ids = torch.randint(0, cfg.vocab_size, (BATCH, SEQ), device="cuda")

    def forward():
        with torch.inference_mode():
            model(input_ids=ids)

    yield gs_bench.Workload(
        "bert_infer", "bert_infer", forward, iters=10, warmup=2,
        info={"model": "BERT-large shapes, %d layers" % LAYERS, "dtype": "fp16",
              "batch": BATCH, "seq": SEQ, "attn": gs_bench.attn_impl(model)})


if __name__ == "__main__":
    gs_bench.bench_main(__doc__, workloads)
