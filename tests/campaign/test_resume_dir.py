#!/usr/bin/python3
"""`ompfuse run --resume DIR` with the local launcher: the saved command
(DIR/run.args, DIR/plan.txt) is repeated from where it first ran.

  - a campaign started with relative paths, one run failing, exits 1 and
    leaves run.args and a plan snapshot;
  - with the plan file deleted and from another directory, `--resume DIR`
    re-runs exactly the failed run (fakeprog's log) and exits 0;
  - a second resume runs nothing; --resume on a directory without run.args,
    --resume with --plan, and --cancel on a local campaign exit 2 with one
    clear line.

usage: test_resume_dir.py OMPFUSE FAKEPROG
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

OMPFUSE, FAKE = (os.path.abspath(a) for a in sys.argv[1:3])
failures = []

PLAN = """# slots: 2
lgl 1 perf::TASK-CLOCK
lgl 1 perf::CPU-CLOCK
reference 2 perf::TASK-CLOCK,perf::CPU-CLOCK
"""


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(args, cwd, env):
    r = subprocess.run([OMPFUSE, "run"] + args, cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=120)
    print("     $ (cd %s; ompfuse run %s) -> %d" % (cwd, " ".join(args), r.returncode))
    for l in r.stderr.splitlines():
        print("     | " + l)
    return r


def starts(log):
    c = collections.Counter()
    if os.path.exists(log):
        for l in open(log):
            if l.startswith("start "):
                c[l.split()[1]] += 1
    return c


def main():
    tmp = tempfile.mkdtemp(prefix="ompf-resume-")
    work, other = os.path.join(tmp, "work"), os.path.join(tmp, "other")
    os.makedirs(work)
    os.makedirs(other)
    shutil.copy(FAKE, os.path.join(work, "prog"))
    open(os.path.join(work, "p.plan"), "w").write(PLAN)
    log = os.path.join(tmp, "fake.log")
    env = dict(os.environ, FAKE_LOG=log, FAKE_FAIL="lgl-2-r1")
    for k in ("OMPFUSE_PMU_SLOTS", "OMP_TOOL_LIBRARIES"):
        env.pop(k, None)
    env.setdefault("OMPFUSE_TOOL", FAKE)  # any readable file: fakeprog ignores it
    r = run(["--plan", "p.plan", "--out", "runs", "--", "./prog", "a b"], work, env)
    d = os.path.join(work, "runs")
    check(r.returncode == 1, "first attempt: one run fails, exit 1")
    check(os.path.exists(os.path.join(d, "run.args")) and
          open(os.path.join(d, "plan.txt")).read().count("\n") >= 3,
          "run.args and the plan snapshot plan.txt are written")
    os.unlink(os.path.join(work, "p.plan"))
    env.pop("FAKE_FAIL")
    before = starts(log)
    r = run(["--resume", d], other, env)
    after = starts(log)
    ran = after - before
    check(r.returncode == 0, "resume from another directory, plan file deleted: exit 0")
    check(ran == collections.Counter({"lgl-2-r1": 1, "plain": 1}),
          "resume re-ran the failed run only (and the plain check): %s" % dict(ran))
    check("3 already complete (kept), 1 to run" in r.stderr, "resume says what it kept")
    rows = [l.split("\t") for l in open(os.path.join(d, "manifest.tsv")) if l[0] != "#"]
    check([x[4] for x in rows] == ["ok"] * 4, "manifest: all ok")
    r = run(["--resume", "runs"], work, env)
    check(r.returncode == 0 and starts(log) == after, "a complete campaign: nothing runs")
    r = run(["--resume", other], work, env)
    check(r.returncode == 2 and "run.args" in r.stderr and len(r.stderr.splitlines()) == 1,
          "--resume on a directory that is no campaign: exit 2, one line naming run.args")
    r = run(["--resume", d, "--plan", "x"], work, env)
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1, "--resume with --plan: exit 2")
    r = run(["--resume", d, "--cancel"], work, env)
    check(r.returncode == 2 and "locally" in r.stderr, "--cancel on a local campaign: exit 2")
    if failures:
        print("files kept in %s" % tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print("FAILED (%d)" % len(failures) if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
