#!/usr/bin/python3
"""The hardware path on the emulated PMU (docs/epmu.md).  Usage:
  test_epmu.py TEST --epmu LIB --tool LIB --dump DUMP --ompfuse BIN
               --prog PROG --workdir DIR [--bindir DIR]
Every run preloads libepmu.so; its log (EPMU_LOG) is the emulated truth."""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tool"))
import run_tests as rt  # noqa: E402  (Profile: tool_dump's lines)

A = None
check = rt.check

# PMU models: libpfm4 environment and native names (an instructions event,
# a cycles event, a cache event).  "amd" is the model of the AMD family 19h
# names (RETIRED_INSTRUCTIONS, unqualified): libpfm4's native detection
# where it finds such a core PMU, else amd64_fam19h_zen4 forced (set by
# native_model() at start).  Zen 3 and Skylake are always forced
# (ENCODE_INACTIVE keeps libpfm4's generic perf:: names, which forcing a
# model switches off).
MODELS = {
    "amd": None,
    "zen3": ({"LIBPFM_FORCE_PMU": "amd64_fam19h_zen3",
              "LIBPFM_ENCODE_INACTIVE": "1"},
             ["amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", "perf::CYCLES",
              "perf::L1-DCACHE-LOAD-MISSES"]),
    "skl": ({"LIBPFM_FORCE_PMU": "skl", "LIBPFM_ENCODE_INACTIVE": "1"},
            ["INST_RETIRED:ANY_P", "perf::CYCLES",
             "perf::L1-DCACHE-LOAD-MISSES"]),
}


# the core PMU that the "amd" model's unqualified names belong to, and the
# name of each generic perf event in that model ("cycles" natively; forced,
# "perf::CYCLES": a forced model leaves libpfm4's perf PMU inactive, and
# libpfm4 looks unqualified names up in active PMUs only)
AMD_PMU = None
GENERIC = {}
FORCED_AMD = "amd64_fam19h_zen4"


def native_model():
    """What libpfm4 detects here without any LIBPFM_* variable.  With an
    AMD family 19h core PMU the "amd" model is that native detection, as
    on the machines the names are written for.  Without one (a CPU this
    libpfm4 does not know, e.g. family 1Ah with libpfm4 4.13, or another
    vendor), the model forces amd64_fam19h_zen4 so that the same short
    native names resolve, and says so."""
    global AMD_PMU
    r = run([A.ompfuse, "events", "--json"],
            env_of({}, os.path.join(A.workdir, "native.log"), tool=False))
    try:
        pmus = [p["name"] for p in json.loads(r.stdout)["pmus"]]
    except (ValueError, KeyError, TypeError):
        pmus = None
    if r.returncode or pmus is None:
        print("ompfuse events --json failed (rc %d): %s" % (r.returncode,
                                                          r.stderr))
        sys.exit(1)
    core = [p for p in pmus if re.match(r"amd64_fam19h_zen\d+$", p)]
    if core:
        AMD_PMU = core[0]
        MODELS["amd"] = ({}, ["RETIRED_INSTRUCTIONS", "cycles",
                              "perf::L1-DCACHE-LOAD-MISSES"])
        print("amd model: libpfm4 detects %s natively" % AMD_PMU)
        return
    AMD_PMU = FORCED_AMD
    GENERIC.update({"cycles": "perf::CYCLES",
                    "instructions": "perf::INSTRUCTIONS"})
    MODELS["amd"] = ({"LIBPFM_FORCE_PMU": FORCED_AMD,
                      "LIBPFM_ENCODE_INACTIVE": "1"},
                     ["RETIRED_INSTRUCTIONS", "perf::CYCLES",
                      "perf::L1-DCACHE-LOAD-MISSES"])
    print("amd model: libpfm4 detects no AMD family 19h core PMU here "
          "(PMUs: %s); forcing %s (LIBPFM_FORCE_PMU, "
          "LIBPFM_ENCODE_INACTIVE=1), generic events as perf::CYCLES, "
          "perf::INSTRUCTIONS" % (", ".join(pmus) or "none", FORCED_AMD))


