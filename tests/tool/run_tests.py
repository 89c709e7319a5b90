#!/usr/bin/python3
"""Tests of libompfuse.so: run programs under the tool, dump the profile
with tool_dump and assert on it line by line.  One file over 600 lines:
every ctest tool_* case is a function here sharing one runner, one dump
parser and one set of programs, like LLVM's OMPT test driver.  Usage:
  run_tests.py TEST --tool LIB --dump DUMP --bindir DIR --src DIR --workdir DIR
"""
import argparse
import collections
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

A = None
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)
    return cond


def run(prog, args, out, env_extra=None, threads=None, timeout=120,
        tool=True, clean_omp=False):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("OMPFUSE_") or k in ("OMP_NUM_THREADS",
                                             "OMP_TOOL_LIBRARIES"):
            del env[k]
        elif clean_omp and k.startswith(("OMP_", "KMP_")):
            del env[k]  # only what the test sets
    if tool:
        env["OMP_TOOL_LIBRARIES"] = A.tool
        env["OMPFUSE_OUTPUT"] = out
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    env.update(env_extra or {})
    if os.path.isfile(out):
        os.unlink(out)
    p = subprocess.run([prog] + list(args), env=env, capture_output=True,
                       text=True, timeout=timeout, cwd=A.workdir)
    return p


class Profile:
    def __init__(self, path, summary=False):
        p = subprocess.run([A.dump] + (["-s"] if summary else []) + [path],
                           capture_output=True, text=True)
        self.summary = {}
        self.path = path
        self.rc = p.returncode
        self.err = p.stderr
        self.meta = {}
        self.events = []
        self.reasons = {}
        self.xus = []
        self.threads = []
        self.constructs = {}
        self.info = {}
        for line in p.stdout.splitlines():
            f = line.split(" ")
            if f[0] == "info":
                self.info = {f[i]: int(f[i + 1])
                             for i in range(1, len(f) - 1, 2)}
            elif f[0] == "meta":
                self.meta[f[1]] = " ".join(f[2:])
            elif f[0] == "construct":
                self.constructs[f[1]] = {"kind": f[2], "build_id": f[3],
                                         "offset": int(f[4]),
                                         "module": " ".join(f[5:])}
            elif f[0] == "event":
                self.events.append((f[1], f[2]))
                self.reasons[f[1]] = " ".join(f[3:])
            elif f[0] == "xu":
                self.xus.append({
                    "label": f[1], "kind": f[2], "type": f[3],
                    "ckind": f[4], "thread": int(f[5]),
                    "team_thread": int(f[6]), "team_size": int(f[7]),
                    "cpu": int(f[8]), "iter_start": int(f[9]),
                    "iter_count": int(f[10]), "parts": int(f[11]),
                    "start": int(f[12]), "end": int(f[13]),
                    "values": [None if v == "NA" else int(v) for v in f[14:]],
                })
            elif f[0] == "summary":
                self.summary = {f[i]: int(f[i + 1])
                                for i in range(1, len(f) - 1, 2)}
            elif f[0] == "thread":
                ne = len(self.events)
                vals = f[4:]
                num = lambda v: None if v == "NA" else int(v)
                self.threads.append({
                    "index": int(f[1]), "tid": int(f[2]),
                    "total": [num(v) for v in vals[:ne]],
                    "gap": [num(v) for v in vals[ne + 1:2 * ne + 1]],
                    "enabled": [num(v) for v in
                                vals[2 * ne + 2:3 * ne + 2]],
                    "running": [num(v) for v in
                                vals[3 * ne + 3:4 * ne + 3]],
                })

        if self.rc == 0:
            check(self.info.get("xus_dropped") == 0 and
                  self.info.get("truncated") == 0,
                  "%s: reader dropped XUs: %s" % (path, self.info))

    def labels(self):
        return collections.Counter(x["label"] for x in self.xus)


def prog(name):
    return os.path.join(A.bindir, name)


def out(name):
    return os.path.join(A.workdir, name + ".ompf")


def type_offset(tname):
    m = re.match(r"^[^+@]+\+0x([0-9a-f]+)$", tname)
    return int(m.group(1), 16) if m else None


def src_line(binary, off):
    p = subprocess.run(["addr2line", "-e", binary, hex(off - 1)],
                       capture_output=True, text=True)
    m = re.search(r":(\d+)", p.stdout)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------------------

