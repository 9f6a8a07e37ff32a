#!/usr/bin/env python3
"""Accuracy of a language-model head with an odd vocabulary through the shim.

The logits GEMM (C = logits, ldc = vocabulary: stored directly) and its two
backward GEMMs (the logits gradient as an operand, ld = vocabulary: packed)
are computed with the shim off (cuBLAS) and on, in one process
(gemmshim_set_mode), each against an fp64 reference on the GPU. Passes when
the shim served every one of them (its statistics) and each error is within
2x cuBLAS's own, with cuBLAS's reduced-precision reduction allowed and not.

Run under LD_PRELOAD=libgemmshim.so with GEMMSHIM_POLICY=eligible (or a
table or cache that routes these calls). Exit 0 pass, 1 fail, 77 no GPU or
no shim.
"""
import ctypes
import sys

try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(77)


class Stats(ctypes.Structure):
    _fields_ = [("calls", ctypes.c_uint64), ("routed", ctypes.c_uint64),
                ("forwarded", ctypes.c_uint64), ("fallbacks", ctypes.c_uint64),
                ("quick", ctypes.c_uint64)]


def main():
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    try:
        lib = ctypes.CDLL(None)
        lib.gemmshim_set_mode.argtypes = [ctypes.c_int]
        lib.gemmshim_get_stats.argtypes = [ctypes.POINTER(Stats)]
    except (OSError, AttributeError):
        print("SKIP: the shim is not loaded (LD_PRELOAD=libgemmshim.so)")
        return 77
    tokens, vocab, d = 8192, 50257, 1024
    torch.manual_seed(1234)
    dev = "cuda"
    x = torch.randn(tokens, d, device=dev, dtype=torch.bfloat16)
    w = torch.randn(vocab, d, device=dev, dtype=torch.bfloat16) * d ** -0.5
    g = torch.randn(tokens, vocab, device=dev, dtype=torch.bfloat16) * vocab ** -0.5
    cases = [
        ("logits = X W^T (TN, C's ld odd)", lambda: x @ w.t(), lambda: x.double() @ w.double().t()),
        ("dX = dLogits W (NN, B's ld odd)", lambda: g @ w, lambda: g.double() @ w.double()),
        ("dW = dLogits^T X (NT, B's ld odd)", lambda: g.t() @ x, lambda: g.double().t() @ x.double()),
    ]
    failed = 0
    for reduced in (True, False):
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = reduced
        for name, run, ref_of in cases:
            ref = ref_of()
            lib.gemmshim_set_mode(0)
            off = run()
            before, after = Stats(), Stats()
            lib.gemmshim_get_stats(ctypes.byref(before))
            lib.gemmshim_set_mode(1)
            on = run()
            torch.cuda.synchronize()
            lib.gemmshim_get_stats(ctypes.byref(after))
            lib.gemmshim_set_mode(0)
            e_off = ((off.double() - ref).norm() / ref.norm()).item()
            e_on = ((on.double() - ref).norm() / ref.norm()).item()
            routed = after.routed - before.routed
            ok = routed >= 1 and after.fallbacks == before.fallbacks and e_on <= 2 * e_off
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}, reduced-precision reduction "
                  f"{'allowed' if reduced else 'disallowed'}: error vs fp64 cuBLAS {e_off:.3e}, "
                  f"shim {e_on:.3e} ({e_on / e_off:.2f}x), routed {routed}")
            del ref, off, on
    print(f"vocab_accuracy: {len(cases) * 2 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
