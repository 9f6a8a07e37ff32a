#!/usr/bin/env python3
"""The tuned cache against its prior, end to end, by the application's own metric.

    validate_e2e.py check --metric REGEX
    validate_e2e.py value --metric REGEX OUTPUT
    validate_e2e.py served --cache CACHE [--sigs SIGS]... [REPORT.json...]
    validate_e2e.py decide --cache CACHE --replay GEMMSHIM-REPLAY [--higher-is-better]
                    [--dry-run] [--sigs SIGS]... --pair PRIOR TUNED [--pair ...] [REPORT.json...]

`gemmshim validate --e2e N --metric REGEX` runs the application N times with
every decision held at its prior (GEMMSHIM_HOLD=all) and N times from the
cache, alternating, and uses this for what is not running processes:

check   REGEX must compile (Python's re) and have a capture group.
value   the number in OUTPUT (a run's stdout and stderr): group 1 of the last
        match of REGEX, searched over the whole text with re.MULTILINE, as a
        positive finite float. Printed; exit 1 when there is none, with why
        on stdout (the launcher's line names the run).
served  how many tuned decisions (a cache decision other than its prior)
        serve the application: the classes its signature files (a
        GEMMSHIM_RECORD of the ab step) and its ab reports name.
decide  per pair the ratio prior / tuned (tuned / prior with
        --higher-is-better): above 1, the tuned cache ran faster. When the
        median of the ratios is not above 1.0 (a tie goes to the prior), every
        tuned decision that serves the application gives way to its prior in
        CACHE (gemmshim-replay --keep-prior, as validate_from_ab.py does).
        One line says the median, min and max, and what was done.

Exit: 0; 1 (value) no metric in the output; 2 a usage or file error, one
"gemmshim: validate: ..." line on stderr.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gs_signatures import Bad, read_sigs  # noqa: E402
from report_from_cache import read_cache  # noqa: E402
from validate_from_ab import fail, give_back, route_text  # noqa: E402


def compile_metric(text):
    try:
        rx = re.compile(text, re.MULTILINE)
    except re.error as e:
        fail(f"--metric '{text}' is not a regular expression (Python's re: {e})")
    if rx.groups < 1:
        fail(f"--metric '{text}' has no capture group: group 1 is the number read")
    return rx


def metric_value(rx, text):
    """(value, None), or (None, why): group 1 of the last match."""
    last = None
    for last in rx.finditer(text):
        pass
    if last is None:
        return None, "no match"
    got = last.group(1)
    try:
        v = float(got)
    except (TypeError, ValueError):
        v = None
    if v is None or not math.isfinite(v) or v <= 0:
        return None, f"'{got}' (group 1 of its last match) is not a positive number"
    return v, None


def replaces_prior(d):
    """As gemmshim-replay reads a decision: one that replaces its prior
    (a prior the cache records, not the decision's own route)."""
    prior = d["kv"].get("prior")
    if prior in (None, "?"):
        return False
    if d["family"] == "cublas" and prior == "cublas":
        return False
    return route_text(d) != prior


def report_classes(paths):
    """{class hex: signature} of every row of the ab reports, timed or not."""
    out = {}
    for path in paths:
        try:
            with open(path) as f:
                rows = json.load(f)["rows"]
            for r in rows:
                if r.get("class"):
                    out.setdefault(r["class"], r.get("signature", ""))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            fail(f"{path} is not a gemmshim ab report ({type(e).__name__}: {e})")
    return out


def served(cache, sig_paths, reports):
    """[(class hex, shape)] of the tuned decisions the application was
    served by: its classes (signature files, ab reports) whose decision in
    CACHE replaces the prior."""
    try:
        _, decisions, _ = read_cache(cache)
        sigs = read_sigs([p for p in sig_paths if os.path.exists(p)])["sigs"]
    except Bad as e:
        fail(str(e))
    classes = {key[0]: s["shape"] for key, s in sigs.items() if key[1]}
    for hexs, sig in report_classes(reports).items():
        classes.setdefault(hexs, sig)
    out = []
    for hexs in sorted(classes):
        d = decisions.get(hexs)
        if d is not None and replaces_prior(d):
            out.append((hexs, d["shape"] or classes[hexs]))
    return out


def fmt(v):
    return f"{v:.3f}x"


def decide(a):
    ratios = []
    for prior, tuned in a.pair:
        if not (prior > 0 and tuned > 0 and math.isfinite(prior) and math.isfinite(tuned)):
            fail(f"--pair {prior} {tuned}: two positive numbers")
        ratios.append(tuned / prior if a.higher_is_better else prior / tuned)
    med = statistics.median(ratios)
    tuned = served(a.cache, a.sigs, a.reports)
    pairs = f"{len(ratios)} pair{'s' if len(ratios) > 1 else ''}"
    head = (f"gemmshim validate: end to end, the tuned cache ran {fmt(med)} the prior "
            f"(median of {pairs}; min {fmt(min(ratios))}, max {fmt(max(ratios))}; "
            f"above 1: faster)")
    if med > 1.0:
        print(f"{head}: the cache holds ({len(tuned)} tuned decisions serve the application)")
        return 0
    if not tuned:
        print(f"{head}: no tuned decision serves the application: nothing to give back")
        return 0
    if not a.dry_run:
        why = f"end to end {fmt(med)} the prior over {pairs}: the prior kept"
        give_back(a.replay, a.cache, [(h, f"{shape} ({why})") for h, shape in tuned])
    print(f"{head}: {len(tuned)} tuned decisions {'would give' if a.dry_run else 'gave'} way "
          f"to the prior{'' if a.dry_run else ' in ' + a.cache}")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog="validate_e2e.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--metric", required=True)
    v = sub.add_parser("value")
    v.add_argument("--metric", required=True)
    v.add_argument("output")
    for name in ("served", "decide"):
        p = sub.add_parser(name)
        p.add_argument("--cache", required=True)
        p.add_argument("--sigs", action="append", default=[])
        p.add_argument("reports", nargs="*")
    d = sub.choices["decide"]
    d.add_argument("--replay", default=None)
    d.add_argument("--higher-is-better", action="store_true")
    d.add_argument("--dry-run", action="store_true")
    d.add_argument("--pair", nargs=2, type=float, action="append", required=True,
                   metavar=("PRIOR", "TUNED"))
    a = ap.parse_args(argv)
    if a.cmd == "check":
        compile_metric(a.metric)
        return 0
    if a.cmd == "value":
        rx = compile_metric(a.metric)
        try:
            with open(a.output, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            fail(f"cannot read {a.output}: {e.strerror or e}")
        value, why = metric_value(rx, text)
        if value is None:  # on stdout: the launcher says it, naming the run
            print(f"--metric '{a.metric}': {why} in its output")
            return 1
        print(repr(value))
        return 0
    if a.cmd == "served":
        print(len(served(a.cache, a.sigs, a.reports)))
        return 0
    if not a.dry_run and not a.replay:
        fail("--replay GEMMSHIM-REPLAY is needed to write the cache")
    return decide(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
