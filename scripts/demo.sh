#!/usr/bin/env bash
# The main job: install, build, then run the papers' experiment as a demo
# campaign on the bundled benchmarks (CG static and dynamic,10, MG,
# knapsack) with software events and 2 emulated counters, ending in
# demo/report.html and an EPD table on stdout.  Extra arguments go to
# `ompfuse campaign` (e.g. --benchmarks knapsack, --quick).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
export OMPFUSE_PMU_SLOTS="${OMPFUSE_PMU_SLOTS:-2}"
"$root/build/bin/ompfuse" campaign --out "$root/demo" --slots "$OMPFUSE_PMU_SLOTS" "$@"
echo "demo: report at $root/demo/report.html"
