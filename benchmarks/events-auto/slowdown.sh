#!/usr/bin/env bash
# The slowdown of each chosen set of the --events auto experiment, side by
# side: for each stream of OUT (run.sh), its choice (OUT/BENCH/c01/BENCH/
# events-auto.txt) counted at once with perf::TASK-CLOCK, against
# perf::TASK-CLOCK alone, R times each (default 5), through `ompfuse run`,
# alternating base and set, one `ompfuse run` each.  The base runs are
# separate invocations so that no uprobe is held while they run: a held
# uprobe is armed in every process of its binary (docs/events.md, Held
# uprobes), so a base run inside the set's invocation would pay the hits
# too.  Prints the best wall time and the best CPU time (TASK-CLOCK over
# the threads) of each and the load average before and after.  As root,
# tracefs mounted.
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
    # The program the choice probed (its uprobes name that binary's path):
    # another build of it would not be hit.
    pbin=$bin
    probed=$(grep -o '^uprobe:[^:]*' "$choice" | head -1 | cut -d: -f2 || true)
    [ -n "$probed" ] && pbin=$(dirname "$probed")
    case $b in
        cg-static) prog=("$pbin/cg" W); sched=static ;;
        cg-dyn10) prog=("$pbin/cg" S); sched=dynamic,10 ;;
        mg) prog=("$pbin/mg" W); sched=static ;;
        knapsack-d) prog=("$pbin/knapsack" -d -n 42 -c 11); sched= ;;
        *) echo "$b: unknown"; continue ;;
    esac
    set_=$(grep -v '^#' "$choice" | grep -vx 'perf::TASK-CLOCK' | paste -sd, -)
    d=$out/slowdown/$b
    rm -rf "$d"
    mkdir -p "$d"
    printf '# slots: 64\nreference 1 perf::TASK-CLOCK\n' > "$d/base.txt"
    printf '# slots: 64\nreference 1 perf::TASK-CLOCK,%s\n' "$set_" > "$d/set.txt"
    before=$(cat /proc/loadavg)
    for i in $(seq "$reps"); do
        for k in base set; do
            OMP_NUM_THREADS=2 OMP_SCHEDULE=$sched nice -n 10 "$ompfuse" run --plan "$d/$k.txt" \
                --out "$d/$k$i" -q -- "${prog[@]}" || echo "$b: a $k run failed (see $d/$k$i)"
        done
    done
    after=$(cat /proc/loadavg)
    /usr/bin/python3 - "$d" "$b" "$before" "$after" "$root" "$ompfuse" <<'EOF'
import glob, os, sys
runs, bench, before, after, root, exe = sys.argv[1:]
sys.path.insert(0, root + "/python")
import ompfuse
best = {}
for man in glob.glob(runs + "/*/manifest.tsv"):
    for line in open(man):
        f = line.rstrip("\n").split("\t")
        if line.startswith("#") or f[4] != "ok":
            continue
        p = ompfuse.read(os.path.dirname(man) + "/" + f[7], ompfuse=exe, resolve=False)
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
