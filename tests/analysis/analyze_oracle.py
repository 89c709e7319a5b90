#!/usr/bin/python3
"""`ompfuse analyze` against pandas on `ompfuse export --csv` of the same
profile: per-construct and per-thread sums, counts, missing counts, mean,
median, p5/p95 (numpy's linear quantiles), cv (population std / |mean|),
shares (which add up to 100 % with the gap rows), and derived metrics per
XU (the --top listing of every XU) with their zero-denominator counts.
Profiles: a HEM profile with missing values (hem_profile_tool), and with
the OMPT tool two real runs and their LGL fusion.
A task tree (tests/tool's fib) checks the time of tasks suspended while
their children ran: the sum of their parts, so that no gap is negative.
usage: analyze_oracle.py WORKDIR OMPFUSE HEM_PROFILE_TOOL [TOOL PROGRAM MIX]"""
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from acheck import check, finish, workdir
import pandas as pd

WORK, OMPFUSE, HEMTOOL = sys.argv[1:4]
TOOL, PROG, MIX = (sys.argv[4:7] + [None, None, None])[:3]
workdir(WORK)


def close(a, b, what, tol=1e-9):
    ok = (a is None or (isinstance(a, float) and math.isnan(a))) and \
         (b is None or (isinstance(b, float) and math.isnan(b)))
    if not ok and a is not None and b is not None and not math.isnan(a) and not math.isnan(b):
        ok = abs(a - b) <= tol * max(1.0, abs(a), abs(b))
    check(ok, f"{what}: analyze {a!r}, pandas {b!r}")


