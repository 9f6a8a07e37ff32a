"""PyTorch on every GPU of the machine in one process: on each device, a
matmul, nn.Linear with bias (forward and backward), bmm, a decode-shaped
linear and a deep-K product (split-K workspace), each against a float64
reference; first device by device, then from one thread per device at once.
Exit 1 on any wrong result; on a machine with one GPU, say so and exit 0
(run_apps.sh reports it as skipped). Run plain or under the shim."""
import sys
import threading

import torch

n_dev = torch.cuda.device_count()
if n_dev < 2:
    print(f"multi_gpu_app: SKIP: {n_dev} CUDA device(s), needs 2")
    sys.exit(0)
failed = 0
lock = threading.Lock()
tol = {torch.float32: 1e-5, torch.bfloat16: 1e-2, torch.float16: 5e-3}


def check(name, got, ref, t):
    global failed
    err = ((got.double() - ref).norm() / ref.norm()).item()
    with lock:
        failed += err > t
        print(f"multi {name:40} rel err {err:.2e} {'ok' if err <= t else 'FAIL'}", flush=True)


def on_device(d, who):
    dev = f"cuda:{d}"
    g = torch.Generator(device=dev).manual_seed(d)
    rnd = lambda *s, dt: torch.randn(*s, device=dev, dtype=dt, generator=g)  # noqa: E731
    with torch.cuda.device(d):
        for dt in (torch.bfloat16, torch.float16, torch.float32):
            torch.backends.cuda.matmul.allow_tf32 = False
            t = str(dt).split(".")[1]
            a, b = rnd(2048, 1024, dt=dt), rnd(1024, 1536, dt=dt)
            check(f"{who} {dev} {t} a@b", a @ b, a.double() @ b.double(), tol[dt])
            lin = torch.nn.Linear(1024, 2048, device=dev, dtype=dt)
            x = rnd(512, 1024, dt=dt).requires_grad_()
            y = lin(x)
            check(f"{who} {dev} {t} Linear fwd", y, x.double() @ lin.weight.double().t()
                  + lin.bias.double(), tol[dt])
            gy = torch.randn_like(y)
            y.backward(gy)
            check(f"{who} {dev} {t} Linear dX", x.grad, gy.double() @ lin.weight.double(), tol[dt])
            p, q = rnd(4, 256, 384, dt=dt), rnd(4, 384, 128, dt=dt)
            check(f"{who} {dev} {t} bmm", torch.bmm(p, q), torch.bmm(p.double(), q.double()), tol[dt])
            if dt != torch.float32:
                w, tok = rnd(4096, 4096, dt=dt), rnd(16, 4096, dt=dt)
                check(f"{who} {dev} {t} decode 16 tokens", tok @ w.t(), tok.double() @ w.double().t(),
                      tol[dt])
            u, v = rnd(256, 65536, dt=dt), rnd(65536, 256, dt=dt)
            check(f"{who} {dev} {t} deep K 256x256x65536", u @ v, u.double() @ v.double(),
                  tol[dt] * (4 if dt == torch.float32 else 1))
        torch.cuda.synchronize(d)


for d in range(n_dev):
    on_device(d, "one by one")
threads = [threading.Thread(target=on_device, args=(d, "thread per GPU")) for d in range(n_dev)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"multi_gpu_app: {n_dev} GPUs,", "FAILED" if failed else "all ok")
sys.exit(1 if failed else 0)
