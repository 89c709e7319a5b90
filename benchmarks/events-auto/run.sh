#!/usr/bin/env bash
# The --events auto experiment (docs/events.md, docs/benchmarks.md): N
# campaigns (default 10) of the bundled benchmarks at 2 emulated slots with
# `ompfuse campaign --events auto --quick`, then the table (table.py).  The
# first campaign chooses each benchmark's events; the others start from its
# DIR/BENCH/events-auto.txt, as a resumed campaign would, so every campaign
# measures the same event set.  As root, with tracefs mounted.
#   benchmarks/events-auto/run.sh [N] [OUT]     (OUT default events-auto-runs)
#   /usr/bin/python3 benchmarks/events-auto/table.py OUT   (the table again)
# OMPFUSE=path/to/ompfuse picks another build (its bin/ has cg, mg, knapsack).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-10}
out=${2:-events-auto-runs}
ompfuse=${OMPFUSE:-$root/build/bin/ompfuse}
benches="cg-static cg-dyn10 mg knapsack"
mkdir -p "$out"
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> "$out/load.txt"
for i in $(seq -w 1 "$n"); do
    d=$out/c$i
    if [ "$i" != "$(seq -w 1 "$n" | head -1)" ]; then
        for b in $benches; do
            first=$out/c$(seq -w 1 "$n" | head -1)/$b/events-auto.txt
            if [ -f "$first" ]; then
                mkdir -p "$d/$b"
                cp "$first" "$d/$b/events-auto.txt"
            fi
        done
    fi
    nice -n 10 "$ompfuse" campaign --out "$d" --events auto --slots 2 --quick \
        > "$d.log" 2>&1 || echo "campaign $d: exit $? (see $d.log)"
    echo "c$i $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> "$out/load.txt"
done
/usr/bin/python3 "$here/table.py" "$out"
