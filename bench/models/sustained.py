"""Does a per-call GEMM gain survive sustained load at the power limit?

The tuner and the ab pass compare a candidate with cuBLAS call by call, both
under the same clock. A whole model running one choice for every call sets
its own clock: a kernel that is faster at a fixed clock but spends the same
energy per call gains nothing once the GPU sits at its power limit, because
the limit then fixes work per joule, not work per cycle.

This script measures both, per GEMM and for the prefill model, in one
process (run it under the shim with GEMMSHIM_TUNE=cache and the models'
cache, so that ON serves each signature by its tuned choice):

  interleaved  ON and OFF calls alternate one by one in a sustained stream
               (the tuner's view: same clock for both), median of per-pair
               time ratios;
  blocks       ON and OFF in alternating blocks of about --block-s seconds
               each, the first --settle-s of a block untimed: time per call,
               the energy counter's joules per call, mean power and the
               median SM clock (NVML through libnvidia-ml, sampled every
               10 ms) per mode; the ratio is OFF/ON time (>1: shim faster).

  LD_PRELOAD=libgemmshim.so GEMMSHIM_TUNE=cache GEMMSHIM_TUNE_CACHE=F \\
      python3 sustained.py [--blocks 6] [--block-s 1.5] [--json out.jsonl]
"""
import argparse
import ctypes
import json
import statistics
import threading
import time

import torch

import gs_bench


class Nvml:
    """The few NVML calls needed, through ctypes (libnvidia-ml ships with the
    driver, so nothing has to be installed)."""

    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise RuntimeError("nvmlInit_v2 failed")
        # The GPU that CUDA times, by its UUID: NVML numbers devices by PCI
        # bus, CUDA fastest first and through CUDA_VISIBLE_DEVICES.
        uuid = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "uuid", None)
        self.dev = ctypes.c_void_p()
        if uuid is not None and self.lib.nvmlDeviceGetHandleByUUID(
                ("GPU-%s" % uuid).encode(), ctypes.byref(self.dev)) == 0:
            return
        count = ctypes.c_uint()
        if (self.lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0 or count.value != 1 or
                self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.dev)) != 0):
            # several GPUs and no UUID match: which one CUDA times is unknown
            raise RuntimeError("no NVML handle for the CUDA device (UUID %s)" % uuid)

    def energy_mj(self):
        e = ctypes.c_ulonglong()
        rc = self.lib.nvmlDeviceGetTotalEnergyConsumption(self.dev, ctypes.byref(e))
        return e.value if rc == 0 else None

    def sm_clock_mhz(self):
        c = ctypes.c_uint()
        rc = self.lib.nvmlDeviceGetClockInfo(self.dev, 1, ctypes.byref(c))  # NVML_CLOCK_SM
        return c.value if rc == 0 else None


class ClockSampler(threading.Thread):
    """SM clock every 10 ms, with time stamps, until stopped."""

    def __init__(self, nvml):
        super().__init__(daemon=True)
        self.nvml, self.samples, self.stop = nvml, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.monotonic(), self.nvml.sm_clock_mhz()))
            time.sleep(0.01)

    def median_between(self, t0, t1):
        v = [c for t, c in self.samples if t0 <= t <= t1 and c]
        return statistics.median(v) if v else None


def interleaved(shim, fn, pairs):
    """Median OFF/ON time ratio over pairs of back-to-back calls, order
    alternating per pair, all enqueued in one sustained stream."""
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True),
           torch.cuda.Event(enable_timing=True)) for _ in range(pairs)]
    for p, (a, b, c) in enumerate(ev):
        first_on = p % 2 == 1
        shim.set_mode(first_on)
        a.record(); fn()
        shim.set_mode(not first_on)
        b.record(); fn()
        c.record()
    torch.cuda.synchronize()
    ratios = []
    for p, (a, b, c) in enumerate(ev):
        t1, t2 = a.elapsed_time(b), b.elapsed_time(c)
        on_ms, off_ms = (t1, t2) if p % 2 == 1 else (t2, t1)
        ratios.append(off_ms / on_ms)
    return statistics.median(ratios)


