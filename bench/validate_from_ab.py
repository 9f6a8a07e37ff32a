#!/usr/bin/env python3
"""Keep the prior where a tuned decision loses inside the application.

    validate_from_ab.py --cache CACHE --replay GEMMSHIM-REPLAY [--min SPEEDUP] [--dry-run]
                        REPORT.json...

The reports are the shim's ab reports (GEMMSHIM_MODE=ab) of the application
run from CACHE: each signature's route and cuBLAS as called took turns
inside the application, each call timed. A signature whose tuned decision
replaced its prior, and whose route there was slower than cuBLAS as called
(speedup below --min, 1.0 by default), is given back to its prior in the
cache by the shim's own writer (gemmshim-replay --keep-prior; the later
line for a class wins): a decision measured alone can lose in context (the operands
another kernel left in L2, a clock set by the neighbours' power). Rows of
several processes and reports add up per class, weighted by their calls.

`gemmshim validate --cache CACHE -- APP` runs the application and then this.
Exit: 0 (also when nothing was reverted), 2 on a usage or file error.
"""
import argparse
import json
import math
import os
import subprocess
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


def give_back(replay, cache, entries):
    """The classes back to their prior, by the shim's own cache writer
    (gemmshim-replay --keep-prior): one write per decision, under the
    cache's lock, the route it had named as was=."""
    text = "".join(f"{h}\t{comment}\n" for h, comment in entries)
    try:
        r = subprocess.run([replay, "--keep-prior", "--cache", cache], input=text, text=True,
                           capture_output=True)
    except OSError as e:
        fail(f"cannot run {replay}: {e}")
    if r.stderr:
        sys.stderr.write(r.stderr)
    if r.returncode != 0:
        fail(f"{replay} --keep-prior ended with status {r.returncode}")


def main(argv):
    ap = argparse.ArgumentParser(prog="validate_from_ab.py", description=__doc__.split("\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--replay", default=None,
                    help="gemmshim-replay, which writes the decisions (not needed with --dry-run)")
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
            lines.append((hexs, f"{d['shape'] or sig} (in the application {route_text(d)} ran "
                                f"{speed:.3f}x cuBLAS as called: the prior kept)"))
        else:
            verdict = f"tuned {route_text(d)} holds"
        rows.append(f"  {speed:7.3f}x  {int(turns):7d}  {sig}: {verdict}")
    print(f"gemmshim validate: {len(seen)} signatures timed in the application "
          f"(speedup over cuBLAS as called there, timed turns):")
    print("\n".join(rows))
    if lines and not a.dry_run:
        if not a.replay:
            fail("--replay GEMMSHIM-REPLAY is needed to write the cache")
        give_back(a.replay, a.cache, lines)
    print(f"gemmshim validate: {len(lines)} decisions {'would give' if a.dry_run else 'gave'} "
          f"way to the prior{'' if a.dry_run else ' in ' + a.cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
