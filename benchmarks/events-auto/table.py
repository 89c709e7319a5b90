#!/usr/bin/python3
"""The table of the --events auto experiment (run.sh): for each benchmark,
the EPD of every strategy and HEM variant (median over the campaigns, and
the range), the random/LGL ratio (median, and in how many campaigns it is
>= 2), and in how many campaigns the best of LGL/BC beats every HEM
variant.  Reads OUT/BENCH/cNN/epd.tsv; prints the chosen events of each
benchmark (OUT/BENCH/c01/BENCH/events-auto.txt) with the check's estimated
and measured slowdown, and the load record.

usage: /usr/bin/python3 benchmarks/events-auto/table.py OUT
"""
import glob
import math
import os
import statistics
import sys

HEM = ["hem", "hem-delta", "hem-cleaned", "hem-delta-cleaned"]


def num(s):
    try:
        v = float(s)
        return v if math.isfinite(v) else None
    except ValueError:
        return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rows = {}  # bench -> list of {strategy: epd}
    cols = None
    camps = sorted(glob.glob(os.path.join(out, "*", "c*", "epd.tsv")))
    for path in camps:
        with open(path) as f:
            head = f.readline().rstrip("\n").split("\t")
            cols = cols or head[1:]
            # keyed by the stream (OUT/STREAM/cNN): two streams of one
            # benchmark with different choices stay apart
            stream = os.path.basename(os.path.dirname(os.path.dirname(path)))
            for line in f:
                cell = line.rstrip("\n").split("\t")
                rows.setdefault(stream, []).append(
                    {k: num(v) for k, v in zip(head[1:], cell[1:])})
    if not rows:
        sys.exit(f"table.py: no {out}/c*/epd.tsv yet")
    print(f"{len(camps)} campaign results in {out} (EPD: median over campaigns [min-max])\n")
    print("| stream | n | " + " | ".join(cols) +
          " | random/LGL | ratio >= 2 | LGL/BC beats every HEM |")
    print("|---" * (len(cols) + 5) + "|")
    for bench, camp in rows.items():
        cells = []
        for c in cols:
            v = [r[c] for r in camp if r.get(c) is not None]
            cells.append("-" if not v else
                         f"{statistics.median(v):.3g} [{min(v):.3g}-{max(v):.3g}]")
        ratios = [r["random"] / r["lgl"] for r in camp
                  if r.get("random") is not None and r.get("lgl")]
        wins = 0
        judged = 0
        for r in camp:
            fus = [r[k] for k in ("lgl", "bc") if r.get(k) is not None]
            hem = [r[k] for k in HEM if r.get(k) is not None]
            if fus and hem:
                judged += 1
                wins += min(fus) < min(hem)
        ratio = f"{statistics.median(ratios):.3g}" if ratios else "-"
        ge2 = f"{sum(x >= 2 for x in ratios)}/{len(ratios)}"
        print(f"| {bench} | {len(camp)} | " + " | ".join(cells) +
              f" | {ratio} | {ge2} | {wins}/{judged} |")
    print()
    for ev in sorted(glob.glob(os.path.join(out, "*", "c01", "*", "events-auto.txt"))):
        names = [l.strip() for l in open(ev) if l.strip() and not l.startswith("#")]
        short = [n.rsplit("/", 1)[-1] if n.startswith("uprobe:") else n for n in names]
        stream = ev.split(os.sep)[-4]
        print(f"{stream}: " + ", ".join(short))
        # the check of the choice: estimated and measured cost, side by side
        for l in open(ev):
            if "estimated probe cost" in l:
                print("    " + l.lstrip("# ").rstrip())
    load = os.path.join(out, "load.txt")
    if os.path.exists(load):
        print("\nload (/proc/loadavg) at the start and after each campaign:")
        print(open(load).read().rstrip())


if __name__ == "__main__":
    main()
