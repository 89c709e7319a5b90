#!/usr/bin/python3
"""ompfuse report reads well on the data that made it unreadable: XUs whose
small counts pile up on a few values, plus one far outlier.
- each scatter's axes span the 0.5-99.5 % quantiles of the values drawn
  (numpy is the oracle), so the outlier neither sets the axis nor
  disappears: it is drawn at the edge and counted in the legend;
- every XU is in one density cell (no sampling), and the points span the
  plot, not one pixel;
- one colour per strategy name whatever the order of the targets, and a
  log EPD axis in every report;
- a table of contents whose links all land, and the run's metadata;
- with --render OUTDIR: screenshots at 1400 and 800 px wide are kept in
  OUTDIR, are not blank, and every scatter's points span more than a few
  pixels at both widths.
usage: eval_report_readable.py OMPFUSE [--render OUTDIR]"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eval_report_util import Svg, png_pixels  # noqa: E402

ompfuse = sys.argv[1]
render = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--render" else None
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


def run(*args):
    p = subprocess.run([ompfuse, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


N = 1120
EVENTS = ["perf::PAGE-FAULTS", "perf::MINOR-FAULTS"]


def rows_for(seed, outlier, missing=0.0):
    """N XUs with counts 0 or 1 (mostly 0), one far outlier if asked."""
    rnd = random.Random(seed)
    rows = []
    for i in range(N):
        a = 1 if rnd.random() < 0.3 else 0
        b = a if rnd.random() < 0.8 else 1 - a
        if missing and rnd.random() < missing:
            b = None
        rows.append((a, b))
    if outlier:
        rows[17] = (27, 27)
    return rows


def write_profile(d, name, rows, meta_threads=2):
    path = os.path.join(d, name + ".csv")
    with open(path, "w") as f:
        f.write("xu,type,kind,label,thread,cpu,start_ns,end_ns," + ",".join(EVENTS) + "\n")
        for i, (a, b) in enumerate(rows):
            f.write(f"{i + 1},cg.c:274,loop-chunk,0.{i + 1},{i % 2},-1,{100 * i},{100 * i + 50},"
                    f"{a},{'' if b is None else b}\n")
    out = os.path.join(d, name + ".ompf")
    rc, o, e = run("import", "--csv", path, "-o", out, "--program", "prog", "--threads",
                   str(meta_threads))
    if rc != 0:
        sys.exit(f"import {path} failed: {rc} {e}")
    return out


def parse(path):
    doc = open(path, encoding="utf-8").read()
    p = Svg()
    p.feed(doc)
    return doc, p.els


def scatters(els):
    """{target: (svg attrs, {series: [circle attrs]}, {series: legend attrs})}"""
    out = {}
    for tag, a, svg, sec, g in els:
        if svg is None or svg.get("class") != "scatter":
            continue
        t = svg["data-target"]
        ent = out.setdefault(t, (svg, {}, {}))
        if tag == "circle" and g is not None and "data-n" in a:
            ent[1].setdefault(g["data-series"], []).append(a)
        if tag == "text" and a.get("class") == "legend":
            ent[2][a["data-series"]] = a
    return out


with tempfile.TemporaryDirectory() as d:
    refs = [write_profile(d, f"ref-{r}", rows_for(r, outlier=(r == 1))) for r in (1, 2, 3)]
    data = {"lgl": rows_for(11, True), "bc": rows_for(12, False),
            "hem": rows_for(13, True, missing=0.1), "mine": rows_for(14, False)}
    tgt = {n: write_profile(d, "t-" + n, r) for n, r in data.items()}
    reports = []
    for order in (["lgl", "bc", "hem", "mine"], ["mine", "hem", "bc", "lgl"]):
        out = os.path.join(d, "report-" + order[0] + ".html")
        rc, o, e = run("report", "-q", "-o", out, "--title", "readable", "--group", "pile-up",
                       "--pair", "PAGE-FAULTS,MINOR-FAULTS", "--references", *refs, "--",
                       *[f"{n}={tgt[n]}" for n in order])
        check(rc == 0, f"report exit {rc}: {e}")
        reports.append(out)
    colours = []
    for out in reports:
        doc, els = parse(out)
        bars = {a["data-target"]: a["fill"] for tag, a, svg, sec, g in els
                if tag == "rect" and a.get("class") == "bar"}
        colours.append(bars)
        scales = [a.get("data-scale") for tag, a, svg, sec, g in els
                  if tag == "svg" and a.get("class") == "epd-bars"]
        check(scales == ["log"], f"{out}: EPD axes {scales}, expected one log axis")
        # contents: every link lands on an anchor of the page
        hrefs = re.findall(r'<nav class="toc">.*?</nav>', doc, re.S)
        links = re.findall(r'href="#([^"]+)"', hrefs[0]) if hrefs else []
        ids = set(re.findall(r'\bid="([^"]+)"', doc))
        check(len(links) >= 4 and all(l in ids for l in links),
              f"{out}: contents links {links} vs anchors")
        # run metadata from the references
        run_dl = re.findall(r'<dl class="run">(.*?)</dl>', doc, re.S)
        check(run_dl and "<dd>prog</dd>" in run_dl[0] and "<dd>2</dd>" in run_dl[0]
              and all(ev in run_dl[0] for ev in EVENTS),
              f"{out}: run metadata {run_dl[:1]}")
        sc = scatters(els)
        check(sorted(sc) == sorted(data), f"{out}: scatters {sorted(sc)}")
        ref_rows = rows_for(1, True)
        for name, (svg, cells, legend) in sc.items():
            x0, x1 = float(svg["data-x0"]), float(svg["data-x1"])
            y0, y1 = float(svg["data-y0"]), float(svg["data-y1"])
            # oracle: the union of both series' 0.5-99.5 % quantile ranges
            lo, hi = [], []
            for rows in (ref_rows, data[name]):
                both = numpy.array([(a, b) for a, b in rows if b is not None], dtype=float)
                lo.append(numpy.quantile(both, 0.005, axis=0, method="lower"))
                hi.append(numpy.quantile(both, 0.995, axis=0, method="higher"))
            qlo, qhi = numpy.min(lo, axis=0), numpy.max(hi, axis=0)
            for (v0, v1, a, b, ax) in ((x0, x1, qlo[0], qhi[0], "x"), (y0, y1, qlo[1], qhi[1], "y")):
                check(v0 <= a and v1 >= b and (v1 - v0) <= (b - a) * 1.1 + 1e-9,
                      f"{name}: {ax} axis [{v0}, {v1}] vs quantiles [{a}, {b}]")
                check(v1 < 27, f"{name}: the outlier sets the {ax} axis ({v1})")
            for series, rows in (("reference", ref_rows), ("target", data[name])):
                n = sum(int(c["data-n"]) for c in cells.get(series, []))
                want = sum(1 for a, b in rows if b is not None)
                check(n == want, f"{name} {series}: cells hold {n} XUs, not {want}")
                beyond = sum(1 for a, b in rows if b is not None and (a > 1 or b > 1))
                leg = legend.get(series, {})
                check(int(leg.get("data-beyond", -1)) == beyond,
                      f"{name} {series}: legend says {leg.get('data-beyond')} at the edge, "
                      f"not {beyond}")
                # the cells spread over the plot: 0/1 counts land in corners
                # of the drawn range, not on one pixel
                xs = [float(c["cx"]) for c in cells.get(series, [])]
                ys = [float(c["cy"]) for c in cells.get(series, [])]
                check(xs and max(xs) - min(xs) > 100 and max(ys) - min(ys) > 100,
                      f"{name} {series}: points span {max(xs) - min(xs) if xs else 0:.0f} x "
                      f"{max(ys) - min(ys) if ys else 0:.0f} px")
    check(colours[0] == colours[1], f"colours follow the order: {colours}")
    check(len(set(colours[0].values())) == len(colours[0]), f"colours not distinct: {colours[0]}")

    if render:
        os.makedirs(render, exist_ok=True)
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            sys.exit("chromium is not installed: run scripts/setup.sh (package chromium)")
        doc, els = parse(reports[0])
        sc = scatters(els)
        for width in (1400, 800):
            png = os.path.join(render, f"report-{width}.png")
            if os.path.exists(png):
                os.unlink(png)
            r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                "--disable-background-networking", "--disable-component-update",
                                "--disable-sync", "--no-first-run",
                                f"--user-data-dir={os.path.join(d, 'chrome')}",
                                f"--screenshot={png}", f"--window-size={width},2400",
                                "file://" + reports[0]],
                               capture_output=True, text=True, timeout=180)
            check(os.path.exists(png), f"no screenshot at {width}: {r.stderr[-500:]}")
            if not os.path.exists(png):
                continue
            w, h, bpp, rows = png_pixels(png)
            check((w, h) == (width, 2400), f"screenshot size {w}x{h}")
            nonwhite = sum(1 for row in rows[::4] for i in range(0, len(row), bpp * 4)
                           if row[i:i + 3] != b"\xff\xff\xff")
            total = len(rows[::4]) * (w // 4)
            check(nonwhite > 0.03 * total, f"{width}: nearly blank ({nonwhite}/{total})")
            # the page fits: body margin 16 px, so a scatter of 360 px is
            # drawn at min(1, available / 360) of its size
            avail = min(width - 32, 1160)
            for name, (svg, cells, legend) in sc.items():
                scale = min(1.0, avail / float(svg["width"]))
                for series, cs in cells.items():
                    xs = [float(c["cx"]) * scale for c in cs]
                    ys = [float(c["cy"]) * scale for c in cs]
                    span = max(max(xs) - min(xs), max(ys) - min(ys))
                    check(span > 20, f"{width} px: {name} {series} points span {span:.0f} px")
            print(f"screenshot {png}: {w}x{h}, {100 * nonwhite / total:.1f}% non-white")

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("report readability: all checks passed")