def amd_env(extra=None):
    """The "amd" model's libpfm4 environment plus extra."""
    return dict(MODELS["amd"][0], **(extra or {}))


def amd_names(names):
    """names in the "amd" model: generic perf names as it resolves them."""
    return [GENERIC.get(n, n) for n in names]


def env_of(extra, log, tool=True, out=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPFUSE_", "EPMU_", "LIBPFM_"))
           and k not in ("OMP_TOOL_LIBRARIES", "LD_PRELOAD")}
    env["LD_PRELOAD"] = A.epmu
    env["EPMU_LOG"] = log
    if tool:
        env["OMP_TOOL_LIBRARIES"] = A.tool
        env["OMPFUSE_OUTPUT"] = out
    env.update(extra)
    return env


def run(args, env, timeout=300):
    return subprocess.run(args, env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=A.workdir)


def read_log(path):
    """Emulated events, one dict per closed (or left open) event."""
    evs = []
    if not os.path.exists(path):
        return evs
    for line in open(path):
        f = line.split()
        if f and f[0] == "event":
            d = dict(kv.split("=", 1) for kv in f[1:])
            evs.append({k: (v if k == "config" else int(v))
                        for k, v in d.items()})
    return evs


def fresh(name):
    p = os.path.join(A.workdir, name)
    for suf in (".ompf", ".log"):
        if os.path.exists(p + suf):
            os.unlink(p + suf)
    return p + ".ompf", p + ".log"


def plain_output(n, w):
    p = subprocess.run([A.prog, str(n), str(w)], capture_output=True,
                       text=True, env={"OMP_NUM_THREADS": "2",
                                       "PATH": os.environ["PATH"]})
    return p.stdout


# libpfm4's generic perf names, unqualified, under its native detection
# (its perf PMU is detected on every Linux machine, whatever the CPU):
# instructions and cycles as HARDWARE, the cache event as HW_CACHE
GENERIC_NATIVE = ({}, ["instructions", "cycles",
                       "perf::L1-DCACHE-LOAD-MISSES"])


def exact_run(model, mode, rate=True, threads=3, extra=None):
    """One tool run; returns (profile, emulator events by tid in open
    order, stderr)."""
    env_pfm, names = (GENERIC_NATIVE if model == "generic"
                      else MODELS[model])
    out, log = fresh("exact-%s-%s-%d-%d" % (model, mode, rate, bool(extra)))
    env = env_of(dict(env_pfm, OMPFUSE_EVENTS=",".join(names),
                      OMPFUSE_MODE=mode, OMP_NUM_THREADS=str(threads),
                      EPMU_RATE="1" if rate else "0", **(extra or {})),
                 log, out=out)
    r = run([A.prog, "12", "100000"], env)
    check(r.returncode == 0, "%s/%s rc %d: %s" % (model, mode, r.returncode,
                                                  r.stderr))
    check(r.stderr == "" or extra, "%s/%s: tool printed %r" % (
        model, mode, r.stderr))
    check(r.stdout == plain_output(12, 100000),
          "%s/%s: program output changed: %r" % (model, mode, r.stdout))
    p = rt.Profile(out)
    check(p.rc == 0, "%s/%s: profile unreadable: %s" % (model, mode, p.err))
    check(p.events == [(n, "counted") for n in names],
          "%s/%s events %s" % (model, mode, p.events))
    check(p.meta.get("mode") == mode, "mode meta %s" % p.meta.get("mode"))
    groups = collections.defaultdict(list)
    for e in read_log(log):
        groups[e["tid"]].append(e)
    for tid in groups:
        groups[tid].sort(key=lambda e: e["id"])
    return p, groups, r.stderr


