#!/usr/bin/python3
"""slurm_cluster: a private single-node Slurm cluster really schedules job
arrays here, and the state-tracking scheme the Slurm launcher will use
(squeue while queued + per-task marker files in the shared directory, no
sacct) tells completed, killed and never-started array tasks apart.

  1. start the cluster (munged, slurmctld, slurmd under a temp dir)
  2. sbatch --array=1-4 --exclusive: every task writes its output into the
     shared directory; all 4 present, each saw the whole node, environment
     exported, no two tasks overlapped in time (exclusive node)
  3. a second array of 6 slower tasks: scancel one running task and two
     pending ones midway; markers + squeue give exactly
     {completed: 1,3,4; killed while running: 2; never started: 5,6},
     cross-checked with the jobcomp log (test-only oracle)
  4. "resume": resubmit only the indices without a success marker; every
     index then has exactly one successful execution (none lost, none twice)
  5. stop the cluster: no daemon, slurmstepd or job process left

Exit 77 (ctest SKIP_RETURN_CODE) with the reason printed when the Slurm
packages are not installed here; every other problem is a failure.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402

SKIP = 77
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def wait_gone(c, jobid, timeout, what):
    """Polls squeue until no task of jobid is pending/running (bounded)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        r = c.run(["squeue", "-h", "-r", "-j", jobid, "-o", "%i %T"], check=False)
        # squeue exits 1 "Invalid job id" once the whole array has left the queue
        live = [l for l in r.stdout.splitlines() if l.split()[1] not in
                ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")] \
            if r.returncode == 0 else []
        if not live:
            return time.time() - t0
        time.sleep(0.2)
    raise cluster.ClusterError("%s: array %s still queued after %.0f s:\n%s" % (
        what, jobid, timeout, c.run(["squeue", "-r"], check=False).stdout))


def task_states(jobid, shared):
    """What the launcher can know without sacct, from marker files:
    ok (exit marker 0), killed (started, no exit marker or exit != 0),
    never (no start marker)."""
    st = {}
    for i in range(1, 7):
        start = os.path.join(shared, "%d.start" % i)
        done = os.path.join(shared, "%d.exit" % i)
        if os.path.exists(done) and open(done).read().split()[0] == "0":
            st[i] = "ok"
        elif os.path.exists(start):
            st[i] = "killed"
        else:
            st[i] = "never"
    return st


def jobcomp(path, jobid):
    """ArrayTaskId -> JobState from the jobcomp/filetxt log (test oracle)."""
    out = {}
    if os.path.exists(path):
        for l in open(path):
            f = dict(x.split("=", 1) for x in l.split() if "=" in x)
            if f.get("ArrayJobId") == jobid:
                out[int(f["ArrayTaskId"])] = f["JobState"]
    return out


SCRIPT1 = """#!/bin/sh
# one array task: write what the task saw into the shared directory
out={shared}/task.$SLURM_ARRAY_TASK_ID
t0=$(date +%s.%N)
sleep 0.3
t1=$(date +%s.%N)
printf 'index=%s\\njob=%s\\narray=%s\\nhost=%s\\ncpus=%s\\ntoken=%s\\nt0=%s\\nt1=%s\\n' \\
  "$SLURM_ARRAY_TASK_ID" "$SLURM_JOB_ID" "$SLURM_ARRAY_JOB_ID" "$(hostname)" \\
  "$SLURM_CPUS_ON_NODE" "$OMPF_TEST_TOKEN" "$t0" "$t1" > $out.tmp
mv $out.tmp $out
"""

# The shape of the launcher's array script: start marker, the run, exit
# marker with the run's status, both written atomically (tmp + mv).  Task
# 2's first attempt holds until it is cancelled, so that "2 running, 3-6
# pending" does not rest on squeue answering within its sleep.
SCRIPT2 = """#!/bin/sh
d={shared}
i=$SLURM_ARRAY_TASK_ID
echo "$SLURM_JOB_ID $(hostname) $(date +%s.%N)" > $d/$i.start.tmp && mv $d/$i.start.tmp $d/$i.start
echo "$SLURM_ARRAY_JOB_ID $SLURM_JOB_ID" >> $d/executions.$i
if [ "$i" = 2 ] && [ ! -e $d/2.held ]; then
  : > $d/2.held
  sleep 60
else
  sleep {secs}
fi
rc=$?
echo "$rc $(date +%s.%N)" > $d/$i.exit.tmp && mv $d/$i.exit.tmp $d/$i.exit
"""


def part1(c, tmp, ncpu):
    shared = os.path.join(tmp, "shared1")
    os.makedirs(shared)
    script = os.path.join(tmp, "a1.sh")
    open(script, "w").write(SCRIPT1.format(shared=shared))
    env = c.env
    env["OMPF_TEST_TOKEN"] = "tok%d" % os.getpid()
    t0 = time.time()
    r = subprocess.run(["sbatch", "--parsable", "--array=1-4", "--exclusive",
                                "-J", "ompf-a1", "-o", os.path.join(shared, "slurm-%A_%a.out"),
                                script], env=env, capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "sbatch --array=1-4 --exclusive accepted (%s)" % (r.stderr.strip() or r.stdout.strip()))
    jobid = r.stdout.strip().split(";")[0]
    took = wait_gone(c, jobid, 40, "array 1")
    print("     array of 4 finished in %.1f s" % (time.time() - t0), flush=True)
    tasks = {}
    for i in range(1, 5):
        p = os.path.join(shared, "task.%d" % i)
        if os.path.exists(p):
            tasks[i] = dict(l.split("=", 1) for l in open(p).read().splitlines())
    check(sorted(tasks) == [1, 2, 3, 4], "all 4 array tasks wrote their output (got %s)" % sorted(tasks))
    check(all(t["array"] == jobid for t in tasks.values()), "every task ran in array job %s" % jobid)
    check(len({t["job"] for t in tasks.values()}) == len(tasks), "each task has its own SLURM_JOB_ID")
    check(all(t["index"] == str(i) for i, t in tasks.items()), "SLURM_ARRAY_TASK_ID matches the output name")
    check(all(t["host"] == c.hostname for t in tasks.values()), "tasks ran on node %s" % c.hostname)
    check(all(t["cpus"] == str(ncpu) for t in tasks.values()),
          "--exclusive gave every task the whole node (%d CPUs): %s" % (ncpu, [t["cpus"] for t in tasks.values()]))
    check(all(t["token"] == env["OMPF_TEST_TOKEN"] for t in tasks.values()),
          "the submitter's environment reached the tasks (--export=ALL)")
    iv = sorted((float(t["t0"]), float(t["t1"])) for t in tasks.values())
    check(all(iv[k][1] <= iv[k + 1][0] for k in range(len(iv) - 1)),
          "exclusive: no two tasks overlapped in time")
    st = c.run(["squeue", "-h", "-r", "-t", "all", "-j", jobid, "-o", "%K %T"], check=False).stdout.split("\n")
    states = dict(l.split() for l in st if l.strip())
    check(states == {str(i): "COMPLETED" for i in range(1, 5)},
          "squeue -t all (within MinJobAge) shows the 4 tasks COMPLETED: %s" % states)
    return took


def part2(c, tmp):
    shared = os.path.join(tmp, "shared2")
    os.makedirs(shared)
    script = os.path.join(tmp, "a2.sh")
    open(script, "w").write(SCRIPT2.format(shared=shared, secs=1.5))
    jobid = c.run(["sbatch", "--parsable", "--array=1-6", "--exclusive", "-J", "ompf-a2",
                   "-o", "/dev/null", script]).stdout.strip().split(";")[0]
    # wait until task 2 runs (its start marker is the launcher's signal too)
    t0 = time.time()
    while not os.path.exists(os.path.join(shared, "2.start")):
        if time.time() - t0 > 30:
            raise cluster.ClusterError("task 2 of array %s did not start within 30 s:\n%s"
                                       % (jobid, c.run(["squeue", "-r"], check=False).stdout))
        time.sleep(0.05)
    q = c.run(["squeue", "-h", "-r", "-j", jobid, "-o", "%K %T"]).stdout
    queued = dict(l.split() for l in q.splitlines())
    check(queued.get("2") == "RUNNING" and all(queued.get(str(i)) == "PENDING" for i in (3, 4, 5, 6)),
          "midway: task 2 running, 3-6 pending: %s" % queued)
    c.run(["scancel", "%s_2" % jobid, "%s_5" % jobid, "%s_6" % jobid])
    wait_gone(c, jobid, 40, "array 2")
    st = task_states(jobid, shared)
    check(st == {1: "ok", 2: "killed", 3: "ok", 4: "ok", 5: "never", 6: "never"},
          "markers tell ok / killed / never-started apart: %s" % st)
    oracle = jobcomp(os.path.join(c.dir, "log", "jobcomp.txt"), jobid)
    check(oracle == {1: "COMPLETED", 2: "CANCELLED", 3: "COMPLETED", 4: "COMPLETED"},
          "jobcomp oracle agrees (cancelled pending tasks leave no record at all): %s" % oracle)
    sq = c.run(["squeue", "-h", "-r", "-t", "all", "-j", jobid, "-o", "%K %T"], check=False).stdout
    sq = dict(l.split() for l in sq.splitlines() if l.strip())
    check(sq.get("2") == "CANCELLED" and "5" not in sq and "6" not in sq,
          "squeue -t all: running-cancelled task is CANCELLED, pending-cancelled ones vanish: %s" % sq)

    # resume: the indices without a success marker, nothing else
    redo = sorted(i for i, s in st.items() if s != "ok")
    arr = ",".join(map(str, redo))
    for i in redo:  # stale markers of the killed attempt go first
        for m in ("start", "exit"):
            p = os.path.join(shared, "%d.%s" % (i, m))
            if os.path.exists(p):
                os.unlink(p)
    job2 = c.run(["sbatch", "--parsable", "--array=%s%%1" % arr, "--exclusive", "-J", "ompf-a2r",
                  "-o", "/dev/null", script]).stdout.strip().split(";")[0]
    wait_gone(c, job2, 40, "resubmitted array")
    st = task_states(job2, shared)
    check(all(s == "ok" for s in st.values()), "after resubmitting %s every index is ok: %s" % (arr, st))
    ok_runs = {}
    for i in range(1, 7):
        p = os.path.join(shared, "executions.%d" % i)
        ok_runs[i] = len(open(p).read().splitlines()) if os.path.exists(p) else 0
    # 2 started twice (killed, then resumed); every other index exactly once
    check(ok_runs == {1: 1, 2: 2, 3: 1, 4: 1, 5: 1, 6: 1},
          "executions per index (2: killed + resumed, others once): %s" % ok_runs)
    finished = jobcomp(os.path.join(c.dir, "log", "jobcomp.txt"), job2)
    check(finished == {i: "COMPLETED" for i in redo},
          "resubmitted tasks %s all COMPLETED in the oracle: %s" % (arr, finished))


def main():
    ok, why = cluster.available()
    if not ok:
        print("SKIP slurm_cluster: %s" % why, flush=True)
        return SKIP
    print("slurm: %s" % cluster.slurm_version(), flush=True)
    # short path: Unix socket paths are limited to 108 bytes
    tmp = tempfile.mkdtemp(prefix="ompf-slurm-", dir="/tmp")
    os.chmod(tmp, 0o755)  # munged wants every parent of its socket searchable
    c = cluster.Cluster(os.path.join(tmp, "c"))
    t_all = time.time()
    try:
        t0 = time.time()
        c.start()
        check(True, "cluster up in %.1f s (node %s, %d CPUs, ports %d/%d)" % (
            time.time() - t0, c.hostname, c.info["cpus"], c.info["slurmctld_port"],
            c.info["slurmd_port"]))
        part1(c, tmp, c.info["cpus"])
        t0 = time.time()
        part2(c, tmp)
        print("     cancel + resume part took %.1f s" % (time.time() - t0), flush=True)
    except (cluster.ClusterError, subprocess.TimeoutExpired) as e:
        check(False, "cluster error: %s" % e)
    finally:
        pids = dict(c.info.get("pids", {}))
        t0 = time.time()
        killed = c.stop()
        check(not killed, "stop left no stray process to kill: %s" % killed)
        alive = {n: p for n, p in pids.items() if cluster._alive(p)}
        check(not alive and not c.strays(),
              "no daemon left after stop (%.1f s): %s" % (time.time() - t0, alive))
    if not failures:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("logs kept in %s" % tmp)
    print("%s in %.1f s" % ("FAILED (%d)" % len(failures) if failures else "passed", time.time() - t_all))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