def t_listing11():
    """Listing 1.1 with 2 threads: exactly the paper's 16 XUs, labels
    written out below."""
    b = prog("tool_listing11")
    r = run(b, [], out("l11"), threads=2)
    check(r.returncode == 0 and r.stdout == "done\n",
          "listing11 output changed: %r rc=%d" % (r.stdout, r.returncode))
    check(r.stderr == "", "tool printed on stderr: %r" % r.stderr)
    p = Profile(out("l11"))
    check(p.rc == 0, "profile unreadable: " + p.err)
    check(len(p.xus) == 16, "expected 16 XUs, got %d" % len(p.xus))
    # which construct is which: by source line (see progs/listing11.c)
    src = open(os.path.join(A.src, "progs", "listing11.c")).read().split("\n")

    def line_of(pat):
        return [i + 1 for i, l in enumerate(src) if pat in l][0]
    l_static = line_of("schedule(static)")
    l_task1 = line_of("#pragma omp task")
    l_dyn = line_of("schedule(dynamic, 2)")
    l_task2 = [i + 1 for i, l in enumerate(src)
               if "#pragma omp task" in l][1]
    off = {}
    for x in p.xus:
        o = type_offset(x["type"])
        check(o is not None, "type %s is not module+offset" % x["type"])
        if o is None:
            continue
        ln = src_line(b, o)
        key = {l_static: "for1", l_task1: "task1", l_dyn: "for2",
               l_task2: "task2"}.get(ln)
        check(key is not None, "type %s maps to line %s" % (x["type"], ln))
        if key:
            check(off.setdefault(key, o) == o, "two types for " + key)
    par = {x["label"].split(".")[2] for x in p.xus}
    check(len(par) == 1, "XUs not under one parallel label: %s" % par)
    P = "0.1.%s" % (par.pop() if par else "?")
    f1, t1 = off.get("for1"), off.get("task1")
    f2, t2 = off.get("for2"), off.get("task2")
    expected = collections.Counter()
    for s in (0, 4):
        expected["%s.1.%s.%d static-chunks %d 4" % (P, f1, s, s)] += 1
        for r_ in range(1, 5):
            expected["%s.1.%s.%d.%d.%s task 0 0" % (P, f1, s, r_, t1)] += 1
    for s in (0, 2, 4, 6):
        expected["%s.2.%s.%d loop-chunk %d 2" % (P, f2, s, s)] += 1
    for tid in (0, 1):
        expected["%s.0.%d.%s task 0 0" % (P, tid, t2)] += 1
    got = collections.Counter("%s %s %d %d" % (x["label"], x["kind"],
                                               x["iter_start"],
                                               x["iter_count"])
                              for x in p.xus)
    check(got == expected, "labels differ:\n  missing %s\n  extra %s" % (
        sorted((expected - got).elements()), sorted((got - expected).elements())))
    check(p.meta.get("team_size") == "2", "team_size meta %s" %
          p.meta.get("team_size"))
    for k in ("program", "argv", "hostname", "cpu_model", "kernel",
              "omp_runtime", "start_time", "mode", "pmu_slots", "run_id",
              "tool_version", "format_version"):
        check(p.meta.get(k), "metadata %s missing" % k)
    check(p.meta.get("program", "").endswith("/tool_listing11"),
          "program meta %s" % p.meta.get("program"))
    # construct identity: the program's path, its GNU build-id, offsets
    r = subprocess.run(["readelf", "-n", b], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    check(m is not None, "test program has no build-id note")
    for name, c in p.constructs.items():
        check(c["module"] == os.path.realpath(b), "module of %s: %s" % (
            name, c["module"]))
        check(m is not None and c["build_id"] == m.group(1),
              "build-id of %s: %s" % (name, c["build_id"]))
        check(name == "tool_listing11+0x%x" % c["offset"],
              "name %s vs offset %x" % (name, c["offset"]))


# A stolen taskloop chunk waits for its creator to store its range, 50 ms
# by default, then is dropped with a warning; 4 threads on 2 loaded cores
# can preempt a creator longer.  The tests that demand every chunk give
# it 10 s, so that they check the recovery, not the machine's load.
LONG_TL_WAIT = {"OMPFUSE_TASKLOOP_WAIT_MS": "10000"}

DET_PROGRAMS = [
    ("dynamic", ["dynamic"]), ("tasks_in_loop", ["tasks_in_loop"]),
    ("fib", ["fib"]), ("taskloop", ["taskloop"]), ("nested", ["nested"]),
    ("sections_masked_single", ["sections"]),
]


def determinism(binary, args, name, runs=5, threads=4):
    ms = []
    where = collections.defaultdict(set)
    starts = []
    for i in range(runs):
        o = out("det-%s-%d" % (name, i))
        r = run(binary, args, o, threads=threads, env_extra=LONG_TL_WAIT)
        check(r.returncode == 0, "%s run %d rc=%d %s" % (name, i,
                                                          r.returncode,
                                                          r.stderr))
        p = Profile(o)
        check(p.rc == 0 and p.xus, "%s run %d: no profile" % (name, i))
        ms.append(p.labels())
        dup = [l for l, c in p.labels().items() if c > 1]
        check(not dup, "%s run %d: duplicate labels %s" % (name, i, dup[:5]))
        for x in p.xus:
            where[x["label"]].add((i, x["team_thread"]))
        starts.append(sorted(x["start"] for x in p.xus))
    for i in range(1, runs):
        if ms[i] != ms[0]:
            check(False, "%s: run %d labels differ from run 0: -%s +%s" % (
                name, i, sorted((ms[0] - ms[i]).elements())[:5],
                sorted((ms[i] - ms[0]).elements())[:5]))
    moved = sum(1 for l, s in where.items() if len({t for _, t in s}) > 1)
    print("%s: %d XUs, %d labels ran on different threads across runs" % (
        name, sum(ms[0].values()), moved))
    return moved, starts


def t_labels_deterministic():
    """Identical labels in every run of each program.  Which thread ran
    what in these free runs depends on timing (printed): on a loaded
    machine the master can take everything.  That the test tells
    thread-dependent labels apart is certain from `owned` runs, which put
    every XU on thread k (k = 0..3): each label runs on all 4 threads."""
    timing_differs = False
    for name, args in DET_PROGRAMS:
        _, starts = determinism(prog("tool_mix"), args, name)
        # ns start times of thousands of XUs (fib) never repeat exactly
        timing_differs |= len({tuple(s) for s in starts}) > 1
    check(timing_differs, "timings identical across runs")
    ref = None
    for k in range(4):
        r = run(prog("tool_mix"), ["owned", str(k)], out("owned"), threads=4)
        p = Profile(out("owned"))
        # 66 tasks of fib(8), 8 taskloop chunks, 10 dynamic + 27 guided chunks
        check(r.returncode == 0 and len(p.xus) == 111, "owned %d: rc %d, %d XUs, "
              "expected 111" % (k, r.returncode, len(p.xus)))
        off = [x["label"] for x in p.xus if x["team_thread"] != k]
        check(not off, "owned %d: XUs not on thread %d: %s" % (k, k, off[:3]))
        if ref is None:
            ref = p.labels()
        check(p.labels() == ref, "owned %d: labels differ from owner 0's: -%s +%s" % (
            k, sorted(ref - p.labels())[:3], sorted(p.labels() - ref)[:3]))


def t_taskloop_race():
    """libomp stores a taskloop chunk's range after queueing its task; a
    thief can run and finish the task first (issue 7, seen in CI as one
    chunk in 20 runs missing).  Every run must still hold all 73 XUs."""
    counts = collections.Counter()
    warned = 0
    for i in range(60):
        o = out("tlrace-%d" % (i % 4))
        r = run(prog("tool_mix"), ["taskloop"], o, threads=4, env_extra=LONG_TL_WAIT)
        check(r.returncode == 0, "taskloop run %d rc=%d" % (i, r.returncode))
        warned += "taskloop chunk task" in r.stderr
        counts[len(Profile(o).xus)] += 1
    print("taskloop: XUs per run over 60 runs: %s; runs warning of a lost "
          "chunk: %d" % (dict(counts), warned))
    check(set(counts) == {73}, "taskloop runs lost chunks: %s" % dict(counts))
    check(warned == 0, "%d runs warned of a chunk without a range" % warned)


def t_taskloop_dlopen():
    """A taskloop in a module opened with dlopen after start-up.  The tool
    loads glibc's unwinder (libgcc_s, 0.5-1 ms) at start-up only when a
    module loaded then calls taskloop (ompt-tool/imports.c), never in a
    callback: here no module did, so the construct is named after its
    enclosing one, the same in every run, with a warning that says why;
    the program's output is unchanged and libgcc_s is never loaded."""
    mod = prog("tool_dlmod.so")
    names, labels = [], []
    for i in range(2):
        r = run(prog("tool_dlopen"), [mod], out("dlopen%d" % i), threads=2,
                env_extra={"LD_DEBUG": "libs"})
        check(r.returncode == 0 and r.stdout.strip() == "threads 2 sum 499500",
              "dlopen run %d: rc %d, %r %s" % (i, r.returncode, r.stdout,
                                               r.stderr[-300:]))
        inits = re.findall(r"calling init: (\S+)", r.stderr)
        # what the tool loaded comes after it (an ASan build's program
        # brings libgcc_s itself, before the tool is loaded)
        tool_at = next((k for k, f in enumerate(inits) if "libompfuse.so" in f), len(inits))
        check(any("tool_dlmod.so" in f for f in inits) and
              not any("libgcc_s" in f for f in inits[tool_at:]),
              "dlopen run %d: the module loaded, the unwinder not by the tool: %s" % (
                  i, inits))
        check("a taskloop in a module that was not loaded when the OpenMP "
              "runtime started (opened with dlopen)" in r.stderr,
              "dlopen run %d: the warning says why: %s" % (i, r.stderr[-600:]))
        p = Profile(out("dlopen%d" % i))
        tl = {n: c for n, c in p.constructs.items() if c["kind"] == "taskloop"}
        check(len(tl) == 1 and all("@tool_dlmod.so+0x" in n for n in tl),
              "dlopen run %d: one taskloop, named by its enclosing construct "
              "in the module: %s" % (i, tl))
        chunks = [x for x in p.xus if x["kind"] == "taskloop-chunk"]
        check(len(chunks) == 8 and sum(x["iter_count"] for x in chunks) == 1000,
              "dlopen run %d: 8 chunks over 1000 iterations: %s" % (
                  i, [(x["iter_start"], x["iter_count"]) for x in chunks]))
        names.append(sorted(tl))
        labels.append(sorted(x["label"] for x in chunks))
    check(names[0] == names[1] and labels[0] == labels[1],
          "dlopen: the same construct and labels in both runs: %s %s" % (
              names, labels))
    # The same code in a library the program is linked to, itself linked
    # without the runtime (no DT_NEEDED on libomp): seen at start-up, the
    # unwinder loaded, the taskloop named at its source line in the library.
    r = run(prog("tool_linked"), [], out("linked"), threads=2,
            env_extra={"LD_DEBUG": "libs"})
    check(r.returncode == 0 and r.stdout.strip() == "sum 499500",
          "linked: rc %d, %r %s" % (r.returncode, r.stdout, r.stderr[-300:]))
    inits = re.findall(r"calling init: (\S+)", r.stderr)
    check(any("libgcc_s" in f for f in inits), "linked: the unwinder loaded: %s" % inits)
    plain = subprocess.run([prog("tool_linked")], capture_output=True, text=True,
                           env=dict(os.environ, LD_DEBUG="libs"))
    if not any("libgcc_s" in f for f in re.findall(r"calling init: (\S+)", plain.stderr)):
        # the program alone does not bring it: the tool loaded it
        tool_at = next((k for k, f in enumerate(inits) if "libompfuse.so" in f), len(inits))
        check(any("libgcc_s" in f for f in inits[tool_at:]),
              "linked: the tool loaded the unwinder: %s" % inits)
    check("warning" not in r.stderr, "linked: no warning: %s" % r.stderr[-400:])
    tl = [(n, c["module"]) for n, c in Profile(out("linked")).constructs.items()
          if c["kind"] == "taskloop"]
    check(len(tl) == 1 and "libtool_dllib.so" in tl[0][1] and "@" not in tl[0][0],
          "linked: the taskloop is the library's own construct: %s" % tl)


def t_taskloop_children():
    """A task created in a taskloop chunk is labelled under its chunk
    (label(chunk).rank.addr), also when a thief started the chunk before
    libomp stored its range: the chunk then has no dispatch event, and the
    tool must recover the range before labelling what the chunk creates,
    not only at its end (else those tasks were labelled at the root,
    0.rank.addr).  OMP_WAIT_POLICY=passive makes that race common: libomp
    wakes a sleeping thread between queueing a chunk's task and storing
    its range, and the woken thread often preempts the creator and steals
    the chunk.  Without the fix, 8 of 10 runs (another time 20 of 20) of
    these 300 two-chunk taskloops had tasks at the root (up to ~47 of
    600).  With the wait bound at 10 s no run may give up waiting for a
    range (at the default 50 ms a heavily loaded machine can make it, and
    the chunk is then lost by design, with a warning)."""
    runs, gave_up, recovered = 20, 0, 0
    for i in range(runs):
        o = out("tlchildren-%d" % (i % 2))
        r = run(prog("tool_mix"), ["taskloop_children"], o, threads=4,
                env_extra=dict(LONG_TL_WAIT, OMP_WAIT_POLICY="passive",
                               OMPFUSE_VERBOSE="1"))
        check(r.returncode == 0, "taskloop_children run %d rc=%d %s" % (
            i, r.returncode, r.stderr[-300:]))
        m = re.search(r"(\d+) taskloop chunk\(s\) ran without a dispatch",
                      r.stderr)
        recovered += int(m.group(1)) if m else 0
        if "taskloop chunk task" in r.stderr:
            gave_up += 1
            continue
        p = Profile(o)
        chunks = {x["label"] for x in p.xus if x["kind"] == "taskloop-chunk"}
        tasks = [x["label"] for x in p.xus if x["kind"] == "task"]
        # a task's label is its context's label plus rank.addr
        off = [l for l in tasks if l.rsplit(".", 2)[0] not in chunks]
        check(len(chunks) == 600 and len(tasks) == 600 and not off,
              "taskloop_children run %d: %d chunks, %d tasks, %d not under "
              "a chunk: %s" % (i, len(chunks), len(tasks), len(off), off[:3]))
    print("taskloop_children: %d runs, %d chunks ran without a dispatch "
          "(recovered), %d runs where the tool gave up waiting" % (
              runs, recovered, gave_up))
    check(gave_up == 0, "%d of %d runs gave up waiting for a chunk "
          "range" % (gave_up, runs))
    # the bound's setting: a bad value is named, and the run goes on
    r = run(prog("tool_mix"), ["taskloop"], out("tlwait-bad"), threads=2,
            env_extra={"OMPFUSE_TASKLOOP_WAIT_MS": "0"})
    check(r.returncode == 0 and "OMPFUSE_TASKLOOP_WAIT_MS=0 is not a number of "
          "milliseconds from 1 to 60000; using 50" in r.stderr,
          "OMPFUSE_TASKLOOP_WAIT_MS=0: rc %d, %s" % (r.returncode, r.stderr[-300:]))
    # libomp reports a taskloop at an address of its own; the tool names
    # it after the user code found by unwinding the stack (constructs.c,
    # user_caller): both taskloops of mix.c are constructs of tool_mix
    tl = [(n, c["module"]) for n, c in Profile(out("tlwait-bad")).constructs.items()
          if c["kind"] == "taskloop"]
    check(len(tl) == 2 and all(os.path.realpath(m) == os.path.realpath(prog("tool_mix"))
                               for _, m in tl),
          "taskloop constructs not in the program: %s" % tl)


def knapsack_run(b, args, name, threads):
    """One knapsack run under the tool.  Whatever the timing, its profile
    holds one task XU per task the program reports, and they form one
    tree: each XU's parent is another XU or the single instance (the
    tree's root), each parent's children are ranked 1..k (no XU lost).
    Returns the profile and the root's label."""
    r = run(b, args, out(name), threads=threads)
    m = re.search(r"^tasks = (\d+)$", r.stdout, re.M)
    check(r.returncode == 0 and m is not None,
          "%s: rc %d %s" % (name, r.returncode, r.stderr[-300:]))
    p = Profile(out(name))
    tasks = int(m.group(1)) if m else -1
    check(len(p.xus) == tasks and all(x["kind"] == "task" for x in p.xus),
          "%s: %d XUs for %d tasks" % (name, len(p.xus), tasks))
    labels = p.labels()
    check(all(c == 1 for c in labels.values()), "%s: duplicate labels" % name)
    ranks = collections.defaultdict(list)
    for lab in labels:
        parent, rank, _ = lab.rsplit(".", 2)
        ranks[parent].append(int(rank))
    roots = [q for q in ranks if q not in labels]
    check(len(roots) == 1, "%s: XUs without a parent XU under %s" % (name, roots[:3]))
    bad = [q for q, rs in ranks.items() if sorted(rs) != list(range(1, len(rs) + 1))]
    check(not bad, "%s: children not ranked 1..k under %s" % (name, bad[:3]))
    return p, roots[0] if roots else None


def ranks_of(p, parent):
    return sorted(int(x["label"].rsplit(".", 2)[1]) for x in p.xus
                  if x["label"].rsplit(".", 2)[0] == parent)


def t_knapsack():
    """Deterministic mode (-d): a 13,348-task tree whose labels may depend
    neither on threads nor on timing: identical at 1 thread and in three
    4-thread runs.  The test build's hook (progs/knapsack_spread.c) runs
    the root's two children on two different threads in every run, so
    every 4-thread run puts XUs on a thread other than 0, where the
    1-thread run put all: the labels are compared across different thread
    assignments whatever the load (free runs need not differ: on a loaded
    machine one thread can take everything).  The usual mode (shared
    bound) prunes with bounds at least as tight as -d's at every node, so
    its tree is part of -d's (same labels, same types) in every run:
    strictly smaller at 1 thread (one fixed order); at 4 threads how much
    smaller depends on timing (printed)."""
    b = A.knapsack or prog("tool_knapsack_spread")
    check(os.path.exists(b), "knapsack benchmark not built (%s)" % b)
    if not os.path.exists(b):
        return
    args = ["-n", "34", "-s", "2", "-c", "16"]
    d1, root = knapsack_run(b, args + ["-d"], "knap-d-1", 1)
    ref = d1.labels()
    types = {x["label"]: x["type"] for x in d1.xus}
    check(all(x["team_thread"] == 0 for x in d1.xus), "1 thread: XUs off thread 0")
    check(ranks_of(d1, root) == [1, 2], "the root has not two children: the hook cannot spread")
    where = collections.defaultdict(set)
    for i in range(3):
        p, r4 = knapsack_run(b, args + ["-d"], "knap-d-4-%d" % i, 4)
        got = p.labels()
        check(got == ref and r4 == root, "knapsack -d run %d: 4 threads gave %d XUs, 1 thread "
              "%d: labels differ: -%s +%s" % (i, len(got), len(ref), sorted(ref - got)[:3],
                                               sorted(got - ref)[:3]))
        kids = {x["team_thread"] for x in p.xus if x["label"].rsplit(".", 2)[0] == root}
        check(len(kids) == 2, "knapsack -d run %d: the root's children ran on threads %s, "
              "not on two: the labels were not compared across thread assignments" % (i, kids))
        for x in p.xus:
            where[x["label"]].add(x["team_thread"])
    moved = sum(len(t) > 1 for t in where.values())
    sizes = []
    for i, th in enumerate((1, 4, 4)):
        p, _ = knapsack_run(b, args, "knap-nd-%d" % i, th)
        sizes.append(len(p.xus))
        outside = [x["label"] for x in p.xus if types.get(x["label"]) != x["type"]]
        check(not outside, "knapsack shared bound, %d threads: labels outside -d's tree: %s"
              % (th, outside[:3]))
    check(sizes[0] < len(ref), "knapsack: the shared bound at 1 thread gave %d XUs, -d %d: "
          "-d changed nothing" % (sizes[0], len(ref)))
    print("knapsack: -d %d XUs at 1 and 4 threads (%d labels on different threads across "
          "the 4-thread runs); shared bound: %d XUs at 1 thread, %s at 4" % (
              len(ref), moved, sizes[0], sizes[1:]))


def conservation_of(p, name):
    ne = len(p.events)
    sums = collections.defaultdict(lambda: [0] * ne)
    for x in p.xus:
        for e in range(ne):
            sums[x["thread"]][e] += x["values"][e]
    for t in p.threads:
        for e in range(ne):
            tot, gap = t["total"][e], t["gap"][e]
            check(tot is not None and gap is not None,
                  "%s thread %d event %d missing" % (name, t["index"], e))
            if tot is None or gap is None:
                continue
            check(sums[t["index"]][e] + gap == tot,
                  "%s thread %d %s: XUs %d + gap %d != total %d" % (
                      name, t["index"], p.events[e][0], sums[t["index"]][e],
                      gap, tot))
    return sums


def t_conservation():
    ev = {"OMPFUSE_EVENTS": "perf::TASK-CLOCK,perf::PAGE-FAULTS"}
    for name, b, args, th in [("listing11", prog("tool_listing11"), [], 2),
                              ("tasks_in_loop", prog("tool_mix"),
                               ["tasks_in_loop"], 4),
                              ("fib", prog("tool_mix"), ["fib"], 3),
                              ("compute", prog("tool_mix"),
                               ["compute", "20000"], 2)]:
        r = run(b, args, out("cons-" + name), env_extra=ev, threads=th)
        check(r.returncode == 0, "%s rc %d" % (name, r.returncode))
        p = Profile(out("cons-" + name))
        check(p.events == [("perf::TASK-CLOCK", "counted"),
                           ("perf::PAGE-FAULTS", "counted")],
              "%s events %s" % (name, p.events))
        sums = conservation_of(p, name)
        if name == "compute":
            xu = sum(s[0] for s in sums.values())
            tot = sum(t["total"][0] for t in p.threads)
            print("compute: XUs hold %.1f%% of TASK-CLOCK" % (100 * xu / tot))
            check(xu >= 0.8 * tot, "compute: XUs hold only %d of %d ns" % (
                xu, tot))
        check(any(x["values"][0] > 0 for x in p.xus),
              "%s: no XU has TASK-CLOCK" % name)


def t_exclusive():
    ev = {"OMPFUSE_EVENTS": "perf::TASK-CLOCK"}
    r = run(prog("tool_mix"), ["taskwait_children"], out("excl"),
            env_extra=ev, threads=1)
    check(r.returncode == 0, "rc %d" % r.returncode)
    p = Profile(out("excl"))
    check(len(p.xus) == 6, "expected 6 tasks, got %d" % len(p.xus))
    if len(p.xus) != 6:
        return
    # the second instance (rank 2 under the single): warm caches
    xs = sorted(p.xus, key=lambda x: len(x["label"].split(".")))
    parents = [x for x in xs if len(x["label"].split(".")) ==
               len(xs[0]["label"].split("."))]
    check(len(parents) == 2, "expected 2 parents: %s" % [x["label"]
                                                          for x in xs])
    parent = max(parents, key=lambda x: x["label"].split(".")[-2])
    kids = [x for x in p.xus if x["label"].startswith(parent["label"] + ".")]
    check(len(kids) == 2, "children of %s: %s" % (parent["label"], kids))
    if len(kids) != 2:
        return
    # parent: work(10); each child work(20000), run inside the parent
    # (undeferred child, child during taskwait)
    pc, kc = parent["values"][0], min(k["values"][0] for k in kids)
    print("parent %d ns, children %s ns" % (pc, [k["values"][0]
                                                 for k in kids]))
    # Inclusive charging would give the parent at least both children's
    # time; exclusive gives it its own work(10) plus the runtime's and the
    # tool's cost of creating and waiting for two tasks, which under
    # AddressSanitizer on a VM reached 0.25 ms (a fifth of a child).  The
    # bound sits between: half the children's sum.
    ks = sum(k["values"][0] for k in kids)
    check(pc * 2 < ks, "parent charged %d ns vs children %d ns: not "
          "exclusive" % (pc, ks))
    check(parent["end"] > max(k["end"] for k in kids) and
          parent["start"] < min(k["start"] for k in kids),
          "children did not run inside the parent")


def t_sibcall_identity():
    """Without -fno-optimize-sibling-calls some codeptr_ra point into
    libomp: identities must stay distinct per source construct."""
    for mode, want in (("tasks_in_loop", 6), ("nested", 4),
                       ("taskloop", 3)):
        for b in (prog("tool_mix_o2"), prog("tool_mix")):
            r = run(b, [mode], out("sib-" + mode), threads=2)
            check(r.returncode == 0, "%s rc %d" % (mode, r.returncode))
            p = Profile(out("sib-" + mode))
            types = {x["type"] for x in p.xus}
            print("%s %s: %d types %s" % (os.path.basename(b), mode,
                                          len(types), sorted(types)))
            check(len(types) == want, "%s %s: %d construct identities, "
                  "expected %d (%s)" % (os.path.basename(b), mode,
                                        len(types), want, sorted(types)))
            warn = [l for l in r.stderr.splitlines() if "warning" in l]
            check(len(warn) == len(set(warn)) and len(warn) <= 2,
                  "warnings repeated: %s" % warn)
            # labels under a type never mix kinds of construct
            by_type = collections.defaultdict(set)
            for x in p.xus:
                by_type[x["type"]].add(x["kind"])
            check(all(len(v) == 1 for v in by_type.values()),
                  "a type mixes XU kinds: %s" % dict(by_type))


def t_bad_config():
    b = prog("tool_mix")
    ref = run(b, ["fib"], out("ref"), tool=False, threads=2)
    # unknown event: one message naming it; program unchanged
    r = run(b, ["fib"], out("bad-ev"), threads=2, env_extra={
        "OMPFUSE_EVENTS": "perf::TASK-CLOCK,NO_SUCH_EVENT"})
    check(r.returncode == ref.returncode and r.stdout == ref.stdout,
          "unknown event changed the program")
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 1 and "NO_SUCH_EVENT" in lines[0] and
          "unknown event" in lines[0],
          "unknown event: expected one clear line, got %r" % r.stderr)
    p = Profile(out("bad-ev"))
    check(("NO_SUCH_EVENT", "failed") in p.events and
          ("perf::TASK-CLOCK", "counted") in p.events,
          "events in profile: %s" % p.events)
    check(p.xus and all(x["values"][1] is None and x["values"][0] is not None
                        for x in p.xus), "values of the failed event")
    # more events than slots
    r = run(b, ["fib"], out("bad-slots"), threads=2, env_extra={
        "OMPFUSE_EVENTS": "perf::TASK-CLOCK,perf::PAGE-FAULTS,"
                          "perf::CPU-CLOCK", "OMPFUSE_PMU_SLOTS": "2"})
    check(r.returncode == ref.returncode and r.stdout == ref.stdout,
          "slots changed the program")
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 1 and "OMPFUSE_PMU_SLOTS=2" in lines[0],
          "slots: expected one line, got %r" % r.stderr)
    p = Profile(out("bad-slots"))
    check(p.meta.get("pmu_slots") == "2", "pmu_slots meta")
    # unwritable output
    r = run(b, ["fib"], "/proc/no/such/dir/x.ompf", threads=2)
    check(r.returncode == ref.returncode and r.stdout == ref.stdout,
          "unwritable output changed the program")
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 1 and "/proc/no/such/dir/x.ompf" in lines[0],
          "unwritable: expected one line, got %r" % r.stderr)
    # strict: documented non-zero exit
    for env in ({"OMPFUSE_EVENTS": "NO_SUCH_EVENT"},
                {"OMPFUSE_EVENTS": "perf::TASK-CLOCK,perf::PAGE-FAULTS",
                 "OMPFUSE_PMU_SLOTS": "1"}):
        env["OMPFUSE_STRICT"] = "1"
        r = run(b, ["fib"], out("strict"), threads=2, env_extra=env)
        check(r.returncode == 125, "strict %s: rc %d" % (env, r.returncode))
        check(len(r.stderr.strip().splitlines()) == 1 and
              "OMPFUSE_STRICT" in r.stderr, "strict message %r" % r.stderr)
        check(not [f for f in os.listdir(A.workdir)
                   if f.startswith("strict.ompf")], "strict left files")
    r = run(b, ["fib"], "/proc/no/such/dir/x.ompf", threads=2,
            env_extra={"OMPFUSE_STRICT": "1"})
    check(r.returncode == 125, "strict unwritable rc %d" % r.returncode)
    # output directory: unique name inside
    d = os.path.join(A.workdir, "outdir")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    r = run(b, ["fib"], d + "/", threads=2)
    files = os.listdir(d)
    check(len(files) == 1 and files[0].startswith("tool_mix.") and
          files[0].endswith(".ompf"), "directory output: %s" % files)
    # mode and role metadata
    r = run(b, ["fib"], out("mode"), threads=2, env_extra={
        "OMPFUSE_MODE": "reference", "OMPFUSE_ROLE": "ref-3"})
    p = Profile(out("mode"))
    check(r.stderr == "" and p.meta.get("mode") == "reference" and
          p.meta.get("role") == "ref-3", "mode/role: %s %s %r" % (
              p.meta.get("mode"), p.meta.get("role"), r.stderr))
    r = run(b, ["fib"], out("mode"), threads=2, env_extra={
        "OMPFUSE_MODE": "bogus"})
    p = Profile(out("mode"))
    check(len(r.stderr.strip().splitlines()) == 1 and "bogus" in r.stderr
          and p.meta.get("mode") == "run", "bad mode: %r" % r.stderr)
    # verbose: one line per thread/counter decision
    r = run(b, ["fib"], out("verbose"), threads=2, env_extra={
        "OMPFUSE_VERBOSE": "1", "OMPFUSE_EVENTS": "perf::TASK-CLOCK"})
    check("thread 0" in r.stderr and "wrote" in r.stderr,
          "verbose output: %r" % r.stderr)


