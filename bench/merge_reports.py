#!/usr/bin/env python3
"""Merge the per-process ab reports of one run into one report.

    merge_reports.py PREFIX OUT

With GEMMSHIM_MODE=ab and GEMMSHIM_REPORT=PREFIX every process writes a
report of its own: the first PREFIX.csv, later ones PREFIX.<pid>.csv (or,
with "%p" in PREFIX, each the name with its pid). This reads PREFIX.csv and
every PREFIX.<pid>.csv (a "%p" in PREFIX matches any pid; "%%" is a "%"),
and writes one report to OUT: a CSV with the same columns, or the JSON form
when OUT ends in ".json".

Rows are merged by signature and route: calls summed; ours_us and cublas_us
the call-weighted means of the reports that measured them; speedup
recomputed as cublas_us / ours_us; max_err the largest. Rows keep the order
in which they were first seen (PREFIX.csv first, then by pid).

Exit status 0; 2 with one "merge_reports: ..." line on stderr when there is
no report to read, a file is not an ab report, or OUT is unwritable.
"""
import csv
import glob
import json
import math
import os
import re
import sys

COLUMNS = ["signature", "calls", "ours_us", "cublas_us", "speedup", "max_err", "route"]


def fail(msg):
    print("merge_reports: " + msg, file=sys.stderr)
    sys.exit(2)


def report_files(prefix):
    """PREFIX.csv, then PREFIX.<pid>.csv by pid; with "%p" in PREFIX, the
    name with any pid there, by pid."""
    rx, gl = "", ""
    for piece in re.split(r"(%%|%p)", prefix):
        if piece == "%p":
            rx, gl = rx + "([0-9]+)", gl + "*"
        elif piece == "%%":
            rx, gl = rx + "%", gl + "%"
        else:
            rx, gl = rx + re.escape(piece), gl + glob.escape(piece)
    if "%p" not in re.split(r"(%%|%p)", prefix):
        rx, gl = rx + r"(?:\.([0-9]+))?", gl + "*"  # PREFIX.csv, PREFIX.<pid>.csv
    match = re.compile(rx + r"\.csv").fullmatch
    found = []
    for path in set(glob.glob(gl + ".csv")):
        m = match(path)
        if m and os.path.isfile(path):
            found.append((-1 if m.group(1) is None else int(m.group(1)), path))
    return [path for _, path in sorted(found)]


def number(text, path, line):
    text = (text or "").strip()
    try:
        v = float(text)
    except ValueError:
        fail(f"{path}:{line}: '{text}' is not a number")
    return v


def read(path, rows, order):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                fail(f"{path} is not a gemmshim ab report (no {', '.join(missing)} column)")
            for r in reader:
                line = reader.line_num
                key = (r["signature"], r["route"])
                calls = int(number(r["calls"], path, line))
                ours, cub = number(r["ours_us"], path, line), number(r["cublas_us"], path, line)
                err = number(r["max_err"], path, line)
                m = rows.get(key)
                if m is None:
                    m = rows[key] = {"calls": 0, "ours": [0.0, 0], "cublas": [0.0, 0],
                                     "err": math.nan}
                    order.append(key)
                m["calls"] += calls
                # call-weighted means over the reports that measured a side
                for side, v in (("ours", ours), ("cublas", cub)):
                    if not math.isnan(v):
                        m[side][0] += v * calls
                        m[side][1] += calls
                if not math.isnan(err) and (math.isnan(m["err"]) or err > m["err"]):
                    m["err"] = err
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        fail(f"cannot read {path} ({type(e).__name__}: {e})")


def merged(rows, order):
    for key in order:
        m = rows[key]
        ours = m["ours"][0] / m["ours"][1] if m["ours"][1] else math.nan
        cub = m["cublas"][0] / m["cublas"][1] if m["cublas"][1] else math.nan
        speedup = cub / ours if ours > 0 and cub > 0 else math.nan
        yield key[0], m["calls"], ours, cub, speedup, m["err"], key[1]


def fmt(v, spec):
    return "nan" if math.isnan(v) else format(v, spec)


def write_csv(out, rows):
    # the shim's own format: the signature quoted, numbers as it prints them
    out.write(",".join(COLUMNS) + "\n")
    for sig, calls, ours, cub, sp, err, route in rows:
        out.write('"%s",%d,%s,%s,%s,%s,%s\n' % (sig.replace('"', '""'), calls, fmt(ours, ".3f"),
                                                fmt(cub, ".3f"), fmt(sp, ".4f"),
                                                fmt(err, ".3e"), route))


def write_json(out, rows):
    def num(v, spec):
        return None if math.isnan(v) else float(format(v, spec))
    doc = {"version": 1, "rows": [
        {"signature": sig, "calls": calls, "ours_us": num(ours, ".3f"),
         "cublas_us": num(cub, ".3f"), "speedup": num(sp, ".4f"), "max_err": num(err, ".3e"),
         "route": route} for sig, calls, ours, cub, sp, err, route in rows]}
    json.dump(doc, out, indent=1)
    out.write("\n")


def main(argv):
    if len(argv) != 3 or argv[1].startswith("-"):
        fail("usage: merge_reports.py PREFIX OUT (merges PREFIX.csv and PREFIX.<pid>.csv)")
    prefix, out = argv[1], argv[2]
    files = report_files(prefix)
    if not files:
        fail(f"no report {prefix}.csv or {prefix}.<pid>.csv found")
    if any(os.path.abspath(f) == os.path.abspath(out) for f in files):
        fail(f"{out} is one of the reports to merge")
    rows, order = {}, []
    for f in files:
        read(f, rows, order)
    result = list(merged(rows, order))
    try:
        with open(out, "w", newline="") as f:
            (write_json if out.endswith(".json") else write_csv)(f, result)
    except OSError as e:
        fail(f"cannot write {out} ({e.strerror or e})")
    print(f"merge_reports: {len(files)} reports, {len(result)} signatures -> {out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
