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
    check(rc == 2 and "--allow-partial" in err and "lacks event gen::EV03 " in err
          and t("partial") in err and err.count("\n") == 1,
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

    # Spearman columns are filled with --csv alone (no --correlation-error)
    rc, out, err = run("evaluate", "-q", "--csv", csvp, "--references", *refs, "--", t("good"))
    rows = list(csv.DictReader(open(csvp)))
    check(rc == 0 and len(rows) == 6, f"csv without CE: {rc} {len(rows)} {err!r}")
    for row in rows:
        check(row["spearman_target"] != "" and row["spearman_reference"] != ""
              and -1 <= float(row["spearman_target"]) <= 1
              and -1 <= float(row["spearman_reference"]) <= 1,
              f"spearman filled without --correlation-error: {row}")
        check(row["tmd_floor"] == "0", f"tmd_floor column: {row}")
    check("CE" not in out.splitlines()[1], f"no CE column without the option: {out!r}")

    # --csv -: the CSV alone on stdout (the table goes to stderr), so it pipes
    rc, out, err = run("evaluate", "-q", "--csv", "-", "--references", *refs, "--", t("good"))
    check(rc == 0 and out == open(csvp).read(),
          f"--csv - prints exactly the CSV file's bytes on stdout: {rc} {out[:200]!r}")
    check("target" in err and "EPD" in err, f"--csv -: the table on stderr: {err[:200]!r}")

    # -j1 and -j4 give byte-identical CSV
    outs = []
    for j in ("1", "4"):
        pj = os.path.join(d, f"j{j}.csv")
        rc, out, err = run("evaluate", "-q", "-j", j, "--per-type", "--correlation-error",
                           "--csv", pj, "--references", *refs, "--",
                           t("good"), t("shifted"), t("hem"))
        check(rc == 0, f"-j{j}: {rc} {err!r}")
        outs.append(open(pj, "rb").read())
    check(len(outs[0]) > 1000 and outs[0] == outs[1], "-j1 and -j4 CSV differ")

    # reference selection: a directory holding every kind of profile gives
    # only its reference runs (ref-1..3), with a note on the others
    rc, out, err = run("evaluate", "-q", "--csv", csvp, "--references", d, "--", t("good"))
    check(rc == 0 and out.startswith("references: 3 profiles"), f"mixed dir: {rc} {out!r} {err!r}")
    check("skipped 4 that are not reference runs" in err and "2 fused" in err
          and "1 hem" in err and "1 run" in err and "--any-mode" in err and d in err,
          f"note on skipped profiles: {err!r}")
    mixed = open(csvp, "rb").read()
    rc, out, err = run("evaluate", "-q", "--csv", csvp, "--references", *refs, "--", t("good"))
    check(rc == 0 and err == "" and open(csvp, "rb").read() == mixed,
          f"mixed dir gives the explicit references' CSV: {err!r}")
    # --any-mode takes all 7
    rc, out, err = run("evaluate", "-q", "--any-mode", "--allow-partial", "--references", d,
                       "--", t("good"))
    check(rc == 0 and out.startswith("references: 7 profiles") and "skipped" not in err,
          f"--any-mode dir: {rc} {out!r} {err!r}")
    # a directory without reference runs
    nodir = os.path.join(d, "norefs")
    os.mkdir(nodir)
    os.link(t("good"), os.path.join(nodir, "good.ompf"))
    rc, out, err = run("evaluate", "-q", "--references", nodir, "--", t("good"))
    check(rc == 2 and "no reference run" in err and "--any-mode" in err, f"no refs in dir: {rc} {err!r}")
    # a non-reference profile named explicitly is refused, naming it and its mode
    for f, mode in (("good", "fused"), ("hem", "hem"), ("partial", "run")):
        rc, out, err = run("evaluate", "-q", "--references", refs[0], refs[1], t(f), "--", t("good"))
        check(rc == 2 and t(f) in err and f"mode '{mode}'" in err and "--any-mode" in err
              and "after '--'" in err and err.count("\n") == 1,
              f"explicit {mode} reference: {rc} {err!r}")
    rc, out, err = run("evaluate", "-q", "--any-mode", "--references", refs[0], refs[1], t("good"),
                       "--", t("shifted"))
    check(rc == 0 and out.startswith("references: 3 profiles"), f"explicit --any-mode: {rc} {err!r}")
    check("--any-mode" in run("evaluate", "--help")[1], "--any-mode in --help")
    # report selects references the same way
    html = os.path.join(d, "r.html")
    p = subprocess.run([ompfuse, "report", "-q", "-o", html, "--references", refs[0], t("hem"),
                        "--", t("good")], capture_output=True, text=True)
    check(p.returncode == 2 and "mode 'hem'" in p.stderr, f"report explicit hem ref: {p.returncode} {p.stderr!r}")

    # per type: one row per pair plus one per type
    rc, out, err = run("evaluate", "-q", "--per-type", "--csv", csvp, "--references", *refs,
                       "--", t("good"))
    rows = list(csv.DictReader(open(csvp)))
    check(rc == 0 and len(rows) == 6 * 3, f"per-type rows {rc} {len(rows)} {err!r}")
    check(sorted({r["type"] for r in rows}) == sorted({"all", *[r["type"] for r in rows if r["type"] != "all"]})
          and len({r["type"] for r in rows}) == 3, "per-type types")
    # type rows carry their uncalibrated TMDs and binned XUs: TMD = median / calibration
    trows = [r for r in rows if r["type"] != "all"]
    check(len(trows) == 12, f"type rows {len(trows)}")
    for row in trows:
        check(row["status"] == "ok" and all(row[f"uncalibrated_{k}"] != "" for k in (1, 2, 3))
              and int(row["binned"]) > 0 and row["tmd_floor"] == "0", f"type row filled: {row}")
        unc = [float(row[f"uncalibrated_{k}"]) for k in (1, 2, 3)]
        tmd = float(row["tmd"])
        check(abs(statistics.median(unc) / float(row["calibration"]) - tmd) <= 1e-12 * tmd,
              f"type tmd = median/cal: {row}")
    allrows = [r for r in rows if r["type"] == "all"]
    for row in allrows:
        b = sum(int(r["binned"]) for r in trows
                if (r["event_a"], r["event_b"]) == (row["event_a"], row["event_b"]))
        check(b == int(row["binned"]), f"binned of types add up to the pair's: {row}")

    # progress through the shared line (include/ompfuse/progress.h): forced
    # with OMPFUSE_PROGRESS=always, off with -q and when stderr is no terminal
    def progress(*args, mode=None):
        env = dict(os.environ)
        env.pop("OMPFUSE_PROGRESS", None)
        if mode:
            env["OMPFUSE_PROGRESS"] = mode
        p = subprocess.run([ompfuse, "evaluate", *args, "--references", *refs, "--",
                            t("good")], capture_output=True, text=True, env=env)
        return p.returncode, p.stderr
    rc, err = progress("--per-type", mode="always")
    check(rc == 0 and "evaluate: binning " + refs[0] + ": " in err and " XUs" in err
          and "evaluate: calibrating: " in err and "evaluate lgl: binning: 500/500 XUs" in err
          and "/6 pairs" in err, f"progress always: {rc} {err!r}")
    rc, err = progress("-q", mode="always")
    check(rc == 0 and "\r" not in err, f"progress -q: {rc} {err!r}")
    rc, err = progress()
    check(rc == 0 and "\r" not in err, f"progress not a terminal: {rc} {err!r}")

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("evaluate CLI: all checks passed")