def t_robust():
    ev = {"OMPFUSE_EVENTS": "perf::TASK-CLOCK,perf::PAGE-FAULTS"}
    b = prog("tool_mix")
    cases = [("64threads", ["tasks_in_loop"], 64, 0, 20 + 120 + 2 * 64),
             ("nested", ["nested"], 4, 0, 30),
             ("many_tasks", ["many_tasks", "1000000"], 2, 0, 1000000),
             ("many_chunks", ["many_chunks", "200000"], 3, 0, 200000),
             ("untied", ["untied"], 4, 0, 8),
             ("exit", ["exit"], 4, 7, 20),
             ("exit_worker", ["exit_worker"], 4, 7, 20),
             ("one_thread", ["tasks_in_loop"], 1, 0, 1 + 40 * 3 + 2)]
    for name, args, th, rc, nxu in cases:
        ref = run(b, args, out("r"), tool=False, threads=th, timeout=240)
        # 10^6 tasks: labels and timestamps only (a counter read costs
        # microseconds on a VM; counters are exercised by the others)
        r = run(b, args, out("rob-" + name),
                env_extra={} if name == "many_tasks" else ev, threads=th,
                timeout=240)
        check(r.returncode == rc == ref.returncode,
              "%s: rc %d (expected %d)" % (name, r.returncode, rc))
        check(r.stdout == ref.stdout, "%s: output changed" % name)
        check(r.stderr == "", "%s: stderr %r" % (name, r.stderr[:300]))
        if name == "many_tasks":
            # 10^6 XUs: counted and checked for distinct labels in C
            p = Profile(out("rob-" + name), summary=True)
            check(p.rc == 0, "%s: profile unreadable %s" % (name, p.err))
            check(p.summary.get("xus") == nxu and
                  p.summary.get("distinct_labels") == nxu,
                  "%s: %s, expected %d distinct XUs" % (name, p.summary, nxu))
            print("%s: %s" % (name, p.summary))
            continue
        p = Profile(out("rob-" + name))
        check(p.rc == 0, "%s: profile unreadable %s" % (name, p.err))
        check(len(p.xus) == nxu, "%s: %d XUs, expected %d" % (
            name, len(p.xus), nxu))
        if not name.startswith("exit") and name != "untied":
            conservation_of(p, name)
        print("%s: %d XUs, %d threads" % (name, len(p.xus), len(p.threads)))


