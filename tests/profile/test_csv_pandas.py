#!/usr/bin/python3
"""`ompfuse export --csv` output loads with pandas.read_csv without options:
CSV written here -> ompfuse import -> ompfuse export -> pandas, compared to
what Python itself parses from the original.  Integers and missing values
come through exactly.  pandas' default float parser is not correctly
rounded: it keeps about 17 digits counted from the decimal point, leading
zeros included, so a %.17g value such as 0.000012345678901234567 loses
up to ~5 digits (1e-12 relative).  Fractional values are therefore
compared exactly with Python's own parser and with pandas'
float_precision="round_trip", and to 1e-11 relative with the defaults."""
import csv
import math
import os
import random
import subprocess
import sys
import tempfile

import pandas as pd

ompfuse = sys.argv[1]
rng = random.Random(42)
events = ["perf::TASK-CLOCK", "ev,with comma", 'q"uote', "perf::PAGE-FAULTS"]
types = ["fib.c:12", "odd, name", 'say "hi":3', "a.out+0x4011a0", "lib/x.so+0xdeadbeef"]
kinds = ["task", "loop-chunk", "static-chunks", "taskloop-chunk", "section", "other"]


def value(col):
    r = rng.random()
    if col == 3:  # an all-integer column without missing values
        return str(rng.randrange(0, 10**9))
    if r < 0.15:
        return ""
    if r < 0.5:
        return str(rng.randrange(-(2**53), 2**53))
    if r < 0.6:
        return repr(rng.uniform(-1e300, 1e300))
    return repr(rng.random() * 10 ** rng.randrange(-20, 20))


rows = []
for i in range(2000):
    rows.append([str(i * 3 + 1), rng.choice(types), rng.choice(kinds),
                 "0." + ".".join(str(rng.randrange(0, 5000)) for _ in range(rng.randrange(1, 5))),
                 str(rng.randrange(0, 64)), str(rng.randrange(-1, 8)),
                 str(1000 + i), str(2000 + i)] + [value(c) for c in range(len(events))])

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "in.csv")
    with open(src, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["xu", "type", "kind", "label", "thread", "cpu", "start_ns", "end_ns"] + events)
        w.writerows(rows)
    prof = os.path.join(d, "p.ompf")
    out = os.path.join(d, "out.csv")
    subprocess.run([ompfuse, "import", "--csv", src, "-o", prof], check=True)
    subprocess.run([ompfuse, "export", "--csv", prof, "-o", out], check=True)

    df = pd.read_csv(out)
    check(list(df.columns) == ["xu", "type", "kind", "label", "thread", "cpu", "start_ns",
                               "end_ns"] + events, "columns %r" % list(df.columns))
    check(len(df) == len(rows), "row count %d" % len(df))
    check(str(df["perf::PAGE-FAULTS"].dtype) == "int64", "integer column dtype")
    check(str(df["xu"].dtype) == "int64" and str(df["start_ns"].dtype) == "int64",
          "integer fields dtype")
    for i, r in enumerate(rows):
        check(int(df["xu"][i]) == int(r[0]), "xu row %d" % i)
        check(df["type"][i] == r[1], "type row %d: %r vs %r" % (i, df["type"][i], r[1]))
        check(df["kind"][i] == r[2], "kind row %d" % i)
        check(df["label"][i] == r[3], "label row %d: %r vs %r" % (i, df["label"][i], r[3]))
        check(int(df["thread"][i]) == int(r[4]) and int(df["cpu"][i]) == int(r[5]),
              "thread/cpu row %d" % i)
        for k, ev in enumerate(events):
            want = r[8 + k]
            got = df[ev][i]
            if want == "":
                check(isinstance(got, float) and math.isnan(got), "missing %s row %d" % (ev, i))
            elif "." in want or "e" in want:
                check(math.isclose(float(got), float(want), rel_tol=1e-11),
                      "value %s row %d: %r vs %r" % (ev, i, got, want))
            else:
                check(float(got) == float(want), "value %s row %d: %r vs %r" % (ev, i, got, want))
    # Exact: Python's parser on the exported text, and pandas' round-trip one.
    with open(out, newline="") as f:
        exported = list(csv.reader(f))[1:]
    exact = pd.read_csv(out, float_precision="round_trip")
    for i, r in enumerate(rows):
        for k, ev in enumerate(events):
            want = r[8 + k]
            cell = exported[i][8 + k]
            if want == "":
                check(cell == "", "exported missing %s row %d" % (ev, i))
            else:
                check(float(cell) == float(want), "exported %s row %d: %r vs %r" % (ev, i, cell, want))
                check(float(exact[ev][i]) == float(want), "round_trip %s row %d" % (ev, i))
                if "." not in want and "e" not in want:
                    check("." not in cell and "e" not in cell,
                          "integer printed as integer: %r" % cell)
    # The export is the canonical form: exporting again gives the same bytes.
    prof2 = os.path.join(d, "p2.ompf")
    subprocess.run([ompfuse, "import", "--csv", out, "-o", prof2], check=True)
    again = subprocess.run([ompfuse, "export", "--csv", prof2], check=True,
                           capture_output=True).stdout
    check(again == open(out, "rb").read(), "export -> import -> export is stable")

    # Labels of one or two parts only ("0", "0.10"): pandas would infer the
    # column as numbers ("0.10" -> 0.1).  The tool's labels always have more
    # parts; for hand-made shallow ones docs/format.md says dtype={"label": str}.
    shallow = ["0", "0.1", "0.10", "0.2"]
    with open(src, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["xu", "type", "kind", "label", "thread", "cpu", "start_ns", "end_ns", "e"])
        for i, lab in enumerate(shallow):
            w.writerow([i, "t", "task", lab, 0, 0, i, i + 1, 7])
    subprocess.run([ompfuse, "import", "--csv", src, "-o", prof], check=True)
    subprocess.run([ompfuse, "export", "--csv", prof, "-o", out], check=True)
    got = list(pd.read_csv(out, dtype={"label": str})["label"])
    check(got == shallow, "shallow labels with dtype str: %r" % got)

print("%d passed, %d failed" % (1 if failures == 0 else 0, failures))
sys.exit(1 if failures else 0)
