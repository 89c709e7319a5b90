#!/usr/bin/python3
"""The tool never harms the observed program and survives fatal endings
(docs/tool.md, "Descriptors" and "Fatal endings").  Usage:
  safety_tests.py TEST --tool LIB --dump DUMP --bindir DIR --src DIR
                  --workdir DIR --ompfuse OMPFUSE [--sanitize]
Each test runs a program of tests/programs without and with the tool and
asserts: same exit status (signal included), same stdout, the program's
own file byte-identical, and the profile's XU count (read by tool_dump and
by `ompfuse show`)."""
import argparse
import os
import resource
import signal
import subprocess
import sys

import run_tests as R

A = None


def env_for(out, tool, extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OMPFUSE_") and k not in
           ("OMP_NUM_THREADS", "OMP_TOOL_LIBRARIES")}
    if tool:
        env["OMP_TOOL_LIBRARIES"] = A.tool
        env["OMPFUSE_OUTPUT"] = out
        env.update(extra or {})
    return env


def clean(out):
    d, base = os.path.split(out)
    for f in os.listdir(d):
        if f == base or f.startswith(base + ".tmp."):
            os.unlink(os.path.join(d, f))


def run(argv, out, tool, nofile=None, extra=None):
    """(returncode, stdout, stderr, pid); nofile: RLIMIT_NOFILE soft limit."""
    clean(out)

    def limit():
        if nofile:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))
    p = subprocess.Popen(argv, env=env_for(out, tool, extra), cwd=A.workdir,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=limit)
    so, se = p.communicate(timeout=240)
    return p.returncode, so, se, p.pid


def show(path):
    """`ompfuse show`: (exit status, its warning lines)."""
    p = subprocess.run([A.ompfuse, "show", path], capture_output=True,
                       text=True)
    return p.returncode, p.stderr


def check_profile(path, want_xus, salvaged, tag, values=False):
    prof = R.Profile(path, summary=not values)
    info = prof.info
    if values:  # every event value of every XU present
        R.check(all(v is not None for x in prof.xus for v in x["values"])
                and len(prof.xus) == want_xus,
                "%s: XUs with missing values" % tag)
    R.check(info.get("xus_read") == want_xus and
            info.get("xus_dropped") == 0,
            "%s: %s holds %s XUs (%s dropped), expected %d" % (
                tag, os.path.basename(path), info.get("xus_read"),
                info.get("xus_dropped"), want_xus))
    R.check(info.get("truncated") == (1 if salvaged else 0),
            "%s: truncated=%s, expected %d" % (tag, info.get("truncated"),
                                               1 if salvaged else 0))
    rc, err = show(path)
    if salvaged:
        R.check(rc == 0 and ("truncated after %d XUs" % want_xus) in err,
                "%s: ompfuse show: rc %d %r" % (tag, rc, err))
    else:
        R.check(rc == 0 and err == "", "%s: ompfuse show: rc %d %r" % (
            tag, rc, err))
    print("%s: %s: %s XUs%s" % (tag, os.path.basename(path),
                                info.get("xus_read"),
                                " (salvaged)" if salvaged else ""))


# ---- descriptors ----------------------------------------------------------

ROUNDS, TASKS = 4, 50000
FD_XUS = 10 + ROUNDS * TASKS


def fd_case(mode, nofile=None, events=None):
    """Runs fd_hostile MODE without and with the tool (OMPFUSE_EVENTS
    events); returns the tool run's (rc, stdout, stderr) after the common
    checks."""
    prog = R.prog("prog_fd_hostile")
    data = os.path.join(A.workdir, "fd-%s.data" % mode)
    out = os.path.join(A.workdir, "fd-%s.ompf" % mode)
    tag = "%s%s" % (mode, " (RLIMIT_NOFILE %d)" % nofile if nofile else "")
    argv = [prog, mode, data, str(ROUNDS), str(TASKS)]
    ref = run(argv, out, False, nofile)
    ref_bytes = open(data, "rb").read() if os.path.exists(data) else None
    if os.path.exists(data):
        os.unlink(data)
    got = run(argv, out, True, nofile,
              extra={"OMPFUSE_EVENTS": events} if events else None)
    got_bytes = open(data, "rb").read() if os.path.exists(data) else None
    R.check(got[0] == ref[0] and got[1] == ref[1],
            "%s: program changed: rc %d vs %d, stdout %r vs %r" % (
                tag, got[0], ref[0], got[1], ref[1]))
    R.check(got_bytes == ref_bytes,
            "%s: the program's own file differs with the tool (%s vs %s "
            "bytes)" % (tag, len(got_bytes or b""), len(ref_bytes or b"")))
    if ref_bytes is not None:
        R.check(ref[1].endswith("file ok %d bytes\n" % len(ref_bytes)),
                "%s: the program's check: %r" % (tag, ref[1]))
    return got, out


def t_fd_close():
    """The program closes 3..1023 and opens its own file: with the usual
    limit (the tool's descriptor sits above 1023) and with RLIMIT_NOFILE
    1024 (it sits below and is closed: the tool reopens its file)."""
    for nofile in (None, 1024):
        got, out = fd_case("close3", nofile)
        R.check(got[2] == "", "close3: stderr %r" % got[2])
        check_profile(out, FD_XUS, False, "close3")


