#!/usr/bin/env bash
# The slowdown of each chosen set of the --events auto experiment, side by
# side: for each stream of OUT (run.sh), its choice (OUT/BENCH/c01/BENCH/
# events-auto.txt) counted at once with perf::TASK-CLOCK, against
# perf::TASK-CLOCK alone, R times each (default 5), through `ompfuse run`
# (uprobes held, runs in rounds: base, set, base, set, ...).  Prints the
# best wall time and the best CPU time (TASK-CLOCK over the threads) of each
# and the load average before and after.  As root, tracefs mounted.
#   benchmarks/events-auto/slowdown.sh OUT [R] [BENCH...]
# OMPFUSE=path/to/ompfuse picks another build (as run.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: slowdown.sh OUT [R] [BENCH...]}
reps=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
ompfuse=${OMPFUSE:-$root/build/bin/ompfuse}
bin=$(dirname "$ompfuse")
for b in ${*:-cg-static cg-dyn10 mg knapsack-d}; do
    choice=$out/$b/c01/$b/events-auto.txt
    [ -f "$choice" ] || { echo "$b: no $choice"; continue; }
    case $b in
        cg-static) prog=("$bin/cg" W); sched=static ;;
        cg-dyn10) prog=("$bin/cg" S); sched=dynamic,10 ;;
        mg) prog=("$bin/mg" W); sched=static ;;
        knapsack-d) prog=("$bin/knapsack" -d -n 42 -c 11); sched= ;;
        *) echo "$b: unknown"; continue ;;
    esac
    set_=$(grep -v '^#' "$choice" | grep -vx 'perf::TASK-CLOCK' | paste -sd, -)
    d=$out/slowdown/$b
    rm -rf "$d"
    mkdir -p "$d"
    printf '# slots: 64\nreference %s perf::TASK-CLOCK\nreference %s perf::TASK-CLOCK,%s\n' \
        "$reps" "$reps" "$set_" > "$d/plan.txt"
    before=$(cat /proc/loadavg)
    OMP_NUM_THREADS=2 OMP_SCHEDULE=$sched nice -n 10 "$ompfuse" run --plan "$d/plan.txt" \
        --out "$d/runs" -q -- "${prog[@]}" || echo "$b: some runs failed (see $d/runs)"
    after=$(cat /proc/loadavg)
    /usr/bin/python3 - "$d/runs" "$b" "$before" "$after" "$root" "$ompfuse" <<'EOF'
import sys
runs, bench, before, after, root, exe = sys.argv[1:]
sys.path.insert(0, root + "/python")
import ompfuse
best = {}
for line in open(runs + "/manifest.tsv"):
    f = line.rstrip("\n").split("\t")
    if line.startswith("#") or f[4] != "ok":
        continue
    p = ompfuse.read(runs + "/" + f[7], ompfuse=exe, resolve=False)
    cpu = p.threads[("total", "perf::TASK-CLOCK")].sum() / 1e9
    key = "set" if "," in f[3] else "base"  # manifest: events, status, seconds, profile
    w, c = best.get(key, (float("inf"), float("inf")))
    best[key] = (min(w, float(f[6])), min(c, cpu))
(bw, bc), (sw, sc) = best["base"], best["set"]
print(f"{bench}: wall {sw:.3f} s vs {bw:.3f} s = {100 * (sw / bw - 1):+.1f}%, "
      f"CPU {sc:.3f} s vs {bc:.3f} s = {100 * (sc / bc - 1):+.1f}% (best of each; "
      f"load before {before.split()[0]}, after {after.split()[0]})")
EOF
done
