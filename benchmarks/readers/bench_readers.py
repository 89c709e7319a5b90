#!/usr/bin/python3
"""Cost of the readers against what a file declares (issue #22).

For N event columns (N up to OMPF_MAX_EVENTS = 16384) and 100 rows: the
seconds `ompfuse import` takes on the CSV, and `ompfuse show` and
`ompfuse export` on the imported profile (each the best of 3), with
microseconds per column: a linear reader keeps that figure flat as N
grows (before the event-name hash, 10^4 columns took 1.7 s and 10^5
took 98 s).  Then the time to refuse a header with 10^5 columns and a
profile declaring 10^5 events (both above the limit) and to refuse a FIFO.

    /usr/bin/python3 benchmarks/readers/bench_readers.py build/bin/ompfuse \
        build/bin/test_profile_limits
"""
import os
import subprocess
import sys
import tempfile
import time

B, L = sys.argv[1], sys.argv[2]


def best(cmd, want=0, reps=3):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t.append(time.perf_counter() - t0)
        if r.returncode != want:
            sys.exit(f"{cmd}: exit {r.returncode}: {r.stderr.decode()[:300]}")
    return min(t)


with tempfile.TemporaryDirectory() as d:
    print(f"{'columns':>8} {'import s':>9} {'us/col':>7} {'show s':>8} {'us/col':>7}"
          f" {'export s':>9} {'us/col':>7}")
    for n in (1000, 2000, 4000, 8000, 16384):
        csv, prof = os.path.join(d, f"w{n}.csv"), os.path.join(d, f"w{n}.ompf")
        with open(csv, "w") as f:
            f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns,"
                    + ",".join(f"e{i}" for i in range(n)) + "\n")
            vals = ",".join(str(i) for i in range(n))
            for r in range(100):
                f.write(f"{r},a:1,task,0.{r},0,0,{r},{r + 1},{vals}\n")
        ti = best([B, "import", "--csv", csv, "-o", prof])
        ts = best([B, "show", "--no-resolve", prof])
        te = best([B, "export", "--csv", "--no-resolve", prof])
        print(f"{n:>8} {ti:>9.3f} {ti / n * 1e6:>7.1f} {ts:>8.3f} {ts / n * 1e6:>7.1f}"
              f" {te:>9.3f} {te / n * 1e6:>7.1f}")
    wide = os.path.join(d, "wide.csv")
    with open(wide, "w") as f:
        f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns,"
                + ",".join(f"e{i}" for i in range(100000)) + "\n")
    many = os.path.join(d, "many.ompf")
    subprocess.run([L, "--write-events", "100000", many], check=True)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    print(f"refuse a CSV header of 10^5 columns:     "
          f"{best([B, 'import', '--csv', wide, '-o', os.path.join(d, 'x.ompf')], 2):.3f} s")
    print(f"refuse a profile declaring 10^5 events: {best([B, 'show', many], 2):.3f} s "
          f"({os.path.getsize(many)} bytes)")
    print(f"refuse a FIFO (show):                   {best([B, 'show', fifo], 2):.3f} s")
