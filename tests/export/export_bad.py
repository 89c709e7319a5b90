#!/usr/bin/python3
"""Bad input to `ompfuse export`: a truncated profile is exported with one
warning and its salvage note in every format; an unwritable output, an
unknown format, a misuse each give one message and exit 2 and leave no
file behind.  A profile without XUs exports to valid, empty outputs.
usage: export_bad.py OMPFUSE WORK (make_profiles.py's WORK)"""
import json
import os
import re
import shutil
import subprocess
import sys

ompfuse, work = sys.argv[1:3]
T = os.path.join(work, "bad")
shutil.rmtree(T, ignore_errors=True)
os.makedirs(T)
trunc, good = os.path.join(work, "trunc.ompf"), os.path.join(work, "run.ompf")
fails = []


def ex(args):
    r = subprocess.run([ompfuse, "export", "--no-resolve"] + args, capture_output=True,
                       text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr.splitlines()


# the note as `ompfuse show` words it
show = subprocess.run([ompfuse, "show", "--no-resolve", trunc], capture_output=True,
                      text=True).stdout
note = re.search(r"status: TRUNCATED: (.*)", show).group(1)


def truncated(fmt, out, extra=()):
    rc, _, err = ex(["--format", fmt, "-o", out] + list(extra) + [trunc])
    if rc != 0 or len(err) != 1 or "warning" not in err[0] or "truncat" not in err[0]:
        fails.append("%s of a truncated profile: exit %d, stderr %s" % (fmt, rc, err))
        return False
    return True


out = os.path.join(T, "t.json")
if truncated("json", out):
    p = json.load(open(out))["profiles"][0]
    if p["truncated"] is not True or p["salvage_note"] != note:
        fails.append("json: truncated %s, note %r (want %r)" % (p["truncated"],
                                                                p["salvage_note"], note))
out = os.path.join(T, "t.perfetto.json")
if truncated("perfetto", out):
    tr = json.load(open(out))
    inst = [e for e in tr["traceEvents"] if e["ph"] == "i" and "salvage_note" in e["args"]]
    if tr["otherData"]["profiles"][0]["salvage_note"] != note or \
            [e["args"]["salvage_note"] for e in inst] != [note]:
        fails.append("perfetto: note missing (%s)" % tr["otherData"])
out = os.path.join(T, "t.otf2")
if truncated("otf2", out):
    a = subprocess.run(["otf2-print", "-A", os.path.join(out, "traces.otf2")],
                       capture_output=True, text=True).stdout
    if "OMPFUSE::P0::SALVAGE_NOTE\nProperty value                 " + note not in a:
        fails.append("otf2: no OMPFUSE::P0::SALVAGE_NOTE property with %r" % note)
out, meta = os.path.join(T, "t.csv"), os.path.join(T, "t.meta.json")
if truncated("csv", out, ["--metadata", meta]):
    if json.load(open(meta))["profiles"][0]["salvage_note"] != note:
        fails.append("csv: the metadata file lacks the salvage note")


def refused(args, frag, what):
    before = sorted(os.listdir(T))
    rc, out, err = ex(args)
    if rc != 2 or len(err) != 1 or frag not in err[0] or out:
        fails.append("%s: exit %d, stderr %s (want 2, one line with %r)" % (what, rc, err, frag))
    after = sorted(os.listdir(T))
    if after != before:
        fails.append("%s left %s" % (what, sorted(set(after) - set(before))))


# unwritable: a directory that cannot exist (a regular file is in the way)
blocker = os.path.join(T, "file")
open(blocker, "w").write("x")
for fmt in ("csv", "json", "perfetto", "otf2"):
    dest = os.path.join(blocker, "out." + fmt)
    refused(["--format", fmt, "-o", dest, good], blocker, "unwritable %s" % fmt)
refused(["--csv", "-o", os.path.join(T, "ok.csv"), "--metadata",
         os.path.join(blocker, "m.json"), good], blocker, "unwritable --metadata")
refused(["--format", "otf2", "-o", blocker, good], "not an OTF2 archive", "otf2 over a file")
if open(blocker).read() != "x":
    fails.append("otf2 over a file changed it")
refused(["--format", "xml", good], "unknown format 'xml'", "unknown format")
refused(["--format=pdf", "-o", os.path.join(T, "x.pdf"), good], "unknown format 'pdf'",
        "unknown format=")
refused([good], "--format", "no format")
refused(["--csv", good, good], "one profile", "csv with two profiles")
refused(["--format", "otf2", good], "-o DIR", "otf2 to stdout")
refused(["--format", "json", "--counters", good], "--counters", "--counters without perfetto")
refused(["--format", "json", "--metadata", os.path.join(T, "m.json"), good], "--metadata",
        "--metadata without csv")
refused(["--format", "json", "-o", os.path.join(T, "x.json"), good,
         os.path.join(T, "none.ompf")], "none.ompf", "a missing profile among several")
refused(["--format", "json", "-o", os.path.join(T, "x.json"), blocker], blocker,
        "not a profile")
# no XU, no thread: valid and empty in every format
empty = os.path.join(work, "empty.ompf")
rc, out, err = ex(["--format", "json", empty])
if rc or err or json.loads(out)["profiles"][0]["xus"] != []:
    fails.append("json of an empty profile: exit %d %s" % (rc, err))
rc, out, err = ex(["--format", "perfetto", "--counters", empty])
if rc or err or [e for e in json.loads(out)["traceEvents"] if e["ph"] in "XC"]:
    fails.append("perfetto of an empty profile: exit %d %s" % (rc, err))
rc, out, err = ex(["--format", "otf2", "-o", os.path.join(T, "empty.otf2"), empty])
if rc or err:
    fails.append("otf2 of an empty profile: exit %d %s" % (rc, err))
else:
    import otf2
    with otf2.reader.open(os.path.join(T, "empty.otf2", "traces.otf2")) as t:
        if list(t.events):
            fails.append("otf2 of an empty profile has events")
if fails:
    print("\n".join("FAIL: " + f for f in fails))
    sys.exit(1)
print("bad input: ok (note %r)" % note)
