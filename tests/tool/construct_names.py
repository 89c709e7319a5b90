#!/usr/bin/python3
"""One name per construct (docs/format.md, "Construct key"): every command
prints the same key for the same construct, and the FFT pattern (tasks
created in a recursive static helper called from a task, -O2, sibling
calls on: tests/programs/fft_tasks.c) resolves to 'file:line function' or,
where the line table says line 0, to 'function (module+0xOFFSET)'.

Runs prog_fft_tasks under the tool (one run per event, two reference
runs), then show, export --csv, combine, evaluate --per-type --csv and
report --per-type, and compares the construct keys each prints.

usage: construct_names.py --tool SO --ompfuse BIN --prog PROG --workdir DIR"""
import argparse
import csv
import html
import io
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_tests import check  # noqa: E402  (one failure list)
from xu_inside import verdict  # noqa: E402


def sh(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, timeout=120,
                       **kw)
    check(r.returncode == 0, "%s: rc %d: %s" % (" ".join(args[:2]),
                                                 r.returncode, r.stderr))
    return r.stdout


def record(a, out, events, mode="run"):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OMPFUSE_") and k != "OMP_TOOL_LIBRARIES"}
    env.update(OMP_TOOL_LIBRARIES=a.tool, OMPFUSE_OUTPUT=out,
               OMPFUSE_EVENTS=events, OMPFUSE_MODE=mode, OMP_NUM_THREADS="2")
    sh([a.prog], env=env)


SHOW_ROW = re.compile(r"^\s+\d+\s+\S+\s+(.*?)( \(unresolved\))?\s+(\d+) XUs$")


def show_keys(a, path, *opts):
    """Keys of the constructs that have XUs, from `show`."""
    keys = set()
    for line in sh([a.ompfuse, "show", *opts, path]).splitlines():
        m = SHOW_ROW.match(line)
        if m and int(m.group(3)) > 0:
            keys.add(m.group(1))
    return keys


def main():
    ap = argparse.ArgumentParser()
    for o in ("--tool", "--ompfuse", "--prog", "--workdir"):
        ap.add_argument(o, required=True)
    a = ap.parse_args()
    w = a.workdir
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(os.path.join(w, "refs"))
    A, B, F = (os.path.join(w, n) for n in ("a.ompf", "b.ompf", "f.ompf"))
    record(a, A, "perf::TASK-CLOCK")
    record(a, B, "perf::CPU-CLOCK")
    for i in range(2):
        record(a, os.path.join(w, "refs", "r%d.ompf" % i),
               "perf::TASK-CLOCK,perf::CPU-CLOCK", "reference")

    outputs = {}
    outputs["show"] = show_keys(a, A)
    rows = csv.DictReader(io.StringIO(sh([a.ompfuse, "export", "--csv", A])))
    outputs["export --csv"] = {r["type"] for r in rows}
    comb = sh([a.ompfuse, "combine", "--strategy", "lgl", "-o", F, A, B])
    part = comb.split("types:", 1)[-1].split("fused XUs:", 1)[0]
    outputs["combine"] = {m.group(1) for m in re.finditer(
        r"^  (.*?)\s+\d+  unmatched", part, re.M)}
    outputs["show (fused)"] = show_keys(a, F)
    ecsv = os.path.join(w, "e.csv")
    sh([a.ompfuse, "evaluate", "--per-type", "--csv", ecsv, "-r",
        os.path.join(w, "refs"), "--", F])
    with open(ecsv) as f:
        outputs["evaluate --per-type"] = {r["type"] for r in csv.DictReader(f)
                                          if r["type"] != "all"}
    rep = os.path.join(w, "r.html")
    sh([a.ompfuse, "report", "--per-type", "-o", rep, "-r",
        os.path.join(w, "refs"), "--", F])
    with open(rep) as f:
        outputs["report --per-type"] = {html.unescape(k) for k in re.findall(
            r'class="construct">([^<]*)<', f.read())}

    keys = outputs["show"]
    for name, ks in sorted(outputs.items()):
        print("%-20s %s" % (name, sorted(ks)))
        check(ks == keys, "%s prints %s, show prints %s" % (
            name, sorted(ks), sorted(keys)))

    # every key resolved: file:line function, or function (module+0x...)
    prog = os.path.basename(a.prog)
    line_re = re.compile(r"^\S+\.c:\d+ \S+$")
    fn_re = re.compile(r"^\S+ \(%s\+0x[0-9a-f]+\)$" % re.escape(prog))
    for k in keys:
        check(line_re.match(k) or fn_re.match(k),
              "construct %r is neither 'file:line function' nor "
              "'function (%s+0x...)'" % (k, prog))
    helper = [k for k in keys if "fft_aux" in k]
    check(len(helper) == 2, "expected the helper's 2 task constructs: %s" %
          sorted(keys))
    check(any(fn_re.match(k) for k in helper),
          "no helper construct at line 0 (function only): %s; the compiler "
          "no longer merges the two call tails of fft_tasks.c?" % helper)
    # without resolution they are addresses (so the above is resolution's)
    raw = show_keys(a, A, "--no-resolve")
    check(raw and all(re.match(r"^%s\+0x[0-9a-f]+$" % re.escape(prog), k)
                      for k in raw),
          "show --no-resolve: %s" % sorted(raw))
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