def t_fork_chdir():
    """Relative OMPFUSE_OUTPUT after chdir("/"), fork() + exit() in the
    child: the parent's profile lands in the starting directory, whole."""
    name = "fork-rel.ompf"
    path = os.path.join(A.workdir, name)
    if os.path.exists(path):
        os.unlink(path)
    # (under ASan, LeakSanitizer would report libomp's memory in the
    # exiting child: not what this test is about)
    r = run(prog("tool_mix"), ["fork_chdir"], name, threads=2,
            env_extra={"ASAN_OPTIONS": "detect_leaks=0"})
    check(r.returncode == 0 and r.stdout == "forked\n" and r.stderr == "",
          "fork_chdir rc %d %r %r" % (r.returncode, r.stdout, r.stderr))
    check(os.path.exists(path), "profile not at %s" % path)
    p = Profile(path)
    check(p.rc == 0 and len(p.xus) == 20, "fork_chdir: rc %d, %d XUs" % (
        p.rc, len(p.xus)))
    check(not [f for f in os.listdir(A.workdir) if ".tmp." in f],
          "temporary files left: %s" % os.listdir(A.workdir))


def t_gcc_route():
    """gcc-built binary on libomp through libgomp.so.1 -> libomp.so.5."""
    gcc = shutil.which("gcc")
    check(gcc is not None, "gcc not found")
    if not gcc:
        return
    exe = os.path.join(A.workdir, "mix_gcc")
    r = subprocess.run([gcc, "-fopenmp", "-O2", "-g",
                        os.path.join(A.src, "progs", "mix.c"), "-o", exe],
                       capture_output=True, text=True)
    check(r.returncode == 0, "gcc build failed: " + r.stderr)
    d = os.path.join(A.workdir, "gomp")
    os.makedirs(d, exist_ok=True)
    link = os.path.join(d, "libgomp.so.1")
    if os.path.lexists(link):
        os.unlink(link)
    omp = "/usr/lib/llvm-19/lib/libomp.so.5"
    os.symlink(omp, link)
    env = {"LD_LIBRARY_PATH": d}
    if A.preload:
        env["LD_PRELOAD"] = A.preload
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    r = run(exe, ["tasks_in_loop"], out("gcc"), env_extra=env, threads=2)
    check(r.returncode == 0, "gcc route rc %d %s" % (r.returncode, r.stderr))
    p = Profile(out("gcc"))
    check("LLVM" in p.meta.get("omp_runtime", ""), "runtime %s" %
          p.meta.get("omp_runtime"))
    kinds = collections.Counter(x["kind"] for x in p.xus)
    check(kinds["task"] == 40 * 3 + 2 * 2 and kinds["loop-chunk"] == 20,
          "gcc route XUs: %s" % kinds)
    ms = [p.labels()]
    for i in range(2):
        run(exe, ["tasks_in_loop"], out("gcc%d" % i), env_extra=env,
            threads=2)
        ms.append(Profile(out("gcc%d" % i)).labels())
    check(ms[0] == ms[1] == ms[2], "gcc route labels not deterministic")


