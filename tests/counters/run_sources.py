#!/usr/bin/python3
"""Event sources in perf's syntax, counted by libompfuse.so on sources_prog
(task t: (t+1)*K calls of ompf_sources_hit() and getppid(); each loop
iteration one of each).  Needs root: mounts tracefs if it is not mounted
(the tool itself never mounts anything); other mount layouts are made in
private mount namespaces (unshare -m), invisible to the rest of the machine.
Usage: run_sources.py TEST --tool LIB --dump DUMP --prog PROG --ompfuse BIN
       --perf PERF --workdir DIR
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

A = None
FAILS = []
TASKS, K, ITERS = 8, 100, 64
SYM = "ompf_sources_hit"
TP = "syscalls:sys_enter_getppid"


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)
    return cond


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def ensure_tracefs():
    if not os.path.isdir("/sys/kernel/tracing/events"):
        r = sh(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"])
        check(r.returncode == 0, "mount tracefs: %s" % r.stderr)


def tool_env(out, events, threads=2):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OMPFUSE_") and k != "OMP_NUM_THREADS"}
    env.update({"OMP_TOOL_LIBRARIES": A.tool, "OMPFUSE_OUTPUT": out,
                "OMPFUSE_EVENTS": events, "OMP_NUM_THREADS": str(threads)})
    return env


def args():
    return [str(TASKS), str(K), str(ITERS)]


def out(name):
    return os.path.join(A.workdir, name + ".ompf")


class Profile:
    def __init__(self, path):
        p = sh([A.dump, path])
        self.rc, self.events, self.reasons = p.returncode, [], {}
        self.xus, self.threads = [], []
        for line in p.stdout.splitlines():
            f = line.split(" ")
            if f[0] == "event":
                self.events.append((f[1], f[2]))
                self.reasons[f[1]] = " ".join(f[3:])
            elif f[0] == "xu":
                self.xus.append({"label": f[1], "ckind": f[4],
                                 "thread": int(f[5]), "iters": int(f[10]),
                                 "values": [None if v == "NA" else int(v)
                                            for v in f[14:]]})
            elif f[0] == "thread":
                ne = len(self.events)
                v = f[4:]
                num = lambda x: None if x == "NA" else int(x)
                self.threads.append({"index": int(f[1]),
                                     "total": [num(x) for x in v[:ne]],
                                     "gap": [num(x) for x in
                                             v[ne + 1:2 * ne + 1]]})


def exact_counts(p, name, nev):
    """Every event counts exactly the occurrences, per XU and per label;
    XUs + gap = thread total.  Returns the totals over threads."""
    check(p.rc == 0 and [s for _, s in p.events] == ["counted"] * nev,
          "%s: events %s %s" % (name, p.events, p.reasons))
    if p.rc != 0 or not p.xus:
        return None
    tasks = [x for x in p.xus if x["ckind"] == "task"]
    loops = [x for x in p.xus if x["ckind"] == "loop"]
    labels = collections.Counter(x["label"] for x in tasks)
    check(len(labels) == TASKS and max(labels.values()) == 1,
          "%s: %d task labels %s" % (name, len(labels), labels))
    check(sorted(x["values"][0] for x in tasks) ==
          [(t + 1) * K for t in range(TASKS)],
          "%s: task counts %s" % (name, [x["values"] for x in tasks]))
    for x in tasks + loops:
        want = x["iters"] if x["ckind"] == "loop" else x["values"][0]
        check(x["values"][:nev] == [want] * nev,
              "%s: XU %s counts %s, expected %d each" % (
                  name, x["label"], x["values"][:nev], want))
    check(sum(x["iters"] for x in loops) == ITERS,
          "%s: loop chunks cover %d iterations" % (name, sum(
              x["iters"] for x in loops)))
    sums = collections.defaultdict(lambda: [0] * nev)
    for x in p.xus:
        for e in range(nev):
            sums[x["thread"]][e] += x["values"][e]
    for t in p.threads:
        for e in range(nev):
            check(sums[t["index"]][e] + t["gap"][e] == t["total"][e],
                  "%s thread %d event %d: XUs %d + gap %d != total %d" % (
                      name, t["index"], e, sums[t["index"]][e], t["gap"][e],
                      t["total"][e]))
    return [sum(t["total"][e] for t in p.threads) for e in range(nev)]


EXPECTED = TASKS * (TASKS + 1) // 2 * K + ITERS


def t_mount():
    """Set-up of the other tests: tracefs mounted (the tool never mounts)."""
    ensure_tracefs()
    check(os.path.isdir("/sys/kernel/tracing/events"), "tracefs not mounted")


def perf_stat(path):
    """perf stat -x, output: {event: count}."""
    counts = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) > 3 and f[0].isdigit():
            counts[f[2]] = int(f[0])
    return counts


def t_exact():
    """Tracepoint, uprobe and perf-probe tracepoint per XU, exactly; their
    totals equal perf stat's for the same run (perf stat wraps the run),
    less what perf stat sees when the program itself makes no calls."""
    ensure_tracefs()
    group = "probe_" + os.path.basename(A.prog).replace("-", "_")
    probe_tp = "%s:%s" % (group, SYM)
    sh([A.perf, "probe", "-q", "-d", group + ":*"])
    r = sh([A.perf, "probe", "-q", "-x", A.prog, SYM])
    if not check(r.returncode == 0, "perf probe: %s" % r.stderr):
        return
    try:
        events = "%s,uprobe:%s:%s,%s" % (TP, A.prog, SYM, probe_tp)
        stat = os.path.join(A.workdir, "perf-stat.csv")
        o = out("exact")
        r = sh([A.perf, "stat", "-x,", "-o", stat, "-e", TP, "-e", probe_tp,
                "--", A.prog] + args(), env=tool_env(o, events))
        check(r.returncode == 0, "run under perf stat: %s" % r.stderr)
        perf = perf_stat(stat)
        tot = exact_counts(Profile(o), "exact", 3)
        # occurrences outside the program's code (a sanitizer runtime calls
        # getppid at start): the same command with no tasks and no loop
        r = sh([A.perf, "stat", "-x,", "-o", stat, "-e", TP, "-e", probe_tp,
                "--", A.prog, "0", "0", "0"], env=tool_env(o + ".0", events))
        check(r.returncode == 0, "empty run under perf stat: %s" % r.stderr)
        base = perf_stat(stat)
        print("perf stat: %s; with no occurrences in the program: %s" % (
            perf, base))
        if tot:
            print("tool thread totals:", tot)
            check(tot == [EXPECTED] * 3, "totals %s != %d" % (tot, EXPECTED))
            check(perf.get(TP) == tot[0] + base.get(TP, -1) and
                  perf.get(probe_tp) == tot[2] + base.get(probe_tp, -1) and
                  tot[1] == tot[2],
                  "tool totals %s + outside %s != perf stat %s" % (
                      tot, base, perf))
    finally:
        sh([A.perf, "probe", "-q", "-d", group + ":*"])


def in_namespace(setup, o, events):
    """Runs the program under the tool in a private mount namespace after
    the shell commands in setup."""
    script = "set -e; %s; exec \"$@\"" % setup
    return sh(["unshare", "-m", "--propagation", "private", "sh", "-c",
               script, "sh", A.prog] + args(), env=tool_env(o, events))


UMOUNT_TRACEFS = "umount /sys/kernel/tracing 2>/dev/null || true"
UMOUNT_DEBUGFS = ("umount /sys/kernel/debug/tracing 2>/dev/null || true; "
                  "umount /sys/kernel/debug 2>/dev/null || true")


def t_mounts():
    """tracefs only, debugfs only (its automounted tracing/), neither."""
    ensure_tracefs()
    events = "%s,uprobe:%s:%s" % (TP, A.prog, SYM)
    layouts = [
        ("tracefs-only", UMOUNT_DEBUGFS + "; test -d /sys/kernel/tracing/events"
         " || mount -t tracefs nodev /sys/kernel/tracing"),
        ("debugfs-only", UMOUNT_TRACEFS + "; " + UMOUNT_DEBUGFS +
         "; mount -t debugfs nodev /sys/kernel/debug; "
         "test -d /sys/kernel/debug/tracing/events; "
         "test ! -d /sys/kernel/tracing/events")]
    for name, setup in layouts:
        o = out("mounts-" + name)
        r = in_namespace(setup, o, events)
        check(r.returncode == 0, "%s: rc %d %s" % (name, r.returncode,
                                                   r.stderr))
        tot = exact_counts(Profile(o), name, 2)
        check(tot == [EXPECTED] * 2, "%s: totals %s" % (name, tot))
    o = out("mounts-none")
    r = in_namespace(UMOUNT_TRACEFS + "; " + UMOUNT_DEBUGFS, o, events)
    p = Profile(o)
    check(r.returncode == 0 and p.events == [(TP, "failed"),
                                             (events.split(",")[1], "counted")],
          "neither mounted: events %s rc %d" % (p.events, r.returncode))
    why = p.reasons.get(TP, "")
    check("tracefs is not mounted" in why and
          "mount -t tracefs nodev /sys/kernel/tracing" in why,
          "neither mounted: reason %r" % why)


def t_messages():
    """Unknown symbol, tracepoint, PMU, term; permission as an ordinary
    user (nobody): each reason says what is wrong and the fix."""
    ensure_tracefs()
    bad = [("uprobe:%s:no_such_function" % A.prog,
            "symbol no_such_function not found in"),
           ("uprobe:/nonexistent/bin:f", "binary /nonexistent/bin: No such"),
           ("nosuchsys:nosuchtp", "neither a libpfm4 name nor a tracepoint"),
           ("msr/nosuch/", "PMU msr has no event or format term 'nosuch'"),
           ("nopmu/x/", "no PMU nopmu in /sys/bus/event_source/devices")]
    o = out("messages")
    r = sh([A.prog] + args(),
           env=tool_env(o, ",".join(["perf::TASK-CLOCK"] + [n for n, _ in bad])))
    p = Profile(o)
    check(r.returncode == 0 and len(p.events) == 1 + len(bad),
          "messages: rc %d events %s" % (r.returncode, p.events))
    for name, words in bad:
        why = p.reasons.get(name, "")
        check(dict(p.events).get(name) == "failed" and words in why,
              "%s: reason %r lacks %r" % (name, why, words))
    # an ordinary user: tracefs is root-only, uprobes need CAP_PERFMON
    d = os.path.join(A.workdir, "nobody")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o777)
    o = os.path.join(d, "nobody.ompf")
    if os.path.exists(o):
        os.unlink(o)
    events = "%s,uprobe:%s:%s" % (TP, A.prog, SYM)
    r = sh(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            A.prog] + args(), env=tool_env(o, events), cwd=d)
    p = Profile(o)
    check(r.returncode == 0 and p.events == [(TP, "failed"),
                                             (events.split(",")[1], "failed")],
          "nobody: rc %d %s events %s" % (r.returncode, r.stderr, p.events))
    check("run as root" in p.reasons.get(TP, ""),
          "nobody tracepoint reason %r" % p.reasons.get(TP))
    uw = p.reasons.get(events.split(",")[1], "")
    check("permission denied" in uw and "CAP_PERFMON" in uw,
          "nobody uprobe reason %r" % uw)


def tracefs_names(root):
    """The countable tracepoints, by an independent walk of tracefs."""
    names = set()
    for g in os.listdir(root):
        d = os.path.join(root, g)
        if os.path.isdir(d):
            names |= {"%s:%s" % (g, t) for t in os.listdir(d)
                      if os.path.isfile(os.path.join(d, t, "id"))}
    return names


def t_events():
    """ompfuse events: counts and names of tracepoints as tracefs has them;
    --probe opens them (and libpfm4's tracepoint groups under debugfs);
    the unmounted and unprivileged cases say what to do."""
    ensure_tracefs()
    # Other programs on the machine (perf probe, other test runs) may add
    # or remove tracepoints while a listing runs: the listing must hold
    # every tracepoint that was there before and after it, and nothing
    # that was in neither walk.
    root = "/sys/kernel/tracing/events"
    before = tracefs_names(root)
    r = sh([A.ompfuse, "events", "--pmus", "--probe"])
    after = tracefs_names(root)
    check(r.returncode == 0, "events --pmus rc %d %s" % (r.returncode, r.stdout[-300:] + r.stderr))
    m = re.search(r"tracepoints +(\d+) in ", r.stdout)
    check(m and len(before & after) <= int(m.group(1)) <= len(before | after) and
          "uprobe PMU present" in r.stdout,
          "summary lacks %d tracepoints: %s" % (len(after), r.stdout[-1500:]))
    want = before & after
    check(any(l.split()[:2] == ["msr/tsc/", "OPENS"]
              for l in r.stdout.splitlines()), "msr/tsc/ does not open")
    before = tracefs_names(root)
    r = sh([A.ompfuse, "events", "--tracepoints", "--probe"], timeout=1800)
    after = tracefs_names(root)
    listed = {l.split()[0] for l in r.stdout.splitlines()
              if l.startswith("  ") and ":" in l.split()[0] and
              len(l.split()) > 1 and l.split()[1] in ("OPENS", "fails:")}
    want = before & after
    groups = len({n.split(":")[0] for n in want})
    check(want <= listed <= (before | after),
          "listed %d tracepoints, tracefs has %d (%d groups); missing %s, invented %s"
          % (len(listed), len(want), groups, sorted(want - listed)[:5],
             sorted(listed - (before | after))[:5]))
    opens = sum(1 for l in r.stdout.splitlines() if " OPENS" in l)
    for tp in (TP, "sched:sched_switch", "syscalls:sys_exit_getppid"):
        check(any(l.split()[:2] == [tp, "OPENS"] for l in r.stdout.splitlines()),
              "%s does not open" % tp)
    check(opens >= 0.9 * len(want), "only %d of %d tracepoints open" % (
        opens, len(want)))
    # libpfm4 sees tracepoints only under debugfs; its groups must open
    r = sh(["unshare", "-m", "--propagation", "private", "sh", "-c",
            "mountpoint -q /sys/kernel/debug || mount -t debugfs nodev "
            "/sys/kernel/debug; exec \"$@\"", "sh", A.ompfuse, "events",
            "--probe", "--pmu", "perf"])
    tpg = [l for l in r.stdout.splitlines() if l.startswith("  perf::sched ")]
    check(tpg and "OPENS (as perf::sched:" in tpg[0],
          "libpfm4 tracepoint group: %r" % tpg)
    # neither mounted: the mount command
    r = sh(["unshare", "-m", "--propagation", "private", "sh", "-c",
            UMOUNT_TRACEFS + "; " + UMOUNT_DEBUGFS + "; exec \"$@\"", "sh",
            A.ompfuse, "events"])
    check("tracefs is not mounted; as root: `mount -t tracefs nodev "
          "/sys/kernel/tracing`" in r.stdout, "unmounted: %s" % r.stdout[-800:])
    r = sh(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            A.ompfuse, "events"])
    check("need root or CAP_PERFMON" in r.stdout and
          "tracefs unreadable for this user: run as root" in r.stdout,
          "not root: %s" % r.stdout[-800:])


UPROBE_EVENTS = "/sys/kernel/tracing/uprobe_events"
# a private mount namespace in which tracefs is read-only: tracepoint ids
# readable, uprobe_events not writable, so ompfuse cannot hold probes
RO_TRACEFS = ["unshare", "-m", "--propagation", "private", "sh", "-c",
              "mount -o remount,bind,ro /sys/kernel/tracing && exec \"$@\"", "sh"]


def groups():
    """The ompfuse_* groups defined in uprobe_events."""
    g = set()
    for line in open(UPROBE_EVENTS):
        m = re.match(r"[pr]:([^/]+)/", line)
        if m and m.group(1).startswith("ompfuse_"):
            g.add(m.group(1))
    return g


def wait_group_gone(what, pid):
    """No group of the ompfuse process pid is left (other sessions' groups
    may come and go), waiting up to 60 s for the janitor (a killed
    ompfuse's runs may still have the probes open)."""
    g = "ompfuse_%d" % pid
    for _ in range(600):
        if g not in groups():
            break
        time.sleep(0.1)
    check(g not in groups(), "%s: group %s left in uprobe_events" % (what, g))


def run_pid(cmd, **kw):
    """Runs cmd to its end: (returncode, stderr, pid)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, **kw)
    _, err = p.communicate()
    return p.returncode, err, p.pid


def encodings(profile):
    """{event name: (perf_type, config)} recorded in a profile."""
    meta = os.path.join(A.workdir, "encodings.json")
    r = sh([A.ompfuse, "export", "--csv", "-o", os.devnull, "--metadata", meta,
            profile])
    if not check(r.returncode == 0, "export %s: %s" % (profile, r.stderr)):
        return {}
    evs = json.load(open(meta))["profiles"][0]["events"]
    return {e["name"]: (e["perf_type"], e["config"]) for e in evs}


def uprobe_pmu_type():
    return int(open("/sys/bus/event_source/devices/uprobe/type").read())


def t_plan_run():
    """ompfuse plan + ompfuse run with a tracepoint and a uprobe next to a
    software event: the slot limit splits them like any event, every run's
    counts are exact, and the HEM emulator multiplexes all three.  Twice:
    with the uprobe defined in tracefs and held by ompfuse run (recorded as
    a tracepoint), and with tracefs read-only (the uprobe PMU, a note)."""
    ensure_tracefs()
    pid = plan_run_once("held", [], 2)
    if pid:
        wait_group_gone("plan_run held", pid)
    plan_run_once("pmu", RO_TRACEFS, uprobe_pmu_type())


def plan_run_once(mode, wrap, want_type):
    events = [TP, "uprobe:%s:%s" % (A.prog, SYM), "perf::TASK-CLOCK"]
    plan = os.path.join(A.workdir, "sources.plan")
    r = sh([A.ompfuse, "plan", "--events", ",".join(events), "--slots", "2",
            "--hem", "-o", plan])
    if not check(r.returncode == 0, "plan rc %d %s" % (r.returncode, r.stderr)):
        return
    lines = [l.split() for l in open(plan) if l.strip() and l[0] != "#"]
    roles = collections.Counter(l[0] for l in lines)
    check(roles["lgl"] == 2 and roles["hem"] == 1 and roles["reference"] == 3,
          "plan roles %s" % roles)
    for l in lines:
        n = len(l[2].split(","))
        check(n == 3 if l[0].startswith("hem") else n <= 2,
              "plan line %s: %d events for 2 slots" % (l, n))
    d = os.path.join(A.workdir, "plan-run-" + mode)
    subprocess.run(["rm", "-rf", d])
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPFUSE_")}
    # The HEM runs rotate 3 events through 2 slots; every event must get a
    # window inside some XU.  At the default 4 ms period a run of a few ms
    # on a loaded machine (ASan) could see too few rotations: 250 us gives
    # every event many windows whatever the load.
    rc, err, pid = run_pid(wrap + [A.ompfuse, "run", "--plan", plan, "--out", d, "--tool", A.tool,
                                   "--env", "OMP_NUM_THREADS=2", "--env",
                                   "OMPFUSE_MUX_PERIOD_US=250", "-q", "--", A.prog] + args(),
                           env=env)
    check(rc == 0, "%s: run rc %d %s" % (mode, rc, err))
    note = "uprobes go through the uprobe PMU" in err
    check(note == (mode == "pmu"), "%s: the note line %s: %r" % (
        mode, "missing" if not note else "unexpected", err))
    runs = sorted(f for f in os.listdir(d) if f.endswith(".ompf"))
    check(len(runs) == sum(int(l[1]) for l in lines), "runs %s" % runs)
    for f in runs:
        p = Profile(os.path.join(d, f))
        names = [n for n, _ in p.events]
        if events[1] in names:
            enc = encodings(os.path.join(d, f)).get(events[1])
            check(enc and enc[0] == want_type, "%s %s: %s encoded as %s, expected type %d" % (
                mode, f, events[1], enc, want_type))
        if f.startswith("hem"):
            # hem-delta leaves an event missing in XUs no window saw
            full = f.startswith("hem-delta") or all(
                None not in x["values"] for x in p.xus)
            check(names == events and full and
                  [s for _, s in p.events] == ["estimated"] * 3 and
                  len(p.xus) == TASKS + ITERS // 4,
                  "%s: events %s, %d XUs" % (f, p.events, len(p.xus)))
            check(all(any(x["values"][e] is not None for x in p.xus)
                      for e in range(3)), "%s: an event has no estimate" % f)
            continue
        exact = [i for i, n in enumerate(names) if n in events[:2]]
        # the exact checks want the occurrence events first, in order
        sub = Profile.__new__(Profile)
        sub.rc, sub.events, sub.threads = p.rc, [p.events[i] for i in exact], []
        sub.reasons = p.reasons
        sub.xus = [dict(x, values=[x["values"][i] for i in exact])
                   for x in p.xus]
        for t in p.threads:
            sub.threads.append({"index": t["index"],
                                "total": [t["total"][i] for i in exact],
                                "gap": [t["gap"][i] for i in exact]})
        if exact:
            tot = exact_counts(sub, f, len(exact))
            check(tot == [EXPECTED] * len(exact), "%s totals %s" % (f, tot))
    return pid


def harness(tests, keys, needs):
    """Parses TEST --KEY VALUE... into tests["A"], runs tests["t_TEST"] as
    root and reports the failures (shared with run_auto.py)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("test")
    for k in keys:
        ap.add_argument("--" + k, required=True)
    tests["A"] = a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    if os.geteuid() != 0:
        print("these tests need root (%s)" % needs)
        return 1
    tests["t_" + a.test]()
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(harness(globals(), ("tool", "dump", "prog", "ompfuse", "perf", "workdir"),
                     "tracefs, uprobes, mount namespaces"))