def t_exact():
    """Per thread: the XUs plus the gap equal the total, and the total is
    what the emulated counter held at the tool's last read; every event is
    a hardware type (RAW, HARDWARE, HW_CACHE) and ran all the time."""
    # the mmap page allowing rdpmc: the tool takes its rdpmc path, finds
    # the event on no counter (index 0) and falls back to read()
    runs = [(m, mode, None) for m in MODELS for mode in ("run", "reference")]
    runs.append(("generic", "run", None))
    runs.append(("amd", "run", {"EPMU_RDPMC": "1", "OMPFUSE_VERBOSE": "1"}))
    for model, mode, extra in runs:
        p, groups, err = exact_run(model, mode, extra=extra)
        how = re.findall(r"reads by (\S+)", err)
        check(not extra or (len(how) == 3 and set(how) == {"rdpmc"}),
              "rdpmc page: reads by %s" % how)
        check(len(p.threads) == 3, "%s: %d threads" % (model,
                                                     len(p.threads)))
        for t in p.threads:
            evs = groups.get(t["tid"], [])
            check(len(evs) == 3, "%s: thread %d has %d emulated events"
                  % (model, t["tid"], len(evs)))
            if len(evs) != 3:
                continue
            types = [0, 0, 3] if model == "generic" else [4, 0, 3]
            check([e["type"] for e in evs] == types,
                  "%s: types %s" % (model, [e["type"] for e in evs]))
            xus = [x for x in p.xus if x["thread"] == t["index"]]
            for i, e in enumerate(evs):
                s = sum(x["values"][i] for x in xus)
                check(s + t["gap"][i] == t["total"][i],
                      "%s/%s thread %d ev %d: XUs %d + gap %d != %d" % (
                          model, mode, t["tid"], i, s, t["gap"][i],
                          t["total"][i]))
                # the tool counts from its first read to its last
                emu = e["last_value"] - e["first_value"]
                check(t["total"][i] == emu and e["reads"] > 1,
                      "%s/%s thread %d ev %d: total %d, emulated %d" % (
                          model, mode, t["tid"], i, t["total"][i], emu))
                check(e["last_running"] == e["last_enabled"] > 0,
                      "%s: event %d multiplexed: %s" % (model, i, e))
        print("%s/%s: %d threads, %d XUs exact" % (model, mode,
                                                   len(p.threads),
                                                   len(p.xus)))


def t_xu_signal():
    """Counts from epmu_signal() only: XU of iteration i holds exactly
    weight * (i + 1) of every event, whichever thread ran it."""
    for model in ("amd", "skl"):
        p, groups, _ = exact_run(model, "run", rate=False)
        weights = None
        for evs in groups.values():
            w = [e["weight"] for e in evs]
            check(weights in (None, w), "weights differ across threads")
            weights = w
        check(weights is not None and len(set(weights)) > 1,
              "%s: events should differ per XU: weights %s" % (model, weights))
        check(len(p.xus) == 12, "%s: %d XUs" % (model, len(p.xus)))
        for x in p.xus:
            want = [w * (x["iter_start"] + 1) for w in weights or []]
            check(x["values"] == want, "%s: XU at %d: %s, want %s" % (
                model, x["iter_start"], x["values"], want))
        for t in p.threads:
            check(t["gap"] == [0, 0, 0], "%s: gap %s" % (model, t["gap"]))


def t_probe():
    """events --probe: the emulated PMU present and its events open."""
    for model, (env_pfm, names) in MODELS.items():
        log = os.path.join(A.workdir, "probe-%s.log" % model)
        env = env_of(dict(env_pfm), log, tool=False)
        r = run([A.ompfuse, "events", "--probe"], env)
        check(r.returncode == 0, "%s: events --probe rc %d: %s" % (
            model, r.returncode, r.stderr))
        check("Hardware PMU present" in r.stdout,
              "%s: no PMU reported:\n%s" % (model, r.stdout[:600]))
        opens = re.findall(r"^  (\S+)\s+OPENS", r.stdout, re.M)
        fails = re.findall(r"^  (\S+)\s+fails:", r.stdout, re.M)
        print("%s: %d events open, %d do not" % (model, len(opens),
                                                  len(fails)))
        check(len(opens) > 50 and not fails,
              "%s: %d events open; fail: %s" % (model, len(opens), fails))
        pmu = AMD_PMU if model == "amd" else env_pfm["LIBPFM_FORCE_PMU"]
        check(any(o.startswith(pmu + "::") for o in opens),
              "%s: no %s event opens" % (model, pmu))
    # libpfm4's perf PMU under its native detection: its hardware events
    # open on the emulated PMU
    r = run([A.ompfuse, "events", "--probe", "--pmu", "perf"],
            env_of({}, os.path.join(A.workdir, "probe-perf.log"),
                   tool=False))
    opens = re.findall(r"^  (\S+)\s+OPENS", r.stdout, re.M)
    fails = re.findall(r"^  (\S+)\s+fails:", r.stdout, re.M)
    print("perf (native detection): %d events open, %d do not" % (
        len(opens), len(fails)))
    check(r.returncode == 0 and "perf::CYCLES" in opens and not fails,
          "perf: rc %d, perf::CYCLES does not open or some fail: %s\n%s" % (
              r.returncode, fails, r.stderr))