# ---- HEM modes (docs/hem.md) ---------------------------------------------

HEM_EVENTS = ("perf::TASK-CLOCK,perf::CPU-CLOCK,perf::PAGE-FAULTS,"
              "perf::MINOR-FAULTS")


def hem_env(mode, period_us=None, slots="2", extra=None):
    env = {"OMPFUSE_MODE": mode, "OMPFUSE_EVENTS": HEM_EVENTS,
           "OMPFUSE_PMU_SLOTS": slots}
    if period_us is not None:
        env["OMPFUSE_MUX_PERIOD_US"] = str(period_us)
    env.update(extra or {})
    return env


def hem_checks(p, name, mode):
    """Metadata and event statuses every HEM profile must carry."""
    check(p.rc == 0, "%s: profile unreadable %s" % (name, p.err))
    check(p.meta.get("mode") == mode, "%s: mode %s" % (name,
                                                        p.meta.get("mode")))
    keys = ["mux_period_us", "mux_clock", "mux_signal", "pmu_slots",
            "hem_engine"]
    if p.meta.get("hem_engine") == "emulator":
        keys += ["hem_rotations", "hem_signals", "hem_deferred_signals",
                 "hem_catchups", "hem_read_errors"]
    for k in keys:
        check(p.meta.get(k), "%s: metadata %s missing" % (name, k))
    check(all(st == "estimated" for _, st in p.events),
          "%s: event statuses %s" % (name, p.events))


