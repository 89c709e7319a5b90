#!/usr/bin/python3
"""`--events auto` on auto_prog (tasks whose loops run task-dependent,
known numbers of rounds).  Needs root (uprobes); tracefs is mounted by the
sources_mount fixture, and unmounted only inside a private mount namespace.
  choose    plan --events auto:3 chooses 3 events, at least 2 of them
            uprobes; checked independently (numpy) on the check runs'
            profiles: each varies within the construct (CV >= 0.1), no two
            are twins (|Pearson r| of the residuals from the construct mean
            <= 0.98), and each uprobe's count per task label is the same in
            both check runs (deterministic); the slowdown is reported
  campaign  a campaign with the saved choice reuses it and evaluates: the
            best pair (first two chosen) is in different LGL runs and
            scores random >= 5x LGL, and EPD random >= 2x LGL; each
            uprobe's count per task label in the LGL-fused profile equals
            that of every reference run that counted it (exactly: uprobes
            count deterministically, whatever the load)
  notroot   as user nobody: exit 2 and a sentence that says to run as root
  notracefs tracefs unmounted (private namespace): the tool says so and
            chooses without tracepoints; the program exits 3 there: refused
            without --exit-code, chosen with --exit-code 3
Usage: run_auto.py TEST --prog PROG --ompfuse BIN --dump DUMP --workdir DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import scipy.stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_sources import FAILS, check, harness  # noqa: E402

A = None
# few rounds (240 probe hits a run), each long (~1 ms): the probes cost a
# few per cent whether the machine is idle or loaded
ARGS = ["24", "1000000"]


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("OMPFUSE_")}
    e["OMP_NUM_THREADS"] = "2"
    e.update(extra)
    return e


def plan(autodir, extra_cmd=None, want="auto:3", opts=(), **extra_env):
    cmd = [A.ompfuse, "plan", "--events", want, "--slots", "2", "--auto-dir", autodir,
           "-o", os.path.join(autodir, "plan.txt")] + list(opts) + ["--", A.prog] + ARGS
    if extra_cmd:
        cmd = extra_cmd + cmd
    return subprocess.run(cmd, capture_output=True, text=True, env=env(**extra_env))


def chosen(autodir):
    with open(os.path.join(autodir, "events-auto.txt")) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def xus(path, names):
    """{label: [values of names]} of the task XUs of a profile (tool_dump);
    None for a value missing or an event the profile does not count."""
    p = subprocess.run([A.dump, path], capture_output=True, text=True)
    check(p.returncode == 0, "tool_dump %s: %s" % (path, p.stderr))
    events, out = [], {}
    for line in p.stdout.splitlines():
        f = line.split(" ")
        if f[0] == "event":
            events.append(f[1])
        elif f[0] == "xu" and f[2] == "task":
            # the construct's name may hold spaces (a fused profile's is
            # symbolized): the values are the last fields
            vals = [None if v == "NA" else float(v) for v in f[len(f) - len(events):]]
            out[f[1]] = [vals[events.index(n)] if n in events else None for n in names]
    return out


def fresh(name):
    d = os.path.join(A.workdir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def t_choose():
    d = fresh("choose")
    r = plan(d)
    print(r.stderr)
    if not check(r.returncode == 0, "plan --events auto:3: exit %d" % r.returncode):
        return
    ev = chosen(d)
    check(len(ev) == 3, "chose %s, not 3 events" % ev)
    up = [e for e in ev if e.startswith("uprobe:")]
    check(len(up) >= 2, "fewer than 2 uprobes among %s" % ev)
    check("chosen (3):" in r.stderr, "the choice is not printed")
    check("rejected (" in r.stderr, "the rejected candidates are not printed")
    m = re.search(r"measured: ([0-9.]+) s with the chosen set vs ([0-9.]+) s = ([-+0-9.]+)% "
                  r"slowdown", r.stderr)
    check(m is not None, "no measured slowdown in the output")
    with open(os.path.join(d, "plan.txt")) as f:
        text = f.read()
    for e in ev:
        check(e in text, "the plan does not use %s" % e)
    # the check runs: line 2 of auto-pilot/check, two repeats
    runs = [os.path.join(d, "auto-pilot", "check", "reference-2-r%d.ompf" % k) for k in (1, 2)]
    got = [xus(p, ev) for p in runs]
    if not check(all(len(g) == 24 for g in got), "task XUs per check run: %s" %
                 [len(g) for g in got]):
        return
    labels = sorted(got[0])
    check(sorted(got[1]) == labels, "the check runs have different task labels")
    x = np.array([got[0][l] for l in labels], dtype=float)
    # uprobes count deterministically: their variation must show in any run
    # (the others vary by chance; they are only checked for twins)
    for j, e in enumerate(ev):
        col = x[:, j]
        if not e.startswith("uprobe:"):
            continue
        cv = col.std() / col.mean() if col.mean() > 0 else 0
        check(cv >= 0.1, "%s: CV %.3f across the tasks" % (e, cv))
        check(np.count_nonzero(col) >= 0.05 * len(col), "%s fires in too few XUs" % e)
    # twins: the same quantity up to scale and offset (|Pearson r| > 0.98;
    # one construct, so the residuals are the values minus their mean)
    for j in range(len(ev)):
        for k in range(j + 1, len(ev)):
            if x[:, j].std() == 0 or x[:, k].std() == 0:
                continue
            rr = scipy.stats.pearsonr(x[:, j], x[:, k])[0]
            check(abs(rr) <= 0.98, "%s and %s are twins: r = %.3f" % (ev[j], ev[k], rr))
    for j, e in enumerate(ev):
        if e.startswith("uprobe:"):
            check(all(got[0][l][j] == got[1][l][j] for l in labels),
                  "%s: per-label counts differ between the check runs" % e)


def t_campaign():
    d = fresh("campaign")
    src = os.path.join(A.workdir, "choose")
    if not check(os.path.exists(os.path.join(src, "events-auto.txt")),
                 "sources_auto_choose left no choice to reuse"):
        return
    os.makedirs(os.path.join(d, "auto_prog"))
    shutil.copy(os.path.join(src, "events-auto.txt"), os.path.join(d, "auto_prog"))
    r = subprocess.run([A.ompfuse, "campaign", "--out", d, "--events", "auto:3", "--quick",
                        "--", A.prog] + ARGS, capture_output=True, text=True, env=env())
    print(r.stdout, r.stderr[-3000:])
    check(r.returncode == 0, "campaign --events auto: exit %d" % r.returncode)
    check("using the 3 events chosen before" in r.stderr, "the saved choice was not reused")
    tsv = os.path.join(d, "epd.tsv")
    if check(os.path.exists(tsv), "no epd.tsv"):
        with open(tsv) as f:
            head, row = f.readline().split("\t"), f.readline().split("\t")
        lgl = row[head.index("lgl")]
        check(lgl != "-" and float(lgl) >= 0, "no LGL EPD: %s" % row)
    # the best pair of the choice (its first two events, which depend on
    # each other between runs, dealt into different LGL runs): LGL brings
    # each task's counts together exactly, the random control cannot
    ev = chosen(os.path.join(d, "auto_prog"))
    check(len(ev) == 3 and any(e.startswith("uprobe:") for e in ev[:2]),
          "the best pair has no uprobe: %s" % ev)
    check("in the order of the plan" in r.stderr, "the order of the plan is not printed")
    with open(os.path.join(d, "auto_prog", "plan.txt")) as f:
        lgl_sets = [set(l.split()[2].split(",")) for l in f if l.startswith("lgl ")]
    check(not any(set(ev[:2]) <= s for s in lgl_sets),
          "the best pair %s shares an LGL run: %s" % (ev[:2], lgl_sets))
    tmd, epd = {}, {}
    with open(os.path.join(d, "auto_prog", "evaluate.txt")) as f:
        target = None
        for line in f:
            if not line.startswith(" "):
                target = line.split(" ")[0]
                if target in ("lgl", "random"):
                    epd[target] = float(line.split()[1])
            elif "worst pairs:" in line and target in ("lgl", "random"):
                for item in line.split("worst pairs:")[1].split(";"):
                    pair, val = item.strip().rsplit(" ", 1)
                    if set(pair.split(",")) == set(ev[:2]):
                        tmd[target] = float(val)
    before = len(FAILS)
    if check(len(tmd) == 2, "no TMD of the best pair: %s" % tmd):
        check(tmd["random"] >= 5 * tmd["lgl"],
              "best pair: random %.3g is not far above LGL %.3g" % (tmd["random"], tmd["lgl"]))
    if check(len(epd) == 2, "no EPD of lgl and random: %s" % epd):
        check(epd["random"] >= 2 * epd["lgl"],
              "EPD: random %.3g is not 2x LGL %.3g" % (epd["random"], epd["lgl"]))
    exact_uprobes(os.path.join(d, "auto_prog"), ev)
    if len(FAILS) > before:
        # what a failure on a loaded machine needs to be understood later
        with open(os.path.join(d, "auto_prog", "evaluate.txt")) as f:
            print("evaluate.txt:\n" + f.read())
        with open("/proc/loadavg") as f:
            print("chosen: %s; load average %s" % (ev, f.read().strip()))


def exact_uprobes(rundir, ev):
    """LGL joins on labels, and a uprobe counts the same in every run for
    the same task: the fused profile's count of each chosen uprobe per
    label must equal each reference run's that counted it."""
    ups = [e for e in ev if e.startswith("uprobe:")]
    fused = xus(os.path.join(rundir, "fused-lgl.ompf"), ups)
    check(len(fused) == 24, "LGL fused %d task XUs, not 24" % len(fused))
    seen = {e: 0 for e in ups}
    for name in sorted(os.listdir(rundir)):
        if not (name.startswith("reference-") and name.endswith(".ompf")):
            continue
        ref = xus(os.path.join(rundir, name), ups)
        for j, e in enumerate(ups):
            got = {l: v[j] for l, v in ref.items() if v[j] is not None}
            if not got:
                continue
            seen[e] += 1
            bad = [l for l in got if l not in fused or fused[l][j] != got[l]]
            check(not bad, "%s: LGL's counts differ from %s for labels %s (fused %s, "
                  "reference %s)" % (e, name, bad[:3], [fused.get(l, [None] * len(ups))[j]
                                                          for l in bad[:3]],
                                     [got[l] for l in bad[:3]]))
    for e in ups:
        check(seen[e] > 0, "%s: no reference run counted it" % e)


