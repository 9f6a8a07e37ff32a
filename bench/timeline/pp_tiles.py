#!/usr/bin/env python3
"""Summarise a timeline dump (GEMMSHIM_KERNEL_TIMELINE=ON build, README.md here;
stderr lines "TL b i c s0..s4" of one
call): per tile, median time waiting for the tensor-core turn, for the first
stage, in the mainloop and in the epilogue; how far apart the CTAs' tiles
end (are their epilogues simultaneous?); the mainloop's share of each CTA.

usage: bench/timeline/pp_tiles.py DUMP.txt [...]
"""
import collections
import statistics as st
import sys


def main(paths):
    for f in paths:
        rows = [l.split() for l in open(f) if l.startswith("TL ")]
        hdr, d = rows[0], {}
        for r in rows[1:]:
            b, i, c = map(int, r[1:4])
            d[(b, i, c)] = list(map(int, r[4:9]))
        coop = "coop=1" in " ".join(hdr)
        us = lambda xs: st.median(xs) / 1e3
        ph = lambda j0, j1: [s[j1] - s[j0] for s in d.values()]
        ends, ml = collections.defaultdict(int), collections.defaultdict(int)
        for (b, i, c), s in d.items():
            ends[b] = max(ends[b], s[4])
            if not (coop and c == 1):
                ml[b] += s[3] - s[2]
        print(f.split("/")[-1], " ".join(hdr[1:]))
        print("  span %.1f us; CTA end min/median %.1f/%.1f us" %
              (max(ends.values()) / 1e3, min(ends.values()) / 1e3, us(list(ends.values()))))
        print("  per tile (median us): turn %.2f  first stage %.2f  mainloop %.2f  epilogue %.2f" %
              (us(ph(0, 1)), us(ph(1, 2)), us(ph(2, 3)), us(ph(3, 4))))
        print("  mainloop share of each CTA (median): %.3f" % st.median(ml[b] / ends[b] for b in ends))
        for i in (0, 2, 5, 10):
            e = sorted(s[3] for (b, j, c), s in d.items() if j == i and c == 0)
            if e:
                print("  tile %2d: mainloop ends p10..p90 spread %.2f us" % (i, (e[len(e) * 9 // 10] - e[len(e) // 10]) / 1e3))


if __name__ == "__main__":
    main(sys.argv[1:])