def t_hem_half_running():
    """2 slots, 4 software events, a long compute loop: every event runs
    about half of its enabled time; scaled TASK-CLOCK total close to an
    unmultiplexed run's; hem XUs + gap telescope to the thread total."""
    b = prog("tool_mix")
    args = ["compute", "300000"]

    def plain_run(i):
        r = run(b, args, out("plain%d" % i), threads=2, env_extra={
            "OMPFUSE_EVENTS": "perf::TASK-CLOCK"})
        check(r.returncode == 0, "plain rc %d" % r.returncode)
        return sum(t["total"][0] for t in Profile(out("plain%d" % i)).threads)
    # plain runs before and after each HEM run: the machine is shared,
    # its speed drifts
    plain = [plain_run(0)]
    for mode in ("hem", "hem-delta"):
        o = out("half-" + mode)
        r = run(b, args, o, threads=2, env_extra=hem_env(mode))
        check(r.returncode == 0 and r.stderr == "",
              "%s: rc %d stderr %r" % (mode, r.returncode, r.stderr))
        p = Profile(o)
        hem_checks(p, mode, mode)
        check(p.meta.get("pmu_slots") == "2" and
              p.meta.get("mux_period_us") == "4000",
              "%s: slots/period meta %s %s" % (mode, p.meta.get("pmu_slots"),
                                               p.meta.get("mux_period_us")))
        check(int(p.meta.get("hem_rotations", "0")) > 20,
              "%s: only %s rotations" % (mode, p.meta.get("hem_rotations")))
        ratios = []
        for t in p.threads:
            if not t["enabled"][0] or t["enabled"][0] < 100e6:
                continue  # a thread that barely ran: no rotation expected
            for e in range(4):
                q = t["running"][e] / t["enabled"][e]
                ratios.append(q)
                check(abs(q - 0.5) <= 0.1, "%s thread %d %s: running/"
                      "enabled %.3f, expected 0.5 +- 0.1" % (
                          mode, t["index"], p.events[e][0], q))
        check(len(ratios) >= 4, "%s: no thread ran 100 ms" % mode)
        print("%s: running/enabled per thread and event: %s" % (
            mode, " ".join("%.3f" % q for q in ratios)))
        # same run: the emulation clock (the group's time enabled) is the
        # thread's on-CPU time, i.e. the unmultiplexed TASK-CLOCK
        for t in p.threads:
            en = t["enabled"][0]
            if en and en > 100e6:
                d = t["total"][0] / en - 1
                print("%s thread %d: scaled TASK-CLOCK %+.3f%% of its "
                      "unmultiplexed value" % (mode, t["index"], 100 * d))
                check(abs(d) <= 0.02, "%s thread %d: scaled TASK-CLOCK "
                      "off by %.2f%% (bound 2%%)" % (mode, t["index"],
                                                     100 * d))
        plain.append(plain_run(len(plain)))
        tc = sum(t["total"][0] for t in p.threads)
        dev = tc / statistics.mean(plain[-2:]) - 1
        print("%s: scaled TASK-CLOCK %d ns vs plain runs before/after %s: "
              "%+.2f%%" % (mode, tc, plain[-2:], 100 * dev))
        # another run: the shared VM (and ASan, whose signal handling makes
        # the multiplexed run itself slower) move CPU time between runs of
        # the same loop (+36 % seen under load, one run in five); the exact
        # check is the same-run one above, this one catches gross scaling
        # errors: a factor 2 either way (-50 %, +100 %) is outside
        check(-0.4 <= dev <= 0.6, "%s: scaled TASK-CLOCK off by %.1f%% "
              "from plain runs (bounds -40%%, +60%%: a factor 2 is "
              "outside)" % (mode, 100 * dev))
        if mode == "hem":
            # cumulative scaling telescopes: XUs + gap = scaled total
            # (values are printed rounded: 0.5 per XU)
            n = collections.Counter(x["thread"] for x in p.xus)
            for t in p.threads:
                for e in range(4):
                    s = sum(x["values"][e] for x in p.xus
                            if x["thread"] == t["index"])
                    d = abs(s + t["gap"][e] - t["total"][e])
                    check(d <= 0.5 * n[t["index"]] + 2 + 1e-6 *
                          abs(t["total"][e]),
                          "hem thread %d %s: XUs %d + gap %d != total %d" %
                          (t["index"], p.events[e][0], s, t["gap"][e],
                           t["total"][e]))


def t_hem_short_missing():
    """10^4 tasks much shorter than the period: in hem-delta most XUs miss
    the events that were outside the window; hem never misses."""
    b = prog("tool_mix")
    args = ["many_tasks", "10000"]
    for mode in ("hem-delta", "hem"):
        o = out("short-" + mode)
        r = run(b, args, o, threads=2, env_extra=hem_env(mode))
        check(r.returncode == 0 and r.stderr == "",
              "%s: rc %d %r" % (mode, r.returncode, r.stderr))
        p = Profile(o)
        hem_checks(p, mode, mode)
        check(len(p.xus) == 10000, "%s: %d XUs" % (mode, len(p.xus)))
        miss = [sum(v is None for v in x["values"]) for x in p.xus]
        vals = sum(miss) / (4.0 * max(1, len(miss)))
        two = sum(m >= 2 for m in miss) / max(1, len(miss))
        print("%s: %.1f%% of XUs miss >= 2 of 4 events, %.1f%% of values "
              "missing" % (mode, 100 * two, 100 * vals))
        if mode == "hem-delta":
            check(two >= 0.9, "hem-delta: only %.1f%% of short XUs miss >= 2 "
                  "events (bound 90%%)" % (100 * two))
            check(vals >= 0.45, "hem-delta: %.1f%% values missing" %
                  (100 * vals))
        else:
            check(vals == 0, "hem: %.1f%% values missing" % (100 * vals))


def faults_profiles(args, tag, period=None):
    b = prog("tool_hem")
    ref = out("%s-ref" % tag)
    r = run(b, args, ref, threads=2, env_extra={
        "OMPFUSE_MODE": "reference", "OMPFUSE_EVENTS": HEM_EVENTS})
    check(r.returncode == 0, "%s reference rc %d %s" % (tag, r.returncode,
                                                         r.stderr))
    hem = out("%s-hem" % tag)
    r = run(b, args, hem, threads=2, env_extra=hem_env("hem", period))
    check(r.returncode == 0, "%s hem rc %d %s" % (tag, r.returncode,
                                                   r.stderr))
    return Profile(ref), Profile(hem)


def t_hem_taco():
    """TACO section 5.1: per-XU hem estimates of PAGE-FAULTS against the
    truth.  tool_hem timed_faults: every iteration (one XU) lasts the same
    CPU time; even ones fault PAGES times spread over it, odd ones never
    (the truth is fixed per iteration, whatever the run; a reference run
    measures it without multiplexing).  Short XUs (1/20 of the period):
    wildly off; long XUs (25 periods of CPU): close.

    For an XU much shorter than the period, hem is about the thread's
    average fault rate times the XU's length: alike for every XU when the
    lengths are alike, so off by about PAGES / 2 (50 %) for faulting and
    pure XUs.  The XU length therefore comes from the measured cost of the
    faults (3x it, so that faulting XUs are no longer than pure ones; a
    fault costs ~1 us on bare metal, ~40 us on some VMs),
    and the period from the XU length: the same experiment on any machine.
    (With fixed work per XU, 16 faults at ~40 us made faulting XUs 14x
    longer than pure ones, and the average rate times the length came
    within 7-15 % of the truth.)"""
    pages = 8
    r = run(prog("tool_hem"), ["fault_cost", str(pages)], out("x"),
            tool=False)
    m = re.match(r"fault_cost \d+ pages: ([0-9.]+) us", r.stdout)
    if not check(r.returncode == 0 and m, "fault_cost: rc %d %r" % (
            r.returncode, r.stdout + r.stderr)):
        return
    cost = float(m.group(1))
    xu_us = int(max(100, 3 * cost))
    period = max(4000, 20 * xu_us)
    print("faulting %d pages costs %.1f us of CPU: short XUs of %d us, "
          "period %d us, long XUs of 25 periods" % (pages, cost, xu_us,
                                                    period))
    res = {}
    for tag, pg, args in (
            ("short", pages, ["timed_faults", "400", str(pages),
                              str(xu_us)]),
            # 1000 faults, so that a few dozen more or less in the HEM
            # run weigh little: under ASan its fake stack faults in ~0.7
            # pages per timer signal, ~16 in a long XU
            ("long", 1000, ["timed_faults", "8", "1000",
                            str(25 * period)])):
        ref, hem = faults_profiles(args, tag, period)
        hem_checks(hem, tag, "hem")
        check(hem.meta.get("mux_period_us") == str(period),
              "%s: mux_period_us %s, expected %d" % (
                  tag, hem.meta.get("mux_period_us"), period))
        truth = {x["iter_start"]: x["values"][2] for x in ref.xus}
        # the reference confirms the construction (up to the faults of
        # the runtime, the tool, and ASan's shadow pages: 1 per 8 pages)
        bad = [i for i, v in truth.items()
               if not (pg <= v <= 1.2 * pg + 4 if i % 2 == 0
                       else v <= 0.1 * pg + 4)]
        print("%s: reference PAGE-FAULTS per XU: %s" % (
            tag, sorted(collections.Counter(truth.values()).items())[:12]))
        check(len(bad) <= max(1, 0.1 * len(truth)), "%s: reference "
              "PAGE-FAULTS not "
              "as constructed at iterations %s" % (tag, bad[:10]))
        errs = [abs(x["values"][2] - truth[x["iter_start"]]) / pg
                for x in hem.xus if x["iter_start"] in truth]
        check(len(errs) == len(truth), "%s: %d of %d XUs matched" % (
            tag, len(errs), len(truth)))
        errs.sort()
        mean = sum(errs) / len(errs) if errs else float("nan")
        res[tag] = mean
        print("%s XUs: mean |hem - truth| = %.1f%% of the faults of a "
              "faulting XU (median %.1f%%, max %.1f%%)" % (
                  tag, 100 * mean, 100 * errs[len(errs) // 2],
                  100 * errs[-1]) if errs else "%s: no XUs" % tag)
    check(res.get("short", 0) >= 0.3, "short XUs: mean error %.1f%% "
          "(expected >= 30%%; about 50%% in theory)" %
          (100 * res.get("short", 0)))
    check(res.get("long", 1) <= 0.15, "long XUs: mean error %.1f%% "
          "(expected <= 15%%)" % (100 * res.get("long", 1)))
    check(res.get("long", 1) * 5 <= res.get("short", 0),
          "long XUs (%.1f%%) not clearly better than short (%.1f%%): "
          "expected at least 5x" % (100 * res.get("long", 1),
                                    100 * res.get("short", 0)))


def t_hem_evaluate():
    """`ompfuse evaluate` on HEM profiles of the tool: finite EPD; the
    missing hem-delta values are left out and counted."""
    check(A.ompfuse and os.path.exists(A.ompfuse), "ompfuse not given")
    b = prog("tool_hem")
    args = ["faults", "300", "16", "2000"]
    refs = []
    for i in range(3):
        o = out("eval-ref%d" % i)
        r = run(b, args, o, threads=2, env_extra={
            "OMPFUSE_MODE": "reference", "OMPFUSE_EVENTS": HEM_EVENTS})
        check(r.returncode == 0, "reference rc %d" % r.returncode)
        refs.append(o)
    targets = []
    for mode in ("hem", "hem-delta"):
        o = out("eval-" + mode)
        r = run(b, args, o, threads=2, env_extra=hem_env(mode))
        check(r.returncode == 0, "%s rc %d" % (mode, r.returncode))
        targets.append("%s=%s" % (mode, o))
    r = subprocess.run([A.ompfuse, "evaluate", "-q", "--references"] + refs +
                       ["--"] + targets, capture_output=True, text=True)
    print(r.stdout)
    check(r.returncode == 0, "evaluate rc %d: %s" % (r.returncode, r.stderr))
    got = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(hem|hem-delta)\s+(\S+)\s+(\d+)/(\d+)\s+(\d+)",
                     line)
        if m:
            got[m.group(1)] = (float(m.group(2)), int(m.group(5)))
    for mode in ("hem", "hem-delta"):
        check(mode in got and math.isfinite(got[mode][0]) and
              got[mode][0] > 0, "%s: no finite EPD in %r" % (mode, r.stdout))
    if len(got) == 2:
        check(got["hem"][1] == 0, "hem left XUs out: %s" % (got,))
        check(got["hem-delta"][1] > 0, "hem-delta left nothing out: %s" %
              (got,))