def t_notroot():
    d = tempfile.mkdtemp(prefix="ompf-auto-")
    os.chmod(d, 0o777)
    try:
        r = plan(os.path.join(d, "a"), ["setpriv", "--reuid=65534", "--regid=65534",
                                        "--clear-groups"])
        print(r.stderr)
        check(r.returncode == 2, "as nobody: exit %d, expected 2" % r.returncode)
        check("root" in r.stderr and "--events LIST" in r.stderr,
              "the message does not say to run as root or name the events: %s" % r.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def t_notracefs():
    d = fresh("notracefs")
    # and a program that ends with exit code 3: refused without --exit-code,
    # chosen with it (the rate pilot and the XU pilot both take it)
    r = plan(d, AUTO_EXIT="3")
    check(r.returncode == 2 and "fails without the tool" in r.stderr
          and "give --exit-code 3" in r.stderr
          and not os.path.exists(os.path.join(d, "events-auto.txt")),
          "exit 3 without --exit-code: exit %d, %s" % (r.returncode, r.stderr[-300:]))
    r = plan(d, ["unshare", "-m", "--propagation", "private", "sh", "-c",
                 "umount /sys/kernel/tracing 2>/dev/null || true; exec \"$@\"", "sh"],
             opts=["--exit-code", "3"], AUTO_EXIT="3")
    print(r.stderr)
    check(r.returncode == 0, "without tracefs, --exit-code 3: exit %d" % r.returncode)
    check("tracefs is not mounted" in r.stderr, "no word that tracefs is not mounted")
    ev = chosen(d) if r.returncode == 0 else []
    check(ev and not any(":" in e and not e.startswith(("uprobe:", "perf::")) for e in ev),
          "a tracepoint was chosen without tracefs: %s" % ev)
    check(os.path.isdir("/sys/kernel/tracing/events"), "tracefs was unmounted outside")


if __name__ == "__main__":
    sys.exit(harness(globals(), ("prog", "ompfuse", "dump", "workdir"),
                     "uprobes, setpriv, mount namespaces"))
