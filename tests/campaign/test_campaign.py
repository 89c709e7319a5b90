#!/usr/bin/python3
"""`ompfuse run` end to end with a fake program that writes the profiles the
tool would write and logs every start and end.

usage: test_campaign.py resume|failure|libgomp OMPFUSE FAKEPROG
"""
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import fakecampaign
from fakecampaign import check, failures, log_entries, write_plan

WHAT, OMPFUSE, FAKE = sys.argv[1], sys.argv[2], sys.argv[3]


def env(**kw):
    return fakecampaign.env(FAKE, **kw)


def manifest(d):
    rows = []
    with open(os.path.join(d, "manifest.tsv")) as f:
        for l in f:
            if l.startswith("#"):
                continue
            idx, role, rep, ev, status, ex, secs, prof = l.rstrip("\n").split("\t")[:8]
            rows.append(dict(index=int(idx), role=role, repeat=int(rep), events=ev,
                             status=status, exit=ex, seconds=float(secs), profile=prof))
    return rows


PLAN = ["lgl 1 perf::TASK-CLOCK,perf::CPU-CLOCK",
        "lgl 1 perf::PAGE-FAULTS,perf::MINOR-FAULTS",
        "reference 3 perf::TASK-CLOCK,perf::PAGE-FAULTS",
        "reference 2 perf::CPU-CLOCK,perf::MINOR-FAULTS",
        "hem 1 all"]
NAMES = ["lgl-1-r1", "lgl-2-r1", "reference-3-r1", "reference-3-r2", "reference-3-r3",
         "reference-4-r1", "reference-4-r2", "hem-5-r1"]


