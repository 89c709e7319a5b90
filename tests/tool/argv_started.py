#!/usr/bin/python3
"""A program that overwrites its options before its first parallel region
(as BOTS does: argv[i][1] = '*') is recorded with the command line it was
started with when `ompfuse run` starts it (OMPFUSE_ARGV); started by hand
under the tool, with the strings it left (what /proc/self/cmdline shows);
an OMPFUSE_ARGV of another program (another argv[0]) is not taken.

usage: argv_started.py --tool SO --ompfuse BIN --prog PROG --workdir DIR"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_tests import check  # noqa: E402  (one failure list)
from xu_inside import script_args, verdict  # noqa: E402


def argv_of(ompfuse, path):
    r = subprocess.run([ompfuse, "show", path], capture_output=True, text=True, timeout=60)
    m = re.search(r"^  argv\s+(.*)$", r.stdout, re.M)
    return m.group(1) if m else None


def main():
    a = script_args()
    w = a.workdir
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OMPFUSE_") and k != "OMP_TOOL_LIBRARIES"}
    env.update(OMP_NUM_THREADS="2", OMPFUSE_TOOL=a.tool)
    plan = os.path.join(w, "p.plan")
    open(plan, "w").write("# slots: 2\nlgl 1 perf::TASK-CLOCK\n")
    started = [a.prog, "-n", "5", "-o", "0"]
    r = subprocess.run([a.ompfuse, "run", "-q", "--plan", plan, "--out", os.path.join(w, "r"),
                        "--"] + started, env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "ompfuse run: %d %s" % (r.returncode, r.stderr[-300:]))
    got = argv_of(a.ompfuse, os.path.join(w, "r", "lgl-1-r1.ompf"))
    print("ompfuse run:       argv %r" % got)
    check(got == " ".join(started), "through ompfuse run: the command as started %r, got %r"
          % (" ".join(started), got))

    mangled = "%s -* 5 -* 0" % a.prog
    for what, extra, want in (
            ("by hand", {}, mangled),
            ("OMPFUSE_ARGV of another program", {"OMPFUSE_ARGV": "\x1f".join(
                ["/bin/other"] + started[1:])}, mangled),
            ("OMPFUSE_ARGV with other arguments", {"OMPFUSE_ARGV": "\x1f".join(started[:3])},
             mangled)):
        out = os.path.join(w, "hand.ompf")
        e = dict(env, OMP_TOOL_LIBRARIES=a.tool, OMPFUSE_OUTPUT=out, **extra)
        r = subprocess.run(started, env=e, capture_output=True, text=True, timeout=60)
        got = argv_of(a.ompfuse, out) if r.returncode == 0 else None
        print("%-34s argv %r" % (what + ":", got))
        check(got == want, "%s: the strings the program left %r, got %r" % (what, want, got))
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
