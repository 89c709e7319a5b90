#!/usr/bin/env bash
# Configures and builds ompfuse with clang-19 (LLVM OpenMP 19).
#   scripts/build.sh            -> build/        (RelWithDebInfo)
#   scripts/build.sh --sanitize -> build-asan/   (ASan + UBSan)
#   scripts/build.sh --gcc      -> build-gcc/    (gcc, warnings check)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=build cc=clang-19 extra=()
case "${1:-}" in
  --sanitize) dir=build-asan extra=(-DOMPF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug) ;;
  --gcc) dir=build-gcc cc=gcc ;;
  "") ;;
  *) echo "build.sh: unknown option '$1' (use --sanitize or --gcc)" >&2; exit 2 ;;
esac
cmake -S "$root" -B "$root/$dir" -DCMAKE_C_COMPILER="$cc" "${extra[@]}" >/dev/null
cmake --build "$root/$dir" -j "$(nproc)"
