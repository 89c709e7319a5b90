#!/usr/bin/python3
"""evaluate --csv gives the same bytes as before histograms were built from
values binned once per XU (issue 20): the CSVs in data/hist_ref_*.csv were
written by the per-pair algorithm (main at aa6fd31) on the same eval_gen
inputs, and every value (calibrations, uncalibrated TMDs, TMDs, left-out
and binned counts, Spearman) must match to the last printed digit.
Cases: all targets with Correlation Error; --per-type; references counting
different event subsets with missing values (pairs with 2 or 3 repeats,
some too few) with --per-type and --bins 7; a larger per-type case.
Cases m1 and m2 have 10^6 XUs (3 references and a target, 4 and 5
events, m2 with event subsets and 3 % missing values): their CSVs were
written by main at 7885831, before evaluate binned chunk by chunk from
the profiles' rows (issue 20).
usage: eval_unchanged_test.py OMPFUSE EVAL_GEN DATA_DIR"""
import os
import subprocess
import sys
import tempfile

ompfuse, gen, data = sys.argv[1:4]
# name: (eval_gen arguments, evaluate options, targets)
CASES = {
    "a1": (["4000", "6", "11"], ["--correlation-error"], ["good", "shifted", "hem"]),
    "a2": (["4000", "6", "11"], ["--per-type"], ["good", "hem"]),
    "b1": (["3000", "8", "12", "gen", "1"], ["--allow-partial", "--per-type", "--bins", "7"],
           ["good", "hem", "partial"]),
    "b2": (["3000", "8", "12", "gen", "1"], ["--allow-partial", "--correlation-error"],
           ["good", "hem"]),
    "c1": (["30000", "12", "13"], ["--per-type", "--correlation-error"], ["good", "hem"]),
    "m1": (["1000000", "4", "14", "gen", "0", "3"], ["--per-type", "--correlation-error"],
           ["good"]),
    "m2": (["1000000", "5", "15", "gen", "1", "3"],
           ["--allow-partial", "--per-type", "--correlation-error", "--bins", "7"], ["good"]),
}
fails = []
with tempfile.TemporaryDirectory() as tmp:
    for name, (gargs, opts, targets) in CASES.items():
        d = os.path.join(tmp, name)
        os.mkdir(d)
        subprocess.run([gen, d, *gargs], check=True)
        out = os.path.join(tmp, name + ".csv")
        refs = [os.path.join(d, f"ref-{r}.ompf") for r in (1, 2, 3)]
        tg = [f"{t}={os.path.join(d, t + '.ompf')}" for t in targets]
        p = subprocess.run([ompfuse, "evaluate", "-q", *opts, "--csv", out,
                            "-r", *refs, "--", *tg], capture_output=True, text=True)
        if p.returncode != 0:
            fails.append(f"{name}: exit {p.returncode}: {p.stderr}")
            continue
        with open(out) as f:
            got = f.read().splitlines()
        with open(os.path.join(data, f"hist_ref_{name}.csv")) as f:
            want = f.read().splitlines()
        if len(got) != len(want):
            fails.append(f"{name}: {len(got)} rows, expected {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                fails.append(f"{name} row {i}:\n  got  {g}\n  want {w}")
                break
for f in fails:
    print("FAIL", f)
sys.exit(1 if fails else 0)
