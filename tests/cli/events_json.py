#!/usr/bin/python3
"""ompfuse events --json (like perf list -j): one JSON document whose events
are exactly the ones the text listing shows, with their PMU, kind and, with
--probe, the same status; software events open on any Linux machine.
usage: events_json.py OMPFUSE"""
import json
import re
import subprocess
import sys

B = sys.argv[1]
fails = 0


def check(c, what):
    global fails
    if not c:
        print("FAIL:", what)
        fails += 1


def run(*a):
    r = subprocess.run([B, "events", *a], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "events %s: exit %d %s" % (" ".join(a), r.returncode, r.stderr))
    return r.stdout


for extra in ([], ["--probe", "--pmu", "perf"]):
    doc = json.loads(run("--json", *extra))
    text = run(*extra)
    # text lines of events: two spaces, the name, then the status
    listed = {}
    for line in text.splitlines():
        m = re.match(r"  (\S+::\S+)\s+(.*?)(?:  \(also .*\))?$", line)
        if m:
            listed[m.group(1)] = m.group(2)
    names = [e["name"] for e in doc["events"]]
    check(len(names) > 10, "--json lists %d events" % len(names))
    check(len(names) == len(set(names)), "duplicate names in --json")
    check(set(names) == set(listed), "--json %s: %d events, the text lists %d: %s" % (
        extra, len(names), len(listed), sorted(set(names) ^ set(listed))[:5]))
    m = re.search(r"(\d+) events listed", text)
    check(m and int(m.group(1)) == len(names), "count line %s vs %d" % (m and m.group(0), len(names)))
    check({p["name"] for p in doc["pmus"]} >= {e["pmu"] for e in doc["events"]},
          "every event's PMU is in pmus[]")
    if "--probe" in extra:
        for e in doc["events"]:
            check(e.get("status") == listed.get(e["name"]),
                  "%s: status %r, text %r" % (e["name"], e.get("status"), listed.get(e["name"])))
        soft = [e for e in doc["events"] if e["kind"] == "software"]
        check(any(e["name"] == "perf::TASK-CLOCK" and e["status"] == "OPENS" for e in soft),
              "perf::TASK-CLOCK opens")
    else:
        check(all("status" not in e for e in doc["events"]), "no status without --probe")
print("%d failed" % fails)
sys.exit(1 if fails else 0)
