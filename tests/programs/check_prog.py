#!/usr/bin/python3
"""Runs one tool-test program and checks what its header comment promises.

usage: check_prog.py PROG THREADS [--tool LIB --expect k=v,...] [-- ARGS...]

Without the tool the program must exit 0 and print one 'checksum =' line;
with --tool (tests/programs/xu_count_tool.c) it must print the same line
and the tool's counts must equal --expect (keys: tasks, taskloop_chunks,
loop_chunks, sections)."""
import os
import re
import subprocess
import sys


def run(prog, threads, args, tool=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    env.pop("OMP_TOOL_LIBRARIES", None)
    if tool:
        env["OMP_TOOL_LIBRARIES"] = tool
    p = subprocess.run([prog] + args, env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: {prog} exited with {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    sums = [l for l in p.stdout.splitlines() if "checksum =" in l]
    if len(sums) != 1:
        sys.exit(f"FAIL: {prog} printed {len(sums)} checksum lines:\n{p.stdout}")
    return sums[0], p.stderr


def main():
    argv = sys.argv[1:]
    prog_args = []
    if "--" in argv:
        i = argv.index("--")
        argv, prog_args = argv[:i], argv[i + 1:]
    if len(argv) < 2:
        sys.exit(__doc__)
    prog, threads = argv[0], int(argv[1])
    tool = expect = None
    rest = argv[2:]
    while rest:
        if rest[0] == "--tool":
            tool = rest[1]
        elif rest[0] == "--expect":
            expect = dict(kv.split("=") for kv in rest[1].split(","))
        else:
            sys.exit(f"unknown argument {rest[0]}")
        rest = rest[2:]

    plain, _ = run(prog, threads, prog_args)
    print(f"without tool: {plain}")
    if not tool:
        again, _ = run(prog, threads, prog_args)
        if again != plain:
            sys.exit(f"FAIL: checksum differs between runs: {plain!r} vs {again!r}")
        return
    traced, err = run(prog, threads, prog_args, tool)
    print(f"with xu_count tool: {traced}")
    if traced != plain:
        sys.exit(f"FAIL: checksum changed under the tool: {plain!r} vs {traced!r}")
    m = re.search(r"xu_count: (.*)", err)
    if not m:
        sys.exit(f"FAIL: the xu_count tool printed nothing; stderr:\n{err}")
    got = dict(kv.split("=") for kv in m.group(1).split())
    print(f"counts: {got}")
    bad = {k: (v, got.get(k)) for k, v in (expect or {}).items() if got.get(k) != v}
    if bad:
        sys.exit(f"FAIL: XU counts differ from the program's comment (expected, got): {bad}")
    print("PASS")


if __name__ == "__main__":
    main()
