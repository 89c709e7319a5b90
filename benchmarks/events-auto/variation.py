#!/usr/bin/python3
"""Why random pairing does (or does not) score worse than LGL: per event of
profiles that counted the same events (e.g. the XU pilot, or the check runs
of `--events auto`), what the random control can break.

    /usr/bin/python3 benchmarks/events-auto/variation.py [--ompfuse BIN] [--top K] PROFILE...

Per event: hits per run, share inside XUs, share of XUs it fires in, the CV
within constructs (root mean square of value minus its construct's mean,
over the mean), and with two or more profiles the share of XUs whose value
is the same in every run for the same label ("det").  Then, for the K
events that vary most, the Pearson correlation of their residuals within
constructs, and the share of XUs that random pairing (a shuffle within each
construct) moves to another cell of EPD's 10 x 10 histogram of the pair:
where that is 0, random pairing scores what a matched one does.  With two
or more profiles that share is measured between the first two runs (one
event of each, XUs matched by label), as autoevents/choose.c does: only
dependence that holds between runs can separate matched from random XUs.
"""
import argparse
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import ompfuse  # noqa: E402

FIXED = ["xu", "type", "kind", "label", "thread", "cpu", "start_ns", "end_ns"]


def short(name):
    return name.split(":")[-1] if name.startswith("uprobe:") else name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ompfuse")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("profiles", nargs="+")
    a = ap.parse_args()
    ps = [ompfuse.read(p, ompfuse=a.ompfuse, resolve=False) for p in a.profiles]
    x = ps[0].xus
    events = [c for c in x.columns if c not in FIXED]
    rows, resid = [], {}
    for e in events:
        v = x[e].fillna(0).astype(float)
        gap = float(np.nansum(ps[0].threads["gap"][e])) if e in ps[0].threads["gap"] else 0.0
        tot = v.sum() + gap
        r = v - v.groupby(x["type"]).transform("mean")
        mean = v.mean()
        cv = float(np.sqrt((r * r).mean()) / mean) if mean > 0 else 0.0
        det = float("nan")
        if len(ps) > 1:
            m = x[["label", "type", e]].rename(columns={e: "v0"})
            same = None
            for k, q in enumerate(ps[1:], 1):
                j = m.merge(q.xus[["label", "type", e]].rename(columns={e: "v"}),
                            on=["label", "type"], how="left")
                eq = (j["v0"].fillna(0) == j["v"].fillna(-1)).to_numpy()
                same = eq if same is None else same & eq
            det = float(same.mean()) if len(same) else float("nan")
        rows.append(dict(event=short(e), per_run=tot, inside=v.sum() / tot if tot else 0,
                         covered=float((v != 0).mean()), cv=cv, det=det))
        resid[e] = r.to_numpy()
    t = pd.DataFrame(rows)
    print("%d XUs, %d constructs, %d profiles" % (len(x), x["type"].nunique(), len(ps)))
    with pd.option_context("display.width", 200, "display.max_rows", 500,
                           "display.max_colwidth", 60):
        print(t.to_string(index=False, float_format=lambda f: "%.3g" % f))
    # EPD's intervals on the first run's bounds; with a second run, its
    # values for the same labels (what a fusion that matches XUs pairs)
    y = x[["label"]].merge(ps[1].xus, on="label", how="left") if len(ps) > 1 else None
    bins, bins2 = {}, {}
    for e in events:
        v = x[e].fillna(0).astype(float).to_numpy()
        lo, hi = v.min(), v.max()
        cut = (lambda w: np.clip(np.floor((w - lo) / (hi - lo) * 10), 0, 9).astype(int)) \
            if hi > lo else (lambda w: np.zeros(len(w), int))
        bins[e] = cut(v)
        if y is not None:
            bins2[e] = cut(y[e].fillna(0).astype(float).to_numpy())
    types = x["type"].to_numpy()
    top = [events[i] for i in np.argsort(-t["cv"].clip(upper=3).to_numpy() *
                                         t["covered"].to_numpy())[:a.top]
           if t["cv"].iloc[i] > 0]
    if len(top) > 1:
        print("\nPer pair: Pearson r of the residuals within constructs (|r| > 0.98: twins) / "
              "share of XUs that random pairing within constructs moves in EPD's 10 x 10 "
              "histogram (0: random scores what matched does; with two runs, one event "
              "of each, XUs matched by label, the lesser of both ways):")
        for i, e in enumerate(top):
            cells = []
            for f in top:
                r = np.corrcoef(resid[e], resid[f])[0, 1] if resid[e].std() > 0 and \
                    resid[f].std() > 0 else 0.0
                d = dependence(bins[e], bins[f], types) if not bins2 else \
                    min(dependence(bins[e], bins2[f], types), dependence(bins2[e], bins[f], types))
                cells.append("%6.2f/%5.3f" % (r, d))
            print(" ".join(cells), " e%d %s" % (i, short(e)))


def dependence(bi, bj, types):
    """Total variation between the joint histogram and the product of the
    marginals within each construct (autoevents/choose.c does the same)."""
    tv = 0.0
    for t in np.unique(types):
        m = types == t
        n = m.sum()
        joint = np.zeros((10, 10))
        np.add.at(joint, (bi[m], bj[m]), 1)
        prod = np.outer(joint.sum(1), joint.sum(0)) / n
        tv += np.abs(joint - prod).sum()
    return tv / 2 / len(types)


if __name__ == "__main__":
    main()
