#!/usr/bin/python3
"""Campaigns that must not harm each other or claim success after failure:
the output directory's lock, runs that die with a SIGKILLed campaign and
are never made twice, non-zero exits when runs fail, and a full disk.

usage: test_campaign_safety.py lock|sigkill|allfail|fullfs OMPFUSE FAKEPROG
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import fakecampaign
from fakecampaign import check, failures, log_entries, write_plan

WHAT, OMPFUSE, FAKE = sys.argv[1], sys.argv[2], sys.argv[3]


def env(**kw):
    return fakecampaign.env(FAKE, **kw)


PLAN = ["lgl 1 perf::TASK-CLOCK,perf::CPU-CLOCK",
        "lgl 1 perf::PAGE-FAULTS,perf::MINOR-FAULTS",
        "reference 3 perf::TASK-CLOCK,perf::PAGE-FAULTS"]
NAMES = ["lgl-1-r1", "lgl-2-r1", "reference-3-r1", "reference-3-r2", "reference-3-r3"]


def wait_for(cond, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def proc_stat(pid):
    """(state, pgrp) of a live process, None when gone."""
    try:
        s = open("/proc/%d/stat" % pid).read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return rest[0], int(rest[2])


def alive(pid):
    st = proc_stat(pid)
    return st is not None and st[0] not in ("Z", "X")  # a zombie runs nothing


def group_members(pgid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = proc_stat(int(d))
            if st and st[1] == pgid and st[0] not in ("Z", "X"):
                out.append(int(d))
    return out


def writers_into(directory):
    """Live processes whose OMPFUSE_OUTPUT points into directory."""
    out = []
    key = ("OMPFUSE_OUTPUT=" + os.path.realpath(directory) + "/").encode()
    for d in os.listdir("/proc"):
        if not d.isdigit() or not alive(int(d)):
            continue
        try:
            envb = open("/proc/%s/environ" % d, "rb").read()
        except OSError:
            continue
        if any(x.startswith(key) for x in envb.split(b"\0")):
            out.append(int(d))
    return out


def empty_or_tmp_files(root):
    bad = []
    for dp, _dn, fn in os.walk(root):
        for f in fn:
            p = os.path.join(dp, f)
            if os.path.isfile(p) and (os.path.getsize(p) == 0 or ".tmp." in f):
                bad.append(p)
    return bad


def test_lock(tmp):
    """A second campaign or run on a directory in use refuses (exit 2) and
    names the holder's pid and host; the holder is untouched."""
    out = os.path.join(tmp, "camp")
    log = os.path.join(tmp, "log")
    host = socket.gethostname()
    cmd = [OMPFUSE, "campaign", "--out", out, "--quick", "--", FAKE, "x"]
    first = subprocess.Popen(cmd, env=env(FAKE_LOG=log, FAKE_HANG="reference-1-r1"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        started = wait_for(lambda: log_entries(log)[("start", "reference-1-r1")] == 1, 20)
        check(started, "the first campaign started its first run")
        # timeout: a hang guard below the holder's 60 s hanging run
        r = subprocess.run(cmd, env=env(FAKE_LOG=log), capture_output=True, text=True, timeout=50)
        print("second campaign:", r.returncode, r.stderr.strip(), flush=True)
        check(r.returncode == 2, "second campaign exit %d" % r.returncode)
        check("in use by another campaign" in r.stderr and "pid %d" % first.pid in r.stderr
              and "host %s" % host in r.stderr, "the refusal names pid and host: %s" % r.stderr)
        # immediate = without waiting for the holder (not a wall-time bound,
        # which a loaded machine stretches): its hanging run is still on
        check(log_entries(log)[("end", "reference-1-r1")] == 0 and first.poll() is None,
              "the refusal waited for the holder's run to end")
        # `ompfuse run` into the benchmark's run directory: refused as well
        bench = os.path.join(out, "campaign_fakeprog")
        r = subprocess.run([OMPFUSE, "run", "--plan", os.path.join(bench, "plan.txt"), "--out",
                            bench, "--", FAKE, "x"], env=env(FAKE_LOG=log),
                           capture_output=True, text=True, timeout=50)
        check(r.returncode == 2 and "pid %d" % first.pid in r.stderr,
              "run into the campaign's run directory: exit %d, %s" % (r.returncode, r.stderr))
        c = log_entries(log)
        starts = sum(v for (w, _n), v in c.items() if w == "start" and _n != "plain")
        check(starts == 1, "the refused commands started no run (%d starts)" % starts)
        check(first.poll() is None, "the first campaign still runs")
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=30)
    check(first.returncode == 1, "SIGTERM: the first campaign exits 1 (interrupted): %d"
          % first.returncode)
    check(not os.path.exists(os.path.join(out, ".ompfuse-lock")), "the lock file is removed")
    check(wait_for(lambda: not writers_into(os.path.join(out, "campaign_fakeprog")), 10),
          "no run left after SIGTERM")

    # two `ompfuse run` on one directory
    plan = os.path.join(tmp, "p.plan")
    write_plan(plan, PLAN)
    d = os.path.join(tmp, "run")
    log2 = os.path.join(tmp, "log2")
    rcmd = [OMPFUSE, "run", "--plan", plan, "--out", d, "--", FAKE, "x"]
    first = subprocess.Popen(rcmd, env=env(FAKE_LOG=log2, FAKE_HANG="lgl-1-r1"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        check(wait_for(lambda: log_entries(log2)[("start", "lgl-1-r1")] == 1, 20),
              "the first run command started")
        r = subprocess.run(rcmd, env=env(FAKE_LOG=log2), capture_output=True, text=True,
                           timeout=20)
        check(r.returncode == 2 and "pid %d" % first.pid in r.stderr and host in r.stderr,
              "second run: exit %d, %s" % (r.returncode, r.stderr))
        lock = open(os.path.join(d, ".ompfuse-lock")).read().split("\t")
        check(lock[0] == str(first.pid) and lock[1] == host,
              "the lock file names the holder: %s" % lock)
    finally:
        first.kill()
        first.wait()
    # the SIGKILLed holder's lock is stale: taken over with a note
    r = subprocess.run(rcmd, env=env(FAKE_LOG=log2), capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "after the holder died: exit %d, %s" % (r.returncode, r.stderr))
    check("stale lock" in r.stderr and "pid %d" % first.pid in r.stderr,
          "stale lock note: %s" % r.stderr)


def start_escaped(d, log, run, **extra):
    """fakeprog as run `run` of a campaign in d (created), hanging, in a
    session of its own: as if it had left its group."""
    os.mkdir(d)
    p = subprocess.Popen([FAKE, "x"], env=env(FAKE_LOG=log, FAKE_HANG=run,
                                              OMPFUSE_OUTPUT=os.path.join(os.path.realpath(d),
                                                                          run + ".ompf"),
                                              OMPFUSE_EVENTS="perf::TASK-CLOCK", **extra),
                         start_new_session=True)
    check(wait_for(lambda: log_entries(log)[("start", run)] == 1, 10),
          "the escaped process of %s started" % run)
    return p


def test_sigkill(tmp):
    """SIGKILL of `ompfuse run` mid-run: the program and what it forked end
    with it; the resume makes every run exactly once more at most, and a
    process that left its group is killed rather than overlapped."""
    plan = os.path.join(tmp, "p.plan")
    write_plan(plan, PLAN)
    out = os.path.join(tmp, "out")
    log = os.path.join(tmp, "log")
    cmd = [OMPFUSE, "run", "--plan", plan, "--out", out, "--", FAKE, "x"]
    # the third run hangs; every run forks a child that would sleep 30 s
    victim = "reference-3-r1"
    e = env(FAKE_LOG=log, FAKE_HANG=victim, FAKE_SPAWN_MS=30000)
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ok = wait_for(lambda: log_entries(log)[("child", victim)] == 1, 30)
    check(ok, "the third run started")
    pids = {}
    log_entries(log, pids)
    prog, kid = pids[("start", victim)], pids[("child", victim)]
    st = proc_stat(prog)
    pgid = st[1] if st else -1
    check(st is not None and proc_stat(kid) and proc_stat(kid)[1] == pgid
          and pgid != os.getpgid(p.pid),
          "the run (program %d and its child %d) is a process group of its own" % (prog, kid))
    p.kill()
    p.wait()
    # well under the program's 60 s and its child's 30 s
    gone = wait_for(lambda: not alive(prog) and not alive(kid) and not group_members(pgid)
                    and not writers_into(out), 10)
    check(gone, "after SIGKILL of the campaign: program %s, its child %s, group %s, writers %s"
          % (alive(prog), alive(kid), group_members(pgid), writers_into(out)))
    done_first = {n for n in NAMES if log_entries(log)[("end", n)]}
    check(done_first == set(NAMES[:2]), "killed after 2 runs: %s" % sorted(done_first))
    r = subprocess.run(cmd, env=env(FAKE_LOG=log, FAKE_SPAWN_MS=30000), capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, "resume exit %d: %s" % (r.returncode, r.stderr))
    check("stale lock" in r.stderr, "resume notes the stale lock")
    check("%d already complete (kept)" % len(done_first) in r.stderr, "resume: %s" % r.stderr)
    c = log_entries(log)
    for n in NAMES:
        check(c[("end", n)] == 1, "%s completed %d times" % (n, c[("end", n)]))
        check(c[("start", n)] == (2 if n == victim else 1), "%s started %d times"
              % (n, c[("start", n)]))
    # the children the runs left in their groups ended with their runs
    check(not writers_into(out), "processes of finished runs still alive: %s"
          % writers_into(out))

    # a process of an earlier campaign that left its group (setsid): found by
    # its OMPFUSE_OUTPUT, killed, and its run made once
    d, log2 = os.path.join(tmp, "escaped"), os.path.join(tmp, "log2")
    esc = start_escaped(d, log2, "lgl-2-r1")
    try:
        r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", d, "--", FAKE, "x"],
                           env=env(FAKE_LOG=log2), capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "run beside an escaped process: exit %d, %s"
              % (r.returncode, r.stderr))
        check("killing process %d (run lgl-2-r1)" % esc.pid in r.stderr,
              "the escaped process is named: %s" % r.stderr)
        check(wait_for(lambda: esc.poll() is not None, 10) and esc.returncode == -signal.SIGKILL,
              "the escaped process was killed: %s" % esc.poll())
        c = log_entries(log2)
        check(c[("end", "lgl-2-r1")] == 1 and c[("start", "lgl-2-r1")] == 2,
              "lgl-2-r1: %d starts, %d ends" % (c[("start", "lgl-2-r1")], c[("end", "lgl-2-r1")]))
    finally:
        if esc.poll() is None:
            esc.kill()
        esc.wait()

    # one that belongs to a Slurm job is not ours to kill: its run is not
    # made again while it lives (recorded failed, exit 1)
    d, log3 = os.path.join(tmp, "slurmjob"), os.path.join(tmp, "log3")
    esc = start_escaped(d, log3, "lgl-1-r1", SLURM_JOB_ID="4242")
    try:
        r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", d, "--", FAKE, "x"],
                           env=env(FAKE_LOG=log3), capture_output=True, text=True, timeout=60)
        check(r.returncode == 1 and "lgl-1-r1 not run: process %d" % esc.pid in r.stderr
              and "1 of 5 runs failed" in r.stderr,
              "beside a Slurm job's process: exit %d, %s" % (r.returncode, r.stderr))
        check(esc.poll() is None, "the Slurm job's process is left alone")
        c = log_entries(log3)
        check(c[("start", "lgl-1-r1")] == 1 and all(c[("end", n)] == 1 for n in NAMES[1:]),
              "only the other runs ran: %s" % dict(c))
    finally:
        esc.kill()
        esc.wait()


def test_allfail(tmp):
    """Runs that all fail: exit 1 with the count, no table or report
    claimed, no empty files; a program failing even without the tool: 2."""
    cases = [("true", ["/bin/true"], 1, "the program exited 0 but wrote no profile"),
             ("exit1", ["/bin/sh", "-c", 'test -z "$OMPFUSE_OUTPUT" || exit 1'], 1, "exit code 1"),
             ("false", ["/bin/false"], 2, "even without the tool")]
    for name, prog, want, why in cases:
        out = os.path.join(tmp, name)
        t0 = time.time()
        r = subprocess.run([OMPFUSE, "campaign", "--out", out, "--quick", "--"] + prog,
                           env=env(), capture_output=True, text=True, timeout=60)
        print("%s: exit %d in %.1f s; %s" % (name, r.returncode, time.time() - t0,
                                              r.stderr.strip().splitlines()[-1]), flush=True)
        check(r.returncode == want, "%s: exit %d, want %d" % (name, r.returncode, want))
        check(why in r.stderr, "%s: the reason is shown" % name)
        if want == 1:
            check("9 of 9 planned runs failed" in r.stderr
                  and "1 of 1 benchmarks produced nothing to evaluate" in r.stderr,
                  "%s: the counts: %s" % (name, r.stderr.splitlines()[-1]))
        check("report:" not in r.stdout and "no report written" in r.stdout,
              "%s: no report claimed: %s" % (name, r.stdout[-300:]))
        check(not os.path.exists(os.path.join(out, "report.html"))
              and not os.path.exists(os.path.join(out, "epd.tsv")), "%s: no report files" % name)
        check(not empty_or_tmp_files(out), "%s: empty or temporary files %s"
              % (name, empty_or_tmp_files(out)))
    # ompfuse run: the count, exit 1
    plan = os.path.join(tmp, "p.plan")
    write_plan(plan, PLAN)
    out = os.path.join(tmp, "run")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out, "--", "/bin/true"],
                       env=env(), capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "5 of 5 runs failed" in r.stderr,
          "run -- /bin/true: exit %d, %s" % (r.returncode, r.stderr[-300:]))
    check(not empty_or_tmp_files(out), "run: empty files %s" % empty_or_tmp_files(out))


