#!/usr/bin/python3
"""libompfuse.so's bookkeeping per XU without counters, over a tool whose
callbacks are empty, next to the 40 ns target and to the floor.

usage: bookkeeping.py BUILD_DIR [--n N] [--reps R] [--compare LIB]

For N empty tasks (one thread) and N one-iteration dynamic chunks (two
threads), CPU ns per XU (overhead.c) under four tools, runs alternating:
(e) the callbacks libompfuse.so registers, empty (floortool.c),
(s) the same storing one timestamp per XU boundary from the clock
libompfuse.so reads (the TSC where the kernel's clocksource is tsc, else
clock_gettime(CLOCK_MONOTONIC_RAW)): the floor, what any recording tool
does, (b) libompfuse.so without events, and (a) no
tool; with --compare, also (m) another libompfuse.so (e.g. main's build),
in the same alternation.  Prints min / median of R runs of each, and
(b) - (e), (m) - (e) and (s) - (e) taken min-min and median-median, next
to the 40 ns target.  The floor tool stores its stamps in memory and
writes nothing; (b) also encodes and writes its profile."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def run(build, work, n, mode, threads, out, other):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPFUSE_", "FLOOR_")) and k != "OMP_TOOL_LIBRARIES"}
    env["OMP_NUM_THREADS"] = str(threads)
    if mode in "es":
        env["OMP_TOOL_LIBRARIES"] = os.path.join(build, "lib", "libtool_floor.so")
        env["FLOOR_MODE"] = "empty" if mode == "e" else "stamps"
    elif mode in "bm":
        env["OMP_TOOL_LIBRARIES"] = (os.path.join(build, "lib", "libompfuse.so")
                                     if mode == "b" else other)
        env["OMPFUSE_OUTPUT"] = out
    p = subprocess.run([os.path.join(build, "bin", "tool_overhead"), work, str(n)],
                       env=env, capture_output=True, text=True, check=True)
    return float(p.stdout.split()[8])  # CPU ns per XU


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--compare", metavar="LIB",
                    help="another libompfuse.so measured alongside as (m)")
    a = ap.parse_args()
    if a.compare and not os.path.exists(a.compare):
        sys.exit("%s: no such file" % a.compare)
    modes = "aesb" + ("m" if a.compare else "")
    lib = os.path.join(a.build, "lib", "libtool_floor.so")
    if not os.path.exists(lib):
        sys.exit("%s missing: cmake --build %s --target tool_floor" % (lib, a.build))
    tmp = tempfile.mkdtemp(prefix="ompf-bookkeeping-", dir="/dev/shm")
    out = os.path.join(tmp, "p.ompf")
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[0]
    print("CPU ns per XU, min / median of %d runs, %d XUs, load average %s at start"
          % (a.reps, a.n, load0))
    try:
        with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
            cs = f.read().strip()
    except OSError:
        cs = "unknown"
    print("clock of the tool and of (s): %s (clocksource %s)" % (
        "rdtsc" if "tsc" in cs else "clock_gettime(CLOCK_MONOTONIC_RAW)", cs))
    for work, th in (("tasks", 1), ("chunks", 2)):
        per = {m: [] for m in modes}
        for _ in range(a.reps):
            for m in modes:
                per[m].append(run(a.build, work, a.n, m, th, out, a.compare))
        lo = {m: min(v) for m, v in per.items()}
        md = {m: statistics.median(v) for m, v in per.items()}
        print("%-6s (a) no tool %.1f / %.1f   (e) empty callbacks %.1f / %.1f   "
              "(s) timestamps %.1f / %.1f   (b) ompfuse %.1f / %.1f" % (
                  work, lo["a"], md["a"], lo["e"], md["e"], lo["s"], md["s"],
                  lo["b"], md["b"]))
        print("%-6s ompfuse bookkeeping (b)-(e) %+.1f / %+.1f ns (target <= 40); "
              "floor (s)-(e) %+.1f / %+.1f ns" % (
                  work, lo["b"] - lo["e"], md["b"] - md["e"], lo["s"] - lo["e"],
                  md["s"] - md["e"]))
        if a.compare:
            print("%-6s (m) %s %.1f / %.1f: bookkeeping (m)-(e) %+.1f / %+.1f ns" % (
                work, a.compare, lo["m"], md["m"], lo["m"] - lo["e"],
                md["m"] - md["e"]))
    if os.path.exists(out):
        os.unlink(out)
    os.rmdir(tmp)
    with open("/proc/loadavg") as f:
        print("load average at the end %s" % f.read().split()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
