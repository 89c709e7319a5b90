#!/bin/sh
# Simulator experiment (docs/simulator.md): for the built-in models, EPD and
# median per-XU error of every fusion strategy and HEM mode (as recorded and
# cleaned as `ompfuse clean` does), with times.
#
#   benchmarks/simulate/run.sh [BUILD_DIR] [--b7]
#
# BUILD_DIR defaults to ./build (needs the sim_bench target built:
# cmake --build BUILD_DIR --target sim_bench).  Default size: cholesky_b8
# (8,080 XUs, 18 types, 33 events); --b7 adds the high model at the size
# of cholesky_b7 (49,440 XUs; about 2 GB of memory and a few minutes).
set -eu
BUILD=build
B7=0
for a in "$@"; do
    case "$a" in
        --b7) B7=1 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) BUILD="$a" ;;
    esac
done
BENCH="$BUILD/bin/sim_bench"
[ -x "$BENCH" ] || { echo "run.sh: $BENCH not found; build the sim_bench target" >&2; exit 2; }
for m in zero low high; do
    echo "## builtin:$m"
    /usr/bin/time -f "total: %e s, max RSS %M KB" "$BENCH" --model "builtin:$m" --seed 1 2>&1
    echo
done
if [ "$B7" = 1 ]; then
    echo "## builtin:high at cholesky_b7 size"
    /usr/bin/time -f "total: %e s, max RSS %M KB" "$BENCH" --model builtin:high --set xus=49440 --seed 1 2>&1
fi
