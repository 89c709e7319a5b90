#!/usr/bin/python3
"""`ompfuse analyze` on profiles built with `ompfuse import`:
- a fib(4)-like task tree: subtree groups at depths 2 and 3 with inclusive
  counts (the XU and every descendant by label) and exclusive counts (the
  XU at the prefix itself), worked out by hand and by prefix matching;
- shares add up to 100 % (no thread table: the gap is unknown, shown as
  such, and shares are of the XUs' sum);
- a missing value is counted, never a zero; zero denominators counted;
- table-driven bad input: one message naming the expression or option and
  the position, exit 2.
usage: analyze_import.py OMPFUSE WORKDIR"""
import io
import os
import shutil
import subprocess
import sys

from acheck import check, finish, workdir
import numpy as np
import pandas as pd

OMPFUSE, WORK = sys.argv[1:3]
workdir(WORK)


def run(*args):
    return subprocess.run([OMPFUSE, *args], capture_output=True, text=True, cwd=WORK)


# fib(4): every call is a task; label = parent's label + child number.
# n = the fib argument; TASK-CLOCK = 100 * n + 1 (distinct per level),
# PAGE-FAULTS = n (0 for fib(0): zero denominators), missing for fib(1)
# tasks under 0.1.2 (a HEM-like gap in the data).
rows = []


def fib(n, label, thread):
    i = len(rows) + 1
    pf = "" if (n == 1 and label.startswith("0.1.2")) else str(n)
    rows.append((i, label, n, thread, pf))
    if n >= 2:
        fib(n - 1, label + ".1", 0)
        fib(n - 2, label + ".2", 1)


fib(4, "0.1", 0)
csvp = os.path.join(WORK, "fib.csv")
with open(csvp, "w") as f:
    f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns,perf::TASK-CLOCK,perf::PAGE-FAULTS\n")
    for i, label, n, th, pf in rows:
        f.write(f"{i},fib.c:{10 + (n > 1)},task,{label},{th},{th},{10 * i},{10 * i + 5},"
                f"{100 * n + 1},{pf}\n")
prof = os.path.join(WORK, "fib.ompf")
p = run("import", "--csv", csvp, "-o", prof)
check(p.returncode == 0, f"import: {p.stderr}")
check(len(rows) == 9, f"fib(4) has 9 calls, got {len(rows)}")


def acsv(*opts):
    p = run("analyze", "--csv", *opts, prof)
    check(p.returncode == 0, f"analyze {opts}: {p.returncode} {p.stderr}")
    return pd.read_csv(io.StringIO(p.stdout), keep_default_na=False, na_values=[""],
                       dtype={"subtree": str, "group": str})


def cell(df, group, col, field):
    r = df[(df.group == group) & (df.column == col)]
    check(len(r) == 1, f"one row for {group} {col}, got {len(r)}")
    return r[field].iloc[0] if len(r) else None


TC, PF = "perf::TASK-CLOCK", "perf::PAGE-FAULTS"
# Depth 2 by hand: 0.1.1 is fib(3) with fib(2) {fib(1), fib(0)} and fib(1):
# 5 XUs, TASK-CLOCK 301 + 201 + 101 + 1 + 101 = 705, exclusive 301.
# 0.1.2 is fib(2) with fib(1), fib(0): 3 XUs, 201 + 101 + 1 = 303, excl 201.
# 0.1 lies above depth 2: its own group, 401 inclusive = exclusive.
d2 = acsv("--by", "subtree", "--depth", "2", "--no-builtin-metrics")
for g, xus, excl, tc, tce in (("0.1.1", 5, 1, 705, 301), ("0.1.2", 3, 1, 303, 201),
                              ("0.1", 1, 1, 401, 401)):
    check(cell(d2, g, TC, "xus") == xus, f"depth 2 {g}: inclusive XUs {xus}")
    check(cell(d2, g, TC, "excl_xus") == excl, f"depth 2 {g}: exclusive XUs {excl}")
    check(cell(d2, g, TC, "sum") == tc, f"depth 2 {g}: inclusive TASK-CLOCK {tc}")
    check(cell(d2, g, TC, "excl_sum") == tce, f"depth 2 {g}: exclusive TASK-CLOCK {tce}")
# PAGE-FAULTS under 0.1.2: fib(2)=2, fib(1) missing, fib(0)=0 -> sum 2, 1 missing
check(cell(d2, "0.1.2", PF, "sum") == 2, "0.1.2 PAGE-FAULTS sum 2 (missing is not 0)")
check(cell(d2, "0.1.2", PF, "missing") == 1, "0.1.2 PAGE-FAULTS: 1 missing")
check(cell(d2, "0.1.2", PF, "n") == 2, "0.1.2 PAGE-FAULTS: 2 values")

