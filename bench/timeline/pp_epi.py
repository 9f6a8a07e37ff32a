#!/usr/bin/env python3
"""Summarise an epilogue timeline dump (GEMMSHIM_KERNEL_TIMELINE=EPILOGUE build,
README.md here; "TLE b c ..." lines, clock64): per
consumer, median cycles from the mainloop's end to the first sub-tile, then
per sub-tile: buffer wait, staging (stmatrix), proxy fence, TMA store issue,
loop to the next sub-tile.

usage: bench/timeline/pp_epi.py DUMP.txt [...]
"""
import statistics as st
import sys


def main(paths):
    for f in paths:
        rows = [l.split() for l in open(f) if l.startswith("TLE ")]
        print(f.split("/")[-1])
        for c in (0, 1):
            R = [list(map(int, r[3:])) for r in rows if int(r[2]) == c and int(r[3]) != 0]
            if not R:
                continue
            S = lambda r, k, j: r[1 + k * 5 + j]
            med = lambda fn: st.median(fn(r) for r in R)
            line = "  consumer %d (%d CTAs): run-up %4.0f |" % (c, len(R), med(lambda r: S(r, 0, 0) - r[0]))
            for k in range(4):
                nxt = (lambda r, k=k: S(r, k + 1, 0) - S(r, k, 4)) if k < 3 else (lambda r: 0)
                line += " %d: wait %3.0f stage %3.0f fence %3.0f store %3.0f next %3.0f |" % (
                    k, med(lambda r, k=k: S(r, k, 1) - S(r, k, 0)), med(lambda r, k=k: S(r, k, 2) - S(r, k, 1)),
                    med(lambda r, k=k: S(r, k, 3) - S(r, k, 2)), med(lambda r, k=k: S(r, k, 4) - S(r, k, 3)), med(nxt))
            print(line, "total %.0f cycles" % med(lambda r: S(r, 3, 4) - r[0]))


if __name__ == "__main__":
    main(sys.argv[1:])
