#!/usr/bin/env python3
"""Write dispatch/gs_table_data.h (or a routing table file) from bench_ab CSV
files, bench_fp8 CSV files (FP8 cublasLtMatmul: the shim against the call as
made) or gemmshim ab reports (GEMMSHIM_REPORT.csv). Both hold the same text,
"gemmshim-table 1" and one entry a line (the header as C string literals:
dispatch/gs_table.c parses the built-in table with the file parser).

Every measured shape becomes one entry per GPU model (the lowest of its
measurements on that model: route, kernel configuration, compute capability,
input type, layout, m*n, k, speedup, model); dispatch routes a problem only
when the nearest entry of its class measured >= 0.98x cuBLAS, reading the
entries of its own model where there are any and otherwise the lowest over
all models (dispatch/gs_table.c). Rows of gemmshim ab reports carry no
model: they apply to any GPU.

usage: table_from_csv.py [--note TEXT] CC OUT.h FILE.csv [...]  (CC: 90 for sm_90)
       table_from_csv.py --text CC OUT.table FILE.csv [...]   (a routing table file
       for GEMMSHIM_TABLE / gemmshim_load_table, format "gemmshim-table 1")
       table_from_csv.py --shapes REPORT.csv [...]            (the distinct shapes of
       ab reports as a bench_ab --shapes list, on stdout: what `gemmshim tune
       --report` measures)
"""
import csv
import decimal
import glob
import os
import re
import sys
import textwrap

# the input types a table entry may name; FP8 with the scale mode of A and B
# (dispatch/gs_table.c, parse_dtype)
DTYPES = ("f32", "bf16", "f16") + tuple(f"{t}/{s}" for t in ("e4m3", "e5m2")
                                        for s in ("tensor", "row", "none"))
# bench_fp8's scale_a / scale_b column -> the table's scale qualifier
FP8_SCALES = {"scalar": "tensor", "outer_vec": "row", "none": "none"}


def gpu_key(name):
    """The table's model key of a device name, as dispatch/gs_problem.h's
    gs_gpu_key: "NVIDIA H100 80GB HBM3" -> "H100"; "" for ab reports."""
    if not name or name == "ab report":
        return ""
    if name.startswith("NVIDIA "):
        name = name[len("NVIDIA "):]
    return name.split(" ")[0][:15]


def kernel_name_maps():
    """[(prefix, family, config, strip regex or None)] from each family's
    kernels/<family>/kernel_names.txt (installed: kernel_names/*.txt beside
    this script), longest prefix first: the families name their own kernels,
    this tool names none."""
    here = os.path.dirname(os.path.realpath(__file__))
    paths = sorted(glob.glob(os.path.join(here, "..", "kernels", "*", "kernel_names.txt"))) or \
        sorted(glob.glob(os.path.join(here, "kernel_names", "*.txt")))
    if not paths:
        raise SystemExit(f"table_from_csv: no kernel name lists (kernels/*/kernel_names.txt "
                         f"beside {here}/.., or {here}/kernel_names/*.txt): every row would "
                         "be dropped")
    maps = []
    for path in paths:
        for line in open(path):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 3)
            if len(parts) < 3 or parts[2] not in ("-", "="):
                raise SystemExit(f"{path}: bad line: {line}")
            strip = re.compile(parts[3]) if len(parts) > 3 else None
            maps.append((parts[0], parts[1], parts[2], strip))
    return sorted(maps, key=lambda m: -len(m[0]))


KERNEL_NAMES = kernel_name_maps()


def route_of(kernel):
    """(family, configuration) of a kernel name as the shim logs it, as a
    table entry names them ("-": a family of one configuration), or None."""
    for prefix, family, config, strip in KERNEL_NAMES:
        if kernel.startswith(prefix):
            if config == "-":
                return (family, "-")
            return (family, strip.sub("", kernel) if strip else kernel)
    return None


def entry_text(cc, r):
    """One table entry: FAMILY CONFIG CC DTYPE LAYOUT M N K SPEEDUP [GPU] [exact]."""
    family, config = route_of(r["route"])
    return (f'{family} {config} {cc} {r["dtype"]} {r["layout"]} {r["m"]} {r["n"]} {r["k"]} '
            f'{ratio_text(r["speedup"])} {gpu_key(r["gpu"])}'
            f'{" exact" if r.get("exact") else ""}').rstrip()


