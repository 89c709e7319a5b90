#!/usr/bin/python3
"""Scaling of 'ompfuse combine' end to end through the CLI (issue 20).

For each size N it generates deterministic inputs with
bench_fusion --generate-only (LGL/CTC: R runs x N XUs, one event each;
BC: --bc-steps + 1 runs x 2 types x N/2 XUs, 3 shared events and one new event per run),
then measures, interleaved round by round so that every figure sees the same
load: reading the same inputs (`ompfuse show`), `combine lgl`, `combine ctc`
and `combine bc` -- CPU time (user + sys of the child) and peak RSS.
With --ref OLD_OMPFUSE the old binary is measured in the same rounds.
Prints min and median per figure, the ratio to reading, bytes per input
XU beyond the values, the time exponent between consecutive sizes, and the
targets next to them; also user and system time apart and the exponent
of user time alone (at 10^7 the system time is mostly the machine's cost
of fresh memory, which it prints at the end through mem_touch when the
largest size is 10^6 or more).  When BC is measured, a closing table puts
its figures next to its own targets (ratio at 10^5 XUs per type, bytes per
XU, exponent); with --strategies bc alone only the BC inputs are generated
and read (--sizes 2e4,2e5,2e6: 10^4 to 10^6 XUs per type).

usage: scale.py [--sizes 1e4,1e5,1e6] [--runs 10] [--repeat 3]
                [--ref OLD_OMPFUSE] [--strategies lgl,ctc,bc] [--bc-steps 8]
                [--order shuffled|alike] [--keep-inputs] BUILD_BIN_DIR WORK_DIR

--order is bench_fusion's: shuffled (default) gives each run's records a
random order of its own, the worst case for matching labels; alike gives
them the order of a real program's runs, which mostly agree (label
lookups that guess the next node right: 99.98 % on a 242,784-task fib,
65-75 % on CG and MG, 0 % shuffled).

--keep-inputs keeps WORK_DIR/n<N> afterwards and reuses the inputs found
there (generating 10 x 10^7 XUs takes 5-6 minutes); they must have been
generated with the same --runs, --strategies and --bc-steps.
"""
import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

TARGET_RATIO = {"lgl": 1.5, "ctc": 1.5, "bc": 3.0}
# BC (issue 20): <= 3 x read at 8 steps x 10^5 XUs per type, <= 64 bytes
# per input XU beyond the values, time exponent <= 1.05.
BC_TARGET_PER_TYPE, BC_TARGET_BYTES, TARGET_EXPONENT = 100000, 64, 1.05


def timed(cmd, cwd):
    """(CPU s, peak RSS MB, user s, system s) through /usr/bin/time."""
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M"] + cmd, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode:
        raise SystemExit(f"scale.py: {' '.join(cmd)} failed ({p.returncode}): "
                         f"{p.stderr.strip()}")
    u, s, m = p.stderr.strip().splitlines()[-1].split()
    return float(u) + float(s), int(m) / 1024.0, float(u), float(s)