def native_events(k):
    """k events of the "amd" model's core PMU that open alone without a
    umask, in listing order."""
    r = run([A.ompfuse, "events", "--probe"],
            env_of(amd_env(), os.path.join(A.workdir, "ev.log"),
                   tool=False))
    names = re.findall(r"^  (%s::\w+)\s+OPENS$" % re.escape(AMD_PMU),
                       r.stdout, re.M)
    check(len(names) >= k, "only %d native events open" % len(names))
    return names[:k]


def read_plan(path):
    plan = collections.defaultdict(list)
    slots = None
    for line in open(path):
        if line.startswith("# slots:"):
            slots = int(line.split()[2])
        elif line.strip() and not line.startswith("#"):
            f = line.split()
            plan[f[0]].append((int(f[1]), f[2].split(",")))
    return slots, plan


def t_plan():
    """ompfuse plan without --slots or OMPFUSE_PMU_SLOTS on the emulated
    PMU: the limit is measured (not libpfm4's 6 counters), and the LGL,
    BC and reference plans for 33 events are valid under it."""
    events = native_events(30) + amd_names(["cycles", "instructions",
                                            "perf::L1-DCACHE-LOAD-MISSES"])
    for limit in (4, 3):
        out = os.path.join(A.workdir, "plan-%d.txt" % limit)
        env = env_of(amd_env({"EPMU_COUNTERS": str(limit)}),
                     os.path.join(A.workdir, "plan.log"), tool=False)
        r = run([A.ompfuse, "plan", "--events", ",".join(events), "-o", out],
                env)
        check(r.returncode == 0, "plan rc %d: %s" % (r.returncode, r.stderr))
        if r.returncode:
            continue
        print(r.stderr.strip().split("\n")[0])
        check("at most %d of these events count at once" % limit in r.stderr,
              "limit %d not measured: %s" % (limit, r.stderr))
        slots, plan = read_plan(out)
        check(slots == limit, "plan slots %s, emulated %d" % (slots, limit))
        allsets = [s for role in plan for _, s in plan[role]]
        check(all(len(s) <= limit for s in allsets),
              "a set is larger than %d counters" % limit)
        lgl = [s for _, s in plan["lgl"]]
        flat = [e for s in lgl for e in s]
        check(sorted(flat) == sorted(events), "LGL sets do not partition "
              "the 33 events: %s" % lgl)
        check(len(lgl) == -(-33 // limit), "LGL: %d sets for %d counters" % (
            len(lgl), limit))
        bc = [s for _, s in plan["bc"]]
        seen = set(bc[0]) if bc else set()
        for s in bc[1:]:
            check(seen & set(s), "BC set %s shares nothing before it" % s)
            seen |= set(s)
        check(seen == set(events), "BC chain misses %s" % (set(events) - seen))
        refs = plan["reference"]
        check(refs and all(rep == 3 for rep, _ in refs), "reference repeats")
        pairs = {(a, b) for _, s in refs for a in s for b in s if a < b}
        want = {(a, b) for a in events for b in events if a < b}
        check(pairs == want, "references miss %d of %d pairs" % (
            len(want - pairs), len(want)))


