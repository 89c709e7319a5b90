#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite through ctest.
#   scripts/test.sh             normal build
#   scripts/test.sh --sanitize  the same suite under ASan + UBSan
set -euo pipefail
# Readable sanitizer reports.
[ -x /usr/lib/llvm-19/bin/llvm-symbolizer ] && export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-19/bin/llvm-symbolizer
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
# Slurm (tests/slurm only): a missing package makes those tests skip, loudly.
bash "$root/scripts/slurm-setup.sh" || echo "test.sh: Slurm packages could not be installed; the slurm_* tests will be skipped" >&2
bash "$root/scripts/build.sh" "$@"
dir=build
[ "${1:-}" = "--sanitize" ] && dir=build-asan
cd "$root/$dir"
ctest --output-on-failure -j 2 --timeout 600