def test_resume(tmp):
    """SIGKILL `ompfuse run` after k runs, run it again: nothing lost, no
    completed run run twice."""
    plan = os.path.join(tmp, "p.plan")
    write_plan(plan, PLAN)
    out = os.path.join(tmp, "out")
    log = os.path.join(tmp, "log")
    cmd = [OMPFUSE, "run", "--plan", plan, "--out", out, "--", FAKE, "arg1"]
    e = env(FAKE_LOG=log, FAKE_SLEEP_MS=250)
    k = 3
    # run k + 1 holds (the rerun goes without FAKE_HANG): it is in flight
    # when killed, however long the machine takes to get there
    p = subprocess.Popen(cmd, env=dict(e, FAKE_HANG=NAMES[k]), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and ("start", NAMES[k]) not in log_entries(log):
        time.sleep(0.02)
    check(("start", NAMES[k]) in log_entries(log), f"run {NAMES[k]} started within 120 s")
    p.send_signal(signal.SIGKILL)
    p.wait()
    first = log_entries(log)
    done_first = {n for (w, n) in first if w == "end" and n != "plain"}
    started_first = {n for (w, n) in first if w == "start" and n != "plain"}
    print(f"killed after {len(done_first)} complete runs; in flight: "
          f"{sorted(started_first - done_first)}", flush=True)
    check(k <= len(done_first) < len(NAMES), f"kill point: {sorted(done_first)}")
    time.sleep(0.5)  # the killed run's child dies with it (PDEATHSIG)
    r = subprocess.run(cmd, env=e, capture_output=True, text=True)
    check(r.returncode == 0, f"rerun exit {r.returncode}: {r.stderr}")
    check(f"{len(done_first)} already complete (kept)" in r.stderr, f"resume message: {r.stderr}")
    c = log_entries(log)
    for n in NAMES:
        starts, ends = c[("start", n)], c[("end", n)]
        if n in done_first:
            check(starts == 1 and ends == 1, f"{n} completed before the kill ran again: "
                                             f"{starts} starts {ends} ends")
        else:
            check(ends == 1, f"{n}: {ends} completions")
            check(starts <= 2, f"{n}: {starts} starts")
    twice = [n for n in NAMES if c[("start", n)] == 2]
    check(len(twice) <= 1, f"with --jobs 1 at most one run was interrupted: {twice}")
    rows = manifest(out)
    check(len(rows) == len(NAMES), f"manifest rows {len(rows)}")
    check([r["profile"] for r in rows] == [n + ".ompf" for n in NAMES], "manifest order/names")
    check(all(r["status"] == "ok" for r in rows), f"manifest statuses {[r['status'] for r in rows]}")
    check(all(os.path.exists(os.path.join(out, n + ".ompf")) for n in NAMES), "profiles exist")
    check(rows[7]["events"] == "perf::TASK-CLOCK,perf::CPU-CLOCK,perf::PAGE-FAULTS,perf::MINOR-FAULTS",
          f"'all' expanded: {rows[7]['events']}")
    # a third run does nothing at all
    before = sum(log_entries(log).values())
    r = subprocess.run(cmd, env=e, capture_output=True, text=True)
    check(r.returncode == 0 and "0 to run" in r.stderr, f"third run: {r.stderr}")
    check(sum(log_entries(log).values()) == before, "third run started something")

    # a truncated profile is run again; a complete one is not
    victim = os.path.join(out, "reference-3-r2.ompf")
    data = open(victim, "rb").read()
    with open(victim, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    r = subprocess.run(cmd, env=e, capture_output=True, text=True)
    check(r.returncode == 0 and "7 already complete" in r.stderr and "1 to run" in r.stderr,
          f"truncated: {r.stderr}")
    c2 = log_entries(log)
    check(c2[("end", "reference-3-r2")] == 2, "truncated profile re-run")
    check(sum(c2.values()) == before + 2 + 2, "only the truncated run (and the plain check) ran")

    # profiles carry the run's mode and role
    sys.stdout.flush()


def test_failure(tmp):
    """A failing run is recorded (exit code, stderr tail) and the others
    still run; a hanging run is killed by --timeout; a program that fails
    without the tool stops everything before it starts."""
    plan = os.path.join(tmp, "p.plan")
    write_plan(plan, PLAN)
    out = os.path.join(tmp, "out")
    log = os.path.join(tmp, "log")
    cmd = [OMPFUSE, "run", "--plan", plan, "--out", out, "--timeout", "3", "--", FAKE]
    e = env(FAKE_LOG=log, FAKE_FAIL="reference-3-r2", FAKE_HANG="lgl-2-r1")
    r = subprocess.run(cmd, env=e, capture_output=True, text=True)
    check(r.returncode == 1, f"exit code with failures: {r.returncode}")
    rows = {x["profile"][:-5]: x for x in manifest(out)}
    check(rows["reference-3-r2"]["status"] == "failed" and rows["reference-3-r2"]["exit"] == "3",
          f"failed row {rows['reference-3-r2']}")
    # The hanging run's own time as the campaign measured it, not the wall
    # time of the whole command (8 more runs, stretched on a loaded
    # machine): killed at 3 s plus a 10 ms poll, long before its 60 s end.
    check(rows["lgl-2-r1"]["status"] == "timeout" and rows["lgl-2-r1"]["exit"] == "sig9"
          and 3 <= rows["lgl-2-r1"]["seconds"] < 30, f"timeout row {rows['lgl-2-r1']}")
    check("killed after the 3 s timeout" in r.stderr, f"timeout of 3 s not applied: {r.stderr}")
    others = [n for n in NAMES if n not in ("reference-3-r2", "lgl-2-r1")]
    check(all(rows[n]["status"] == "ok" for n in others), "the other runs ran")
    errf = os.path.join(out, "reference-3-r2.stderr")
    check(os.path.exists(errf) and "deliberate failure" in open(errf).read(), "stderr saved")
    check("deliberate failure of reference-3-r2" in r.stderr, f"stderr tail shown: {r.stderr}")
    check(not os.path.exists(os.path.join(out, "lgl-1-r1.stderr")), "empty stderr of ok run kept")
    check(os.path.exists(os.path.join(out, "reference-3-r2.stdout")), "stdout of failed run kept")
    okout = os.path.join(out, "lgl-1-r1.stdout")
    check(os.path.exists(okout) and open(okout).read().startswith("fakeprog lgl-1-r1"),
          "stdout of an ok run kept (a benchmark's verification line)")

    # the rerun retries only the failures
    e2 = env(FAKE_LOG=log)
    r = subprocess.run(cmd, env=e2, capture_output=True, text=True)
    check(r.returncode == 0 and "6 already complete" in r.stderr and "2 to run" in r.stderr,
          f"retry: {r.stderr}")

    # --roles: only the selected roles run
    out2 = os.path.join(tmp, "out2")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out2, "--roles", "lgl,hem",
                        "--", FAKE], env=env(), capture_output=True, text=True)
    rows = manifest(out2)
    check(r.returncode == 0 and [x["status"] for x in rows].count("ok") == 3
          and [x["status"] for x in rows].count("skipped") == 5, f"roles: {rows}")

    # the program fails without the tool: refuse, start nothing
    out3 = os.path.join(tmp, "out3")
    log3 = os.path.join(tmp, "log3")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out3, "--", FAKE],
                       env=env(FAKE_LOG=log3, FAKE_PLAIN_FAIL=1), capture_output=True, text=True)
    check(r.returncode == 2, f"plain failure exit {r.returncode}")
    check("even without the tool" in r.stderr and "cannot open input file" in r.stderr,
          f"plain failure message: {r.stderr}")
    check(set(n for (_w, n) in log_entries(log3)) == {"plain"}, "runs started after plain failure")

    # a program whose normal exit code is 7: refused with the hint, then
    # run with --exit-code 7; a run that ends otherwise failed
    out4 = os.path.join(tmp, "out4")
    log4 = os.path.join(tmp, "log4")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out4, "--", FAKE],
                       env=env(FAKE_LOG=log4, FAKE_EXIT=7), capture_output=True, text=True)
    check(r.returncode == 2 and "exited with code 7 even without the tool" in r.stderr
          and "give --exit-code 7" in r.stderr, f"exit 7 without --exit-code: {r.stderr}")
    check(set(n for (_w, n) in log_entries(log4)) == {"plain"}, "runs started after exit 7")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out4, "--exit-code", "7",
                        "--", FAKE], env=env(FAKE_EXIT=7, FAKE_FAIL="lgl-2-r1"),
                       capture_output=True, text=True)
    rows = {x["profile"][:-5]: x for x in manifest(out4)}
    check(r.returncode == 1 and rows["lgl-2-r1"]["status"] == "failed"
          and rows["lgl-2-r1"]["exit"] == "3"
          and all(rows[n]["status"] == "ok" and rows[n]["exit"] == "7"
                  for n in NAMES if n != "lgl-2-r1"),
          f"--exit-code 7: {r.returncode} {rows} {r.stderr[-500:]}")
    check("exit code 3 (its normal ones: 7, given by --exit-code)" in r.stderr,
          f"the failed run's note: {r.stderr[-500:]}")
    # --resume repeats the command, --exit-code with it
    r = subprocess.run([OMPFUSE, "run", "--resume", out4], env=env(FAKE_EXIT=7),
                       capture_output=True, text=True)
    check(r.returncode == 0 and all(x["status"] == "ok" for x in manifest(out4)),
          f"resume with --exit-code 7: {r.returncode} {r.stderr[-400:]}")
    # a program whose exit code varies: a list and a range; the plain run's
    # refusal names the codes given so far and the new one
    out5 = os.path.join(tmp, "out5")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out5, "--exit-code", "0,9",
                        "--", FAKE], env=env(FAKE_EXIT=7), capture_output=True, text=True)
    check(r.returncode == 2 and "exited with code 7 even without the tool" in r.stderr
          and "give --exit-code 0,7,9" in r.stderr, f"exit 7 with --exit-code 0,9: {r.stderr}")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out5, "--exit-code", "0,7-9",
                        "--", FAKE], env=env(FAKE_EXIT=7, FAKE_EXIT_RUN="lgl-2-r1:9"),
                       capture_output=True, text=True)
    rows = {x["profile"][:-5]: x for x in manifest(out5)}
    check(r.returncode == 0 and rows["lgl-2-r1"]["exit"] == "9"
          and all(x["status"] == "ok" for x in rows.values())
          and all(rows[n]["exit"] == "7" for n in NAMES if n != "lgl-2-r1"),
          f"--exit-code 0,7-9, one run exits 9: {r.returncode} {rows} {r.stderr[-500:]}")
    out6 = os.path.join(tmp, "out6")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out6, "--exit-code", "7,8",
                        "--", FAKE], env=env(FAKE_EXIT=7, FAKE_EXIT_RUN="lgl-2-r1:9"),
                       capture_output=True, text=True)
    rows = {x["profile"][:-5]: x for x in manifest(out6)}
    check(r.returncode == 1 and rows["lgl-2-r1"]["status"] == "failed"
          and "exit code 9 (its normal ones: 7,8, given by --exit-code)" in r.stderr,
          f"--exit-code 7,8, one run exits 9: {r.returncode} {r.stderr[-500:]}")
    out7 = os.path.join(tmp, "out7")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out7, "--exit-code", "any",
                        "--", FAKE], env=env(FAKE_EXIT=200, FAKE_EXIT_RUN="lgl-2-r1:1"),
                       capture_output=True, text=True)
    check(r.returncode == 0 and all(x["status"] == "ok" for x in manifest(out7)),
          f"--exit-code any: {r.returncode} {r.stderr[-400:]}")
    for bad in ("256", "-1", "x", "", "3-1", "1,", ",1", "1-", "0-256", "any,1"):
        r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out4, "--exit-code", bad,
                            "--", FAKE], env=env(), capture_output=True, text=True)
        check(r.returncode == 2 and "--exit-code" in r.stderr and "0 to 255" in r.stderr,
              f"--exit-code {bad!r}: {r.returncode} {r.stderr}")

    # usage errors
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--", FAKE], env=env(),
                       capture_output=True, text=True)
    check(r.returncode == 2 and "--out DIR" in r.stderr, f"missing --out: {r.stderr}")
    r = subprocess.run([OMPFUSE, "run", "--plan", os.path.join(tmp, "nope"), "--out", out, "--", FAKE],
                       env=env(), capture_output=True, text=True)
    check(r.returncode == 2 and "cannot read the plan" in r.stderr, f"missing plan: {r.stderr}")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out, "--", FAKE],
                       env=env(OMPFUSE_TOOL=os.path.join(tmp, "none.so")), capture_output=True, text=True)
    check(r.returncode == 2 and "OMPT tool" in r.stderr, f"missing tool: {r.stderr}")