def t_mux():
    """A run whose group the emulated kernel time-shares (a competing user
    takes one of the 4 counters every other tick): the tool says error
    (warning in a reference run), marks every event multiplexed with the
    emulator's enabled/running times, and combine carries the status."""
    names = amd_names(["RETIRED_INSTRUCTIONS", "cycles",
                       "perf::L1-DCACHE-LOAD-MISSES", "RETIRED_OPS"])
    busy = amd_env({"EPMU_BUSY": "1", "EPMU_TICK_US": "1000",
                    "OMPFUSE_EVENTS": ",".join(names),
                    "OMP_NUM_THREADS": "2"})
    args = ["12", "1000000"]
    outs = {}
    for mode, word in (("run", "error"), ("reference", "warning")):
        out, log = fresh("mux-" + mode)
        r = run([A.prog] + args, env_of(dict(busy, OMPFUSE_MODE=mode), log,
                                          out=out))
        outs[mode] = out
        check(r.returncode == 0 and r.stdout == plain_output(*args),
              "%s: program changed: rc %d %r" % (mode, r.returncode,
                                                  r.stdout))
        check(("%s: the counter group was multiplexed" % word) in r.stderr,
              "%s: multiplexing not reported as %s: %r" % (mode, word,
                                                            r.stderr))
        p = rt.Profile(out)
        check(p.events == [(n, "multiplexed") for n in names],
              "%s: events %s" % (mode, p.events))
        byid = collections.defaultdict(list)
        for e in read_log(log):
            byid[e["tid"]].append(e)
        for t in p.threads:
            e = min(byid[t["tid"]], key=lambda e: e["id"])
            # a thread that ran 3 ticks met the busy counter (odd ticks)
            check(0 < t["running"][0] < t["enabled"][0] or
                  t["enabled"][0] < 3000000,
                  "%s: thread %d running %s enabled %s" % (
                      mode, t["tid"], t["running"][0], t["enabled"][0]))
            check((t["enabled"][0], t["running"][0]) ==
                  (e["last_enabled"], e["last_running"]),
                  "%s: times %s, emulated %s" % (mode, t, e))
    # a clean run of two other events, fused with the multiplexed one
    out, log = fresh("clean")
    r = run([A.prog] + args, env_of(dict(
        busy, EPMU_BUSY="0",
        OMPFUSE_EVENTS="RETIRED_INSTRUCTIONS,RETIRED_BRANCH_INSTRUCTIONS"),
        log, out=out))
    check(r.returncode == 0 and r.stderr == "", "clean run: %s" % r.stderr)
    fused = os.path.join(A.workdir, "fused.ompf")
    r = run([A.ompfuse, "combine", "--strategy", "lgl", "-o", fused, out,
             outs["run"]], dict(os.environ))
    check(r.returncode == 0, "combine rc %d: %s" % (r.returncode, r.stderr))
    for n in names[1:]:
        check("values of %s come from %s where its status is multiplexed" % (
            n, outs["run"]) in r.stdout + r.stderr,
            "combine silent about %s: %s" % (n, r.stdout))
    d = subprocess.run([A.dump, fused], capture_output=True, text=True)
    st = dict(l.split()[1:3] for l in d.stdout.splitlines()
              if l.startswith("event "))
    check(st.get("RETIRED_INSTRUCTIONS") == "counted" and
          all(st.get(n) == "multiplexed" for n in names[1:]),
          "fused statuses %s" % st)


HEM_EVENTS = ["RETIRED_INSTRUCTIONS", "cycles", "perf::L1-DCACHE-LOAD-MISSES",
              "RETIRED_OPS", "RETIRED_BRANCH_INSTRUCTIONS",
              "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED",
              "RETIRED_NEAR_RETURNS", "DIV_OP_COUNT"]


def export_json(path):
    j = os.path.join(A.workdir, os.path.basename(path) + ".json")
    r = run([A.ompfuse, "export", "--format", "json", "-o", j, path],
            dict(os.environ))
    check(r.returncode == 0, "export %s: %s" % (path, r.stderr))
    import json
    return json.load(open(j))["profiles"][0]


