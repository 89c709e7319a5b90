#!/usr/bin/python3
"""Scaling of reading and 'ompfuse combine' on profiles the OMPT tool wrote
(issue 20): runs of tests/programs/fib.c, a recursive task program, at
several sizes.  scale.py's inputs are synthetic; these are what a user
fuses: labels as deep as the task tree, three parts per task (each
taskwait suspends it), the tool's per-thread ids, each run's own record
order.

For each fib(n) it records --runs runs under the tool (2 threads), each
counting perf::TASK-CLOCK (the event BC pairs on) and one more software
event of its own (PAGE-FAULTS, CPU-CLOCK, MINOR-FAULTS, CONTEXT-SWITCHES,
...), then measures, interleaved round by round: reading the runs
(`ompfuse show`) and `combine` with each strategy -- CPU time (user + sys)
and peak RSS through /usr/bin/time.  Prints min and median, the ratio to
reading, and the time exponent between consecutive sizes.  With --ref
OLD_OMPFUSE the old binary runs in the same rounds and every output is
compared with cmp (the outputs must be identical).

fib(n) has 2 (F(n+1) - 1) tasks: n = 24: 150,048; 27: 635,620; 30:
2,692,536 (the program's limit).  Recording takes about 2 s a million
tasks; the profiles take about 17 bytes a task.

usage: tool_scale.py [--sizes 24,27,30] [--runs 3] [--repeat 3]
                     [--strategies lgl,ctc,bc,bc-unlabeled] [--ref OLD_OMPFUSE]
                     [--keep-inputs] BUILD_DIR WORK_DIR

BUILD_DIR is the build tree (bin/ompfuse, bin/prog_fib, lib/libompfuse.so).
"""
import argparse
import filecmp
import math
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import timed  # noqa: E402  (CPU s, peak RSS MB, user s, sys s)

SECOND = ["perf::PAGE-FAULTS", "perf::CPU-CLOCK", "perf::MINOR-FAULTS",
          "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS", "perf::MAJOR-FAULTS"]


def tasks(n):
    a, b = 1, 1  # F(1), F(2)
    for _ in range(n):
        a, b = b, a + b
    return 2 * (a - 1)  # a = F(n + 1)


def record(build, n, runs, d):
    os.makedirs(d, exist_ok=True)
    for r in range(runs):
        out = os.path.join(d, f"r{r}.ompf")
        if os.path.exists(out):
            continue
        env = dict(os.environ, OMP_NUM_THREADS="2",
                   OMP_TOOL_LIBRARIES=os.path.join(build, "lib", "libompfuse.so"),
                   OMPFUSE_EVENTS="perf::TASK-CLOCK," + SECOND[r % len(SECOND)],
                   OMPFUSE_OUTPUT=out + ".part")
        p = subprocess.run([os.path.join(build, "bin", "prog_fib"), str(n)], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode or not os.path.exists(out + ".part"):
            raise SystemExit(f"tool_scale.py: prog_fib {n} under the tool failed "
                             f"({p.returncode}): {p.stderr.strip()}")
        os.rename(out + ".part", out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="24,27,30")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--strategies", default="lgl,ctc,bc,bc-unlabeled")
    ap.add_argument("--ref")
    ap.add_argument("--keep-inputs", action="store_true")
    ap.add_argument("build")
    ap.add_argument("work")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    bins = [("new", os.path.join(build, "bin", "ompfuse"))]
    if a.ref:
        bins.append(("old", os.path.abspath(a.ref)))
    strategies = a.strategies.split(",")
    print(f"# load average at start: {os.getloadavg()[0]:.1f} (2 cores shared); "
          f"{a.runs} runs of prog_fib under the tool; CPU seconds, min / median "
          f"of {a.repeat}")
    print("| binary | step | fib(n) | XUs per run | CPU s min | CPU s median "
          "| user / sys median | x read (median) | peak RSS MB | exponent |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    prev = {}
    for size in a.sizes.split(","):
        n = int(size)
        d = os.path.join(a.work, f"fib{n}")
        record(build, n, a.runs, d)
        inputs = [os.path.join(d, f"r{r}.ompf") for r in range(a.runs)]
        steps = [("read", ["show"] + inputs, None)]
        for s in strategies:
            steps.append((f"combine {s}", None, s))
        res = {}
        for _ in range(a.repeat):
            for tag, exe in bins:
                for name, args, s in steps:
                    if s:
                        args = ["combine", "--strategy", s, "-q", "-o",
                                os.path.join(d, f"out_{tag}_{s}.ompf")] + inputs
                    res.setdefault((tag, name), []).append(timed([exe] + args, d))
        xus = tasks(n)
        for tag, _ in bins:
            rmed = statistics.median(x[0] for x in res[(tag, "read")])
            for name, _, _ in steps:
                v = res[(tag, name)]
                cpu = [x[0] for x in v]
                med = statistics.median(cpu)
                u = statistics.median(x[2] for x in v)
                sy = statistics.median(x[3] for x in v)
                rss = max(x[1] for x in v)
                ex = ""
                if (tag, name) in prev and prev[(tag, name)][1] > 0:
                    px, pm = prev[(tag, name)]
                    ex = f"{math.log(med / pm) / math.log(xus / px):.2f}"
                prev[(tag, name)] = (xus, med)
                print(f"| {tag} | {name} | {n} | {xus} | {min(cpu):.3f} | {med:.3f} "
                      f"| {u:.2f} / {sy:.2f} | {med / rmed if rmed else float('nan'):.2f} "
                      f"| {rss:.0f} | {ex} |")
        if a.ref:
            for s in strategies:
                same = filecmp.cmp(os.path.join(d, f"out_new_{s}.ompf"),
                                   os.path.join(d, f"out_old_{s}.ompf"), shallow=False)
                print(f"# fib({n}) combine {s}: outputs of new and old "
                      f"{'identical' if same else 'DIFFER'}")
                if not same:
                    return 1
        for f in os.listdir(d):
            if f.startswith("out_"):
                os.remove(os.path.join(d, f))
        if not a.keep_inputs:
            shutil.rmtree(d)
        print(f"# fib({n}) done; load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
