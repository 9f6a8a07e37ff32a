"""Two or more torchrun ranks tuning into one cache: a small bf16 MLP under
DistributedDataParallel (NCCL), forward, backward and SGD steps, every rank
issuing the same GEMM signatures. Run under the shim with
GEMMSHIM_TUNE=online and one GEMMSHIM_TUNE_CACHE for all ranks; then each
signature's decision line in the logs (GEMMSHIM_LOG with %p) names the one
process that tuned it (tests/apps/ddp_tune_check.sh counts them). The loss
of the last step is checked against the first (training moved) and, on
every rank, for being finite.

    torchrun --nproc_per_node 2 tests/apps/ddp_tune_app.py [--steps N]"""
import argparse
import os
import sys

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    a = ap.parse_args()
    rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl")
    torch.manual_seed(0)
    dims = [(4096, 11008), (11008, 4096), (4096, 4096), (4096, 1000)]
    layers = [torch.nn.Linear(i, o, bias=False) for i, o in dims]
    model = torch.nn.Sequential(*[m for l in layers for m in (l, torch.nn.GELU())][:-1])
    model = model.to(device="cuda", dtype=torch.bfloat16)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    g = torch.Generator(device="cuda").manual_seed(1234 + rank)
    x = torch.randn(2048, 4096, device="cuda", dtype=torch.bfloat16, generator=g)
    y = torch.randn(2048, 1000, device="cuda", dtype=torch.bfloat16, generator=g)
    first = last = None
    for _ in range(a.steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(ddp(x).float(), y.float())
        loss.backward()
        opt.step()
        v = loss.item()
        first = v if first is None else first
        last = v
    torch.cuda.synchronize()
    ok = bool(torch.isfinite(torch.tensor([first, last])).all())
    print(f"ddp_tune_app rank {rank}: loss {first:.4f} -> {last:.4f} {'ok' if ok else 'FAIL'}",
          flush=True)
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
