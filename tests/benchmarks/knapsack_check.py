#!/usr/bin/python3
"""Knapsack checks: the optimum equals the DP optimum in both modes, and
in deterministic mode (-d) the task tree (task and node counts) is the
same for every run and every thread count.

usage: knapsack_check.py KNAPSACK N SEED CUTOFF"""
import os
import re
import subprocess
import sys


def run(exe, threads, args):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    p = subprocess.run([exe] + args, env=env, capture_output=True, text=True, timeout=120)
    out = p.stdout
    if p.returncode != 0 or "CHECK SUCCESSFUL" not in out:
        sys.exit(f"FAIL: {' '.join([exe] + args)} with {threads} threads: exit {p.returncode}\n"
                 f"{out}{p.stderr}")
    vals = {k: int(re.search(rf"^{k} = (-?\d+)", out, re.M).group(1))
            for k in ("optimum", "dp optimum", "tasks", "nodes")}
    if vals["optimum"] != vals["dp optimum"]:
        sys.exit(f"FAIL: optimum {vals['optimum']} != DP {vals['dp optimum']}")
    return vals


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    exe, n, seed, cutoff = sys.argv[1:]
    base = ["-n", n, "-s", seed, "-c", cutoff]
    for threads in (1, 2, 4):
        v = run(exe, threads, base)
        print(f"shared-bound, {threads} threads: {v}")
    det = [run(exe, t, base + ["-d"]) for t in (1, 2, 4, 2)]
    for t, v in zip((1, 2, 4, 2), det):
        print(f"deterministic, {t} threads: {v}")
    tree = {(v["tasks"], v["nodes"]) for v in det}
    if len(tree) != 1:
        sys.exit(f"FAIL: deterministic mode gave different task trees (tasks, nodes): {tree}")
    if det[0]["tasks"] == 0:
        sys.exit("FAIL: no tasks were created; the instance is too easy to test tasking")
    print("PASS")


if __name__ == "__main__":
    main()
