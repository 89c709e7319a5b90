#!/usr/bin/python3
"""The Python reader (python/ompfuse) against `ompfuse export --csv` of the
same profile, parsed independently with Python's csv module: same rows and
columns, every value exact (integers as integer dtypes, missing values
missing), metadata and events as the JSON export has them.
usage: python_read.py OMPFUSE PYTHON_DIR WORK KIND|many"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import warnings

ompfuse, pydir, work, kind = sys.argv[1:5]
sys.path.insert(0, pydir)
os.environ["OMPFUSE"] = ompfuse
import ompfuse as ompf  # noqa: E402  (the package under test)
import pandas as pd  # noqa: E402

fails = []


def export(fmt, path):
    return subprocess.run([ompfuse, "export", "--format", fmt, path], capture_output=True,
                          text=True, check=True).stdout


def check_one(path):
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        p = ompf.read(path)
    rows = list(csv.reader(io.StringIO(export("csv", path))))
    doc = json.loads(export("json", path))["profiles"][0]
    df = p.xus
    if list(df.columns) != rows[0]:
        fail("columns %s, CSV %s" % (list(df.columns), rows[0]))
        return p
    if len(df) != len(rows) - 1:
        fail("%d rows, CSV %d" % (len(df), len(rows) - 1))
        return p
    status = {e["name"]: e["status"] for e in doc["events"]}
    for j, col in enumerate(rows[0]):
        cells = [r[j] for r in rows[1:]]
        s = df[col]
        if j < 8:
            want = [c if col in ("type", "kind", "label") else int(c) for c in cells]
            if list(s) != want:
                fail("column %s differs" % col)
            continue
        exact_ints = status[col] != "estimated" and all(re.fullmatch(r"-?\d+", c)
                                                        for c in cells if c)
        if exact_ints != pd.api.types.is_integer_dtype(s.dtype):
            fail("column %s has dtype %s (integers: %s)" % (col, s.dtype, exact_ints))
        if any(c == "" for c in cells) and exact_ints and str(s.dtype) not in ("UInt64",
                                                                                 "Int64"):
            fail("column %s with missing values has dtype %s" % (col, s.dtype))
        for i, c in enumerate(cells):
            v = s.iloc[i]
            if c == "":
                ok = pd.isna(v)
            elif exact_ints:
                ok = not pd.isna(v) and int(v) == int(c)
            else:
                ok = float(v) == float(c)
            if not ok:
                fail("%s row %d: %r, CSV %r" % (col, i, v, c))
                break
    if p.metadata != doc["metadata"]:
        fail("metadata %s" % p.metadata)
    if list(p.events["status"]) != [e["status"] for e in doc["events"]] or \
            list(p.events["unit"]) != [e["unit"] for e in doc["events"]]:
        fail("events %s" % p.events)
    if list(p.constructs["name"]) != [c["name"] for c in doc["constructs"]]:
        fail("constructs differ")
    if len(p.threads) != len(doc["threads"]):
        fail("%d threads, JSON %d" % (len(p.threads), len(doc["threads"])))
    for t, jt in zip(p.threads.itertuples(), doc["threads"]):
        for k, name in enumerate(e["name"] for e in doc["events"]):
            got = p.threads.loc[jt["index"], ("gap", name)]
            want = jt["gap"][k]
            if (want is None) != pd.isna(got) or (want is not None and got != want):
                fail("thread %d gap %s: %r, JSON %r" % (jt["index"], name, got, want))
    # parts: per XU in time order, the first at its start, the last at its
    # end on its thread, none overlapping (the XU rows come from the CSV)
    g = p.parts.groupby("xu", sort=False)
    x = df.set_index("xu")
    first, last = g.first(), g.last()
    if set(first.index) != set(x.index) or \
            (first["start_ns"] != x.loc[first.index, "start_ns"]).any() or \
            (last["end_ns"] != x.loc[last.index, "end_ns"]).any() or \
            (last["thread"] != x.loc[last.index, "thread"]).any():
        fail("parts do not span their XUs")
    pp = p.parts.sort_values(["xu", "part"])
    same = pp["xu"].values[1:] == pp["xu"].values[:-1]
    if (pp["start_ns"].values[1:][same] < pp["end_ns"].values[:-1][same]).any():
        fail("parts of one XU overlap")
    if kind == "untied" and g.size().max() < 2:
        fail("untied: no XU in several parts")
    if (p.truncated, p.salvage_note) != (doc["truncated"], doc["salvage_note"]):
        fail("truncated %s note %r" % (p.truncated, p.salvage_note))
    if p.truncated != any(p.salvage_note in str(w.message) for w in warned):
        fail("warning %s for truncated=%s" % ([str(w.message) for w in warned], p.truncated))
    return p


def fail(m):
    fails.append(m)


if kind == "many":
    files = sorted(os.path.join(work, f) for f in os.listdir(work) if f.endswith(".ompf"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # trunc.ompf
        runs = ompf.read_many(work)
    if [r.path for r in runs] != files:
        fail("read_many read %s" % [r.path for r in runs])
    allx = runs.xus
    if len(allx) != sum(len(r.xus) for r in runs) or list(allx.columns[:3]) != \
            ["path", "run_id", "mode"]:
        fail("stacked XUs: %d rows, columns %s" % (len(allx), list(allx.columns[:4])))
    if list(runs.metadata["path"]) != files:
        fail("metadata table")
    try:
        ompf.read(os.path.join(work, "none.ompf"))
        fail("a missing file was read")
    except OSError as e:
        if "none.ompf" not in str(e):
            fail("error does not name the file: %s" % e)
    print("read_many: %d profiles, %d XUs" % (len(runs), len(allx)))
else:
    p = check_one(os.path.join(work, kind + ".ompf"))
    # run.ompf is `prog_fib 12` (tests/export/make_profiles.py)
    if kind == "run" and (len(p.argv) != 2 or os.path.basename(p.argv[0]) != "prog_fib"
                          or p.argv[1] != "12"):
        fail("argv %r" % (p.argv,))
    if not isinstance(p.argv, list) or any("\x1f" in a for a in p.argv):
        fail("argv not a list of arguments: %r" % (p.argv,))
    print("%r: dtypes %s, %d parts" % (p, sorted(set(str(t) for t in p.xus.dtypes[8:])),
                                       len(p.parts)))
if fails:
    print("\n".join("FAIL: " + f for f in fails[:20]))
    sys.exit(1)
print("ok")