# Depth 3 against prefix matching on the rows themselves
d3 = acsv("--by", "subtree", "--depth", "3", "--no-builtin-metrics")
groups = sorted({lab if lab.count(".") < 3 else ".".join(lab.split(".")[:4])
                 for _, lab, _, _, _ in rows})
check(sorted(set(d3[d3.gap == 0].group)) == groups, f"depth 3 groups {groups}")
for g in groups:
    deep = g.count(".") == 3
    inc = [r for r in rows if r[1] == g or (deep and r[1].startswith(g + "."))]
    exc = [r for r in rows if r[1] == g]
    check(cell(d3, g, TC, "xus") == len(inc), f"depth 3 {g}: inclusive XUs")
    check(cell(d3, g, TC, "excl_xus") == len(exc), f"depth 3 {g}: exclusive XUs")
    check(cell(d3, g, TC, "sum") == sum(100 * r[2] + 1 for r in inc), f"depth 3 {g}: sum")
    check(cell(d3, g, TC, "excl_sum") == sum(100 * r[2] + 1 for r in exc), f"depth 3 {g}: excl")
    # quantiles of tiny groups (1 to 3 values) as numpy interpolates them
    v = np.array([100 * r[2] + 1 for r in inc], dtype=float)
    for q, col in ((0.05, "p5"), (0.5, "median"), (0.95, "p95")):
        got = cell(d3, g, TC, col)
        check(abs(got - np.quantile(v, q)) < 1e-9, f"depth 3 {g}: {col} {got} vs {np.quantile(v, q)}")

# --sort: groups by a column's sum, descending or ascending; the gap row last
for sort, want in (("TASK-CLOCK", ["0.1.1", "0.1", "0.1.2"]),
                   ("TASK-CLOCK:asc", ["0.1.2", "0.1", "0.1.1"]),
                   ("xus", ["0.1.1", "0.1.2", "0.1"]), ("name", ["0.1", "0.1.1", "0.1.2"])):
    o = acsv("--by", "subtree", "--depth", "2", "--no-builtin-metrics", "--sort", sort)
    order = list(dict.fromkeys(o.group))
    check(order == want + ["[gap]"], f"--sort {sort}: {order}")

# --where subtree: the inclusive subtree of 0.1.1
w = acsv("--where", "subtree=0.1.1", "--by", "kind", "--no-builtin-metrics")
check(cell(w, "task", TC, "sum") == 705, "--where subtree=0.1.1 sums the subtree")

# shares: no thread table here, so the gap is unknown and shares are of the XUs
for df in (d2, d3, acsv()):
    for col in ("duration_ns", TC, PF):
        s = df[df.column == col].share.fillna(0).sum()
        check(abs(s - 1) < 1e-12, f"shares of {col} add up to 1: {s}")
    gap = df[(df.gap == 1) & (df.column == TC)]
    check(len(gap) == 1 and pd.isna(gap["sum"].iloc[0]), "gap unknown without thread table")

# zero denominators: TASK-CLOCK/PAGE-FAULTS; fib(0) has PAGE-FAULTS 0 (3 of
# them: under 0.1.1.1, and 0.1.2), fib(1) under 0.1.2 is missing.
m = acsv("--by", "subtree", "--depth", "2", "--no-builtin-metrics",
         "--metric", "R=TASK-CLOCK/PAGE-FAULTS")
check(cell(m, "0.1.1", "R", "zero_den") == 1, "0.1.1: 1 zero denominator (fib(0))")
check(cell(m, "0.1.2", "R", "zero_den") == 1, "0.1.2: 1 zero denominator")
check(cell(m, "0.1.2", "R", "missing") == 1, "0.1.2: 1 missing input")
check(cell(m, "0.1.2", "R", "n") == 1, "0.1.2: 1 value")
# ratio of sums over XUs with both inputs: (201 + 1) / (2 + 0) = 101
check(cell(m, "0.1.2", "R", "ratio") == 101, "0.1.2: ratio of sums 101")
t = run("analyze", "--by", "subtree", "--no-builtin-metrics", "--metric",
        "R=TASK-CLOCK/PAGE-FAULTS", prof).stdout
check("zero-den" in t and "missing" in t, "table has missing and zero-den columns")