def test_libgomp(tmp):
    """A gcc/libgomp binary is detected and run on libomp through a
    libgomp.so.1 link on LD_LIBRARY_PATH."""
    gcc = shutil.which("gcc")
    libomp = [p for p in ("/usr/lib/llvm-19/lib/libomp.so.5", "/usr/lib/x86_64-linux-gnu/libomp.so.5")
              if os.path.exists(p)]
    if not gcc or not libomp:
        print("gcc or libomp missing: cannot build the libgomp program")
        sys.exit(1)
    src = os.path.join(tmp, "g.c")
    with open(src, "w") as f:
        f.write(r'''
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    FILE *m = fopen("/proc/self/maps", "r");
    char line[1024];
    while (m && fgets(line, sizeof line, m))
        if (strstr(line, "libomp") || strstr(line, "libgomp"))
            fputs(strrchr(line, ' ') + 1, stderr);
    if (m) fclose(m);
    return getenv("OMPFUSE_OUTPUT") ? 1 : 0; /* no profile: keep stderr */
}
''')
    prog = os.path.join(tmp, "g")
    subprocess.run([gcc, "-fopenmp", "-O1", src, "-o", prog], check=True)
    plan = os.path.join(tmp, "p.plan")
    write_plan(plan, ["lgl 1 perf::TASK-CLOCK"])
    out = os.path.join(tmp, "out")
    r = subprocess.run([OMPFUSE, "run", "--plan", plan, "--out", out, "--", prog],
                       env=env(OMP_NUM_THREADS=2), capture_output=True, text=True)
    check("linked against libgomp" in r.stderr, f"libgomp message: {r.stderr}")
    link = os.path.join(out, ".libgomp-route", "libgomp.so.1")
    check(os.path.islink(link) and os.readlink(link) in libomp, "route link")
    errf = os.path.join(out, "lgl-1-r1.stderr")
    maps = open(errf).read() if os.path.exists(errf) else ""
    check("libomp.so.5" in maps or ".libgomp-route" in maps, f"runtime loaded: {maps!r}")


