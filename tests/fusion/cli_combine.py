#!/usr/bin/python3
"""`ompfuse import` + `ompfuse combine` on the command line, with known
answers for every strategy, the exit codes and messages of the input checks,
and byte-identical output for the same inputs and seed.

usage: cli_combine.py OMPFUSE WORKDIR
"""
import csv
import os
import re
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



def show_events(name):
    """{event: (status, rest of line)} from the events section of show."""
    rc, out, err = run("show", name)
    check(rc == 0, f"show {name}: {err}")
    evs, inside = {}, False
    for line in out.splitlines():
        if re.match(r"^events \(\d+\):", line):
            inside = True
            continue
        if inside:
            m = re.match(r"^\s+\d+\s+(\S+)\s+(\S+)\s*(.*)$", line)
            if not m or not line.startswith(" "):
                break
            evs[m.group(1)] = (m.group(2), m.group(3).strip())
    return evs


def meta(name, key):
    rc, out, err = run("show", name)
    m = re.search(r"^\s+" + re.escape(key) + r"\s+(\S+)\s*$", out, re.M)
    return m.group(1) if m else None


# (a) Provenance through import: three runs, O measured by p and q with
# different values (first run wins), every value encodes its source XU id
# so the fused rows show which source XU each value came from.
P_ROWS = [  # id, label, start; T = 10*id, O = 1000 + id
    (1, "0.1", 500), (2, "0.2", 100), (3, "0.3", 300), (4, "0.4", 200)]
Q_ROWS = [(21, "0.3", 10), (22, "0.1", 20), (23, "0.4", 30), (24, "0.2", 40)]
R_ROWS = [(31, "0.2", 1), (32, "0.4", 2), (33, "0.1", 3), (34, "0.3", 4)]
write_csv("p", ["T", "O"], [(i, "g.c:5", "task", l, 0, 0, st, st + 1, 10 * i,
                             1000 + i) for i, l, st in P_ROWS])
write_csv("q", ["C", "O"], [(i, "g.c:5", "task", l, 0, 0, st, st + 1, 10 * i,
                             2000 + i) for i, l, st in Q_ROWS])
write_csv("r", ["P"], [(i, "g.c:5", "task", l, 0, 0, st, st + 1, 10 * i)
                       for i, l, st in R_ROWS])
rc, out, err = combine("lgl", "pqr.ompf", "p.ompf", "q.ompf", "r.ompf")
check(rc == 0, f"pqr lgl rc {rc}: {err}")
check(re.search(r"^\s+O\s+from \[0\], also in \[1\]$", out, re.M) is not None,
      f"summary: O from [0], also in [1]: {out}")
evs = show_events("pqr.ompf")
want_src = {"T": "from source 0", "O": "from source 0", "C": "from source 1",
            "P": "from source 2"}
check(set(evs) == set(want_src), f"pqr events: {evs}")
for e, w in want_src.items():
    check(evs.get(e) == ("counted", w), f"show: {e} {w}: {evs.get(e)}")
rc, sout, err = run("show", "pqr.ompf")
for k, f in enumerate(("p.ompf", "q.ompf", "r.ompf")):
    check(re.search(rf"^\s+{k}\s+run [0-9a-f]{{16}}\s+{re.escape(f)}$", sout,
                    re.M) is not None, f"show lists source {k} = {f}: {sout}")
byl = {src: {l: i for i, l, st in rows}
       for src, rows in (("p", P_ROWS), ("q", Q_ROWS), ("r", R_ROWS))}
rows = export("pqr.ompf")
check(len(rows) == 4, f"pqr: 4 fused XUs: {rows}")
for r in rows:
    lab = r["label"]
    # fused XU = base (p) XU, in p's order; values from the same-label XUs
    check(int(r["xu"]) == byl["p"][lab], f"pqr xu id from p: {r}")
    check(float(r["T"]) == 10 * byl["p"][lab], f"T from p's XU: {r}")
    check(float(r["O"]) == 1000 + byl["p"][lab], f"O from p (first wins): {r}")
    check(float(r["C"]) == 10 * byl["q"][lab], f"C from q's XU: {r}")
    check(float(r["P"]) == 10 * byl["r"][lab], f"P from r's XU: {r}")
