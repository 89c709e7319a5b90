#!/usr/bin/python3
"""ompfuse evaluate from the command line: exit codes, messages, and the CSV
checked against the definitions (TMD = median(uncalibrated) / calibration,
EPD = geometric mean of the TMDs, Correlation Error = mean |rho_t - rho_r|).
usage: eval_cli_test.py OMPFUSE EVAL_GEN"""
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile

ompfuse, gen = sys.argv[1], sys.argv[2]
fails = []


def run(*args):
    p = subprocess.run([ompfuse, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        fails.append(what)


with tempfile.TemporaryDirectory() as d:
    subprocess.run([gen, d, "500", "4", "7"], check=True)
    other = os.path.join(d, "other")
    os.mkdir(other)
    subprocess.run([gen, other, "300", "4", "8", "another-program"], check=True)
    refs = [os.path.join(d, f"ref-{r}.ompf") for r in (1, 2, 3)]
    t = lambda n: os.path.join(d, n + ".ompf")

    rc, out, err = run("evaluate", "--help")
    check(rc == 0 and "usage: ompfuse evaluate" in out, "--help")
    rc, out, err = run("evaluate", "--bogus")
    check(rc == 2 and err.count("\n") == 1 and "--bogus" in err, f"unknown option: {rc} {err!r}")
    rc, out, err = run("evaluate", "--references", *refs, "--", "/nonexistent.ompf")
    check(rc == 2 and "/nonexistent.ompf" in err, f"missing file: {rc} {err!r}")
    rc, out, err = run("evaluate", "--references", *refs, t("good"))
    check(rc == 2 and "no target" in err and "'--'" in err, f"no target: {rc} {err!r}")
    rc, out, err = run("evaluate", t("good"))
    check(rc == 2 and "--references" in err, f"no references: {rc} {err!r}")
    rc, out, err = run("evaluate", "--bins", "0", "--references", *refs, "--", t("good"))
    check(rc == 2 and "--bins" in err, f"bad --bins: {rc} {err!r}")

    # a target lacking an event: error naming it, then --allow-partial
    rc, out, err = run("evaluate", "-q", "--references", *refs, "--", t("partial"))
    check(rc == 2 and "partial" in err and "--allow-partial" in err and "EV03" in err,
          f"partial target: {rc} {err!r}")
    rc, out, err = run("evaluate", "-q", "--allow-partial", "--references", *refs, "--", t("partial"))
    check(rc == 0 and "3/6" in out and "not evaluated (3)" in out, f"allow-partial: {rc} {out!r}")

    # references with too few repeats
    rc, out, err = run("evaluate", "-q", "--references", refs[0], "--", t("good"))
    check(rc == 2 and "1 reference run" in err, f"1 repeat: {rc} {err!r}")

    # another program
    rc, out, err = run("evaluate", "-q", "--references", *refs, "--",
                       os.path.join(other, "good.ompf"))
    check(rc == 2 and "different programs" in err and "--ignore-program" in err,
          f"other program: {rc} {err!r}")
    rc, out, err = run("evaluate", "-q", "--ignore-program", "--references", *refs, "--",
                       os.path.join(other, "good.ompf"))
    check(rc == 0, f"--ignore-program: {rc} {err!r}")

    # directory of references, names from metadata, CSV
    csvp = os.path.join(d, "out.csv")
    refdir = os.path.join(d, "refs")
    os.mkdir(refdir)
    for r in refs:
        os.link(r, os.path.join(refdir, os.path.basename(r)))
    rc, out, err = run("evaluate", "-q", "--correlation-error", "--csv", csvp,
                       "--references", refdir, "--", t("good"), t("shifted"), t("hem"),
                       "mine=" + t("good"))
    check(rc == 0, f"evaluate: {rc} {err!r}")
    lines = {l.split()[0]: l.split() for l in out.splitlines() if l and not l.startswith(" ")}
    for name in ("lgl", "ctc", "hem", "mine"):
        check(name in lines, f"target {name} in output: {out!r}")
    rows = list(csv.DictReader(open(csvp)))
    check(len(rows) == 4 * 6, f"CSV rows {len(rows)}")
    by = {}
    for row in rows:
        by.setdefault(row["target"], []).append(row)
        unc = [float(row[f"uncalibrated_{k}"]) for k in (1, 2, 3)]
        tmd = float(row["tmd"])
        check(abs(statistics.median(unc) / float(row["calibration"]) - tmd) <= 1e-12 * tmd,
              f"tmd = median/cal: {row}")
        check(row["status"] == "ok" and row["repeats"] == "3", f"status {row}")
    for name, rs in by.items():
        epd = math.exp(sum(math.log(float(r["tmd"])) for r in rs) / len(rs))
        shown = float(lines[name][1])
        check(abs(epd - shown) <= 5e-4 * epd, f"EPD {name}: csv {epd} printed {shown}")
        ce = sum(abs(float(r["spearman_target"]) - float(r["spearman_reference"])) for r in rs) / len(rs)
        check(abs(ce - float(lines[name][-1])) <= 5e-4 + 1e-3 * ce, f"CE {name}: {ce} vs {lines[name]}")
    # missing values of the HEM target are left out and counted
    check(all(int(r["left_out"]) > 0 for r in by["hem"]), "hem left_out")
    check(all(int(r["left_out"]) == 0 for r in by["lgl"]), "lgl left_out")
    # the shifted target is further than a fresh sample of the same distribution
    check(float(lines["ctc"][1]) > 2 * float(lines["lgl"][1]),
          f"shifted worse than good: {lines['ctc']} {lines['lgl']}")
    # shifted event 0 appears in the worst pairs
    check("EV00" in out.split("ctc", 1)[1].splitlines()[1], "worst pairs of ctc name EV00")

    # per type: one row per pair plus one per type
    rc, out, err = run("evaluate", "-q", "--per-type", "--csv", csvp, "--references", *refs,
                       "--", t("good"))
    rows = list(csv.DictReader(open(csvp)))
    check(rc == 0 and len(rows) == 6 * 3, f"per-type rows {rc} {len(rows)} {err!r}")
    check(sorted({r["type"] for r in rows}) == sorted({"all", *[r["type"] for r in rows if r["type"] != "all"]})
          and len({r["type"] for r in rows}) == 3, "per-type types")

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("evaluate CLI: all checks passed")
