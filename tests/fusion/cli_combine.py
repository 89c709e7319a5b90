#!/usr/bin/python3
"""`ompfuse import` + `ompfuse combine` on the command line, with known
answers for every strategy, the exit codes and messages of the input checks,
and byte-identical output for the same inputs and seed.

usage: cli_combine.py OMPFUSE WORKDIR
"""
import csv
import os
import shutil
import subprocess
import sys

OMPFUSE, WORK = sys.argv[1], sys.argv[2]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
HEAD = "xu,type,kind,label,thread,cpu,start_ns,end_ns"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    p = subprocess.run([OMPFUSE, *args], cwd=WORK, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write_csv(name, events, rows):
    with open(os.path.join(WORK, name + ".csv"), "w") as f:
        f.write(HEAD + "," + ",".join(events) + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    rc, out, err = run("import", "--csv", name + ".csv", "-o", name + ".ompf",
                       "--program", "prog", "--threads", "2")
    check(rc == 0, f"import {name}: rc {rc} {err}")


def export(name):
    rc, out, err = run("export", "--csv", "-o", "-", name)
    check(rc == 0, f"export {name}: {err}")
    return list(csv.DictReader(out.splitlines()))


def combine(strategy, out, *inputs, extra=()):
    return run("combine", "--strategy", strategy, *extra, "-o", out, *inputs)


# Run a counts TASK-CLOCK, run b CPU-CLOCK (= TASK-CLOCK + 1 for the same
# label); records in a different order with unrelated start times.
write_csv("a", ["perf::TASK-CLOCK"], [
    (1, "f.c:10", "task", "0.1", 0, 0, 100, 200, 1000),
    (2, "f.c:10", "task", "0.2", 1, 1, 300, 400, 2000),
    (3, "f.c:10", "task", "0.3", 0, 0, 500, 600, 3000),
    (4, "f.c:12", "loop-chunk", "0.4.0", 1, 1, 10, 20, 40),
])
write_csv("b", ["perf::CPU-CLOCK"], [
    (7, "f.c:10", "task", "0.3", 0, 0, 100, 200, 3001),
    (8, "f.c:12", "loop-chunk", "0.4.0", 0, 0, 10, 20, 41),
    (9, "f.c:10", "task", "0.1", 1, 1, 300, 400, 1001),
    (10, "f.c:10", "task", "0.2", 1, 1, 500, 600, 2001),
])

# LGL: pairs by label.
rc, out, err = combine("lgl", "lgl.ompf", "a.ompf", "b.ompf")
check(rc == 0, f"lgl rc {rc}: {err}")
check("perf::CPU-CLOCK" in out and "from [1]" in out, "lgl summary names event sources")
rows = export("lgl.ompf")
check(len(rows) == 4, "lgl: 4 fused XUs")
for r in rows:
    check(float(r["perf::CPU-CLOCK"]) == float(r["perf::TASK-CLOCK"]) + 1,
          f"lgl pairs by label: {r}")

# CTC: pairs by start order per type: a's start order is 0.1,0.2,0.3, b's
# is 0.3,0.1,0.2 -> TASK 1000 with CPU 3001, 2000-1001, 3000-2001.
rc, out, err = combine("ctc", "ctc.ompf", "a.ompf", "b.ompf")
check(rc == 0, f"ctc rc {rc}: {err}")
want = {1000: 3001, 2000: 1001, 3000: 2001, 40: 41}
for r in export("ctc.ompf"):
    check(want[int(float(r["perf::TASK-CLOCK"]))] == int(float(r["perf::CPU-CLOCK"])),
          f"ctc pairs by start order: {r}")

# Random: reproducible with --seed; byte-identical files.
for name in ("r1", "r2"):
    rc, out, err = combine("random", name + ".ompf", "a.ompf", "b.ompf",
                           extra=("--seed", "7"))
    check(rc == 0, f"random rc {rc}: {err}")
with open(os.path.join(WORK, "r1.ompf"), "rb") as f1, \
        open(os.path.join(WORK, "r2.ompf"), "rb") as f2:
    check(f1.read() == f2.read(), "same seed gives byte-identical output")

# BC with an overlapping event O: run c (O, A), run d (O, B); nearest O
# wins over labels.
write_csv("c", ["O", "A"], [
    (1, "f.c:10", "task", "0.1", 0, 0, 1, 2, 10, 1),
    (2, "f.c:10", "task", "0.2", 0, 0, 2, 3, 20, 2),
    (3, "f.c:10", "task", "0.3", 0, 0, 3, 4, 30, 3),
])
write_csv("d", ["O", "B"], [
    (1, "f.c:10", "task", "0.1", 0, 0, 1, 2, 31, 3),
    (2, "f.c:10", "task", "0.2", 0, 0, 2, 3, 9, 1),
    (3, "f.c:10", "task", "0.3", 0, 0, 3, 4, 19, 2),
])
rc, out, err = combine("bc", "bc.ompf", "c.ompf", "d.ompf")
check(rc == 0, f"bc rc {rc}: {err}")
check("grid iterations" in out and "overlap {O}" in out, f"bc summary: {out}")
rows = export("bc.ompf")
check(len(rows) == 3, "bc: 3 fused XUs")
for r in rows:
    check(float(r["A"]) == float(r["B"]), f"bc pairs nearest O: {r}")
    check(float(r["O"]) == 10 * float(r["A"]), f"bc keeps prev's O: {r}")
for s in ("bc-unlabeled",):
    rc, out, err = combine(s, "bcu.ompf", "c.ompf", "d.ompf", extra=("--seed", "3"))
    check(rc == 0, f"{s} rc {rc}: {err}")
    for r in export("bcu.ompf"):
        check(float(r["A"]) == float(r["B"]), f"{s} pairs nearest O: {r}")

# BC with an invalid given order, and with no possible order.
rc, out, err = combine("bc", "x.ompf", "a.ompf", "c.ompf", "d.ompf",
                       extra=("--order", "given"))
check(rc == 2 and "c.ompf" in err and "shares none" in err,
      f"bc given order error: {rc} {err}")
rc, out, err = combine("bc", "x.ompf", "a.ompf", "c.ompf", "d.ompf")
check(rc == 2 and "no valid order" in err, f"bc impossible order: {rc} {err}")

# Input checks.
rc, out, err = combine("lgl", "x.ompf", "a.ompf")
check(rc == 2 and "at least two" in err, f"one input: {rc} {err}")
rc, out, err = combine("lgl", "x.ompf", "a.ompf", "missing.ompf")
check(rc == 2 and "missing.ompf" in err, f"missing input: {rc} {err}")
rc, out, err = run("combine", "-o", "x.ompf", "a.ompf", "b.ompf")
check(rc == 2 and "--strategy" in err, f"no strategy: {rc} {err}")
rc, out, err = combine("nope", "x.ompf", "a.ompf", "b.ompf")
check(rc == 2 and "unknown strategy" in err, f"bad strategy: {rc} {err}")
rc, out, err = run("combine", "--bogus")
check(rc == 2 and "--bogus" in err, f"unknown option: {rc} {err}")
rc, out, err = run("combine", "--help")
check(rc == 0 and "usage" in out, "help")
with open(os.path.join(WORK, "e.csv"), "w") as f:
    f.write(HEAD + ",perf::CPU-CLOCK\n1,f.c:10,task,0.1,0,0,1,2,5\n")
rc, out, err = run("import", "--csv", "e.csv", "-o", "e.ompf", "--program", "other")
check(rc == 0, f"import e: {err}")
rc, out, err = combine("lgl", "x.ompf", "a.ompf", "e.ompf")
check(rc == 2 and "program" in err and "--force" in err, f"program differs: {rc} {err}")
check(not os.path.exists(os.path.join(WORK, "x.ompf")), "no output on refusal")
rc, out, err = combine("lgl", "x.ompf", "a.ompf", "e.ompf", extra=("--force",))
check(rc == 0 and "forced" in out, f"--force: {rc} {out} {err}")
rc, out, err = run("show", "x.ompf")
check("forced" in out and "program" in out, "forced recorded")
# A fused profile as input is allowed and said so.
rc, out, err = combine("lgl", "y.ompf", "lgl.ompf", "e.ompf", extra=("--force",))
check(rc == 0 and "itself a fused profile" in out, f"fused input: {rc} {out} {err}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all CLI checks passed")
