#!/usr/bin/python3
"""TMD / EPD end to end on hand-built profiles: CSV files written here are
imported with `ompfuse import --program prog` and evaluated with
`ompfuse evaluate --csv`; every expected value is worked out by hand in the
comment next to it (docs/semantics.md, Evaluation; the same fixtures as
test_epd.c).
usage: eval_import_test.py OMPFUSE"""
import csv
import math
import os
import subprocess
import sys
import tempfile

ompfuse = sys.argv[1]
fails = []
TOL = 1e-12


def check(cond, what):
    if not cond:
        fails.append(what)


def close(got, want, what, tol=TOL):
    check(got is not None and abs(got - want) <= tol * max(1.0, abs(want)),
          f"{what}: got {got!r}, expected {want!r}")


def run(*args):
    p = subprocess.run([ompfuse, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write_profile(d, name, events, rows, types=None):
    """rows: per XU the event values (None: missing); types: per XU a type
    name (default x.c:10).  Imported as d/name.ompf of program 'prog'."""
    path = os.path.join(d, name + ".csv")
    with open(path, "w") as f:
        f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns," + ",".join(events) + "\n")
        for i, r in enumerate(rows):
            ty = types[i] if types else "x.c:10"
            vals = ",".join("" if v is None else repr(v) for v in r)
            f.write(f"{i + 1},{ty},task,0.{i + 1},0,-1,{100 * i},{100 * i + 50},{vals}\n")
    out = os.path.join(d, name + ".ompf")
    rc, o, e = run("import", "--csv", path, "-o", out, "--program", "prog")
    if rc != 0:
        sys.exit(f"import {path} failed: {rc} {e}")
    return out


def evaluate(refs, targets, *opts):
    """Runs evaluate with --csv; returns (stdout, {(target, a, b, type): row})."""
    csvp = os.path.join(d, "out.csv")
    rc, out, err = run("evaluate", "-q", "--csv", csvp, *opts, "--references", *refs,
                       "--", *targets)
    check(rc == 0, f"evaluate {targets}: {rc} {err!r}")
    rows = {}
    if rc == 0:
        for r in csv.DictReader(open(csvp)):
            rows[(r["target"], r["event_a"], r["event_b"], r["type"])] = r
    return out, rows


def num(row, col):
    return float(row[col]) if row and row.get(col, "") != "" else None


def epd_printed(out, name):
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == name:
            return float(f[1]), line
    return None, ""


ABC = ["A", "B", "C"]
# Three repeats, 5 XUs, events A B C (rows are XUs: a b c).  Bounds [0,10]
# for every event with 10 intervals: width 1, so coordinates are the values.
R1 = [(0, 0, 0), (0, 0, 0), (10, 10, 10), (5, 5, 5), (5, 5, 5)]
R2 = R1[:4] + [(7, 5, 7)]
R3 = R1[:4] + [(8, 5, 8)]
# T1: R1 with A + 1 on every XU (11 lands in the outer bin above)
T1 = [(a + 1, b, c) for a, b, c in R1]
# T2: R1 with A of the first XU at -3 (outer bin below) and of the third at
# 30 (outer bin above): outer bins sit at their XUs' centroid, not at the edge
T2 = [(-3, 0, 0), (0, 0, 0), (30, 10, 10), (5, 5, 5), (5, 5, 5)]
# HEM-like: R1 plus an XU without a value of B
TM = R1 + [(3, None, 3)]

with tempfile.TemporaryDirectory() as d:
    refs = [write_profile(d, n, ABC, r) for n, r in (("r1", R1), ("r2", R2), ("r3", R3))]
    t1 = write_profile(d, "t1", ABC, T1)
    same = write_profile(d, "same", ABC, R1)
    t2 = write_profile(d, "t2", ABC, T2)
    tm = write_profile(d, "tm", ABC, TM)
    out, rows = evaluate(refs, [t1, same, t2, tm])
    row = lambda t, a, b, ty="all": rows.get((t, a, b, ty))

    # Calibration: median over the unordered repeat pairs (r1,r2) (r1,r3)
    # (r2,r3).  (A,B): R1 has 2/5 at (5,5); R2 moves 1/5 of it to (7,5): 0.4;
    # R3 to (8,5): 0.6; R2-R3: 0.2.  Median of {0.4, 0.6, 0.2} = 0.4 (not the
    # mean 0.4 nor the ordered-pair median).  (A,C): the moves are diagonal:
    # 0.2*2*sqrt2, 0.2*3*sqrt2, 0.2*sqrt2: median 0.4 sqrt2.  (B,C): 0.4.
    close(num(row("t1", "A", "B"), "calibration"), 0.4, "calibration A,B")
    close(num(row("t1", "A", "C"), "calibration"), 0.4 * math.sqrt(2), "calibration A,C")
    close(num(row("t1", "B", "C"), "calibration"), 0.4, "calibration B,C")
    for key, r in rows.items():
        check(r["calibration_floor"] == "0" and r["repeats"] == "3", f"no floor, 3 repeats: {key}")

    # One-bin shift: T1 (A,B) vs R1: every XU moved by exactly one interval
    # along A (11 is in the outer bin at coordinate 11, one from (10,10)):
    # 1.0.  vs R2: every target point's nearest R2 point is 1 away: 1.0.
    # vs R3: 0.2 must reach (8,5), nearest source (6,5) at 2, the other 0.8
    # moves >= 1: 0.8 + 0.4 = 1.2.  TMD = median(1, 1, 1.2)/0.4 = 2.5.
    r = row("t1", "A", "B")
    close(num(r, "uncalibrated_1"), 1.0, "t1 A,B vs r1 (one-bin shift)")
    close(num(r, "uncalibrated_2"), 1.0, "t1 A,B vs r2")
    close(num(r, "uncalibrated_3"), 1.2, "t1 A,B vs r3")
    close(num(r, "tmd"), 2.5, "t1 A,B tmd")
    # (A,C) vs R1: 1.0; vs R2: 0.8 + 0.2 sqrt5 ((6,5)->(7,7)); vs R3:
    # 0.8 + 0.2 sqrt13 ((6,5)->(8,8)).  TMD = (0.8 + 0.2 sqrt5)/(0.4 sqrt2).
    r = row("t1", "A", "C")
    tmd_ac = (0.8 + 0.2 * math.sqrt(5)) / (0.4 * math.sqrt(2))
    close(num(r, "uncalibrated_1"), 1.0, "t1 A,C vs r1")
    close(num(r, "uncalibrated_2"), 0.8 + 0.2 * math.sqrt(5), "t1 A,C vs r2")
    close(num(r, "uncalibrated_3"), 0.8 + 0.2 * math.sqrt(13), "t1 A,C vs r3")
    close(num(r, "tmd"), tmd_ac, "t1 A,C tmd")
    # (B,C): T1's B and C are R1's: identical distributions give exactly 0
    # uncalibrated; vs R2 0.4, R3 0.6: TMD = 0.4/0.4 = 1.
    r = row("t1", "B", "C")
    check(num(r, "uncalibrated_1") == 0.0, f"t1 B,C vs r1 is exactly 0: {r}")
    close(num(r, "uncalibrated_2"), 0.4, "t1 B,C vs r2")
    close(num(r, "uncalibrated_3"), 0.6, "t1 B,C vs r3")
    close(num(r, "tmd"), 1.0, "t1 B,C tmd")
    # EPD: geometric mean over the three pairs = cbrt(2.5 * tmd_ac * 1)
    epd = (2.5 * tmd_ac) ** (1 / 3)
    got, line = epd_printed(out, "t1")
    close(got, epd, f"t1 EPD printed ({line!r})", 1e-4)  # printed with 4 decimals
    check(line.split()[2] == "3/3", f"t1 pairs: {line!r}")

    # Identical to R1: 0 uncalibrated to r1 on every pair; (A,B) median(0,
    # 0.4, 0.6)/0.4 = 1: as close as a repeat
    for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
        check(num(row("same", a, b), "uncalibrated_1") == 0.0, f"same {a},{b} vs r1 = 0")
        check(row("same", a, b)["tmd_floor"] == "0", f"same {a},{b}: no target floor")
    close(num(row("same", "A", "B"), "tmd"), 1.0, "same A,B tmd")
    close(num(row("same", "A", "C"), "tmd"), 1.0, "same A,C tmd")

    # Outer bins: T2 (A,B) vs R1: (-3,0)->(0,0) 3 and (30,10)->(10,10) 20,
    # each 1/5: 4.6.  vs R2: + (5,5)->(7,5) 2/5 = 5.0; vs R3: + 3/5 = 5.2.
    # TMD = 5.0 / 0.4 = 12.5.  (B,C) is R1's: TMD 1.
    r = row("t2", "A", "B")
    close(num(r, "uncalibrated_1"), 4.6, "t2 A,B vs r1 (outer bins)")
    close(num(r, "uncalibrated_2"), 5.0, "t2 A,B vs r2")
    close(num(r, "uncalibrated_3"), 5.2, "t2 A,B vs r3")
    close(num(r, "tmd"), 12.5, "t2 A,B tmd")
    close(num(row("t2", "B", "C"), "tmd"), 1.0, "t2 B,C tmd")

    # Missing values: the XU without B is left out of (A,B) and (B,C) and
    # counted; the other 5 are normalised among themselves (weights 1/5,
    # not 1/6), so they are at exactly 0 from R1.  (A,C) bins all 6.
    for a, b in (("A", "B"), ("B", "C")):
        r = row("tm", a, b)
        check(r and r["left_out"] == "1" and r["binned"] == "5" and r["status"] == "ok",
              f"tm {a},{b} left_out 1, binned 5: {r}")
        check(num(r, "uncalibrated_1") == 0.0, f"tm {a},{b} vs r1 = 0: {r}")
        close(num(r, "tmd"), 1.0, f"tm {a},{b} tmd")
    r = row("tm", "A", "C")
    check(r and r["left_out"] == "0" and r["binned"] == "6", f"tm A,C: {r}")
    got, line = epd_printed(out, "tm")
    check(line.split()[3:4] == ["1"], f"tm left-out column 1: {line!r}")

    # Per-type weighting (2 events A, B; types x.c:10 = X, x.c:20 = Y).
    # X (2 XUs/run): repeats identical (0,0) (10,10), so the calibration is
    # the floor 1/2; the target has (1,0) (11,10): uncalibrated 1, 1: TMD 2.
    # Y (4 XUs/run): R1 (0,0) (4,0) (10,10) (10,10), R2 has (6,0) instead of
    # (4,0): calibration 0.25*2 = 0.5; target = R1: uncalibrated (0, 0.5),
    # median of two = 0.25, TMD 0.5.  Weights: reference XUs of the type
    # over both repeats, 4 and 8: exp((4 ln 2 + 8 ln 0.5)/12) = 2^(-1/3)
    # (unweighted it would be 1).
    ty = ["x.c:10"] * 2 + ["x.c:20"] * 4
    p1 = write_profile(d, "p1", ["A", "B"], [(0, 0), (10, 10), (0, 0), (4, 0), (10, 10), (10, 10)], ty)
    p2 = write_profile(d, "p2", ["A", "B"], [(0, 0), (10, 10), (0, 0), (6, 0), (10, 10), (10, 10)], ty)
    pt = write_profile(d, "pt", ["A", "B"], [(1, 0), (11, 10), (0, 0), (4, 0), (10, 10), (10, 10)], ty)
    out, rows = evaluate([p1, p2], [pt], "--per-type")
    tr = {k[3]: v for k, v in rows.items()}
    check(len(tr) == 3 and "all" in tr, f"per-type rows: {list(tr)}")
    x = next((v for k, v in tr.items() if "x.c:10" in k), None)
    y = next((v for k, v in tr.items() if "x.c:20" in k), None)
    check(x is not None and y is not None, "type rows x.c:10, x.c:20")
    if x and y:
        close(num(x, "calibration"), 0.5, "type X calibration (floor 1/2)")
        check(x["calibration_floor"] == "1" and y["calibration_floor"] == "0", "type floors")
        close(num(x, "uncalibrated_1"), 1.0, "type X vs p1")
        close(num(x, "uncalibrated_2"), 1.0, "type X vs p2")
        close(num(x, "tmd"), 2.0, "type X tmd")
        check(x["binned"] == "2" and y["binned"] == "4", f"type binned: {x} {y}")
        close(num(y, "calibration"), 0.5, "type Y calibration")
        check(num(y, "uncalibrated_1") == 0.0, "type Y vs p1 = 0")
        close(num(y, "uncalibrated_2"), 0.5, "type Y vs p2")
        close(num(y, "tmd"), 0.5, "type Y tmd")
    close(num(tr.get("all"), "tmd"), 2 ** (-1 / 3), "per-type pair tmd (weighted)")
    got, line = epd_printed(out, "pt")
    close(got, 2 ** (-1 / 3), f"per-type EPD printed ({line!r})", 1e-4)

    # Zero-width range, calibration floor and target floor: two repeats
    # with A always 5 and B = (0, 10).  Identical repeats: calibration
    # median 0, floored at 1/|XUs| = 1/2.  Width of A = 1 count, so a
    # target with A = 7 is 2 intervals away (outer bin): uncalibrated 2, TMD
    # 2/0.5 = 4.  A target equal to the repeats: uncalibrated (0, 0), median
    # 0, raised to the target floor 1/2 (docs/evaluation.md; the papers alone
    # would give 0 and an EPD of 0): TMD 1, tmd_floor 1.
    z1 = write_profile(d, "z1", ["A", "B"], [(5, 0), (5, 10)])
    z2 = write_profile(d, "z2", ["A", "B"], [(5, 0), (5, 10)])
    zt = write_profile(d, "zt", ["A", "B"], [(7, 0), (7, 10)])
    zs = write_profile(d, "zs", ["A", "B"], [(5, 0), (5, 10)])
    out, rows = evaluate([z1, z2], [zt, zs])
    r = rows.get(("zt", "A", "B", "all"))
    close(num(r, "calibration"), 0.5, "zero-width calibration floor")
    check(r and r["calibration_floor"] == "1" and r["tmd_floor"] == "0", f"zt floors: {r}")
    close(num(r, "uncalibrated_1"), 2.0, "zero-width outer bin distance")
    close(num(r, "tmd"), 4.0, "zero-width tmd")
    r = rows.get(("zs", "A", "B", "all"))
    check(r and num(r, "uncalibrated_1") == 0.0 and num(r, "uncalibrated_2") == 0.0,
          f"zs uncalibrated 0: {r}")
    check(r and r["tmd_floor"] == "1", f"zs tmd_floor: {r}")
    close(num(r, "tmd"), 1.0, "zs tmd (floored)")
    got, line = epd_printed(out, "zs")
    close(got, 1.0, f"zs EPD ({line!r})", 1e-4)
    # printed summary: calibration floor pairs, then target floor pairs
    check(line.split()[4:6] == ["1", "1"], f"zs floor columns: {line!r}")
    got, line = epd_printed(out, "zt")
    check(line.split()[4:6] == ["1", "0"], f"zt floor columns: {line!r}")

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("evaluate on imported hand-built profiles: all checks passed")
