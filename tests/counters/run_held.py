#!/usr/bin/python3
"""Held uprobes (include/ompfuse/uphold.h) with ompfuse run and ompfuse
campaign on sources_prog: exact counts through the held tracepoint, the
encoding recorded, no ompfuse_<pid> group left after a normal end, an
error exit, SIGTERM or SIGKILL (the janitor), a stale group of a dead pid
removed, perf probe's definition used and left alone.  Root; tracefs.
Usage: run_held.py held --tool LIB --dump DUMP --prog PROG --ompfuse BIN
       --perf PERF --workdir DIR
"""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_sources  # noqa: E402
from run_sources import (EXPECTED, ITERS, SYM, TASKS, UPROBE_EVENTS, Profile, args,  # noqa: E402
                         check, encodings, ensure_tracefs, exact_counts, groups, harness,
                         run_pid, sh, wait_group_gone)

A = None


def held_run(tag, events, prog_args, extra=(), wait=True):
    """ompfuse run of a one-line plan (events counted together); the Popen
    when not wait, else (rc, stderr, out dir)."""
    plan = os.path.join(A.workdir, tag + ".plan")
    with open(plan, "w") as f:
        f.write("lgl 1 %s\n" % events)
    d = os.path.join(A.workdir, tag)
    subprocess.run(["rm", "-rf", d])
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPFUSE_")}
    cmd = [A.ompfuse, "run", "--plan", plan, "--out", d, "--tool", A.tool,
           "--env", "OMP_NUM_THREADS=2", "-q"] + list(extra) + ["--"] + prog_args
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True), d
    rc, err, pid = run_pid(cmd, env=env)
    return rc, err, d, pid


def wait_for(cond, what, secs=60):
    for _ in range(secs * 10):
        if cond():
            return True
        time.sleep(0.1)
    return check(False, "timed out waiting for " + what)