def blocks(shim, nvml, sampler, fn, per_call_ms, args):
    """Alternating ON/OFF blocks; per mode: ms per call, J per call, W, MHz."""
    n = max(4, int(args.block_s * 1000 / per_call_ms))
    settle = max(1, int(args.settle_s * 1000 / per_call_ms))
    res = {False: [], True: []}
    for b in range(2 * args.blocks):
        on = (b % 2 == 1) ^ ((b // 2) % 2 == 1)  # OFF ON ON OFF OFF ON ...
        shim.set_mode(on)
        for _ in range(settle):
            fn()
        torch.cuda.synchronize()
        e0, t0 = nvml.energy_mj(), time.monotonic()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        e1, t1 = nvml.energy_mj(), time.monotonic()
        res[on].append({"ms": (t1 - t0) * 1000 / n,
                        "j": (e1 - e0) / 1000 / n if e0 is not None and e1 is not None else None,
                        "w": (e1 - e0) / (t1 - t0) / 1000 if e0 is not None and e1 is not None else None,
                        "mhz": sampler.median_between(t0, t1)})
    def median_or_none(v):  # energy and clock: None where NVML cannot say
        v = [x for x in v if x is not None]
        return statistics.median(v) if v else None

    out = {}
    for on in (False, True):
        out["on" if on else "off"] = {k: median_or_none([r[k] for r in res[on]])
                                      for k in ("ms", "j", "w", "mhz")}
    # per adjacent block pair: the two modes of one OFF/ON (or ON/OFF) pair
    out["ratio"] = statistics.median([o["ms"] / r["ms"] for o, r in zip(res[False], res[True])])
    out["energy_ratio"] = (out["off"]["j"] / out["on"]["j"]
                           if out["off"]["j"] and out["on"]["j"] else None)
    out["calls_per_block"] = n
    return out


def fmt(x, width, digits):
    """x in `width` columns, or n/a where NVML gave nothing."""
    return f"{x:{width}.{digits}f}" if x is not None else "n/a".rjust(width)


def linear(n_out, k, m, dtype=torch.bfloat16):
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    w = torch.randn(n_out, k, device="cuda", dtype=dtype) / k ** 0.5
    return lambda: torch.nn.functional.linear(x, w)


def prefill():
    import llama_prefill
    args = argparse.Namespace()
    wl = next(llama_prefill.workloads(args))
    return wl.fn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=6, help="blocks per mode (default 6)")
    ap.add_argument("--block-s", type=float, default=1.5, help="seconds per block (default 1.5)")
    ap.add_argument("--settle-s", type=float, default=0.3,
                    help="untimed seconds at a block's start (default 0.3)")
    ap.add_argument("--pairs", type=int, default=60, help="interleaved pairs (default 60)")
    ap.add_argument("--only", default=None, help="comma-separated case names")
    ap.add_argument("--json", default=None, help="append one JSON line per case")
    args = ap.parse_args()

    shim = gs_bench.Shim()
    if not shim.loaded:
        raise SystemExit("sustained.py: run under the shim (LD_PRELOAD=libgemmshim.so)")
    nvml = Nvml()
    sampler = ClockSampler(nvml)
    sampler.start()
    cases = [("lm_head 128256x4096x4096", lambda: linear(128256, 4096, 4096)),
             ("mlp_up 14336x4096x4096", lambda: linear(14336, 4096, 4096)),
             ("attn_q 4096x4096x4096", lambda: linear(4096, 4096, 4096)),
             ("llama_prefill model", prefill)]
    only = set(args.only.split(",")) if args.only else None
    print(f"{'case':28s} {'interleaved':>11s} {'blocks':>7s} {'J ratio':>7s}   "
          f"{'OFF ms':>8s} {'W':>5s} {'MHz':>5s}   {'ON ms':>8s} {'W':>5s} {'MHz':>5s}")
    for name, make in cases:
        if only and name.split()[0] not in only:
            continue
        fn = make()
        for on in (False, True):  # warm both: heuristics, lazy setup, workspaces
            shim.set_mode(on)
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        t0 = time.monotonic()
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        per_call_ms = (time.monotonic() - t0) * 200
        inter = interleaved(shim, fn, max(10, min(args.pairs, int(3000 / per_call_ms))))
        blk = blocks(shim, nvml, sampler, fn, per_call_ms, args)
        shim.restore_mode()
        off, on = blk["off"], blk["on"]
        print(f"{name:28s} {inter:11.3f} {blk['ratio']:7.3f} {fmt(blk['energy_ratio'], 7, 3)}   "
              f"{off['ms']:8.3f} {fmt(off['w'], 5, 0)} {fmt(off['mhz'], 5, 0)}   "
              f"{on['ms']:8.3f} {fmt(on['w'], 5, 0)} {fmt(on['mhz'], 5, 0)}", flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps({"case": name, "interleaved_ratio": inter, **blk,
                                    "gpu": torch.cuda.get_device_name(),
                                    "env": gs_bench.environment(shim)["gemmshim_env"]}) + "\n")
        del fn
        torch.cuda.empty_cache()
    sampler.stop.set()


if __name__ == "__main__":
    main()
