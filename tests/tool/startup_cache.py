#!/usr/bin/python3
"""The tool's start-up cache (OMPFUSE_CACHE_DIR, docs/tool.md).

usage: startup_cache.py --tool LIB --ompfuse OMPFUSE --prog TOOL_MIX --workdir DIR

- without OMPFUSE_CACHE_DIR: libpfm4 is initialised (its LIBPFM_DEBUG lines)
  and no cache file is written; libpfm4 and hwloc are loaded then (the
  dynamic loader's LD_DEBUG=libs lines: the tool opens them on first use);
- with it, the first run writes DIR/.startup-<boot id> (events, clock,
  topology, CPU model) and the next run initialises no libpfm4, loads neither
  library, and records the same event encodings and CPU -> core/NUMA as
  the uncached run;
- what the file says is what the tool uses (a planted encoding and
  topology show up in the profile), a file of another boot is ignored, and
  a topology read under another CPU affinity is read again;
- with the libraries made unloadable (/dev/null bound over their files in
  a private mount namespace; needs root): a warm cache profiles fully
  without either, and without a cache the program still runs unchanged,
  its events failed with a reason naming libpfm4, its XUs without core
  and NUMA node when hwloc is missing;
- `ompfuse run` gives its runs the campaign directory as the cache.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

A = None
FAILS = []
EVENTS = "perf::TASK-CLOCK,perf::PAGE-FAULTS"


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)
    return cond


def boot_id():
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def run(out, cache=None, extra=None, hide=(), want_stdout=False):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPFUSE_", "LIBPFM_")) and
           k not in ("OMP_TOOL_LIBRARIES", "OMP_NUM_THREADS")}
    env.update(OMP_TOOL_LIBRARIES=A.tool, OMPFUSE_OUTPUT=out,
               OMPFUSE_EVENTS=EVENTS, OMP_NUM_THREADS="2",
               OMPFUSE_VERBOSE="1", LIBPFM_DEBUG="1", LIBPFM_VERBOSE="1",
               LD_DEBUG="libs")
    if cache:
        env["OMPFUSE_CACHE_DIR"] = cache
    env.update(extra or {})
    cmd = [A.prog, "fib", "12"]
    if hide:  # these files unreadable as libraries, for this run only
        binds = " && ".join("mount --bind /dev/null '%s'" % h for h in hide)
        cmd = ["unshare", "-m", "sh", "-c", binds + ' && exec "$@"', "sh"] + cmd
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "run exits 0: %s" % p.stderr[-1500:])
    return (p.stderr, p.stdout) if want_stdout else p.stderr


def export(path):
    p = subprocess.run([A.ompfuse, "export", "--format", "json", path],
                       capture_output=True, text=True)
    check(p.returncode == 0, "export %s: %s" % (path, p.stderr))
    return json.loads(p.stdout)["profiles"][0]


def profile(path):
    d = export(path)
    enc = [(e["name"], e["perf_type"], e["config"], e["config1"],
            e["config2"], e["flags"]) for e in d["events"]]
    cpus = {}
    for x in d["xus"]:
        cpus.setdefault(x["cpu"], set()).add((x["core"], x["numa"]))
    return enc, cpus


def libpfm_initialised(stderr):
    return "pfmlib" in stderr


def loaded(stderr, soname):
    """Whether the dynamic loader initialised a library of that name."""
    return any(os.path.basename(p) == soname or
               os.path.basename(p).startswith(soname + ".")
               for p in re.findall(r"calling init: (\S+)", stderr))


def main():
    global A
    ap = argparse.ArgumentParser()
    for o in ("--tool", "--ompfuse", "--prog", "--workdir"):
        ap.add_argument(o, required=True)
    A = ap.parse_args()
    w = A.workdir
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    cdir = os.path.join(w, "cache")
    os.makedirs(cdir)
    cfile = os.path.join(cdir, ".startup-" + boot_id())

    err, plain_out = run(os.path.join(w, "plain.ompf"), want_stdout=True)
    check(libpfm_initialised(err), "without a cache libpfm4 is initialised")
    libs = {os.path.basename(f).split(".so")[0]: f
            for f in re.findall(r"calling init: (\S+)", err)}
    check(loaded(err, "libpfm.so") and loaded(err, "libhwloc.so"),
          "without a cache libpfm4 and hwloc are loaded")
    check(loaded(err, "libompfuse.so"), "LD_DEBUG=libs shows the tool loaded")
    check(os.listdir(cdir) == [], "without OMPFUSE_CACHE_DIR no file")
    plain_enc, plain_cpus = profile(os.path.join(w, "plain.ompf"))
    check(all(e[1] == 1 for e in plain_enc), "software events encoded")

    err = run(os.path.join(w, "first.ompf"), cdir)
    check(libpfm_initialised(err), "first run with an empty cache: libpfm4")
    check("updated" in err, "first run writes the cache")
    check(os.path.isfile(cfile), "cache file %s written" % cfile)
    text = open(cfile).read() if os.path.isfile(cfile) else ""
    for name in EVENTS.split(","):
        check("\t%s\n" % name in text, "cache holds %s" % name)
    # The clock is cached only where the tool times with the TSC, i.e. where
    # the kernel's clocksource is tsc (ompt-tool/clock.c): its rate then,
    # or "none" without constant_tsc.  Elsewhere (this VM since 2026-11-28:
    # kvm-clock, the TSC marked unstable) each run asks the kernel, a file
    # read, and uses CLOCK_MONOTONIC_RAW: nothing to cache.
    src = open("/sys/devices/system/clocksource/clocksource0/"
               "current_clocksource").read().strip()
    if src == "tsc":
        want = "clock tsc " if "constant_tsc" in open("/proc/cpuinfo").read() \
            else "clock none"
        check("\n" + want in text and "\ntopo " in text,
              "clocksource tsc: cache holds %r and topology: %r" % (want, text))
    else:
        check("\nclock " not in text and "\ntopo " in text,
              "clocksource %s: cache holds topology and no clock: %r" % (src, text))

    # the CPU model (/proc/cpuinfo is slow to read): cached, and the same
    meta = export(os.path.join(w, "plain.ompf"))["metadata"]
    check("\ncpu %s\n" % meta.get("cpu_model") in text,
          "cache holds the CPU model %r: %r" % (meta.get("cpu_model"), text))

    err = run(os.path.join(w, "second.ompf"), cdir)
    check(not libpfm_initialised(err),
          "second run initialises no libpfm4: %s" % err[:400])
    check(loaded(err, "libompfuse.so") and not loaded(err, "libpfm.so") and
          not loaded(err, "libhwloc.so"),
          "second run loads neither libpfm4 nor hwloc: %s" %
          re.findall(r"calling init: \S+", err))
    check("start-up cache" in err and "used" in err, "second run uses it")
    enc, cpus = profile(os.path.join(w, "second.ompf"))
    check(export(os.path.join(w, "second.ompf"))["metadata"].get("cpu_model") ==
          meta.get("cpu_model"), "cached CPU model recorded as read")
    check(enc == plain_enc, "cached encodings %s == libpfm4's %s" % (enc, plain_enc))
    for cpu in set(cpus) & set(plain_cpus):
        check(cpus[cpu] == plain_cpus[cpu],
              "cpu %d: cached core/numa %s == hwloc's %s" % (cpu, cpus[cpu], plain_cpus[cpu]))
    check(cpus and all(len(v) == 1 for v in cpus.values()),
          "one core/numa per cpu: %s" % cpus)

    # Neither library is needed with the cache: made unloadable, the run
    # profiles as before.  Without the cache the program is unchanged and
    # the profile says what is missing.
    hide = [libs.get("libpfm"), libs.get("libhwloc")]
    if check(all(hide), "library paths from LD_DEBUG: %s" % libs):
        err, out = run(os.path.join(w, "nolibs.ompf"), cdir, hide=hide, want_stdout=True)
        check(out == plain_out, "warm cache, no libraries: the program's output unchanged")
        check(not loaded(err, "libpfm.so") and not loaded(err, "libhwloc.so"),
              "warm cache, no libraries: none loaded")
        d = export(os.path.join(w, "nolibs.ompf"))
        check([e["status"] for e in d["events"]] == ["counted", "counted"] and
              any(x["values"][0] > 0 for x in d["xus"]),
              "warm cache, no libraries: both events counted: %s" % d["events"])
        enc, cpus = profile(os.path.join(w, "nolibs.ompf"))
        check(enc == plain_enc and all(len(v) == 1 and -1 not in next(iter(v))
                                       for v in cpus.values()),
              "warm cache, no libraries: encodings and topology from the cache")

        err, out = run(os.path.join(w, "nopfm.ompf"), hide=hide[:1], want_stdout=True)
        check(out == plain_out, "no libpfm4, no cache: the program's output unchanged")
        d = export(os.path.join(w, "nopfm.ompf"))
        check(all(e["status"] == "failed" and "libpfm.so" in (e["reason"] or "")
                  for e in d["events"]) and d["events"],
              "no libpfm4, no cache: events failed, the reason names it: %s" % d["events"])
        check("install libpfm4" in err, "no libpfm4: said on stderr, with what to do: %s" %
              err[-800:])
        check(d["xus"], "no libpfm4, no cache: XUs still recorded")

        err, out = run(os.path.join(w, "nohwloc.ompf"), hide=hide[1:], want_stdout=True)
        check(out == plain_out, "no hwloc, no cache: the program's output unchanged")
        d = export(os.path.join(w, "nohwloc.ompf"))
        check(d["xus"] and all(x["core"] == -1 and x["numa"] == -1 for x in d["xus"]) and
              [e["status"] for e in d["events"]] == ["counted", "counted"],
              "no hwloc, no cache: events counted, XUs without core and node: %s" %
              (d["xus"][:1],))

    # What the file says is used: a planted encoding (PAGE-FAULTS as config
    # 0, CPU-CLOCK) and topology (every CPU on core 7, node 5).
    lines = [ln for ln in text.splitlines()
             if not ln.startswith(("topo ", "event "))]
    ncpu = max(max(plain_cpus), 1) + 1
    planted = "\n".join(lines + [
        "topo %d %s %s" % (ncpu, " ".join(["7"] * ncpu), " ".join(["5"] * ncpu)),
        "event 1 0 0 0 0 100040\tperf::PAGE-FAULTS"]) + "\n"
    with open(cfile, "w") as f:
        f.write(planted)
    run(os.path.join(w, "planted.ompf"), cdir)
    enc, cpus = profile(os.path.join(w, "planted.ompf"))
    check(enc[1][2] == 0, "planted encoding used: %s" % (enc,))
    check(all(v == {(7, 5)} for v in cpus.values()),
          "planted topology used: %s" % cpus)

    # Another affinity mask: the topology is read again (and the file
    # rewritten with it); the events stay cached.
    with open(cfile, "w") as f:
        f.write(planted.replace("\nmask ", "\nmask f0"))
    run(os.path.join(w, "mask.ompf"), cdir)
    enc, cpus = profile(os.path.join(w, "mask.ompf"))
    check(all((7, 5) not in v for v in cpus.values()),
          "topology of another mask not used: %s" % cpus)
    check(enc[1][2] == 0, "events of that file still used")

    # Under another libpfm4 environment (a forced PMU model encodes names
    # differently) the planted file is not read: another file is used.
    with open(cfile, "w") as f:
        f.write(planted)
    err = run(os.path.join(w, "forced.ompf"), cdir, {"LIBPFM_ENCODE_INACTIVE": "1"})
    enc, _ = profile(os.path.join(w, "forced.ompf"))
    check(enc == plain_enc, "another libpfm4 environment: planted file ignored: %s" % (enc,))
    check(libpfm_initialised(err), "another libpfm4 environment: libpfm4 again")
    others = [n for n in os.listdir(cdir) if n.startswith(".startup-" + boot_id() + "-")]
    check(len(others) == 1, "another libpfm4 environment: its own file %s" % others)

    # A file of another boot is not read.
    os.rename(cfile, os.path.join(cdir, ".startup-00000000-0000-0000-0000-000000000000"))
    err = run(os.path.join(w, "otherboot.ompf"), cdir)
    enc, _ = profile(os.path.join(w, "otherboot.ompf"))
    check(enc == plain_enc, "another boot's file ignored: %s" % (enc,))
    check(libpfm_initialised(err), "another boot's file: libpfm4 again")

    # ompfuse run: the campaign directory is its runs' cache.
    plan = os.path.join(w, "plan.txt")
    with open(plan, "w") as f:
        f.write("lgl 1 perf::TASK-CLOCK\nlgl 1 perf::CPU-CLOCK\n")
    out = os.path.join(w, "campaign")
    p = subprocess.run([A.ompfuse, "run", "--plan", plan, "--out", out,
                        "--tool", A.tool, "-q", "--no-check", "--",
                        A.prog, "fib", "10"], capture_output=True, text=True,
                       timeout=300)
    check(p.returncode == 0, "ompfuse run: %s" % p.stderr[-1500:])
    cf = os.path.join(out, ".startup-" + boot_id())
    check(os.path.isfile(cf) and "perf::TASK-CLOCK" in open(cf).read(),
          "ompfuse run leaves %s" % cf)

    if FAILS:
        print("%d failure(s)" % len(FAILS))
        return 1
    print("startup_cache: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
