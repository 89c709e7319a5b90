#!/usr/bin/python3
"""The Slurm launcher, `ompfuse run --launcher slurm`, on a private
single-node cluster (cluster.py).

  same    the real tool and cg: the Slurm campaign's manifest (index, role,
          repeat, events, status, profile) equals the local launcher's, every
          profile has the same label multiset and role as its local twin, the
          manifest and progress name the node, jobs.tsv lists the plain-run
          job and the array
  resume  fakeprog (logs every start and end): --no-wait returns at once; with
          run 2 running, scancel it and the pending runs 5 and 6; then
          `ompfuse run --resume DIR` resubmits exactly those three, waits,
          and every run has ended exactly once (2 started twice), the plain
          run ran once
  plain   the program fails without the tool: exit 2 naming the failure, no
          planned run started, nothing of the campaign left in the queue; an
          array of 1001 runs that sbatch refuses: exit 1 with sbatch's reason
          and the MaxArraySize hint, the plain-run job cancelled
  cancel  --no-wait, then `--resume DIR --cancel` while run 1 runs: exit 1,
          run 1 interrupted, the others pending, the queue empty

usage: test_launcher.py PART OMPFUSE TOOL CG FAKEPROG   (exit 77: no Slurm)
"""
import collections
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from checks import check, failures, manifest  # noqa: E402

PART = sys.argv[1]
OMPFUSE, TOOL, CG, FAKE = (os.path.abspath(a) for a in sys.argv[2:6])

PLAN4 = """# slots: 2
lgl 1 perf::TASK-CLOCK,perf::CPU-CLOCK
lgl 1 perf::PAGE-FAULTS,perf::MINOR-FAULTS
reference 2 perf::TASK-CLOCK,perf::PAGE-FAULTS
"""
PLAN6 = """# slots: 2
lgl 1 perf::TASK-CLOCK
lgl 1 perf::CPU-CLOCK
reference 4 perf::TASK-CLOCK,perf::CPU-CLOCK
"""


def labels(path):
    r = subprocess.run([OMPFUSE, "export", "--csv", "--no-resolve", path],
                       capture_output=True, text=True, timeout=60)
    return collections.Counter(row["label"] for row in csv.DictReader(io.StringIO(r.stdout)))


def meta(path):
    s = subprocess.run([OMPFUSE, "show", path], capture_output=True, text=True,
                       timeout=30).stdout
    m = {}
    for l in s.splitlines():
        p = l.split(None, 1)
        if len(p) == 2:
            m.setdefault(p[0], p[1].strip())
    return m


def ompfuse_run(env, args, timeout=180):
    t0 = time.time()
    r = subprocess.run([OMPFUSE, "run"] + args, env=env, capture_output=True, text=True,
                       timeout=timeout)
    print("     $ ompfuse run %s  -> %d in %.1f s" % (" ".join(args), r.returncode,
                                                     time.time() - t0), flush=True)
    for l in r.stderr.splitlines():
        print("     | " + l)
    return r


def jobs(d):
    return [l.split("\t") for l in open(os.path.join(d, "slurm", "jobs.tsv")).read().splitlines()]


def part_same(c, tmp):
    plan = os.path.join(tmp, "p4.plan")
    open(plan, "w").write(PLAN4)
    env = dict(c.env, OMP_NUM_THREADS="2", OMPFUSE_TOOL=TOOL)
    env.pop("OMPFUSE_PMU_SLOTS", None)
    local, sl = os.path.join(tmp, "local"), os.path.join(tmp, "sl")
    r = ompfuse_run(env, ["--plan", plan, "--out", local, "--", CG, "S"])
    check(r.returncode == 0, "local launcher: all runs ok")
    r = ompfuse_run(env, ["--launcher", "slurm", "--poll", "0.3", "--plan", plan,
                          "--out", sl, "--", CG, "S"])
    check(r.returncode == 0, "slurm launcher: exit 0")
    check("submitted job array" in r.stderr and "on %s" % c.hostname in r.stderr,
          "progress names the array and the node")
    lrows, srows = manifest(local), manifest(sl)
    key = lambda x: (x["index"], x["role"], x["repeat"], x["events"], x["status"], x["profile"])
    check([key(x) for x in srows] == [key(x) for x in lrows],
          "same manifest rows (index, role, repeat, events, status, profile) as local: %s"
          % [key(x) for x in srows])
    check(all(x["node"] == c.hostname for x in srows),
          "the manifest names the node of every run: %s" % [x["node"] for x in srows])
    for x in lrows:
        a, b = os.path.join(local, x["profile"]), os.path.join(sl, x["profile"])
        la, lb = labels(a), labels(b)
        ma, mb = meta(a), meta(b)
        check(la == lb and len(la) > 0 and ma.get("role") == mb.get("role") == x["role"],
              "%s: same %d labels and role %s as the local run" % (x["profile"], sum(la.values()),
                                                                  mb.get("role")))
        check(mb.get("hostname") == c.hostname and mb.get("cpu_model") and mb.get("kernel"),
              "%s records node, CPU model and kernel" % x["profile"])
    j = jobs(sl)
    check([x[1] for x in j] == ["plain", "array"] and j[1][2] == "1-4",
          "jobs.tsv: the plain run, then one array of indices 1-4: %s" % j)
    # nothing left to do: a resume submits nothing and exits 0
    r = ompfuse_run(env, ["--resume", sl])
    check(r.returncode == 0 and "4 already complete (kept), 0 to run" in r.stderr
          and len(jobs(sl)) == 2, "resume of a complete campaign submits nothing")


