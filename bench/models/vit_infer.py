"""ViT-B/16 inference: timm vit_base_patch16_224 (pretrained=False, random
weights), batch 64 at 224x224, fp32 weights and inputs, inference_mode. Two
workload lines: vit_fp32 with TF32 off (true fp32 GEMMs: cuBLAS SGEMM vs the
shim's SIMT SGEMM) and vit_tf32 with TF32 allowed for matmuls (cuBLAS's
tensor-core path for fp32)."""
import warnings

import timm
import torch

import gs_bench

BATCH = 64


def set_tf32(on):
    """The matmul TF32 switch (and cuDNN's, for the patch-embedding conv, so
    'fp32' means fp32 throughout). The legacy flags still work in PyTorch
    2.9+ but warn; the warning is noise here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


def workloads(args):
    model = timm.create_model("vit_base_patch16_224", pretrained=False).cuda().eval()
    x = torch.randn(BATCH, 3, 224, 224, device="cuda")

    def forward():
        with torch.inference_mode():
            model(x)

    for name, tf32 in (("vit_fp32", False), ("vit_tf32", True)):
        set_tf32(tf32)
        yield gs_bench.Workload(
            name, "vit_infer", forward, iters=5, warmup=2,
            info={"model": "vit_base_patch16_224", "dtype": "fp32", "tf32": tf32,
                  "batch": BATCH})
    set_tf32(False)


if __name__ == "__main__":
    gs_bench.bench_main(__doc__, workloads)
