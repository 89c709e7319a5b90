#!/usr/bin/python3
"""`ompfuse run` into a directory that already holds runs keeps the
complete ones (the resume rule); they must be runs of this campaign, or
they would be fused as runs of this command.  Each of these is refused
with exit 2, one message naming what differs and what to do, and the
directory left as it was (every file's bytes, no run started):

  - another program command (other arguments);
  - another OpenMP environment: OMP_NUM_THREADS changed, OMP_SCHEDULE
    added, a --env setting that overrides the environment, and
    `--resume DIR` from a changed environment;
  - another plan whose run of the same name counts other events, and a
    plan that lacks a run already made.

A plan that only adds runs is accepted (the new runs are made, the old
ones kept), as is the same command again and `--resume` in the same
environment.

`ompfuse campaign` into the directory of another campaign (other
arguments, program, repeats, events or benchmarks; DIR/campaign.txt) is
refused the same way, before anything is written; the same settings with
other --jobs and --timeout resume it.

usage: test_same_campaign.py OMPFUSE FAKEPROG
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

from fakecampaign import check, failures, log_entries

OMPFUSE, FAKE = (os.path.abspath(a) for a in sys.argv[1:3])


def starts(log):
    """Runs fakeprog started, by name."""
    return collections.Counter({n: k for (w, n), k in log_entries(log).items() if w == "start"})


def snapshot(d):
    return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))
            if not f.startswith(".ompfuse-lock")}


def tree(d):
    """Every file under d with its bytes (the lock aside)."""
    out = {}
    for root, _dirs, files in os.walk(d):
        for f in files:
            if not f.startswith(".ompfuse-lock"):
                p = os.path.join(root, f)
                out[os.path.relpath(p, d)] = open(p, "rb").read()
    return out


def campaign_part(tmp, base, log):
    """`ompfuse campaign` into a directory of another campaign: refused
    before anything is written (other arguments, another program, other
    repeats or events, other benchmarks); the same settings resume, also
    with another --jobs or --timeout."""
    def camp(args, cwd=tmp):
        r = subprocess.run([OMPFUSE, "campaign", "--out", "camp", "--quick"] + args, cwd=cwd,
                           env=base, capture_output=True, text=True, timeout=300)
        print("     $ ompfuse campaign --out camp --quick %s -> %d" % (" ".join(args),
                                                                    r.returncode))
        for l in r.stderr.splitlines()[-3:]:
            print("     | " + l)
        return r
    d = os.path.join(tmp, "camp")
    r = camp(["--", "./prog", "x"])
    check(r.returncode == 0 and os.path.exists(os.path.join(d, "report.html")),
          "campaign: exit 0, its report written")
    settings = open(os.path.join(d, "campaign.txt")).read()
    check("directory %s\nprogram %s/prog\narg x\n" % (tmp, tmp) in settings
          and "repeats 2\n" in settings, "campaign.txt: %r" % settings)
    shutil.copy(FAKE, os.path.join(tmp, "prog2"))
    cases = [
        ("other arguments", ["--", "./prog", "y"], "'arg x' there, 'arg y' here"),
        ("another program", ["--", "./prog2", "x"],
         "'program %s/prog' there, 'program %s/prog2' here" % (tmp, tmp)),
        ("an argument more", ["--", "./prog", "x", "z"], "'arg z' only here"),
        ("other repeats", ["--repeats", "3", "--", "./prog", "x"],
         "'repeats 2' there, 'repeats 3' here"),
        ("other events", ["--events", "perf::TASK-CLOCK,perf::CPU-CLOCK", "--",
                          "./prog", "x"], "'events perf::TASK-CLOCK,perf::PAGE-FAULTS,"),
        ("the bundled benchmarks", ["--benchmarks", "knapsack"],
         "'exit-code 0' there, 'benchmarks knapsack' here"),
    ]
    for what, args, words in cases:
        before, logged = tree(d), starts(log)
        r = camp(args)
        check(r.returncode == 2 and "holds a campaign with other settings" in r.stderr
              and words in r.stderr and "campaign.txt" in r.stderr,
              "campaign, %s: exit 2 naming %r" % (what, words))
        check(tree(d) == before and starts(log) == logged,
              "campaign, %s: nothing in the directory changed, nothing ran" % what)
    # a campaign that made no run (its program failed the plain run) may
    # be run again corrected, with other settings, in its directory
    def camp2(args, **extra):
        r = subprocess.run([OMPFUSE, "campaign", "--out", "camp2", "--quick"] + args, cwd=tmp,
                           env=dict(base, **extra), capture_output=True, text=True,
                           timeout=300)
        print("     $ ompfuse campaign --out camp2 --quick %s -> %d" % (" ".join(args),
                                                                     r.returncode))
        return r
    r = camp2(["--", "./prog", "typo"], FAKE_PLAIN_FAIL="1")
    check(r.returncode == 2 and "even without the tool" in r.stderr,
          "campaign whose plain run fails: exit 2 (%d)" % r.returncode)
    r = camp2(["--", "./prog", "x"])
    check(r.returncode == 0 and "arg x" in open(os.path.join(tmp, "camp2", "campaign.txt")).read(),
          "the corrected campaign in the directory of one that made no run: exit 0 (%d %s)" %
          (r.returncode, r.stderr[-300:]))
    logged = starts(log)
    r = camp(["--jobs", "2", "--timeout", "60", "--", "./prog", "x"])
    check(r.returncode == 0 and "19 ok (19 kept)" in r.stdout
          and not (starts(log) - logged) - collections.Counter({"plain": 1}),
          "campaign again with other --jobs and --timeout: exit 0, its runs kept")


def main():
    tmp = tempfile.mkdtemp(prefix="ompf-same-")
    log = os.path.join(tmp, "fake.log")
    base = dict(os.environ, FAKE_LOG=log, OMPFUSE_TOOL=FAKE)
    for k in list(base):
        if k.startswith(("OMP_", "KMP_", "FAKE_FAIL", "OMPFUSE_PMU")):
            del base[k]
    base["OMP_NUM_THREADS"] = "2"
    shutil.copy(FAKE, os.path.join(tmp, "prog"))
    plans = {
        "a": "# slots: 2\nlgl 1 perf::TASK-CLOCK\nlgl 1 perf::CPU-CLOCK\n",
        "other": "# slots: 2\nlgl 1 perf::TASK-CLOCK,perf::PAGE-FAULTS\nlgl 1 perf::CPU-CLOCK\n",
        "more": "# slots: 2\nlgl 1 perf::TASK-CLOCK\nlgl 1 perf::CPU-CLOCK\n"
                "reference 1 perf::TASK-CLOCK,perf::CPU-CLOCK\n",
    }
    for k, v in plans.items():
        open(os.path.join(tmp, k + ".plan"), "w").write(v)
    d = os.path.join(tmp, "runs")

    def run(args, env=None, **extra):
        e = dict(env or base, **extra)
        r = subprocess.run([OMPFUSE, "run"] + args, cwd=tmp, env=e, capture_output=True,
                           text=True, timeout=120)
        print("     $ ompfuse run %s -> %d" % (" ".join(args), r.returncode))
        for l in r.stderr.splitlines():
            print("     | " + l)
        return r

    cmd = lambda plan, *prog: ["--plan", plan + ".plan", "--out", "runs", "--", "./prog"] + \
        list(prog or ["x"])
    r = run(cmd("a"))
    check(r.returncode == 0 and os.path.exists(os.path.join(d, "lgl-2-r1.ompf")),
          "first campaign: exit 0, its runs made")
    envf = os.path.join(d, "run.env")
    check(os.path.exists(envf) and open(envf).read() == "OMP_NUM_THREADS=2\n",
          "run.env records the runs' OpenMP environment")

    def refused(r, what, *words):
        ok = r.returncode == 2 and all(w in r.stderr for w in words) and \
            len(r.stderr.strip().splitlines()) == 1
        check(ok, "%s: exit 2, one line naming %s" % (what, words))

    cases = [
        ("other arguments", cmd("a", "y"), {},
         ("another command", "'./prog x'", "'./prog y'", "--resume")),
        ("OMP_NUM_THREADS changed", cmd("a"), {"OMP_NUM_THREADS": "1"},
         ("OpenMP environment", "OMP_NUM_THREADS '1' now, '2' then", "run.env")),
        ("OMP_SCHEDULE added", cmd("a"), {"OMP_SCHEDULE": "static"},
         ("OMP_SCHEDULE 'static' now, unset then",)),
        ("--env overrides the environment", ["--env", "OMP_NUM_THREADS=3"] + cmd("a"), {},
         ("OMP_NUM_THREADS '3' now, '2' then",)),
        ("a plan counting other events", cmd("other"), {},
         ("another plan", "lgl-1-r1.ompf", "perf::TASK-CLOCK,perf::PAGE-FAULTS", "--resume")),
        ("--resume in another environment", ["--resume", "runs"], {"OMP_NUM_THREADS": "4"},
         ("OMP_NUM_THREADS '4' now, '2' then",)),
    ]
    for what, args, extra, words in cases:
        before, logged = snapshot(d), starts(log)
        r = run(args, **extra)
        refused(r, what, *words)
        check(snapshot(d) == before and starts(log) == logged,
              "%s: nothing in the directory changed, nothing ran" % what)

    logged = starts(log)
    r = run(cmd("more"))
    ran = starts(log) - logged
    check(r.returncode == 0 and ran == collections.Counter({"reference-3-r1": 1, "plain": 1}),
          "a plan that adds runs: exit 0, only the new run made (%s)" % dict(ran))
    before = snapshot(d)
    r = run(cmd("a"))
    refused(r, "a plan without a run already made", "another plan", "reference-3-r1.ompf")
    check(snapshot(d) == before, "a plan without a run already made: nothing changed")
    logged = starts(log)
    r = run(cmd("more"))
    check(r.returncode == 0 and "3 already complete (kept), 0 to run" in r.stderr and
          not (starts(log) - logged) - collections.Counter({"plain": 1}),
          "the same command again: exit 0, everything kept, no run made")
    r = run(["--resume", "runs"])
    check(r.returncode == 0 and "already complete" in r.stderr,
          "--resume in the same environment: exit 0")

    # long lines: a plan line of 150 events (> 4 KiB joined) and an OpenMP
    # environment over 8 KiB (an explicit OMP_PLACES) are still "the same"
    long_plan = "# slots: 200\nlgl 1 " + ",".join(
        "perf::EVENT-WITH-A-RATHER-LONG-NAME-%03d" % i for i in range(150)) + "\n"
    open(os.path.join(tmp, "long.plan"), "w").write(long_plan)
    places = ",".join("{%d}" % i for i in range(2000))
    for attempt in ("first", "again"):
        r = run(["--plan", "long.plan", "--out", "long", "--", "./prog", "x"],
                OMP_PLACES=places)
        check(r.returncode == 0, "long event list and OMP_PLACES, %s: exit %d" %
              (attempt, r.returncode))
    check("1 already complete (kept)" in r.stderr, "long lines: the run is kept")

    campaign_part(tmp, base, log)

    print("files kept in %s" % tmp if failures else "passed")
    if not failures:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