def rows_of(path):
    """bench_ab CSV rows (dtype "bf16>f32" counts as its input type, which is
    what the table keys on); a gemmshim ab report (GEMMSHIM_REPORT.csv) turned
    into the same fields: the shapes an application really issued."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if "dtype" in r:
            r["dtype"] = r["dtype"].split(">")[0]
    if rows and "scale_a" in rows[0]:
        # bench_fp8: TN, the A type with A's and B's scale mode where types
        # and modes agree (a mixed pair is no table key: left out); the shim
        # side against the call as the application made it
        out = []
        for r in rows:
            scales = FP8_SCALES.get(r["scale_a"])
            if (r["status"] != "ok" or scales is None or r["scale_b"] != r["scale_a"] or
                    r["b_type"] != r["a_type"]):
                continue
            out.append({"gpu": r["gpu"], "layout": "TN", "dtype": f'{r["a_type"]}/{scales}',
                        "m": r["m"], "n": r["n"], "k": r["k"],
                        "speedup": r["shim_vs_as_called"], "route": r["route"]})
        return out
    if rows and "signature" in rows[0]:
        out = []
        for r in rows:
            # "cublasGemmEx NN bf16,bf16->bf16 m=.. n=.. k=.. batch=.."
            parts = r["signature"].split()
            dims = dict(p.split("=") for p in parts[3:])
            if r["speedup"] in ("", "nan"):
                continue
            out.append({"gpu": "ab report", "layout": parts[1],
                        "dtype": parts[2].split(",")[0], "m": dims["m"], "n": dims["n"],
                        "k": dims["k"], "speedup": r["speedup"], "route": r["route"]})
        return out
    return rows


def conservative(paths):
    """Every routable row of the files, one per (route, dtype, layout, shape,
    GPU model): where a shape was measured more than once on a model
    (several runs, or a default-policy run re-timing what the table routes),
    the lowest speedup stands, so a class is routed on that model only if
    every measurement of it there cleared the bar. A row whose "span" column
    says exact vouches for its own m and k (n of its bucket) only; the entry
    is exact where every row of it is (a shape some other file measured
    keeps its span)."""
    best, exact = {}, {}
    for r in (row for path in paths for row in rows_of(path)):
        rc = route_of(r["route"])
        if rc is None or r["dtype"] not in DTYPES or r["speedup"] in ("", "nan"):
            continue
        key = (rc, r["dtype"], r["layout"], r["m"], r["n"], r["k"], gpu_key(r["gpu"]))
        exact[key] = exact.get(key, True) and r.get("span") == "exact"
        if key not in best or float(r["speedup"]) < float(best[key]["speedup"]):
            best[key] = r
    return [dict(r, exact=exact[key]) for key, r in best.items()]


def ratio_text(speedup):
    """Three decimals, rounded down: a reading below the routing bar (0.98)
    must not round up to it (0.9795 was written as 0.980 and routed), and an
    exact reading must not lose its last digit to binary floating point
    (1.029 * 1000 is 1028.999...): rounded as the decimal text it is."""
    return str(decimal.Decimal(str(speedup).strip()).quantize(decimal.Decimal("0.001"),
                                                              rounding=decimal.ROUND_FLOOR))


def text_table(cc, out, paths):
    """The routing-table file format read by dispatch/gs_table.c."""
    n = 0
    with open(out, "w") as f:
        f.write("gemmshim-table 1\n# route config cc dtype layout m n k speedup (cuBLAS time / ours)"
                " [gpu model; none: any]\n")
        for r in conservative(paths):
            f.write(entry_text(cc, r) + f'  # {r["gpu"]}\n')
            n += 1
    print(f"table_from_csv: {n} entries")
    return 0


def shapes_of_reports(paths):
    """Distinct (dtype, layout, m, n, k) of ab reports, as bench_ab --shapes lines.
    Batched calls are measured as one batch: the same kernel class."""
    seen = []
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if "signature" not in r:
                    sys.exit(f"table_from_csv: {path} is not a gemmshim ab report")
                # "cublasGemmEx NN bf16,bf16->f32 compute=32F m=.. n=.. k=.. batch=.."
                parts = r["signature"].split()
                types = parts[2].replace("->", ",").split(",")
                if types[0] not in DTYPES or types[0] != types[1]:
                    continue
                dt = types[0] if types[2] == types[0] else f"{types[0]}>{types[2]}"
                if types[2] not in (types[0], "f32"):
                    continue
                dims = dict(p.split("=") for p in parts[3:] if "=" in p)
                key = (dt, parts[1], int(dims["m"]), int(dims["n"]), int(dims["k"]))
                if key not in seen:
                    seen.append(key)
    for dt, lay, m, n, k in seen:
        print(f"{dt} {lay} {m} {n} {k}")
    return 0 if seen else 1


def main(argv):
    if len(argv) >= 3 and argv[1] == "--shapes":
        return shapes_of_reports(argv[2:])
    if len(argv) >= 2 and argv[1] == "--text":
        if len(argv) < 5:
            print(__doc__, file=sys.stderr)
            return 2
        return text_table(int(argv[2]), argv[3], argv[4:])
    note = ""
    if len(argv) >= 3 and argv[1] == "--note":
        note, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    cc, out = int(argv[1]), argv[2]
    rows = conservative(argv[3:])
    skipped = sum(len(rows_of(p)) for p in argv[3:]) - len(rows)
    lines = [f'"{entry_text(cc, r)}\\n"' for r in rows]
    head = ("Generated by bench/table_from_csv.py; do not edit by hand. The built-in routing "
            "table, as the text of a table file (dispatch/gs_table.c): FAMILY CONFIG CC DTYPE "
            "LAYOUT M N K SPEEDUP (cuBLAS time / ours) GPU. From "
            + ", ".join(p.split("/")[-1] for p in argv[3:]) + (". " + note if note else "."))
    with open(out, "w") as f:
        f.write("/* " + "\n * ".join(textwrap.wrap(head, 75, break_on_hyphens=False)) + " */\n")
        f.write('"gemmshim-table 1\\n"\n' + "\n".join(lines) + "\n")
    print(f"table_from_csv: {len(lines)} entries, {skipped} rows skipped (forwarded or unknown)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
