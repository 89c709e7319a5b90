#!/usr/bin/python3
"""`ompfuse plan` end to end: typo suggestions, slot defaults, the 33-event
what-if plan, a real plan on this machine's software events."""
import os
import re
import subprocess
import sys
import tempfile

OMPFUSE = sys.argv[1]


def run(*args, env=None):
    e = dict(os.environ)
    e.pop("OMPFUSE_PMU_SLOTS", None)
    if env:
        e.update(env)
    p = subprocess.run([OMPFUSE, "plan", *args], capture_output=True, text=True, env=e)
    return p.returncode, p.stdout, p.stderr


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


# a mistyped event fails at plan time with the closest valid names
rc, out, err = run("--events", "perf::TASK-CLOCK,perf::TASK-CLOK", "--slots", "2")
check(rc == 2, f"typo exit code {rc}")
check("unknown event \"perf::TASK-CLOK\"" in err and "did you mean perf::TASK-CLOCK" in err,
      f"typo message: {err!r}")
rc, out, err = run("--events", "MINOR-FALTS", "--slots", "2")
check(rc == 2 and "did you mean perf::MINOR-FAULTS" in err, f"typo 2: {err!r}")

# --help and bad usage
rc, out, err = run("--help")
check(rc == 0 and "usage: ompfuse plan" in out, "help")
rc, out, err = run("--bogus")
check(rc == 2 and "unknown" in err, f"unknown option: {err!r}")
rc, out, err = run("--events", "perf::TASK-CLOCK", "--slots", "2", "--references", "1")
check(rc == 2 and "at least 2" in err, f"references 1: {err!r}")

# 33 hypothetical events under 4 slots: far fewer reference runs than 528
names = ",".join(f"EV{i:02d}" for i in range(33))
with tempfile.TemporaryDirectory() as d:
    plan = os.path.join(d, "p33.plan")
    rc, out, err = run("--events", names, "--slots", "4", "--assume-compatible", "--for", "none",
                       "--references", "2", "-o", plan)
    check(rc == 0, f"33 events: rc {rc} {err}")
    m = re.search(r"references: (\d+) sets x 2 repeats = (\d+) runs cover all 528 pairs", err)
    check(m is not None, f"33-event summary: {err!r}")
    if m:
        sets = int(m.group(1))
        print(f"33 events under 4 slots: {sets} reference sets instead of 528 (one per pair)")
        check(91 <= sets <= 130, f"33 events: {sets} sets")
    lines = [l.split() for l in open(plan) if l.strip() and not l.startswith("#")]
    check(all(l[0] == "reference" and len(l[2].split(",")) <= 4 for l in lines), "33: slots")
    pairs = set()
    for l in lines:
        ev = l[2].split(",")
        pairs |= {(a, b) for a in ev for b in ev if a < b}
    check(len(pairs) == 528, f"33: covered pairs {len(pairs)}")

    # software-only machine: the slot limit must be given, and is honoured
    hw = os.path.exists("/sys/bus/event_source/devices/cpu")
    sw = "perf::TASK-CLOCK,perf::CPU-CLOCK,perf::PAGE-FAULTS,perf::MINOR-FAULTS"
    if not hw:
        rc, out, err = run("--events", sw)
        check(rc == 2 and "--slots N or OMPFUSE_PMU_SLOTS" in err, f"no slots: {err!r}")
    plan = os.path.join(d, "sw.plan")
    rc, out, err = run("--events", sw, "--hem", "-o", plan, env={"OMPFUSE_PMU_SLOTS": "2"})
    check(rc == 0 and "from OMPFUSE_PMU_SLOTS" in err and "sets opened for real" in err,
          f"sw plan: {rc} {err!r}")
    text = open(plan).read()
    roles = [l.split()[0] for l in text.splitlines() if l and not l.startswith("#")]
    check(roles.count("lgl") == 2 and roles.count("bc") == 3 and roles.count("reference") == 6
          and roles.count("hem") == 1 and roles.count("hem-delta") == 1, f"sw roles {roles}")
    check("# slots: 2" in text, "slots comment")

# ompfuse events: PMUs, paranoid level, honest about what opens
p = subprocess.run([OMPFUSE, "events", "--probe", "--pmu", "perf"], capture_output=True, text=True)
check(p.returncode == 0, f"events exit {p.returncode}: {p.stderr}")
check("perf_event_paranoid:" in p.stdout and "PMUs detected by libpfm4" in p.stdout, "events header")
line = [l for l in p.stdout.splitlines() if l.strip().startswith("perf::TASK-CLOCK ")]
check(line and "OPENS" in line[0], f"TASK-CLOCK probe: {line}")
if not os.path.exists("/sys/bus/event_source/devices/cpu"):
    check("No hardware PMU is available" in p.stdout, "no-PMU statement")
    cyc = [l for l in p.stdout.splitlines() if l.strip().startswith("perf::CYCLES ")]
    check(cyc and "fails" in cyc[0], f"CYCLES probe on a VM: {cyc}")
p = subprocess.run([OMPFUSE, "events", "--pmu", "nonesuch"], capture_output=True, text=True)
check(p.returncode == 2 and "no PMU named" in p.stderr, f"events --pmu bad: {p.stderr}")

sys.exit(1 if failures else 0)