def hem_run(name, mode, extra):
    """8 events, counts from epmu_signal() only (each XU's truth is
    weight * (i + 1)); returns (profile JSON, log events by tid, signals)."""
    out, log = fresh(name)
    env = env_of(amd_env(dict({"OMPFUSE_EVENTS": ",".join(
        amd_names(HEM_EVENTS)), "OMPFUSE_MODE": mode, "OMP_NUM_THREADS": "2",
        "EPMU_RATE": "0"}, **extra)), log, out=out)
    args = ["12", "1000000"]
    r = run([A.prog] + args, env)
    check(r.returncode == 0 and r.stdout == plain_output(*args),
          "%s: rc %d, output %r: %s" % (name, r.returncode, r.stdout,
                                        r.stderr))
    check(r.stderr == "", "%s: tool printed %r" % (name, r.stderr))
    evs = collections.defaultdict(list)
    for e in read_log(log):
        evs[e["tid"]].append(e)
    for t in evs:
        evs[t].sort(key=lambda e: e["id"])
    sig = {}
    for line in open(log) if os.path.exists(log) else []:
        if line.startswith("signal "):
            d = dict(kv.split("=", 1) for kv in line.split()[1:])
            sig[int(d["n"]) - 1] = (int(d["tid"]), {
                int(x) for x in d["active"].split(",") if x})
    return export_json(out), evs, sig


def close(a, b):
    return a is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def scaled(v, e, r):
    return v * e / r if r else 0.0