def t_hem_program_unchanged():
    """Timer signals every 0.1 ms: the observed program's output and exit
    status are those of a run without the tool; exit() from the master and
    from a worker, threads ending, fork: engines stopped, profile whole."""
    b = prog("tool_hem")
    ref = run(b, ["io", "300"], out("x"), threads=2, tool=False)
    check(ref.returncode == 3, "io without tool rc %d" % ref.returncode)
    for mode, extra in (("hem", {}), ("hem-delta", {}),
                        ("hem", {"OMPFUSE_MUX_CLOCK": "cpu"})):
        o = out("io-" + mode)
        r = run(b, ["io", "300"], o, threads=2,
                env_extra=hem_env(mode, 100, extra=extra))
        tag = "%s %s" % (mode, extra)
        check(r.returncode == ref.returncode, "%s: rc %d" % (tag,
                                                             r.returncode))
        check(r.stdout == ref.stdout, "%s: output changed" % tag)
        check(r.stderr == "", "%s: stderr %r" % (tag, r.stderr))
        p = Profile(o)
        hem_checks(p, tag, mode)
        sig = int(p.meta.get("hem_signals", "0"))
        print("%s: %d XUs, %s signals, %s rotations, %s deferred" % (
            tag, len(p.xus), sig, p.meta.get("hem_rotations"),
            p.meta.get("hem_deferred_signals")))
        if not extra:
            check(sig > 100, "%s: only %d timer signals" % (tag, sig))
    m = prog("tool_mix")
    for name, args, th, nxu in (("exit", ["exit"], 4, 20),
                                ("exit_worker", ["exit_worker"], 4, 20),
                                ("nested", ["nested"], 4, 30),
                                ("64threads", ["tasks_in_loop"], 64,
                                 20 + 120 + 2 * 64),
                                ("fork", ["fork_chdir"], 2, 20)):
        ref = run(m, args, out("x"), threads=th, tool=False)
        o = os.path.join(A.workdir, "rob-%s.ompf" % name)
        r = run(m, args, o, threads=th, env_extra=hem_env(
            "hem-delta", 100, extra={"ASAN_OPTIONS": "detect_leaks=0"}
            if name == "fork" else None))
        check(r.returncode == ref.returncode and r.stdout == ref.stdout,
              "%s: rc %d/%d, output %r vs %r" % (name, r.returncode,
                                                 ref.returncode, r.stdout,
                                                 ref.stdout))
        check(r.stderr == "", "%s: stderr %r" % (name, r.stderr[:300]))
        p = Profile(o)
        hem_checks(p, name, "hem-delta")
        check(len(p.xus) == nxu, "%s: %d XUs, expected %d" % (
            name, len(p.xus), nxu))


def t_hem_both():
    """OMPFUSE_HEM_BOTH=1: the other estimator in a sibling file with the
    same XUs (labels, threads, timestamps, order), thread times and run
    id; hem never misses, hem-delta does on short XUs."""
    b = prog("tool_mix")
    for mode, other in (("hem", "hem-delta"), ("hem-delta", "hem")):
        o = out("both-" + mode)
        sib = o[:-len(".ompf")] + "." + other + ".ompf"
        if os.path.exists(sib):
            os.unlink(sib)
        r = run(b, ["many_tasks", "5000"], o, threads=2,
                env_extra=hem_env(mode, extra={"OMPFUSE_HEM_BOTH": "1"}))
        check(r.returncode == 0 and r.stderr == "",
              "%s: rc %d %r" % (mode, r.returncode, r.stderr))
        check(os.path.exists(sib), "%s: no sibling %s" % (mode, sib))
        if not os.path.exists(sib):
            continue
        p, q = Profile(o), Profile(sib)
        hem_checks(p, mode, mode)
        hem_checks(q, "sibling of " + mode, other)
        check(p.meta.get("run_id") == q.meta.get("run_id") and
              p.meta.get("hem_sibling") == sib and
              q.meta.get("hem_sibling") == o,
              "%s: run_id/hem_sibling metadata" % mode)
        key = lambda x: (x["label"], x["thread"], x["start"], x["end"],
                         x["kind"], x["type"])
        check(len(p.xus) == 5000 and [key(x) for x in p.xus] ==
              [key(x) for x in q.xus], "%s: XUs differ from the sibling's" %
              mode)
        hem_p = p if mode == "hem" else q
        delta_p = q if mode == "hem" else p
        nmiss = lambda pr: sum(v is None for x in pr.xus for v in x["values"])
        check(nmiss(hem_p) == 0, "%s: hem values missing" % mode)
        frac = nmiss(delta_p) / (4.0 * len(delta_p.xus))
        check(frac >= 0.45, "%s: only %.1f%% of hem-delta values missing" %
              (mode, 100 * frac))
        for tp, tq in zip(p.threads, q.threads):
            check(tp["enabled"] == tq["enabled"] and
                  tp["running"] == tq["running"],
                  "%s thread %d: enabled/running differ" % (mode,
                                                            tp["index"]))
            # over the whole thread both estimators scale the same totals
            # (they differ only by the first reading, microseconds after
            # the engine started: cumulative subtracts its scaled value,
            # delta its raw one; under ASan that reading can hold a few
            # page faults of the new thread's shadow memory, seen up to 3)
            for e in range(4):
                a_, b_ = tp["total"][e], tq["total"][e]
                check(a_ is None or b_ is None or
                      abs(a_ - b_) <= 1e-3 * max(abs(a_), abs(b_)) + 8,
                      "%s thread %d %s: totals %s vs %s" % (
                          mode, tp["index"], p.events[e][0], a_, b_))
        print("%s + sibling %s: %d XUs, %.1f%% hem-delta values missing" % (
            mode, other, len(p.xus), 100 * frac))