# bad input: (arguments, text the one message must contain)
BAD = [
    (["--metric", "IPC=INSTRUCTIONS/CYCLES"], "metric 'IPC=INSTRUCTIONS/CYCLES', position 5: unknown event 'INSTRUCTIONS'"),
    (["--metric", "X=TASK-CLOCK/CYCLES"], "position 14: unknown event 'CYCLES'"),
    (["--metric", "X=TASK-CLOCK/(PAGE-FAULTS"], "position 14: '(' is not closed"),
    (["--metric", "X=TASK-CLOCK)"], "position 13: ')' without '('"),
    (["--metric", "X=()"], "position 3: empty parentheses"),
    (["--metric", "X=TASK-CLOCK**2"], "position 14: unexpected '*'"),
    (["--metric", "X="], "position 3: empty expression"),
    (["--metric", "X=2 3"], "position 5: unexpected '3'"),
    (["--metric", "X=3abc"], "position 3: a number runs into a name"),
    (["--metric", "X={NOPE}"], "position 3: unknown event 'NOPE'"),
    # a typo: the whole word, '-' included, and the nearest event
    (["--metric", "X=TASK-CLOK/PAGE-FAULTS"],
     "position 3: unknown event 'TASK-CLOK'; did you mean TASK-CLOCK?"),
    (["--metric", "X={perf::PAGE-FALTS}"],
     "unknown event 'perf::PAGE-FALTS'; did you mean perf::PAGE-FAULTS?"),
    (["--metric", "TASK-CLOCK"], "metric 'TASK-CLOCK' (--metric), position 1: expected NAME=EXPRESSION"),
    (["--metric", "1X=3"], "position 1: the name must be"),
    (["--where", "construct=nope.c:1"], "--where 'construct=nope.c:1', position 11: matches no XU"),
    (["--where", "subtree=0.9"], "--where 'subtree=0.9', position 9: matches no XU"),
    (["--where", "thread=x"], "--where 'thread=x', position 8: 'x' is not a whole number"),
    (["--where", "colour=red"], "--where 'colour=red', position 1"),
    (["--by", "construct,foo"], "--by 'construct,foo', position 11: 'foo' is not one of"),
    (["--sort", "NOPE"], "--sort 'NOPE', position 1: no column 'NOPE'"),
    (["--top", "3", "--top-by", "NOPE"], "--top-by 'NOPE', position 1"),
    # a misspelt column: the nearest one; none when nothing is near
    (["--top", "3", "--top-by", "TASK-CLOK"], "no such column in %s (duration_ns, an event or "
     "a metric); did you mean TASK-CLOCK?" % prof),
    (["--sort", "duration"], "; did you mean duration_ns?"),
    (["--html", os.path.join(WORK, "typo.html"), "--colour", "PAGE-FAULT"],
     "--colour 'PAGE-FAULT', position 1: no such column in %s (duration_ns, an event or a "
     "metric); did you mean PAGE-FAULTS?" % prof),
]
for args, want in BAD:
    p = run("analyze", *args, prof)
    err = p.stderr.strip()
    check(p.returncode == 2, f"{args}: exit {p.returncode}, want 2")
    check(want in err, f"{args}: message {err!r} lacks {want!r}")
    check(err.count("\n") == 0, f"{args}: one line, got {err!r}")
    check(p.stdout == "", f"{args}: nothing on stdout")
    check(("did you mean" in err) == ("did you mean" in want),
          f"{args}: a suggestion only where one is near: {err!r}")
# metrics file: a syntax error names FILE:LINE and the position
mf = os.path.join(WORK, "m.txt")
with open(mf, "w") as f:
    f.write("# comment\nGOOD = TASK-CLOCK / duration_ns\nBAD = TASK-CLOCK / / 2\n")
p = run("analyze", "--metrics", mf, prof)
check(p.returncode == 2 and "m.txt:3: metric 'BAD = TASK-CLOCK / / 2', position 20" in p.stderr,
      f"metrics file error: {p.returncode} {p.stderr!r}")
with open(mf, "w") as f:
    f.write("GOOD = TASK-CLOCK / duration_ns  # utilisation\nOTHER = CYCLES / 2\nOTHER = PAGE-FAULTS * 2\n")
d = acsv("--metrics", mf, "--no-builtin-metrics")
check({"GOOD", "OTHER"} <= set(d.column), "metrics file: GOOD and OTHER's 2nd definition apply")
check(cell(d, "fib.c:11", "OTHER", "ratio") == 2 * (4 + 3 + 2 + 2), "OTHER = 2 x PAGE-FAULTS")

finish("analyze import")