check([r["xu"] for r in rows] == ["1", "2", "3", "4"], "pqr: p's record order")

# (b) BC with every overlapping value equal (one cell): pairs follow the
# depth-first label order on each side, not the record or start order.
# Depth-first: x: 0.1 < 0.1.3 < 0.2 < 0.10; y: 0.1.1 < 0.3 < 0.4.1 < 0.7.
X_LAB = ["0.10", "0.2", "0.1.3", "0.1"]          # record order
X_RANK = {"0.1": 0, "0.1.3": 1, "0.2": 2, "0.10": 3}
Y_LAB = ["0.4.1", "0.7", "0.1.1", "0.3"]
Y_RANK = {"0.1.1": 0, "0.3": 1, "0.4.1": 2, "0.7": 3}
write_csv("x", ["O", "A"], [(k + 1, "h.c:1", "task", l, 0, 0, 100 - k, 101 - k,
                             5, X_RANK[l]) for k, l in enumerate(X_LAB)])
write_csv("y", ["O", "B"], [(k + 1, "h.c:1", "task", l, 0, 0, 10 * k, 10 * k + 1,
                             5, 100 + Y_RANK[l]) for k, l in enumerate(Y_LAB)])
rc, out, err = combine("bc", "xy.ompf", "x.ompf", "y.ompf")
check(rc == 0, f"bc one cell rc {rc}: {err}")
rows = export("xy.ompf")
check(len(rows) == 4, f"bc one cell: 4 fused XUs: {rows}")
prefix = {0: "0.1", 1: "0", 2: "0", 3: "0"}  # common prefix of the pair
for r in rows:
    a, b = int(float(r["A"])), int(float(r["B"]))
    check(b == 100 + a, f"bc one cell pairs by label rank: {r}")
    check(r["label"] == prefix.get(a), f"bc one cell label = prefix: {r}")
    check(float(r["O"]) == 5, f"bc one cell O: {r}")

# (c) The same file twice: refused naming both arguments (imported
# profiles have no distinguishing run id); --force records it.
rc, out, err = combine("lgl", "dup.ompf", "a.ompf", "a.ompf")
check(rc == 2 and "a.ompf (input 1)" in err and "a.ompf (input 2)" in err
      and "same file" in err and "--force" in err, f"same file twice: {rc} {err}")
check(not os.path.exists(os.path.join(WORK, "dup.ompf")), "no output for a duplicate")
rc, out, err = combine("lgl", "dup.ompf", "a.ompf", "./a.ompf", extra=("--force",))
check(rc == 0 and "forced: a.ompf (input 1) and ./a.ompf (input 2) are the same file"
      in out, f"same file forced: {rc} {out} {err}")
check(meta("dup.ompf", "forced") == "1" and meta("dup.ompf", "forced_checks")
      == "same_file", "same file: forced recorded")
# import never records argv: said once, not passed as equal.
check(out.count("argv not recorded in any input: cannot be checked") == 1,
      f"argv not recorded note: {out}")
# A copy under another name: the same run id, or (run id 0) equal data.
shutil.copy(os.path.join(WORK, "a.ompf"), os.path.join(WORK, "a-copy.ompf"))
rc, out, err = combine("lgl", "dup2.ompf", "a.ompf", "a-copy.ompf")
rid = meta("a.ompf", "run_id")
if rid and int(rid, 16):
    check(rc == 2 and "same run id" in err, f"copy, same run id: {rc} {err}")
else:
    check(rc == 0 and "no run id and identical XU values" in out,
          f"copy without run id noted: {rc} {out} {err}")

