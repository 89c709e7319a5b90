#!/usr/bin/python3
"""Runs commands in alternation and prints the CPU time of each.

usage: benchmarks/alternate.py ROUNDS LABEL COMMAND [LABEL COMMAND ...]

Each round runs every COMMAND once (through the shell, output discarded),
in the order given, so that a noisy machine's slow phases hit them all
alike.  Prints per LABEL the user + system CPU seconds of the command and
its children, min and median over the rounds, and every round's figure
(from os.wait4: microsecond resolution, where /usr/bin/time has 10 ms).

Example (docs/benchmarks.md, issue 20, session 9):
  /usr/bin/python3 benchmarks/alternate.py 15 \\
      old "OLD/ompfuse show /tmp/fz/n10000000-alike/lgl0.ompf" \\
      new "build/bin/ompfuse show /tmp/fz/n10000000-alike/lgl0.ompf"
"""
import os
import statistics
import subprocess
import sys


def main(argv):
    if len(argv) < 3 or len(argv) % 2 != 1 or not argv[0].isdigit() or int(argv[0]) < 1:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    rounds = int(argv[0])
    jobs = list(zip(argv[1::2], argv[2::2]))
    cpu = {label: [] for label, _ in jobs}
    for _ in range(rounds):
        for label, cmd in jobs:
            p = subprocess.Popen(cmd, shell=True, stdout=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            if status:
                sys.stderr.write("alternate.py: '%s' failed (wait status %d)\n" % (cmd, status))
                return 1
            cpu[label].append(ru.ru_utime + ru.ru_stime)
    width = max(len(label) for label in cpu)
    for label, v in cpu.items():
        print("%-*s  CPU s min %.3f median %.3f  (%s)" % (
            width, label, min(v), statistics.median(v), " ".join("%.2f" % x for x in v)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