def test_cli(tmp):
    """`ompfuse campaign -- PROGRAM`: every step runs, the table is printed,
    epd.tsv and report.html are written whatever the later steps do; a
    second invocation resumes without running anything again."""
    out = os.path.join(tmp, "camp")
    log = os.path.join(tmp, "log")
    cmd = [OMPFUSE, "campaign", "--out", out, "--quick", "--", FAKE, "x"]
    r = subprocess.run(cmd, env=env(FAKE_LOG=log), capture_output=True, text=True)
    print(r.stdout)
    check(r.returncode == 0, f"campaign exit {r.returncode}: {r.stderr[-2000:]}")
    header = [l for l in r.stdout.splitlines() if l.startswith("benchmark")]
    check(header and all(t in header[0] for t in ("ctc", "lgl", "bc", "bc-unlabeled", "random",
                                                  "hem", "hem-delta", "hem-cleaned")),
          f"table header: {header}")
    rows = [l.split() for l in r.stdout.splitlines() if l.startswith("campaign_fakeprog ")]
    check(len(rows) >= 1 and len(rows[0]) == 10, f"table row: {rows}")
    tsv = os.path.join(out, "epd.tsv")
    check(os.path.exists(tsv) and len(open(tsv).read().splitlines()) == 2, "epd.tsv")
    check(os.path.exists(os.path.join(out, "report.html")), "report.html")
    plan = open(os.path.join(out, "campaign_fakeprog", "plan.txt")).read()
    lines = [l.split() for l in plan.splitlines() if l and not l.startswith("#")]
    roles = [l[0] for l in lines]
    # default events, 2 slots, --quick: reference round 1 (6 sets), 2 lgl,
    # hem, round 2, 3 bc, hem-delta: the repeats of a set are not run back
    # to back, fusion and HEM runs fall between the rounds
    check(roles == ["reference"] * 6 + ["lgl"] * 2 + ["hem"] + ["reference"] * 6 + ["bc"] * 3
          + ["hem-delta"], f"campaign plan roles {roles}")
    refsets = collections.Counter(l[2] for l in lines if l[0] == "reference")
    check(len(refsets) == 6 and set(refsets.values()) == {2}
          and all(l[1] == "1" for l in lines if l[0] == "reference"),
          f"every reference set twice, one repeat per line: {refsets}")
    runs = sum(1 for (w, n) in log_entries(log) if w == "start" and n != "plain")
    check(runs == 2 + 12 + 2 + 3, f"runs started: {runs}")
    check(" kept)" not in r.stdout, "a first campaign keeps nothing: %s" %
          [l for l in r.stdout.splitlines() if l.startswith("runs:")])
    r = subprocess.run(cmd, env=env(FAKE_LOG=log), capture_output=True, text=True)
    check(r.returncode == 0, f"second campaign exit {r.returncode}")
    kept = [l for l in r.stdout.splitlines() if l.startswith("runs:")]
    check(kept and "19 ok (19 kept)" in kept[0] and "not run again" in r.stdout,
          f"the second campaign says its runs were kept, not made: {kept}")
    # a program that does not exist: exit 2, and no output directory made
    bad = os.path.join(tmp, "never")
    r = subprocess.run([OMPFUSE, "campaign", "--out", bad, "--", "/nonexistent/prog"],
                       env=env(), capture_output=True, text=True)
    check(r.returncode == 2 and "not found" in r.stderr and not os.path.exists(bad),
          f"missing program: exit {r.returncode}, {r.stderr}")
    runs2 = sum(1 for (w, n) in log_entries(log) if w == "start" and n != "plain")
    check(runs2 == runs, f"second campaign ran {runs2 - runs} runs again")
    # the team size: an exported OMP_NUM_THREADS that is one number is the
    # default, --threads overrides it, a list is not taken
    for i, (omp, args, want, said) in enumerate((("1", [], "1", True),
                                                  ("1", ["--threads", "3"], "3", False),
                                                  ("4,2", [], "2", False))):
        d = os.path.join(tmp, "thr%d" % i)
        r = subprocess.run([OMPFUSE, "campaign", "--out", d, "--quick"] + args + ["--", FAKE],
                           env=env(OMP_NUM_THREADS=omp), capture_output=True, text=True)
        runenv = os.path.join(d, "campaign_fakeprog", "run.env")
        got = open(runenv).read() if os.path.exists(runenv) else ""
        head = r.stderr.splitlines()[0] if r.stderr else ""
        check(r.returncode == 0 and "OMP_NUM_THREADS=%s\n" % want in got
              and ("OMP_NUM_THREADS=%s (from the environment)" % want in head) == said
              and "OMP_NUM_THREADS=%s" % want in head,
              f"OMP_NUM_THREADS={omp} {args}: runs with {want}: {r.returncode} {got!r} {head!r}")
    # a program whose exit code varies: --exit-code LIST for all its runs
    out8 = os.path.join(tmp, "camp8")
    r = subprocess.run([OMPFUSE, "campaign", "--out", out8, "--quick", "--exit-code", "7,9",
                        "--", FAKE, "x"], env=env(FAKE_EXIT=7, FAKE_EXIT_RUN="lgl-8-r1:9"),
                       capture_output=True, text=True)
    rows = manifest(os.path.join(out8, "campaign_fakeprog"))
    check(r.returncode == 0 and len(rows) == 19 and all(x["status"] == "ok" for x in rows)
          and sorted(set(x["exit"] for x in rows)) == ["7", "9"],
          f"campaign --exit-code 7,9: {r.returncode} {[(x['profile'], x['exit']) for x in rows]} "
          f"{r.stderr[-500:]}")
    for args, why in ((["campaign", "--exit-code", "3"], "--exit-code is for -- PROGRAM"),
                      (["campaign", "--exit-code", "3-", "--", FAKE], "--exit-code 3-: give"),
                      (["plan", "--events", "perf::TASK-CLOCK", "--slots", "2",
                        "--exit-code", "3"], "--exit-code is for the pilot runs")):
        r = subprocess.run([OMPFUSE] + args, env=env(), capture_output=True, text=True,
                           cwd=tmp)
        check(r.returncode == 2 and why in r.stderr, f"{args}: {r.returncode} {r.stderr}")


with tempfile.TemporaryDirectory() as tmp:
    {"resume": test_resume, "failure": test_failure, "libgomp": test_libgomp,
     "cli": test_cli}[WHAT](tmp)
print("FAILED" if failures else "ok", flush=True)
sys.exit(1 if failures else 0)
