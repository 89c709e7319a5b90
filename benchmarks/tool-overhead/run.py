#!/usr/bin/python3
"""Overhead of libompfuse.so per XU and on a compute kernel.

usage: run.py BUILD_DIR [--threads N] [--n N] [--reps R] [--rows N]

For 10^6 empty tasks and 10^6 one-iteration dynamic chunks: ns per XU with
(a) no tool, (b) the tool without events, (c) the tool with two software
events (perf::TASK-CLOCK,perf::PAGE-FAULTS); the ratio tool/no-tool on a
compute kernel; and the measured cost of one counter read.  Per-XU costs
are CPU time (all threads) per XU, steadier than wall time on a shared
machine; with one thread (default) the creating thread also runs every
task; chunks run on two threads (CPU time of both, idle spinning
included).  Runs of (a), (b), (c) alternate, R of each; every figure is
given as best (minimum) / median of the R runs: the machine is shared, and
the minimum is the least disturbed run.  Differences are taken best-best
and median-median."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

EVENTS = "perf::TASK-CLOCK,perf::PAGE-FAULTS"


def run(build, work, n, mode, threads, out):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OMPFUSE_") and k != "OMP_TOOL_LIBRARIES"}
    env["OMP_NUM_THREADS"] = str(threads)
    if mode != "a":
        env["OMP_TOOL_LIBRARIES"] = os.path.join(build, "lib",
                                                 "libompfuse.so")
        env["OMPFUSE_OUTPUT"] = out
    if mode == "c":
        env["OMPFUSE_EVENTS"] = EVENTS
    p = subprocess.run([os.path.join(build, "bin", "tool_overhead"), work,
                        str(n)], env=env, capture_output=True, text=True,
                       check=True)
    f = p.stdout.split()
    # (wall ns, CPU ns per XU, CPU ns): on a shared machine CPU time is
    # steadier than wall time
    return float(f[2]), float(f[8]), float(f[6])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rows", type=int, default=20000,
                    help="rows of the compute kernel (20000 x 20000 flops)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ompf-overhead-")
    out = os.path.join(tmp, "p.ompf")
    print("tasks on %d thread(s), chunks on %d, %d XUs per workload, CPU "
          "time per XU, best / median of %d runs" % (
              a.threads, max(2, a.threads), a.n, a.reps))
    # one thread creates and runs the tasks; chunks need a team of two
    # (a team of one runs a dynamic loop without dispatching chunks)
    res = {}
    for work, n, th in (("tasks", a.n, a.threads),
                        ("chunks", a.n, max(2, a.threads))):
        per = {m: [] for m in "abc"}
        for _ in range(a.reps):
            for mode in "abc":
                per[mode].append(run(a.build, work, n, mode, th, out)[1])
        best = {m: min(v) for m, v in per.items()}
        med = {m: statistics.median(v) for m, v in per.items()}
        print("%-6s  (a) no tool %6.1f / %6.1f ns/XU   (b) tool %6.1f / %6.1f "
              "(+%.1f / +%.1f)   (c) tool+2 events %7.1f / %7.1f (+%.1f / "
              "+%.1f over b)" % (
                  work, best["a"], med["a"], best["b"], med["b"],
                  best["b"] - best["a"], med["b"] - med["a"], best["c"],
                  med["c"], best["c"] - best["b"], med["c"] - med["b"]))
        res[work] = (best, med)
    rc = subprocess.run([os.path.join(a.build, "bin", "tool_readcost"),
                         EVENTS], capture_output=True, text=True)
    print(rc.stdout.strip() or rc.stderr.strip())
    f = rc.stdout.split()
    if rc.returncode == 0 and len(f) > 4:
        # (c) - (b) in counter reads: a task has two boundaries (start,
        # end), a chunk one (its dispatch ends the previous chunk)
        rb, rm = float(f[2]), float(f[4])
        print("(c) - (b) in reads of that cost (best / median): tasks "
              "%.2f / %.2f (2 boundaries per task), chunks %.2f / %.2f "
              "(1 per chunk)" % (
                  (res["tasks"][0]["c"] - res["tasks"][0]["b"]) / rb,
                  (res["tasks"][1]["c"] - res["tasks"][1]["b"]) / rm,
                  (res["chunks"][0]["c"] - res["chunks"][0]["b"]) / rb,
                  (res["chunks"][1]["c"] - res["chunks"][1]["b"]) / rm))
    rows = a.rows
    runs = {m: [] for m in "abc"}
    for _ in range(a.reps):
        for m in "abc":
            runs[m].append(run(a.build, "compute", rows, m,
                               max(2, a.threads), out))
    for label, pick in (("best", min), ("median", statistics.median)):
        wall = {m: pick(r[0] for r in runs[m]) for m in "abc"}
        cpu = {m: pick(r[2] for r in runs[m]) for m in "abc"}
        print("compute (%d rows, %.0f ms without tool, %d threads, %s): CPU "
              "time tool/no-tool %.3f, tool+2 events/no-tool %.3f (wall "
              "time %.3f, %.3f)" % (rows, wall["a"] / 1e6, max(2, a.threads),
                                    label, cpu["b"] / cpu["a"],
                                    cpu["c"] / cpu["a"], wall["b"] / wall["a"],
                                    wall["c"] / wall["a"]))
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
