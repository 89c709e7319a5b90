#!/usr/bin/python3
"""The analysis page (`ompfuse analyze --html`) on an imported profile with
3 threads and 4 constructs: no script, one timeline lane per thread, one
table row per group plus the gap row, distribution rows and scatter plots
per construct, bounded drawing (run-length rects per lane), bad --colour /
--scatter refused with exit 2.  With --render, headless Chromium (Debian's
chromium) loads it: the DOM it builds has the same lanes and rows, the
console shows no error, and the screenshot is not blank.
With --fn PROGRAM, PROGRAM (page_fn.c) checks ompf_analysis_page on the
same profile.
usage: analyze_page.py OMPFUSE WORKDIR [--render] [--fn PROGRAM]"""
import os
import random
import shutil
import subprocess
import sys
from html.parser import HTMLParser

from acheck import check, finish, workdir

OMPFUSE, WORK = sys.argv[1:3]
render = "--render" in sys.argv[3:]
workdir(WORK)


class Count(HTMLParser):
    def __init__(self):
        super().__init__()
        self.n = {}
        self.in_tbody = False

    def bump(self, k):
        self.n[k] = self.n.get(k, 0) + 1

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "")
        if tag == "script":
            self.bump("script")
        if tag == "g" and cls == "lane":
            self.bump("lane")
        if tag == "g" and cls == "drow":
            self.bump("drow")
        if tag == "svg":
            self.bump("svg:" + cls)
        if tag == "rect":
            self.bump("rect")
        if tag == "tbody":
            self.in_tbody = True
        if tag == "tr" and self.in_tbody:
            self.bump("row")

    def handle_endtag(self, tag):
        if tag == "tbody":
            self.in_tbody = False


def count(text):
    c = Count()
    c.feed(text)
    return c.n


# 3 threads, 4 constructs, 4000 XUs back to back per thread with gaps,
# TASK-CLOCK spanning decades (log axes), one missing value in ten.
rng = random.Random(3)
csvp = os.path.join(WORK, "p.csv")
with open(csvp, "w") as f:
    f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns,perf::TASK-CLOCK,perf::PAGE-FAULTS\n")
    t = [0, 0, 0]
    for i in range(4000):
        th = i % 3
        d = int(10 ** rng.uniform(2, 6))
        t[th] += rng.randint(0, 3000)
        tc = "" if i % 10 == 0 else str(int(d * rng.uniform(0.5, 1)))
        f.write(f"{i + 1},k.c:{10 + i % 4},task,0.{i + 1},{th},{th},{t[th]},{t[th] + d},"
                f"{tc},{rng.randint(0, 5)}\n")
        t[th] += d
prof = os.path.join(WORK, "p.ompf")
subprocess.run([OMPFUSE, "import", "--csv", csvp, "-o", prof], check=True)
page = os.path.join(WORK, "page.html")
p = subprocess.run([OMPFUSE, "analyze", "--html", page, "--colour", "TASK-CLOCK", prof],
                   capture_output=True, text=True)
check(p.returncode == 0 and p.stdout == "", f"analyze --html: {p.returncode} {p.stderr}")
text = open(page).read()
n = count(text)
check(n.get("script", 0) == 0, "no script in the page")
check(n.get("lane") == 3, f"3 timeline lanes, got {n.get('lane')}")
check(n.get("row") == 5, f"4 construct rows + gap row, got {n.get('row')}")
check(n.get("drow") == 4, f"4 distribution rows, got {n.get('drow')}")
check(n.get("svg:scatter") == 4, f"4 scatter plots, got {n.get('svg:scatter')}")
check(n.get("svg:timeline") == 1, "one timeline")
# bounded: at most one rect per pixel and lane, plus the plots' fixed grids
check(n.get("rect", 0) <= 3 * 1201 + 4 * 60 + 4 * 48 * 48 + 3 + 16,
      f"rects bounded: {n.get('rect')}")
check("log scale" in text, "TASK-CLOCK spans decades: log colour scale")
check("k.c:10" in text and "[gap]" in text, "construct and gap rows named")
for opt, val in (("--colour", "NOPE"), ("--scatter", "TASK-CLOCK,NOPE"), ("--scatter", "x")):
    p = subprocess.run([OMPFUSE, "analyze", "--html", os.path.join(WORK, "bad.html"), opt, val,
                        prof], capture_output=True, text=True)
    check(p.returncode == 2 and ("NOPE" in p.stderr or "X,Y" in p.stderr),
          f"{opt} {val}: {p.returncode} {p.stderr!r}")
    check(not os.path.exists(os.path.join(WORK, "bad.html")), f"{opt} {val}: no page left")

if "--fn" in sys.argv:
    fn = sys.argv[sys.argv.index("--fn") + 1]
    p = subprocess.run([fn, prof, WORK], capture_output=True, text=True)
    check(p.returncode == 0, f"ompf_analysis_page: {p.stdout} {p.stderr}")

if render:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    prof_dir = os.path.join(WORK, "chrome-profile")
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", f"--user-data-dir={prof_dir}", "--enable-logging=stderr", "--v=0"]
    r = subprocess.run(base + ["--dump-dom", "file://" + page], capture_output=True, text=True,
                       timeout=180)
    dom = count(r.stdout)
    check(dom.get("lane") == 3 and dom.get("row") == 5 and dom.get("drow") == 4,
          f"Chromium's DOM: {dom.get('lane')} lanes, {dom.get('row')} rows, {dom.get('drow')}")
    check("CONSOLE" not in r.stderr and "Uncaught" not in r.stderr,
          f"console messages: {[l for l in r.stderr.splitlines() if 'CONSOLE' in l][:3]}")
    png = os.path.join(WORK, "shot.png")
    r = subprocess.run(base + [f"--screenshot={png}", "--window-size=1400,1400",
                               "file://" + page], capture_output=True, text=True, timeout=180)
    check(os.path.exists(png) and os.path.getsize(png) > 20000,
          f"screenshot: {os.path.getsize(png) if os.path.exists(png) else 'none'} bytes")

finish("analyze page")
