"""Shared by the analyze_* tests: a fresh work directory, check() that
records failures, finish() that reports them and sets the exit status."""
import os
import shutil
import sys

fails = []


def workdir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        fails.append(what)


def finish(name):
    if fails:
        print(f"{len(fails)} failures")
        sys.exit(1)
    print(f"{name}: all checks passed")
