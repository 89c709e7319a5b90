#!/usr/bin/python3
"""ompfuse report: the HTML is self-contained, its SVGs hold the expected
series (EPD bars equal to `ompfuse evaluate`, one heatmap cell per pair with
the CSV's TMDs, scatter series), two groups; with --render, headless
Chromium opens it and the screenshot is not blank (PNG decoded here with
zlib).  usage: eval_report_test.py OMPFUSE EVAL_GEN [--render]"""
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

ompfuse, gen = sys.argv[1], sys.argv[2]
render = "--render" in sys.argv[3:]
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eval_report_util import Svg, png_pixels  # noqa: E402


with tempfile.TemporaryDirectory() as d:
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    os.mkdir(a)
    os.mkdir(b)
    subprocess.run([gen, a, "400", "4", "3", "bench-a"], check=True)
    subprocess.run([gen, b, "300", "5", "4", "bench-b"], check=True)
    out = os.path.join(d, "report.html")
    targets = lambda x: [os.path.join(x, n + ".ompf") for n in ("good", "shifted", "hem")]
    refs = lambda x: [os.path.join(x, f"ref-{r}.ompf") for r in (1, 2, 3)]
    p = subprocess.run([ompfuse, "report", "-q", "-o", out, "--title", "test <report>",
                        "--group", "bench A", "--references", *refs(a), "--", *targets(a),
                        "--group", "bench B", "--references", *refs(b), "--", *targets(b)],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"report exit {p.returncode}: {p.stderr}")
    doc = open(out, encoding="utf-8").read()
    # self-contained: no script, no external resource
    check("<script" not in doc.lower(), "no script")
    urls = set(re.findall(r"https?://[^\"' )]+", doc))
    check(urls <= {"http://www.w3.org/2000/svg"}, f"external URLs: {urls}")
    # no resource outside the page: links only to its own anchors
    check(not re.search(r"\bsrc\s*=", doc), "no src")
    hrefs = re.findall(r'\bhref\s*=\s*"([^"]*)"', doc)
    check(all(h.startswith("#") for h in hrefs), f"only in-page links: {hrefs}")
    ids = set(re.findall(r'\bid="([^"]+)"', doc))
    check(hrefs and all(h[1:] in ids for h in hrefs), f"every contents link has its anchor: {hrefs}")
    check("test &lt;report&gt;" in doc, "title escaped")
    parser = Svg()
    parser.feed(doc)
    els = parser.els
    sections = [e for e in els if e[0] == "section"]
    check(len(sections) == 2, f"{len(sections)} sections")
    for gi, (x, nev) in enumerate(((a, 4), (b, 5))):
        csvp = os.path.join(d, f"g{gi}.csv")
        e = subprocess.run([ompfuse, "evaluate", "-q", "--csv", csvp, "--references", *refs(x),
                            "--", *targets(x)], capture_output=True, text=True)
        check(e.returncode == 0, f"evaluate {e.stderr}")
        rows = list(csv.DictReader(open(csvp)))
        npairs = nev * (nev - 1) // 2
        tmd = {}
        for r in rows:
            tmd.setdefault(r["target"], []).append(float(r["tmd"]))
        epd = {t: math.exp(sum(map(math.log, v)) / len(v)) for t, v in tmd.items()}
        g = str(gi)
        bars = [el for el in els if el[0] == "rect" and "bar" == el[1].get("class")
                and el[2] and el[2].get("data-group") == g]
        check(len(bars) == 3, f"group {g}: {len(bars)} bars")
        for el in bars:
            t = el[1]["data-target"]
            check(abs(float(el[1]["data-value"]) - epd[t]) <= 1e-9 * epd[t],
                  f"bar {t}: {el[1]['data-value']} vs {epd[t]}")
            check(float(el[1]["height"]) > 0, f"bar {t} height")
        whiskers = [el for el in els if el[0] == "g" and el[1].get("class") == "whisker"
                    and el[2] and el[2].get("data-group") == g]
        check(len(whiskers) == 3, f"group {g}: {len(whiskers)} whiskers")
        for w, bar in zip(whiskers, bars):
            v = float(bar[1]["data-value"])
            check(float(w[1]["data-lo"]) <= v <= float(w[1]["data-hi"]),
                  f"whisker {w[1]} around {v}")
        cal = [el for el in els if el[0] == "line" and el[1].get("class") == "calibration"
               and el[2] and el[2].get("data-group") == g]
        check(len(cal) == 1 and cal[0][1]["data-value"] == "1", f"group {g}: calibration line")
        for t in ("lgl", "ctc", "hem"):
            cells = [el for el in els if el[0] == "rect" and el[1].get("class") == "cell"
                     and el[2] and el[2].get("data-group") == g and el[2].get("data-target") == t]
            check(len(cells) == npairs, f"group {g} {t}: {len(cells)} cells, {npairs} pairs")
            got = sorted(float(c[1]["data-value"]) for c in cells)
            want = sorted(tmd[t])
            check(all(abs(u - v) <= 1e-12 * v for u, v in zip(got, want)),
                  f"group {g} {t}: heatmap values {got} vs {want}")
            for series in ("reference", "target"):
                pts = [el for el in els if el[0] == "circle" and el[2] and el[2].get("class") == "scatter"
                       and el[2].get("data-group") == g and el[2].get("data-target") == t
                       and el[4] and el[4].get("data-series") == series]
                # density cells: spread data fills many cells, and every XU
                # is counted in one (none sampled away)
                check(len(pts) > 50, f"group {g} {t}: {len(pts)} {series} cells")
                nxu = 400 if gi == 0 else 300
                leg = [el for el in els if el[0] == "text" and el[1].get("class") == "legend"
                       and el[1].get("data-series") == series and el[2]
                       and el[2].get("data-group") == g and el[2].get("data-target") == t]
                without = int(leg[0][1].get("data-without", 0)) if leg else -1
                held = sum(int(c[1]["data-n"]) for c in pts)
                check(len(leg) == 1 and held + without == nxu and (t != "hem" or series != "target"
                                                                   or without > 0),
                      f"group {g} {t} {series}: cells hold {held} XUs + {without} without "
                      f"a value, not {nxu}")
        # axis labels name the events of the scatter pair
        sc = [el for el in els if el[0] == "svg" and el[1].get("class") == "scatter"
              and el[1].get("data-group") == g]
        check(len(sc) == 3 and all(s[1].get("data-pair", "").count("gen::EV") == 2 for s in sc),
              f"group {g}: scatter pair {[s[1].get('data-pair') for s in sc]}")
    check(" per XU</text>" in doc and "EPD" in doc and "calibrated TMD" in doc, "axis labels / legends")
    # --pair chooses the scatter pair, by short name
    p = subprocess.run([ompfuse, "report", "-q", "-o", out, "--pair", "EV01,EV02",
                        "--references", *refs(a), "--", *targets(a)], capture_output=True, text=True)
    check(p.returncode == 0 and 'data-pair="gen::EV01,gen::EV02"' in open(out).read(),
          f"--pair: {p.returncode} {p.stderr}")
    p = subprocess.run([ompfuse, "report", "-q", "-o", out, "--pair", "EV01,NOPE",
                        "--references", *refs(a), "--", *targets(a)], capture_output=True, text=True)
    check(p.returncode == 2 and "NOPE" in p.stderr, f"bad --pair: {p.returncode} {p.stderr}")
    p = subprocess.run([ompfuse, "report", "--references", *refs(a), "--", *targets(a)],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "-o" in p.stderr, "report without -o")

    if render:
        # back to the two-group report
        subprocess.run([ompfuse, "report", "-q", "-o", out,
                        "--group", "bench A", "--references", *refs(a), "--", *targets(a),
                        "--group", "bench B", "--references", *refs(b), "--", *targets(b)], check=True)
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            print("chromium is not installed: run scripts/setup.sh (package chromium)")
            sys.exit(1)
        png = os.path.join(d, "shot.png")
        prof = os.path.join(d, "chrome-profile")
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-background-networking", "--disable-component-update",
                            "--disable-sync", "--no-first-run", f"--user-data-dir={prof}",
                            f"--screenshot={png}", "--window-size=1200,2000", "file://" + out],
                           capture_output=True, text=True, timeout=180)
        check(os.path.exists(png), f"no screenshot: {r.stderr[-500:]}")
        if os.path.exists(png):
            w, h, bpp, rows = png_pixels(png)
            check((w, h) == (1200, 2000), f"screenshot size {w}x{h}")
            colours, nonwhite = set(), 0
            bar_hem = 0 # the fixed colour of "hem" (docs/evaluation.md)
            for row in rows[::2]:
                for i in range(0, len(row), bpp * 2):
                    px = row[i:i + 3]
                    colours.add(px)
                    if px != b"\xff\xff\xff":
                        nonwhite += 1
                    if px == b"\x8c\x56\x4b":
                        bar_hem += 1
            total = len(rows[::2]) * (w // 2)
            check(nonwhite > 0.05 * total, f"screenshot nearly blank: {nonwhite}/{total} non-white")
            check(len(colours) > 100, f"only {len(colours)} colours")
            check(bar_hem > 200, f"hem's colour seen at {bar_hem} sampled pixels")
            print(f"screenshot {w}x{h}: {len(colours)} colours, "
                  f"{100 * nonwhite / total:.1f}% non-white, {bar_hem} hem pixels sampled")

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("report: all checks passed")
