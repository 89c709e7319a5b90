#!/usr/bin/python3
"""Benchmark of `ompfuse analyze` (docs/analysis.md, "Benchmark").

  cmake --build build --target ompfuse bench_analyze_gen
  /usr/bin/python3 benchmarks/analyze/bench_analyze.py build [N [THREADS]]

Writes a profile of N XUs (default 10^6) x 8 events with bench_analyze_gen,
then, alternating, 5 times each: `ompfuse show` (reading the profile and a
summary) and `ompfuse analyze` (table, built-in metrics: 15 columns).
Prints median wall and CPU seconds and their ratios (target: analyze <= 2x
show), then the size of `ompfuse analyze --html` (target <= 10 MB) and the
time headless Chromium takes to load and screenshot it, minus the same for
an empty page (Chromium's start-up), median of 3 (target < 5 s)."""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
threads = sys.argv[3] if len(sys.argv) > 3 else "4"
ompfuse = os.path.join(build, "bin", "ompfuse")
gen = os.path.join(build, "bin", "bench_analyze_gen")
d = tempfile.mkdtemp(prefix="bench_analyze.")


def timed(cmd, **kw):
    """(wall s, cpu s of the child)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


try:
    prof = os.path.join(d, "big.ompf")
    subprocess.run([gen, str(n), threads, prof], check=True)
    print(f"profile: {n} XUs x 8 events, {threads} threads, "
          f"{os.path.getsize(prof) / 1e6:.1f} MB; load {os.getloadavg()[0]:.1f}")
    res = {"show": [], "analyze": []}
    for _ in range(5):
        res["show"].append(timed([ompfuse, "show", "--no-resolve", prof]))
        res["analyze"].append(timed([ompfuse, "analyze", "--no-resolve", prof]))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in res.items()}
    print(f"{'':10s} {'wall s':>8s} {'cpu s':>8s}   (median of 5)")
    for k in ("show", "analyze"):
        print(f"{k:10s} {med[k][0]:8.3f} {med[k][1]:8.3f}")
    rw, rc = med["analyze"][0] / med["show"][0], med["analyze"][1] / med["show"][1]
    print(f"analyze / show: wall {rw:.2f}x, cpu {rc:.2f}x (target <= 2x)")

    page = os.path.join(d, "page.html")
    w, c = timed([ompfuse, "analyze", "--no-resolve", "--html", page, prof])
    size = os.path.getsize(page)
    print(f"page: {size / 1e6:.2f} MB (target <= 10 MB), written in {w:.2f} s wall, {c:.2f} s cpu")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    empty = os.path.join(d, "empty.html")
    with open(empty, "w") as f:
        f.write("<!DOCTYPE html><html><body></body></html>\n")

    def shot(url):
        return timed([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                      "--disable-background-networking", "--disable-component-update",
                      "--disable-sync", "--no-first-run",
                      f"--user-data-dir={os.path.join(d, 'chrome')}",
                      f"--screenshot={os.path.join(d, 'shot.png')}", "--window-size=1400,1400",
                      url], timeout=300)[0]

    shot("file://" + empty)  # warm the profile directory
    base = statistics.median(shot("file://" + empty) for _ in range(3))
    full = statistics.median(shot("file://" + page) for _ in range(3))
    print(f"chromium: page {full:.2f} s, empty page {base:.2f} s, "
          f"render {full - base:.2f} s (target < 5 s)")
finally:
    shutil.rmtree(d, ignore_errors=True)
