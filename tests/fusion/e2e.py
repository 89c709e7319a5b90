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

Then a copy of the program at another path: one program (combine notes it,
evaluate takes it); a copy whose build-id differs: refused by both.

usage: e2e.py OMPFUSE LIBOMPFUSE PROGRAM WORKDIR
"""
import csv
import math
import re
import os
import shutil
import statistics
import struct
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


def record(name, events, prog=PROG, mode="run"):
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=TOOL,
               OMPFUSE_EVENTS=events, OMPFUSE_STRICT="1", OMPFUSE_MODE=mode,
               OMPFUSE_OUTPUT=os.path.join(WORK, name + ".ompf"))
    p = subprocess.run([prog, "300"], env=env, capture_output=True, text=True)
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

# The same executable copied to another path (as a cluster stages it to a
# node's disk) is the same program: its runs fuse with the others and are
# evaluated against them; another build under the same name is refused.
staged = os.path.join(WORK, "staged")
os.makedirs(staged)
copy = os.path.join(staged, os.path.basename(PROG))
shutil.copy2(PROG, copy)
record("b-staged", "perf::TASK-CLOCK,perf::CPU-CLOCK,perf::MINOR-FAULTS", copy)
for k in (1, 2):
    record(f"ref{k}-staged", "perf::TASK-CLOCK,perf::PAGE-FAULTS", copy, "reference")
p = sh("combine", "--strategy", "lgl", "-o", "lgl-staged.ompf", "a.ompf", "b-staged.ompf")
check(p.returncode == 0 and "record one program at two paths" in p.stdout
      and PROG in p.stdout and copy in p.stdout,
      f"combine a run of {PROG} and one of its copy: exit {p.returncode}, the note")
p = sh("evaluate", "-r", "ref1-staged.ompf", "ref2-staged.ompf", "--", "lgl-staged.ompf")
check(p.returncode == 0 and re.search(r"^lgl +[0-9.]+ +1/1", p.stdout, re.M),
      f"evaluate a fusion of {PROG} against references of its copy: exit {p.returncode}")
other = os.path.join(WORK, "other")
os.makedirs(other)
rebuilt = os.path.join(other, os.path.basename(PROG))
# another build: the same code with one byte of its build-id changed
data = bytearray(open(PROG, "rb").read())
i = data.find(struct.pack("<III", 4, 20, 3) + b"GNU\0")  # NT_GNU_BUILD_ID, SHA-1
check(i > 0, "the program has a GNU build-id note")
data[i + 16] ^= 0xFF
open(rebuilt, "wb").write(data)
os.chmod(rebuilt, 0o755)
record("b-rebuilt", "perf::TASK-CLOCK,perf::CPU-CLOCK,perf::MINOR-FAULTS", rebuilt)
p = sh("combine", "--strategy", "lgl", "-o", "lgl-rebuilt.ompf", "a.ompf", "b-rebuilt.ompf")
check(p.returncode == 2 and "differ in program" in p.stderr,
      f"another build at another path is refused: exit {p.returncode} {p.stderr[-300:]}")
p = sh("evaluate", "-r", "ref1-staged.ompf", "ref2-staged.ompf", "--", "b-rebuilt.ompf")
check(p.returncode == 2 and "different programs" in p.stderr,
      f"evaluate refuses another build: exit {p.returncode} {p.stderr[-300:]}")
if fails:
    sys.exit(1)
