#!/usr/bin/python3
"""Constructs of a program built from two compilation units
(tests/programs/two_units_*.c, linked in both orders) resolve to the file
and line addr2line (binutils, the oracle) gives for their addresses.
clang writes no .debug_aranges, so the resolver searches the CUs' own
ranges: a construct in any CU, not only the first, must get its line.
A task construct in a function inlined at two call sites is two
constructs (two code addresses) of one name: `analyze` shows one row for
it, and `--where construct=FILE:LINE` selects both, MODULE+0xOFFSET one.

usage: two_units.py --tool SO --ompfuse BIN --prog P [--prog P2] --workdir DIR"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_tests import check  # noqa: E402  (one failure list)
from xu_inside import script_args, verdict  # noqa: E402

# show's construct rows and the module line under each
ROW = re.compile(r"^\s+\d+\s+(\S+)\s+(.*?)\s+(\d+) XUs$")
MOD = re.compile(r"^\s+(\S+)\+0x([0-9a-f]+) build-id")


def constructs(ompfuse, path, *opts):
    """(kind, key, XUs, offset) of every construct `show` lists."""
    r = subprocess.run([ompfuse, "show", *opts, path], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0, "show %s: %s" % (path, r.stderr))
    out, last = [], None
    for line in r.stdout.splitlines():
        m = ROW.match(line)
        if m:
            last = [m.group(1), m.group(2), int(m.group(3)), None]
            out.append(last)
            continue
        m = MOD.match(line)
        if m and last is not None:
            last[3] = int(m.group(2), 16)
            last = None
    return out


def addr2line(binary, off):
    """file, line of the call before return address off (a PIE: the
    offset is the ELF address)."""
    r = subprocess.run(["addr2line", "-e", binary, hex(off - 1)], capture_output=True,
                       text=True, timeout=60)
    m = re.match(r"^(.*):(\d+)", r.stdout.strip().splitlines()[0] if r.stdout else "")
    return (os.path.basename(m.group(1)), int(m.group(2))) if m else (None, None)


def main():
    a = script_args(("--tool", "--ompfuse", "--workdir"), many=("--prog",))
    check(shutil.which("addr2line") is not None,
          "addr2line (binutils, installed by scripts/setup.sh) is the oracle")
    for prog in a.prog:
        name = os.path.basename(prog)
        out = os.path.join(a.workdir, name + ".ompf")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("OMPFUSE_") and k != "OMP_TOOL_LIBRARIES"}
        env.update(OMP_TOOL_LIBRARIES=a.tool, OMPFUSE_OUTPUT=out, OMP_NUM_THREADS="2")
        r = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and os.path.exists(out), "%s under the tool: %d %s" %
              (name, r.returncode, r.stderr[-300:]))
        rows = constructs(a.ompfuse, out)
        files = set()
        for kind, key, xus, off in rows:
            if off is None:
                check(False, "%s: no module line for %r" % (name, key))
                continue
            want_file, want_line = addr2line(prog, off)
            m = re.match(r"^(\S+):(\d+) ", key)
            got = (os.path.basename(m.group(1)), int(m.group(2))) if m else (None, None)
            print("%-22s %-9s %5d XUs  %-45s addr2line %s:%s" %
                  (name, kind, xus, key, want_file, want_line))
            check(got == (want_file, want_line),
                  "%s: %s construct +0x%x is %r, addr2line says %s:%s" %
                  (name, kind, off, key, want_file, want_line))
            if xus:
                files.add(got[0])
        check(files == {"two_units_main.c", "two_units_work.c"},
              "%s: constructs with XUs resolved in both files: %s" % (name, sorted(files)))
        # --where construct= by file:line selects every construct of that
        # key, by address the one; analyze shows one row per key
        per_key = {}
        for kind, key, xus, off in rows:
            per_key[key] = per_key.get(key, 0) + xus
        inlined = [k for k in per_key if sum(1 for r in rows if r[1] == k and r[2]) >= 2]
        check(any("spawn" in k for k in inlined),
              "%s: spawn()'s task, inlined at two call sites, is two constructs of one "
              "name: %s" % (name, inlined))
        for kind, key, xus, off in rows:
            if not xus or off is None:
                continue
            for v, want in ((key.split()[0].rsplit("/", 1)[-1], per_key[key]),
                            ("%s+0x%x" % (name, off), xus)):
                r = subprocess.run([a.ompfuse, "analyze", "--csv", "--no-builtin-metrics",
                                    "--where", "construct=" + v, out], capture_output=True,
                                   text=True, timeout=60)
                xs = [l.split(",")[9] for l in r.stdout.splitlines()[1:]
                      if ",duration_ns," in l and l.split(",")[2] == "0"]
                check(r.returncode == 0 and xs == [str(want)],
                      "%s: --where construct=%s: one row of %d XUs, got %s (rc %d)" %
                      (name, v, want, xs, r.returncode))
        kinds = {k for k, _key, x, _o in rows if x}
        check({"task", "loop"} <= kinds or {"task", "dynamic"} <= kinds or len(kinds) >= 2,
              "%s: tasks and loop chunks recorded: %s" % (name, sorted(kinds)))
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
