#!/usr/bin/python3
"""slurm_tool_array: the real OMPT tool counts inside Slurm array tasks, and
the local launcher's resume logic accepts what the tasks wrote.

A prototype of the Slurm launcher's array script (array index = campaign
run index; the OMPFUSE_* environment the local launcher sets; start/exit
markers in DIR/slurm/tasks/) is generated from the manifest of a local
`ompfuse run` of the same plan, submitted as one --exclusive array to a
private single-node cluster, and then `ompfuse run` on the Slurm directory
must find every run complete ("4 already complete (kept), 0 to run") and
write a manifest with the same runs, roles, events and statuses as the
local one; every profile names its node, CPU model and kernel.

usage: test_tool_array.py OMPFUSE TOOL PROGRAM   (exit 77: Slurm not installed)
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402
from checks import check, failures, manifest  # noqa: E402

OMPFUSE, TOOL, PROG = (os.path.abspath(a) for a in sys.argv[1:4])

PLAN = """# slots: 2
lgl 1 perf::TASK-CLOCK,perf::CPU-CLOCK
lgl 1 perf::PAGE-FAULTS,perf::MINOR-FAULTS
reference 2 perf::TASK-CLOCK,perf::PAGE-FAULTS
"""
MODE = {"lgl": "run", "ctc": "run", "bc": "run", "run": "run", "reference": "reference",
        "hem": "hem", "hem-delta": "hem-delta"}


def array_script(d, rows):
    """One case per run: the same variables ompf_campaign's child_env sets."""
    q = shlex.quote
    cases = []
    for r in rows:
        name = r["profile"][:-len(".ompf")]
        cases.append("%d) name=%s ev=%s mode=%s role=%s ;;" % (
            r["index"], q(name), q(r["events"]), MODE[r["role"]], r["role"]))
    return """#!/bin/sh
D={d}
i=$SLURM_ARRAY_TASK_ID
case $i in
{cases}
*) echo "no planned run $i" >&2; exit 2 ;;
esac
T=$D/slurm/tasks
echo "$SLURM_ARRAY_JOB_ID $SLURM_JOB_ID $(hostname)" > $T/$i.start.tmp && mv $T/$i.start.tmp $T/$i.start
rm -f $D/$name.ompf
OMP_TOOL_LIBRARIES={tool} OMPFUSE_EVENTS=$ev OMPFUSE_OUTPUT=$D/$name.ompf \\
OMPFUSE_MODE=$mode OMPFUSE_ROLE=$role OMPFUSE_PMU_SLOTS=2 \\
  {prog} S > $D/$name.stdout 2> $D/$name.stderr
rc=$?
echo "$rc" > $T/$i.exit.tmp && mv $T/$i.exit.tmp $T/$i.exit
exit $rc
""".format(d=q(d), cases="\n".join(cases), tool=q(TOOL), prog=q(PROG))


def main():
    ok, why = cluster.available()
    if not ok:
        print("SKIP slurm_tool_array: %s" % why, flush=True)
        return 77
    tmp = tempfile.mkdtemp(prefix="ompf-sta-", dir="/tmp")
    os.chmod(tmp, 0o755)
    t_all = time.time()
    plan = os.path.join(tmp, "p.plan")
    open(plan, "w").write(PLAN)
    env = dict(os.environ, OMP_NUM_THREADS="2", OMPFUSE_TOOL=TOOL)
    env.pop("OMPFUSE_PMU_SLOTS", None)
    local = os.path.join(tmp, "local")
    r = subprocess.run([OMPFUSE, "run", "-q", "--plan", plan, "--out", local, "--", PROG, "S"],
                       env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "local `ompfuse run` ok (%s)" % r.stderr.strip()[-300:])
    if r.returncode != 0:
        return 1
    rows = manifest(local)
    c = cluster.Cluster(os.path.join(tmp, "c"))
    sl = os.path.join(tmp, "sl")
    try:
        c.start()
        os.makedirs(os.path.join(sl, "slurm", "tasks"))
        script = os.path.join(sl, "slurm", "array.sh")
        open(script, "w").write(array_script(sl, rows))
        senv = dict(c.env, OMP_NUM_THREADS="2")
        t0 = time.time()
        r = subprocess.run(["sbatch", "--parsable", "--array=1-%d" % len(rows), "--exclusive",
                            "-J", "ompfuse-sta", "-o", os.path.join(sl, "slurm", "%A_%a.out"),
                            script], env=senv, capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, "array of %d runs submitted (%s)" % (len(rows), r.stderr.strip()))
        while c.run(["squeue", "-h", "-r", "-n", "ompfuse-sta"], check=False).stdout.strip():
            if time.time() - t0 > 60:
                raise cluster.ClusterError("array still queued after 60 s")
            time.sleep(0.2)
        print("     array of %d runs done in %.1f s" % (len(rows), time.time() - t0), flush=True)
        exits = {}
        for x in rows:
            p = os.path.join(sl, "slurm", "tasks", "%d.exit" % x["index"])
            exits[x["index"]] = open(p).read().strip() if os.path.exists(p) else None
        check(all(v == "0" for v in exits.values()), "every array task exited 0: %s" % exits)
        # the collector of today: the local launcher's resume logic
        r = subprocess.run([OMPFUSE, "run", "--no-check", "--plan", plan, "--out", sl, "--", PROG, "S"],
                           env=env, capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and "already complete (kept), 0 to run" in r.stderr,
              "`ompfuse run` on the Slurm directory keeps every profile and runs nothing: %s"
              % r.stderr.strip().splitlines()[:1])
        srows = manifest(sl)
        key = lambda x: (x["index"], x["role"], x["repeat"], x["events"], x["status"], x["profile"])
        check([key(x) for x in srows] == [key(x) for x in rows],
              "same manifest (index, role, repeat, events, status, profile) as the local launcher")
        for x in srows:
            s = subprocess.run([OMPFUSE, "show", os.path.join(sl, x["profile"])],
                               capture_output=True, text=True, timeout=30).stdout
            meta = {}
            for l in s.splitlines():
                p = l.split(None, 1)
                if len(p) == 2:
                    meta.setdefault(p[0], p[1].strip())
            check(meta.get("hostname") == c.hostname and meta.get("role") == x["role"]
                  and meta.get("cpu_model") and meta.get("kernel")
                  and "complete" in meta.get("status:", ""),
                  "%s: complete, role %s, hostname/cpu_model/kernel recorded (%s, %s)"
                  % (x["profile"], meta.get("role"), meta.get("hostname"), meta.get("cpu_model")))
    except (cluster.ClusterError, subprocess.TimeoutExpired) as e:
        check(False, "cluster error: %s" % e)
    finally:
        killed = c.stop()
        check(not killed and not c.strays(), "cluster stopped, nothing left: %s" % killed)
    if failures:
        print("files kept in %s" % tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s in %.1f s" % ("FAILED (%d)" % len(failures) if failures else "passed", time.time() - t_all))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
