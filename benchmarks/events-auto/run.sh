#!/usr/bin/env bash
# The --events auto experiment (docs/events.md, docs/benchmarks.md): N
# campaigns (default 10) of each bundled benchmark at 2 emulated slots with
# `ompfuse campaign --events auto --quick`, then the table (table.py).
# knapsack-d is knapsack -d -n 42 -c 11: the same task tree every run, so
# that labels can match at all (the default knapsack's tree differs per run).
# One stream of campaigns per benchmark, the four streams at once (on a
# shared machine they get more of it together than one after another);
# OUT/BENCH/cNN is campaign NN of BENCH.  The first campaign of a stream
# chooses the events; the others start from its events-auto.txt, as a
# resumed campaign would, so every campaign measures the same set (put a
# saved choice in OUT/BENCH/c01/BENCH/events-auto.txt to skip the pilots).
# As root, with tracefs mounted.
#   benchmarks/events-auto/run.sh [N] [OUT] [BENCH...]   (OUT default events-auto-runs)
#   /usr/bin/python3 benchmarks/events-auto/table.py OUT   (the table again)
# OMPFUSE=path/to/ompfuse picks another build (its bin/ has cg, mg, knapsack).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-10}
out=${2:-events-auto-runs}
shift $(( $# < 2 ? $# : 2 ))
benches=${*:-cg-static cg-dyn10 mg knapsack-d}
ompfuse=${OMPFUSE:-$root/build/bin/ompfuse}
mkdir -p "$out"
echo "start $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> "$out/load.txt"
for b in $benches; do
    (
        first=
        for i in $(seq -w 1 "$n"); do
            d=$out/$b/c$i
            first=${first:-$d/$b/events-auto.txt}
            if [ "$d/$b/events-auto.txt" != "$first" ] && [ -f "$first" ]; then
                mkdir -p "$d/$b"
                cp "$first" "$d/$b/events-auto.txt"
            fi
            mkdir -p "$d"
            nice -n 10 "$ompfuse" campaign --out "$d" --benchmarks "$b" --events auto \
                --slots 2 --quick > "$d.log" 2>&1 || echo "campaign $d: exit $? (see $d.log)"
            echo "$b c$i $(date -u +%FT%TZ) load $(cat /proc/loadavg)" >> "$out/load.txt"
        done
    ) &
done
wait
/usr/bin/python3 "$here/table.py" "$out"
