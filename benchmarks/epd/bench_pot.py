#!/usr/bin/python3
"""Times POT's network simplex (ot.emd2) on the histogram pairs written by
`bench_epd --dump FILE` and checks that its values agree with ompfuse's.
usage: bench_pot.py FILE"""
import sys
import time

import numpy as np
import ot

t_solve = t_all = 0.0
n = 0
worst = 0.0
for line in open(sys.argv[1]):
    f = line.split()
    m, k = int(f[1]), int(f[2])
    v = np.array(f[3:], dtype=float)
    t0 = time.thread_time()
    a, b = v[:m] / v[:m].sum(), v[m:m + k] / v[m:m + k].sum()
    pa = v[m + k:m + k + 2 * m].reshape(m, 2)
    pb = v[m + k + 2 * m:m + k + 2 * m + 2 * k].reshape(k, 2)
    # direct differences: ot.dist's |x|^2+|y|^2-2xy loses ~1e-8 relative
    # on close bins, more than the solvers differ
    M = np.sqrt(((pa[:, None, :] - pb[None, :, :]) ** 2).sum(axis=2))
    t1 = time.thread_time()
    ref = ot.emd2(a, b, M, numItermax=10**7)
    t2 = time.thread_time()
    t_solve += t2 - t1
    t_all += t2 - t0
    n += 1
    worst = max(worst, abs(ref - v[-1]) / max(abs(ref), 1e-3))
print(f"POT ot.emd2 {ot.__version__}: {n} EMDs, {1e6 * t_solve / n:.1f} us CPU per EMD "
      f"(solver call only), {1e6 * t_all / n:.1f} us with histogram/cost set-up; "
      f"worst relative difference to ompfuse {worst:.2e}")
