#!/usr/bin/python3
"""Export speed and size: a profile of N XUs (default 10^6; built from a
generated CSV with `ompfuse import`) exported to every format; time
relative to `ompfuse show` of the same file, bytes per XU, peak memory;
and the Python reader (ompfuse.read) on the same file.
usage: bench_export.py [--build build] [--xus N] [--repeats R] [--work DIR]
Prints one line per format; best of R runs (default 3)."""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--xus", type=int, default=10**6)
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--work")
a = ap.parse_args()
exe = os.path.abspath(os.path.join(a.build, "bin", "ompfuse"))
work = a.work or tempfile.mkdtemp(prefix="ompf-bench-export-")
os.makedirs(work, exist_ok=True)
src = os.path.join(work, "bench.ompf")


def make_profile():
    """4 threads of back-to-back XUs (every 8th is a nested child), 4
    counted events; 1 in 100 XUs lacks one value."""
    rng = random.Random(1)
    csv = os.path.join(work, "bench.csv")
    with open(csv, "w") as f:
        f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns,"
                "perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES,cycles\n")
        t = [1000] * 4
        for i in range(a.xus):
            th = i % 4
            dur = rng.randint(500, 5000)
            if i % 8 == 5:  # a child inside the XU before it on this thread
                start, end = t[th] - 300, t[th] - 100
                label = "0.1.%d.%d" % (i - 4, i)
            else:
                start, end = t[th] + rng.randint(50, 400), 0
                end = start + dur
                t[th] = end
                label = "0.1.%d" % i
            miss = "" if i % 100 == 7 else str(rng.randint(0, 50))
            f.write("%d,kernel.c:%d,task,%s,%d,%d,%d,%d,%d,%d,%s,%d\n" % (
                i + 1, 10 + i % 5, label, th, th, start, end, end - start, rng.randint(0, 3),
                miss, rng.randint(1000, 10**7)))
    subprocess.run([exe, "import", "--csv", csv, "-o", src, "--threads", "4"], check=True)
    os.remove(csv)


def timed(args):
    """Best wall time of R runs and the peak RSS (MiB) of the child."""
    best, rss = None, 0
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        if status:
            sys.exit("failed: %s" % " ".join(args))
        best = dt if best is None else min(best, dt)
        rss = max(rss, ru.ru_maxrss / 1024)
    return best, rss


def size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


if not os.path.exists(src):
    make_profile()
show, show_rss = timed([exe, "show", "--no-resolve", src])
print("profile: %d XUs, %d bytes (%.1f B/XU); ompfuse show: %.2f s, %.0f MiB"
      % (a.xus, size(src), size(src) / a.xus, show, show_rss))
print("%-9s %8s %7s %12s %8s %8s" % ("format", "seconds", "x show", "bytes", "B/XU", "MiB"))
for fmt, out in (("csv", "out.csv"), ("json", "out.json"), ("perfetto", "out.trace.json"),
                 ("otf2", "out.otf2")):
    dest = os.path.join(work, out)
    t, rss = timed([exe, "export", "--no-resolve", "--format", fmt, "-o", dest, src])
    print("%-9s %8.2f %7.2f %12d %8.1f %8.0f" % (fmt, t, t / show, size(dest), size(dest) / a.xus,
                                                rss))
py = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
t, rss = timed(["/usr/bin/python3", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                "import ompfuse; assert len(ompfuse.read(sys.argv[2], sys.argv[3], "
                "resolve=False).xus) == int(sys.argv[4])", py, src, exe, str(a.xus)])
print("%-9s %8.2f %7.2f %12s %8s %8.0f  (ompfuse.read into pandas, incl. the CSV export)"
      % ("python", t, t / show, "-", "-", rss))
if not a.work:
    shutil.rmtree(work)
