#!/usr/bin/python3
"""Scaling of `ompfuse evaluate` through the CLI (issue 20): CPU and wall
time, peak RSS, time exponent, ratio to reading the same inputs, and the
machine's load, at several XU counts, side by side with another build;
each figure printed next to its target.

usage: scale.py --ompfuse BIN --gen EVAL_GEN [--base OLD_BIN] [--sizes
                1e4,1e5,1e6] [--events 33] [--refs 3] [--runs 3]
                [--per-type] [--base-max 1e6] [--jobs 2] [--nice 10] DIR

Inputs: `eval_gen DIR/nN_eE_rR N E 7 gen 0 R JOBS` writes R reference runs
and one target (good.ompf) of N XUs and E events, JOBS files at a time;
kept in DIR for later calls.
Per size, --runs rounds, each running in turn (the order alternating),
every child at nice --nice:
  read   `BIN show` of the R + 1 inputs (reading them: the reference)
  new    `BIN evaluate -q -j JOBS [--per-type] -r REFS -- good`
  base   the same with OLD_BIN (sizes up to --base-max)
Each figure is the child's own (os.wait4): user + system CPU seconds, wall
seconds, peak RSS.  Printed per size: min/median of each, the ratio of
evaluate's to reading's median CPU time, peak RSS over the value data
((R + 1) x N x E x 8 bytes: every input's values) against the target
(<= 2 x), the 1e5-XU time target where it applies (33 events, 3
repeats), and the load average before and after; then the time exponent
between consecutive sizes (median CPU) against its target (<= 1.05).
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time


def run(cmd, niceness):
    """CPU (user + system) s, wall s and peak RSS (MB) of one child."""
    t0 = time.monotonic()
    with open(os.devnull, "w") as null:
        p = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE,
                             preexec_fn=lambda: os.nice(niceness))
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"scale.py: {' '.join(cmd)}: exit {p.returncode}: "
                 f"{err.decode(errors='replace')}")
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss / 1024.0


def load():
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def mm(v):
    return f"{min(v):.3f}/{statistics.median(v):.3f}"


def verdict(ok):
    return "holds" if ok else "MISSED"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ompfuse", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--base")
    ap.add_argument("--sizes", default="1e4,1e5,1e6")
    ap.add_argument("--events", type=int, default=33)
    ap.add_argument("--refs", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--per-type", action="store_true")
    ap.add_argument("--base-max", type=float, default=1e6)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("dir")
    a = ap.parse_args()
    sizes = [int(float(s)) for s in a.sizes.split(",")]
    opts = ["-q", "-j", str(a.jobs)] + (["--per-type"] if a.per_type else [])
    print(f"evaluate: {a.events} events, {a.refs} references + 1 target, "
          f"{'--per-type, ' if a.per_type else ''}{a.jobs} threads, "
          f"{a.runs} rounds, nice {a.nice}; CPU = user + system of the "
          f"child; min/median")
    rows = []
    for n in sizes:
        d = os.path.join(a.dir, f"n{n}_e{a.events}_r{a.refs}")
        if not os.path.exists(os.path.join(d, "good.ompf")):
            os.makedirs(d, exist_ok=True)
            t0 = time.monotonic()
            subprocess.run([a.gen, d, str(n), str(a.events), "7", "gen", "0",
                            str(a.refs), str(a.jobs)], check=True,
                           stdout=subprocess.DEVNULL)
            print(f"  generated {d} in {time.monotonic() - t0:.1f} s")
        refs = [os.path.join(d, f"ref-{r}.ompf") for r in range(1, a.refs + 1)]
        good = os.path.join(d, "good.ompf")
        cmds = {"read": [a.ompfuse, "show", *refs, good],
                "new": [a.ompfuse, "evaluate", *opts, "-r", *refs, "--", good]}
        if a.base and n <= a.base_max:
            cmds["base"] = [a.base, "evaluate", *opts, "-r", *refs, "--", good]
        res = {k: [] for k in cmds}
        l0 = load()
        for r in range(a.runs):
            keys = list(cmds) if r % 2 == 0 else list(reversed(cmds))
            for k in keys:
                res[k].append(run(cmds[k], a.nice))
        l1 = load()
        value_mb = (a.refs + 1) * n * a.events * 8 / 2**20
        print(f"\n{n:.0e} XUs (value data {value_mb:.0f} MB), load average "
              f"{l0} before, {l1} after")
        for k in cmds:
            cpu = [x[0] for x in res[k]]
            wall = [x[1] for x in res[k]]
            rss = max(x[2] for x in res[k])
            line = (f"  {k:5s} CPU {mm(cpu)} s  wall {mm(wall)} s  "
                    f"peak RSS {rss:.0f} MB")
            if k != "read":
                ratio = statistics.median(cpu) / statistics.median(
                    [x[0] for x in res["read"]])
                line += (f" = {rss / value_mb:.2f} x value data (target "
                         f"<= 2 x: {verdict(rss <= 2 * value_mb)});  "
                         f"{ratio:.2f} x read")
            print(line)
        if n == 100000 and a.events == 33 and a.refs == 3:
            lim = 1.5 if a.per_type else 1.0
            cpu = statistics.median(x[0] for x in res["new"])
            wall = statistics.median(x[1] for x in res["new"])
            print(f"  target: evaluate{' --per-type' if a.per_type else ''} "
                  f"of 33 events x 3 repeats x 1e5 XUs <= {lim} s on 2 idle "
                  f"cores: CPU {cpu:.3f} s ({verdict(cpu <= lim)} even summed "
                  f"over the threads), wall {wall:.3f} s at this load "
                  f"({verdict(wall <= lim)})")
        rows.append((n, statistics.median(x[0] for x in res["new"]),
                     statistics.median(x[0] for x in res["read"]),
                     statistics.median(x[0] for x in res["base"])
                     if "base" in res else None))
    print("\ntime exponents (median CPU, consecutive sizes; target <= 1.05 "
          "from 1e4 to 1e7):")
    for (n0, c0, r0, b0), (n1, c1, r1, b1) in zip(rows, rows[1:]):
        k = math.log(n1 / n0)
        e = math.log(c1 / c0) / k
        line = (f"  {n0:.0e} -> {n1:.0e}: evaluate {e:.2f} ({verdict(e <= 1.05)})"
                f", read {math.log(r1 / r0) / k:.2f}")
        if b0 and b1:
            line += f", base {math.log(b1 / b0) / k:.2f}"
        print(line)
    if len(rows) > 1:
        (n0, c0, _, _), (n1, c1, _, _) = rows[0], rows[-1]
        e = math.log(c1 / c0) / math.log(n1 / n0)
        print(f"  {n0:.0e} -> {n1:.0e}: evaluate {e:.2f} ({verdict(e <= 1.05)})")


if __name__ == "__main__":
    main()
