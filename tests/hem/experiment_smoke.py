#!/usr/bin/python3
"""Smoke test of benchmarks/hem/hem_experiment.py (issue #9): one short
period, one repeat, on a small deterministic knapsack.  Asserts the table
is complete: every EPD cell numeric, the missing-XU column 'k/n' integers
with k <= n, time/rotations/signals numeric.  A cell may carry the
script's '*' (some event pairs not evaluable, EPD over the others).
usage: experiment_smoke.py SCRIPT BUILD_DIR KNAPSACK WORKDIR"""
import re
import subprocess
import sys

script, build, knapsack, work = sys.argv[1:5]
cmd = ["/usr/bin/python3", script, "--build", build, "--out", work,
       "--repeats", "1", "--references", "2", "--periods-us", "4000",
       "--", knapsack, "-n", "30", "-s", "1", "-c", "12", "-d"]
r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
print(r.stdout, end="")
print(r.stderr, end="", file=sys.stderr)
fails = []
if r.returncode != 0:
    fails.append("exit status %d" % r.returncode)
lines = r.stdout.splitlines()
head = [i for i, l in enumerate(lines) if l.split()[:2] == ["period", "hem"]]
if len(head) != 1:
    fails.append("no table header")
else:
    rows = [l for l in lines[head[0] + 1:] if re.match(r"^\d", l)]
    if len(rows) != 1:
        fails.append("expected 1 row (one period), got %d" % len(rows))
    num = r"-?\d+(?:\.\d+)?"
    # '*': EPD over the pairs that could be evaluated (script's footnote)
    epd = r"(%s) \((%s)-(%s)\)\*?" % (num, num, num)
    row = re.compile(r"^4 ms\s+%s\s+%s\s+%s\s+%s\s+(\d+)/(\d+)\s+(%s)\s+"
                     r"(\d+)\s+(\d+)$" % (epd, epd, epd, epd, num))
    for l in rows:
        m = row.match(l)
        if not m:
            fails.append("row not all numeric: %r" % l)
            continue
        g = m.groups()
        cells = [float(x) for x in g[:12]]
        if not all(c >= 0 for c in cells):
            fails.append("negative EPD in %r" % l)
        miss, n = int(g[12]), int(g[13])
        if not (n > 0 and 0 <= miss <= n):
            fails.append("missing-XU count %d/%d" % (miss, n))
        if not float(g[14]) > 0:
            fails.append("time ratio %s" % g[14])
if fails:
    print("FAIL: " + "; ".join(fails))
    sys.exit(1)
print("ok")
