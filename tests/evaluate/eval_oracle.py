#!/usr/bin/python3
"""Independent oracle for libompfeval: runs emd_dump and checks every EMD
against POT's ot.emd2 and every Spearman coefficient against
scipy.stats.spearmanr.  usage: eval_oracle.py EMD_DUMP [SEED N_EMD N_SP]"""
import subprocess
import sys

import numpy as np
import ot
import scipy.stats

exe = sys.argv[1]
seed, n_emd, n_sp = (sys.argv[2:5] if len(sys.argv) >= 5 else ("12345", "1200", "300"))
out = subprocess.run([exe, seed, n_emd, n_sp], check=True, capture_output=True, text=True).stdout

REL = 1e-9


def same_distribution(ca, cb, pa, pb):
    """Integer counts at points: equal weights count/total at every point."""
    def masses(c, p):
        d = {}
        for k, x in zip(c, p):
            d[tuple(x)] = d.get(tuple(x), 0) + int(k)
        return d
    da, db = masses(ca, pa), masses(cb, pb)
    ta, tb = sum(da.values()), sum(db.values())
    return da.keys() == db.keys() and all(da[x] * tb == db[x] * ta for x in da)
emd_cases = sp_cases = near_cases = 0
worst = 0.0
fail = []
for line in out.splitlines():
    f = line.split()
    if f[0] == "emd":
        m, n = int(f[1]), int(f[2])
        v = np.array(f[3:], dtype=float)
        a, b = v[:m], v[m:m + n]
        pa = v[m + n:m + n + 2 * m].reshape(m, 2)
        pb = v[m + n + 2 * m:m + n + 2 * m + 2 * n].reshape(n, 2)
        mine = v[-1]
        M = np.sqrt(((pa[:, None, :] - pb[None, :, :]) ** 2).sum(axis=2))
        ref = ot.emd2(a / a.sum(), b / b.sum(), M, numItermax=10**8)
        # EMD is a metric: it is exactly 0 iff both histograms are the same
        # distribution, checked here in integers (POT then returns rounding
        # noise around 0, ~1e-18, which is no relative reference)
        if same_distribution(f[3:3 + m], f[3 + m:3 + m + n], pa, pb):
            ref = 0.0
        # plain relative 1e-9 whenever POT's value is positive (tiny EMDs
        # of nearly equal histograms included); absolute 1e-12 only when
        # it is exactly 0 (identical histograms)
        err = abs(mine - ref) / ref if ref > 0 else abs(mine - ref) / 1e-3
        near_cases += 0 < ref < 1e-2
        worst = max(worst, err)
        if not (err <= REL):
            fail.append(f"emd case {emd_cases}: m={m} n={n} mine={mine!r} pot={ref!r}")
        emd_cases += 1
    elif f[0] == "spearman":
        n = int(f[1])
        v = np.array(f[2:], dtype=float)
        x, y, mine = v[:n], v[n:2 * n], v[-1]
        if np.all(x == x[0]) or np.all(y == y[0]):
            ref = 0.0  # scipy gives nan; ompfuse defines 0 (docs/evaluation.md)
        else:
            ref = scipy.stats.spearmanr(x, y).correlation
        if not abs(mine - ref) <= 1e-12:
            fail.append(f"spearman case {sp_cases}: n={n} mine={mine!r} scipy={ref!r}")
        sp_cases += 1
print(f"{emd_cases} EMD cases ({near_cases} below 1e-2; worst relative difference "
      f"{worst:.2e}), {sp_cases} Spearman cases")
if emd_cases < int(n_emd) or sp_cases < int(n_sp) or near_cases < int(n_emd) // 8:
    print("missing cases in emd_dump output")
    sys.exit(1)
if fail:
    print("\n".join(fail[:20]))
    print(f"{len(fail)} mismatches")
    sys.exit(1)
