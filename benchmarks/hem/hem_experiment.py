#!/usr/bin/python3
"""HEM experiment (issue #9, docs/hem.md): accuracy and overhead of
multiplexing on a bundled benchmark with software events and a virtual
limit of OMPFUSE_PMU_SLOTS counters.

For each multiplexing period (default 4, 1 and 0.1 ms) the program runs
under the tool in mode hem and in mode hem-delta; the hem-delta profile
(and the hem one) is repaired with `ompfuse clean`; every profile is
evaluated with `ompfuse evaluate` against reference runs that count all
events at once (no slot limit: the truth).  Prints per period: EPD of hem,
hem-delta, cleaned hem-delta, cleaned hem; the XUs with missing values in
the hem-delta profile; and the median run time of the HEM runs relative
to plain runs (mode run, OMPFUSE_PMU_SLOTS events, no multiplexing).

usage: benchmarks/hem/hem_experiment.py [--build DIR] [--out DIR]
           [--events E1,E2,...] [--slots N] [--periods-us 4000,1000,100]
           [--references R] [--repeats N] [--threads T] [-- PROGRAM ARGS...]
default program: BUILD/bin/knapsack -d (deterministic task tree, short tasks)
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--build", default=os.path.join(root, "build"))
ap.add_argument("--out", default=None, help="work directory (default BUILD/hem-experiment)")
ap.add_argument("--events", default="perf::TASK-CLOCK,perf::CPU-CLOCK,"
                "perf::PAGE-FAULTS,perf::MINOR-FAULTS")
ap.add_argument("--slots", type=int, default=2)
ap.add_argument("--periods-us", default="4000,1000,100")
ap.add_argument("--references", type=int, default=3, help="reference repeats (>= 2)")
ap.add_argument("--repeats", type=int, default=3, help="timed runs per configuration")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("program", nargs="*")
A = ap.parse_args()

bindir = os.path.join(A.build, "bin")
ompfuse = os.path.join(bindir, "ompfuse")
info = os.path.join(bindir, "hem_info")
tool = os.path.join(A.build, "lib", "libompfuse.so")
for f in (ompfuse, info, tool):
    if not os.path.exists(f):
        sys.exit("hem_experiment: %s is missing: build the tree first "
                 "(cmake --build %s)" % (f, A.build))
prog = A.program or [os.path.join(bindir, "knapsack"), "-d"]
out = A.out or os.path.join(A.build, "hem-experiment")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
events = A.events
periods = [float(p) for p in A.periods_us.split(",")]


def run_tool(path, mode, extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPFUSE_")}
    env.update({"OMP_TOOL_LIBRARIES": tool, "OMP_NUM_THREADS": str(A.threads),
                "OMPFUSE_OUTPUT": path, "OMPFUSE_MODE": mode})
    env.update(extra or {})
    t0 = time.monotonic()
    r = subprocess.run(prog, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    dt = time.monotonic() - t0
    if r.returncode != 0 or not os.path.exists(path):
        sys.exit("hem_experiment: %s (mode %s) failed (exit %d):\n%s" %
                 (" ".join(prog), mode, r.returncode, r.stderr))
    return dt, r.stderr


def summary(path):
    line = subprocess.run([info, path], capture_output=True, text=True,
                          check=True).stdout.strip()
    d = dict(kv.split("=", 1) for kv in line.split()[1:])
    return d


def clean(src, dst):
    r = subprocess.run([ompfuse, "clean", "-q", "-o", dst, src],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("hem_experiment: ompfuse clean %s failed:\n%s" % (src, r.stderr))


# references: all events at once, no slot limit
refs = []
for i in range(A.references):
    p = os.path.join(out, "ref%d.ompf" % i)
    run_tool(p, "reference", {"OMPFUSE_EVENTS": events})
    refs.append(p)

# plain runs: the first `slots` events, fits the counters, no multiplexing
plain_events = ",".join(events.split(",")[:A.slots])
plain = []
for i in range(A.repeats):
    dt, _ = run_tool(os.path.join(out, "plain%d.ompf" % i), "run",
                     {"OMPFUSE_EVENTS": plain_events,
                      "OMPFUSE_PMU_SLOTS": str(A.slots)})
    plain.append(dt)
t_plain = statistics.median(plain)

targets, rows = [], []
for per in periods:
    tag = ("%g" % (per / 1000)).replace(".", "_")
    paths, times, ptimes = {}, [], []
    for i in range(A.repeats):
        # plain runs interleaved with the HEM runs: the machine's speed
        # drifts (shared VM), a ratio to plain runs minutes away does not
        # measure the overhead
        dt, _ = run_tool(os.path.join(out, "plain-%sms-%d.ompf" % (tag, i)),
                         "run", {"OMPFUSE_EVENTS": plain_events,
                                 "OMPFUSE_PMU_SLOTS": str(A.slots)})
        ptimes.append(dt)
        for mode in ("hem", "hem-delta"):
            p = os.path.join(out, "%s-%sms-%d.ompf" % (mode, tag, i))
            dt, err = run_tool(p, mode, {"OMPFUSE_EVENTS": events,
                                         "OMPFUSE_PMU_SLOTS": str(A.slots),
                                         "OMPFUSE_MUX_PERIOD_US": "%g" % per})
            times.append(dt)
            got = summary(p).get("mode")
            if got != mode:
                sys.exit("hem_experiment: the tool recorded mode '%s' for "
                         "OMPFUSE_MODE=%s: this libompfuse.so does not support "
                         "HEM yet.\n%s" % (got, mode, err))
            # every repeat is evaluated: one HEM run's EPD moves a lot
            # with the rotation phase and the machine's load
            paths.setdefault(mode, []).append(p)
    for mode in ("hem", "hem-delta"):
        for p in list(paths[mode]):
            c = p.replace(".ompf", ".clean.ompf")
            clean(p, c)
            paths.setdefault(mode + "+clean", []).append(c)
    ss = [summary(p) for p in paths["hem-delta"]]
    med = lambda key: statistics.median(int(x[key]) if x.get(key, "-") != "-"
                                        else 0 for x in ss)
    rows.append((per, int(ss[0]["xus"]), med("xus_missing"),
                 statistics.median(times) / statistics.median(ptimes),
                 med("rotations"),
                 med("signals")))
    for name, ps in paths.items():
        for i, p in enumerate(ps):
            targets.append("%s@%gms#%d=%s" % (name, per / 1000, i, p))

# --allow-partial: a hem-delta profile of XUs much shorter than the period
# may hold no XU with values of both events of a pair; its EPD is then over
# the other pairs (marked '*' below) instead of no result at all
r = subprocess.run([ompfuse, "evaluate", "-q", "--allow-partial",
                    "--references"] + refs + ["--"] + targets,
                   capture_output=True, text=True)
if r.returncode != 0:
    sys.exit("hem_experiment: ompfuse evaluate failed (exit %d):\n%s%s" %
             (r.returncode, r.stdout, r.stderr))
epd, partial = {}, set()
for line in r.stdout.splitlines():
    m = re.match(r"^(\S+@\S+ms)#\d+\s+(\S+)\s+(\d+)/(\d+)", line)
    if not m:
        continue
    try:
        v = float(m.group(2))
    except ValueError:  # no pair could be evaluated
        partial.add(m.group(1))
        continue
    epd.setdefault(m.group(1), []).append(v)
    if m.group(3) != m.group(4):
        partial.add(m.group(1))

print("program: %s; %d threads; events %s; %d slots; %d references" %
      (" ".join(prog), A.threads, events, A.slots, A.references))
print("plain run (mode run, %s): median %.3f s" % (plain_events, t_plain))
def cell(mode, per):
    key = "%s@%gms" % (mode, per / 1000)
    v = epd.get(key)
    if not v:
        return "-"
    return "%.1f (%.1f-%.1f)%s" % (statistics.median(v), min(v), max(v),
                                   "*" if key in partial else "")


print("%-7s %17s %17s %17s %17s %12s %6s %9s %8s" % (
    "period", "hem", "hem-delta", "delta+clean", "hem+clean", "XUs missing",
    "time", "rotations", "signals"))
for per, n, miss, rel, rot, sig in rows:
    print("%-7s %17s %17s %17s %17s %12s %6.2f %9d %8d" %
          ("%g ms" % (per / 1000), cell("hem", per), cell("hem-delta", per),
           cell("hem-delta+clean", per), cell("hem+clean", per),
           "%d/%d" % (miss, n), rel, rot, sig))
print("(EPD: median (min-max) over the %d repeats; 1.0 = as close as two "
      "reference runs.  'XUs missing': XUs of a hem-delta profile with at "
      "least one missing value; 'time': median HEM run time / median of "
      "the plain runs interleaved with them; "
      "rotations and timer signals of a hem-delta run, summed over its "
      "threads; medians over repeats)" % A.repeats)
if partial:
    print("(*: in some repeat not every event pair could be evaluated: no "
          "XU of the profile has values of both events, as happens to "
          "hem-delta when XUs are much shorter than the period; the EPD is "
          "the geometric mean over the other pairs)")