def t_fd_dup2():
    """The program dup2()s its file onto every other descriptor, the
    tool's among them: the tool must notice and reopen its file."""
    got, out = fd_case("dup2")
    R.check(got[2] == "", "dup2: stderr %r" % got[2])
    check_profile(out, FD_XUS, False, "dup2")


def t_fd_closeall():
    """Every descriptor closed (stdio too), nothing written by the
    program: the profile is still complete."""
    got, out = fd_case("closeall")
    check_profile(out, FD_XUS, False, "closeall")


# ---- counter descriptors ----------------------------------------------------

EVENTS = "perf::TASK-CLOCK,perf::PAGE-FAULTS"
LONG_NS = 10000  # an XU this long ran on a CPU: its TASK-CLOCK is > 0


def check_counters(path, tag, lost):
    """Every XU's TASK-CLOCK is real: > 0 when the XU lasted LONG_NS,
    within its duration (xu_inside.py's tolerance), never a silent 0;
    values are missing (NA) only when lost, for both events at once,
    and then the event table says why."""
    import xu_inside
    prof = R.Profile(path)
    R.check([e[0] for e in prof.events] == EVENTS.split(","),
            "%s: events %s" % (tag, prof.events))
    na = zero = over = 0
    for x in prof.xus:
        tc, pf = x["values"]
        if tc is None or pf is None:
            na += 1
            R.check(tc is None and pf is None, "%s: XU %s: one value "
                    "missing, not both: %s" % (tag, x["label"], x["values"]))
            continue
        d = x["end"] - x["start"]
        if tc == 0 and d >= LONG_NS:
            zero += 1
        if tc > d + xu_inside.TOL_ABS_NS + xu_inside.TOL_REL * d:
            over += 1
    R.check(len(prof.xus) == FD_XUS, "%s: %d XUs" % (tag, len(prof.xus)))
    R.check(zero == 0, "%s: %d XUs of >= %d ns with TASK-CLOCK 0" % (
        tag, zero, LONG_NS))
    R.check(over == 0, "%s: %d XUs with TASK-CLOCK > duration" % (tag, over))
    if lost:
        R.check(na > 0, "%s: the counters were closed behind the tool's "
                "back, yet no value is missing" % tag)
        for name, _ in prof.events:
            why = prof.reasons.get(name, "")
            R.check("lost on thread" in why and "missing" in why,
                    "%s: %s: reason %r" % (tag, name, why))
    else:
        R.check(na == 0, "%s: %d XUs with missing values" % (tag, na))
        R.check(all(st == "counted" for _, st in prof.events),
                "%s: statuses %s" % (tag, prof.events))
    print("%s: %d XUs, %d with values missing, %d zero TASK-CLOCK of "
          ">= %d ns, %d above their duration; %s" % (
              tag, len(prof.xus), na, zero, LONG_NS, over,
              "; ".join("%s %s %s" % (n, st, prof.reasons.get(n, ""))
                        for n, st in prof.events)))


def t_fd_counters():
    """The program closes (close, closefrom, close_range) or dup2()s over
    the tool's counter descriptors (the tool's wrappers keep them its own): program
    output and file unchanged, every XU has real counts."""
    for mode, nofile in (("close3", 1024), ("close3", None),
                         ("closeall", None), ("closefrom", None),
                         ("dup2", None)):
        got, out = fd_case(mode, nofile, EVENTS)
        tag = "%s%s" % (mode, " (RLIMIT_NOFILE %d)" % nofile
                        if nofile else "")
        R.check(got[2] == "", "%s: stderr %r" % (tag, got[2]))
        check_profile(out, FD_XUS, False, tag)
        check_counters(out, tag, lost=False)


def t_fd_counters_lost():
    """The close system call itself, which no wrapper sees, on the
    counters (RLIMIT_NOFILE 1024 puts them below 1024): the program is
    unchanged, the lost values are missing (never 0) and the event table
    and one warning line say why."""
    got, out = fd_case("sysclose", 1024, EVENTS)
    lines = got[2].splitlines()
    R.check(len(lines) == 1 and "missing" in lines[0] and
            "ompfuse: warning:" in lines[0],
            "sysclose: expected one warning line, got %r" % got[2])
    check_profile(out, FD_XUS, False, "sysclose")
    check_counters(out, "sysclose", lost=True)


def no_profile(mode, words):
    """fd_hostile MODE: exactly one stderr line from the tool, naming the
    temporary file and containing words; no file left under either
    name."""
    got, out = fd_case(mode)
    lines = got[2].splitlines()
    R.check(len(lines) == 1 and lines[0].startswith("ompfuse: error:") and
            ".tmp.%d" % got[3] in lines[0] and
            all(w in lines[0] for w in words),
            "%s: expected one line saying why, got %r" % (mode, got[2]))
    left = [f for f in os.listdir(A.workdir)
            if f.startswith(os.path.basename(out))]
    R.check(left == [], "%s: files left: %s" % (mode, left))
    print("%s: %s" % (mode, got[2].strip()))