def t_held():
    """Held uprobes: no ompfuse group is left after ompfuse run ends
    normally, on an error, on SIGTERM and on SIGKILL (the janitor); a stale
    group of a dead pid is removed by the next start; a probe that perf
    probe defined is used (the profile records its tracepoint id, counts
    exact) and left in place."""
    run_sources.A = A  # the shared helpers read the arguments there
    ensure_tracefs()
    up = "uprobe:%s:%s" % (A.prog, SYM)
    events = up
    off = [l for l in sh(["nm", A.prog]).stdout.splitlines() if l.endswith(" " + SYM)]
    # a stale group: a pid that has just ended
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = "ompfuse_%d" % dead.pid
    fd = os.open(UPROBE_EVENTS, os.O_WRONLY | os.O_APPEND)  # no seek: tracefs refuses it
    os.write(fd, b"p:%s/u0 %s:0x%s\n" % (stale.encode(), A.prog.encode(),
                                         off[0].split()[0].lstrip("0").encode() or b"0"))
    os.close(fd)
    check(stale in groups(), "could not define the stale group %s" % stale)
    rc, err, d, pid = held_run("held-normal", events, [A.prog] + args())
    check(rc == 0, "normal: rc %d %s" % (rc, err))
    check(stale not in groups(), "the stale group %s was not removed" % stale)
    p = Profile(os.path.join(d, "lgl-1-r1.ompf"))
    tot = exact_counts(p, "held-normal", 1)
    check(tot == [EXPECTED], "held-normal: totals %s" % tot)
    check(encodings(os.path.join(d, "lgl-1-r1.ompf")).get(up, (0,))[0] == 2,
          "held-normal: the uprobe is not recorded as a tracepoint")
    wait_group_gone("after a normal end", pid)
    # an error exit: the plain run fails (the probes were defined before it)
    rc, err, d, pid = held_run("held-error", events, ["false"])
    check(rc == 2, "error: rc %d %s" % (rc, err))
    wait_group_gone("after an error exit", pid)
    # SIGTERM and SIGKILL while a run counts (K large: 1.4 million hits of
    # microseconds each in the plain run and in the run under the tool, so
    # that the runs last seconds whatever the machine)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        proc, d = held_run("held-" + sig.name, events, [A.prog, "8", "40000", "64"], wait=False)
        started = wait_for(lambda: "ompfuse_%d" % proc.pid in groups(), "the run's group")
        time.sleep(1.0)  # the plain run, then the run under the tool
        running = proc.poll() is None
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        print("%s: sent while running: %s; ompfuse exit %d; %s" % (
            sig.name, running, proc.returncode, err.strip()[-200:]))
        check(running and proc.returncode == (1 if sig == signal.SIGTERM else -sig),
              "%s: ompfuse had ended before the signal, or exit %d" % (
                  sig.name, proc.returncode))
        if started:
            wait_group_gone("after " + sig.name, proc.pid)
    # ompfuse campaign: every run holds (tracepoint encoding), nothing left
    # after a normal end or SIGTERM
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPFUSE_")}
    for tag, k, sig in (("campaign", "100", None), ("campaign-term", "40000", signal.SIGTERM)):
        d = os.path.join(A.workdir, "held-" + tag)
        subprocess.run(["rm", "-rf", d])
        proc = subprocess.Popen([A.ompfuse, "campaign", "--out", d, "--events",
                                 up + ",perf::TASK-CLOCK,perf::PAGE-FAULTS", "--quick",
                                 "--", A.prog, str(TASKS), k, str(ITERS)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if sig:
            wait_for(lambda: "ompfuse_%d" % proc.pid in groups(), "the campaign's group")
            time.sleep(1.0)
            running = proc.poll() is None
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=300)
            check(running and proc.returncode == 1, "%s: ompfuse campaign had ended before "
                  "SIGTERM, or exit %d: %s" % (tag, proc.returncode, err[-300:]))
        else:
            _, err = proc.communicate(timeout=600)
            check(proc.returncode == 0, "%s: exit %d: %s" % (tag, proc.returncode, err[-300:]))
            runs = [os.path.join(dp, f) for dp, _, fs in os.walk(d) for f in fs
                    if re.match(r"(lgl|bc|reference)-.*\.ompf$", f)]
            encs = [encodings(f).get(up) for f in runs]
            check(runs and all(e is None or e[0] == 2 for e in encs) and
                  any(e is not None for e in encs),
                  "%s: uprobe encodings %s in %d runs" % (tag, encs, len(runs)))
        wait_group_gone("after " + tag, proc.pid)
    # a probe perf probe defined: used, never removed
    group = "probe_" + os.path.basename(A.prog).replace("-", "_")
    sh([A.perf, "probe", "-q", "-d", group + ":*"])
    r = sh([A.perf, "probe", "-q", "-x", A.prog, SYM])
    if not check(r.returncode == 0, "perf probe: %s" % r.stderr):
        return
    try:
        tp_id = int(open("/sys/kernel/tracing/events/%s/%s/id" % (group, SYM)).read())
        rc, err, d, pid = held_run("held-foreign", events, [A.prog] + args())
        check(rc == 0, "foreign: rc %d %s" % (rc, err))
        f = os.path.join(d, "lgl-1-r1.ompf")
        tot = exact_counts(Profile(f), "held-foreign", 1)
        check(tot == [EXPECTED], "held-foreign: totals %s" % tot)
        check(encodings(f).get(up) == (2, tp_id), "foreign: recorded %s, not perf probe's id %d"
              % (encodings(f).get(up), tp_id))
        check(os.path.isdir("/sys/kernel/tracing/events/%s/%s" % (group, SYM)),
              "ompfuse removed perf probe's definition")
        check("ompfuse_%d" % pid not in groups(), "a group was defined next to perf probe's")
    finally:
        sh([A.perf, "probe", "-q", "-d", group + ":*"])


if __name__ == "__main__":
    sys.exit(harness(globals(), ("tool", "dump", "prog", "ompfuse", "perf", "workdir"),
                     "tracefs, uprobes"))