def bc_report(rows, bins):
    """BC's figures next to its targets, one line per binary and size.
    rows: (tag, XUs per type, median CPU, x read, peak MB, B/XU, load,
    input XUs).  Besides the bytes per XU at each size, which carry the
    process's fixed memory (binary, libraries, tables), the marginal
    bytes per XU from the previous size: what each further XU costs."""
    print("\n# BC against its targets (median CPU of combine bc; ratio to "
          "reading the same inputs; exponent between consecutive sizes)")
    print("| binary | XUs per type | combine bc CPU s | x read | target "
          "| peak RSS MB | B/XU beyond values (marginal) | target | exponent "
          "| target | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for tag, _ in bins:
        prev = None
        for t, per_type, med, ratio, rss, beyond, load, xus in rows:
            if t != tag:
                continue
            rt = (f"<= 3 ({'holds' if ratio <= 3 else 'missed'})"
                  if per_type == BC_TARGET_PER_TYPE else "")
            bt = (f"<= {BC_TARGET_BYTES} "
                  f"({'holds' if beyond <= BC_TARGET_BYTES else 'missed'})")
            ex, et, mg = "", "", ""
            if prev and prev[1] > 0 and med > 0:
                e = math.log(med / prev[1]) / math.log(per_type / prev[0])
                ex = f"{e:.2f}"
                et = (f"<= {TARGET_EXPONENT} "
                      f"({'holds' if e <= TARGET_EXPONENT else 'missed'})")
            if prev and xus > prev[3]:
                m = (beyond * xus - prev[2] * prev[3]) / (xus - prev[3])
                mg = f" ({m:.0f})"
                bt = (f"<= {BC_TARGET_BYTES} ({'holds' if beyond <= BC_TARGET_BYTES else 'missed'}; "
                      f"marginal {'holds' if m <= BC_TARGET_BYTES else 'missed'})")
            prev = (per_type, med, beyond, xus)
            print(f"| {tag} | {per_type:.0e} | {med:.3f} | {ratio:.2f} | {rt} "
                  f"| {rss:.0f} | {beyond:.0f}{mg} | {bt} | {ex} | {et} "
                  f"| {load:.1f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1e4,1e5,1e6")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ref")
    ap.add_argument("--strategies", default="lgl,ctc,bc")
    ap.add_argument("--bc-steps", type=int, default=8)
    ap.add_argument("--order", choices=["shuffled", "alike"], default="shuffled")
    ap.add_argument("--keep-inputs", action="store_true")
    ap.add_argument("bindir")
    ap.add_argument("work")
    a = ap.parse_args()
    new = os.path.abspath(os.path.join(a.bindir, "ompfuse"))
    bench = os.path.abspath(os.path.join(a.bindir, "bench_fusion"))
    bins = [("new", new)] + ([("old", a.ref)] if a.ref else [])
    strategies = a.strategies.split(",")
    os.makedirs(a.work, exist_ok=True)
    print(f"# load average at start: {os.getloadavg()[0]:.1f} "
          f"(2 cores shared); CPU seconds, min / median of {a.repeat}; "
          f"record order {a.order}")
    print("| binary | step | XUs per run | inputs | CPU s min | CPU s median "
          "| user / sys median | x read (median) | peak RSS MB "
          "| B/XU beyond values | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    prev = {}
    bc_rows = []
    for size in a.sizes.split(","):
        n = int(float(size))
        d = os.path.join(a.work, f"n{n}" + ("-alike" if a.order == "alike" else ""))
        t0 = time.time()
        bc = "bc" in strategies
        have = a.keep_inputs and os.path.exists(
            os.path.join(d, f"lgl{a.runs - 1}.ompf"))
        lgl = any(x != "bc" for x in strategies)
        if not have:
            shutil.rmtree(d, ignore_errors=True)
            subprocess.run([bench, "--generate-only", "--order", a.order,
                            "--runs", str(a.runs if lgl else 2),
                            "--xus", str(n if lgl else 1),
                            "--bc-steps", str(a.bc_steps if bc else 1),
                            "--bc-xus", str(max(n // 2, 1) if bc else 1), d],
                           check=True, stdout=subprocess.DEVNULL)
        gen = time.time() - t0
        lgl_in = [f"lgl{r}.ompf" for r in range(a.runs)]
        bc_in = [f"bc{r}.ompf" for r in range(a.bc_steps + 1)]
        steps = [("read lgl inputs", ["show"] + lgl_in, a.runs * n, 1)] if lgl else []
        if bc:
            steps.append(("read bc inputs", ["show"] + bc_in,
                          len(bc_in) * (n // 2) * 2, 4))
        for s in strategies:
            ins = bc_in if s == "bc" else lgl_in
            steps.append((f"combine {s}",
                          ["combine", "--strategy", s, "-q", "-o", f"out_{s}.ompf"]
                          + ins, len(ins) * (n if s != "bc" else (n // 2) * 2),
                          4 if s == "bc" else 1))
        res = {}
        for _ in range(a.repeat):
            for name, args, _, _ in steps:
                for tag, b in bins:
                    res.setdefault((tag, name), []).append(timed([b] + args, d))
        for tag, _ in bins:
            for name, args, xus, nev in steps:
                cpu = [c for c, _, _, _ in res[(tag, name)]]
                rss = max(m for _, m, _, _ in res[(tag, name)])
                mn, med = min(cpu), statistics.median(cpu)
                umed = statistics.median(u for _, _, u, _ in res[(tag, name)])
                smed = statistics.median(x for _, _, _, x in res[(tag, name)])
                read = "read bc inputs" if "bc" in name else "read lgl inputs"
                rmed = statistics.median(c for c, _, _, _ in res[(tag, read)])
                ratio = (med / rmed if rmed > 0 else float("nan")) if name.startswith("combine") else 1.0
                beyond = (rss * 2**20 - xus * 8 * nev) / xus
                strat = name.split()[-1]
                target = "exponent <= 1.05 (linear)"
                if name.startswith("combine"):
                    target = (f"<= {TARGET_RATIO[strat]} x read; <= 64 B/XU; "
                              "exponent <= 1.05")
                key = (tag, name)
                exp = ""
                if key in prev and prev[key][1] > 0 and med > 0 and umed > 0:
                    pn, pc, pu = prev[key]
                    exp = (f"; exponent {math.log(med / pc) / math.log(n / pn):.2f}"
                           f" (user {math.log(umed / pu) / math.log(n / pn):.2f})")
                prev[key] = (n, med, umed)
                print(f"| {tag} | {name} | {n:.0e} | {xus} | {mn:.3f} | {med:.3f}{exp} "
                      f"| {umed:.2f} / {smed:.2f} | {ratio:.2f} | {rss:.0f} "
                      f"| {beyond:.0f} | {target} |")
                if name == "combine bc":
                    bc_rows.append((tag, n // 2, med, ratio, rss, beyond,
                                    os.getloadavg()[0], xus))
        sys.stdout.flush()
        print(f"# N={n}: inputs {'reused' if have else 'generated'} in {gen:.1f} s; "
              f"load average now {os.getloadavg()[0]:.1f}", flush=True)
        if not a.keep_inputs:
            shutil.rmtree(d, ignore_errors=True)
    if bc_rows:
        bc_report(bc_rows, bins)
    # The machine's own cost of fresh memory, which system time carries at
    # 10^7 XUs (docs/benchmarks.md): per page at 600 MiB and at 6,000 MiB.
    # Only where it matters: it touches 6.6 GB.
    touch = os.path.join(a.bindir, "mem_touch")
    if os.path.exists(touch) and max(float(x) for x in a.sizes.split(",")) >= 1e6:
        p = subprocess.run([touch, "600", "6000"], capture_output=True, text=True)
        if p.returncode:
            print(f"# mem_touch failed ({p.returncode}): {p.stderr.strip()}")
        for line in p.stdout.splitlines():
            print(f"# fresh memory on this machine: {line}")


if __name__ == "__main__":
    main()