# (d) An all-empty column: marked counted by import, but provides nothing:
# the values come from the next input that has them.
write_csv("m", ["T", "X"], [(i, "g.c:5", "task", l, 0, 0, st, st + 1, 10 * i, "")
                            for i, l, st in P_ROWS])
write_csv("n", ["C", "X"], [(i, "g.c:5", "task", l, 0, 0, st, st + 1, 10 * i,
                             3000 + i) for i, l, st in Q_ROWS])
check(show_events("m.ompf").get("X", ("",))[0] == "counted",
      "import marks the empty column counted")
rc, out, err = combine("lgl", "mn.ompf", "m.ompf", "n.ompf")
check(rc == 0, f"empty column rc {rc}: {err}")
check(re.search(r"^\s+X\s+from \[1\]$", out, re.M) is not None,
      f"summary: X from [1]: {out}")
check("X is marked counted in m.ompf, but no XU there has a value" in out,
      f"empty column noted: {out}")
check(show_events("mn.ompf").get("X") == ("counted", "from source 1"),
      f"show: X from source 1: {show_events('mn.ompf')}")
rows = export("mn.ompf")
check(len(rows) == 4, "empty column: 4 fused XUs")
for r in rows:
    check(r["X"] != "" and float(r["X"]) == 3000 + byl["q"][r["label"]],
          f"X from n's same-label XU: {r}")
# Empty in every input: measured by no input.
rc, out, err = combine("lgl", "mm.ompf", "m.ompf", "p.ompf")
check(rc == 0 and "warning: event X was not measured by any input" in out,
      f"empty everywhere warned: {rc} {out} {err}")
check(show_events("mm.ompf").get("X", ("",))[0] == "failed",
      "empty everywhere: status failed")
check(all(r["X"] == "" for r in export("mm.ompf")), "empty everywhere: no values")

# Progress line (include/ompfuse/progress.h), forced on: reading, then the
# fusion in XUs; stdout and the result are the same as without it, and -q
# turns it off.
def run_env(env, *args):
    e = dict(os.environ, **env)
    p = subprocess.run([OMPFUSE, *args], cwd=WORK, capture_output=True, env=e)
    # bytes: text mode would turn the progress line's \r into \n
    return p.returncode, p.stdout.decode(), p.stderr.decode()


rc0, out0, err0 = run_env({"OMPFUSE_PROGRESS": "never"}, "combine", "--strategy",
                          "lgl", "-o", "pg0.ompf", "a.ompf", "b.ompf")
rc1, out1, err1 = run_env({"OMPFUSE_PROGRESS": "always"}, "combine", "--strategy",
                          "lgl", "-o", "pg1.ompf", "a.ompf", "b.ompf")
check(rc0 == 0 and rc1 == 0 and err0 == "", f"progress runs: {rc0} {rc1} {err0}")
lines = [x.strip() for x in err1.split("\r") if x.strip()]
check(any(re.fullmatch(r"combine: reading: \d/2 inputs.*", x) for x in lines),
      f"progress: reading line: {lines}")
check(any(re.fullmatch(r"combine lgl: \d+/\d+ XUs.*", x) for x in lines),
      f"progress: fusion line in XUs: {lines}")
check(err1.endswith("\r"), f"progress: line erased at the end: {err1!r}")
check(out1.replace("pg1", "pg0") == out0, "progress: stdout unchanged")
with open(os.path.join(WORK, "pg0.ompf"), "rb") as f0, \
        open(os.path.join(WORK, "pg1.ompf"), "rb") as f1:
    check(f0.read() == f1.read(), "progress: same result")
rc2, out2, err2 = run_env({"OMPFUSE_PROGRESS": "always"}, "combine", "--strategy",
                          "lgl", "-q", "-o", "pg2.ompf", "a.ompf", "b.ompf")
check(rc2 == 0 and err2 == "" and out2 == "", f"progress: -q prints nothing: {err2!r}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all CLI checks passed")