def sh(*args, cwd=WORK):
    p = subprocess.run([OMPFUSE, *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode:
        print(" ".join(args), p.returncode, p.stderr)
    return p


def export(path):
    """The CSV export, and run_ns: the time each XU ran, the sum of its
    parts from the JSON export (a task suspended while its children ran
    counts its own time only), which analyze's duration_ns is."""
    out = sh("export", "--csv", "-o", "-", path).stdout
    df = pd.read_csv(io.StringIO(out), float_precision="round_trip",
                     dtype={"label": str})
    xus = json.loads(sh("export", "--format", "json", "--no-resolve", path).stdout)
    run = {x["id"]: sum(b - a for _, a, b in x.get("part_list") or
                        [[x["thread"], x["start_ns"], x["end_ns"]]])
           for x in xus["profiles"][0]["xus"]}
    df["run_ns"] = df.xu.map(run).astype("float64")
    return df


def analyze_csv(path, *opts):
    p = sh("analyze", "--csv", *opts, path)
    check(p.returncode == 0, f"analyze {opts} {path}: rc {p.returncode}")
    return pd.read_csv(io.StringIO(p.stdout), float_precision="round_trip",
                       keep_default_na=False, na_values=[""], dtype={"group": str})


def oracle_groups(df, events, by, name):
    """Checks analyze --by BY (construct: column 'type') against df."""
    col = {"construct": "type", "thread": "thread"}[by]
    a = analyze_csv(name, "--by", by, "--no-builtin-metrics")
    got = a[a.gap == 0]
    groups = sorted(df[col].unique(), key=str)
    check(len(got.group.unique()) == len(groups),
          f"{name} by {by}: {len(got.group.unique())} groups, pandas {len(groups)}")
    for g in groups:
        sub = df[df[col] == g]
        key = str(g) if by == "construct" else str(g)
        rows = got[got[by].astype(str) == key]
        check(len(rows) > 0, f"{name} by {by}: group {g} missing")
        if not len(rows):
            continue
        check(int(rows.xus.iloc[0]) == len(sub), f"{name} {by}={g}: xus")
        for ev in ["duration_ns"] + events:
            r = rows[rows.column == ev]
            vals = sub.run_ns if ev == "duration_ns" else sub[ev]
            v = vals.dropna().to_numpy(dtype=float)
            what = f"{name} {by}={g} {ev}"
            check(int(r.n.iloc[0]) == len(v), f"{what}: n {int(r.n.iloc[0])} vs {len(v)}")
            check(int(r.missing.iloc[0]) == int(vals.isna().sum()), f"{what}: missing")
            if not len(v):
                check(math.isnan(r["sum"].iloc[0]), f"{what}: all missing gives no sum")
                continue
            close(r["sum"].iloc[0], v.sum(), what + " sum")
            close(r["mean"].iloc[0], v.mean(), what + " mean")
            close(r["median"].iloc[0], np.quantile(v, 0.5), what + " median")
            close(r["p5"].iloc[0], np.quantile(v, 0.05), what + " p5")
            close(r["p95"].iloc[0], np.quantile(v, 0.95), what + " p95")
            cv = v.std() / abs(v.mean()) if v.mean() != 0 else float("nan")
            close(r["cv"].iloc[0], cv, what + " cv", 1e-7)
    return a


def shares(a, events, name, gap_known):
    for ev in ["duration_ns"] + events:
        r = a[a.column == ev]
        total = r.share.fillna(0).sum()
        close(total, 1.0, f"{name}: shares of {ev} (gap rows included)", 1e-9)
        gap = r[r.gap == 1]
        check(len(gap) >= 1, f"{name}: a gap row for {ev}")
        if ev != "duration_ns":
            check(gap["sum"].notna().all() == gap_known,
                  f"{name}: gap of {ev} {'known' if gap_known else 'unknown'}")


def metric_oracle(path, name, df, metrics):
    """Per-XU metric values: --top (every XU) --csv against pandas."""
    n = len(df)
    opts = ["--no-builtin-metrics"]
    for m in metrics:
        opts += ["--metric", m[0]]
    p = sh("analyze", "--csv", "--top", str(n), "--top-by", "duration_ns", *opts, path)
    check(p.returncode == 0, f"{name}: analyze --top")
    top = pd.read_csv(io.StringIO(p.stdout), float_precision="round_trip").set_index("xu")
    check(len(top) == n, f"{name}: --top {n} lists {len(top)} XUs")
    x = df.set_index("xu")
    groups = analyze_csv(path, *opts)
    zeros = []
    for mdef, fn, num_cols, den_cols in metrics:
        mname = mdef.split("=")[0]
        want = fn(x)
        have_inputs = x[num_cols + den_cols].notna().all(axis=1) if num_cols + den_cols else True
        den = x[den_cols].prod(axis=1) if den_cols else pd.Series(1, index=x.index)
        zero = have_inputs & (den == 0)
        zeros.append(int(zero.sum()))
        ok = have_inputs & ~zero
        got = top[mname].reindex(x.index)
        check(got[ok].notna().all(), f"{name} {mname}: a computable XU has no value")
        check(got[~ok].isna().all(), f"{name} {mname}: a missing/zero-den XU has a value")
        diff = (got[ok] - want[ok]).abs() / np.maximum(1.0, want[ok].abs())
        check(len(diff) == 0 or diff.max() <= 1e-12,
              f"{name} {mname}: per-XU values differ by {diff.max() if len(diff) else 0}")
        # counts per construct
        r = groups[(groups.column == mname) & (groups.gap == 0)]
        for _, row in r.iterrows():
            sel = x.type == row.construct
            check(int(row.zero_den) == int(zero[sel].sum()),
                  f"{name} {mname} {row.construct}: zero_den {row.zero_den} vs {int(zero[sel].sum())}")
            check(int(row.missing) == int((~have_inputs)[sel].sum()) if not isinstance(have_inputs, bool) else True,
                  f"{name} {mname} {row.construct}: missing")
            check(int(row.n) == int(ok[sel].sum()), f"{name} {mname} {row.construct}: n")
            vals = want[ok & sel].to_numpy(dtype=float)
            if len(vals):
                close(row["median"], np.quantile(vals, 0.5), f"{name} {mname} median")
            # ratio of sums over the XUs with every input
            s = x[have_inputs & sel] if not isinstance(have_inputs, bool) else x[sel]
            if len(s):
                rs = fn(s.assign(**{c: s[c] for c in s.columns}).sum().to_frame().T)
                close(row["ratio"], float(rs.iloc[0]) if np.isfinite(rs.iloc[0]) else float("nan"),
                      f"{name} {mname} {row.construct}: ratio of sums")
    return zeros


# ---- a HEM profile: estimates, values missing per XU, no gap -------------
hem = os.path.join(WORK, "hem.ompf")
subprocess.run([HEMTOOL, "gen", "7", "3000", hem], check=True)
df = export(hem)
ev = ["perf::TASK-CLOCK", "perf::CPU-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES"]
check(df[ev].isna().sum().sum() > 1000, "the HEM profile has missing values")
a = oracle_groups(df, ev, "construct", hem)
oracle_groups(df, ev, "thread", hem)
check((a[a.column_kind == "event"].estimate == 1).all(), "HEM events marked as estimates")
shares(a, ev, "hem", gap_known=False)
tbl = sh("analyze", hem).stdout
check("* marks HEM estimates" in tbl and "perf::TASK-CLOCK*" in tbl, "table marks estimates")
page = os.path.join(WORK, "hem.html")
check(sh("analyze", "--html", page, hem).returncode == 0, "HEM page written")
html = open(page).read() if os.path.exists(page) else ""
check("perf::TASK-CLOCK*" in html and "(HEM estimate)" in html and "* marks HEM estimates" in html,
      "the page marks HEM estimates")
check("missing</span>" in html, "the page shows missing counts")
j = json.loads(sh("analyze", "--json", hem).stdout)
check(j["profiles"][0]["columns"][1]["estimate"] is True, "JSON marks estimates")
# JSON and CSV say the same: every group's sum and missing count per event
for g in j["profiles"][0]["groups"]:
    for name, st in g["columns"].items():
        row = a[(a.group == g["name"]) & (a.column == name)]
        if name not in ev or not len(row):
            continue
        check(st["missing"] == int(row.missing.iloc[0]), f"JSON {g['name']} {name}: missing")
        close(st["sum"] if st["sum"] is not None else float("nan"), row["sum"].iloc[0],
              f"JSON {g['name']} {name}: sum")
# two profiles in one CSV: one header, the profile column tells them apart
two = analyze_csv(hem, hem)
check(len(two) == 2 * len(analyze_csv(hem)) and set(two.profile) == {hem},
      "two profiles give one CSV with both")
zero = metric_oracle(hem, "hem", df, [
    ("R=TASK-CLOCK/CONTEXT-SWITCHES", lambda x: x["perf::TASK-CLOCK"] / x["perf::CONTEXT-SWITCHES"],
     ["perf::TASK-CLOCK"], ["perf::CONTEXT-SWITCHES"]),
    ("S=(CPU-CLOCK - TASK-CLOCK) * 2 + 1/duration_ns",
     lambda x: (x["perf::CPU-CLOCK"] - x["perf::TASK-CLOCK"]) * 2 + 1 / x.run_ns,
     ["perf::CPU-CLOCK", "perf::TASK-CLOCK"], []),
])
check(zero[0] > 0, "the HEM profile has XUs with CONTEXT-SWITCHES == 0 (zero denominators)")
t = sh("analyze", "--no-builtin-metrics", "--metric", "R=TASK-CLOCK/CONTEXT-SWITCHES", hem).stdout
check("zero-den" in t, "the table shows zero denominators")

# ---- a big HEM profile: several column batches, so worker threads ------
big = os.path.join(WORK, "hem-big.ompf")
subprocess.run([HEMTOOL, "gen", "8", "400000", big], check=True)
dfb = export(big)
oracle_groups(dfb, ev, "construct", big)
metric_oracle(big, "hem-big", dfb, [
    ("R=TASK-CLOCK/CONTEXT-SWITCHES", lambda x: x["perf::TASK-CLOCK"] / x["perf::CONTEXT-SWITCHES"],
     ["perf::TASK-CLOCK"], ["perf::CONTEXT-SWITCHES"])])

# ---- real runs under the tool, and their fusion --------------------------
if TOOL:
    def record(name, events):
        env = dict(os.environ, OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=TOOL,
                   OMPFUSE_EVENTS=events, OMPFUSE_STRICT="1",
                   OMPFUSE_OUTPUT=os.path.join(WORK, name + ".ompf"))
        p = subprocess.run([PROG, "200"], env=env, capture_output=True, text=True)
        check(p.returncode == 0, f"run {name} under the tool: {p.stderr[-300:]}")

    record("a", "perf::TASK-CLOCK,perf::PAGE-FAULTS")
    record("b", "perf::TASK-CLOCK,perf::CPU-CLOCK,perf::MINOR-FAULTS")
    p = sh("combine", "--strategy", "lgl", "-o", "fused.ompf", "a.ompf", "b.ompf")
    check(p.returncode == 0, "combine lgl")
    for name, evs in (("a", ["perf::TASK-CLOCK", "perf::PAGE-FAULTS"]),
                      ("fused", None)):
        path = os.path.join(WORK, name + ".ompf")
        df = export(path)
        if evs is None:
            evs = [c for c in df.columns[8:] if c != "run_ns"]
        a = oracle_groups(df, evs, "construct", path)
        oracle_groups(df, evs, "thread", path)
        shares(a, evs, name, gap_known=True)
        # a combination: construct x thread against pandas' groupby
        c = analyze_csv(path, "--by", "construct,thread", "--no-builtin-metrics")
        c = c[(c.gap == 0) & (c.column == evs[0])]
        want = df.groupby(["type", "thread"])[evs[0]].agg(["sum", "count"])
        check(len(c) == len(want), f"{name} construct,thread: {len(c)} groups, pandas {len(want)}")
        for (ty, th), w in want.iterrows():
            row = c[(c.construct == ty) & (c.thread == th)]
            check(len(row) == 1 and row["sum"].iloc[0] == w["sum"] and row.n.iloc[0] == w["count"],
                  f"{name} construct,thread {ty} {th}: {row[['sum', 'n']].values} vs {w.values}")
        check((a.estimate == 0).all(), f"{name}: no estimates")
        metrics = [("U=TASK-CLOCK/duration_ns",
                    lambda x: x["perf::TASK-CLOCK"] / x.run_ns,
                    ["perf::TASK-CLOCK"], ["run_ns"])]
        if name == "fused":
            metrics.append(("V=CPU-CLOCK/TASK-CLOCK",
                            lambda x: x["perf::CPU-CLOCK"] / x["perf::TASK-CLOCK"],
                            ["perf::CPU-CLOCK"], ["perf::TASK-CLOCK"]))
        metric_oracle(path, name, df, metrics)
        # the built-in CPU utilisation applies to TASK-CLOCK profiles
        b = analyze_csv(path)
        check("CPU_UTILIZATION" in set(b.column), f"{name}: built-in CPU_UTILIZATION applies")

# ---- suspended tasks: their time is their parts', gaps are not negative --
if TOOL and MIX:
    path = os.path.join(WORK, "fib.ompf")
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=TOOL,
               OMPFUSE_EVENTS="perf::TASK-CLOCK", OMPFUSE_STRICT="1", OMPFUSE_OUTPUT=path)
    p = subprocess.run([MIX, "fib", "16"], env=env, capture_output=True, text=True)
    check(p.returncode == 0, f"fib under the tool: {p.stderr[-300:]}")
    df = export(path)
    span = df.end_ns - df.start_ns
    check((df.run_ns < span).sum() > 10,
          f"fib: tasks that ran in several parts ({(df.run_ns < span).sum()} shorter than their span)")
    # analyze shows one row per construct name, as pandas groups the CSV's
    # type column (fib's task constructs, inlined into their callers at -O2,
    # are two constructs of one name; not in the sanitizer build: the case
    # is held in every build by tool_two_units)
    a = oracle_groups(df, ["perf::TASK-CLOCK"], "thread", path)
    a = oracle_groups(df, ["perf::TASK-CLOCK"], "construct", path)
    shown = sh("show", path).stdout
    rows = re.findall(r"^\s+\d+\s+task\s+(.*?)\s+(\d+) XUs$", shown, re.M)
    names = [n for n, x in rows if int(x) > 0]
    print(f"fib: {len(names)} task constructs with XUs, {len(set(names))} names")
    byc = analyze_csv(path, "--no-builtin-metrics")
    byc = byc[(byc.gap == 0) & (byc.column == "duration_ns")]
    check(sorted(byc.group) == sorted(set(df.type)),
          f"fib by construct: one row per name: {sorted(byc.group)}")
    for by in ("construct", "thread"):
        a = analyze_csv(path, "--by", by, "--no-builtin-metrics")
        shares(a, ["perf::TASK-CLOCK"], "fib by " + by, gap_known=True)
        g = a[(a.gap == 1) & (a.column == "duration_ns")]
        check(len(g) >= 1 and (g["sum"] >= 0).all(),
              f"fib by {by}: no negative gap time: {list(g['sum'])}")
    # per thread: the gap is the wall span less the union of the parts
    # that ran on the thread (adjacent parts overlap by a counter read)
    js = json.loads(sh("export", "--format", "json", "--no-resolve", path).stdout)
    parts = {}
    for u in js["profiles"][0]["xus"]:
        for t, s0, s1 in u.get("part_list") or [[u["thread"], u["start_ns"], u["end_ns"]]]:
            parts.setdefault(t, []).append((s0, s1))
    span = int(df.end_ns.max() - df.start_ns.min())
    g = analyze_csv(path, "--by", "thread", "--no-builtin-metrics")
    g = g[(g.gap == 1) & (g.column == "duration_ns")]
    for t, iv in sorted(parts.items()):
        iv.sort()
        busy, lo, hi = 0, iv[0][0], iv[0][1]
        for s0, s1 in iv[1:]:
            if s0 > hi:
                busy, lo = busy + hi - lo, s0
            hi = max(hi, s1)
        busy += hi - lo
        row = g[g.group.str.endswith(" %d" % t)]
        check(len(row) == 1 and row["sum"].iloc[0] == span - busy,
              f"fib thread {t}: gap {list(row['sum'])}, span - union of parts {span - busy}")
    # per XU: duration_ns is the sum of the parts, and so is a metric's
    p = sh("analyze", "--csv", "--top", str(len(df)), "--top-by", "duration_ns",
           "--no-builtin-metrics", "--metric", "U=TASK-CLOCK/duration_ns", path)
    top = pd.read_csv(io.StringIO(p.stdout), float_precision="round_trip").set_index("xu")
    x = df.set_index("xu")
    check(len(top) == len(x) and (top.duration_ns.reindex(x.index) == x.run_ns).all(),
          "fib: every XU's duration_ns is the sum of its parts")
    u = x["perf::TASK-CLOCK"] / x.run_ns
    d = (top.U.reindex(x.index) - u).abs() / np.maximum(1.0, u.abs())
    check(d.max() <= 1e-12, f"fib: TASK-CLOCK/duration_ns per XU differs by {d.max()}")

finish("analyze oracle")
