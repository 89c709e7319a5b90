#!/usr/bin/python3
"""`ompfuse evaluate` on HEM profiles: a hem-delta profile with missing
values (left out per pair), its cleaned version and a fully measured
profile of the same synthetic distribution are all evaluated against
three reference profiles; every one gets a finite EPD, and only the
hem-delta one leaves XUs out.

usage: evaluate_hem.py OMPFUSE HEM_PROFILE_TOOL WORKDIR
"""
import math
import os
import re
import subprocess
import sys

ompfuse, tool, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
fail = []


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: %s: exit %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r


p = lambda n: os.path.join(work, n)
refs = []
for s in (11, 12, 13):
    run([tool, "gen", str(s), "1500", p("ref%d.ompf" % s), "reference"])
    refs.append(p("ref%d.ompf" % s))
run([tool, "gen", "14", "1500", p("hemd.ompf")])
run([tool, "gen", "15", "1500", p("full.ompf"), "reference"])
run([ompfuse, "clean", "-q", "-o", p("hemd.clean.ompf"), p("hemd.ompf")])
r = run([ompfuse, "evaluate", "-q", "--references"] + refs +
        ["--", "hemdelta=" + p("hemd.ompf"), "cleaned=" + p("hemd.clean.ompf"),
         "full=" + p("full.ompf")])
print(r.stdout)
epd = {}
for line in r.stdout.splitlines():
    m = re.match(r"^(hemdelta|cleaned|full)\s+(\S+)\s+(\d+)/(\d+)\s+(\d+)", line)
    if m:
        epd[m.group(1)] = (float(m.group(2)), int(m.group(5)))
for name in ("hemdelta", "cleaned", "full"):
    if name not in epd:
        fail.append("no EPD line for %s" % name)
    elif not (math.isfinite(epd[name][0]) and epd[name][0] > 0):
        fail.append("EPD of %s is %r" % (name, epd[name][0]))
if len(epd) == 3:
    # the left-out column: only the profile with missing values loses XUs
    if epd["hemdelta"][1] == 0 or epd["cleaned"][1] != 0 or epd["full"][1] != 0:
        fail.append("left-out XUs: %s" % epd)
if fail:
    print("\n".join("FAIL: " + f for f in fail))
    sys.exit(1)
print("evaluate on HEM profiles: ok")
