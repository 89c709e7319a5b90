#!/usr/bin/env bash
# Installs everything ompfuse needs on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are skipped by apt-get.
# Why each package is here: docs/dependencies.md.
set -euo pipefail

PKGS=(
  clang-19 libomp-19-dev libclang-rt-19-dev   # OpenMP toolchain + runtime with OMPT dispatch, sanitizers, libFuzzer
  cmake make pkg-config                        # build
  libpfm4-dev                                  # event names -> perf_event encodings
  libhwloc-dev                                 # CPU -> core / NUMA node
  libzstd-dev zlib1g-dev                       # profile chunk compression, crc32
  libcmocka-dev                                # C unit tests
  python3-numpy python3-scipy python3-pot      # independent oracles in tests (EMD, Spearman)
  python3-pandas                               # tests only: CSV export loads with pandas.read_csv
  chromium                                     # headless rendering test of the HTML report (eval_report_render)
  binutils                                     # addr2line for file:line resolution
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: packages missing (${missing[*]}) and not running as root; run: sudo $0" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup.sh: all dependencies present"
