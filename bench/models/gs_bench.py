"""Shared harness for the model benchmarks in bench/models/.

Each workload script builds a model, hands the harness a callable that runs
one iteration, and the harness times it with the shim OFF and ON in the same
process, in alternating rounds, so that clock drift, thermal state and
allocator warm-up affect both modes alike.

The shim is steered through its C API (include/gemmshim.h), which is visible
in the global symbol scope when libgemmshim.so is LD_PRELOADed. Without the
shim the workloads still run, once per round, and the ratio is "n/a".
"""
import argparse
import ctypes
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
import warnings

import torch

import gs_trace

# gemmshim_mode_t (include/gemmshim.h)
MODE_OFF, MODE_ON, MODE_VERIFY, MODE_AB = 0, 1, 2, 3  # include/gemmshim.h

MAX_PASS_ITERS = 20000  # iterations of one timed pass or lead-in, at most
CI_METHOD = "bootstrap percentile of the median ratio over rounds, 2000 resamples, seed 12345"
BOOT_RESAMPLES, BOOT_SEED = 2000, 12345


class GemmStats(ctypes.Structure):
    """gemmshim_stats_t, field for field."""
    _fields_ = [("calls", ctypes.c_uint64), ("routed", ctypes.c_uint64),
                ("forwarded", ctypes.c_uint64), ("fallbacks", ctypes.c_uint64),
                ("quick", ctypes.c_uint64)]

    def as_dict(self):
        return {name: int(getattr(self, name)) for name, _ in self._fields_}


class Shim:
    """The shim's control API, or a stand-in that says it is absent."""

    def __init__(self):
        self.lib = None
        try:
            lib = ctypes.CDLL(None)  # the process's global scope: LD_PRELOADed libraries
            lib.gemmshim_set_mode  # AttributeError when the shim is not loaded
        except (OSError, AttributeError):
            return
        lib.gemmshim_set_mode.argtypes = [ctypes.c_int]
        lib.gemmshim_set_mode.restype = ctypes.c_int
        lib.gemmshim_get_mode.restype = ctypes.c_int
        lib.gemmshim_version.restype = ctypes.c_int
        lib.gemmshim_version_string.restype = ctypes.c_char_p
        lib.gemmshim_get_stats.argtypes = [ctypes.POINTER(GemmStats)]
        lib.gemmshim_get_stats.restype = ctypes.c_int
        lib.gemmshim_reset_stats.restype = None
        self.lib = lib
        self.initial_mode = lib.gemmshim_get_mode()  # GEMMSHIM_MODE, or on by default

    @property
    def loaded(self):
        return self.lib is not None

    def version(self):
        if not self.loaded:
            return None
        s = self.lib.gemmshim_version_string()
        return s.decode() if s else str(self.lib.gemmshim_version())

    initial_mode = MODE_ON  # GEMMSHIM_MODE at start (read from the shim when loaded)
    aa = False  # --aa: the ON side runs with the shim off too (a control)
    off_holds = None  # --off-holds: the OFF side is the shim with these held at their prior

    def hold(self, sig, on):
        """gemmshim_hold_prior: signature `sig` (class hex; None: every one)
        served by its prior, not its tuned decision (on), or released."""
        fn = getattr(self.lib, "gemmshim_hold_prior", None)
        if fn is None:
            raise RuntimeError("--off-holds needs a shim with gemmshim_hold_prior")
        fn.argtypes = [ctypes.c_char_p, ctypes.c_int]
        fn.restype = ctypes.c_int
        rc = fn(sig.encode() if sig else None, 1 if on else 0)
        if rc != 0:
            raise RuntimeError(f"gemmshim_hold_prior({sig or 'all'}, {int(on)}) returned {rc}")

    def set_mode(self, on):
        """Route (on) or forward everything to cuBLAS (off); later calls only.
        With off_holds, OFF routes too, the signatures named held at their
        prior (the routing table's routes): the ratio is then tuned against
        the prior inside the application."""
        if not self.loaded:
            return
        if self.off_holds is not None and not self.aa:
            self.hold(None, False)
            if not on:
                for sig in self.off_holds or [None]:
                    self.hold(sig, True)
            on = True
        # ON is the mode the process started in when that routes and checks
        # (GEMMSHIM_MODE=verify): plain ON there would stop the verifying
        on_mode = MODE_VERIFY if self.initial_mode == MODE_VERIFY else MODE_ON
        rc = self.lib.gemmshim_set_mode(on_mode if on and not self.aa else MODE_OFF)
        if rc != 0:
            raise RuntimeError(f"gemmshim_set_mode({int(on)}) returned {rc}")

    def restore_mode(self):
        """Back to the mode the process started with (GEMMSHIM_MODE)."""
        if self.loaded:
            self.lib.gemmshim_set_mode(self.initial_mode)

    def stats(self):
        if not self.loaded:
            return None
        s = GemmStats()
        rc = self.lib.gemmshim_get_stats(ctypes.byref(s))
        if rc != 0:
            raise RuntimeError(f"gemmshim_get_stats returned {rc}")
        return s.as_dict()

    def reset_stats(self):
        if self.loaded:
            self.lib.gemmshim_reset_stats()


