"""GPU kernel timelines from a PyTorch profiler trace (the exported Chrome
trace's "kernel" events), read back without torch: which kernels are GEMMs,
and where an iteration's time goes kernel by kernel.

Attribution by incremental time: walking the kernels in start order, each
one is charged what it adds to the timeline's end (its end minus the latest
end before it, or nothing when it ends earlier), and the idle time before it
(its start minus that end, when positive) is charged to it as a gap. The
charges add up to the span from the first start to the last end, so they
say where the wall time of a GPU-bound iteration went even when kernels
overlap (programmatic dependent launch, where a kernel's duration includes
its wait for the one before and summing durations counts that twice)."""

# Kernel-name fragments counted as GEMM time: cuBLAS (gemm, cutlass,
# sm90_xmma, nvjet; gemv and splitKreduce are cuBLAS's matrix-vector and
# split-K reduction kernels, part of a GEMM call) and the shim's own kernels
# (pingpong_sm90, skinny_*, sgemm_warptile/_splitk_reduce).
GEMM_KERNEL_FRAGMENTS = ("gemm", "cutlass", "sm90_xmma", "nvjet", "gemv", "splitkreduce",
                         "pingpong", "sgemm", "skinny")
# ...except attention kernels built on CUTLASS (PyTorch's memory-efficient
# SDPA is "fmha_cutlassF_..."), which are not cuBLAS calls.
NOT_GEMM_FRAGMENTS = ("fmha", "flash", "attention")

NAME_CHARS = 120  # kernel names are cut here in the reports (templates run to thousands)


def is_gemm_kernel(name):
    low = name.lower()
    return (any(f in low for f in GEMM_KERNEL_FRAGMENTS)
            and not any(f in low for f in NOT_GEMM_FRAGMENTS))


def kernel_events(trace):
    """[(start_us, duration_us, name)] of the trace's GPU kernels, by start
    (an event without a start is skipped: it has no place on the timeline)."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    out = [(float(ev["ts"]), float(ev.get("dur", 0.0)), str(ev.get("name", "")))
           for ev in events if str(ev.get("cat", "")).lower() == "kernel" and "ts" in ev]
    out.sort(key=lambda e: e[0])
    return out


def attribute(kernels):
    """Incremental time per kernel name over a timeline (kernel_events).
    Returns (span_us, {name: {"us": charged, "gap_us": idle before, "calls": n}})."""
    per = {}
    first = last_end = None
    for ts, dur, name in kernels:
        end = ts + dur
        if first is None:
            first, last_end, inc, gap = ts, end, dur, 0.0
        else:
            inc = max(0.0, end - max(last_end, ts))
            gap = max(0.0, ts - last_end)
            last_end = max(last_end, end)
        row = per.setdefault(name, {"us": 0.0, "gap_us": 0.0, "calls": 0})
        row["us"] += inc
        row["gap_us"] += gap
        row["calls"] += 1
    return (0.0 if first is None else last_end - first), per


def summarize(kernels, iters, top=8):
    """Per-iteration account of `iters` iterations' timeline: span, GEMM and
    other kernels' incremental time, idle gaps, and the top GEMM kernels."""
    span, per = attribute(kernels)
    iters = max(int(iters), 1)
    gemm = sum(r["us"] for n, r in per.items() if is_gemm_kernel(n))
    other = sum(r["us"] for n, r in per.items() if not is_gemm_kernel(n))
    gaps = sum(r["gap_us"] for r in per.values())
    ranked = sorted(((n, r) for n, r in per.items() if is_gemm_kernel(n)),
                    key=lambda nr: -nr[1]["us"])[:top]
    return {"iters": iters, "span_us": span / iters, "gemm_us": gemm / iters,
            "other_us": other / iters, "gaps_us": gaps / iters,
            "kernels_per_iter": sum(r["calls"] for r in per.values()) / iters,
            "top_gemm_kernels": [{"name": n[:NAME_CHARS], "us": r["us"] / iters,
                                  "calls": r["calls"] / iters} for n, r in ranked]}
