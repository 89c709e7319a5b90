#!/usr/bin/python3
"""Makes one profile of every kind the export tests read, in WORK:
  run.ompf       a real run of prog_fib (nested tasks) with two events
  untied.ompf    a real run of prog_parts (untied tasks that ran in several
                 parts, some on several threads)
  chunks.ompf    a real run of prog_many_chunks (consecutive chunks: each
                 starts inside the previous one's closing counter read)
  fused.ompf     run.ompf fused (lgl) with a second run counting other events
  hem.ompf       a hem-delta profile with missing values (hem_profile_tool)
  hemrun.ompf    a real hem-delta run of prog_fib (2 events on 1 slot: most
                 XUs miss a value)
  imported.ompf  built from a CSV with missing and fractional values
  trunc.ompf     run.ompf without its END chunk (truncated, salvageable)
  empty.ompf     no XU, no thread (imported from a CSV header)
usage: make_profiles.py OMPFUSE TOOL_SO PROG_DIR HEM_PROFILE_TOOL WORK"""
import os
import subprocess
import sys

ompfuse, tool, progs, hemtool, work = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
w = lambda n: os.path.join(work, n)


def run(args, env=None):
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        sys.exit("FAIL: %s: exit %d\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))


def record(prog, arg, events, out, **extra):
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_TOOL_LIBRARIES=tool,
               OMPFUSE_EVENTS=events, OMPFUSE_OUTPUT=out, **extra)
    run([os.path.join(progs, prog)] + arg, env)


record("prog_fib", ["12"], "perf::TASK-CLOCK,perf::PAGE-FAULTS", w("run.ompf"))
record("prog_fib", ["12"], "perf::CONTEXT-SWITCHES,perf::MINOR-FAULTS", w("run2.ompf"))
record("prog_parts", [], "perf::TASK-CLOCK", w("untied.ompf"))
record("prog_many_chunks", ["3000"], "perf::TASK-CLOCK,perf::PAGE-FAULTS", w("chunks.ompf"))
record("prog_fib", ["12"], "perf::TASK-CLOCK,perf::PAGE-FAULTS", w("hemrun.ompf"),
       OMPFUSE_MODE="hem-delta", OMPFUSE_PMU_SLOTS="1")
run([ompfuse, "combine", "-q", "--strategy", "lgl", "-o", w("fused.ompf"),
     w("run.ompf"), w("run2.ompf")])
run([hemtool, "gen", "14", "400", w("hem.ompf")])
with open(w("imported.csv"), "w") as f:
    f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns,perf::TASK-CLOCK,my event\n"
            "1,fib.c:12,task,0.1.4198400,0,3,100,900,12345,7\n"
            "2,fib.c:12,task,0.1.4198400.1,0,2,150,300,,0.5\n"
            "3,a.out+0x4011a0,loop-chunk,0.2.0,1,-1,310,400,99,\n"
            "4,a.out+0x4011a0,loop-chunk,0.2.8,1,-1,400,1000,9007199254740992,-2.25\n")
run([ompfuse, "import", "--csv", w("imported.csv"), "-o", w("imported.ompf"),
     "--program", "demo", "--threads", "2"])
with open(w("empty.csv"), "w") as f:
    f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns,ev\n")
run([ompfuse, "import", "--csv", w("empty.csv"), "-o", w("empty.ompf")])
data = open(w("run.ompf"), "rb").read()
open(w("trunc.ompf"), "wb").write(data[:-10])
print("profiles in", work)