def test_fullfs(tmp):
    """A campaign into a full filesystem (a 512 KiB tmpfs): exit 2, the
    failing file and the reason named, nothing empty or temporary left,
    nothing claimed."""
    mnt = os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt], check=True)
    try:
        # free space left: none (the plan cannot be written), and 48 KiB
        # (a few runs fit, then the manifest cannot be rewritten)
        for free_kib in (0, 48):
            filler = os.path.join(mnt, "filler")
            with open(filler, "wb") as f:
                try:
                    f.write(b"\0" * ((512 - free_kib) * 1024))
                except OSError:
                    pass  # full: exactly what is wanted for 0
            out = os.path.join(mnt, "camp")
            r = subprocess.run([OMPFUSE, "campaign", "--out", out, "--quick", "--", FAKE, "x"],
                               env=env(), capture_output=True, text=True, timeout=60)
            print("%d KiB free: exit %d; %s" % (free_kib, r.returncode,
                                                 r.stderr.strip().splitlines()[-1]), flush=True)
            check(r.returncode == 2, "%d KiB: exit %d" % (free_kib, r.returncode))
            named = [l for l in r.stderr.splitlines()
                     if out in l and os.strerror(28) in l]  # ENOSPC
            check(named, "%d KiB: a message names the file and the reason: %s"
                  % (free_kib, r.stderr[-600:]))
            check(not empty_or_tmp_files(mnt), "%d KiB: empty or temporary files %s"
                  % (free_kib, empty_or_tmp_files(mnt)))
            for f in ("report.html", "epd.tsv"):
                p = os.path.join(out, f)
                check(not os.path.exists(p) and f not in r.stdout,
                      "%d KiB: %s neither written nor claimed" % (free_kib, f))
            check(not os.path.exists(os.path.join(out, ".ompfuse-lock")),
                  "%d KiB: the lock is released" % free_kib)
            subprocess.run(["rm", "-rf", out, filler], check=True)
        # ompfuse run: its first file cannot be written (DIR/run.env, the
        # runs' OpenMP environment, then the manifest)
        plan = os.path.join(tmp, "p.plan")
        write_plan(plan, PLAN)
        with open(os.path.join(mnt, "filler"), "wb") as f:
            try:
                f.write(b"\0" * (512 * 1024))
            except OSError:
                pass
        out = os.path.join(mnt, "run")
        r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out, "--", FAKE, "x"],
                           env=env(), capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and os.strerror(28) in r.stderr and
              any(os.path.join(out, f) in r.stderr for f in ("run.env", "manifest.tsv")),
              "run: exit %d, %s" % (r.returncode, r.stderr))
        check(not empty_or_tmp_files(mnt), "run: empty files %s" % empty_or_tmp_files(mnt))
    finally:
        if subprocess.run(["umount", mnt]).returncode != 0:
            subprocess.run(["umount", "-l", mnt])


with tempfile.TemporaryDirectory() as tmp:
    {"lock": test_lock, "sigkill": test_sigkill, "allfail": test_allfail,
     "fullfs": test_fullfs}[WHAT](tmp)
print("FAILED" if failures else "ok", flush=True)
sys.exit(1 if failures else 0)