def t_hem():
    """The HEM kernel engine (one group per event) on the emulated
    4-counter PMU.  Without rotation the first 4 groups count and the rest
    never run: estimates are the truth or 0 / missing, and the tool's own
    emulator engine (OMPFUSE_PMU_SLOTS=4 over one 8-event group) gives the
    same numbers.  With a 1 ms tick: per thread, totals are the scaled
    emulated readings exactly, XUs + gap telescope; per XU, hem-delta is
    truth * denabled/drunning when the event was on a counter at the XU's
    signal and 0 or missing when it was not."""
    no_rot = {"EPMU_TICK_US": "100000000"}
    for mode in ("hem", "hem-delta"):
        kern, evs, _ = hem_run("hem-k-" + mode, mode,
                             dict(no_rot, OMPFUSE_HEM_ENGINE="kernel"))
        emu, _, _ = hem_run("hem-e-" + mode, mode, dict(
            no_rot, OMPFUSE_HEM_ENGINE="emulator", OMPFUSE_PMU_SLOTS="4",
            OMPFUSE_MUX_PERIOD_US="100000000", EPMU_COUNTERS="8"))
        check(kern["metadata"].get("mux_clock") == "kernel",
              "kernel engine not used: %s" % kern["metadata"])
        for p in (kern, emu):
            check(len(p["xus"]) == 12, "%s: %d XUs" % (mode, len(p["xus"])))
        by_label = {x["label"]: x["values"] for x in emu["xus"]}
        weights = [e["weight"] for e in next(iter(evs.values()), [])]
        for x in kern["xus"]:
            truth = [w * (x["iter_start"] + 1) for w in weights]
            off = None if mode == "hem-delta" else 0
            want = truth[:4] + [off] * 4
            check(x["values"] == want, "%s kernel XU %d: %s, want %s" % (
                mode, x["iter_start"], x["values"], want))
            check(by_label.get(x["label"]) == x["values"],
                  "%s: engines differ at XU %d: kernel %s, emulator %s" % (
                      mode, x["iter_start"], x["values"],
                      by_label.get(x["label"])))
    # rotation every 1 ms of thread CPU time
    errs = collections.defaultdict(list)
    for mode in ("hem", "hem-delta"):
        p, evs, sig = hem_run("hem-rot-" + mode, mode, {
            "EPMU_TICK_US": "1000", "OMPFUSE_HEM_ENGINE": "kernel"})
        rotated = 0
        for t in p["threads"]:
            le = evs.get(t["os_tid"], [])
            check(len(le) == 8, "thread %d: %d emulated events" % (
                t["os_tid"], len(le)))
            if len(le) != 8:
                continue
            rotated = max(rotated, le[0]["rotations"])
            for i, e in enumerate(le):
                dv = e["last_value"] - e["first_value"]
                de = e["last_enabled"] - e["first_enabled"]
                dr = e["last_running"] - e["first_running"]
                if mode == "hem":
                    tot = scaled(e["last_value"], e["last_enabled"],
                                 e["last_running"]) - scaled(
                        e["first_value"], e["first_enabled"],
                        e["first_running"])
                else:
                    tot = dv * de / dr if dr else None
                check((t["total"][i] is None and tot is None) or
                      close(t["total"][i], tot),
                      "%s thread %d ev %d: total %s, emulated %s" % (
                          mode, t["os_tid"], i, t["total"][i], tot))
                check((t["enabled_ns"][i], t["running_ns"][i]) == (de, dr),
                      "%s: times %s/%s, emulated %d/%d" % (
                          mode, t["enabled_ns"][i], t["running_ns"][i],
                          de, dr))
                if mode == "hem":
                    xs = sum(x["values"][i] for x in p["xus"]
                             if x["thread"] == t["index"])
                    check(close(xs + t["gap"][i], t["total"][i]),
                          "hem: XUs %s + gap %s != total %s" % (
                              xs, t["gap"][i], t["total"][i]))
        check(rotated > 0, "%s: the emulated kernel never rotated" % mode)
        ids = {t: [e["id"] for e in le] for t, le in evs.items()}
        w = {t: [e["weight"] for e in le] for t, le in evs.items()}
        for x in p["xus"]:
            i = x["iter_start"]
            tid, active = sig.get(i, (None, set()))
            if tid not in ids:
                check(False, "XU %d: no signal logged" % i)
                continue
            for k, v in enumerate(x["values"]):
                truth = w[tid][k] * (i + 1)
                on = ids[tid][k] in active
                if mode == "hem-delta":
                    check((v is not None and v >= truth * (1 - 1e-12))
                          if on else v in (None, 0),
                          "hem-delta XU %d ev %d: %s, truth %d, on %s" % (
                              i, k, v, truth, on))
                errs[mode].append(abs((v or 0) - truth) / truth)
    for mode, e in errs.items():
        print("%s, kernel engine, 1 ms tick: mean |error| %.1f%% of the "
              "truth over %d XU values" % (mode, 100 * sum(e) / len(e),
                                           len(e)))


def t_too_many():
    """A group larger than the counters in a run: the x86 kernel refuses
    the member that does not fit (EINVAL); the tool names the reason (no
    free counter), counts the rest exactly, and software events still
    join.  On Skylake the fixed counters take instructions and cycles, so
    6 hardware events fit 4 general + 3 fixed counters."""
    amd = amd_names(["RETIRED_INSTRUCTIONS", "cycles",
                     "perf::L1-DCACHE-LOAD-MISSES", "RETIRED_OPS",
                     "RETIRED_BRANCH_INSTRUCTIONS", "perf::TASK-CLOCK"])
    skl = ["INST_RETIRED:ANY_P", "perf::CYCLES", "BR_INST_RETIRED:ALL_BRANCHES",
           "L1D:REPLACEMENT", "LONGEST_LAT_CACHE:MISS", "UOPS_ISSUED:ANY"]
    cases = [("amd", amd_env(), amd, [1, 1, 1, 1, 0, 1]),
             ("skl", dict(MODELS["skl"][0], EPMU_FIXED="3"), skl, [1] * 6),
             ("skl", dict(MODELS["skl"][0], EPMU_FIXED="0"), skl,
              [1, 1, 1, 1, 0, 0])]
    for k, (model, env_pfm, names, counted) in enumerate(cases):
        out, log = fresh("many-%d" % k)
        r = run([A.prog, "12", "100000"], env_of(dict(
            env_pfm, OMPFUSE_EVENTS=",".join(names), OMP_NUM_THREADS="2"),
            log, out=out))
        check(r.returncode == 0, "%s: rc %d" % (model, r.returncode))
        p = rt.Profile(out)
        st = [int(s == "counted") for _, s in p.events]
        check(st == counted, "%s case %d: counted %s, want %s: %s" % (
            model, k, st, counted, r.stderr))
        for i, c in enumerate(counted):
            if not c:
                check("event %s: no free counter: the " % names[i] in r.stderr
                      and p.reasons[names[i]].startswith(
                          "event %s: no free counter" % names[i]),
                      "%s: reason for %s: %r" % (model, names[i], r.stderr))
        byid = collections.defaultdict(list)
        for e in read_log(log):
            byid[e["tid"]].append(e)
        for t in p.threads:
            # the tool's own test opens (reads 0) are not the group
            le = sorted((e for e in byid[t["tid"]] if e["reads"]),
                        key=lambda e: e["id"])
            vals = [v for v, c in zip(t["total"], counted) if c]
            check(vals == [e["last_value"] - e["first_value"] for e in le],
                  "%s: totals %s, emulated %s" % (model, vals, le))