def t_hem_kernel_engine():
    """The kernel path (one group per event, as for hardware events),
    forced on software events, which the kernel never multiplexes:
    running == enabled, estimates are the counts, nothing missing, XUs +
    gap = total.  With OMPFUSE_PMU_SLOTS it falls back to the emulator
    with one line."""
    b = prog("tool_mix")
    for mode in ("hem", "hem-delta"):
        o = out("kernel-" + mode)
        r = run(b, ["compute", "20000"], o, threads=2, env_extra={
            "OMPFUSE_MODE": mode, "OMPFUSE_EVENTS": HEM_EVENTS,
            "OMPFUSE_HEM_ENGINE": "kernel"})
        check(r.returncode == 0 and r.stderr == "",
              "%s: rc %d %r" % (mode, r.returncode, r.stderr))
        p = Profile(o)
        hem_checks(p, "kernel " + mode, mode)
        check(p.meta.get("hem_engine") == "kernel" and
              p.meta.get("mux_clock") == "kernel" and
              p.meta.get("pmu_slots") == "unlimited",
              "kernel %s: metadata %s" % (mode, p.meta))
        check(all(v is not None for x in p.xus for v in x["values"]),
              "kernel %s: missing values" % mode)
        for t in p.threads:
            check(t["enabled"] == t["running"] and t["enabled"][0] > 0,
                  "kernel %s thread %d: enabled %s running %s" % (
                      mode, t["index"], t["enabled"], t["running"]))
        n = collections.Counter(x["thread"] for x in p.xus)
        for t in p.threads:
            for e in range(4):
                s_ = sum(x["values"][e] for x in p.xus
                         if x["thread"] == t["index"])
                check(abs(s_ + t["gap"][e] - t["total"][e]) <=
                      0.5 * n[t["index"]] + 2,
                      "kernel %s thread %d %s: XUs %d + gap %d != %d" % (
                          mode, t["index"], p.events[e][0], s_, t["gap"][e],
                          t["total"][e]))
    r = run(b, ["compute", "2000"], out("kernel-slots"), threads=2,
            env_extra=hem_env("hem", extra={"OMPFUSE_HEM_ENGINE": "kernel"}))
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 0 and len(lines) == 1 and
          "OMPFUSE_PMU_SLOTS" in lines[0], "kernel + slots: %r" % r.stderr)
    check(Profile(out("kernel-slots")).meta.get("hem_engine") == "emulator",
          "kernel + slots: not the emulator")
    # only software events, no slots: 2 emulated counters, one line
    r = run(b, ["compute", "2000"], out("default-slots"), threads=2,
            env_extra={"OMPFUSE_MODE": "hem", "OMPFUSE_EVENTS": HEM_EVENTS})
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 0 and len(lines) == 1 and
          "emulating 2 counters" in lines[0], "default slots: %r" % r.stderr)
    check(Profile(out("default-slots")).meta.get("pmu_slots") == "2",
          "default slots: pmu_slots meta")


def t_hem_no_pmu():
    """Hardware events in a HEM mode on the kernel path: an event the
    machine cannot count gives one warning line naming it, worded as in
    the plain mode (counters' diagnosis, e.g. no hardware PMU in a VM);
    the program's output and exit status are those of a run without the
    tool, the software events are still estimated."""
    b = prog("tool_hem")
    ref = run(b, ["io", "50"], out("x"), threads=2, tool=False)
    check(ref.returncode == 3, "io without tool rc %d" % ref.returncode)
    evs = "cycles,perf::TASK-CLOCK,instructions,perf::PAGE-FAULTS"
    hw = ("cycles", "instructions")
    # the plain mode's words for the same events on this machine
    r = run(b, ["io", "50"], out("nopmu-plain"), threads=2,
            env_extra={"OMPFUSE_EVENTS": evs})
    plain = sorted(l for l in r.stderr.splitlines() if "warning" in l)
    for mode in ("hem", "hem-delta"):
        o = out("nopmu-" + mode)
        r = run(b, ["io", "50"], o, threads=2,
                env_extra={"OMPFUSE_MODE": mode, "OMPFUSE_EVENTS": evs})
        check(r.returncode == ref.returncode, "%s: rc %d" % (mode,
                                                             r.returncode))
        check(r.stdout == ref.stdout, "%s: output changed" % mode)
        lines = sorted(r.stderr.splitlines())
        print("%s: %r" % (mode, lines))
        check(lines == plain, "%s: warnings %r differ from the plain "
              "mode's %r" % (mode, lines, plain))
        p = Profile(o)
        check(p.rc == 0 and p.meta.get("hem_engine") == "kernel",
              "%s: profile %s engine %s" % (mode, p.err,
                                            p.meta.get("hem_engine")))
        st = dict(p.events)
        if plain:
            # no PMU (this VM): one line per hardware event, its cause
            pat = (r"^ompfuse: warning: event (%s): no hardware PMU for it "
                   r"\(.+; virtual machines usually offer only perf:: "
                   r"software events\); its values are missing$" %
                   "|".join(hw))
            check(len(lines) == len(hw) and
                  all(re.match(pat, l) for l in lines) and
                  sorted(re.match(pat, l).group(1) for l in lines
                         if re.match(pat, l)) == sorted(hw),
                  "%s: expected one clear line per hardware event, got %r"
                  % (mode, lines))
            check(all(st.get(e) == "failed" for e in hw),
                  "%s: hardware event statuses %s" % (mode, st))
            check(all("no hardware PMU" in p.reasons.get(e, "") for e in hw),
                  "%s: the profile's reasons %s do not say why" %
                  (mode, p.reasons))
        else:
            check(all(st.get(e) == "estimated" for e in hw),
                  "%s: hardware event statuses %s" % (mode, st))
        check(st.get("perf::TASK-CLOCK") == "estimated" and
              st.get("perf::PAGE-FAULTS") == "estimated",
              "%s: software event statuses %s" % (mode, st))
        i = [e for e, _ in p.events].index("perf::TASK-CLOCK")
        check(p.xus and all(x["values"][i] is not None for x in p.xus)
              if mode == "hem" else bool(p.xus),
              "%s: TASK-CLOCK estimates missing" % mode)


def t_omp_env():
    """The OpenMP environment is recorded (metadata omp_env: OMP_* and
    KMP_* but OMP_TOOL*) and `combine` refuses runs that differ in it:
    cg's schedule(runtime) loops under OMP_SCHEDULE=static and
    dynamic,10 have different chunks (static chunk sets against loop
    chunks), which no strategy pairs.  --force combines them with a note;
    runs of one environment combine as before."""
    check(A.ompfuse and os.path.exists(A.ompfuse), "ompfuse not given")
    cg = os.path.join(A.bindir, "cg")
    runs = [("static", "perf::TASK-CLOCK"), ("dynamic,10", "perf::PAGE-FAULTS"),
            ("static", "perf::PAGE-FAULTS")]
    outs = []
    for i, (sched, ev) in enumerate(runs):
        o = out("ompenv-%d" % i)
        r = run(cg, ["S"], o, threads=2, clean_omp=True,
                env_extra={"OMP_SCHEDULE": sched, "OMPFUSE_EVENTS": ev,
                           "KMP_BLOCKTIME": "0"})
        check(r.returncode == 0, "cg S under OMP_SCHEDULE=%s: rc %d %s" %
              (sched, r.returncode, r.stderr[-500:]))
        outs.append(o)
        got = Profile(o).meta.get("omp_env")
        want = "KMP_BLOCKTIME=0\x1fOMP_NUM_THREADS=2\x1fOMP_SCHEDULE=%s" % sched
        check(got == want, "omp_env recorded %r, want %r (OMP_TOOL_LIBRARIES "
              "left out, sorted)" % (got, want))

    def combine(ins, *extra):
        return subprocess.run([A.ompfuse, "combine", "--strategy", "lgl", "-o",
                               out("ompenv-fused")] + list(extra) + ins,
                              capture_output=True, text=True, timeout=120)
    if os.path.exists(out("ompenv-fused")):
        os.unlink(out("ompenv-fused"))
    r = combine(outs[:2])
    print(r.stderr.strip())
    check(r.returncode == 2 and "differ in omp_env" in r.stderr and
          "(OMP_SCHEDULE 'static' in the first, 'dynamic,10' in the second)" in r.stderr
          and "KMP_BLOCKTIME" not in r.stderr and outs[0] in r.stderr and
          outs[1] in r.stderr and "--force" in r.stderr,
          "runs of two schedules refused, naming both files and what differs: %d %s" %
          (r.returncode, r.stderr))
    check(not os.path.exists(out("ompenv-fused")), "nothing written when refused")
    r = combine(outs[:2], "--force")
    check(r.returncode == 0 and "differ in omp_env" in r.stdout + r.stderr and
          "forced" in r.stdout + r.stderr,
          "--force combines them and says so: %d %s" % (r.returncode, r.stdout[-800:]))
    r = combine([outs[0], outs[2]])
    check(r.returncode == 0 and "differ in omp_env" not in r.stdout + r.stderr,
          "runs of one environment combine without a word on it: %d %s" %
          (r.returncode, r.stderr[-500:]))


TESTS = {n[2:]: f for n, f in globals().items() if n.startswith("t_")}


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("test", choices=sorted(TESTS))
    ap.add_argument("--tool", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--knapsack")
    ap.add_argument("--ompfuse", help="the ompfuse program (hem_evaluate)")
    ap.add_argument("--preload", help="sanitizer runtime for programs "
                    "not built with the sanitizers (gcc route)")
    A = ap.parse_args()
    A.workdir = os.path.join(A.workdir, A.test)
    os.makedirs(A.workdir, exist_ok=True)
    TESTS[A.test]()
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
