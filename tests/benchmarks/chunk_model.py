#!/usr/bin/python3
"""The loop structure of benchmarks/cg and benchmarks/mg as documented in
docs/benchmarks.md, and a check that the OpenMP runtime reports exactly
the chunk counts it implies.

usage:
  chunk_model.py table                     print loops and trip counts per class
  chunk_model.py check EXE cg|mg CLASS SCHEDULE THREADS TOOL
      run EXE CLASS under the xu_count OMPT tool (tests/programs) and
      compare its ws-loop chunk count with the model: a loop of t trips
      gives ceil(t / c) chunks under dynamic,c and min(N, t) under static
      with N >= 2 threads.
  chunk_model.py check-ompfuse EXE cg|mg CLASS SCHEDULE THREADS LIBOMPFUSE OMPFUSE WORKDIR
      the same check under ompfuse's own tool: the profile's XUs of kind
      loop-chunk (dynamic) or static-chunks (static), counted from
      `ompfuse export --csv`, must equal the model's chunk count."""
import math
import os
import re
import subprocess
import sys

CG = {"S": (1400, 15), "W": (7000, 15), "A": (14000, 15), "B": (75000, 75), "C": (150000, 75)}
MG = {"S": (32, 4), "W": (128, 4), "A": (256, 4), "B": (256, 20), "C": (512, 20)}


def cg_trips(cls):
    """105 loops of na trips per outer iteration; niter + 1 iterations
    (one untimed)."""
    na, niter = CG[cls]
    return [na] * (105 * (niter + 1))


def mg_trips(cls):
    n, nit = MG[cls]
    lt = int(math.log2(n))
    side = lambda k: 2 ** k
    comm3 = lambda k: [side(k), side(k) + 2]
    zero3 = lambda k: [side(k) + 2]
    resid = lambda k: [side(k)] + comm3(k)
    psinv = resid
    rprj3 = lambda k: [side(k - 1)] + comm3(k - 1)  # fine level k -> k-1
    interp = lambda k: [side(k - 1) + 1]            # coarse k-1 -> fine k
    norm = lambda k: [side(k)]
    zran3 = lambda k: zero3(k) + comm3(k)

    def mg3p():
        t = []
        for k in range(lt, 1, -1):
            t += rprj3(k)
        t += zero3(1) + psinv(1)
        for k in range(2, lt):
            t += zero3(k) + interp(k) + resid(k) + psinv(k)
        t += interp(lt) + resid(lt) + psinv(lt)
        return t

    t = zero3(lt) + zran3(lt) + resid(lt) + mg3p() + resid(lt) + zero3(lt) + zran3(lt)
    t += resid(lt) + norm(lt)
    for _ in range(nit):
        t += mg3p() + resid(lt)
    t += norm(lt)
    return t


def expected_chunks(trips, sched, threads):
    if sched == "static":
        return sum(min(threads, t) for t in trips)
    kind, c = sched.split(",")
    assert kind == "dynamic"
    return sum(math.ceil(t / int(c)) for t in trips)


def table():
    for cls in CG:
        tr = cg_trips(cls)
        print(f"cg {cls}: {len(tr)} loops x {tr[0]} trips; chunks: static(N=2) "
              f"{expected_chunks(tr, 'static', 2)}, dynamic,10 {expected_chunks(tr, 'dynamic,10', 2)}, "
              f"dynamic,100 {expected_chunks(tr, 'dynamic,100', 2)}")
    for cls in MG:
        tr = mg_trips(cls)
        print(f"mg {cls}: {len(tr)} loops; chunks: static(N=2) {expected_chunks(tr, 'static', 2)}, "
              f"dynamic,10 {expected_chunks(tr, 'dynamic,10', 2)}, "
              f"dynamic,100 {expected_chunks(tr, 'dynamic,100', 2)}")


def check(exe, bench, cls, sched, threads, tool):
    threads = int(threads)
    if threads < 2:
        sys.exit("the model holds for teams of 2 or more threads (a team of 1 is serialized)")
    trips = cg_trips(cls) if bench == "cg" else mg_trips(cls)
    want = expected_chunks(trips, sched, threads)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_SCHEDULE=sched,
               OMP_TOOL_LIBRARIES=tool)
    p = subprocess.run([exe, cls], env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"FAIL: {exe} {cls} exited {p.returncode}\n{p.stdout}{p.stderr}")
    m = re.search(r"\bloop_chunks=(\d+)", p.stderr)
    if not m:
        sys.exit(f"FAIL: no xu_count line in stderr:\n{p.stderr}")
    got = int(m.group(1))
    print(f"{bench} {cls} {sched} N={threads}: {len(trips)} loops, expected {want} chunks, got {got}")
    if got != want:
        sys.exit("FAIL: chunk count differs from the documented loop structure")
    print("PASS")


def check_ompfuse(exe, bench, cls, sched, threads, tool, ompfuse, work):
    import csv
    threads = int(threads)
    trips = cg_trips(cls) if bench == "cg" else mg_trips(cls)
    want = expected_chunks(trips, sched, threads)
    os.makedirs(work, exist_ok=True)
    prof = os.path.join(work, f"{bench}-{cls}-{sched.replace(',', '')}-{threads}.ompf")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_SCHEDULE=sched,
               OMP_TOOL_LIBRARIES=tool, OMPFUSE_OUTPUT=prof, OMPFUSE_EVENTS="")
    p = subprocess.run([exe, cls], env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0 or "VERIFICATION SUCCESSFUL" not in p.stdout:
        sys.exit(f"FAIL: {exe} {cls} under the tool exited {p.returncode}\n{p.stdout}{p.stderr}")
    e = subprocess.run([ompfuse, "export", "--csv", prof], capture_output=True, text=True, timeout=600)
    if e.returncode != 0:
        sys.exit(f"FAIL: export: {e.stderr}")
    kind = "static-chunks" if sched == "static" else "loop-chunk"
    rows = list(csv.DictReader(e.stdout.splitlines()))
    got = sum(1 for r in rows if r["kind"] == kind)
    other = sum(1 for r in rows if r["kind"] != kind)
    print(f"{bench} {cls} {sched} N={threads} under libompfuse: expected {want} {kind} XUs, "
          f"got {got} (+{other} of other kinds)")
    if got != want or other:
        sys.exit("FAIL: the tool's XUs differ from the documented loop structure")
    print("PASS")


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "table":
        table()
    elif len(sys.argv) == 8 and sys.argv[1] == "check":
        check(*sys.argv[2:])
    elif len(sys.argv) == 10 and sys.argv[1] == "check-ompfuse":
        check_ompfuse(*sys.argv[2:])
    else:
        sys.exit(__doc__)