def t_campaign():
    """ompfuse campaign on cg-static with 8 hardware events and the
    emulated 4-counter PMU: every run succeeds, the HEM runs are
    multiplexed by the (emulated) kernel, every strategy and HEM variant
    gets an EPD and the report is written."""
    out = os.path.join(A.workdir, "camp")
    log = os.path.join(A.workdir, "camp.log")
    env = env_of(amd_env(), log, tool=False)
    r = run([A.ompfuse, "campaign", "--out", out, "--events",
             ",".join(amd_names(HEM_EVENTS)), "--slots", "4", "--benchmarks",
             "cg-static", "--quick"], env, timeout=1200)
    check(r.returncode == 0, "campaign rc %d: %s" % (r.returncode,
                                                     r.stderr[-3000:]))
    check(os.path.getsize(os.path.join(out, "report.html")) > 1000,
          "no report")
    rows = [l.rstrip("\n").split("\t")
            for l in open(os.path.join(out, "epd.tsv"))]
    head, row = rows[0], rows[1] if len(rows) > 1 else []
    print("\n".join("\t".join(x) for x in rows))
    want = ["ctc", "lgl", "bc", "bc-unlabeled", "random", "hem", "hem-delta",
            "hem-cleaned", "hem-delta-cleaned"]
    check(head[1:] == want and len(row) == 10,
          "epd.tsv columns %s / %s" % (head, row))
    for k, v in zip(head[1:], row[1:]):
        try:
            ok = float(v) > 0
        except ValueError:
            ok = False
        check(ok, "no EPD for %s: %r" % (k, v))
    bench = os.path.join(out, "cg-static")
    for f in sorted(os.listdir(bench)):
        if re.match(r"hem(-delta)?-\d+-r\d+\.ompf$", f):
            p = rt.Profile(os.path.join(bench, f))
            check(p.meta.get("hem_engine") == "kernel",
                  "%s: engine %s" % (f, p.meta.get("hem_engine")))
            check(all(s == "estimated" for _, s in p.events),
                  "%s: events %s" % (f, p.events))
    mux = [e for e in read_log(log) if e["hw"] and e["reads"]
           and e["last_running"] < e["last_enabled"]]
    check(mux, "no emulated event was ever multiplexed")


TESTS = {n[2:]: f for n, f in globals().items() if n.startswith("t_")}


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("test", choices=sorted(TESTS))
    for o in ("epmu", "tool", "dump", "ompfuse", "prog", "workdir"):
        ap.add_argument("--" + o, required=True)
    ap.add_argument("--bindir", default="")
    A = ap.parse_args()
    rt.A = A
    A.workdir = os.path.join(A.workdir, A.test)
    shutil.rmtree(A.workdir, ignore_errors=True)
    os.makedirs(A.workdir)
    native_model()
    TESTS[A.test]()
    if rt.FAILS:
        print("%d check(s) failed" % len(rt.FAILS))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
