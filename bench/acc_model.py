#!/usr/bin/env python3
"""Host model of an fp32-output bf16 GEMM's accumulation error (bench/NOTES.md,
"fp32 output at long K"). bf16 products are exact in fp64; a tensor-core step
sums 16 products exactly and adds them to an fp32 accumulator, rounded either
toward zero (rz) or to nearest (rn); "promote" sums each 64-deep k-block from
zero in the tensor core (rz) and adds it to fp32 registers (rn). Prints the
relative Frobenius error against the exact sum, per k.
usage: acc_model.py [k ...]"""
import sys
import numpy as np

rng = np.random.default_rng(1)


def bf16(x):
    b = np.asarray(x, np.float32).view(np.uint32)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return b.view(np.float32)


def to_f32(x, mode):
    f = x.astype(np.float32)
    if mode == "rz":  # one step back toward zero where rounding went outward
        over = np.abs(f.astype(np.float64)) > np.abs(x)
        f[over] = np.nextafter(f[over], np.float32(0))
    return f


def errors(k, m=128, n=128):
    a = bf16(rng.uniform(-1, 1, (m, k)))
    b = bf16(rng.uniform(-1, 1, (k, n)))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    prod = a[:, :, None].astype(np.float64) * b[None, :, :].astype(np.float64)
    g16 = prod.reshape(m, k // 16, 16, n).sum(2)
    rel = lambda x: np.linalg.norm(x - ref) / np.linalg.norm(ref)
    out = {}
    for mode in ("rz", "rn"):
        acc = np.zeros((m, n), np.float32)
        for i in range(k // 16):
            acc = to_f32(acc.astype(np.float64) + g16[:, i, :], mode)
        out[mode] = rel(acc)
    acc = np.zeros((m, n), np.float32)
    for blk in range(k // 64):
        t = np.zeros((m, n), np.float32)
        for i in range(4):
            t = to_f32(t.astype(np.float64) + g16[:, 4 * blk + i, :], "rz")
        acc = to_f32(acc.astype(np.float64) + t.astype(np.float64), "rn")
    out["promote"] = rel(acc)
    return out


for k in [int(x) for x in sys.argv[1:]] or [64, 256, 1024, 4096]:
    e = errors(k)
    print(f"k={k}: rz {e['rz']:.2e}  rn {e['rn']:.2e}  promote {e['promote']:.2e}")
