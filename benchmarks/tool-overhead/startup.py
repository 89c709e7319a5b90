#!/usr/bin/python3
"""Start-up cost of libompfuse.so per run, with and without its start-up
cache (OMPFUSE_CACHE_DIR, which `ompfuse run` sets).

usage: startup.py BUILD_DIR [--reps R] [--debugfs]

Runs `tool_overhead tasks 1` (the runtime starts, one task) R times in
each of three modes, alternating: (a) no tool, (b) the tool with two
software events and no cache, (c) the same with a warm cache.  Prints,
as min / median of the R runs:
  - the tool's own start-up (ompt_initialize until profiling starts, the
    "start-up took" line of OMPFUSE_VERBOSE) for (b) and (c), next to the
    1 ms target, with the median of each of its steps and its page faults
    (on a VM a fresh page costs 10-25 us: most of the start-up);
  - the whole process's wall time over (a) for (b) and (c): loading the
    tool's libraries, start-up, thread start, finishing the profile.
Profiles go to /dev/shm (tmpfs: the profile's fsync is not measured).
--debugfs runs every mode in a private mount namespace with debugfs
mounted, where libpfm4 also scans every tracepoint (the ~2,800 openat of
issue #20); needs root (unshare -m)."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EVENTS = "perf::TASK-CLOCK,perf::PAGE-FAULTS"


def run(build, mode, out, cache, debugfs):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPFUSE_", "LIBPFM_")) and
           k != "OMP_TOOL_LIBRARIES"}
    env["OMP_NUM_THREADS"] = "2"
    if mode != "a":
        env.update(OMP_TOOL_LIBRARIES=os.path.join(build, "lib", "libompfuse.so"),
                   OMPFUSE_OUTPUT=out, OMPFUSE_EVENTS=EVENTS, OMPFUSE_VERBOSE="1")
    if mode == "c":
        env["OMPFUSE_CACHE_DIR"] = cache
    cmd = [os.path.join(build, "bin", "tool_overhead"), "tasks", "1"]
    if debugfs:
        cmd = ["unshare", "-m", "sh", "-c",
               'mount -t debugfs none /sys/kernel/debug && exec "$@"', "sh"] + cmd
    # stderr to a file, not a pipe: each verbose line written to a pipe
    # wakes this process on a 2-core machine, inside the timed start-up
    errf = out + ".stderr"
    with open(errf, "w") as fe:
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=fe)
        wall = (time.perf_counter() - t0) * 1e3
    with open(errf) as fe:
        p.stderr = fe.read()
    if p.returncode != 0:
        sys.exit("run failed (%s): %s" % (mode, p.stderr))
    # builds before 2026-11-29 print the total alone
    m = re.search(r"start-up took ([0-9.]+) ms(?: \((.*); (\d+) page faults\))?",
                  p.stderr)
    if mode != "a" and not m:
        sys.exit("no start-up line: %s" % p.stderr)
    if not m or not m.group(2):
        return wall, float(m.group(1)) if m else 0.0, {}, 0
    steps = {k: float(v) for k, v in
             (x.rsplit(" ", 1) for x in m.group(2).split(", "))}
    return wall, float(m.group(1)), steps, int(m.group(3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--debugfs", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ompf-startup-", dir="/dev/shm")
    out = os.path.join(tmp, "p.ompf")
    cache = os.path.join(tmp, "cache")
    os.mkdir(cache)
    run(a.build, "c", out, cache, a.debugfs)  # warms the cache
    res = {m: [] for m in "abc"}
    for _ in range(a.reps):
        for m in "abc":
            res[m].append(run(a.build, m, out, cache, a.debugfs))
    shutil.rmtree(tmp)
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]

    def mm(v):
        return min(v), statistics.median(v)
    print("%d runs per mode, min / median, load average %s%s" % (
        a.reps, load, ", debugfs mounted" if a.debugfs else ""))
    for m, what in (("b", "no cache"), ("c", "cache   ")):
        s = mm([r[1] for r in res[m]])
        print("tool start-up, %s: %7.3f / %7.3f ms   (target <= 1 ms)" % (
            what, s[0], s[1]))
        steps = res[m][0][2]
        if steps:
            print("    median of each step: %s; page faults %d" % (
                ", ".join("%s %.3f" % (k, statistics.median(r[2][k] for r in res[m]))
                          for k in steps),
                statistics.median(r[3] for r in res[m])))
    wa = mm([r[0] for r in res["a"]])
    print("process wall time without the tool: %.2f / %.2f ms" % wa)
    for m, what in (("b", "no cache"), ("c", "cache   ")):
        w = mm([r[0] for r in res[m]])
        print("process wall time, tool %s: %7.2f / %7.2f ms (+%.2f / +%.2f, "
              "ratio %.2f / %.2f)" % (what, w[0], w[1], w[0] - wa[0],
                                      w[1] - wa[1], w[0] / wa[0], w[1] / wa[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
