#!/usr/bin/python3
"""Checks `ompfuse export` formats against the CSV export of the same
profile (the XUs: id, construct, kind, label, thread, times, values) and
`ompfuse show` (metadata, event status).
usage: export_check.py OMPFUSE WORK CHECK [KIND]
  CHECK otf2|perfetto|json|csvmeta with KIND run|untied|fused|hem|hemrun|imported
  CHECK multi: several profiles in one json/perfetto/otf2 export"""
import csv
import io
import json
import os
import re
import subprocess
import sys
from decimal import Decimal

ompfuse, work, check = sys.argv[1:4]
kind = sys.argv[4] if len(sys.argv) > 4 else None
fails = []


def fail(msg):
    fails.append(msg)


def run(args, ok=(0,)):
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if r.returncode not in ok:
        sys.exit("FAIL: %s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr))
    return r


def num(s):
    """CSV cell -> exact Python number; None when missing."""
    if s == "":
        return None
    return int(s) if re.fullmatch(r"-?\d+", s) else float(s)


def csv_xus(path):
    """The reference: export --csv, parsed with Python's csv module."""
    text = run([ompfuse, "export", "--csv", "--no-resolve", path]).stdout
    rows = list(csv.reader(io.StringIO(text)))
    head, events = rows[0], rows[0][8:]
    xus = {}
    for r in rows[1:]:
        xus[int(r[0])] = dict(type=r[1], kind=r[2], label=r[3], thread=int(r[4]),
                              cpu=int(r[5]), start=int(r[6]), end=int(r[7]),
                              values=[num(v) for v in r[8:]])
    return events, xus


def json_doc(paths):
    text = run([ompfuse, "export", "--format", "json", "--no-resolve"] + paths).stdout
    # strict: JSON has no NaN/Infinity
    return json.loads(text, parse_constant=lambda c: fail("non-JSON constant %s" % c))


def show_meta(path):
    """metadata and event status as `ompfuse show` prints them."""
    out = run([ompfuse, "show", "--no-resolve", path], ok=(0,)).stdout
    meta, status, sec = {}, {}, None
    for line in out.splitlines():
        m = re.match(r"^(\w+) \(\d+\):", line)
        if m:
            sec = m.group(1)
            continue
        if sec == "metadata" and line.startswith("  "):
            k, _, v = line.strip().partition(" ")
            meta[k] = v.strip()
        elif sec == "events":
            m = re.match(r"^  \d+\s+(.*?)\s+(counted|failed|multiplexed|estimated)\b", line)
            if m:
                status[m.group(1)] = m.group(2)
    return meta, status


def laminar(spans, what):
    """spans: (start, end, key) on one track; they must nest."""
    stack = []
    for s, e, k in sorted(spans, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1][1] <= s:
            stack.pop()
        if stack and e > stack[-1][1]:
            fail("%s: %s [%d,%d] overlaps %s [%d,%d] without nesting"
                 % (what, k, s, e, stack[-1][2], stack[-1][0], stack[-1][1]))
            return
        stack.append((s, e, k))


def same_value(a, b, as_double=False):
    """a exported, b from the CSV: equal, and an integer stays an integer
    unless the export keeps the whole column as doubles."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(b, int) and not as_double:
        return type(a) is int and a == b
    return float(a) == b


def profile_path():
    return os.path.join(work, kind + ".ompf")


def export_kind(fmt, suffix):
    """Exports this KIND's profile; its CSV reference, JSON and output path."""
    path = profile_path()
    events, ref = csv_xus(path)
    doc = json_doc([path])["profiles"][0]
    out = os.path.join(work, kind + suffix)
    run([ompfuse, "export", "--format", fmt, "--no-resolve", "-o", out, path])
    return path, events, ref, doc, out


def compare_xus(what, got, ref, doc, keys, double=None):
    """got[id]: the exported XU (keys plus 'values'), against the CSV's and
    the JSON's parts."""
    parts = {x["id"]: x["parts"] for x in doc["xus"]}
    if set(got) != set(ref):
        fail("%s: %d XUs exported, %d in the profile" % (what, len(got), len(ref)))
    double = double or [False] * len(doc["events"])
    bad = 0
    for xu, r in ref.items():
        o = got.get(xu)
        if not o:
            continue
        want = dict({k: r[k] for k in keys}, parts=parts[xu])
        have = {k: o[k] for k in want}
        if have != want or not all(same_value(a, b, d) for a, b, d in
                                   zip(o["values"], r["values"], double)):
            bad += 1
            if bad <= 3:
                fail("%s XU %d: %s %s, profile %s %s" % (what, xu, have, o["values"], want,
                                                        r["values"]))


def doc_parts(doc):
    """XU id -> its parts [(thread, start, end)] as the JSON export lists
    them (part_list; absent: one span)."""
    return {x["id"]: [tuple(q) for q in x["part_list"]] if "part_list" in x
            else [(x["thread"], x["start_ns"], x["end_ns"])] for x in doc["xus"]}


def fold_slices(what, got, doc):
    """got[(xu, k)]: one slice per part.  Checks that each XU has exactly
    its parts (thread, start, end, in time order) and its values on the
    first one only; returns got per XU as one record (first start, last
    end and thread, the first part's values) for compare_xus."""
    want, byxu = doc_parts(doc), {}
    for (xu, _), sl in got.items():
        byxu.setdefault(xu, []).append(sl)
    out, bad = {}, 0
    for xu, sls in byxu.items():
        sls.sort(key=lambda q: (q["start"], q["end"]))
        have = [(q["thread"], q["start"], q["end"]) for q in sls]
        if have != want.get(xu) or any(v is not None for q in sls[1:] for v in q["values"]):
            bad += 1
            if bad <= 3:
                fail("%s XU %d: slices %s (values %s), parts %s" % (
                    what, xu, have, [q["values"] for q in sls], want.get(xu)))
        out[xu] = dict(sls[0], thread=sls[-1]["thread"], end=sls[-1]["end"])
    return out


def drawn_starts(got, what):
    """A timeline draws a slice that began inside the previous slice's
    closing counter read from that slice's end, and carries its recorded
    start as start_ns (export/lanes.h).  got[key]: 'start' drawn, 'rec'
    recorded or None.  Checks each such start against a slice end on the
    same thread and puts the recorded start back for the comparison with
    the profile."""
    ends = {}
    for s in got.values():
        ends.setdefault(s["thread"], set()).add(s["end"])
    moved = 0
    for xu, s in got.items():
        rec = s.pop("rec")
        if rec is None:
            continue
        moved += 1
        if not (rec < s["start"] and s["start"] in ends[s["thread"]]):
            fail("%s slice %s: drawn from %d, recorded %d, not at a slice's end"
                 % (what, xu, s["start"], rec))
        s["start"] = rec
    if kind == "chunks" and moved < len(got) // 2:
        fail("%s: only %d of %d consecutive chunks drawn from the previous end"
             % (what, moved, len(got)))
    return moved


# ---- OTF2 ---------------------------------------------------------------
def check_otf2():
    import otf2
    path, events, ref, doc, out = export_kind("otf2", ".otf2")
    seen, open_, tracks = {}, {}, {}
    multi = {xu for xu, ps in doc_parts(doc).items() if len(ps) > 1}
    with otf2.reader.open(os.path.join(out, "traces.otf2")) as tr:
        if tr.timer_resolution != 10**9:
            fail("timer resolution %s" % tr.timer_resolution)
        members = {m.name: m for m in tr.definitions.metric_members}
        for e in events:
            st = doc["events"][events.index(e)]
            if e not in members:
                fail("no metric member for %s" % e)
            elif members[e].unit != st["unit"] or st["status"] not in members[e].description:
                fail("metric %s: unit %s, description %r" % (e, members[e].unit,
                                                             members[e].description))
        double = [members[e].value_type == otf2.Type.DOUBLE for e in events]
        for e, dbl in zip(events, double):
            st = doc["events"][events.index(e)]["status"]
            ints = all(isinstance(x["values"][events.index(e)], (int, type(None)))
                       for x in doc["xus"])
            if dbl != (st == "estimated" or not ints):
                fail("metric %s is %s" % (e, members[e].value_type))
        regions = sorted(r.name for r in tr.definitions.regions)
        if regions != sorted(c["name"] for c in doc["constructs"]):
            fail("regions %s are not the constructs" % regions)
        for loc, ev in tr.events:
            name = type(ev).__name__
            stack = open_.setdefault(loc.name, [])
            if name == "Enter":
                a = {k.name: v for k, v in ev.attributes.items()}
                stack.append([a["xu"], ev.region.name, ev.time, {}, a])
            elif name == "Metric":
                if not stack:
                    fail("metric outside an XU on %s" % loc.name)
                    continue
                m = ev.metric.members[0].name
                stack[-1][3][m] = ev.values[0]
            elif name == "Leave":
                xu, region, t0, vals, a = stack.pop()
                if region != ev.region.name:
                    fail("XU %d: leaves %s, entered %s" % (xu, ev.region.name, region))
                thread = int(re.match(r"thread (\d+) ", loc.name).group(1))
                key = (xu, len([k for k in seen if k[0] == xu]) if xu in multi else 0)
                if key in seen:
                    fail("XU %d entered twice" % xu)
                seen[key] = dict(type=region, thread=thread, start=t0, end=ev.time,
                                 values=[vals.get(e) for e in events], parts=a["parts"],
                                 label=a["label"], rec=a.get("start_ns"))
                tracks.setdefault(loc.name, []).append((t0, ev.time, key))
    for l, s in open_.items():
        if s:
            fail("%s: %d XUs never left" % (l, len(s)))
    drawn_starts(seen, "OTF2")
    nslices = len(seen)
    seen = fold_slices("OTF2", seen, doc)
    compare_xus("OTF2", seen, ref, doc, ("type", "thread", "start", "end", "label"), double)
    for l, spans in tracks.items():
        laminar(spans, "OTF2 location " + l)
    # run metadata as archive properties
    meta, _ = show_meta(path)
    anchor = run(["otf2-print", "-A", os.path.join(out, "traces.otf2")]).stdout
    props = dict(re.findall(r"Property name\s+(\S+)\nProperty value\s+(.*)", anchor))
    for k, v in meta.items():
        if k != "argv" and v and props.get("OMPFUSE::P0::" + k.upper()) != v:
            fail("property %s: %r, show says %r" % (k, props.get("OMPFUSE::P0::" + k.upper()), v))
    print("otf2 %s: %d XUs in %d parts (Enter/Leave pairs), %d locations, %d metrics" % (
        kind, len(seen), nslices, len(tracks), len(events)))
    if kind == "untied" and nslices <= len(seen):
        fail("untied: no XU in several parts")


# ---- Perfetto -----------------------------------------------------------
def check_perfetto():
    path, events, ref, doc, out = export_kind("perfetto", ".perfetto.json")
    with open(out) as f:
        tr = json.load(f, parse_constant=lambda c: fail("non-JSON constant %s" % c))
    if not isinstance(tr.get("traceEvents"), list):
        return fail("no traceEvents list")
    names = {}
    for e in tr["traceEvents"]:
        for k in ("ph", "pid", "name"):
            if k not in e:
                fail("event without %s: %s" % (k, e))
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
    slices, tracks = {}, {}
    for e in tr["traceEvents"]:
        if e["ph"] != "X":
            continue
        xu = (e["args"]["xu"], e["args"].get("part", 1))
        if xu in slices:
            fail("XU %d has two slices for part %d" % xu)
        m = re.match(r"thread (\d+) \(tid -?\d+\)( multi-part XUs, lane (\d+))?$",
                     names.get(e["tid"], ""))
        if not m:
            fail("slice on unnamed track %s" % e["tid"])
            continue
        # ts/dur are microseconds with 3 decimals: exact nanoseconds
        start = int(Decimal(repr(e["ts"])) * 1000)
        end = start + int(Decimal(repr(e["dur"])) * 1000)
        slices[xu] = dict(type=e["name"], thread=int(m.group(1)), start=start, end=end,
                          kind=e["cat"], label=e["args"]["label"],
                          values=[e["args"].get(ev) for ev in events],
                          parts=e["args"]["parts"], lane=int(m.group(3) or 0),
                          rec=e["args"].get("start_ns"))
        tracks.setdefault(e["tid"], []).append((start, end, xu))
    drawn_starts(slices, "Perfetto")
    nslices = len(slices)
    recorded = {x["id"] for x in doc["xus"] if "part_list" in x}
    if any(s["lane"] and xu in recorded for (xu, _), s in slices.items()):
        fail("a part of an XU with recorded parts on an extra lane")
    lanes = slices
    slices = fold_slices("Perfetto", slices, doc)
    compare_xus("Perfetto", slices, ref, doc,
                ("type", "thread", "start", "end", "kind", "label"))
    for tid, spans in tracks.items():
        laminar(spans, "Perfetto track " + names[tid])
    # an XU is on an extra lane only when it cannot nest on each lane before
    by_thread_lane = {}
    for xu, s in lanes.items():
        by_thread_lane.setdefault((s["thread"], s["lane"]), []).append(s)
    for (t, lane), ss in by_thread_lane.items():
        for s in ss:
            for lower in range(lane):
                if not any(o["start"] < s["start"] < o["end"] < s["end"] or
                           s["start"] < o["start"] < s["end"] < o["end"]
                           for o in by_thread_lane.get((t, lower), [])):
                    fail("XU %s on lane %d of thread %d would nest on lane %d"
                         % (s["label"], lane, t, lower))
    check_counters(path, events, ref)
    multi = sum(1 for s in lanes.values() if s["lane"])
    if multi and all(s["parts"] == 1 for s in lanes.values()):
        fail("%d single-part XUs on extra lanes" % multi)
    print("perfetto %s: %d slices for %d XUs on %d tracks (%d on extra lanes)" % (
        kind, nslices, len(slices), len(tracks), multi))
    if kind == "untied" and nslices <= len(slices):
        fail("untied: no XU in several parts")


def check_counters(path, events, ref):
    """--counters: per thread and event, one step per XU with a value, in
    time order, ending at the thread's sum of XU values."""
    out = os.path.join(work, kind + ".counters.json")
    run([ompfuse, "export", "--format", "perfetto", "--counters", "--no-resolve", "-o", out,
         path])
    steps = {}
    for e in json.load(open(out))["traceEvents"]:
        if e["ph"] == "C":
            steps.setdefault(e["name"], []).append((Decimal(repr(e["ts"])),
                                                    e["args"]["sum over XUs"]))
    want = {}
    for r in ref.values():
        for ev, v in zip(events, r["values"]):
            if v is not None:
                w = want.setdefault("thread %d %s" % (r["thread"], ev), [0, 0])
                w[0] += 1
                w[1] += v
    if set(steps) != set(want):
        fail("counter tracks %s, want %s" % (sorted(steps), sorted(want)))
    for name, (n, total) in want.items():
        st = steps.get(name, [])
        if len(st) != n or [t for t, _ in st] != sorted(t for t, _ in st) or \
                abs(st[-1][1] - total) > 1e-9 * max(1, abs(total)):
            fail("counter %s: %d steps to %s, want %d to %s" % (name, len(st),
                                                                st[-1][1] if st else None,
                                                                n, total))


# ---- JSON ---------------------------------------------------------------
def check_json():
    path = profile_path()
    events, ref = csv_xus(path)
    p = json_doc([path])["profiles"][0]
    meta, status = show_meta(path)
    for k, v in meta.items():
        got = p["metadata"].get(k, "").replace("\x1f", " ")
        if got != v:
            fail("metadata %s: %r, show says %r" % (k, got, v))
    if [e["name"] for e in p["events"]] != events:
        fail("events %s" % [e["name"] for e in p["events"]])
    for e in p["events"]:
        if status.get(e["name"]) != e["status"]:
            fail("event %s status %s, show says %s" % (e["name"], e["status"],
                                                       status.get(e["name"])))
        want = "ns" if e["name"].endswith("CLOCK") else "count"
        if e["unit"] != want:
            fail("event %s unit %s" % (e["name"], e["unit"]))
    cons = [c["name"] for c in p["constructs"]]
    got = {x["id"]: dict(type=cons[x["type"]], kind=x["kind"], label=x["label"],
                         thread=x["thread"], cpu=x["cpu"], start=x["start_ns"],
                         end=x["end_ns"], values=x["values"]) for x in p["xus"]}
    if set(got) != set(ref):
        fail("%d XUs in JSON, %d in CSV" % (len(got), len(ref)))
    for xu, r in ref.items():
        g = got.get(xu)
        if g and ({k: g[k] for k in r if k != "values"} != {k: r[k] for k in r if k != "values"}
                  or not all(same_value(a, b) for a, b in zip(g["values"], r["values"]))):
            fail("XU %d: JSON %s, CSV %s" % (xu, g, r))
            break
    for x in p["xus"]:
        ps = x.get("part_list")
        if ps is None:
            continue
        if len(ps) != x["parts"] or len(ps) < 2 or ps[0][1] != x["start_ns"] or \
                ps[-1][2] != x["end_ns"] or ps[-1][0] != x["thread"] or \
                any(a[2] > b[1] for a, b in zip(ps, ps[1:])) or any(q[1] > q[2] for q in ps):
            fail("XU %d: parts %d, part_list %s, span %d..%d on %d" % (
                x["id"], x["parts"], ps, x["start_ns"], x["end_ns"], x["thread"]))
            break
    if kind == "untied" and not any("part_list" in x for x in p["xus"]):
        fail("untied: no XU with its parts")
    if len(p["threads"]) and any(len(t["gap"]) != len(events) for t in p["threads"]):
        fail("thread rows do not have one value per event")
    if meta.get("mode") == "fused":
        if not p["sources"] or any(len(x["provenance"]) != len(p["sources"]) for x in p["xus"]):
            fail("fused profile without sources/provenance")
    print("json %s: %d XUs, %d events" % (kind, len(got), len(events)))


# ---- CSV + metadata ------------------------------------------------------
def check_csvmeta():
    path = profile_path()
    out, mout = os.path.join(work, kind + ".csv"), os.path.join(work, kind + ".meta.json")
    run([ompfuse, "export", "--format", "csv", "--no-resolve", "-o", out, "--metadata", mout,
         path])
    plain = run([ompfuse, "export", "--csv", "--no-resolve", path]).stdout
    if open(out).read() != plain:
        fail("--format csv -o differs from --csv on stdout")
    m = json.load(open(mout))["profiles"][0]
    meta, status = show_meta(path)
    if "xus" in m or len(m["threads"]) != len(json_doc([path])["profiles"][0]["threads"]):
        fail("metadata file carries XUs, or not the threads")
    for k in ("mode", "strategy", "run_id"):
        if meta.get(k, "") != m["metadata"].get(k, ""):
            fail("metadata %s: %r, show %r" % (k, m["metadata"].get(k), meta.get(k)))
    for e in m["events"]:
        if status.get(e["name"]) != e["status"] or e["unit"] not in ("ns", "count"):
            fail("event %s: %s %s" % (e["name"], e["status"], e["unit"]))
    if meta.get("mode") == "fused":
        srcs = [s["path"] for s in m["sources"]]
        if srcs != [os.path.join(work, "run.ompf"), os.path.join(work, "run2.ompf")]:
            fail("sources %s" % srcs)
        if sorted(e["source"] for e in m["events"]) != [0, 0, 1, 1]:
            fail("event sources %s" % [e["source"] for e in m["events"]])
    print("csv+metadata %s: %d events, mode %s" % (kind, len(m["events"]), meta.get("mode")))


# ---- several profiles per call -----------------------------------------
def check_multi():
    import otf2
    paths = [os.path.join(work, n + ".ompf") for n in ("run", "fused", "imported")]
    counts = [len(csv_xus(p)[1]) for p in paths]
    doc = json_doc(paths)
    if [len(p["xus"]) for p in doc["profiles"]] != counts:
        fail("json: XUs per profile %s, want %s" % ([len(p["xus"]) for p in doc["profiles"]],
                                                     counts))
    out = os.path.join(work, "multi.json")
    run([ompfuse, "export", "--format", "perfetto", "--no-resolve", "-o", out] + paths)
    tr = json.load(open(out))
    per_pid = [sum(1 for e in tr["traceEvents"] if e["ph"] == "X" and e["pid"] == k + 1)
               for k in range(len(paths))]
    nparts = [sum(len(ps) for ps in doc_parts(p).values()) for p in doc["profiles"]]
    if per_pid != nparts:
        fail("perfetto: slices per pid %s, want %s parts" % (per_pid, nparts))
    out = os.path.join(work, "multi.otf2")
    run([ompfuse, "export", "--format", "otf2", "--no-resolve", "-o", out] + paths)
    enters = {}
    with otf2.reader.open(os.path.join(out, "traces.otf2")) as t:
        groups = [g.name for g in t.definitions.location_groups]
        for loc, ev in t.events:
            if type(ev).__name__ == "Enter":
                enters[loc.group.name] = enters.get(loc.group.name, 0) + 1
    if [enters.get(g, 0) for g in groups] != nparts:
        fail("otf2: enters per location group %s, want %s parts" % (enters, nparts))
    # run again over the same archive: replaced, not refused
    run([ompfuse, "export", "--format", "otf2", "--no-resolve", "-o", out, paths[0]])
    with otf2.reader.open(os.path.join(out, "traces.otf2")) as t:
        if len(t.definitions.location_groups) != 1:
            fail("otf2: existing archive not replaced")
    print("multi: XUs per profile %s in json, perfetto and otf2" % counts)


{"otf2": check_otf2, "perfetto": check_perfetto, "json": check_json,
 "csvmeta": check_csvmeta, "multi": check_multi}[check]()
if fails:
    print("\n".join("FAIL: " + f for f in fails[:20]))
    sys.exit(1)
print("ok")
