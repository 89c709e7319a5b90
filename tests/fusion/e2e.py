#!/usr/bin/python3
"""End to end: two real runs of fusion_e2e_prog under the OMPT tool,
  run A: perf::TASK-CLOCK, perf::PAGE-FAULTS
  run B: perf::TASK-CLOCK, perf::CPU-CLOCK, perf::MINOR-FAULTS
(TASK-CLOCK is the overlapping event for BC; for LGL/random run A's value
wins).  Fused with LGL, BC and the random control, each pair of nearly
identical events measured in different runs -- (TASK-CLOCK from A,
CPU-CLOCK from B) and (PAGE-FAULTS from A, MINOR-FAULTS from B) -- must
agree per XU far better than under random pairing.

Measure: median over fused XUs of |ln((a + 1) / (b + 1))|.
Threshold: LGL and BC below 0.5 x the random control's, for both pairs
(and the random control must show real disagreement, > 0.3).

usage: e2e.py OMPFUSE LIBOMPFUSE PROGRAM WORKDIR
"""
import csv
import math
import os
import shutil
import statistics
import subprocess
import sys

OMPFUSE, TOOL, PROG, WORK = sys.argv[1:5]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
fails = []


def check(cond, what):
    print(("ok:   " if cond else "FAIL: ") + what)
    if not cond:
        fails.append(what)


def record(name, events):
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=TOOL,
               OMPFUSE_EVENTS=events, OMPFUSE_STRICT="1",
               OMPFUSE_OUTPUT=os.path.join(WORK, name + ".ompf"))
    p = subprocess.run([PROG, "300"], env=env, capture_output=True, text=True)
    if p.returncode:
        print(p.stdout, p.stderr)
    check(p.returncode == 0, f"run {name} under the tool")


def sh(*args):
    p = subprocess.run([OMPFUSE, *args], cwd=WORK, capture_output=True, text=True)
    if p.returncode:
        print(p.stdout, p.stderr)
    return p


record("a", "perf::TASK-CLOCK,perf::PAGE-FAULTS")
record("b", "perf::TASK-CLOCK,perf::CPU-CLOCK,perf::MINOR-FAULTS")
if fails:
    sys.exit(1)

score = {}
for strat in ("lgl", "bc", "random"):
    p = sh("combine", "--strategy", strat, "--seed", "5", "-o", strat + ".ompf",
           "a.ompf", "b.ompf")
    check(p.returncode == 0, f"combine {strat}")
    if p.returncode:
        continue
    out = sh("export", "--csv", "-o", "-", strat + ".ompf").stdout
    rows = [r for r in csv.DictReader(out.splitlines()) if r["kind"] == "task"]
    check(len(rows) >= 290, f"{strat}: {len(rows)} fused tasks (300 created)")

    def med(a, b):
        return statistics.median(
            abs(math.log((float(r[a]) + 1) / (float(r[b]) + 1))) for r in rows)

    score[strat] = (med("perf::TASK-CLOCK", "perf::CPU-CLOCK"),
                    med("perf::PAGE-FAULTS", "perf::MINOR-FAULTS"))
    print(f"{strat:7s} median |ln ratio|: time {score[strat][0]:.3f}  "
          f"faults {score[strat][1]:.3f}")

if len(score) == 3:
    for k, what in enumerate(("TASK-CLOCK vs CPU-CLOCK", "PAGE-FAULTS vs MINOR-FAULTS")):
        check(score["random"][k] > 0.3,
              f"random control disagrees on {what} ({score['random'][k]:.3f} > 0.3)")
        for s in ("lgl", "bc"):
            check(score[s][k] < 0.5 * score["random"][k],
                  f"{s} agrees on {what}: {score[s][k]:.3f} < 0.5 x random "
                  f"{score['random'][k]:.3f}")
if fails:
    sys.exit(1)
