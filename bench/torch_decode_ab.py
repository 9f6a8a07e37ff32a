"""A/B of decode GEMMs inside PyTorch, as a model runs them: nn.Linear
(cublasGemmEx TN: m = out features, n = tokens, k = in features), each call
after an elementwise kernel that writes its input, captured in a CUDA graph
and replayed, as decode servers run a step. Run under the shim:

    LD_PRELOAD=libgemmshim.so GEMMSHIM_POLICY=eligible \\
        python3 bench/torch_decode_ab.py [--csv FILE] [--tokens 1,8,16,32,64]

Per shape three graphs of PAIRS [elementwise, linear] pairs (weight copies
rotated past the L2) are captured: one with the shim routing
(gemmshim_set_mode(ON)), one with it forwarding everything to cuBLAS
(gemmshim_set_mode(OFF)), and one of the elementwise kernels alone. Rounds
replay the three in turn (which side goes first alternates); a GEMM's time
is the median of its graph minus the median of the elementwise graph, over
PAIRS. The CSV has bench_ab's columns (suite "decode-torch", timing
"torch-graph"), so bench/table_from_csv.py takes it like any other run.

Why (bench/NOTES.md): launched back to back on a stream,
cuBLAS's small calls are paced by its host-side cost and our lead looked
20-50% larger than in a model's graph; in a graph but with nothing between
the calls, programmatic dependent launch overlaps consecutive GEMMs in a way
no model does."""
import argparse
import ctypes
import statistics
import sys

import torch

PAIRS = 40
ROUNDS = 5
REPS = 15
SHAPES = [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336),  # issue 4's targets
          (1024, 4096), (14336, 4096)]                                 # Llama-3-8B's k/v, gate/up


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default="torch_decode_ab.csv")
    ap.add_argument("--tokens", default="1,8,16,32,64")
    args = ap.parse_args()
    lib = ctypes.CDLL(None)
    if not hasattr(lib, "gemmshim_set_mode"):
        print("torch_decode_ab: run under LD_PRELOAD=libgemmshim.so", file=sys.stderr)
        return 1
    set_mode, route = lib.gemmshim_set_mode, lib.gemmshim_last_route
    dev, dt = "cuda", torch.bfloat16
    lin = torch.nn.functional.linear
    name = torch.cuda.get_device_name()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size

    def median_ms(g):
        torch.cuda.synchronize()
        t = []
        for _ in range(REPS):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            g.replay()
            e.record()
            e.synchronize()
            t.append(s.elapsed_time(e))
        return statistics.median(t)

    out = open(args.csv, "w")
    out.write("gpu,suite,dtype,layout,m,n,k,ours_ms,cublas_ms,speedup,ours_tflops,cublas_tflops,"
              "rel_diff,route,bytes,floor_ms,floor_engine,timing\n")
    for m, k in SHAPES:
        copies = max(2, int(3 * l2 / (m * k * 2)) + 1)
        ws = [torch.randn(m, k, device=dev, dtype=dt) / k**0.5 for _ in range(copies)]
        for n in (int(t) for t in args.tokens.split(",")):
            x = torch.randn(n, k, device=dev, dtype=dt)
            set_mode(1)
            y_ours = lin(x, ws[0])
            buf = ctypes.create_string_buffer(96)
            route(buf, 96)
            kernel = buf.value.decode()
            set_mode(0)
            y_ref = lin(x, ws[0])
            rel = ((y_ours.float() - y_ref.float()).norm() / y_ref.float().norm()).item()
            graphs = {}
            for side in ("ours", "cublas", "ops"):
                set_mode(1 if side == "ours" else 0)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    for p in range(PAIRS):
                        x.mul_(1.0)  # the op before the GEMM writes its input
                        if side != "ops":
                            lin(x, ws[p % copies])
                graphs[side] = g
                g.replay()
            set_mode(1)
            t = {side: [] for side in graphs}
            for r in range(ROUNDS):
                order = ["ours", "cublas", "ops"] if r % 2 == 0 else ["cublas", "ours", "ops"]
                for side in order:
                    t[side].append(median_ms(graphs[side]))
            ops = statistics.median(t["ops"])
            raw = {side: statistics.median(t[side]) for side in ("ours", "cublas")}
            ours = (raw["ours"] - ops) / PAIRS
            cub = (raw["cublas"] - ops) / PAIRS
            if not (ours > 0.05 * raw["ours"] / PAIRS and cub > 0.05 * raw["cublas"] / PAIRS):
                # what is left is inside the noise of the medians it came from
                print(f"decode-torch {m}x{n}x{k}: the ops between the calls take (nearly) all "
                      "the time; no reading", flush=True)
                ours = cub = float("nan")
            flop, nbytes = 2.0 * m * n * k, 2.0 * (m * k + k * n + m * n)
            out.write(f"{name},decode-torch,bf16,TN,{m},{n},{k},{ours:.6f},{cub:.6f},"
                      f"{cub / ours:.4f},{flop / ours / 1e9:.2f},{flop / cub / 1e9:.2f},{rel:.3e},"
                      f"{kernel},{nbytes:.0f},,,torch-graph\n")
            out.flush()
            print(f"decode-torch {m}x{n}x{k}: ours {ours * 1000:.2f} us, cuBLAS {cub * 1000:.2f} us, "
                  f"{cub / ours:.3f}x, {kernel}, rel diff {rel:.1e}", flush=True)
            del graphs
        del ws
        torch.cuda.empty_cache()
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
