#!/usr/bin/python3
"""Parts of XUs (issue 16): tasks suspended and resumed are recorded part
by part, each with its thread, start and end (docs/tool.md, "Parts").

Runs prog_parts (NT untied parents, each creating NC children, taskwait,
taskyield) under the tool at 1, 2 and 4 threads and checks, from
tool_dump's xu and part lines:
- XUs: NT * (1 + NC); the NC * NT children ran in one part each;
- every XU with parts > 1 has exactly `parts` part records; the first
  starts at the XU's start, the last ends at its end on the XU's thread;
- parts of one XU are in time order and do not overlap; each lies
  inside [start, end]; their durations sum to at most end - start;
- at 1 thread every parent ran in at least 1 + NC parts (each child runs
  inside its taskwait on the same thread); at 2 and 4 threads at least
  one parent ran in several parts (there is one thread per task at most);
- a run that calls abort() after the tasks leaves a temporary profile
  from which every XU and every part is salvaged (the parts still in the
  threads' buffers are written by the fatal-signal handler).
usage: parts.py --tool SO --dump TOOL_DUMP --prog PROG_PARTS --workdir DIR"""
import argparse
import os
import subprocess
import sys

NT, NC = 6, 3
fails = []


def check(ok, msg):
    if not ok:
        fails.append(msg)
    return ok


def run(a, threads, abort=False):
    out = os.path.join(a.workdir, "parts-t%d%s.ompf" % (threads, "-abort" if abort else ""))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPFUSE_")}
    env.update(OMP_TOOL_LIBRARIES=a.tool, OMPFUSE_OUTPUT=out,
               OMPFUSE_EVENTS="perf::TASK-CLOCK", OMP_NUM_THREADS=str(threads))
    r = subprocess.Popen([a.prog, str(NT), str(NC)] + (["abort"] if abort else []), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = r.communicate(timeout=120)
    if not check(r.returncode == (-6 if abort else 0), "t=%d: rc %d %s" % (
            threads, r.returncode, err)):
        return
    if abort:
        out = "%s.tmp.%d" % (out, r.pid)
    d = subprocess.run([a.dump, out], capture_output=True, text=True)
    if not check(d.returncode == (3 if abort else 0), "t=%d: dump rc %d %s" % (
            threads, d.returncode, d.stderr)):
        return
    xus, parts = [], {}
    for line in d.stdout.splitlines():
        f = line.split(" ")
        if f[0] == "xu":
            xus.append({"thread": int(f[5]), "parts": int(f[11]), "start": int(f[12]),
                        "end": int(f[13])})
        elif f[0] == "part":
            parts.setdefault(int(f[1]), []).append((int(f[2]), int(f[3]), int(f[4])))
    what = "t=%d%s" % (threads, " abort" if abort else "")
    check(len(xus) == NT * (1 + NC), "%s: %d XUs, want %d" % (what, len(xus), NT * (1 + NC)))
    multi = [i for i, x in enumerate(xus) if x["parts"] > 1]
    check(len([x for x in xus if x["parts"] == 1]) >= NT * NC,
          "%s: fewer than %d one-part XUs" % (what, NT * NC))
    check(set(parts) == set(multi), "%s: XUs with part records %s, with parts > 1 %s" % (
        what, sorted(parts), multi))
    for i in multi:
        x, ps = xus[i], parts.get(i, [])
        if not check(len(ps) == x["parts"], "%s XU %d: %d records, parts %d" % (
                what, i, len(ps), x["parts"])):
            continue
        check(ps[0][1] == x["start"], "%s XU %d: first part starts at %d, XU at %d" % (
            what, i, ps[0][1], x["start"]))
        check(ps[-1][2] == x["end"] and ps[-1][0] == x["thread"],
              "%s XU %d: last part %s, XU ends at %d on thread %d" % (
                  what, i, ps[-1], x["end"], x["thread"]))
        for k, (th, s, e) in enumerate(ps):
            check(x["start"] <= s <= e <= x["end"], "%s XU %d part %d [%d, %d] outside "
                  "[%d, %d]" % (what, i, k, s, e, x["start"], x["end"]))
            if k:
                check(ps[k - 1][2] <= s, "%s XU %d: parts %d and %d overlap" % (what, i, k - 1, k))
        total = sum(e - s for _, s, e in ps)
        check(total <= x["end"] - x["start"], "%s XU %d: parts sum %d > duration %d" % (
            what, i, total, x["end"] - x["start"]))
    if threads == 1 and not abort:
        check(len(multi) == NT and all(xus[i]["parts"] >= 1 + NC for i in multi),
              "t=1: parents' parts %s, want %d parents with >= %d" % (
                  [xus[i]["parts"] for i in multi], NT, 1 + NC))
    else:
        check(multi, "%s: no XU ran in several parts" % what)
    migrated = sum(len({p[0] for p in parts[i]}) > 1 for i in multi)
    print("%s: %d XUs, %d in several parts (%s parts), %d of them on several threads" % (
        what, len(xus), len(multi), sorted(xus[i]["parts"] for i in multi), migrated))


def main():
    ap = argparse.ArgumentParser()
    for o in ("--tool", "--dump", "--prog", "--workdir"):
        ap.add_argument(o, required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    for th in (1, 2, 4):
        run(a, th)
    run(a, 2, abort=True)
    for f in fails:
        print("FAIL:", f)
    sys.exit(1 if fails else 0)


main()