def task_of(d):
    arr = [x for x in jobs(d) if x[1] == "array"]
    return arr[-1][0]


def part_resume(c, tmp):
    plan = os.path.join(tmp, "p6.plan")
    open(plan, "w").write(PLAN6)
    log = os.path.join(tmp, "fake.log")
    d = os.path.join(tmp, "res")
    env = dict(c.env, FAKE_LOG=log, FAKE_SLEEP_MS="1500", OMPFUSE_TOOL=TOOL)
    # run 2's first attempt holds until it is cancelled (the resume runs
    # without FAKE_HANG): "2 running, 3-6 queued" rests on no timing
    r = ompfuse_run(dict(env, FAKE_HANG="lgl-2-r1"),
                    ["--launcher", "slurm", "--no-wait", "--plan", plan, "--out", d,
                     "--", FAKE, "x"])
    check(r.returncode == 0 and "not waiting" in r.stderr, "--no-wait submits and returns")
    # only `ompfuse run` records results: had it waited, rows would be
    # done (no wall-time bound, which a loaded machine stretches)
    check(all(x["status"] == "pending" for x in manifest(d)), "manifest: all pending")
    job = task_of(d)
    start2 = os.path.join(d, "slurm", "tasks", "2.start")
    t0 = time.time()
    while not os.path.exists(start2):
        if time.time() - t0 > 60:
            raise cluster.ClusterError("run 2 never started:\n" + c.run(["squeue", "-r"]).stdout)
        time.sleep(0.05)
    time.sleep(0.3)
    q = c.run(["squeue", "-h", "-r", "-j", job, "-o", "%K %T"]).stdout
    st = dict(l.split() for l in q.splitlines())
    check(st.get("2") == "RUNNING" and all(st.get(str(i)) == "PENDING" for i in (3, 4, 5, 6)),
          "midway: run 2 running, 3-6 queued: %s" % st)
    c.run(["scancel", "%s_2" % job, "%s_5" % job, "%s_6" % job])
    time.sleep(0.5)
    # the resume holds DIR's lock while it waits (the array tasks run
    # regardless); a second submitter on DIR meanwhile refuses
    args = ["--resume", d, "--poll", "0.3"]
    t0 = time.time()
    p = subprocess.Popen([OMPFUSE, "run"] + args, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    lockf = os.path.join(d, ".ompfuse-lock")
    while time.time() - t0 < 30 and p.poll() is None:
        try:
            if open(lockf).read().startswith("%d\t" % p.pid):
                break
        except OSError:
            pass
        time.sleep(0.05)
    r2 = ompfuse_run(env, ["--resume", d])
    check(r2.returncode == 2 and "in use by another campaign" in r2.stderr
          and "pid %d" % p.pid in r2.stderr,
          "a second submitter on DIR while the first waits: exit 2, naming the first")
    out, err = p.communicate(timeout=180)
    r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    print("     $ ompfuse run %s  -> %d in %.1f s" % (" ".join(args), r.returncode,
                                                     time.time() - t0), flush=True)
    for l in r.stderr.splitlines():
        print("     | " + l)
    check(r.returncode == 0, "resume: exit 0")
    rows = manifest(d)
    check(all(x["status"] == "ok" for x in rows),
          "every run ok: %s" % [(x["index"], x["status"]) for x in rows])
    resub = [x for x in jobs(d) if x[1] == "array"]
    check(len(resub) == 2 and resub[1][2] in ("2,5-6",),
          "resume resubmitted exactly the killed run and the cancelled queued ones: %s"
          % [x[2] for x in resub])
    starts, ends = collections.Counter(), collections.Counter()
    for l in open(log):
        what, name = l.split()[:2]
        (starts if what == "start" else ends)[name] += 1
    names = ["lgl-1-r1", "lgl-2-r1"] + ["reference-3-r%d" % k for k in range(1, 5)]
    check(all(ends[n] == 1 for n in names),
          "every run ended exactly once (none lost, none twice): %s" % dict(ends))
    check(starts["lgl-2-r1"] == 2 and all(starts[n] == 1 for n in names if n != "lgl-2-r1"),
          "run 2 started twice (killed, then resubmitted), the others once: %s" % dict(starts))
    check(starts["plain"] == 1, "the plain run ran once: %d" % starts["plain"])


def queue_after_cancel(c):
    """The queue once cancelled jobs have left it: scancel returns at once,
    the job leaves a moment later (seconds on a loaded machine)."""
    t0 = time.time()
    while True:
        q = c.run(["squeue", "-h", "-r", "-o", "%j %K %T"]).stdout
        if "ompfuse-" not in q or time.time() - t0 > 20:
            return q
        time.sleep(0.2)


def part_plain(c, tmp):
    plan = os.path.join(tmp, "p6.plan")
    open(plan, "w").write(PLAN6)
    log = os.path.join(tmp, "fakep.log")
    d = os.path.join(tmp, "plainfail")
    env = dict(c.env, FAKE_LOG=log, FAKE_PLAIN_FAIL="1", OMPFUSE_TOOL=TOOL)
    r = ompfuse_run(env, ["--launcher", "slurm", "--poll", "0.3", "--plan", plan, "--out", d,
                          "--", FAKE, "x"])
    check(r.returncode == 2 and "without the tool" in r.stderr,
          "a program failing without the tool: exit 2 with the reason")
    started = [l.split()[1] for l in open(log) if l.startswith("start")] \
        if os.path.exists(log) else []
    check(started == ["plain"], "only the plain run started: %s" % started)
    q = queue_after_cancel(c)
    check("ompfuse-" not in q, "nothing of the campaign left in the queue: %r" % q)
    rows = manifest(d)
    check(all(x["status"] == "pending" for x in rows) and len(rows) == 6,
          "the manifest lists the 6 runs as pending: %s" % [x["status"] for x in rows])
    # an array Slurm refuses (indices from MaxArraySize, 1001 by default, on)
    big = os.path.join(tmp, "big.plan")
    open(big, "w").write("# slots: 2\nreference 1001 perf::TASK-CLOCK\n")
    env.pop("FAKE_PLAIN_FAIL")
    r = ompfuse_run(env, ["--launcher", "slurm", "--plan", big, "--out",
                          os.path.join(tmp, "big"), "--", FAKE, "x"])
    check(r.returncode == 2 and "sbatch refused the job" in r.stderr
          and "MaxArraySize" in r.stderr, "an array sbatch refuses: exit 2, sbatch's reason "
          "and the MaxArraySize hint")
    q = queue_after_cancel(c)
    check("ompfuse-" not in q, "the plain-run job submitted before was cancelled: %r" % q)


def part_cancel(c, tmp):
    plan = os.path.join(tmp, "p6.plan")
    open(plan, "w").write(PLAN6)
    log = os.path.join(tmp, "fakec.log")
    d = os.path.join(tmp, "cancel")
    # run 1 holds until it is cancelled, however slow the machine
    env = dict(c.env, FAKE_LOG=log, FAKE_HANG="lgl-1-r1", OMPFUSE_TOOL=TOOL)
    r = ompfuse_run(env, ["--launcher", "slurm", "--no-wait", "--plan", plan, "--out", d,
                          "--", FAKE, "x"])
    check(r.returncode == 0, "--no-wait: exit 0")
    start1 = os.path.join(d, "slurm", "tasks", "1.start")
    t0 = time.time()
    while not os.path.exists(start1):
        if time.time() - t0 > 60:
            raise cluster.ClusterError("run 1 never started:\n" + c.run(["squeue", "-r"]).stdout)
        time.sleep(0.05)
    r = ompfuse_run(env, ["--resume", d, "--cancel"])
    rows = manifest(d)
    st = [x["status"] for x in rows]
    check(r.returncode == 1 and st == ["interrupted"] + ["pending"] * 5,
          "--cancel: exit 1, run 1 interrupted, the queued ones pending: %s" % st)
    q = queue_after_cancel(c)
    check("ompfuse-" not in q, "--cancel left nothing in the queue: %r" % q)
    check("interrupted" in r.stderr and "--resume" in r.stderr,
          "the interrupted run's note says how to run it again")


def main():
    ok, why = cluster.available()
    if not ok:
        print("SKIP slurm_launcher_%s: %s" % (PART, why), flush=True)
        return 77
    tmp = tempfile.mkdtemp(prefix="ompf-sl-", dir="/tmp")
    os.chmod(tmp, 0o755)
    t_all = time.time()
    c = cluster.Cluster(os.path.join(tmp, "c"))
    try:
        c.start()
        {"same": part_same, "resume": part_resume, "plain": part_plain,
         "cancel": part_cancel}[PART](c, tmp)
    except (cluster.ClusterError, subprocess.TimeoutExpired) as e:
        check(False, "cluster error: %s" % e)
    finally:
        killed = c.stop()
        check(not killed and not c.strays(), "cluster stopped, nothing left: %s" % killed)
    if failures:
        print("files kept in %s" % tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s in %.1f s" % ("FAILED (%d)" % len(failures) if failures else "passed",
                            time.time() - t_all))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