def t_fd_lost():
    """Descriptor closed and temporary file removed: no profile under the
    final name, one line says why."""
    no_profile("lost", ["cannot be reopened", "no profile is written"])


def t_fd_scribble():
    """4 MiB appended to the temporary profile behind the tool's back: the
    file is not what was written, so it never gets the final name; one
    line says why."""
    no_profile("scribble", ["were written", "not renamed"])


# ---- fatal endings ---------------------------------------------------------

def fatal_case(mode, n, final, sanitizer_owned=False, events=None,
               xus=None):
    """fatal_end MODE N without and with the tool: same status and
    stdout; the profile holds the N tasks: salvaged from the temporary
    file (final=False) or complete under its final name (exec)."""
    prog = R.prog("prog_fatal_end")
    out = os.path.join(A.workdir, "fatal-%s.ompf" % mode)
    ref = run([prog, mode, str(n)], out, False)
    got = run([prog, mode, str(n)], out, True,
              extra={"OMPFUSE_EVENTS": events} if events else None)
    tag = "%s N=%d%s" % (mode, n, " " + events if events else "")
    R.check(got[0] == ref[0] and got[1] == ref[1],
            "%s: program changed: rc %d vs %d, stdout %r vs %r" % (
                tag, got[0], ref[0], got[1], ref[1]))
    if not (sanitizer_owned and A.sanitize):  # ASan reports carry pids
        R.check(got[2] == ref[2], "%s: stderr changed: %r vs %r" % (
            tag, got[2], ref[2]))
    print("%s: exit status %d (%s), stdout %r" % (
        tag, got[0], "signal %s" % signal.Signals(-got[0]).name
        if got[0] < 0 else "exit", got[1]))
    if sanitizer_owned and A.sanitize:
        # ASan's own SIGSEGV/SIGFPE handler (or its signal/sigaction/_exit
        # interceptors, which bypass the tool's hooks) ends the process
        # first: only the unchanged status and output are asserted here.
        print("%s: sanitizer build: the sanitizer handles this signal "
              "before the tool (see docs/tool.md)" % tag)
        return ref
    path = out if final else "%s.tmp.%d" % (out, got[3])
    R.check(os.path.exists(path), "%s: no %s" % (tag, path))
    if os.path.exists(path):
        check_profile(path, xus or n, not final, tag, values=bool(events))
    if not final:
        R.check(not os.path.exists(out), "%s: a crashed run's profile was "
                "renamed to its final name" % tag)
    return ref


def t_fatal_signals():
    r = fatal_case("abort", 1000, False)
    R.check(r[0] == -signal.SIGABRT, "abort: status %d, expected SIGABRT "
            "(134 in a shell)" % r[0])
    # beyond one stream buffer: flushed chunks plus the buffered rest
    fatal_case("abort", 60000, False)
    # event values: compressed flushed chunks plus salvaged raw ones
    fatal_case("abort", 60000, False,
               events="perf::TASK-CLOCK,perf::PAGE-FAULTS")
    fatal_case("abort_task", 1000, False)
    fatal_case("abort_handler", 1000, False, sanitizer_owned=True)
    r = fatal_case("segv", 1000, False, sanitizer_owned=True)
    if not A.sanitize:
        R.check(r[0] == -signal.SIGSEGV, "segv: status %d" % r[0])
    fatal_case("segv_handler", 1000, False, sanitizer_owned=True)
    r = fatal_case("fpe", 1000, False, sanitizer_owned=True)
    if not A.sanitize:
        R.check(r[0] == -signal.SIGFPE, "fpe: status %d" % r[0])
    # ASan leaves SIGILL alone (handle_sigill=0)
    fatal_case("ill", 1000, False)
    # ASan intercepts _exit inside the executable: no GOT entry to hook
    r = fatal_case("_exit", 1000, False, sanitizer_owned=True)
    R.check(r[0] == 3, "_exit: status %d" % r[0])


def t_fatal_exec():
    for mode in ("exec", "exec_le", "exec_vp", "exec_task"):
        r = fatal_case(mode, 1000, True)
        R.check(r[0] == 0 and r[1].endswith("exec'd\n"),
                "%s: the exec did not happen: %r" % (mode, r))
    # execs that cannot find their file fail: the profile goes on (2N XUs,
    # no message)
    r = fatal_case("exec_fail", 1000, True, xus=2000)
    R.check(r[0] == 0, "exec_fail: status %d" % r[0])


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("test")
    for o in ("tool", "dump", "bindir", "src", "workdir", "ompfuse",
              "preload"):
        ap.add_argument("--" + o)
    ap.add_argument("--sanitize", action="store_true")
    A = ap.parse_args()
    A.workdir = os.path.join(A.workdir, "safety-" + A.test)
    os.makedirs(A.workdir, exist_ok=True)
    R.A = A
    globals()["t_" + A.test]()
    if R.FAILS:
        print("%d check(s) failed" % len(R.FAILS))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
