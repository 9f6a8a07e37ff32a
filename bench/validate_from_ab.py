#!/usr/bin/env python3
"""Keep the prior where a tuned decision loses inside the application.

    validate_from_ab.py --cache CACHE [--min SPEEDUP] [--dry-run] REPORT.json...

The reports are the shim's ab reports (GEMMSHIM_MODE=ab) of the application
run from CACHE: each signature's route and cuBLAS as called took turns
inside the application, each call timed. A signature whose tuned decision
replaced its prior, and whose route there was slower than cuBLAS as called
(speedup below --min, 1.0 by default), gets a decision that keeps the
prior, appended to the cache as the shim writes one (its last line for a
class wins): a decision measured alone can lose in context (the operands
another kernel left in L2, a clock set by the neighbours' power). Rows of
several processes and reports add up per class, weighted by their calls.

`gemmshim validate --cache CACHE -- APP` runs the application and then this.
Exit: 0 (also when nothing was reverted), 2 on a usage or file error.
"""
import argparse
import fcntl
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gs_signatures import Bad, decode_class  # noqa: E402
from report_from_cache import read_cache  # noqa: E402


def fail(msg):
    print("gemmshim: validate: " + msg, file=sys.stderr)
    sys.exit(2)


def read_reports(paths):
    """{class hex: [ours time, cuBLAS time, timed turns, shape, routes]} over
    every row that carries a class and both times."""
    out = {}
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
            rows = doc["rows"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            fail(f"{path} is not a gemmshim ab report ({type(e).__name__}: {e})")
        for r in rows:
            hexs, ours, cub, calls = r.get("class"), r.get("ours_us"), r.get("cublas_us"), r.get("calls")
            if not hexs or not isinstance(ours, (int, float)) or not isinstance(cub, (int, float)) \
                    or not isinstance(calls, int) or ours <= 0 or cub <= 0 or calls < 3:
                continue
            # turn 0 is untimed; then cuBLAS and the route alternate
            half = (calls - 1) / 2.0
            acc = out.setdefault(hexs, [0.0, 0.0, 0.0, r.get("signature", ""), set()])
            acc[0] += ours * half
            acc[1] += cub * half
            acc[2] += calls - 1
            acc[4].add(r.get("route", ""))
    return out


def route_text(d):
    return "cublas" if d["family"] == "cublas" else f"{d['family']}/{d['config']}"


def keep_prior_line(hexs, d, speedup):
    prior = d["kv"].get("prior", "?")
    if prior in ("cublas", "?"):
        family, config = "cublas", "as_called"
    else:
        family, _, config = prior.partition("/")
    shape = d["shape"] or ""
    return (f"sig\t{hexs}\t{family}\t{config}\tgain=1.0000\tlo95=1.0000\tpairs=0\t"
            f"ms={float(d['kv'].get('ms', 0) or 0):.2f}\tprior={prior}\tvs_prior=1.0000\t"
            f"# {shape} (in the application {route_text(d)} ran {speedup:.3f}x cuBLAS as "
            f"called: the prior kept)\n")


def append(path, lines):
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0, os.SEEK_END)
        text = "".join(lines).encode()
        if f.tell() > 0:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":  # a torn last line: start a new one
                text = b"\n" + text
        f.seek(0, os.SEEK_END)
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
        fcntl.flock(f, fcntl.LOCK_UN)


def main(argv):
    ap = argparse.ArgumentParser(prog="validate_from_ab.py", description=__doc__.split("\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--min", type=float, default=1.0,
                    help="a tuned route below this speedup over cuBLAS in the application "
                         "gives way to the prior (1.0)")
    ap.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")
    ap.add_argument("reports", nargs="+")
    a = ap.parse_args(argv)
    if not (a.min > 0 and math.isfinite(a.min)):
        fail(f"--min {a.min}: a positive number")
    try:
        _, decisions, _ = read_cache(a.cache)
    except (OSError, Bad) as e:
        fail(str(e))
    seen = read_reports(a.reports)
    if not seen:
        print("gemmshim validate: no signature with timed turns in the reports: nothing to check")
        return 0
    lines, rows = [], []
    for hexs, (ours, cub, turns, sig, routes) in sorted(seen.items(), key=lambda kv: -kv[1][1]):
        speed = cub / ours
        d = decisions.get(hexs)
        if decode_class(hexs) is None:
            verdict = "not a class"
        elif d is None:
            verdict = "no decision (the prior served it)"
        elif route_text(d) == d["kv"].get("prior") or d["family"] == "cublas" and \
                d["kv"].get("prior") == "cublas":
            verdict = "the prior (kept)"
        elif speed < a.min:
            verdict = f"tuned {route_text(d)} reverted to the prior {d['kv'].get('prior', '?')}"
            lines.append(keep_prior_line(hexs, d, speed))
        else:
            verdict = f"tuned {route_text(d)} holds"
        rows.append(f"  {speed:7.3f}x  {int(turns):7d}  {sig}: {verdict}")
    print(f"gemmshim validate: {len(seen)} signatures timed in the application "
          f"(speedup over cuBLAS as called there, timed turns):")
    print("\n".join(rows))
    if lines and not a.dry_run:
        try:
            append(a.cache, lines)
        except OSError as e:
            fail(f"cannot append to {a.cache}: {e}")
    print(f"gemmshim validate: {len(lines)} decisions {'would give' if a.dry_run else 'gave'} "
          f"way to the prior{'' if a.dry_run else ' in ' + a.cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