# ---- command line -------------------------------------------------------

def parse_args(description, argv=None):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--rounds", type=int, default=10,
                    help="alternating OFF/ON rounds (default 10)")
    ap.add_argument("--iters", type=int, default=None,
                    help="timed iterations per mode per round (default: the workload's)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="untimed iterations before each timed pass (default: the workload's)")
    ap.add_argument("--round-s", type=float, default=1.0,
                    help="each mode's timed pass lasts at least this many seconds (default 1.0; "
                         "more iterations than the workload's default where needed): at the "
                         "power limit the clock settles over a few hundred ms, so shorter "
                         "passes time a blend of the previous mode's clock and their own")
    ap.add_argument("--settle-s", type=float, default=0.3,
                    help="untimed lead-in of each pass, at least this many seconds (default 0.3)")
    ap.add_argument("--eager-warmup", type=int, default=0,
                    help="N eager iterations (the workload's probe) in each mode before it "
                         "is prepared and timed. For a tuning run (GEMMSHIM_TUNE=online): "
                         "nothing is tuned inside CUDA graph capture, so a workload timed "
                         "as a graph replay gets its signatures tuned here, eagerly, and "
                         "its graph captures the decided choices")
    ap.add_argument("--out", default=None, help="append one JSON line per workload here")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 2 rounds, 2 timed iterations, 1 warm-up")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile-gemm-share", action="store_true",
                    help="also profile one iteration per mode: share of GPU time in GEMM kernels")
    ap.add_argument("--attribute", type=int, default=0, metavar="N",
                    help="also profile N iterations per mode and say where each mode's "
                         "iteration time goes: GEMM kernels, other kernels and idle time, by "
                         "incremental time (bench/models/gs_trace.py), and the top GEMM kernels")
    ap.add_argument("--aa", action="store_true",
                    help="control run: the ON side runs with the shim off as well, so the "
                         "ratio shows the method's own bias and noise")
    ap.add_argument("--off-holds", default=None, metavar="all|HEX[,HEX...]",
                    help="the OFF side runs with the shim on and these signatures (class hex "
                         "as the tune cache keys them; all: every one) held at their prior "
                         "(gemmshim_hold_prior): the ratio is the tuned decisions' effect over "
                         "the routing table's routes, inside the model")
    ap.add_argument("--workload", default=None,
                    help="run only the workload of this name (a script may hold several)")
    ap.add_argument("--ab-iters", type=int, default=0,
                    help="instead of OFF/ON timing: run N eager iterations in the shim's ab "
                         "mode (GEMMSHIM_MODE=ab, set by the caller), whose report at exit "
                         "(GEMMSHIM_REPORT) times each signature's choice against cuBLAS "
                         "inside the model")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds = min(args.rounds, 2)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    for name in ("ab_iters", "eager_warmup", "round_s", "settle_s", "attribute"):
        if getattr(args, name) < 0:
            ap.error("--%s must be >= 0" % name.replace("_", "-"))
    return args


def seed_all(seed):
    random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_on_gpu(ctor, dtype):
    """Construct a module directly on the GPU in `dtype`: random init of a
    multi-GB model on the CPU in fp32 would take most of the time budget."""
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("cuda"):
            return ctor()
    finally:
        torch.set_default_dtype(prev)


def hf_config(cls, **kw):
    """A transformers config asking for PyTorch's SDPA attention: the eager
    path runs the attention scores as cuBLAS batched GEMMs, so the default
    (which has changed between transformers versions) would change what is
    measured. Falls back to the default where the kwarg is not accepted."""
    try:
        return cls(attn_implementation="sdpa", **kw)
    except (TypeError, ValueError):
        return cls(**kw)


def attn_impl(model):
    cfg = getattr(model, "config", None)
    return getattr(cfg, "_attn_implementation", None)


# ---- timing -------------------------------------------------------------

def time_ms(fn, iters, warmup):
    """Median milliseconds of fn() over `iters` calls, after `warmup` calls,
    each call bracketed by CUDA events on the current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    pairs = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in pairs)


def bootstrap_median_ci(values, resamples=BOOT_RESAMPLES, seed=BOOT_SEED):
    """95% percentile-bootstrap interval of the median of `values`."""
    if len(values) < 2:
        return values[0], values[0]
    rng = random.Random(seed)
    n = len(values)
    meds = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    return meds[int(0.025 * (resamples - 1))], meds[int(math.ceil(0.975 * (resamples - 1)))]


class Workload:
    """What the runner needs to know about one workload.

    fn:      one iteration (eager call or graph replay); timed.
    prepare: called with the mode (True = ON) after the mode was switched and
             before timing; graph workloads re-capture here, since a graph
             captured in one mode replays that mode's kernels.
    probe:   one eager iteration, run once per mode to count the GEMM calls
             the shim sees (a graph replay goes around the shim). Default fn.
    """

    def __init__(self, name, kind, fn, iters, warmup, prepare=None, probe=None, info=None):
        self.name, self.kind, self.fn = name, kind, fn
        self.iters, self.warmup = iters, warmup
        self.prepare = prepare or (lambda on: None)
        self.probe = probe or fn
        self.info = info or {}


def _probe_stats(shim, wl, on):
    """GEMM calls of one eager iteration in one mode, as the shim counts them."""
    shim.set_mode(on)
    shim.reset_stats()
    wl.probe()
    torch.cuda.synchronize()
    return shim.stats()


def run_alternating(wl, args, shim):
    """Time wl with the shim OFF and ON over args.rounds rounds; return the
    result record (also printed and appended to args.out)."""
    iters = args.iters or (2 if args.quick else wl.iters)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else wl.warmup)
    modes = (False, True) if shim.loaded else (False,)

    # Untimed pass per mode first: cuBLAS heuristics, the shim's lazy setup
    # (tuning, workspaces), allocator growth and autotuners land here, not in
    # round 1. The probe doubles as the per-iteration GEMM count.
    stats, per_iter = {}, []
    for on in modes:
        shim.set_mode(on)
        for _ in range(args.eager_warmup):
            wl.probe()
        wl.prepare(on)
        time_ms(wl.fn, 1, warmup)
        per_iter.append(time_ms(wl.fn, 3, 0))
        stats["on" if on else "off"] = _probe_stats(shim, wl, on)

    # Passes long enough for the clock to settle at each mode's own power draw
    # (bench/models/sustained.py shows why), sized on the faster mode so that
    # both last at least that long: explicit --iters/--warmup win.
    if not args.quick:
        fastest = max(min(per_iter), 1e-3)  # ms; a no-op workload still gets a finite count
        if args.iters is None:
            iters = min(max(iters, math.ceil(args.round_s * 1000 / fastest)), MAX_PASS_ITERS)
        if args.warmup is None:
            warmup = min(max(warmup, math.ceil(args.settle_s * 1000 / fastest)), MAX_PASS_ITERS)

    ms = {False: [], True: []}
    for r in range(args.rounds):
        # Round 1, 3, ... (r even) starts with OFF, 2, 4, ... with ON: order effects cancel.
        order = modes if r % 2 == 0 else tuple(reversed(modes))
        for on in order:
            shim.set_mode(on)
            wl.prepare(on)
            ms[on].append(time_ms(wl.fn, iters, warmup))
    shim.restore_mode()

    rec = _record(wl, args, shim, ms, stats, iters, warmup)
    if args.profile_gemm_share:
        rec["gemm_share"] = {("on" if on else "off"): profile_gemm_share(wl, shim, on)
                             for on in modes}
    if args.attribute:
        rec["attribution"] = attribution(wl, shim, modes, args.attribute)
    emit(rec, args.out)
    if rec.get("attribution"):
        print_attribution(wl.name, rec["attribution"])
    return rec


def run_ab(wl, args, shim):
    """The ab pass: args.ab_iters eager iterations with the shim in ab mode
    (each signature's calls alternate between its choice and cuBLAS, timed;
    the table is the shim's report at exit). Graph workloads run their eager
    step: a replay goes around the shim."""
    if not shim.loaded or shim.lib.gemmshim_get_mode() != MODE_AB:
        raise SystemExit("--ab-iters needs the shim loaded with GEMMSHIM_MODE=ab")
    for _ in range(args.ab_iters):
        wl.probe()
    torch.cuda.synchronize()
    rec = {"workload": wl.name, "kind": wl.kind, "ab_iters": args.ab_iters,
           "gemm_stats": shim.stats(), "gemmshim_env": environment(shim)["gemmshim_env"],
           "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
    print(f"{wl.name}: {args.ab_iters} iterations in ab mode", flush=True)
    return rec


def _record(wl, args, shim, ms, stats, iters, warmup):
    off_ms = statistics.median(ms[False])
    rec = {"workload": wl.name, "kind": wl.kind, "rounds": args.rounds,
           "iters": iters, "warmup": warmup,
           "round_s": None if args.quick or args.iters is not None else args.round_s,
           "settle_s": None if args.quick or args.warmup is not None else args.settle_s,
           "eager_warmup": args.eager_warmup, "off_ms": off_ms, "on_ms": None,
           "ratio_median": None, "ratio_lo95": None, "ratio_hi95": None, "ratios": None,
           "ci_method": None, "off_ms_rounds": ms[False], "on_ms_rounds": ms[True] or None}
    if shim.loaded:
        # per-round ratio: both modes' times from the same round, adjacent in time
        ratios = [o / n for o, n in zip(ms[False], ms[True])]
        lo, hi = bootstrap_median_ci(ratios)
        rec.update(on_ms=statistics.median(ms[True]), ratio_median=statistics.median(ratios),
                   ratio_lo95=lo, ratio_hi95=hi, ratios=ratios, ci_method=CI_METHOD)
    rec["gemm_stats_per_iter"] = stats or None
    rec["gemm_calls_routed"] = stats["on"]["routed"] if stats.get("on") else None
    rec.update(environment(shim))
    rec["info"] = wl.info
    rec["quick"] = bool(args.quick)
    rec["aa"] = bool(args.aa)
    # the OFF side held at the prior: a tuned-vs-prior ratio, not shim-vs-plain
    rec["off_holds"] = getattr(args, "off_holds", None)
    rec["time"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    return rec


def environment(shim):
    return {"shim_loaded": shim.loaded, "shim_version": shim.version(),
            "gemmshim_env": {k: v for k, v in sorted(os.environ.items())
                             if k.startswith("GEMMSHIM_") or k == "LD_PRELOAD"},
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "gpu": torch.cuda.get_device_name()}


def _fmt(x, spec):
    """format(x, spec), or "n/a" padded to the same width."""
    if x is not None:
        return format(x, spec)
    return "n/a".rjust(int(re.match(r"\d*", spec).group() or 0))


def emit(rec, out):
    line = (f"{rec['workload']:<20} off {_fmt(rec['off_ms'], '9.3f')} ms  "
            f"on {_fmt(rec['on_ms'], '9.3f')} ms  ratio {_fmt(rec['ratio_median'], '5.3f')} "
            f"[{_fmt(rec['ratio_lo95'], '.3f')}, {_fmt(rec['ratio_hi95'], '.3f')}]  "
            f"routed/iter {_fmt(rec['gemm_calls_routed'], 'd')}")
    st = (rec.get("gemm_stats_per_iter") or {}).get("on")
    if st:
        line += f" of {st['calls']} calls"
    share = rec.get("gemm_share")
    if share:
        line += "  gemm share " + " ".join(
            f"{k} {_fmt(v and v['share'], '.1%')}" for k, v in share.items())
    print(line, flush=True)
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")


def announce(shim):
    """One line saying what runs, before the (slow) model build."""
    if shim.loaded:
        print(f"gemmshim {shim.version()} loaded: timing OFF vs ON", flush=True)
    else:
        print("gemmshim not loaded (no gemmshim_set_mode in the process; run under "
              "LD_PRELOAD=.../libgemmshim.so): timing plain PyTorch, ratio n/a", flush=True)
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")


# ---- --profile-gemm-share, --attribute ---------------------------------

def profile_kernels(wl, shim, on, iters):
    """The GPU kernels of `iters` iterations in one mode (gs_trace.kernel_events),
    read from the exported Chrome trace, whose format has been stable across
    PyTorch versions, unlike the fields of key_averages()."""
    from torch.profiler import ProfilerActivity, profile

    shim.set_mode(on)
    wl.prepare(on)
    time_ms(wl.fn, 1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the profiler's notes on its cycles
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                wl.fn()
            torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            return gs_trace.kernel_events(json.load(f))
    finally:
        os.unlink(path)


def profile_gemm_share(wl, shim, on):
    """Share of GPU kernel time (summed durations) spent in GEMM kernels over
    one iteration in one mode."""
    kernels = profile_kernels(wl, shim, on, 1)
    shim.restore_mode()
    total = sum(dur for _, dur, _ in kernels)
    if total <= 0:
        return None
    top = {}
    for _, dur, name in kernels:
        if gs_trace.is_gemm_kernel(name):
            top[name[:gs_trace.NAME_CHARS]] = top.get(name[:gs_trace.NAME_CHARS], 0.0) + dur
    gemm = sum(top.values())
    kernels = sorted(top.items(), key=lambda kv: -kv[1])[:5]
    return {"share": gemm / total, "gemm_us": gemm, "kernel_us": total,
            "top_gemm_kernels": [{"name": n, "us": us} for n, us in kernels]}


def attribution(wl, shim, modes, iters):
    """Where each mode's iteration time goes (gs_trace.summarize), profiled
    as OFF, ON, OFF, ON passes of `iters` iterations; each mode's account is
    that of its second pass (the first one warms the profiler)."""
    out = {}
    for _ in range(2):
        for on in modes:
            out["on" if on else "off"] = gs_trace.summarize(
                profile_kernels(wl, shim, on, iters), iters)
    shim.restore_mode()
    return out


def print_attribution(name, acc):
    """One line per mode, each followed by its four costliest GEMM kernels."""
    for mode, a in acc.items():
        print(f"  {name} {mode:3}: per iteration {a['span_us']:9.1f} us = GEMM "
              f"{a['gemm_us']:9.1f} + other kernels {a['other_us']:8.1f} + idle "
              f"{a['gaps_us']:7.1f}  ({a['kernels_per_iter']:.0f} kernels)", flush=True)
        for k in a["top_gemm_kernels"][:4]:
            print(f"      {k['us']:9.1f} us  x{k['calls']:5.1f}  {k['name'][:90]}", flush=True)


# ---- entry point shared by the workload scripts --------------------------

def bench_main(description, workloads):
    """Parse the command line, then time every Workload that
    workloads(args) yields (a generator, so a script can change global
    settings such as TF32 between its workloads, or free one model before
    building the next)."""
    args = parse_args(description)
    shim = Shim()
    shim.aa = args.aa
    if args.off_holds:
        shim.off_holds = [] if args.off_holds == "all" else args.off_holds.split(",")
    announce(shim)
    seed_all(args.seed)
    t0 = time.time()
    matched = 0
    for wl in workloads(args):
        if args.workload and wl.name != args.workload:
            continue
        matched += 1
        if args.ab_iters:
            run_ab(wl, args, shim)
        else:
            run_alternating(wl, args, shim)
    if args.workload and not matched:
        raise SystemExit(f"no workload named {args.workload} in this script")
    print(f"({time.time() - t0:.1f} s)", flush=True)
